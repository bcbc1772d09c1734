//! The tables and plots of the Slurm adapter's experiment (`scripts/slurm-experiment.sh`,
//! `docs/slurm-experiment.md`): one workload run on the one-host Slurm under Slurm's own Fair
//! Tree (`slurm`, and `slurm2`, the same again, on the many-node layout) and under fairshare's
//! SDRF (`sdrf`) and Processor-Equivalent Fair Tree (`pe`) through `fairshare slurm watch`.
//!
//! ```text
//! cargo run -p fairshare-report --features adapters --example slurm_experiment -- OUT_DIR [REPLAY]
//! ```
//!
//! `REPLAY` names the replay file read in every run folder (default `replay.json`); with
//! another name (`replay-easy.json`), the tables go to `OUT_DIR/results-replay-easy.md` and no
//! plot is written, so that predictions by two schedulers can be set side by side.
//!
//! `OUT_DIR/experiment.json` (written by the script) names the layout, the processors the
//! workload runs on, its users, its runs in order, the two runs that measure the floor and the
//! size of the one-node workload's stream jobs; without it, the one-node experiment's values.
//! For every run folder `OUT_DIR/RUN` with a `sacct.txt` (the dump the script takes, in the
//! format `fairshare replay` reads), a `replay.json` (`fairshare replay … --gantt … --json`,
//! whose `policies[0].jobs[]` lists each job's predicted start) and, where the script wrote
//! them, `about` (what the run is), `took` (seconds from the fresh cluster to the dump) and
//! `sprio.log` (every pending job's priority, sampled every 2 s), it writes:
//!
//! - `OUT_DIR/results.md`:
//!   - a table comparing the runs: the fraction of pairs of jobs of different users that the
//!     replay starts in the same order as Slurm did, over all such pairs (ties in Slurm's order
//!     left out, ties in the prediction counted half) and over the contested ones (both jobs
//!     waiting at once in the real run, in one partition or in two that share nodes by the
//!     run's `config.txt`, so that their order was a choice);
//!     the mean and median
//!     |real − predicted start|; the fraction of contested pairs Slurm started in the order of
//!     the priorities it held for them (the last sample in which both waited; the site factors
//!     the adapter wrote, in the adapter's runs), pairs whose first start was a backfill
//!     (sacct's `Flags` `SchedBackfill`) counted apart; how long each run took;
//!   - the floor: the same agreement between the two real runs of one policy, job by job;
//!   - jobs cancelled while they waited (sacct's `State` `CANCELLED` with nothing allocated),
//!     left out of every figure: how many, and how many of them the replay started before
//!     their cancellation (or that it left them out, for a dump without `ReqTRES`);
//!   - each user's mean wait per run, real and predicted;
//!   - per run, each user's jobs, mean wait (all jobs, and the stream's jobs alone, one-node),
//!     longest wait, share of the processors in the first and second halves of the run (from
//!     the first submission to the last end), and the replay's; the order in which jobs
//!     started, really and as predicted.
//! - `OUT_DIR/RUN.svg`: each user's share of the processors over time, in 10-s buckets, as
//!   run; `OUT_DIR/RUN-replay.svg`: the same as the replay predicts it; `OUT_DIR/RUN-queue.svg`:
//!   the processors each user's jobs waited for, every 10 s, as run.
//!
//! Times are read as UTC, as the script dumps them (`TZ=UTC sacct …`), to the second.

use fairshare_report::svg::{line_chart, Axis, Colour, LineChart, Series};
use fairshare_trace::slurm_conf::parse_slurm_conf;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What the script says of the experiment (`OUT_DIR/experiment.json`).
struct Experiment {
    /// The processors the workload runs on.
    cpus: f64,
    /// The processors of each of the one-node workload's stream jobs, if it has a stream.
    stream_cpus: Option<f64>,
    /// The users, in the order of the tables and plots.
    users: Vec<String>,
    /// The runs, in the order of the tables.
    runs: Vec<String>,
    /// Two runs of one policy, whose difference is the floor of any prediction.
    floor: Option<(String, String)>,
}

impl Experiment {
    /// The script's description, or the one-node experiment's when it wrote none.
    fn read(out: &Path) -> Result<Experiment, String> {
        let path = out.join("experiment.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(Experiment {
                cpus: 8.0,
                stream_cpus: Some(2.0),
                users: ["alice", "bob", "carol"].map(String::from).to_vec(),
                runs: ["slurm", "sdrf", "pe"].map(String::from).to_vec(),
                floor: None,
            });
        };
        let doc: Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let names = |key: &str| -> Result<Vec<String>, String> {
            doc[key]
                .as_array()
                .ok_or(format!("{}: no list {key}", path.display()))?
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(String::from)
                        .ok_or(format!("{}: {key} holds a non-name", path.display()))
                })
                .collect()
        };
        let floor = match doc["floor"].as_array().map(Vec::as_slice) {
            Some([a, b]) => Some((
                a.as_str().unwrap_or_default().to_string(),
                b.as_str().unwrap_or_default().to_string(),
            )),
            _ => None,
        };
        Ok(Experiment {
            cpus: doc["cpus"]
                .as_f64()
                .ok_or(format!("{}: no cpus", path.display()))?,
            stream_cpus: doc["stream_cpus"].as_f64(),
            users: names("users")?,
            runs: names("runs")?,
            floor,
        })
    }
}

/// Width of a plot's time bucket, seconds.
const BUCKET_S: f64 = 10.0;

/// Two starts closer than this are a tie (sacct writes whole seconds).
const TIE_S: f64 = 0.5;

