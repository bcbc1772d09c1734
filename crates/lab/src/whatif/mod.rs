//! A Slurm site's what-if: its history, as a site bundle holds it ([`fairshare_trace::bundle`]),
//! replayed under the site's own fairshare (the baseline, `as-slurm`) and under the policies in
//! question, everything taken from the bundle's files and nothing from the person asking. The
//! baseline is set beside the record first ([`crate::trust`]): a policy's prediction is worth
//! as much as the baseline's agreement with what really happened.
//!
//! Every value taken from the bundle is named in [`WhatIf::taken`], and everything the bundle
//! states that the model leaves out in [`WhatIf::unmodelled`], so that every number can be
//! traced to a command's output and nothing is assumed silently.

mod open;

use crate::jobs::JobParts;
use crate::site_limits::SiteLimits;
use crate::summary::ReplaySummary;
use crate::trust::{Compared, PinnedJobs, Trust, WindowStart};
use crate::{LabError, MeasuredTrace, ReplayPlan, ReplayRequest, TraceSpec};
use fairshare_core::model::{Pin, Time};
use fairshare_core::policy::PolicySpec;
use fairshare_sim::cluster::{JobOutcome, PolicyResult};
use fairshare_trace::bundle::Manifest;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The name of the baseline: Slurm's own fairshare with the bundle's parameters.
pub const BASELINE: &str = "as-slurm";

/// The name of the baseline of a site that runs the adapter (its bundle holds `adapter.toml`):
/// the adapter's policy, through the site factors it writes.
pub const ADAPTER_BASELINE: &str = "as-adapter";

/// What the model leaves out whatever the bundle says: what no file of a bundle holds.
pub const NEVER_MODELLED: [&str; 2] = [
    "dependencies set inside a job's script (#SBATCH --dependency) or by scontrol after its submission, which its SubmitLine does not show: such a job starts from its Eligible time when the replay's pass reaches it (a dependency on the SubmitLine, a reservation, a requeue or a preemption pins the job to its recorded start, counted under the trust figures)",
    "jobs killed when their node went down: the record keeps their shortened runs, which the replay runs wherever it started them",
];

/// A site bundle, opened and read into a replay: the trace, the cluster, the policies with the
/// baseline first, and what was taken from which file.
pub struct WhatIf {
    /// The bundle's folder.
    pub dir: PathBuf,
    /// Its manifest, when `collect` wrote one (a bundle made by the shell commands has none).
    pub manifest: Option<Manifest>,
    /// The dump, billed as the site bills it.
    pub trace: TraceSpec,
    /// The cluster, the shares and the scheduler.
    pub request: ReplayRequest,
    /// The baseline, then the policies asked for.
    pub policies: Vec<PolicySpec>,
    /// One sentence on each value taken from the bundle, naming its file.
    pub taken: Vec<String>,
    /// One sentence on each thing the model leaves out.
    pub unmodelled: Vec<String>,
    /// Which partitions share a node, by name.
    overlaps: Vec<(String, String)>,
    /// When the window opens (the manifest's `since`), when the manifest names a moment.
    opens: Option<Time>,
    /// The site's limits, when the bundle holds them.
    limits: Option<SiteLimits>,
}

