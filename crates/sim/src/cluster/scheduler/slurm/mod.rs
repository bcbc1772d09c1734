//! Slurm's two schedulers, as `sched/backfill` runs them (Slurm 22.05's `job_scheduler.c` and
//! `plugins/sched/backfill/backfill.c`), so that a replay predicts what a Slurm site would have
//! done rather than what a textbook backfilling would.
//!
//! - **The main scheduler** runs for submissions and job ends, which ask `slurmctld`'s
//!   background loop for it: at the loop's next second (or its next turn, where
//!   `slurmctld`'s log times them: [`LoopTurns`]), and at most every `batch_sched_delay`
//!   (3 s by default; `controller.c`'s `_slurmctld_background`) counted in the whole seconds
//!   the loop's clock read, so that the jobs of a few seconds' ends start together, seconds
//!   after the first of them. An end asks once the job's nodes have answered the terminate
//!   request (`completing_us`, 5 ms measured): until then they are completing and take no
//!   job. A job killed at its limit (or cancelled while it ran) has its nodes report their
//!   epilog instead (`killed_completing_us`, 38 ms measured), which runs the main scheduler
//!   at once (`_slurm_rpc_epilog_complete`), outside the spacing. Every `sched_interval`
//!   (60 s) from the loop's start, when the controller's log gives it, the loop runs the main
//!   scheduler down the whole queue whatever was asked, which restarts the spacing. It goes
//!   down the queue in priority order, at most `default_queue_depth` jobs (all of them in a
//!   pass down the whole queue), starting each job that fits now: once a job of a partition
//!   is left pending, no later job of that partition is started by it (Slurm's
//!   `failed_parts`), and no job of any partition is started on that partition's nodes,
//!   which other partitions may share. Partitions are told apart where the machines declare
//!   them (a Slurm site's nodes and partitions as `--machines`); elsewhere every job may run
//!   on every node, and the first that does not fit stops the pass.
//! - **The backfill scheduler** runs every `bf_interval` seconds. It goes down the queue in
//!   priority order, at most `bf_max_job_test` jobs (and `bf_max_job_user` of one user, when
//!   set), starting each job that fits now without delaying an earlier job's planned start,
//!   and planning every job that does not where `select/cons_tres`'s will-run test puts it
//!   by the running jobs' time limits (`will_run`: the running jobs taken away
//!   in Slurm's batches, the job planned from the end of the last one taken, on the nodes
//!   chosen once they are gone; a job already past its limit is planned to end the next
//!   second), within `bf_window`. A planned job holds the whole of each node it is planned
//!   on (Slurm's plan is a map of nodes, not of processors), from its start to its end each
//!   rounded down to `bf_resolution` (at least that long). Its plans are dropped when the
//!   cycle ends, as Slurm's are. A cycle runs only when a job arrived, started or ended since
//!   the last one (Slurm's backfill waits for new work).
//!
//! A job past its time limit is killed at the first check of time limits (every 30 s) once
//! `OverTimeLimit` has passed too, under `--overrun kill`: a job of a Slurm dump runs its
//! recorded time, as Slurm let it.
//!
//! The backfill's cycles fall on the multiples of `bf_interval` from the run's start, or, given
//! a phase (`bf_phase_s`, which a replay reads from the jobs a dump says the backfill
//! started), that many seconds past each multiple from the epoch: Slurm's timer runs from
//! `slurmctld`'s start, a cycle `bf_interval` after the previous one ended. Where
//! `slurmctld`'s log shows the cycles (`bf_cycles`), they fall there and evenly between,
//! which follows their drift and restarts. What is left out: without the log, the time a
//! cycle takes (its drift, some 18 ms a cycle on the runs measured) and a cycle run within
//! the second of new work after an idle stretch; and `bf_continue`'s yielding (a cycle here
//! is instantaneous). A partition's `PriorityTier` and partition factor come with
//! the run's partitions ([`crate::cluster::Partition`]). docs/slurm-prediction.md measures
//! what that costs.
//!
//! Where a later Slurm changed which job starts when, the model follows the release the site
//! ran ([`Release`], from `SLURM_VERSION`): from 23.11 the background loop wakes on each
//! whole second (where no log shows its turns), and from 24.11 the backfill rounds a plan's
//! end up to `bf_resolution`. What a release changed that the model does not follow is
//! returned as notes.

mod adapter;
mod parameters;
mod timing;
mod turns;
mod will_run;

use parameters::TIME_LIMIT_CHECK_S;
pub use parameters::{Release, SlurmParameters};
pub use turns::LoopTurns;
use will_run::WillRun;

