//! `replay`: one trace, several policies side by side, as `fairshare replay` runs it (the
//! same lab calls, in parallel where cores allow), with the GIL released while it runs.

use crate::failure::pythonic;
use crate::progress::{Progress, ProgressLanes};
use crate::ranker::{self, PythonRanker};
use crate::{input_error, named, trace_spec, Failure, TraceOptions};
use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::policy::PolicySpec;
use fairshare_lab::input::{parse_duration, parse_window};
use fairshare_lab::jobs::JobParts;
use fairshare_lab::runs::{run_all_listing, OneThread};
use fairshare_lab::site_defaults::{self, SiteDefaults};
use fairshare_lab::slurm_conf::{slurm_setup, BillingFiles, SlurmSetup};
use fairshare_lab::summary::ReplaySummary;
use fairshare_lab::{
    CapacitySource, MeasuredTrace, Replay, ReplayPlan, ReplayRequest, ShareSource, StopRule,
    TraceSpec,
};
use fairshare_sim::cluster::{Overrun, PlacementEntry, SchedulerEntry};
use fairshare_sim::stats::RunStats;
use fairshare_trace::slurmctld_log::ControllerLog;
use fairshare_trace::Format;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// A finished replay: the summary `fairshare replay --json` writes, what the runs took, and
/// the notes the reading and the assembly made.
#[pyclass(module = "fairshare._native", frozen)]
pub struct Replayed {
    summary: ReplaySummary,
    stats: Vec<RunStats>,
    notes: Vec<String>,
}

#[pymethods]
impl Replayed {
    /// The summary as `fairshare replay --json` writes it, to the byte.
    fn json(&self) -> PyResult<String> {
        let mut text = serde_json::to_string_pretty(&self.summary).map_err(input_error)?;
        text.push('\n');
        Ok(text)
    }

    /// The self-contained HTML report `fairshare replay --report` writes.
    fn html(&self) -> String {
        fairshare_report::replay_html(&self.summary)
    }

    /// The table `fairshare replay` prints.
    fn table(&self) -> String {
        fairshare_report::replay_table(&self.summary, &self.stats)
    }

    /// What the results warn of (many tasks that never fit, …), as the command line says it.
    fn warnings(&self) -> Vec<String> {
        let warnings = fairshare_report::replay_warnings(&self.summary);
        warnings.iter().map(|w| pythonic(w)).collect()
    }

    /// What the reader and the assembly decided (capacity, shares, queues), in words.
    fn notes(&self) -> Vec<String> {
        self.notes.iter().map(|n| pythonic(n)).collect()
    }

    /// Each run's wall-clock seconds and events, as `--stats` writes them (JSON).
    fn stats(&self) -> PyResult<String> {
        serde_json::to_string_pretty(&self.stats).map_err(input_error)
    }
}

/// The cluster and capacity options of a replay, by their command-line names.
pub struct ClusterOptions {
    /// `--capacity-fraction`.
    pub capacity_fraction: Option<f64>,
    /// `--capacity`.
    pub capacity: Option<String>,
    /// `--machines`.
    pub machines: Option<PathBuf>,
    /// `--horizon`, as a duration.
    pub horizon: Option<String>,
    /// `--drain`.
    pub drain: bool,
    /// `--rule`, `--scheduler`, `--placement`, `--overrun`.
    pub rule: String,
    /// `--scheduler`.
    pub scheduler: String,
    /// `--placement`; `None`: `slurm` under the Slurm scheduler, else `first`.
    pub placement: Option<String>,
    /// `--overrun`.
    pub overrun: String,
    /// `--slurm-conf`.
    pub slurm_conf: Option<PathBuf>,
    /// `--site-weight`.
    pub site_weight: Option<u32>,
    /// `--site-interval`.
    pub site_interval: Option<String>,
}

