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

use fairshare_trace::slurm_conf::parse_slurm_conf;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod measure;
mod plots;
mod read;
mod tables;

use plots::write_plots;
use read::{ran, read_drawn_turns, read_replay, read_sacct, read_sprio};
use tables::{floor_section, section, summary, turns_section, waits_table};

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

/// What the one-node runs were, for folders written before the script wrote `about`.
fn one_node_about(name: &str) -> String {
    match name {
        "slurm" => "Slurm's own Fair Tree (PriorityWeightFairshare=100000, no adapter)".into(),
        "sdrf" => "fairshare `sdrf:delta=0.998845` through `fairshare slurm watch --interval 5s`".into(),
        "pe" => "fairshare `fairshare:usage=pe,decay=half-life:600,refresh=5` through `fairshare slurm watch --interval 5s`".into(),
        other => other.into(),
    }
}
