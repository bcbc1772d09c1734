//! Deciding: each workload's priority and knob values, from the daemon or computed here by the
//! daemon's own cycle when standalone, and what the agent tells the daemon of its node.

use super::*;
use fairshare_core::error::Chain;

impl Agent {
    /// This cycle's priorities, into `self.priorities`.
    pub(super) fn decide(
        &mut self,
        present: &[ManagedCgroup],
        measured: Vec<(String, Vec<f64>)>,
        interval_s: Option<f64>,
        now: Instant,
        report: &mut CycleReport,
    ) {
        match &mut self.mode {
            Mode::Standalone(local) => {
                let Some(interval) = interval_s else { return };
                // The registry is the workloads': built again only when they changed.
                let registry = match local.registry.take() {
                    Some(kept) if self.managed == present => kept,
                    _ => registry(&self.node, &self.supply, &self.config, present),
                };
                let decided = local.decide(&registry, &measured, interval);
                local.registry = Some(registry);
                match decided {
                    Ok((priorities, users)) => {
                        self.priorities = priorities;
                        report.users = users;
                        report.source = Source::Local;
                    }
                    Err(e) => {
                        let message = format!(
                            "heaviness could not be computed: {e}; keeping the last priorities"
                        );
                        self.say_once("heaviness", &message);
                    }
                }
            }
            Mode::Daemon(link) => {
                if let (Some(interval), false) = (interval_s, self.dry_run) {
                    let samples = measured
                        .into_iter()
                        .filter(|(id, _)| !link.refused.contains_key(id))
                        .map(|(id, amounts)| Sample {
                            workload: id,
                            usage: named(&self.config.resources, &amounts),
                        })
                        .collect();
                    let mut written = in_force(&self.written, &self.layout.knobs);
                    written.retain(|id, _| !link.refused.contains_key(id));
                    link.queue(interval, samples, written, now_ms().max(0) as u64);
                }
                self.exchange(present, now, true, report);
            }
        }
    }

    /// Syncs with the daemon — every cycle (`cycle`), between cycles only when a retry is
    /// due: registrations, buffered reports, priorities. Trying at every cycle whatever the
    /// backoff makes the agent recover within one interval of the daemon's return.
    pub(super) fn exchange(
        &mut self,
        present: &[ManagedCgroup],
        now: Instant,
        cycle: bool,
        report: &mut CycleReport,
    ) {
        let Mode::Daemon(link) = &mut self.mode else {
            return;
        };
        if self.dry_run {
            match link.fetch() {
                Ok(p) => {
                    self.priorities = p;
                    report.source = Source::Daemon;
                }
                Err(e) => report.daemon_error = Some(e.to_string()),
            }
            return;
        }
        if cycle || link.due(now) {
            let node = node_spec(&self.supply, &self.config);
            let specs = present
                .iter()
                .map(|w| (w.id.clone(), workload_spec(&self.node, &self.config, w)))
                .collect();
            let was_down = link.failures();
            match link.sync(&node, &specs, now) {
                Ok(done) => {
                    if was_down > 0 {
                        tracing::info!(
                            failures = was_down,
                            sent = done.sent,
                            "the daemon answers again; the buffered reports were sent"
                        );
                    }
                    self.priorities = done.priorities;
                    report.source = Source::Daemon;
                }
                Err(e) => {
                    let wait = link.retry_at().map(|t| t.saturating_duration_since(now));
                    if was_down == 0 {
                        tracing::warn!(error = %Chain(&e), retry_in = ?wait, "the daemon cannot be reached; keeping the last priorities and buffering reports");
                    } else {
                        tracing::debug!(error = %Chain(&e), failures = link.failures(), retry_in = ?wait, "the daemon still cannot be reached");
                    }
                    if matches!(e, LinkError::Refused(_)) {
                        tracing::error!(error = %Chain(&e), "the daemon refused a request");
                    }
                    report.daemon_error = Some(e.to_string());
                }
            }
        }
        report.pending_reports = link.pending();
        if link.dropped > 0 {
            let dropped = link.dropped;
            self.say_once("dropped", &format!("the report buffer is full: {dropped} reports of the oldest intervals were dropped (buffer_reports = {})", self.config.buffer_reports));
        }
    }
}

