//! `fairshare slurm draw`: a test workload drawn from a real trace, as a plan of submissions a
//! script feeds to `sbatch` (scripts/slurm-experiment.sh), so that experiments on a test Slurm
//! run a site's jobs rather than a made-up pattern.

use crate::trace::TraceArgs;
use anyhow::{Context, Result};
use fairshare_lab::draw::{draw, Draw, Drawn};
use fairshare_lab::input::parse_duration;
use std::io::Write;

/// What `draw` prints after the plan.
const DRAW_AFTER_HELP: &str = "\
The plan, on standard output: comment lines starting with `#` (how it was drawn), then one line
per job in submission order,

  at_s|user|cpus|mem_per_cpu_mb|run_s|limit_min|trace_id|trace_user

at_s seconds after the plan's start, mem_per_cpu_mb 0 where the trace records no memory (the
cluster's default then applies). A summary (the window, the speed-up, what was capped or
clamped, which trace user became which test user) goes to standard error.

  fairshare slurm draw wagap-2013.swf --jobs 300 --skip 5000 --cpus 96 \\
      --users alice,bob,carol,dave,erin,frank,grace,heidi,ivan > plan.txt";

/// Arguments of `fairshare slurm draw`.
#[derive(clap::Args)]
#[command(after_help = DRAW_AFTER_HELP)]
pub struct DrawArgs {
    #[command(flatten)]
    trace: TraceArgs,
    /// Jobs of the trace passed over before the window.
    #[arg(long, default_value_t = 0)]
    skip: usize,
    /// Jobs to draw.
    #[arg(long, default_value_t = 300)]
    jobs: usize,
    /// The test cluster's users, comma-separated: the window's users, busiest first, are dealt
    /// to them in turn.
    #[arg(long, value_delimiter = ',', required = true)]
    users: Vec<String>,
    /// The test partition's processors; the gaps between submissions are scaled so that the
    /// jobs offer `--load` times them.
    #[arg(long)]
    cpus: u32,
    /// A job's processors are capped at this.
    #[arg(long, default_value_t = 32)]
    max_cpus: u32,
    /// A job's memory per processor is capped at this many MB (the test nodes' memory over
    /// their processors keeps every job placeable).
    #[arg(long, default_value_t = 2000)]
    max_mem_per_cpu: u64,
    /// What the window's shortest run becomes (`10s`, `1m`); the others are mapped on a
    /// logarithmic scale between this and `--max-run`, time limits too.
    #[arg(long, value_parser = parse_duration, default_value = "10s", allow_hyphen_values = true)]
    min_run: u64,
    /// What the window's longest run becomes.
    #[arg(long, value_parser = parse_duration, default_value = "2m", allow_hyphen_values = true)]
    max_run: u64,
    /// Processor-seconds asked for over processor-seconds there are, while the jobs arrive.
    #[arg(long, default_value_t = 1.2)]
    load: f64,
}

/// Draws the plan and prints it.
pub fn run(args: DrawArgs) -> Result<()> {
    let (trace, _stdin) = args.trace.spec()?;
    let spec = Draw {
        skip: args.skip,
        jobs: args.jobs,
        users: args.users,
        cpus: args.cpus,
        max_cpus: args.max_cpus,
        max_mem_per_cpu_mb: args.max_mem_per_cpu,
        min_run_s: seconds(args.min_run, "--min-run")?,
        max_run_s: seconds(args.max_run, "--max-run")?,
        load: args.load,
    };
    let mut source = trace.open()?;
    let drawn = draw(source.as_mut(), &spec)?;
    let shown = trace.shown.join(" ");
    eprintln!("{}", summary(&drawn, &spec, &shown));
    let mut out = std::io::stdout().lock();
    write_plan(&mut out, &drawn, &spec, &shown).context("writing the plan")
}

/// Seconds as the plan counts them (whole, under 2³² s).
fn seconds(micros: u64, option: &str) -> Result<u32> {
    u32::try_from(micros / 1_000_000).with_context(|| format!("{option} is too long"))
}

/// The plan: how it was drawn in comments, then one line per job.
fn write_plan(
    out: &mut impl Write,
    drawn: &Drawn,
    spec: &Draw,
    shown: &str,
) -> std::io::Result<()> {
    writeln!(
        out,
        "# fairshare slurm draw: {} jobs of {shown} after skipping {}",
        spec.jobs, spec.skip
    )?;
    writeln!(
        out,
        "# runs {}..{} s (log scale), at most {} CPUs and {} MB per CPU, load {} on {} CPUs",
        spec.min_run_s,
        spec.max_run_s,
        spec.max_cpus,
        spec.max_mem_per_cpu_mb,
        spec.load,
        spec.cpus
    )?;
    writeln!(
        out,
        "# at_s|user|cpus|mem_per_cpu_mb|run_s|limit_min|trace_id|trace_user"
    )?;
    for s in &drawn.submissions {
        writeln!(
            out,
            "{:.3}|{}|{}|{}|{}|{}|{}|{}",
            s.at_s,
            s.user,
            s.cpus,
            s.mem_per_cpu_mb,
            s.run_s,
            s.limit_min,
            s.trace_id,
            s.trace_user
        )?;
    }
    out.flush()
}

/// What the drawing did, in a few lines for standard error.
fn summary(drawn: &Drawn, spec: &Draw, shown: &str) -> String {
    let users = drawn
        .users
        .iter()
        .map(|(trace, jobs, test)| format!("{trace} ({jobs}) → {test}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "drew {} jobs of {shown} (after {}): {:.0} s of the trace's submissions in {:.0} s \
         ({:.0}× faster), load {} on {} CPUs\n\
         runs mapped onto {}..{} s (log scale), {} capped at {} CPUs, {} past their limit\n\
         users: {users}",
        drawn.submissions.len(),
        spec.skip,
        drawn.trace_span_s,
        drawn.span_s,
        drawn.arrival_speedup,
        drawn.offered_load,
        spec.cpus,
        spec.min_run_s,
        spec.max_run_s,
        drawn.cpus_capped,
        spec.max_cpus,
        drawn.over_limit,
    )
}
