//! The agent's side of the daemon's API: it registers the node, the owners and the workloads
//! it finds, sends each interval's usage report, and fetches the priorities. When the daemon
//! cannot be reached the reports wait in a bounded buffer (oldest dropped first, counted) and
//! are sent in order when it answers again; retries back off exponentially with jitter. Each
//! report keeps its sequence number through every retry, so the daemon counts it once.

use crate::config::DaemonConfig;
use fairshare_wire::model::{
    KnobsWritten, NodeSpec, Priorities, UsageAck, UsageReport, UserSpec, WorkloadSpec,
};
use rand::Rng;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

/// The most samples put in one report, so a body stays well under the daemon's 1 MiB.
pub const SAMPLES_PER_REPORT: usize = 2000;

/// Why talking to the daemon failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// Not reached, timed out, or answered 5xx/429/401/403: worth retrying.
    #[error("{0}")]
    Unavailable(String),
    /// Refused this request for good (400, 409, 413, 415, 422): retrying would not help.
    #[error("{0}")]
    Refused(String),
    /// 404: what was named is not there (or the URL is wrong).
    #[error("{0}")]
    NotFound(String),
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Synced {
    /// Reports the daemon acknowledged (duplicates included).
    pub sent: usize,
    /// Reports the daemon refused for good and that were dropped.
    pub refused: usize,
    /// Workload id → priority, from the daemon's latest cycle.
    pub priorities: BTreeMap<String, i32>,
}

/// Knob values as a report's `written` carries them.
fn numbers(
    written: Vec<(String, KnobsWritten)>,
) -> BTreeMap<String, BTreeMap<String, serde_json::Number>> {
    written
        .into_iter()
        .map(|(id, knobs)| (id, knobs.into_iter().map(|(f, v)| (f, v.into())).collect()))
        .collect()
}

/// The link to the daemon, with the reports not yet acknowledged.
#[derive(Debug)]
pub struct Link {
    http: ureq::Agent,
    base: String,
    token: Option<String>,
    node: String,
    register: bool,
    max_backoff: Duration,
    buffer: VecDeque<UsageReport>,
    capacity: usize,
    /// Reports dropped because the buffer was full, since the start.
    pub dropped: u64,
    next_seq: u64,
    node_spec: Option<NodeSpec>,
    users: BTreeSet<String>,
    workloads: BTreeMap<String, WorkloadSpec>,
    /// Workloads the daemon refused to register, with why; left out of reports.
    pub refused: BTreeMap<String, String>,
    /// Whether reports carry the knob values written: false once a daemon older than this
    /// agent refused the field, so its usage still arrives.
    send_written: bool,
    failures: u32,
    retry_at: Option<Instant>,
}

impl Link {
    /// A link to the daemon of `config` for `node`, keeping at most `capacity` reports;
    /// sequence numbers start at `first_seq` (milliseconds since the epoch, so a restarted
    /// agent goes on above its predecessor).
    pub fn new(
        config: &DaemonConfig,
        token: Option<String>,
        node: &str,
        capacity: usize,
        first_seq: u64,
    ) -> Link {
        let timeout = Duration::from_secs_f64(config.timeout_s);
        Link {
            http: ureq::AgentBuilder::new().timeout(timeout).build(),
            base: config.url.trim_end_matches('/').to_string(),
            token,
            node: node.to_string(),
            register: config.register,
            max_backoff: Duration::from_secs_f64(config.max_backoff_s),
            buffer: VecDeque::new(),
            capacity,
            dropped: 0,
            next_seq: first_seq,
            node_spec: None,
            users: BTreeSet::new(),
            workloads: BTreeMap::new(),
            refused: BTreeMap::new(),
            send_written: true,
            failures: 0,
            retry_at: None,
        }
    }

