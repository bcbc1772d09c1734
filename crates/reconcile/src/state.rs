//! One reconcile, scheduler-neutral: what an adapter keeps between passes (its clients,
//! machines and usage history) and, given what the scheduler says ran and waits, the plan.
//!
//! An adapter reads its scheduler into [`Allocation`]s and [`QueuedJob`]s (each with the
//! factor it holds), and [`State::reconcile`] does the rest: brings the history to now, plays out the order
//! in which the policy would start the pending jobs, turns it into factors and writes,
//! and says what a job each client submits now should get. What the adapter adds is only its
//! scheduler's: reading its commands, checking its settings, writing its factors.

use crate::clients::Clients;
use crate::history::{History, HistoryError, Step};
use crate::job::{Allocation, JobId, QueuedJob};
use crate::machines::Machines;
use crate::plan::{
    head, plan, queues, sequence_numbers, submit_factors, Plan, PlanSettings, SubmitFactor,
};
use fairshare_core::model::Time;
use fairshare_core::policy::PolicySpec;
use fairshare_core::priority::dominant_share;
use fairshare_core::rank::factors::{self, Run};
use fairshare_core::rank::play::Waiting;
use fairshare_core::rank::RankError;
use serde::Serialize;
use std::collections::BTreeMap;

/// What a reconcile keeps between passes: the clients and machines it ranks on, and the
/// usage history up to the last pass, its jobs known by ids of type `J`.
pub struct State<J = u64> {
    /// The clients.
    pub clients: Clients,
    /// The machines.
    pub machines: Machines,
    /// The usage history.
    pub history: History<J>,
}

/// One association's usage and standing, for a status table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientUsage {
    /// The account.
    pub account: String,
    /// The user.
    pub user: String,
    /// Its entitlement: its fraction of the cluster down the tree.
    pub entitlement: f64,
    /// What it was counted over the history, undecayed (see [`History::counted`]).
    pub counted: f64,
    /// Its dominant share of the cluster now (largest fraction of any resource it holds).
    pub holding: f64,
    /// The ranker's priority for it when it waits (lower goes first).
    pub priority: Option<f64>,
}

/// What one reconcile found and planned.
#[derive(Debug, Clone)]
pub struct Reconciled<J = u64> {
    /// What the history took in.
    pub step: Step,
    /// Jobs running as the history holds them.
    pub running: usize,
    /// Every association's usage.
    pub usage: Vec<ClientUsage>,
    /// The plan.
    pub plan: Plan<J>,
    /// The factor a job each association submits now should get.
    pub submit: Vec<SubmitFactor>,
    /// Things an administrator should know: associations left out, a weight too low.
    pub notes: Vec<String>,
}

impl<J: JobId> State<J> {
    /// A state of `policy` for `clients` on `machines`, its history starting at `from`.
    pub fn new(
        policy: &PolicySpec,
        clients: Clients,
        machines: Machines,
        from: Time,
    ) -> Result<State<J>, HistoryError> {
        let history = History::new(policy, &clients, &machines, from)?;
        Ok(State {
            clients,
            machines,
            history,
        })
    }

    /// Brings the history to `now` with `allocations` (what the accounting lists from about
    /// the history's time to `now`) and plans the factors of `jobs` (a pending job that
    /// holds none waits for none). After an error the state is part-way through and should be
    /// dropped.
    pub fn reconcile(
        &mut self,
        allocations: &[Allocation<J>],
        jobs: &[QueuedJob<J>],
        now: Time,
        settings: &PlanSettings,
    ) -> Result<Reconciled<J>, HistoryError> {
        let Ranked {
            step,
            queues,
            runs,
            submit,
        } = self.rank(allocations, jobs, now, settings)?;
        let plan = plan(jobs, &self.clients, (&queues, &runs), settings);
        let submit = submit_factors(&submit, &self.clients);
        let mut notes = left_out(&self.clients);
        notes.extend(weight_note(settings.weight, plan.runs));
        Ok(Reconciled {
            step,
            running: self.history.running(),
            usage: self.usage(),
            plan,
            submit,
            notes,
        })
    }