/// One job, times in seconds after the Unix epoch.
#[derive(Debug, Clone)]
struct Job {
    /// Slurm's job id.
    id: u64,
    /// Its rank among the dump's jobs: the replay's id of it, and how two runs of one
    /// workload pair their jobs.
    rank: usize,
    /// Whether it was cancelled while it waited, never running (its start and end are then
    /// its cancellation).
    waited_out: bool,
    user: String,
    /// Whether it is one of the one-node stream's jobs (not alice's 4-CPU fill).
    stream: bool,
    /// Whether the backfill scheduler started it (sacct's `Flags` `SchedBackfill`).
    backfilled: bool,
    /// Whether Slurm killed it at its time limit (sacct's `State` `TIMEOUT`).
    timed_out: bool,
    /// Its partition (empty when the dump has no `Partition` column).
    partition: String,
    submit: f64,
    start: f64,
    end: f64,
    cpus: f64,
    /// The nodes it ran on (`node=` of `AllocTRES`; the replay's: the nodes it placed it on).
    nodes: usize,
}

impl Job {
    fn wait(&self) -> f64 {
        self.start - self.submit
    }
}

/// A run's jobs as they ran and as the replay predicts them (the same jobs, the same order),
/// those cancelled while they waited left out.
struct Run {
    name: String,
    about: String,
    real: Vec<Job>,
    predicted: Vec<Job>,
    /// The jobs of the dump, cancelled ones included.
    dumped: usize,
    /// What became of the jobs cancelled while they waited.
    cancelled: Cancellations,
    /// Each sample of `sprio.log`: job id → priority, of the jobs pending then.
    samples: Vec<BTreeMap<u64, f64>>,
    /// Seconds the run took, fresh cluster to dump, from the script (`took`), if it wrote them.
    seconds: Option<f64>,
    /// Which partitions share nodes.
    overlaps: Overlaps,
    /// The predictions with the background loop's turns drawn, one per seed
    /// (`replay-turns-SEED.json`), of the same jobs as `predicted`.
    drawn: Vec<Vec<Job>>,
}

/// The jobs a run's owners cancelled while they waited, and what the replay did with them.
#[derive(Debug, Default, Clone, Copy)]
struct Cancellations {
    /// Cancelled while they waited in the real run.
    waited_out: usize,
    /// Of those, the replay started (each ends at its cancellation at the latest).
    started: usize,
    /// Whether the replay had them: the dump says what they asked for (`ReqTRES`), so the
    /// replay kept them waiting until their cancellation; without it, it left them out.
    replayed: bool,
}

/// The pairs of distinct partitions that share a node, by a run's `config.txt` (`scontrol show
/// partition`); without it, none: each partition contends only with itself.
#[derive(Debug, Default)]
struct Overlaps(BTreeSet<(String, String)>);

impl Overlaps {
    /// The overlaps of the partitions defined in `text`.
    fn of(text: &str) -> Overlaps {
        Overlaps(
            parse_slurm_conf(text)
                .sharing_partitions()
                .into_iter()
                .collect(),
        )
    }

    /// Whether jobs of partitions `a` and `b` contend for nodes.
    fn contend(&self, a: &str, b: &str) -> bool {
        a == b || self.0.contains(&(a.to_owned(), b.to_owned()))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: slurm_experiment OUT_DIR [REPLAY]")?,
    );
    let replay = std::env::args().nth(2).unwrap_or("replay.json".into());
    let default_replay = replay == "replay.json";
    let experiment = Experiment::read(&out)?;
    let mut runs = Vec::new();
    for name in &experiment.runs {
        let dir = out.join(name);
        if !dir.join("sacct.txt").exists() {
            continue;
        }
        let (dumped, asked) = read_sacct(&dir.join("sacct.txt"), experiment.stream_cpus)?;
        let replayed = read_replay(&dir.join(&replay), &dumped)?;
        let drawn = match default_replay {
            true => read_drawn_turns(&dir, &dumped)?,
            false => Vec::new(),
        };
        let jobs = dumped.len();
        let (real, predicted, mut cancelled) = ran(dumped, replayed)?;
        cancelled.replayed = asked;
        let text = |file: &str| std::fs::read_to_string(dir.join(file)).ok();
        runs.push(Run {
            name: name.clone(),
            about: text("about").map_or_else(|| one_node_about(name), |a| a.trim().to_string()),
            real,
            predicted,
            dumped: jobs,
            cancelled,
            samples: text("sprio.log")
                .map(|t| read_sprio(&t))
                .unwrap_or_default(),
            seconds: text("took").and_then(|s| s.trim().parse().ok()),
            overlaps: text("config.txt")
                .map(|t| Overlaps::of(&t))
                .unwrap_or_default(),
            drawn,
        });
    }
    if runs.is_empty() {
        return Err(format!("no run in {} (expected RUN/sacct.txt)", out.display()).into());
    }
    let mut md = String::new();
    summary(&mut md, &runs, experiment.cpus);
    if let Some(floor) = &experiment.floor {
        floor_section(&mut md, &runs, floor, &experiment)?;
    }
    waits_table(&mut md, &runs, &experiment);
    turns_section(&mut md, &runs, &experiment);
    for run in &runs {
        section(&mut md, run, &experiment);
        if default_replay {
            write_plots(&out, run, &experiment)?;
        }
    }
    let results = match default_replay {
        true => "results.md".to_owned(),
        false => format!("results-{}.md", replay.trim_end_matches(".json")),
    };
    std::fs::write(out.join(results), &md)?;
    print!("{md}");
    Ok(())
}

/// The predictions of a run folder's `replay-turns-SEED.json` files (seeds in order) for the
/// jobs of `dumped` that ran.
fn read_drawn_turns(dir: &Path, dumped: &[Job]) -> Result<Vec<Vec<Job>>, String> {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let name = path.file_name()?.to_str()?;
            let seed = name.strip_prefix("replay-turns-")?.strip_suffix(".json")?;
            Some((seed.parse().ok()?, path))
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|(_, path)| {
            let replayed = read_replay(path, dumped)?;
            Ok(ran(dumped.to_vec(), replayed)?.1)
        })
        .collect()
}

