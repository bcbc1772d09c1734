//! What `replay` and `sweep` share: the trace and cluster options, the first pass that measures
//! a trace (its users, its span, its mean demand R), and running one policy over it.

use anyhow::{bail, Context, Result};
use fairshare_core::alloc::tasks::Blocking;
use fairshare_core::model::{Task, Time};
use fairshare_sim::cluster::{self, Capacity, ClusterConfig, Load, PolicyResult, Stop};
use fairshare_sim::policy::PolicySpec;
use fairshare_sim::summary::{ReadStats, Setting};
use fairshare_trace::swf::{CpuField, MemoryField, SwfOptions};
use fairshare_trace::{Format, ReadOptions, TaskSource};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

/// Where the tasks come from.
#[derive(clap::Args, Clone)]
pub struct TraceArgs {
    /// Trace files, read in the order given (for Google, every task_events part in order);
    /// `-` reads the trace from standard input.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// Trace format; detected from the file names and contents when omitted.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Skip malformed records (they are counted, with the reason) instead of stopping at the
    /// first one.
    #[arg(long)]
    pub lenient: bool,
    /// SWF: which processor count makes the CPU demand (auto: requested when present, else
    /// allocated).
    #[arg(long, value_enum, default_value = "auto")]
    pub swf_cpus: SwfCpus,
    /// SWF: which memory field makes the memory demand (auto: requested when present, else
    /// used; none: CPUs only).
    #[arg(long, value_enum, default_value = "auto")]
    pub swf_memory: SwfMemory,
}

/// Trace formats on the command line.
#[derive(clap::ValueEnum, Clone, Copy)]
pub enum FormatArg {
    /// Standard Workload Format (18 fields, or the 21-field Alea extension), plain or gzip.
    Swf,
    /// Google cluster trace 2011 task_events parts.
    Google,
    /// Alibaba GPU 2023 pod list.
    Alibaba,
}

/// SWF processor fields on the command line.
#[derive(clap::ValueEnum, Clone, Copy)]
pub enum SwfCpus {
    /// Requested when present, else allocated.
    Auto,
    /// Field 8, requested processors.
    Requested,
    /// Field 5, allocated processors.
    Allocated,
}

/// SWF memory fields on the command line.
#[derive(clap::ValueEnum, Clone, Copy)]
pub enum SwfMemory {
    /// Requested when present, else used.
    Auto,
    /// Field 10, requested memory.
    Requested,
    /// Field 7, used memory.
    Used,
    /// No memory resource.
    None,
}

/// How the simulated cluster is set up and when runs end.
#[derive(clap::Args, Clone)]
pub struct ClusterArgs {
    /// Use the machines listed in FILE (SWF `.machines`, Alibaba node list) instead of a pool.
    #[arg(long, value_name = "FILE")]
    pub machines: Option<PathBuf>,
    /// Run until this long after the first arrival (e.g. `90m`, `6h`, `3600`); default: the
    /// trace's last event, as the SDRF paper counts completions.
    #[arg(long, value_parser = parse_duration, conflicts_with = "drain", allow_negative_numbers = true)]
    pub horizon: Option<u64>,
    /// Run until every task has finished (the SDRF paper's waiting times).
    #[arg(long)]
    pub drain: bool,
    /// What a pass does when the chosen user's next task does not fit: stop (head-of-line, the
    /// paper's rule) or skip that user and try the next.
    #[arg(long, value_enum, default_value = "head-of-line")]
    pub rule: RuleArg,
}

/// Blocking rules on the command line.
#[derive(clap::ValueEnum, Clone, Copy)]
pub enum RuleArg {
    /// Stop the pass.
    HeadOfLine,
    /// Skip the user for the rest of the pass.
    Skip,
}

/// A duration in seconds, or with a unit (`90s`, `15m`, `6h`, `2d`), as microseconds; at most
/// [`Time::LONGEST_INPUT_S`] (about 317 years), so that the end of a run is a time the engine
/// can hold.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let seconds = match text.parse::<f64>() {
        Ok(s) => s,
        Err(_) => humantime::parse_duration(text)
            .map_err(|e| format!("{e}: expected e.g. 3600, 90m, 6h or 2d"))?
            .as_secs_f64(),
    };
    match Time::from_input_secs(seconds) {
        Some(t) => Ok(t.as_micros()),
        None => Err(format!(
            "expected a duration from 0 to {:e} s (about 317 years), found {text:?}",
            Time::LONGEST_INPUT_S
        )),
    }
}