    /// Brings the history to `now` with `allocations` and plays out the order in which the
    /// policy would start the pending jobs of `jobs` that hold a factor: what the history took
    /// in, each client's queue, the runs of the order of starts with their factors, and the
    /// factor each client's next job gets.
    fn rank<'a>(
        &mut self,
        allocations: &[Allocation<J>],
        jobs: &'a [QueuedJob<J>],
        now: Time,
        settings: &PlanSettings,
    ) -> Result<Ranked<'a, J>, RankError> {
        let step = (self.history).record(allocations, &self.clients, &self.machines, now)?;
        let queues = queues(jobs, &self.clients, settings);
        let machines = &self.machines;
        let seq = sequence_numbers(queues.values().flatten().map(|j| &j.id));
        let waiting: BTreeMap<u32, Vec<Waiting>> = (queues.iter())
            .map(|(&client, queue)| {
                let play = |job: &&QueuedJob<J>| {
                    let limit = job.limit.filter(|_| settings.ends_at_limits);
                    let request = (&job.demand[..], Some(job.nodes), limit);
                    (self.history).waiting(head(job, seq[&job.id], machines), request, machines)
                };
                (client, queue.iter().map(play).collect())
            })
            .collect();
        let heads = waiting.iter().map(|(&c, w)| (c, w[0].head)).collect();
        self.history.order(&heads)?;
        let ends = match settings.ends_at_limits {
            true => expected_ends(jobs),
            false => BTreeMap::new(),
        };
        let held = |client: u32, place: usize| queues[&client][place].held;
        let weight = settings.weight;
        let ranked = (settings.ranked_runs, weight);
        let runs = (self.history).pass_factors(&waiting, &ends, held, ranked)?;
        let first_and_last = factors::first_and_last(&runs);
        let submit = (self.history).submit_table(&heads, &first_and_last, weight)?;
        Ok(Ranked {
            step,
            queues,
            runs,
            submit,
        })
    }

    /// Every client's usage and standing.
    fn usage(&self) -> Vec<ClientUsage> {
        let history = &self.history;
        (self.clients.names.iter().enumerate())
            .map(|(c, (account, user))| {
                let client = c as u32;
                ClientUsage {
                    account: account.clone(),
                    user: user.clone(),
                    entitlement: self.clients.entitlements[c],
                    counted: history.counted(client),
                    holding: dominant_share(history.holdings(client)),
                    priority: history.ranker().priority(client),
                }
            })
            .collect()
    }
}

/// What [`State::rank`] found.
struct Ranked<'a, J> {
    /// What the history took in.
    step: Step,
    /// Each client's pending jobs that hold a factor, oldest first.
    queues: BTreeMap<u32, Vec<&'a QueuedJob<J>>>,
    /// The runs of the order of starts, first to last, with their factors.
    runs: Vec<Run>,
    /// The factor a job each client submits now gets.
    submit: Vec<(u32, i64)>,
}

/// When each started job of `jobs` is expected to end, by job id: its start plus its time
/// limit, as a backfilling scheduler expects it (a job without a limit is not expected to end).
fn expected_ends<J: JobId>(jobs: &[QueuedJob<J>]) -> BTreeMap<J, Time> {
    (jobs.iter())
        .filter_map(|j| {
            Some((
                j.id.clone(),
                j.start?.plus_micros(j.limit?.saturating_mul(1_000_000)),
            ))
        })
        .collect()
}

/// One note per association left out of the ranking.
fn left_out(clients: &Clients) -> Vec<String> {
    (clients.left_out.iter())
        .map(|(account, user, why)| format!("{user} under {account} is not ranked: {why}"))
        .collect()
}

/// A note when `runs` runs of jobs leave adjacent runs less than one apart under `weight`.
fn weight_note(weight: u32, runs: usize) -> Option<String> {
    (runs as u64 > u64::from(weight)).then(|| {
        format!(
            "weight {weight} is below the {runs} runs of jobs ranked: the last runs share factor 1; raise it"
        )
    })
}
