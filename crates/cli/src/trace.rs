//! What `replay` and `sweep` share: the trace and cluster options, the first pass that measures
//! a trace (its users, its span, its mean demand R), and running one policy over it.

use crate::choice;
use anyhow::{bail, Context, Result};
use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::policy::PolicySpec;
use fairshare_lab::input::parse_duration;
use fairshare_lab::runs::{Lane, Lanes};
use fairshare_lab::site_defaults::{is_slurm_dump, SiteDefaults};
use fairshare_lab::slurm_conf::{check_log_format, slurm_setup, BillingFiles, SlurmSetup};
use fairshare_lab::{MeasuredTrace, Replay, StopRule, TraceSpec};
use fairshare_sim::cluster::{Overrun, PlacementEntry, SchedulerEntry, SlurmParameters};
use fairshare_trace::billing::Billing;
use fairshare_trace::slurmctld_log::{read_controller_log, ControllerLog};
use fairshare_trace::swf::{CpuField, MemoryField, SwfOptions};
use fairshare_trace::{Format, ReadOptions};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// Where the tasks come from.
#[derive(clap::Args, Clone)]
pub struct TraceArgs {
    /// Trace files, read in the order given (for Google, every task_events part in order);
    /// `-` reads the trace from standard input.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// Trace format; detected from the file names and contents when omitted.
    #[arg(long, value_parser = choice::<Format>())]
    pub format: Option<Format>,
    /// Skip malformed records (they are counted, with the reason) instead of stopping at the
    /// first one.
    #[arg(long)]
    pub lenient: bool,
    /// SWF: which processor count makes the CPU demand (auto: allocated, field 5, when
    /// present, else requested, field 8, as the Parallel Workloads Archive advises).
    #[arg(long, value_parser = choice::<CpuField>(), default_value = "auto")]
    pub swf_cpus: CpuField,
    /// SWF: which memory field makes the memory demand (auto: requested when present, else
    /// used; none: CPUs only).
    #[arg(long, value_parser = choice::<MemoryField>(), default_value = "auto")]
    pub swf_memory: MemoryField,
    /// Slurm dumps: the partitions' TRESBillingWeights, from the saved output of `scontrol
    /// --oneliner show partition` (or `scontrol show partition`), so that each job's billing
    /// (the `billing` usage metric) is worked out as Slurm does; without it, `billing=` of
    /// AllocTRES (rounded down by Slurm), else the job's CPUs.
    #[arg(long, value_name = "FILE")]
    pub partitions: Option<PathBuf>,
    /// Slurm dumps: each QOS's UsageFactor and Priority, from the saved output of `sacctmgr -P
    /// -n show qos format=Name,UsageFactor,Priority` (the Priority column may be left out); a
    /// job's billing is multiplied by its QOS's usage factor (the dump's `QOS` column), and
    /// under `--scheduler slurm` with PriorityWeightQOS its priority gains its QOS's priority
    /// over the highest.
    #[arg(long, value_name = "FILE")]
    pub qos: Option<PathBuf>,
    /// Slurm dumps: bill as under Slurm's PriorityFlags=MAX_TRES (the largest of the weighted
    /// CPUs, memory, nodes and GRES, plus the other weighted TRES).
    #[arg(long, requires = "partitions")]
    pub max_tres: bool,
    /// Slurm dumps, with `--scheduler slurm`: `slurmctld`'s log over the dump's span (as
    /// Slurm writes it by default: LogTimeFormat=iso8601_ms, SlurmctldDebug=info), which
    /// says to the millisecond when each job was submitted, started and ended, and when the
    /// controller's background loop ran the main scheduler. A pass an event asks for then
    /// runs at the loop's first turn after the event, as in Slurm, instead of at the next
    /// whole second, and the backfill at its logged cycles; what a dump of whole seconds
    /// cannot tell is read instead of assumed. A log that begins before the controller
    /// started (`Running as primary controller`) also times the loop's passes down the whole
    /// queue, every `sched_interval` from then. A rotated, gzip'd log is read as it is.
    #[arg(long, value_name = "FILE")]
    pub slurmctld_log: Option<PathBuf>,
    /// `--slurmctld-log` once read (the reader and the scheduler both need it).
    #[arg(skip)]
    controller_log: OnceLock<Arc<ControllerLog>>,
}