impl ClusterOptions {
    /// The engine's settings, each option checked as the command line checks it, and the
    /// notes on what the Slurm configuration sets that is not modelled.
    pub(crate) fn replay(
        &self,
        billing: &BillingFiles,
        log: Option<&ControllerLog>,
    ) -> Result<(Replay, Vec<String>), Failure> {
        if self.drain && self.horizon.is_some() {
            return Err("horizon and drain: give one or the other".into());
        }
        let stop = match (self.drain, &self.horizon) {
            (true, _) => StopRule::Drain,
            (false, Some(h)) => {
                StopRule::After(parse_duration(h).map_err(|e| format!("horizon: {e}"))?)
            }
            (false, None) => StopRule::LastEvent,
        };
        let scheduler = named::<SchedulerEntry>("scheduler", &self.scheduler)?;
        let spelled = ("site_weight", "scheduler=\"slurm\"");
        let slurm = (self.slurm_setup(scheduler, billing)?)
            .with_site_weight(self.site_weight, scheduler, spelled)
            .and_then(|s| {
                let interval = self.site_interval.as_deref();
                s.with_site_interval(interval, scheduler, ("site_interval", spelled.1))
            })
            .and_then(|s| s.with_loop_turns(log, scheduler, ("slurmctld_log", spelled.1)))
            .map_err(|e| e.to_string())?;
        let replay = Replay {
            stop,
            rule: named::<FillRule>("rule", &self.rule)?,
            scheduler,
            slurm: slurm.parameters,
            partitions: slurm.partitions,
            qos_factors: slurm.qos_factors,
            placement: match &self.placement {
                Some(placement) => named::<PlacementEntry>("placement", placement)?,
                None if scheduler == SchedulerEntry::SLURM => PlacementEntry::SLURM,
                None => PlacementEntry::FIRST,
            },
            overrun: named::<Overrun>("overrun", &self.overrun)?,
            cluster: slurm.cluster_name.clone(),
            ..Replay::default()
        };
        let notes = slurm.notes.iter().map(|n| format!("slurm_conf: {n}"));
        Ok((replay, notes.collect()))
    }

    /// Slurm's scheduling parameters, partitions and QOS factors, from `slurm_conf` (and the
    /// `qos` file of `billing`) when given (only with the Slurm scheduler), with notes on what
    /// it sets that is not modelled.
    fn slurm_setup(
        &self,
        scheduler: SchedulerEntry,
        billing: &BillingFiles,
    ) -> Result<SlurmSetup, Failure> {
        let Some(path) = &self.slurm_conf else {
            return Ok(SlurmSetup::default());
        };
        if scheduler != SchedulerEntry::SLURM {
            return Err(
                "slurm_conf sets scheduler=\"slurm\"'s parameters; add scheduler=\"slurm\"".into(),
            );
        }
        let conf = format!("slurm_conf {}", path.display());
        let text = std::fs::read_to_string(path).map_err(|e| format!("{conf}: {e}"))?;
        let setup = slurm_setup(&text).map_err(|e| format!("{conf}: {e}"))?;
        Ok(setup.with_qos(billing.qos_priorities()?.as_ref()))
    }

    /// The site's Slurm configuration and its path, when `slurm_conf` is given.
    pub(crate) fn site(
        &self,
        billing: &BillingFiles,
    ) -> Result<Option<(SlurmSetup, PathBuf)>, Failure> {
        let scheduler = named::<SchedulerEntry>("scheduler", &self.scheduler)?;
        let setup = self.slurm_setup(scheduler, billing)?;
        Ok(self.slurm_conf.clone().map(|path| (setup, path)))
    }

