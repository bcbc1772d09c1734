//! A run's configuration from a measured trace: the cluster configuration of a replay and a
//! policy, the settings the summaries show, the files found beside the trace, and the queues'
//! limits.

use super::{LabError, MeasuredTrace, Queues, Replay};
use crate::summary::{MachineView, NodeLane, Setting};
use fairshare_core::choice::Choice;
use fairshare_core::policy::PolicySpec;
use fairshare_sim::cluster::{
    Capacity, ClusterConfig, Partition, QueueLimit, SchedulerSettings, Stop, Window,
};
use std::path::Path;

impl MeasuredTrace {
    /// The engine's configuration for one policy at one capacity.
    pub fn config(&self, replay: &Replay, policy: PolicySpec, capacity: Capacity) -> ClusterConfig {
        ClusterConfig {
            policy,
            capacity,
            resources: self.resources.clone(),
            users: self.users.clone(),
            scheduler: replay.scheduler.configured(&SchedulerSettings {
                rule: replay.rule,
                slurm: replay.slurm.clone(),
            }),
            placement: replay.placement.placement(),
            stop: self.stop(replay.stop),
            origin: self.origin(),
            sample_every: (self.span_from(replay.opens) / 200.0).max(1.0),
            top_users: replay.top_users,
            record_jobs: replay.jobs_during.map(|(from, to)| Window {
                from: self.origin().plus_micros(from),
                to: self.origin().plus_micros(to),
            }),
            queues: Vec::new(),
            shares: None,
            accounts: None,
            overrun: replay.overrun,
            partitions: (self.partitions.iter())
                .map(|name| {
                    let configured = replay.partitions.iter().find(|p| p.name == *name);
                    configured.cloned().unwrap_or_else(|| Partition {
                        // Slurm's default PriorityTier, where the site lists partitions.
                        tier: i32::from(!replay.partitions.is_empty()),
                        ..Partition::named(name)
                    })
                })
                .collect(),
            qos_factors: (self.qos.iter())
                .map(|name| replay.qos_factors.get(name).copied().unwrap_or(0.0))
                .collect(),
            assoc_factors: Vec::new(),
            opens: replay.opens,
            limits: replay.limits.clone(),
            outages: replay.outages.clone(),
        }
    }

    /// What every run of this trace shares, for the summaries; `fraction` is the pool's
    /// fraction of R, when it was given as one, and `source` says in words where the capacity
    /// came from.
    pub fn setting(
        &self,
        replay: &Replay,
        capacity: &Capacity,
        fraction: Option<f64>,
        source: &str,
    ) -> Setting {
        Setting {
            trace: self.trace.shown.clone(),
            format: self.format.to_string(),
            resources: self.resources.clone(),
            units: self.units.clone(),
            mean_demand: self.load.mean_demand(),
            capacity: capacity.total(),
            capacity_fraction: fraction,
            machines: capacity.machines(),
            users: self.users.len(),
            span_s: self.span_s(),
            horizon_s: match self.stop(replay.stop) {
                Stop::Drain => None,
                Stop::Horizon(h) => {
                    Some((h.as_micros().saturating_sub(self.origin().as_micros())) as f64 / 1e6)
                }
            },
            rule: replay.rule.to_string(),
            scheduler: replay.scheduler.name().into(),
            overrun: replay.overrun.name().into(),
            turn_seed: replay.slurm.turn_seed,
            loop_turns_shown: replay.slurm.loop_turns.as_ref().map(|turns| turns.shown()),
            controller_starts_shown: (replay.slurm.loop_turns.as_ref())
                .map(|_| replay.slurm.loop_starts.len()),
            backfill_cycles_shown: replay.slurm.bf_cycles.as_ref().map(|turns| turns.shown()),
            placement: replay.placement.name().into(),
            capacity_source: source.into(),
            capacity_doubt: None,
            shares: String::new(),
            queues: String::new(),
            recorded: self.recorded.clone(),
            machine_view: replay.jobs_during.map(|(from, to)| MachineView {
                origin: self.origin(),
                users: self.users.clone(),
                from_s: from as f64 / 1e6,
                to_s: to as f64 / 1e6,
                nodes: capacity
                    .named_nodes()
                    .into_iter()
                    .map(|(name, processors)| NodeLane { name, processors })
                    .collect(),
            }),
        }
    }

    /// The site's queue limits, from `path` or else a `.queues` file beside the first trace
    /// file, by the trace's queue index, with where they came from and what did not match;
    /// `None` when there is no such file.
    pub fn queue_limits(&self, path: Option<&Path>) -> Result<Option<Queues>, LabError> {
        let Some(path) = path
            .map(Path::to_path_buf)
            .or_else(|| self.beside(".queues"))
        else {
            return Ok(None);
        };
        let rules = fairshare_trace::read_queues(&path)?;
        let rule = |name: &String| rules.iter().find(|r| r.name == *name);
        let limits = self
            .queues
            .iter()
            .map(|name| {
                rule(name).map_or_else(QueueLimit::default, |r| QueueLimit {
                    processors: r.processor_limit,
                    priority: r.priority,
                    cost: r.cost,
                })
            })
            .collect();
        let unlisted: Vec<String> = self
            .queues
            .iter()
            .filter(|q| rule(q).is_none())
            .cloned()
            .collect();
        let unused = rules.iter().filter(|r| !self.queues.contains(&r.name));
        Ok(Some(Queues {
            limits,
            source: path.display().to_string(),
            unlisted,
            unused: unused.map(|r| r.name.clone()).collect(),
        }))
    }
}