/// How the simulated cluster is set up and when runs end.
#[derive(clap::Args, Clone)]
pub struct ClusterArgs {
    /// Use the machines listed in FILE instead of a pool: an SWF `.machines` file, an Alibaba
    /// node list, a TOML catalogue (GPUs, scratch, SPEC and properties, for SWF and sacct
    /// logs), or for a sacct dump the site's Slurm nodes and partitions (a `slurm.conf`, or
    /// the saved output of `scontrol show node` and `scontrol show partition`), on which each
    /// job runs only on its partition's nodes.
    #[arg(long, value_name = "FILE")]
    pub machines: Option<PathBuf>,
    /// Run until this long after the first arrival (e.g. `90m`, `6h`, `3600`); default: the
    /// trace's last event, as the SDRF paper counts completions.
    #[arg(long, value_parser = parse_duration, conflicts_with = "drain", allow_hyphen_values = true)]
    pub horizon: Option<u64>,
    /// Run until every task has finished (the SDRF paper's waiting times).
    #[arg(long)]
    pub drain: bool,
    /// What a pass does when the chosen user's next task does not fit: stop (head-of-line, the
    /// paper's rule) or skip that user and try the next (with `--scheduler fill`).
    #[arg(long, value_parser = choice::<FillRule>(), default_value = "head-of-line")]
    pub rule: FillRule,
    /// What may start in a scheduling pass: progressive filling in the policy's order (the
    /// SDRF paper's simulator), or EASY or conservative backfilling as batch systems run it,
    /// planned with the jobs' requested walltimes.
    #[arg(long, value_parser = choice::<SchedulerEntry>(), default_value = "fill")]
    pub scheduler: SchedulerEntry,
    /// With `--scheduler slurm`: the site's Slurm configuration, a `slurm.conf` or the saved
    /// output of `scontrol show config` (with `show node` and `show partition`). Its
    /// SchedulerType and SchedulerParameters (bf_interval, bf_window, bf_max_job_test,
    /// bf_max_job_user, bf_resolution, default_queue_depth, batch_sched_delay) set the
    /// schedulers; its multifactor weights (fairshare, age, size, partition, QOS with `--qos`,
    /// TRES), PriorityMaxAge, PriorityFavorSmall, PriorityCalcPeriod and OverTimeLimit, and
    /// its partitions' PriorityTier and PriorityJobFactor, the order of jobs; a partition's
    /// OverSubscribe=EXCLUSIVE gives its jobs whole nodes; what it sets that the model leaves
    /// out is named in a note. What the command leaves out comes from it, each in a note: a
    /// Slurm dump's machines (its nodes and partitions) and billing (TRESBillingWeights), the
    /// placement (slurm), the cluster of a sacctmgr output that lists several (ClusterName),
    /// and Slurm's own `fairshare` policy's half-life, period (whole minutes, rounded up, as
    /// Slurm reads them), billing units and function (NO_FAIR_TREE: classic), unless the
    /// policy's text sets them. Without it, Slurm 22.05's defaults.
    #[arg(long, value_name = "FILE")]
    pub slurm_conf: Option<PathBuf>,
    /// With `--scheduler slurm` and a policy other than Slurm's own fairshare: the weight the
    /// Slurm adapter writes that policy's site factors with (its `weight`; 100000 by default),
    /// which matters beside the other priority terms of `--slurm-conf`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i32::MAX as i64))]
    pub site_weight: Option<u32>,
    /// With `--scheduler slurm` and a policy other than Slurm's own fairshare: how often the
    /// Slurm adapter writes that policy's site factors (its `interval_s`, as `5s` or `1m`; 60 s
    /// by default), optionally `@` how far past each multiple of it since the epoch its passes
    /// fall (`5s@4.4s`: the phase of the watcher's start, from the times of its log's passes):
    /// the policy's order of starts is played anew at each pass, whatever PriorityCalcPeriod
    /// says.
    #[arg(long, value_name = "DURATION")]
    pub site_interval: Option<String>,
    /// With `--scheduler slurm`: draw, with this seed, which seconds' submissions came before
    /// `slurmctld`'s background loop's turn in their second (half of them), which a log of
    /// whole seconds cannot tell: before, the main scheduler may start them in that second;
    /// after, not before the next. Without it, a submission is served at the next second, or
    /// by a pass already due in its own (the model docs/slurm-prediction.md measures). Replays
    /// with a few seeds show how far what the log cannot tell moves each prediction.
    #[arg(long, value_name = "SEED")]
    pub turn_seed: Option<u64>,
    /// Which nodes a job starts on, when the capacity is machines; default: `slurm` under
    /// `--scheduler slurm` (its node selection), `first` otherwise.
    #[arg(long, value_parser = choice::<PlacementEntry>())]
    pub placement: Option<PlacementEntry>,
    /// What happens to a job that ran longer than the walltime it asked for: killed at its
    /// request, as batch systems do (the results count them), or run in full with its request
    /// raised to its runtime.
    #[arg(long, value_parser = choice::<Overrun>(), default_value = "kill")]
    pub overrun: Overrun,
    /// `--slurm-conf` once read (the policies, the machines, the billing and the scheduler
    /// all take from it).
    #[arg(skip)]
    setup: OnceLock<SlurmSetup>,
}