    /// Where the capacity comes from: the options, else the machines of the site's Slurm
    /// configuration `site` when it defines some (with the note that says so).
    fn capacity(
        &self,
        site: Option<&(SlurmSetup, PathBuf)>,
    ) -> Result<(CapacitySource, Option<String>), Failure> {
        let given = [
            self.capacity.is_some(),
            self.machines.is_some(),
            self.capacity_fraction.is_some(),
        ];
        if given.iter().filter(|g| **g).count() > 1 {
            return Err("capacity, machines and capacity_fraction: give at most one".into());
        }
        if let Some(f) = self
            .capacity_fraction
            .filter(|f| !(f.is_finite() && *f > 0.0))
        {
            return Err(format!("capacity_fraction must be a positive number, found {f}").into());
        }
        let spelled = ("slurm_conf", "machines, capacity or capacity_fraction");
        let site_machines = site.and_then(|(setup, path)| setup.site_machines(path, spelled));
        Ok(
            match (&self.capacity, &self.machines, self.capacity_fraction) {
                (Some(spec), ..) => (CapacitySource::Pool(spec.clone()), None),
                (None, Some(path), _) => (CapacitySource::Machines(path.clone()), None),
                (None, None, Some(f)) => (CapacitySource::FractionOfMean(f), None),
                (None, None, None) => match site_machines {
                    Some((path, note)) => (CapacitySource::SiteMachines(path), Some(note)),
                    None => (CapacitySource::Own, None),
                },
            },
        )
    }
}

/// The jobs a replay lists for the report's view of the machines (`--gantt`).
pub enum MachineView {
    /// Those of a window `START+LENGTH`.
    Window(String),
    /// Those of the day in the middle of the trace, as `--report` lists them.
    MiddleDay,
    /// None.
    None,
}

/// What to replay, by the command line's names.
pub struct Run<'a> {
    /// The trace.
    pub trace: &'a TraceOptions,
    /// `--policy`, each: a name, or a Python ranker.
    pub policies: &'a [Bound<'a, PyAny>],
    /// The cluster and capacity.
    pub cluster: &'a ClusterOptions,
    /// `--shares`.
    pub shares: &'a str,
    /// `--queues`.
    pub queues: Option<PathBuf>,
    /// The jobs listed for the view of the machines.
    pub view: MachineView,
    /// `--jobs`: where the per-job table goes.
    pub jobs: Option<PathBuf>,
}

/// Replays the trace under every policy, as `fairshare replay` does, reporting simulated
/// seconds to `progress`; an exception a Python ranker raised is raised from here.
pub fn replay(py: Python<'_>, run: Run<'_>, progress: Option<PyObject>) -> PyResult<Replayed> {
    let (policies, rankers) = ranker::policies(run.policies)?;
    let replayed = replay_specs(py, run, &policies, &rankers, progress);
    match rankers.iter().find_map(|r| r.failure()) {
        Some(raised) => Err(raised),
        None => Ok(replayed?),
    }
}

/// [`replay`] of the parsed policies, the Python rankers among them told the users.
fn replay_specs(
    py: Python<'_>,
    run: Run<'_>,
    policies: &[PolicySpec],
    rankers: &[Arc<PythonRanker>],
    progress: Option<PyObject>,
) -> Result<Replayed, Failure> {
    let Run {
        trace,
        cluster,
        shares,
        queues,
        view,
        jobs,
        ..
    } = run;
    if policies.is_empty() {
        return Err("policies: give at least one".into());
    }
    fairshare_lab::distinct(policies).map_err(|e| format!("policies: {e}"))?;
    let shares: ShareSource = shares.parse().map_err(|e| format!("shares: {e}"))?;
    let middle_day = matches!(view, MachineView::MiddleDay);
    let gantt = match view {
        MachineView::Window(g) => Some(parse_window(&g).map_err(|e| format!("gantt: {e}"))?),
        MachineView::MiddleDay | MachineView::None => None,
    };
    let log = run.trace.controller_log.as_deref();
    let (replay, mut conf_notes) = cluster.replay(&run.trace.billing, log)?;
    let site = site_replay(cluster, trace, policies, log)?;
    conf_notes.extend(site.notes);
    let (policies, capacity, spec) = (&site.policies[..], site.capacity, site.spec);
    py.allow_threads(|| {
        let measured = MeasuredTrace::scan(&spec, &mut |_| {})?;
        for ranker in rankers {
            ranker.know_users(&measured.users);
        }
        let mut notes: Vec<String> = measured.notes().to_vec();
        notes.extend(conf_notes);
        let request = ReplayRequest {
            capacity,
            shares,
            queues,
            replay: Replay {
                jobs_during: gantt.or_else(|| middle_day.then(|| measured.middle_day())),
                ..replay
            },
        };
        let plan = ReplayPlan::new(&measured, request, &mut |note| notes.push(note))?;
        notes.extend(plan.alike(policies));
        let parts = jobs.as_deref().map(JobParts::beside).transpose()?;
        let span = (measured.span_s().ceil() as u64).max(1);
        let progress = Progress::new(progress, span * policies.len() as u64);
        let lanes = ProgressLanes {
            progress: &progress,
            span,
        };
        // The Python rankers one after another on one thread that keeps its Python thread
        // state ([`ranker::on_python_thread`]): parallel threads of Python calls would only
        // pass the GIL back and forth.
        let python = |work: &mut (dyn FnMut() + Send)| ranker::on_python_thread(work);
        let one_thread = OneThread {
            runs: (0..policies.len())
                .filter(|&i| is_python(&policies[i]))
                .collect(),
            within: &python,
        };
        let ran = run_all_listing(
            &plan,
            policies.len(),
            &lanes,
            Some(one_thread),
            parts,
            |i, parts, progress| plan.run_into(parts, (i, &policies[i]), progress),
        )?;
        let runs = (ran.into_iter().zip(policies)).map(|((result, wall_s), policy)| {
            let stats = RunStats::new(&policy.name, result.events, wall_s);
            (result, stats)
        });
        progress.finish()?;
        let (results, stats): (Vec<_>, Vec<_>) = runs.unzip();
        Ok(Replayed {
            summary: plan.summary(results)?,
            stats,
            notes,
        })
    })
}