/// How far the background loop's turns within each second, which a dump of whole seconds
/// cannot tell, move each prediction: per run, the contested order and median start error over
/// the drawn seeds beside the model's; per user, the drawn mean waits' range beside the real
/// one.
fn turns_section(md: &mut String, runs: &[Run], experiment: &Experiment) {
    let drawn: Vec<&Run> = runs.iter().filter(|r| !r.drawn.is_empty()).collect();
    let Some(first) = drawn.first() else {
        return;
    };
    let _ = writeln!(md, "## The loop's turns drawn

Each run replayed again with the background loop's turns within each second drawn (`--turn-seed`, {} seeds): the contested order and the median |real − predicted start| of the model (`replay.json`) and their range over the seeds; each user's real mean wait, the model's, and the range over the seeds (`*` where the real one is more than 10 % outside it).
", first.drawn.len());
    md.push_str(
        "| run | contested: model | drawn | median start error: model | drawn |
|---|---:|---:|---:|---:|
",
    );
    let contested = |run: &Run, predicted: &[Job]| {
        let a = agreement(&run.real, predicted, &run.overlaps);
        100.0 * a.contested_alike / a.contested.max(1) as f64
    };
    let error = |run: &Run, predicted: &[Job]| median(start_gaps(&run.real, predicted));
    for run in &drawn {
        let (c_low, c_high) = span(run.drawn.iter().map(|p| contested(run, p)));
        let (e_low, e_high) = span(run.drawn.iter().map(|p| error(run, p)));
        let _ = writeln!(
            md,
            "| {} | {:.1} % | {c_low:.1}–{c_high:.1} % | {:.0} s | {e_low:.0}–{e_high:.0} s |",
            run.name,
            contested(run, &run.predicted),
            error(run, &run.predicted),
        );
    }
    let _ = write!(
        md,
        "\nMean wait per user (s): real / model / drawn range\n\n| user |"
    );
    for run in &drawn {
        let _ = write!(md, " {} |", run.name);
    }
    let _ = writeln!(md, "\n|---|{}", "---:|".repeat(drawn.len()));
    let (mut users, mut model_within, mut drawn_within) = (0, 0, 0);
    for user in &experiment.users {
        let _ = write!(md, "| {user} |");
        for run in &drawn {
            if !run.real.iter().any(|j| &j.user == user) {
                md.push_str(" – |");
                continue;
            }
            let real = mean_wait(&run.real, user);
            let model = mean_wait(&run.predicted, user);
            let (low, high) = span(run.drawn.iter().map(|p| mean_wait(p, user)));
            let inside = low - 0.1 * real <= real && real <= high + 0.1 * real;
            users += 1;
            model_within += usize::from((model - real).abs() <= 0.1 * real);
            drawn_within += usize::from(inside);
            let miss = if inside { "" } else { " *" };
            let _ = write!(md, " {real:.0} / {model:.0} / {low:.0}–{high:.0}{miss} |");
        }
        md.push('\n');
    }
    let _ = writeln!(md, "\nOf {users} users' mean waits over these runs, {model_within} are predicted within 10 % by the model, and {drawn_within} lie within 10 % of the drawn range.\n");
}

/// The least and the greatest of `values` (non-negative here: times, waits, percentages).
fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, 0.0), |(low, high), v| {
        (low.min(v), high.max(v))
    })
}

/// A run's plots: the shares as run and as predicted, and the processors waiting as run.
fn write_plots(out: &Path, run: &Run, experiment: &Experiment) -> std::io::Result<()> {
    let name = &run.name;
    let origin = first_submit(&run.real);
    let end = last_end(&run.real).max(last_end(&run.predicted));
    let shares = |jobs: &[Job], how: &str| {
        share_plot(jobs, origin, end, &format!("{name}, {how}"), experiment)
    };
    let waiting = queue_plot(
        &run.real,
        origin,
        end,
        &format!("{name}, as run"),
        experiment,
    );
    std::fs::write(out.join(format!("{name}.svg")), shares(&run.real, "as run"))?;
    let predicted = shares(&run.predicted, "as the replay predicts");
    std::fs::write(out.join(format!("{name}-replay.svg")), predicted)?;
    std::fs::write(out.join(format!("{name}-queue.svg")), waiting)
}

/// What the one-node runs were, for folders written before the script wrote `about`.
fn one_node_about(name: &str) -> String {
    match name {
        "slurm" => "Slurm's own Fair Tree (PriorityWeightFairshare=100000, no adapter)".into(),
        "sdrf" => "fairshare `sdrf:delta=0.998845` through `fairshare slurm watch --interval 5s`".into(),
        "pe" => "fairshare `fairshare:usage=pe,decay=half-life:600,refresh=5` through `fairshare slurm watch --interval 5s`".into(),
        other => other.into(),
    }
}

/// The samples of `sprio.log`: a `# TIME` line, then `id|user|priority|fairshare|site` lines.
fn read_sprio(text: &str) -> Vec<BTreeMap<u64, f64>> {
    let mut samples: Vec<BTreeMap<u64, f64>> = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') {
            samples.push(BTreeMap::new());
            continue;
        }
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        if let (Some(sample), [id, _, priority, ..]) = (samples.last_mut(), f.as_slice()) {
            if let (Ok(id), Ok(p)) = (id.parse(), priority.parse()) {
                sample.insert(id, p);
            }
        }
    }
    samples
}