impl TraceArgs {
    fn options(&self) -> Result<ReadOptions> {
        Ok(ReadOptions {
            lenient: self.lenient,
            swf: SwfOptions {
                cpus: self.swf_cpus,
                memory: self.swf_memory,
                ..SwfOptions::default()
            },
            billing: self.billing()?,
            controller_log: self.controller_log()?,
        })
    }

    /// Bills the trace by `files` (the site's configuration's partitions).
    pub fn bill_by(&mut self, files: BillingFiles) {
        (self.partitions, self.max_tres) = (files.partitions, files.max_tres);
    }

    /// `--slurmctld-log`, read the first time it is asked for.
    pub fn controller_log(&self) -> Result<Option<Arc<ControllerLog>>> {
        let Some(path) = &self.slurmctld_log else {
            return Ok(None);
        };
        if let Some(log) = self.controller_log.get() {
            return Ok(Some(log.clone()));
        }
        let context = || format!("--slurmctld-log {}", path.display());
        let log = Arc::new(read_controller_log(path).with_context(context)?);
        Ok(Some(self.controller_log.get_or_init(|| log).clone()))
    }

    /// The files Slurm bills the dump's jobs by: `--partitions`, `--qos` and `--max-tres`.
    fn billing_files(&self) -> BillingFiles {
        BillingFiles {
            partitions: self.partitions.clone(),
            qos: self.qos.clone(),
            max_tres: self.max_tres,
            prefix: "--",
        }
    }

    /// How Slurm bills the dump's jobs.
    fn billing(&self) -> Result<Billing> {
        Ok(self.billing_files().billing()?)
    }

    /// Each QOS's priority from `--qos`, when given.
    pub fn qos_priorities(&self) -> Result<Option<BTreeMap<String, u32>>> {
        Ok(self.billing_files().qos_priorities()?)
    }

    /// The first pass over the trace (standard input saved to a file first, since a trace is
    /// read more than once), with a spinner and the reader's notes on standard error.
    pub fn scan(&self) -> Result<Scanned> {
        let (trace, stdin) = self.spec()?;
        let bar = spinner("reading trace");
        let measured = MeasuredTrace::scan(&trace, &mut |n| bar.set_position(n));
        bar.finish_and_clear();
        let measured = measured?;
        for note in measured.notes() {
            eprintln!("note: {note}");
        }
        Ok(Scanned {
            measured,
            _stdin: stdin,
        })
    }

    /// The trace as the library reads it, with standard input saved to a temporary file that
    /// lives as long as the returned path.
    pub fn spec(&self) -> Result<(TraceSpec, Option<tempfile::TempPath>)> {
        let (paths, stdin) = self.with_stdin()?;
        if self.slurmctld_log.is_some() {
            let format = match self.format {
                Some(format) => format,
                None => Format::detect(&paths[0])?,
            };
            check_log_format(format, ("--slurmctld-log", "--format sacct"))?;
        }
        let trace = TraceSpec {
            paths,
            shown: self
                .traces
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            format: self.format,
            options: self.options()?,
        };
        Ok((trace, stdin))
    }

    /// Whether the trace is a Slurm dump, as `--format` says or its first file shows (standard
    /// input is not looked at before it is read).
    pub fn is_slurm_dump(&self) -> bool {
        let first = self.traces.first().filter(|p| p.as_os_str() != "-");
        is_slurm_dump(self.format, first.map(PathBuf::as_path))
    }