/// What a replay takes from the site's Slurm configuration where the call leaves it out, as
/// `--slurm-conf` does: Slurm's own fairshare policy's settings, and a Slurm dump's machines
/// and billing.
struct SiteReplay {
    /// The policies, Slurm's own fairshare with the site's settings.
    policies: Vec<PolicySpec>,
    /// Where the capacity comes from.
    capacity: CapacitySource,
    /// The trace, billed as the site bills it.
    spec: TraceSpec,
    /// A sentence on each value taken.
    notes: Vec<String>,
}

/// The [`SiteReplay`] of `cluster`'s `slurm_conf` for `trace` and `policies` (with the
/// controller's `log`, which places Fair Tree's recomputations): the policies and billing of
/// the lab's [`SiteDefaults`], and the site's machines.
fn site_replay(
    cluster: &ClusterOptions,
    trace: &TraceOptions,
    policies: &[PolicySpec],
    log: Option<&ControllerLog>,
) -> Result<SiteReplay, Failure> {
    let site = cluster.site(&trace.billing)?;
    let dump = is_slurm_dump(trace)?;
    let policies = policies.to_vec();
    let defaults = match &site {
        Some((setup, path)) => {
            let billed = dump.then_some((path.as_path(), &trace.billing));
            (setup.site_defaults("slurm_conf", policies, log, billed))
                .map_err(|e| format!("policies: {e}"))?
        }
        None => SiteDefaults::as_given(policies),
    };
    let mut notes = defaults.notes;
    let (capacity, note) = cluster.capacity(site.as_ref().filter(|_| dump))?;
    notes.extend(note);
    let spec = match defaults.billing {
        Some((billing, note)) => {
            notes.push(note);
            trace_spec(&TraceOptions {
                billing,
                ..trace.clone()
            })?
        }
        None => trace_spec(trace)?,
    };
    Ok(SiteReplay {
        policies: defaults.policies,
        capacity,
        spec,
        notes,
    })
}

/// Whether the trace is a Slurm dump, as `format` says or its first file shows: the site's
/// Slurm configuration stands for its machines and bills its jobs only then.
fn is_slurm_dump(trace: &TraceOptions) -> Result<bool, Failure> {
    let format = (trace.format.as_deref())
        .map(|format| named::<Format>("format", format))
        .transpose()?;
    let first = trace.paths.first().map(PathBuf::as_path);
    Ok(site_defaults::is_slurm_dump(format, first))
}

/// Whether a policy is a Python ranker: the only policies the bridge plugs in.
fn is_python(policy: &PolicySpec) -> bool {
    policy.factory.is_some()
}