/// The jobs of a `sacct --parsable2` dump with a header (columns found by name; job steps
/// such as `12.batch` left out): id, user, submit (its `Eligible` time when later), start,
/// end, `cpu=` of `AllocTRES` and, when the column is there, whether `Flags` says the backfill
/// scheduler started it; jobs of at most `stream_cpus` processors are the stream's. And
/// whether the dump says what each job asked for (`ReqTRES`), which lets a replay keep the
/// jobs cancelled while they waited.
fn read_sacct(path: &Path, stream_cpus: Option<f64>) -> Result<(Vec<Job>, bool), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().ok_or("an empty dump")?.split('|').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or(format!("{}: no column {name}", path.display()))
    };
    let (id, user, submit, start, end, tres) = (
        col("JobID")?,
        col("User")?,
        col("Submit")?,
        col("Start")?,
        col("End")?,
        col("AllocTRES")?,
    );
    let flags = col("Flags").ok();
    let state = col("State").ok();
    let partition = col("Partition").ok();
    let eligible = col("Eligible").ok();
    let mut jobs = Vec::new();
    for (i, line) in lines.enumerate() {
        let f: Vec<&str> = line.split('|').collect();
        if f.len() != header.len() || f[id].contains('.') {
            continue;
        }
        let at = |c: usize| {
            time(f[c]).ok_or(format!(
                "{} line {}: {} {:?}",
                path.display(),
                i + 2,
                header[c],
                f[c]
            ))
        };
        let amount = |key: &str| {
            (f[tres].split(','))
                .find_map(|kv| kv.strip_prefix(key))
                .and_then(|n| n.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        let cpus = amount("cpu=");
        // Cancelled while it waited: no start, or Slurm 22.05's start at its end, with nothing
        // allocated.
        let cancelled = state.is_some_and(|c| f[c].starts_with("CANCELLED"));
        let waited_out =
            cancelled && (time(f[start]).is_none() || (f[start] == f[end] && cpus == 0.0));
        jobs.push(Job {
            id: f[id]
                .parse()
                .map_err(|_| format!("{} line {}: JobID {:?}", path.display(), i + 2, f[id]))?,
            rank: jobs.len(),
            waited_out,
            user: f[user].to_string(),
            stream: stream_cpus.is_some_and(|s| cpus <= s),
            backfilled: flags.is_some_and(|c| f[c].contains("SchedBackfill")),
            timed_out: state.is_some_and(|c| f[c].starts_with("TIMEOUT")),
            partition: partition.map_or_else(String::new, |c| f[c].to_string()),
            // A job that became eligible after its submission waits from then, as the replay
            // counts it.
            submit: match eligible.and_then(|c| time(f[c])) {
                Some(e) => e.max(at(submit)?),
                None => at(submit)?,
            },
            start: if waited_out { at(end)? } else { at(start)? },
            end: at(end)?,
            cpus,
            nodes: amount("node=") as usize,
        });
    }
    Ok((jobs, col("ReqTRES").is_ok()))
}

/// A time as sacct prints it (`2026-11-24T07:15:44`), read as UTC, in seconds.
fn time(text: &str) -> Option<f64> {
    let t = humantime::parse_rfc3339_weak(text).ok()?;
    Some(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs_f64())
}

/// The replay's jobs (`policies[0].jobs[]`), in the order of `real`: the replay numbers jobs
/// by their rank in the dump, as `read_sacct` lists them, and every one must be the real
/// job's user and submission; `None` for a job the replay never started.
fn read_replay(path: &Path, real: &[Job]) -> Result<Vec<Option<Job>>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let users: Vec<&str> = doc["setting"]["machine_view"]["users"]
        .as_array()
        .ok_or("replay JSON without machine_view (run it with --gantt)")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let mut predicted: Vec<Option<Job>> = vec![None; real.len()];
    let jobs = doc["policies"][0]["jobs"]
        .as_array()
        .ok_or("replay JSON without policies[0].jobs")?;
    let secs = |v: &Value| v.as_f64().map(|us| us / 1e6);
    for j in jobs {
        let id = j["id"].as_u64().ok_or("a job without id")? as usize;
        let job = real
            .get(id)
            .ok_or(format!("replay job {id} is not in the dump"))?;
        let user = j["user"]
            .as_u64()
            .and_then(|u| users.get(u as usize))
            .ok_or(format!(
                "replay job {id} names no user of machine_view.users"
            ))?;
        let submit = secs(&j["submit"]).ok_or("a job without submit")?.floor();
        if **user != job.user || (submit - job.submit).abs() > TIE_S {
            return Err(format!(
                "replay job {id} ({user}) is not the dump's ({})",
                job.user
            ));
        }
        // Down to the second, as sacct writes the real run's (a replay timed by slurmctld's
        // log starts jobs at the loop's turns, within the second).
        predicted[id] = Some(Job {
            start: secs(&j["start"]).ok_or("a job without start")?.floor(),
            end: secs(&j["end"]).ok_or("a job without end")?.floor(),
            nodes: j["placed"].as_array().map_or(0, Vec::len),
            waited_out: false,
            ..job.clone()
        });
    }
    Ok(predicted)
}

/// The jobs that ran in the real run, as run and as replayed (the replay must have started
/// each of them), and what became of the ones cancelled while they waited.
fn ran(
    real: Vec<Job>,
    replayed: Vec<Option<Job>>,
) -> Result<(Vec<Job>, Vec<Job>, Cancellations), String> {
    let mut cancelled = Cancellations::default();
    let (mut kept, mut predicted) = (Vec::new(), Vec::new());
    for (job, replayed) in real.into_iter().zip(replayed) {
        if job.waited_out {
            cancelled.waited_out += 1;
            cancelled.started += usize::from(replayed.is_some());
            continue;
        }
        let rank = job.rank;
        predicted.push(replayed.ok_or(format!("job {rank} is not in the replay's window"))?);
        kept.push(job);
    }
    Ok((kept, predicted, cancelled))
}