/// A trace measured by a first pass.
pub struct Workload {
    /// How to open it again.
    pub trace: TraceArgs,
    /// Resource names and units.
    pub resources: Vec<String>,
    /// Units of each resource.
    pub units: Vec<String>,
    /// User names, in order of first appearance.
    pub users: Vec<String>,
    /// What the reader saw.
    pub input: ReadStats,
    /// R, first arrival and last event.
    pub load: Load,
    /// The format as detected.
    pub format: Format,
    /// The trace's resources that tasks request (indices into the reader's resources): the
    /// resources of the replay.
    keep: Vec<usize>,
    /// The tasks themselves, when the trace is small enough to keep (see [`KEEP_AT_MOST`]).
    kept: Option<Vec<Task>>,
    /// The trace as the user named it (`-` for standard input).
    names: Vec<String>,
    /// Standard input saved to a file, so that it can be read more than once.
    _stdin: Option<tempfile::TempPath>,
}

/// The most machines a run places tasks on (one capacity vector each).
pub const MOST_MACHINES: u64 = 1_000_000;

/// Traces of at most this many tasks are kept in memory after the first pass (≈ 70 MiB), so
/// each run replays them without parsing again; larger traces are streamed from disk each time.
pub const KEEP_AT_MOST: usize = 1_000_000;

impl TraceArgs {
    fn options(&self) -> ReadOptions {
        let cpus = match self.swf_cpus {
            SwfCpus::Auto => CpuField::Auto,
            SwfCpus::Requested => CpuField::Requested,
            SwfCpus::Allocated => CpuField::Allocated,
        };
        let memory = match self.swf_memory {
            SwfMemory::Auto => MemoryField::Auto,
            SwfMemory::Requested => MemoryField::Requested,
            SwfMemory::Used => MemoryField::Used,
            SwfMemory::None => MemoryField::Omit,
        };
        let swf = SwfOptions {
            cpus,
            memory,
            ..SwfOptions::default()
        };
        ReadOptions {
            lenient: self.lenient,
            swf,
        }
    }

    fn format(&self) -> Option<Format> {
        self.format.map(|f| match f {
            FormatArg::Swf => Format::Swf,
            FormatArg::Google => Format::Google,
            FormatArg::Alibaba => Format::Alibaba,
        })
    }

    /// Opens the trace for one streaming pass.
    pub fn open(&self) -> Result<Box<dyn TaskSource>> {
        Ok(fairshare_trace::open(
            &self.traces,
            self.format(),
            &self.options(),
        )?)
    }

    /// Saves standard input to a temporary file when a trace is `-`, and names that file
    /// instead: a trace is read more than once.
    fn with_stdin(&self) -> Result<(TraceArgs, Option<tempfile::TempPath>)> {
        let mut trace = self.clone();
        let stdin = trace.traces.iter().filter(|p| p.as_os_str() == "-").count();
        if stdin == 0 {
            return Ok((trace, None));
        }
        if stdin > 1 {
            bail!("standard input (-) can be given once");
        }
        let mut file = tempfile::NamedTempFile::new().context("saving standard input")?;
        std::io::copy(&mut std::io::stdin().lock(), &mut file).context("saving standard input")?;
        let path = file.into_temp_path();
        for p in &mut trace.traces {
            if p.as_os_str() == "-" {
                *p = path.to_path_buf();
            }
        }
        Ok((trace, Some(path)))
    }

    /// The first pass: reads the whole trace once to learn its users, span and mean demand.
    pub fn scan(&self) -> Result<Workload> {
        let (trace, stdin) = self.with_stdin()?;
        let mut source = trace.open()?;
        let mut load = Load::new(source.resources().len());
        let mut kept = Some(Vec::new());
        let bar = spinner("reading trace");
        for task in source.by_ref() {
            let task = task.map_err(|e| self.explain(e))?;
            load.add(
                task.submit,
                task.start.unwrap_or(task.submit),
                task.runtime,
                &task.demand,
            );
            kept = kept
                .filter(|k: &Vec<Task>| k.len() < KEEP_AT_MOST)
                .map(|mut k| {
                    k.push(task);
                    k
                });
            bar.inc(1);
        }
        bar.finish_and_clear();
        let names: Vec<String> = self
            .traces
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let stats = source.stats();
        if stats.tasks_yielded == 0 {
            bail!(
                "{}: no task to replay: {} found, {}",
                names.join(", "),
                stats.tasks_found,
                skipped_in_words(&stats.tasks_skipped)
            );
        }
        let keep = load.requested();
        let resources = source.resources();
        let unused: Vec<String> = (0..resources.len())
            .filter(|r| !keep.contains(r))
            .map(|r| resources[r].clone())
            .collect();
        if keep.is_empty() {
            bail!("{}: no task requests any resource", names.join(", "));
        }
        for note in &stats.notes {
            eprintln!("note: {note}");
        }
        if !unused.is_empty() {
            eprintln!(
                "note: no task requests {}, so the replay leaves it out",
                unused.join(" or ")
            );
        }
        if stats.duplicate_ids > 0 {
            eprintln!(
                "note: {} records repeat the id of an earlier record; each is replayed as a task of its own",
                stats.duplicate_ids
            );
        }
        let input = ReadStats {
            resources_unused: unused,
            ..stats.clone()
        };
        let format = match self.format() {
            Some(f) => f,
            None => Format::detect(&trace.traces[0])?,
        };
        if let Some(kept) = &mut kept {
            kept.iter_mut()
                .for_each(|a| a.demand = project(&a.demand, &keep));
        }
        Ok(Workload {
            resources: project(resources, &keep),
            units: project(source.units(), &keep),
            users: source.users().to_vec(),
            input,
            load: load.project(&keep),
            format,
            keep,
            kept,
            names,
            trace,
            _stdin: stdin,
        })
    }