    /// Queues one interval's samples, with the knob values in force (`written`: workload →
    /// file → value), as reports (each with at most [`SAMPLES_PER_REPORT`] of either, to stay
    /// small), numbered from `now_seq` or above the previous number. The oldest reports go when
    /// the buffer is full.
    pub fn queue(
        &mut self,
        interval_s: f64,
        samples: Vec<fairshare_wire::model::Sample>,
        written: BTreeMap<String, KnobsWritten>,
        now_seq: u64,
    ) {
        let mut samples = samples;
        let mut written: Vec<_> = written.into_iter().collect();
        loop {
            let rest = samples.split_off(samples.len().min(SAMPLES_PER_REPORT));
            let rest_written = written.split_off(written.len().min(SAMPLES_PER_REPORT));
            let seq = self.next_seq.max(now_seq);
            self.next_seq = seq + 1;
            self.buffer.push_back(UsageReport {
                node: self.node.clone(),
                seq,
                interval_s,
                samples,
                written: (self.send_written && !written.is_empty()).then(|| numbers(written)),
            });
            if self.buffer.len() > self.capacity {
                self.buffer.pop_front();
                self.dropped += 1;
            }
            if rest.is_empty() && rest_written.is_empty() {
                break;
            }
            samples = rest;
            written = rest_written;
        }
    }

    /// Reports waiting to be sent.
    pub fn pending(&self) -> usize {
        self.buffer.len()
    }

    /// Whether a sync may be tried now (not waiting out a backoff).
    pub fn due(&self, now: Instant) -> bool {
        match self.retry_at {
            Some(t) => now >= t,
            None => true,
        }
    }

    /// When the next retry is due, if waiting.
    pub fn retry_at(&self) -> Option<Instant> {
        self.retry_at
    }

    /// Consecutive failed syncs.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Registers what changed, sends the buffered reports oldest first, removes workloads
    /// gone (once no buffered report names them) and fetches the priorities. A failure sets
    /// the next try after a backoff: 1 s doubling up to `max_backoff_s`, times a random
    /// factor in [0.5, 1.5) so that a fleet of agents does not retry in step.
    pub fn sync(
        &mut self,
        node: &NodeSpec,
        present: &BTreeMap<String, WorkloadSpec>,
        now: Instant,
    ) -> Result<Synced, LinkError> {
        match self.try_sync(node, present) {
            Ok(done) => {
                self.failures = 0;
                self.retry_at = None;
                Ok(done)
            }
            Err(e) => {
                self.failures = self.failures.saturating_add(1);
                let base = Duration::from_secs(1)
                    .saturating_mul(1 << self.failures.saturating_sub(1).min(20))
                    .min(self.max_backoff);
                let jitter = rand::thread_rng().gen_range(0.5..1.5);
                self.retry_at = Some(now + base.mul_f64(jitter).min(self.max_backoff));
                Err(e)
            }
        }
    }

    fn try_sync(
        &mut self,
        node: &NodeSpec,
        present: &BTreeMap<String, WorkloadSpec>,
    ) -> Result<Synced, LinkError> {
        if self.register {
            self.register_all(node, present)?;
        }
        let mut done = Synced::default();
        while let Some(report) = self.buffer.front() {
            match self.call::<_, UsageAck>("POST", "/v1/usage", Some(report)) {
                Ok(_) => done.sent += 1,
                Err(LinkError::Refused(why))
                    if report.written.is_some() && why.contains("unknown field `written`") =>
                {
                    tracing::warn!(%why, "the daemon is older than this agent and takes no knob values written: reports go without them (upgrade the daemon to see them in top and explain)");
                    self.send_written = false;
                    self.buffer.iter_mut().for_each(|r| r.written = None);
                    continue;
                }
                Err(LinkError::Refused(why)) => {
                    tracing::error!(seq = report.seq, %why, "the daemon refused a usage report; it is dropped");
                    done.refused += 1;
                }
                Err(e) => return Err(e),
            }
            self.buffer.pop_front();
        }
        if self.register {
            self.forget_gone(present)?;
        }
        done.priorities = self.fetch()?;
        Ok(done)
    }

    /// The priorities of this node's workloads from the daemon's latest cycle, by id.
    pub fn fetch(&self) -> Result<BTreeMap<String, i32>, LinkError> {
        let path = format!("/v1/priorities?node={}", self.node);
        let answer: Priorities = self.call("GET", &path, None::<&()>)?;
        Ok(answer
            .workloads
            .into_iter()
            .map(|w| (w.workload.to_string(), w.knobs.priority))
            .collect())
    }