    /// The trace's paths, standard input (`-`) saved to a temporary file that lives as long
    /// as the returned path.
    fn with_stdin(&self) -> Result<(Vec<PathBuf>, Option<tempfile::TempPath>)> {
        let mut paths = self.traces.clone();
        let stdin = paths.iter().filter(|p| p.as_os_str() == "-").count();
        if stdin == 0 {
            return Ok((paths, None));
        }
        if stdin > 1 {
            bail!("standard input (-) can be given once");
        }
        let mut file = tempfile::NamedTempFile::new().context("saving standard input")?;
        std::io::copy(&mut std::io::stdin().lock(), &mut file).context("saving standard input")?;
        let path = file.into_temp_path();
        for p in &mut paths {
            if p.as_os_str() == "-" {
                *p = path.to_path_buf();
            }
        }
        Ok((paths, Some(path)))
    }
}

/// A measured trace, with the saved standard input it may read from.
pub struct Scanned {
    /// The measured trace.
    pub measured: MeasuredTrace,
    /// Standard input saved to a file, removed when the measured trace is done with.
    _stdin: Option<tempfile::TempPath>,
}

impl std::ops::Deref for Scanned {
    type Target = MeasuredTrace;

    fn deref(&self) -> &MeasuredTrace {
        &self.measured
    }
}

impl ClusterArgs {
    /// How every run is set up, with the QOS priorities of `trace`'s `--qos`; notes on what
    /// `--slurm-conf` sets that is not modelled go to standard error.
    pub fn replay(&self, trace: &TraceArgs) -> Result<Replay> {
        let spelled = ("--site-weight", "--scheduler slurm");
        let setup = self.slurm_setup(trace)?;
        for note in &setup.notes {
            eprintln!("note: --slurm-conf: {note}");
        }
        let slurm = setup
            .with_site_weight(self.site_weight, self.scheduler, spelled)?
            .with_site_interval(
                self.site_interval.as_deref(),
                self.scheduler,
                ("--site-interval", spelled.1),
            )?
            .with_turn_seed(self.turn_seed, self.scheduler, ("--turn-seed", spelled.1))?
            .with_loop_turns(
                trace.controller_log()?.as_deref(),
                self.scheduler,
                ("--slurmctld-log", spelled.1),
            )?;
        if let Some(turns) = &slurm.parameters.loop_turns {
            let cycles = (slurm.parameters.bf_cycles.as_ref()).map_or(0, |cycles| cycles.shown());
            eprintln!("note: --slurmctld-log: the log shows the main scheduler starting jobs at {} turns of the background loop and the backfill at {cycles} of its cycles; the others are taken as evenly spaced between them", turns.shown());
            eprintln!(
                "note: --slurmctld-log: {}",
                whole_queue_note(&slurm.parameters)
            );
        }
        Ok(Replay {
            stop: match (self.drain, self.horizon) {
                (true, _) => StopRule::Drain,
                (false, Some(h)) => StopRule::After(h),
                (false, None) => StopRule::LastEvent,
            },
            rule: self.rule,
            scheduler: self.scheduler,
            slurm: slurm.parameters,
            partitions: slurm.partitions,
            qos_factors: slurm.qos_factors,
            placement: self.placement(),
            overrun: self.overrun,
            cluster: slurm.cluster_name,
            ..Replay::default()
        })
    }

    /// `--placement`, or its default for the scheduler.
    fn placement(&self) -> PlacementEntry {
        let slurm = self.scheduler == SchedulerEntry::SLURM;
        (self.placement).unwrap_or(if slurm {
            PlacementEntry::SLURM
        } else {
            PlacementEntry::FIRST
        })
    }

    /// What the site's Slurm of `--slurm-conf` sets for `policies` (Slurm's defaults without
    /// one) on `trace`: each policy as it computes its own fairshare factor, where they leave a
    /// parameter out ([`SlurmSetup::site_policy`]), and the billing of a Slurm dump by its
    /// partitions.
    pub fn site_defaults(
        &self,
        trace: &TraceArgs,
        policies: Vec<PolicySpec>,
    ) -> Result<SiteDefaults> {
        let setup = self.slurm_setup(trace)?;
        let log = trace.controller_log()?;
        let files = trace.billing_files();
        let billed = (self.slurm_conf.as_deref().filter(|_| trace.is_slurm_dump()))
            .map(|path| (path, &files));
        let site = setup.site_defaults("--slurm-conf", policies, log.as_deref(), billed);
        site.context("--policy")
    }