    /// A reader's error, with the way past it when `--lenient` would skip the record.
    fn explain(&self, error: fairshare_trace::TraceError) -> anyhow::Error {
        match error.skip_reason() {
            Some(_) if !self.lenient => {
                anyhow::anyhow!("{error} (--lenient skips such records and counts them)")
            }
            _ => error.into(),
        }
    }
}

/// The entries of `values` at the indices `keep`.
fn project<T: Clone>(values: &[T], keep: &[usize]) -> Vec<T> {
    keep.iter().map(|&r| values[r].clone()).collect()
}

/// Skip counts as words: `12 skipped (no runtime: 10, zero request: 2)`.
fn skipped_in_words(skipped: &std::collections::BTreeMap<String, u64>) -> String {
    if skipped.is_empty() {
        return "none skipped".into();
    }
    let total: u64 = skipped.values().sum();
    let reasons: Vec<String> = skipped.iter().map(|(r, n)| format!("{r}: {n}")).collect();
    format!("{total} skipped ({})", reasons.join(", "))
}

impl Workload {
    /// When simulations start.
    pub fn origin(&self) -> Time {
        self.load.first_submit().unwrap_or(Time::ZERO)
    }

    /// Seconds from the first arrival to the last event.
    pub fn span_s(&self) -> f64 {
        let last = self
            .load
            .last_event()
            .unwrap_or(self.origin())
            .max(self.origin());
        (last.as_micros() - self.origin().as_micros()) as f64 / 1e6
    }

    /// The cluster's capacity: machines from a file, or a pool of `fraction` × R.
    pub fn capacity(&self, args: &ClusterArgs, fraction: f64) -> Result<Capacity> {
        if let Some(path) = &args.machines {
            return self.machines(path);
        }
        let pool: Vec<f64> = self
            .load
            .mean_demand()
            .iter()
            .map(|r| r * fraction)
            .collect();
        if let Some(r) = pool.iter().position(|c| !(c.is_finite() && *c > 0.0)) {
            let name = &self.resources[r];
            bail!(
                "the trace's mean request R of {name} is {}, so {fraction} × R gives no usable capacity; give one with --capacity",
                pool[r] / fraction
            );
        }
        Ok(Capacity::Pool(pool))
    }

    /// The machines listed in `path`, over the resources of the replay.
    fn machines(&self, path: &std::path::Path) -> Result<Capacity> {
        let shown = path.display();
        let kinds = fairshare_trace::read_machines(path, self.format)?;
        let total = kinds.nodes();
        if total == 0 {
            bail!("{shown}: lists no machines");
        }
        if total > MOST_MACHINES {
            bail!("{shown}: {total} machines; at most {MOST_MACHINES} can be simulated");
        }
        let read = self.keep.iter().max().map_or(0, |r| r + 1);
        let mut machines = Vec::new();
        for kind in kinds.types {
            // Machine lists give resources in the reader's order (CPU first); a trace read
            // with fewer resources (e.g. SWF without memory) uses the leading ones.
            if kind.capacity.len() < read {
                bail!(
                    "{shown}: machines list {} resources, the trace {} ({})",
                    kind.capacity.len(),
                    self.resources.len(),
                    self.resources.join(", ")
                );
            }
            let capacity = project(&kind.capacity, &self.keep);
            machines.extend(std::iter::repeat_n(capacity, kind.count as usize));
        }
        for (r, name) in self.resources.iter().enumerate() {
            if machines.iter().all(|m| m[r] <= 0.0) {
                bail!("{shown}: no machine has any {name}, yet the trace's tasks request it");
            }
        }
        Ok(Capacity::Machines(machines))
    }

