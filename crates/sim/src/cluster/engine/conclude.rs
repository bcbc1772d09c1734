//! The run's results once it ends, and the outcomes of the jobs still running or waiting.

use super::Engine;
use crate::cluster::recorder::Recorder;
use crate::cluster::{ClusterConfig, JobOutcome, JobState, PolicyResult};
use fairshare_core::model::Time;

impl Engine {
    /// The run's results at `end`, and the outcomes of the jobs still running or waiting then
    /// (and of those settled since the observer last heard), when the run is observed.
    pub(super) fn conclude(
        mut self,
        config: &ClusterConfig,
        end: Time,
    ) -> (PolicyResult, Vec<JobOutcome>) {
        let waiting = self
            .queues
            .iter()
            .enumerate()
            .flat_map(|(u, q)| q.iter().map(move |p| (u as u32, p.submit)));
        // Under job factors the policy ranks only in their passes, whose live trees are
        // dropped: none is reported.
        let counters = self.book.ranker().livetree();
        let mut result = self
            .recorder
            .finish(end, waiting, &config.users, config.top_users);
        Recorder::with_livetree(&mut result, counters);
        result.policy = config.policy.name.clone();
        result.tasks_with_unknown_properties = self.unknown_properties;
        (result.tasks_pinned, result.tasks_pinned_elsewhere) = (self.pinned, self.pinned_elsewhere);
        result.opened = self.opened.take();
        result.held_by_limits = std::mem::take(&mut self.held_by_limits);
        if let Some(mut meter) = self.meter {
            for job in self.running.iter().flatten() {
                let ran_s = (end.as_micros().saturating_sub(job.started.as_micros())) as f64 / 1e6;
                meter.charge(job.user, job.rate.unwrap_or(0.0), ran_s);
            }
            let (charged, system_wide) = meter.totals();
            let index: std::collections::HashMap<&str, usize> = (config.users.iter())
                .enumerate()
                .map(|(u, name)| (name.as_str(), u))
                .collect();
            for user in &mut result.users {
                user.charged = index.get(user.id.as_str()).map(|&u| charged[u]);
            }
            result.tasks_priced_system_wide = system_wide;
        }
        let mut settled = std::mem::take(&mut self.settled);
        for job in self.running.iter_mut().flatten() {
            settled.extend(job.outcome.take().map(|o| JobOutcome {
                state: JobState::Unfinished,
                ..*o
            }));
        }
        for job in self.queues.iter_mut().flatten() {
            settled.extend(job.outcome.take().map(|o| JobOutcome {
                state: JobState::NeverStarted,
                waited_until: end,
                ..*o
            }));
        }
        let mut jobs = self.jobs;
        let still_running = self.running.into_iter().flatten();
        jobs.extend(still_running.filter_map(|r| r.record));
        jobs.sort_unstable_by_key(|j| (j.start, j.id));
        result.jobs = jobs;
        (result, settled)
    }
}
