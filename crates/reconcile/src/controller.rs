//! One pass of any adapter, owned here: read the scheduler through [`SchedulerIo`], keep the
//! usage history between passes, ask the accounting for what ran since the history's clock,
//! reconcile, then write the factors that differ and read them back.
//!
//! What every adapter must get right is the same: a history rebuilt when the clients, the
//! machines or what the scheduler charges change (and only then), the accounting window that
//! overlaps the last pass by a second, a write retried once and verified, the jobs fairshare
//! leaves alone. Kept in [`Controller`], it is written once; an adapter writes only its
//! scheduler's readers and writer.

use crate::clients::{Clients, ClientsError};
use crate::command::Unread;
use crate::history::HistoryError;
use crate::job::{Allocation, JobId, QueuedJob};
use crate::machines::{Machines, MachinesError};
use crate::pass::{OrderCheck, Pass, Version, Words};
use crate::plan::{considered, pending, Plan, PlanSettings, PlannedJob};
use crate::state::State;
use crate::watch::Passes;
use crate::writes::{Applied, Refusal, Write};
use fairshare_core::error::Chain;
use fairshare_core::model::Time;
use fairshare_core::policy::PolicySpec;
use std::collections::BTreeMap;

/// The factor each pending job holds, by job id.
pub type Held<J = u64> = BTreeMap<J, i64>;

/// What a scheduler answers and does for a pass. Every method asks the scheduler once (or a
/// few commands that belong together); the [`Controller`] decides when.
pub trait SchedulerIo {
    /// Why the scheduler gave no usable answer.
    type Error: std::error::Error + From<HistoryError> + 'static;
    /// Its job ids (Slurm's and Grid Engine's: `u64`).
    type Job: JobId;
    /// How the scheduler charges usage (Slurm: billing weights and usage factors): the history
    /// is rebuilt when it changes.
    type Charging: PartialEq + Clone;
    /// The scheduler's words, in notes and in what the report shows.
    const WORDS: Words;

    /// The cluster as the scheduler has it now.
    fn cluster(&mut self) -> Result<Cluster<Self::Charging>, Self::Error>;

    /// What the accounting lists as run or running from `from` to `to`, charged by
    /// `charging`, and the queue now, read in the order the scheduler needs.
    fn jobs(
        &mut self,
        from: Time,
        to: Time,
        charging: &Self::Charging,
    ) -> Result<Jobs<Self::Job>, Self::Error>;

    /// The queue alone, each pending job with the factor it holds now (a reset's).
    fn queue(&mut self) -> Result<Vec<QueuedJob<Self::Job>>, Self::Error>;

    /// The factor each pending job holds now, to read writes back: the queue's, unless the
    /// scheduler has a read of its own (Slurm's `sprio`).
    fn factors(&mut self) -> Result<Held<Self::Job>, Self::Error> {
        let queue = self.queue()?.into_iter();
        Ok(queue.filter_map(|j| Some((j.id, j.held?))).collect())
    }

    /// Gives the jobs of `write` its factor.
    fn write(&mut self, write: &Write<Self::Job>) -> Result<(), Self::Error>;

    /// The commands run since the count was last taken; the count starts again.
    fn reads(&mut self) -> u32;

    /// What the scheduler says beside `plan`, made under `policy` as run: its own order of
    /// the clients, notes on its settings as they bear on the plan. A failure is a note.
    fn review(&mut self, policy: &PolicySpec, plan: &Plan<Self::Job>) -> Review {
        let _ = (policy, plan);
        Review::default()
    }

    /// What follows a pass that wrote (Slurm's: the table `job_submit.lua` reads).
    fn after_writing(&mut self, pass: &Pass<Self::Job>) -> std::io::Result<()> {
        let _ = pass;
        Ok(())
    }
}

/// The cluster as a scheduler has it at the start of a pass.
pub struct Cluster<C> {
    /// The clients, placed in the account tree.
    pub clients: Clients,
    /// The machines.
    pub machines: Machines,
    /// What the scheduler charges.
    pub charging: C,
    /// How fast the scheduler's own usage fades, when it does: a policy whose text leaves its
    /// memory out is run remembering as long ([`PolicySpec::remembering`]).
    pub half_life: Option<HalfLife>,
    /// The scheduler's version, when it prints one.
    pub version: Option<Version>,
    /// How the factor enters the scheduler's priority, in the adapter's word for it, where
    /// the scheduler offers a choice (Slurm's `replace` or `add`).
    pub mapping: Option<&'static str>,
    /// What an administrator should know of the scheduler's settings.
    pub notes: Vec<String>,
}