/// The jobs that ran in both of two runs of one workload, paired by their rank in the dump.
fn ran_in_both(a: &[Job], b: &[Job]) -> (Vec<Job>, Vec<Job>) {
    let by_rank: BTreeMap<usize, &Job> = b.iter().map(|j| (j.rank, j)).collect();
    a.iter()
        .filter_map(|x| Some((x.clone(), (*by_rank.get(&x.rank)?).clone())))
        .unzip()
}

/// How many jobs `predicted` put on as many nodes as `real` ran on.
fn same_nodes(real: &[Job], predicted: &[Job]) -> usize {
    let pairs = real.iter().zip(predicted);
    pairs.filter(|(r, p)| r.nodes == p.nodes).count()
}

fn first_submit(jobs: &[Job]) -> f64 {
    jobs.iter().map(|j| j.submit).fold(f64::INFINITY, f64::min)
}

fn last_end(jobs: &[Job]) -> f64 {
    jobs.iter().map(|j| j.end).fold(f64::NEG_INFINITY, f64::max)
}

fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = values
        .into_iter()
        .fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// `user`'s CPU-seconds within `[from, to)` over the processors' (`cpus` × the length).
fn share(jobs: &[Job], user: &str, from: f64, to: f64, cpus: f64) -> f64 {
    let held: f64 = jobs
        .iter()
        .filter(|j| j.user == user)
        .map(|j| (j.end.min(to) - j.start.max(from)).max(0.0) * j.cpus)
        .sum();
    held / (cpus * (to - from))
}

/// `user`'s mean wait among `jobs` (NaN when the user has none).
fn mean_wait(jobs: &[Job], user: &str) -> f64 {
    mean(jobs.iter().filter(|j| j.user == user).map(Job::wait))
}

/// The value below which 90 % of `values` fall (nearest rank).
fn p90(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let rank = (0.9 * values.len() as f64).ceil() as usize;
    values[rank.max(1) - 1]
}

/// The fraction of `cpus` the jobs held from the first submission to the last end.
fn utilisation(jobs: &[Job], cpus: f64) -> f64 {
    let (from, to) = (first_submit(jobs), last_end(jobs));
    let held: f64 = jobs.iter().map(|j| (j.end - j.start) * j.cpus).sum();
    held / (cpus * (to - from))
}

/// How many users' mean waits the prediction gets within 10 % or 30 s, of the users with jobs.
fn users_within(run: &Run) -> (usize, usize) {
    let users: std::collections::BTreeSet<&str> =
        run.real.iter().map(|j| j.user.as_str()).collect();
    let close = users.iter().filter(|u| {
        let (real, predicted) = (mean_wait(&run.real, u), mean_wait(&run.predicted, u));
        (real - predicted).abs() <= (0.1 * real).max(30.0)
    });
    (close.count(), users.len())
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// How far one run's starts are from another's (or from the prediction), job by job.
fn start_gaps(a: &[Job], b: &[Job]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x.start - y.start).abs())
        .collect()
}

/// How the prediction orders the pairs of jobs of different users beside the real order.
#[derive(Debug, Default, Clone, Copy)]
struct Agreement {
    /// Pairs not tied in the real order.
    pairs: usize,
    /// Of those, ordered alike (a tie in the prediction counts half).
    alike: f64,
    /// Pairs whose jobs both waited at once in the real run.
    contested: usize,
    /// Of those, ordered alike.
    contested_alike: f64,
}

fn agreement(real: &[Job], predicted: &[Job], overlaps: &Overlaps) -> Agreement {
    let mut a = Agreement::default();
    for i in 0..real.len() {
        for j in i + 1..real.len() {
            if real[i].user == real[j].user {
                continue;
            }
            let order = |x: f64, y: f64| match x - y {
                d if d.abs() < TIE_S => 0,
                d if d < 0.0 => -1,
                _ => 1,
            };
            let r = order(real[i].start, real[j].start);
            if r == 0 {
                continue;
            }
            let p = order(predicted[i].start, predicted[j].start);
            let score = match p {
                0 => 0.5,
                p if p == r => 1.0,
                _ => 0.0,
            };
            a.pairs += 1;
            a.alike += score;
            let first_start = real[i].start.min(real[j].start);
            let waited_together = real[i].submit < first_start && real[j].submit < first_start;
            if waited_together && overlaps.contend(&real[i].partition, &real[j].partition) {
                a.contested += 1;
                a.contested_alike += score;
            }
        }
    }
    a
}

/// The jobs' users in the order they started (ties by job order), one letter each.
fn start_order(jobs: &[Job]) -> Vec<char> {
    let mut order: Vec<(f64, usize)> = jobs.iter().enumerate().map(|(i, j)| (j.start, i)).collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    order.iter().map(|&(_, i)| initial(&jobs[i].user)).collect()
}