impl Local {
    /// Runs the daemon's cycle on this node's registry and the interval's amounts.
    #[allow(clippy::type_complexity)]
    pub(super) fn decide(
        &mut self,
        registry: &Registry,
        measured: &[(String, Vec<f64>)],
        interval: f64,
    ) -> Result<(BTreeMap<String, i32>, Vec<(String, f64)>), HeavinessError> {
        let mut counted = Measured::default();
        for (id, amounts) in measured {
            let rates: Vec<f64> = amounts
                .iter()
                .zip(&self.settings.resources)
                .map(|(&a, r)| rate(r.kind, a, interval))
                .collect();
            counted.add(id, &rates, interval);
        }
        self.cycle += 1;
        let out = compute(
            &self.settings,
            registry,
            &self.memory,
            &counted,
            self.cycle,
            now_ms(),
        )?;
        self.memory = out.memory;
        let priorities = out
            .snapshot
            .workloads
            .iter()
            .map(|w| (w.workload.to_string(), w.knobs.priority))
            .collect();
        let mut users: Vec<(String, f64)> = out
            .snapshot
            .users
            .iter()
            .map(|(u, h)| (u.to_string(), h.heaviness))
            .collect();
        users.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        Ok((priorities, users))
    }
}

/// The values in force in each workload's knob files, as last written: workload → file → value.
pub(super) fn in_force(
    written: &FxHashMap<String, [Option<u64>; cgroup::KNOBS]>,
    knobs: &[Knob],
) -> BTreeMap<String, KnobsWritten> {
    let mut out: BTreeMap<String, KnobsWritten> = BTreeMap::new();
    for (id, values) in written {
        for (knob, value) in knobs.iter().zip(values) {
            if let Some(value) = value {
                out.entry(id.clone())
                    .or_default()
                    .insert(knob.file.clone(), *value);
            }
        }
    }
    out
}

/// This node, its owners and workloads as the daemon's cycle sees a registry.
pub(super) fn registry(
    node: &str,
    supply: &Supply,
    config: &AgentConfig,
    present: &[ManagedCgroup],
) -> Registry {
    let node_id: fairshare_wire::model::Id = node.into();
    let mut registry = Registry::default();
    registry.nodes.insert(
        node_id.clone(),
        NodeEntry {
            supply: supply_vector(supply, config),
            speed: supply.speed,
        },
    );
    for w in present {
        registry.users.insert(w.owner.as_str().into(), None);
        registry.workloads.insert(
            w.id.as_str().into(),
            WorkloadEntry {
                owner: w.owner.as_str().into(),
                node: node_id.clone(),
                size: size_vector(config, w),
            },
        );
    }
    registry
}

pub(super) fn supply_vector(supply: &Supply, config: &AgentConfig) -> Vec<f64> {
    config
        .resources
        .iter()
        .map(|r| match r.kind {
            ResourceKind::Cpu => supply.cpu,
            ResourceKind::Memory => supply.memory,
            ResourceKind::Disk => supply.disk,
            ResourceKind::Network => supply.network,
            ResourceKind::Other => 1.0,
        })
        .collect()
}

pub(super) fn size_vector(config: &AgentConfig, w: &ManagedCgroup) -> Vec<f64> {
    config
        .resources
        .iter()
        .map(|r| match r.kind {
            ResourceKind::Cpu => w.cpu_size,
            ResourceKind::Memory => w.memory_size,
            _ => 0.0,
        })
        .collect()
}

pub(super) fn workload_spec(node: &str, config: &AgentConfig, w: &ManagedCgroup) -> WorkloadSpec {
    let size = size_vector(config, w);
    WorkloadSpec {
        owner: w.owner.clone(),
        node: node.to_string(),
        size: config
            .resources
            .iter()
            .zip(size)
            .filter(|(r, _)| r.kind.has_virtual())
            .map(|(r, v)| (r.name.clone(), v))
            .collect(),
    }
}

/// The node as `PUT /v1/nodes/{id}` registers it.
pub fn node_spec(supply: &Supply, config: &AgentConfig) -> NodeSpec {
    NodeSpec {
        supply: named(&config.resources, &supply_vector(supply, config)),
        speed: supply.speed,
    }
}