    fn register_all(
        &mut self,
        node: &NodeSpec,
        present: &BTreeMap<String, WorkloadSpec>,
    ) -> Result<(), LinkError> {
        if self.node_spec.as_ref() != Some(node) {
            self.call::<_, ()>("PUT", &format!("/v1/nodes/{}", self.node), Some(node))?;
            self.node_spec = Some(node.clone());
        }
        for (id, spec) in present {
            if self.workloads.get(id) == Some(spec) || self.refused.contains_key(id) {
                continue;
            }
            let registered = self.add_user(&spec.owner).and_then(|()| {
                self.call::<_, ()>("PUT", &format!("/v1/workloads/{id}"), Some(spec))
            });
            match registered {
                Ok(()) => {
                    self.workloads.insert(id.clone(), spec.clone());
                }
                Err(LinkError::Refused(why)) => {
                    tracing::warn!(workload = %id, %why, "the daemon refused to register a workload; it is left out of reports");
                    self.refused.insert(id.clone(), why);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn add_user(&mut self, owner: &str) -> Result<(), LinkError> {
        if !self.users.contains(owner) {
            self.call::<_, ()>(
                "PUT",
                &format!("/v1/users/{owner}"),
                Some(&UserSpec::default()),
            )?;
            self.users.insert(owner.to_string());
        }
        Ok(())
    }

    /// Unregisters the workloads no longer present, once no buffered report names them.
    fn forget_gone(&mut self, present: &BTreeMap<String, WorkloadSpec>) -> Result<(), LinkError> {
        let gone: Vec<String> = self
            .workloads
            .keys()
            .filter(|id| !present.contains_key(*id))
            .cloned()
            .collect();
        for id in gone {
            match self.call::<_, ()>("DELETE", &format!("/v1/workloads/{id}"), None::<&()>) {
                Ok(()) | Err(LinkError::Refused(_) | LinkError::NotFound(_)) => {
                    self.workloads.remove(&id);
                }
                Err(e) => return Err(e),
            }
        }
        self.refused.retain(|id, _| present.contains_key(id));
        Ok(())
    }

    /// One request; the answer read as `A` (`()` for an empty one).
    fn call<B: Serialize, A: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        body: Option<&B>,
    ) -> Result<A, LinkError> {
        let mut request = self.http.request(method, &format!("{}{path}", self.base));
        if let Some(token) = &self.token {
            request = request.set("Authorization", &format!("Bearer {token}"));
        }
        let response = match body {
            Some(body) => request.send_json(body),
            None => request.call(),
        };
        let what = format!("{method} {path}");
        match response {
            Ok(r) if r.status() == 204 => serde_json::from_value(serde_json::Value::Null)
                .map_err(|e| LinkError::Unavailable(format!("{what}: {e}"))),
            Ok(r) => r
                .into_json()
                .map_err(|e| LinkError::Unavailable(format!("{what}: unreadable answer: {e}"))),
            Err(ureq::Error::Status(code, r)) => {
                let text = r.into_string().unwrap_or_default();
                let message = format!("{what}: {code} {}", text.trim());
                if matches!(code, 400 | 409 | 413 | 415 | 422) {
                    Err(LinkError::Refused(message))
                } else if code == 404 {
                    Err(LinkError::NotFound(message))
                } else {
                    Err(LinkError::Unavailable(message))
                }
            }
            Err(e) => Err(LinkError::Unavailable(format!("{what}: {e}"))),
        }
    }

    /// Asks the daemon's health endpoint, read-only for this node's priorities (what every
    /// cycle asks), and whether the token may act for this node (`GET /v1/access`): `(reachable,
    /// token accepted)` with what was seen. Nothing is registered or changed at the daemon.
    pub fn probe(&self) -> (Result<String, LinkError>, Result<String, LinkError>) {
        let health = self
            .http
            .get(&format!("{}/healthz", self.base))
            .call()
            .map(|_| format!("{} answers", self.base))
            .map_err(|e| LinkError::Unavailable(format!("{}: {e}", self.base)));
        let access = format!("/v1/access?node={}", self.node);
        let token = self.fetch().and_then(|p| {
            let known = format!("{} workloads known there", p.len());
            match self.call::<(), ()>("GET", &access, None) {
                Ok(()) => Ok(format!(
                    "the token may report and register for node {} ({known})",
                    self.node
                )),
                // A daemon older than this agent has no such check: reading is all it proves.
                Err(LinkError::NotFound(_)) => Ok(format!(
                    "the token may read (GET /v1/priorities: {known}); this daemon cannot say whether it may act for node {}",
                    self.node
                )),
                Err(e) => Err(e),
            }
        });
        (health, token)
    }
}