use super::{
    Planner, Planning, Reservations, Scheduler, SchedulerEntry, SchedulingPass, Serving, Timing,
};
use fairshare_core::model::Time;
use fairshare_core::policy::PolicySpec;
use fairshare_core::priority::multifactor::JobPriority;
use fairshare_core::rank::Ranker;
use std::collections::HashMap;
use std::sync::Arc;
use timing::SlurmTiming;

/// `--scheduler slurm`.
pub(super) const SLURM: SchedulerEntry = SchedulerEntry {
    name: "slurm",
    about: "Slurm's main scheduler after each event (a blocked job stops its partition) and its backfill every bf_interval (--slurm-conf sets them)",
    build: |settings| {
        Arc::new(Slurm {
            parameters: settings.slurm.clone(),
        })
    },
};

/// Slurm's main and backfill schedulers, as the module documentation describes them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slurm {
    /// The parameters it runs with.
    pub parameters: SlurmParameters,
}

impl Slurm {
    /// The main scheduler: in order, at most `default_queue_depth` jobs, each started if it
    /// fits; a job that does not blocks its partition for the rest of the pass (Slurm's
    /// `failed_parts`) and keeps the pass off the partition's nodes, which other partitions
    /// may share; one that may run on any node blocks them all.
    fn main(&self, pass: &mut dyn SchedulingPass) {
        let mut blocked: Vec<u32> = Vec::new();
        let mut tested = 0;
        while let Some(user) = pass.first() {
            if tested == self.parameters.default_queue_depth && !pass.kind().whole_queue {
                return;
            }
            tested += 1;
            let partition = pass.partition(user);
            if partition.is_some_and(|p| blocked.contains(&p)) {
                pass.pass_over(user);
            } else if !pass.start(user) {
                let Some(partition) = partition else {
                    return;
                };
                blocked.push(partition);
                pass.fence(user);
                pass.pass_over(user);
            }
        }
    }

    /// The backfill scheduler: in order, each job started if it delays no earlier job's plan,
    /// else planned.
    fn backfill(&self, pass: &mut dyn SchedulingPass) {
        let per_user = self.parameters.bf_max_job_user;
        let mut tested_of: HashMap<u32, u32> = HashMap::new();
        let mut tested = 0;
        while tested < self.parameters.bf_max_job_test {
            // Plans are dropped when the cycle ends and serve only to keep later jobs from
            // delaying earlier ones: once nothing more can start now, the rest of the cycle
            // would change nothing.
            if pass.full() {
                return;
            }
            let Some(user) = pass.first() else {
                return;
            };
            let of_user = tested_of.entry(user).or_default();
            if per_user != 0 && *of_user == per_user {
                pass.set_aside(user);
                continue;
            }
            *of_user += 1;
            tested += 1;
            if !pass.start(user) {
                pass.reserve_within(user, self.parameters.bf_window_s);
                pass.pass_over(user);
            }
        }
    }
}

impl Scheduler for Slurm {
    fn reservations(&self) -> Reservations {
        Reservations::ForThePass
    }

    /// The backfill plans whole nodes by the will-run test, with the jobs' time limits, in
    /// spans of `bf_resolution`.
    fn planning(&self) -> Planning {
        Planning {
            whole_nodes: true,
            resolution_s: Some(self.parameters.bf_resolution_s),
            ends_rounded_up: self.parameters.release.plan_ends_rounded_up(),
            with_limits: true,
        }
    }

    /// Where `select/cons_tres`'s will-run test puts a job, on the nodes the cycle's other
    /// plans leave, from the end of the running jobs whose going leaves it room.
    fn planner(&self, nodes: usize) -> Option<Planner> {
        Some(WillRun::planner(nodes))
    }

    fn timing(&self, origin: Time) -> Box<dyn Timing> {
        Box::new(SlurmTiming::new(&self.parameters, origin))
    }

    fn job_priority(&self) -> Option<JobPriority> {
        Some(self.parameters.priority)
    }

    /// By Slurm's multifactor job priority, the policy reaching it as Slurm's own fairshare
    /// factor or as the adapter's site factors, the adapter as the replay models it.
    fn serving(
        &self,
        policy: &PolicySpec,
        ranker: Box<dyn Ranker>,
        shape: (usize, usize),
    ) -> Serving {
        adapter::serving(policy, ranker, shape, &self.parameters)
    }

    fn pass(&self, pass: &mut dyn SchedulingPass) {
        if pass.kind().periodic {
            self.backfill(pass);
        } else {
            self.main(pass);
        }
    }
}