/// Why a pass could not be made, for an adapter whose readers fail with `R`: the error an
/// adapter with nothing of its own to add takes as its [`SchedulerIo::Error`].
#[derive(Debug, thiserror::Error)]
pub enum PassError<R: std::error::Error + 'static> {
    /// A command gave no usable answer, or one that could not be read.
    #[error(transparent)]
    Answer(#[from] Unread<R>),
    /// Something read beside the commands (a file) could not be used.
    #[error(transparent)]
    Read(R),
    /// The clients cannot be ranked.
    #[error(transparent)]
    Clients(#[from] ClientsError),
    /// The nodes make no cluster.
    #[error(transparent)]
    Machines(#[from] MachinesError),
    /// The policy cannot keep a history of these clients.
    #[error(transparent)]
    History(#[from] HistoryError),
}

impl<C> Cluster<C> {
    /// The cluster of `clients` and `machines` under `charging`, with no half-life, version,
    /// mapping or note.
    pub fn new(clients: Clients, machines: Machines, charging: C) -> Cluster<C> {
        Cluster {
            clients,
            machines,
            charging,
            half_life: None,
            version: None,
            mapping: None,
            notes: Vec::new(),
        }
    }
}

/// A scheduler's half-life of usage, and the setting it comes from, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct HalfLife {
    /// Seconds.
    pub seconds: u64,
    /// The setting as the scheduler names it: `Slurm's PriorityDecayHalfLife=7-0`.
    pub said: String,
}

/// What a pass reads of the jobs: what ran, and what waits.
#[derive(Debug, Clone)]
pub struct Jobs<J = u64> {
    /// What the accounting lists as run or running in the window asked.
    pub ran: Vec<Allocation<J>>,
    /// A sentence for each accounting record that could not be read.
    pub skipped: Vec<String>,
    /// The queue, each pending job with the factor it holds now.
    pub queue: Vec<QueuedJob<J>>,
}

/// What a scheduler says beside a plan.
#[derive(Debug, Clone, Default)]
pub struct Review {
    /// Its own order of the waiting clients, beside fairshare's.
    pub check: Option<OrderCheck>,
    /// Notes on its settings as they bear on the policy as run, told with the cluster's notes.
    pub settings: Vec<String>,
    /// Notes on its settings as they bear on the plan, told last.
    pub notes: Vec<String>,
}

/// How a [`Controller`] runs: its policy, its plans' settings and its history's reach.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The policy, as configured.
    pub policy: PolicySpec,
    /// The settings plans are made under.
    pub plan: PlanSettings,
    /// How far back a history is built from the accounting, in seconds.
    pub window_s: f64,
    /// A clean start no history reaches back before.
    pub since: Option<Time>,
}

/// What the controller keeps between passes: the reconcile's state and the charging it
/// counted the history under.
struct Known<J, C> {
    state: State<J>,
    charging: C,
}

/// A policy applied to one scheduler, pass after pass.
pub struct Controller<S: SchedulerIo> {
    io: S,
    setup: Setup,
    /// The policy as last run.
    policy: PolicySpec,
    known: Option<Known<S::Job, S::Charging>>,
}

impl<S: SchedulerIo> Controller<S> {
    /// A controller of `setup` talking to the scheduler through `io`.
    pub fn new(io: S, setup: Setup) -> Controller<S> {
        Controller {
            io,
            policy: setup.policy.clone(),
            setup,
            known: None,
        }
    }

    /// The scheduler's side, for what an adapter reads beside a pass.
    pub fn io(&self) -> &S {
        &self.io
    }

    /// The scheduler's side, to change (an adapter's own state, a test's faults).
    pub fn io_mut(&mut self) -> &mut S {
        &mut self.io
    }

    /// One pass at `now`: reads the cluster, brings the history to `now`, plans, and asks
    /// the scheduler what it says beside the plan. A history the ranker refused midway is
    /// dropped, so the next pass rebuilds it.
    pub fn pass(&mut self, now: Time) -> Result<Pass<S::Job>, S::Error> {
        self.io.reads();
        let cluster = self.io.cluster()?;
        let (policy, remembered) = match &cluster.half_life {
            Some(h) => remembering(&self.setup.policy, h.seconds, &h.said),
            None => (self.setup.policy.clone(), None),
        };
        if policy.name != self.policy.name {
            self.policy = policy;
            self.known = None;
        }
        let mut notes = cluster.notes;
        notes.extend(remembered);
        let settings_told = notes.len();
        let rebuilt = self.refresh(cluster.clients, cluster.machines, cluster.charging, now)?;
        let known = self.known.as_ref().expect("refreshed");
        // The last second again: the accounting lists times in whole seconds.
        let since = known.state.history.now().as_micros();
        let from = Time(since.saturating_sub(1_000_000));
        // A read that fails leaves the history as it was, for the next pass to bring on.
        let mut jobs = self.io.jobs(from, now, &known.charging)?;
        notes.append(&mut jobs.skipped);
        let partitions = &self.setup.plan.partitions;
        jobs.ran.retain(|a| considered(&a.partition, partitions));
        let known = self.known.as_mut().expect("refreshed");
        let reconciled = (known.state).reconcile(&jobs.ran, &jobs.queue, now, &self.setup.plan);
        let mut done = reconciled.inspect_err(|_| self.known = None)?;
        notes.append(&mut done.notes);
        let mut review = self.io.review(&self.policy, &done.plan);
        notes.splice(settings_told..settings_told, review.settings);
        notes.append(&mut review.notes);
        Ok(Pass {
            at_s: now.as_secs_f64(),
            version: cluster.version,
            policy: self.policy.name.clone(),
            mapping: cluster.mapping,
            rebuilt,
            step: done.step,
            running: done.running,
            usage: done.usage,
            plan: done.plan,
            notes,
            check: review.check,
            submit: done.submit,
            reads: self.io.reads(),
        })
    }

    /// Keeps the history, or builds one from the window before `now` when there is none yet
    /// or the clients, the machines or the charging changed; says why when it builds.
    fn refresh(
        &mut self,
        clients: Clients,
        machines: Machines,
        charging: S::Charging,
        now: Time,
    ) -> Result<Option<String>, S::Error> {
        let why = match &self.known {
            None => "no history yet",
            Some(k) if k.state.clients != clients => "the association tree changed",
            Some(k) if k.state.machines != machines => "the nodes changed",
            Some(k) if k.charging != charging => "what the scheduler charges changed",
            Some(_) => return Ok(None),
        };
        let window = (self.setup.window_s * 1e6) as u64;
        let from = Time(now.as_micros().saturating_sub(window));
        let from = from.max(self.setup.since.unwrap_or(from)).min(now);
        let state = State::new(&self.policy, clients, machines, from)?;
        self.known = Some(Known { state, charging });
        Ok(Some(format!(
            "{why}: usage rebuilt from {} since {}",
            S::WORDS.accounting,
            utc_seconds(from)
        )))
    }

    /// Writes `plan`'s factors, each refused call retried once, then reads them back.
    pub fn apply(&mut self, plan: &Plan<S::Job>) -> Applied<S::Job> {
        let mut applied = Applied::default();
        for write in &plan.writes {
            applied.calls += 1;
            let mut outcome = self.io.write(write);
            if outcome.is_err() {
                applied.calls += 1;
                outcome = self.io.write(write);
            }
            if let Err(e) = outcome {
                let (write, message) = (write.clone(), Chain(&e).to_string());
                applied.refused.push(Refusal { write, message });
            }
        }
        if plan.writes.is_empty() {
            return applied;
        }
        match self.io.factors() {
            Ok(held) => {
                for write in &plan.writes {
                    for id in &write.jobs {
                        match held.get(id) {
                            Some(h) if *h != write.factor => applied.mismatched.push(id.clone()),
                            Some(_) => applied.jobs += 1,
                            None => {}
                        }
                    }
                }
            }
            Err(e) => applied.unverified = Some(Chain(&e).to_string()),
        }
        applied
    }

    /// The writes that set the non-zero factor of every pending job (in the configured
    /// partitions) back to 0: an adapter's `reset`.
    pub fn reset_plan(&mut self) -> Result<Plan<S::Job>, S::Error> {
        let jobs = self.io.queue()?;
        Ok(reset_plan(&jobs, &self.setup.plan))
    }
}

impl<S: SchedulerIo> Passes for Controller<S> {
    type Pass = Pass<S::Job>;
    type Job = S::Job;
    type Error = S::Error;

    fn pass(&mut self, now: Time) -> Result<Pass<S::Job>, S::Error> {
        Controller::pass(self, now)
    }

    fn apply(&mut self, pass: &Pass<S::Job>) -> Applied<S::Job> {
        Controller::apply(self, &pass.plan)
    }

    fn after_writing(&mut self, pass: &Pass<S::Job>) -> std::io::Result<()> {
        self.io.after_writing(pass)
    }

    fn notes(pass: &Pass<S::Job>) -> &[String] {
        &pass.notes
    }
}

/// The plan that sets every pending job's factor to 0.
fn reset_plan<J: JobId>(jobs: &[QueuedJob<J>], settings: &PlanSettings) -> Plan<J> {
    let jobs: Vec<PlannedJob<J>> = pending(jobs, settings)
        .map(|job| PlannedJob::of(job, job.held.map(|_| 0), None))
        .collect();
    Plan::of(Vec::new(), jobs, settings.per_call)
}

/// `given` remembering as long as the scheduler's own usage, `half_life_s` (`said`: the
/// setting as the scheduler names it), when its text leaves its memory out
/// ([`PolicySpec::remembering`]), with the sentence that says which memory it keeps (none
/// for a policy without one).
fn remembering(given: &PolicySpec, half_life_s: u64, said: &str) -> (PolicySpec, Option<String>) {
    match given.remembering(half_life_s) {
        Some(ran) => {
            let note = format!("policy {}: run as {}: its memory halves in {said}, as the scheduler's own usage does (give the policy its own memory to set another)", given.name, ran.name);
            (ran, Some(note))
        }
        None if given.has_memory() => {
            let note = format!(
                "policy {} keeps the memory its text gives it; {said} is not used",
                given.name
            );
            (given.clone(), Some(note))
        }
        None => (given.clone(), None),
    }
}

/// A time as the accounting commands take it, in UTC: `2026-11-24T07:00:00`.
pub fn utc_seconds(t: Time) -> String {
    let secs = std::time::Duration::from_secs(t.whole_secs());
    let text = humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + secs).to_string();
    text.trim_end_matches('Z').to_string()
}