impl WhatIf {
    /// The replay of this what-if's bundle, read once as `measured`: its request, with the
    /// site's limits over the dump's users, QOS and partitions.
    pub fn plan<'w>(&self, measured: &'w MeasuredTrace) -> Result<ReplayPlan<'w>, LabError> {
        let mut request = self.request.clone();
        if let Some(limits) = &self.limits {
            request.replay.limits = limits.limits(
                &measured.users,
                &measured.qos,
                &measured.partitions,
                &measured.resources,
            );
        }
        ReplayPlan::new(measured, request, &mut |_| {})
    }

    /// The baseline's figures against the record, from its `jobs` (each [`Compared::of`] the
    /// baseline's outcomes) and the `left_out` it could not compare, on `measured`.
    pub fn trust(&self, measured: &MeasuredTrace, jobs: &[Compared], left_out: usize) -> Trust {
        let names = &measured.partitions;
        let n = names.len();
        let shared = |(a, b): (&String, &String)| {
            a == b || (self.overlaps.iter()).any(|(x, y)| x == a && y == b)
        };
        let contends: Vec<bool> = (0..n * n)
            .map(|k| shared((&names[k / n], &names[k % n])))
            .collect();
        let contend = |a: Option<u32>, b: Option<u32>| match (a, b) {
            (Some(a), Some(b)) => contends[a as usize * n + b as usize],
            _ => a == b,
        };
        Trust::of(jobs, left_out, &measured.users, &contend)
    }

    /// Replays the `i`th of [`WhatIf::policies`] on `plan` (made of this what-if's trace and
    /// request), writing its rows to `parts` when given; the baseline (the first) also gives
    /// its figures against the record.
    pub fn run(
        &self,
        plan: &ReplayPlan,
        i: usize,
        parts: Option<&JobParts>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(PolicyResult, Option<Trust>), LabError> {
        let policy = &self.policies[i];
        let (mut compared, mut left_out) = (Vec::new(), 0);
        let cpu = (plan.measured().resources.iter()).position(|r| r == "cpu");
        let mut before = Before::default();
        let mut pinned: BTreeMap<Pin, PinnedJobs> = BTreeMap::new();
        let names = &plan.measured().job_names;
        let mut watch = |job: &JobOutcome| match Compared::of(job) {
            _ if i != 0 => {}
            _ if self.opens.is_some_and(|o| job.submit < o) => before.add(job, self.opens, cpu),
            _ if job.pinned.is_some() => pin(&mut pinned, job, names),
            Some(c) => compared.push(c),
            None => left_out += 1,
        };
        let result = match (parts, i) {
            (Some(parts), _) => parts.run(plan, (i, policy), progress, &mut watch)?,
            (None, 0) => plan.run_observed(policy, progress, &mut |job| watch(&job))?,
            (None, _) => plan.run(policy, progress)?,
        };
        let trust = (i == 0).then(|| Trust {
            window: self.window_start(&result, &before, cpu),
            pinned: pinned.into_values().collect(),
            ..self.trust(plan.measured(), &compared, left_out)
        });
        Ok((result, trust))
    }

    /// The machine as it stood when the window opened, from the baseline's `result`, and the
    /// jobs `before` it; `None` when the bundle opens no window.
    fn window_start(
        &self,
        result: &PolicyResult,
        before: &Before,
        cpu: Option<usize>,
    ) -> Option<WindowStart> {
        let manifest = self.manifest.as_ref()?;
        let opened = result.opened.as_ref();
        let of = |amounts: Option<&Vec<f64>>| {
            let amount = cpu.and_then(|c| amounts.and_then(|a| a.get(c)));
            amount.copied().unwrap_or(0.0)
        };
        Some(WindowStart {
            opens: manifest.since.clone(),
            jobs_running: opened.map_or(0, |o| o.jobs_running),
            processors_held: of(opened.map(|o| &o.held)),
            processors: of(opened.map(|o| &o.capacity)),
            jobs_waiting: opened.map_or(0, |o| o.jobs_waiting),
            jobs_before: before.jobs,
            history_jobs: before.started,
            history_processor_hours: before.processor_seconds / 3600.0,
            history_since: manifest.history_since.clone(),
        })
    }

    /// The what-if's document from the `runs` of every policy on `plan`, in order (each
    /// [`WhatIf::run`]'s): the bundle, what was taken from it (with `plan`'s notes on reading
    /// the dump) and left out, the trust figures and the replay's summary.
    pub fn summary(
        &self,
        plan: &ReplayPlan,
        runs: Vec<(PolicyResult, Option<Trust>)>,
    ) -> Result<WhatIfSummary, LabError> {
        let (results, trust): (Vec<_>, Vec<_>) = runs.into_iter().unzip();
        let trust = trust.into_iter().flatten().next();
        let trust = trust.ok_or_else(|| LabError::Unusable("the baseline was not run".into()))?;
        let notes = plan.measured().notes().into_iter();
        let read = notes.map(|n| format!("reading the dumps: {n}"));
        let elsewhere = results.first().map_or(0, |r| r.tasks_pinned_elsewhere);
        let elsewhere = (elsewhere > 0).then(|| format!("{elsewhere} of the jobs the record started before the window could not be put on the nodes its NodeList names (a dump without the column, a node config.txt does not define, or one already taken): each was started where it fit then"));
        Ok(WhatIfSummary {
            schema_version: crate::summary::SCHEMA_VERSION,
            bundle: self.dir.display().to_string(),
            manifest: self.manifest.clone().map(|mut m| {
                m.commands.clear();
                m
            }),
            taken: (self.taken.iter().cloned())
                .chain(read)
                .chain(elsewhere)
                .collect(),
            unmodelled: self.unmodelled.clone(),
            trust,
            prediction: plan.summary(results)?,
        })
    }
}

/// The output of `fairshare slurm what-if` (its JSON starts with `schema_version`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhatIfSummary {
    /// Layout version of this JSON document.
    pub schema_version: u32,
    /// The bundle's folder.
    pub bundle: String,
    /// Its manifest without the commands, when it has one.
    pub manifest: Option<Manifest>,
    /// One sentence on each value taken from the bundle.
    pub taken: Vec<String>,
    /// One sentence on each thing the model leaves out.
    pub unmodelled: Vec<String>,
    /// The baseline against the record.
    pub trust: Trust,
    /// The replay: the baseline, then each policy.
    pub prediction: ReplaySummary,
}

/// Counts `job`, which the replay started as the record did, under its reason in `pinned`,
/// named by its id in the record (`names`, by its index in the trace).
fn pin(pinned: &mut BTreeMap<Pin, PinnedJobs>, job: &JobOutcome, names: &[String]) {
    let Some(why) = job.pinned else {
        return;
    };
    let kind = pinned.entry(why).or_insert_with(|| PinnedJobs {
        why: why.describe().to_owned(),
        jobs: 0,
        named: Vec::new(),
    });
    kind.jobs += 1;
    if kind.named.len() < PinnedJobs::NAMED {
        let name = names.get(job.id as usize).cloned();
        kind.named.push(name.unwrap_or_else(|| job.id.to_string()));
    }
}

/// The jobs of a what-if eligible before its window opened, as the baseline settles them.
#[derive(Debug, Default)]
struct Before {
    /// How many.
    jobs: usize,
    /// How many of them the record started before the window opened.
    started: usize,
    /// Their processor-seconds before it opened.
    processor_seconds: f64,
}

impl Before {
    /// Counts `job`, eligible before the window `opens`, whose processors are its demand's
    /// `cpu`th amount.
    fn add(&mut self, job: &JobOutcome, opens: Option<Time>, cpu: Option<usize>) {
        self.jobs += 1;
        let (Some(opens), Some((start, end))) = (opens, job.recorded) else {
            return;
        };
        if start < opens {
            self.started += 1;
            let ran = end.min(opens).as_micros().saturating_sub(start.as_micros());
            let processors = cpu.and_then(|c| job.requested.get(c)).copied();
            self.processor_seconds += processors.unwrap_or(0.0) * ran as f64 / 1e6;
        }
    }
}