    /// `--slurm-conf`'s setup and path, when given.
    pub fn site(&self, trace: &TraceArgs) -> Result<Option<(SlurmSetup, PathBuf)>> {
        let Some(path) = &self.slurm_conf else {
            return Ok(None);
        };
        Ok(Some((self.slurm_setup(trace)?, path.clone())))
    }

    /// Slurm's scheduling parameters, partitions and QOS factors, from `--slurm-conf` (and
    /// `trace`'s `--qos`) when given, read the first time they are asked for; its notes are
    /// for the caller to print.
    fn slurm_setup(&self, trace: &TraceArgs) -> Result<SlurmSetup> {
        let Some(path) = &self.slurm_conf else {
            return Ok(SlurmSetup::default());
        };
        if let Some(setup) = self.setup.get() {
            return Ok(setup.clone());
        }
        if self.scheduler != SchedulerEntry::SLURM {
            bail!("--slurm-conf sets --scheduler slurm's parameters; add --scheduler slurm");
        }
        let context = || format!("--slurm-conf {}", path.display());
        let text = std::fs::read_to_string(path).with_context(context)?;
        let setup = slurm_setup(&text).with_context(context)?;
        let setup = setup.with_qos(trace.qos_priorities()?.as_ref());
        Ok(self.setup.get_or_init(|| setup).clone())
    }
}

/// What `--slurmctld-log` says of the main scheduler's passes down the whole queue: when the
/// controller's background loop began, which times them, or that the log does not say.
fn whole_queue_note(parameters: &SlurmParameters) -> String {
    let every = parameters.sched_interval_s;
    match parameters.loop_starts.as_slice() {
        [] => format!("the log does not begin before the controller started (`Running as primary controller`), so the background loop's passes down the whole queue every sched_interval ({every} s) are left out"),
        starts => {
            let last = starts[starts.len() - 1];
            let at = std::time::UNIX_EPOCH + std::time::Duration::from_micros(last.as_micros());
            let at = humantime::format_rfc3339_millis(at);
            let times = match starts.len() {
                1 => String::new(),
                n => format!(" ({n} starts, the last)"),
            };
            format!("the controller's background loop began at {at}{times}, once the priority plugin had started: it runs the main scheduler down the whole queue every sched_interval ({every} s) from then")
        }
    }
}

/// A spinner counting tasks read (hidden when standard error is not a terminal).
pub fn spinner(message: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner().with_message(message.to_owned());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg}: {human_pos} tasks ({per_sec})")
            .expect("valid template"),
    );
    bar
}

/// A bar over simulated seconds, labelled with what runs.
pub fn sim_bar(label: &str, span_s: f64) -> ProgressBar {
    let bar = ProgressBar::new(span_s.ceil() as u64).with_message(label.to_owned());
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>28} [{bar:30}] {percent:>3}% simulated, {elapsed} elapsed",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar
}

/// A progress bar per run under one [`MultiProgress`], each opened as its run starts (a
/// [`sim_bar`] of `span_s` seconds, labelled with the run's name): the lanes of
/// [`run_all`](fairshare_lab::runs::run_all).
pub struct SimBars<'a> {
    /// Where the bars are drawn.
    pub multi: MultiProgress,
    /// Each run's name.
    pub names: Vec<&'a str>,
    /// How long each run simulates, in seconds.
    pub span_s: f64,
}

impl Lanes for SimBars<'_> {
    fn open(&self, i: usize) -> Box<dyn Lane + '_> {
        Box::new(BarLane(self.multi.add(sim_bar(self.names[i], self.span_s))))
    }
}

/// One run's bar.
struct BarLane(ProgressBar);

impl Lane for BarLane {
    fn at(&mut self, at: u64) {
        self.0.set_position(at);
    }

    fn done(self: Box<Self>) {
        self.0.finish_and_clear();
    }
}

/// Runs counted on one bar, each when it ends.
pub struct CountedRuns(pub ProgressBar);

impl Lanes for CountedRuns {
    fn open(&self, _: usize) -> Box<dyn Lane + '_> {
        Box::new(Counted(&self.0))
    }
}

/// A run of [`CountedRuns`].
struct Counted<'a>(&'a ProgressBar);

impl Lane for Counted<'_> {
    fn at(&mut self, _: u64) {}

    fn done(self: Box<Self>) {
        self.0.inc(1);
    }
}