    /// A pool written as `name=amount,...`, naming every resource of the replay once
    /// (resources of the trace that no task requests may be named, and are left out).
    pub fn pool(&self, spec: &str) -> Result<Capacity> {
        let mut pool = vec![None; self.resources.len()];
        for part in spec.split(',') {
            let (name, amount) = part
                .split_once('=')
                .with_context(|| format!("--capacity: expected NAME=AMOUNT, found {part:?}"))?;
            let name = name.trim();
            let amount: f64 = amount.trim().parse().with_context(|| {
                format!("--capacity: {name}: expected a number, found {amount:?}")
            })?;
            if self.input.resources_unused.iter().any(|u| u == name) && amount >= 0.0 {
                continue;
            }
            let Some(r) = self.resources.iter().position(|n| n == name) else {
                bail!(
                    "--capacity: unknown resource {name:?}; the replay has {}",
                    self.resources.join(", ")
                );
            };
            if !(amount.is_finite() && amount > 0.0) {
                bail!("--capacity: {name} must be a positive amount, found {amount}");
            }
            pool[r] = Some(amount);
        }
        match pool.iter().position(Option::is_none) {
            Some(r) => bail!("--capacity: give an amount for {} too", self.resources[r]),
            None => Ok(Capacity::Pool(pool.into_iter().flatten().collect())),
        }
    }

    /// When runs end: `--drain`, `--horizon`, or the trace's last event.
    fn stop(&self, args: &ClusterArgs) -> Stop {
        match (args.drain, args.horizon) {
            (true, _) => Stop::Drain,
            (false, Some(h)) => Stop::Horizon(self.origin().plus_micros(h)),
            (false, None) => Stop::Horizon(self.load.last_event().unwrap_or(self.origin())),
        }
    }

    /// The engine's configuration for one policy at one capacity.
    pub fn config(
        &self,
        args: &ClusterArgs,
        policy: PolicySpec,
        capacity: Capacity,
    ) -> ClusterConfig {
        let stop = self.stop(args);
        ClusterConfig {
            policy,
            capacity,
            resources: self.resources.clone(),
            users: self.users.clone(),
            blocking: match args.rule {
                RuleArg::HeadOfLine => Blocking::HeadOfLine,
                RuleArg::Skip => Blocking::Skip,
            },
            stop,
            origin: self.origin(),
            sample_every: (self.span_s() / 200.0).max(1.0),
            top_users: fairshare_report::TOP_USERS,
        }
    }

    /// What every run of this workload shares, for the summaries.
    pub fn setting(
        &self,
        args: &ClusterArgs,
        capacity: &Capacity,
        fraction: Option<f64>,
    ) -> Setting {
        let (pool, machines) = match capacity {
            Capacity::Pool(p) => (p.clone(), None),
            Capacity::Machines(m) => {
                let mut total = vec![0.0; self.resources.len()];
                m.iter()
                    .for_each(|c| total.iter_mut().zip(c).for_each(|(t, v)| *t += v));
                (total, Some(m.len()))
            }
        };
        Setting {
            trace: self.names.clone(),
            format: self.format.to_string(),
            resources: self.resources.clone(),
            units: self.units.clone(),
            mean_demand: self.load.mean_demand(),
            capacity: pool,
            capacity_fraction: fraction,
            machines,
            users: self.users.len(),
            span_s: self.span_s(),
            horizon_s: match self.stop(args) {
                Stop::Drain => None,
                Stop::Horizon(h) => {
                    Some((h.as_micros().saturating_sub(self.origin().as_micros())) as f64 / 1e6)
                }
            },
            rule: match args.rule {
                RuleArg::HeadOfLine => "head-of-line".into(),
                RuleArg::Skip => "skip".into(),
            },
        }
    }

    /// Replays the trace through the engine under `config`: from memory when it was kept,
    /// otherwise streamed from disk once more.
    pub fn run(&self, config: &ClusterConfig, bar: &ProgressBar) -> Result<PolicyResult> {
        let origin = self.origin().as_micros();
        let progress = |t: Time| bar.set_position(t.as_micros().saturating_sub(origin) / 1_000_000);
        let result = match &self.kept {
            Some(kept) => cluster::run(
                config,
                kept.iter().cloned().map(Ok::<_, anyhow::Error>),
                progress,
            )
            .map_err(|e| anyhow::anyhow!("{e}")),
            None => {
                let arrivals = self.trace.open()?.map(|task| {
                    task.map(|t| Task {
                        demand: project(&t.demand, &self.keep),
                        ..t
                    })
                });
                cluster::run(config, arrivals, progress).map_err(|e| anyhow::anyhow!("{e}"))
            }
        }
        .with_context(|| format!("replaying under {}", config.policy))?;
        bar.finish_and_clear();
        Ok(result)
    }
}

/// A spinner counting tasks read (hidden when standard error is not a terminal).
fn spinner(message: &str) -> ProgressBar {
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