/// Two start orders line by line, 60 jobs a line in groups of ten.
fn start_orders(real: &[Job], predicted: &[Job]) -> String {
    let groups = |letters: &[char]| {
        letters
            .chunks(10)
            .map(|c| c.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (real, predicted) = (start_order(real), start_order(predicted));
    real.chunks(60)
        .zip(predicted.chunks(60))
        .map(|(r, p)| format!("real    {}\nreplay  {}\n", groups(r), groups(p)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether Slurm started the contested pairs of jobs of different users (in one partition) in
/// the order of the priorities it held for them (at the last sample in which both waited; pairs whose
/// priorities were equal there, or that started together, left out).
#[derive(Debug, Default, Clone, Copy)]
struct FactorOrder {
    /// Pairs whose first start was by the main scheduler.
    main: usize,
    /// Of those, started in priority order.
    main_alike: usize,
    /// Pairs whose first start was a backfill.
    backfill: usize,
    /// Of those, started in priority order.
    backfill_alike: usize,
}

fn factor_order(run: &Run) -> FactorOrder {
    let real = &run.real;
    let mut f = FactorOrder::default();
    for i in 0..real.len() {
        for j in i + 1..real.len() {
            let (x, y) = (&real[i], &real[j]);
            let first_start = x.start.min(y.start);
            if x.user == y.user
                || !run.overlaps.contend(&x.partition, &y.partition)
                || (x.start - y.start).abs() < TIE_S
                || x.submit >= first_start
                || y.submit >= first_start
            {
                continue;
            }
            let both = run
                .samples
                .iter()
                .rev()
                .find_map(|s| Some((*s.get(&x.id)?, *s.get(&y.id)?)));
            let Some((px, py)) = both else { continue };
            if px == py {
                continue;
            }
            let alike = usize::from((px > py) == (x.start < y.start));
            let first = if x.start < y.start { x } else { y };
            if first.backfilled {
                f.backfill += 1;
                f.backfill_alike += alike;
            } else {
                f.main += 1;
                f.main_alike += alike;
            }
        }
    }
    f
}

/// `part` of `whole` as a percentage, or a dash when there is no whole.
fn percent(part: f64, whole: usize) -> String {
    if whole == 0 {
        "–".into()
    } else {
        format!("{:.1} %", 100.0 * part / whole as f64)
    }
}

/// The comparison of all runs in one table.
fn summary(md: &mut String, runs: &[Run], cpus: f64) {
    md.push_str("# Slurm adapter experiment: results\n\n");
    md.push_str("Order agreement with the replay over pairs of jobs of different users (all pairs; contested pairs, both waiting at once in one partition or two sharing nodes); mean, median and 90th percentile of |real − predicted start|; users whose mean wait the replay gets within 10 % or 30 s; utilisation of the processors from the first submission to the last end, real / predicted; jobs the replay put on as many nodes as Slurm did; contested pairs Slurm started in the order of the priorities it held (main scheduler; backfill); how long the run took.\n\n");
    md.push_str("| run | jobs | order agreement | contested | mean abs. start diff. | median | p90 | users' mean wait | utilisation | same node count | priority order (main) | priority order (backfill) | run took |\n");
    md.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for run in runs {
        let (close, users) = users_within(run);
        let used = |jobs: &[Job]| format!("{:.0} %", 100.0 * utilisation(jobs, cpus));
        let a = agreement(&run.real, &run.predicted, &run.overlaps);
        let gaps = start_gaps(&run.real, &run.predicted);
        let f = factor_order(run);
        let took = run
            .seconds
            .map(|s| format!("{:.0} min {:02.0} s", (s / 60.0).floor(), s % 60.0))
            .unwrap_or_else(|| "–".into());
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} of {} | {:.1} s | {:.0} s | {:.0} s | {close} of {users} | {} / {} | {} | {} of {} | {} of {} | {took} |",
            run.name,
            run.real.len(),
            percent(a.alike, a.pairs),
            percent(a.contested_alike, a.contested),
            a.contested,
            mean(gaps.iter().copied()),
            median(gaps.clone()),
            p90(gaps),
            used(&run.real),
            used(&run.predicted),
            same_nodes(&run.real, &run.predicted),
            percent(f.main_alike as f64, f.main),
            f.main,
            percent(f.backfill_alike as f64, f.backfill),
            f.backfill,
        );
    }
    md.push('\n');
    for run in runs.iter().filter(|r| r.cancelled.waited_out > 0) {
        let c = run.cancelled;
        let replay = match c.replayed {
            true => format!("the replay kept them waiting until their cancellations and started {} of them before (each ending at its cancellation at the latest)", c.started),
            false => "the dump has no ReqTRES, so the replay left them out".to_owned(),
        };
        let _ = writeln!(
            md,
            "`{}`: {} jobs were cancelled while they waited (left out of every figure here); {replay}.\n",
            run.name, c.waited_out
        );
    }
}

/// How far two real runs of one policy differ: the floor no prediction can beat.
fn floor_section(
    md: &mut String,
    runs: &[Run],
    (a, b): &(String, String),
    experiment: &Experiment,
) -> Result<(), String> {
    let find = |name: &str| runs.iter().find(|r| r.name == name);
    let (Some(first), Some(second)) = (find(a), find(b)) else {
        return Ok(());
    };
    if first.dumped != second.dumped {
        return Err(format!(
            "runs {a} and {b} have {} and {} jobs: not one workload",
            first.dumped, second.dumped
        ));
    }
    let (one, two) = ran_in_both(&first.real, &second.real);
    let agree = agreement(&one, &two, &first.overlaps);
    let waits: Vec<f64> = one
        .iter()
        .zip(&two)
        .map(|(x, y)| (x.wait() - y.wait()).abs())
        .collect();
    let left_out = match first.cancelled.waited_out + second.cancelled.waited_out {
        0 => "",
        _ => ", those cancelled while they waited in either left out",
    };
    let _ = writeln!(md, "## The floor: `{a}` against `{b}`\n");
    let _ = writeln!(
        md,
        "The same workload under the same policy twice, job by job (the i-th job submitted in each{left_out}): pairs ordered alike {} of {}, contested pairs {} of {} (contested in `{a}`); median |wait difference| {:.0} s, mean {:.1} s.\n",
        percent(agree.alike, agree.pairs),
        agree.pairs,
        percent(agree.contested_alike, agree.contested),
        agree.contested,
        median(waits.clone()),
        mean(waits),
    );
    md.push_str("| user | jobs | mean wait, first (s) | mean wait, second (s) | difference |\n|---|---:|---:|---:|---:|\n");
    for user in &experiment.users {
        let wait = |jobs: &[Job]| mean_wait(jobs, user);
        let (x, y) = (wait(&one), wait(&two));
        let jobs = one.iter().filter(|j| &j.user == user).count();
        let difference = match (y - x, x > 0.0) {
            (d, true) => format!("{d:+.0} s ({:+.0} %)", 100.0 * d / x),
            (d, false) if d.is_finite() => format!("{d:+.0} s"),
            _ => "–".into(),
        };
        let (x, y) = (seconds(x), seconds(y));
        let _ = writeln!(md, "| {user} | {jobs} | {x} | {y} | {difference} |");
    }
    md.push('\n');
    users_within_spread(md, [first, second], (&one, &two), experiment);
    Ok(())
}

/// How many users' mean waits each floor run's prediction gets within 10 % of the real one or
/// within the two real runs' spread (the issue's target), read two ways: the two runs'
/// difference for that user, and the largest such difference of any user; and which miss.
fn users_within_spread(
    md: &mut String,
    runs: [&Run; 2],
    floor: (&[Job], &[Job]),
    experiment: &Experiment,
) {
    let spread = |user: &str| (mean_wait(floor.0, user) - mean_wait(floor.1, user)).abs();
    let widest = (experiment.users.iter())
        .map(|u| spread(u))
        .filter(|s| s.is_finite())
        .fold(0.0, f64::max);
    let _ = writeln!(md, "Each user's predicted mean wait within 10 % of the real one or within the two real runs' difference for that user (the column above), and within 10 % or the largest such difference of any user ({widest:.0} s):\n");
    for run in runs {
        let mut misses = Vec::new();
        let (mut users, mut within_widest) = (0, 0);
        for user in (experiment.users.iter()).filter(|u| run.real.iter().any(|j| &j.user == *u)) {
            users += 1;
            let (real, predicted) = (mean_wait(&run.real, user), mean_wait(&run.predicted, user));
            let (miss, apart) = ((real - predicted).abs(), spread(user));
            within_widest += usize::from(miss <= (0.1 * real).max(widest));
            if miss > (0.1 * real).max(apart) {
                misses.push(format!(
                    "{user} {real:.0} s real, {predicted:.0} s predicted, runs {apart:.0} s apart"
                ));
            }
        }
        let missed = match misses.is_empty() {
            true => String::new(),
            false => format!(" (not: {})", misses.join("; ")),
        };
        let _ = writeln!(
            md,
            "- `{}`: {} of {users}{missed}; {within_widest} of {users} within 10 % or {widest:.0} s",
            run.name,
            users - misses.len()
        );
    }
    md.push('\n');
}

/// Whole seconds, or a dash for no value (a user without jobs).
fn seconds(s: f64) -> String {
    if s.is_nan() {
        "–".into()
    } else {
        format!("{s:.0}")
    }
}

/// Each user's mean wait in every run, real and as the replay predicts.
fn waits_table(md: &mut String, runs: &[Run], experiment: &Experiment) {
    md.push_str("## Mean wait per user (s), real / replay\n\n| user |");
    for run in runs {
        let _ = write!(md, " {} |", run.name);
    }
    md.push_str("\n|---|");
    md.push_str(&"---:|".repeat(runs.len()));
    md.push('\n');
    for user in &experiment.users {
        let _ = write!(md, "| {user} |");
        for run in runs {
            let wait = |jobs: &[Job]| mean_wait(jobs, user);
            let _ = write!(
                md,
                " {} / {} |",
                seconds(wait(&run.real)),
                seconds(wait(&run.predicted))
            );
        }
        md.push('\n');
    }
    md.push('\n');
}

/// One run's table, start orders and agreement.
fn section(md: &mut String, run: &Run, experiment: &Experiment) {
    let (real, predicted) = (&run.real, &run.predicted);
    let cpus = experiment.cpus;
    let origin = first_submit(real);
    let end = last_end(real);
    let mid = (origin + end) / 2.0;
    let _ = writeln!(md, "## {}: {}\n", run.name, run.about);
    let _ = writeln!(
        md,
        "From the first submission to the last end: {:.0} s (halves split at {:.0} s); {} jobs, {} started by backfill.\n",
        end - origin,
        mid - origin,
        real.len(),
        real.iter().filter(|j| j.backfilled).count(),
    );
    let streams = experiment.stream_cpus.is_some();
    md.push_str("| user | jobs | mean wait (s) |");
    if streams {
        md.push_str(" stream's mean wait (s) |");
    }
    md.push_str(" longest wait (s) | share 1st half | share 2nd half | replay: mean wait (s) |");
    if streams {
        md.push_str(" replay: stream's (s) |");
    }
    md.push_str(" replay: share 1st half | 2nd half |\n|---|");
    md.push_str(&"---:|".repeat(if streams { 10 } else { 8 }));
    md.push('\n');
    let predicted_end = last_end(predicted);
    let predicted_mid = (origin + predicted_end) / 2.0;
    for user in &experiment.users {
        let waits = |jobs: &[Job], stream: bool| {
            mean(
                jobs.iter()
                    .filter(|j| &j.user == user && (j.stream || !stream))
                    .map(Job::wait),
            )
        };
        let mine = real.iter().filter(|j| &j.user == user);
        if mine.clone().next().is_none() {
            continue;
        }
        let longest = mine.clone().map(Job::wait).fold(0.0, f64::max);
        let _ = write!(
            md,
            "| {user} | {} | {:.0} |",
            mine.count(),
            waits(real, false)
        );
        if streams {
            let _ = write!(md, " {:.0} |", waits(real, true));
        }
        let _ = write!(
            md,
            " {longest:.0} | {:.0} % | {:.0} % | {:.0} |",
            100.0 * share(real, user, origin, mid, cpus),
            100.0 * share(real, user, mid, end, cpus),
            waits(predicted, false),
        );
        if streams {
            let _ = write!(md, " {:.0} |", waits(predicted, true));
        }
        let _ = writeln!(
            md,
            " {:.0} % | {:.0} % |",
            100.0 * share(predicted, user, origin, predicted_mid, cpus),
            100.0 * share(predicted, user, predicted_mid, predicted_end, cpus),
        );
    }
    let a = agreement(real, predicted, &run.overlaps);
    let gaps = start_gaps(real, predicted);
    let letters = experiment
        .users
        .iter()
        .map(|u| format!("{} {u}", initial(u)))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        md,
        "\nStart order ({letters}; ties by job id):\n\n```text\n{}```\n",
        start_orders(real, predicted)
    );
    let _ = writeln!(
        md,
        "Order agreement with the replay: {} of {} pairs of jobs of different users ({} of the {} contested pairs, both waiting at once in one partition or two sharing nodes); mean |real − predicted start| {:.1} s, median {:.0} s.\n",
        percent(a.alike, a.pairs),
        a.pairs,
        percent(a.contested_alike, a.contested),
        a.contested,
        mean(gaps.iter().copied()),
        median(gaps),
    );
    timed_out_line(md, real, predicted);
}

/// What the replay made of the jobs Slurm killed at their time limit: their start errors
/// beside every job's, and how many ran as long in the replay as in the real run.
fn timed_out_line(md: &mut String, real: &[Job], predicted: &[Job]) {
    let (killed, replayed): (Vec<Job>, Vec<Job>) = (real.iter().zip(predicted))
        .filter(|(r, _)| r.timed_out)
        .map(|(r, p)| (r.clone(), p.clone()))
        .unzip();
    if killed.is_empty() {
        return;
    }
    let gaps = start_gaps(&killed, &replayed);
    let all = start_gaps(real, predicted);
    let ran = |j: &Job| j.end - j.start;
    let as_long = (killed.iter().zip(&replayed))
        .filter(|(r, p)| (ran(r) - ran(p)).abs() <= TIE_S)
        .count();
    let (shortest, longest) = span(killed.iter().map(ran));
    let _ = writeln!(
        md,
        "Jobs Slurm killed at their time limit (`TIMEOUT`): {}, which ran {shortest:.0}–{longest:.0} s; median / p90 |real − predicted start| {:.0} / {:.0} s (every job: {:.0} / {:.0} s); {as_long} of them ran as long in the replay.\n",
        killed.len(),
        median(gaps.clone()),
        p90(gaps),
        median(all.clone()),
        p90(all),
    );
}

/// A user's letter in the start orders.
fn initial(user: &str) -> char {
    user.chars().next().unwrap_or('?').to_ascii_uppercase()
}

/// The colour of the `i`-th user: the palette's eight, then grey.
fn colour(i: usize) -> Colour {
    if i < fairshare_report::svg::PALETTE.len() {
        Colour::Palette(i)
    } else {
        fairshare_report::svg::GREY
    }
}

/// Each user's share of the processors over `[origin, end]` in 10-s buckets, as an SVG chart.
fn share_plot(jobs: &[Job], origin: f64, end: f64, title: &str, experiment: &Experiment) -> String {
    let buckets = ((end - origin) / BUCKET_S).ceil() as usize;
    let series = experiment
        .users
        .iter()
        .enumerate()
        .map(|(i, user)| Series {
            label: user.clone(),
            colour: colour(i),
            // Each bucket a flat step, so that the line reads as the bucket's mean.
            points: (0..buckets)
                .flat_map(|b| {
                    let (from, to) = (b as f64 * BUCKET_S, (b + 1) as f64 * BUCKET_S);
                    let held = share(jobs, user, origin + from, origin + to, experiment.cpus);
                    [(from, held), (to, held)]
                })
                .collect(),
        })
        .collect();
    line_chart(&LineChart {
        size: (760, 300),
        x: Axis::new(&format!("{title}: seconds since the first submission"))
            .range(0.0, (buckets as f64 * BUCKET_S).max(BUCKET_S)),
        y: Axis::new(&format!("share of the {} CPUs, per 10 s", experiment.cpus)).range(0.0, 1.0),
        series,
        hline: None,
        markers: false,
        legend: true,
    })
}

/// The processors each user's jobs waited for over `[origin, end]`, sampled every 10 s (the
/// jobs submitted and not yet started at each sample), as an SVG chart.
fn queue_plot(jobs: &[Job], origin: f64, end: f64, title: &str, experiment: &Experiment) -> String {
    let samples = ((end - origin) / BUCKET_S).ceil() as usize + 1;
    let series = experiment
        .users
        .iter()
        .enumerate()
        .map(|(i, user)| Series {
            label: user.clone(),
            colour: colour(i),
            points: (0..samples)
                .map(|k| {
                    let t = origin + k as f64 * BUCKET_S;
                    let waiting = jobs
                        .iter()
                        .filter(|j| &j.user == user && j.submit <= t && t < j.start);
                    (k as f64 * BUCKET_S, waiting.map(|j| j.cpus).sum())
                })
                .collect(),
        })
        .collect();
    line_chart(&LineChart {
        size: (760, 300),
        x: Axis::new(&format!("{title}: seconds since the first submission")),
        y: Axis::new("processors waiting").with_zero(),
        series,
        hline: None,
        markers: false,
        legend: true,
    })
}
