//! The tables and plots of the Slurm adapter's experiment (`scripts/slurm-experiment.sh`,
//! `docs/slurm-experiment.md`): one workload run on the one-host Slurm under Slurm's own Fair
//! Tree (`slurm`) and under fairshare's SDRF (`sdrf`) and Processor-Equivalent Fair Tree (`pe`)
//! through `fairshare slurm watch`.
//!
//! ```text
//! cargo run -p fairshare-report --features slurm --example slurm_experiment -- OUT_DIR
//! ```
//!
//! For every run folder `OUT_DIR/RUN` with a `sacct.txt` (the dump the script takes, in the
//! format `fairshare replay` reads) and a `replay.json` (`fairshare replay … --gantt … --json`,
//! whose `policies[0].jobs[]` lists each job's predicted start), it writes:
//!
//! - `OUT_DIR/results.md`: per run, each user's jobs, mean wait (all jobs, and the stream's
//!   jobs alone), longest wait, share of the machine (the user's CPU-seconds over 8 CPUs × the
//!   time) in the first and second halves of the run (from the first submission to the last
//!   end), and the replay's predicted mean wait; the order in which jobs started, really and
//!   as predicted; and how well the prediction orders them: the fraction of pairs of jobs of
//!   different users that the replay starts in the same order as Slurm did, over all such
//!   pairs (ties in Slurm's order left out, ties in the prediction counted half) and over the
//!   contested ones (both jobs waiting at once in the real run, so that their order was a
//!   choice), and the mean absolute difference between each job's real and predicted start;
//!   a first table compares the runs, with how long each took (`RUN/took`, seconds from the
//!   fresh cluster to the dump, as the script writes it).
//! - `OUT_DIR/RUN.svg`: each user's share of the 8 CPUs over time, in 10-s buckets, as run;
//!   `OUT_DIR/RUN-replay.svg`: the same as the replay predicts it.
//!
//! Times are read as UTC, as the script dumps them (`TZ=UTC sacct …`), to the second.

use fairshare_report::svg::{line_chart, Axis, Colour, LineChart, Series};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The runs, in the order the tables show them, each with what it is.
const RUNS: [(&str, &str); 3] = [
    (
        "slurm",
        "Slurm's own Fair Tree (PriorityWeightFairshare=100000, no adapter)",
    ),
    (
        "sdrf",
        "fairshare `sdrf:delta=0.998845` through `fairshare slurm watch --interval 5s`",
    ),
    (
        "pe",
        "fairshare `fairshare:usage=pe,decay=half-life:600,refresh=5` through `fairshare slurm watch --interval 5s`",
    ),
];

/// The users of the workload, in the order of the tables and plots.
const USERS: [&str; 3] = ["alice", "bob", "carol"];

/// The machine's processors.
const CPUS: f64 = 8.0;

/// The processors of each of the stream's jobs (alice's fill asks for 4).
const STREAM_CPUS: f64 = 2.0;

/// Width of a plot's time bucket, seconds.
const BUCKET_S: f64 = 10.0;

/// Two starts closer than this are a tie (sacct writes whole seconds).
const TIE_S: f64 = 0.5;

/// One job, times in seconds after the Unix epoch.
#[derive(Debug, Clone)]
struct Job {
    user: String,
    /// Whether it is one of the stream's 2-CPU jobs (not alice's 4-CPU fill).
    stream: bool,
    submit: f64,
    start: f64,
    end: f64,
    cpus: f64,
}

impl Job {
    fn wait(&self) -> f64 {
        self.start - self.submit
    }
}

/// A run's jobs as they ran and as the replay predicts them (the same jobs, the same order).
struct Run {
    name: &'static str,
    about: &'static str,
    real: Vec<Job>,
    predicted: Vec<Job>,
    /// Seconds the run took, fresh cluster to dump, from the script (`took`), if it wrote them.
    seconds: Option<f64>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: slurm_experiment OUT_DIR")?,
    );
    let mut runs = Vec::new();
    for (name, about) in RUNS {
        let dir = out.join(name);
        if !dir.join("sacct.txt").exists() {
            continue;
        }
        let real = read_sacct(&dir.join("sacct.txt"))?;
        let predicted = read_replay(&dir.join("replay.json"), &real)?;
        let seconds = std::fs::read_to_string(dir.join("took"))
            .ok()
            .and_then(|s| s.trim().parse().ok());
        runs.push(Run {
            name,
            about,
            real,
            predicted,
            seconds,
        });
    }
    if runs.is_empty() {
        return Err(format!("no run in {} (expected RUN/sacct.txt)", out.display()).into());
    }
    let mut md = String::new();
    summary(&mut md, &runs);
    for run in &runs {
        section(&mut md, run);
        let origin = first_submit(&run.real);
        let end = last_end(&run.real).max(last_end(&run.predicted));
        let title = format!("{}, as run", run.name);
        std::fs::write(
            out.join(format!("{}.svg", run.name)),
            plot(&run.real, origin, end, &title),
        )?;
        let title = format!("{}, as the replay predicts", run.name);
        std::fs::write(
            out.join(format!("{}-replay.svg", run.name)),
            plot(&run.predicted, origin, end, &title),
        )?;
    }
    std::fs::write(out.join("results.md"), &md)?;
    print!("{md}");
    Ok(())
}

/// The jobs of a `sacct --parsable2` dump with a header (columns found by name; job steps
/// such as `12.batch` left out): user, submit, start, end and `cpu=` of `AllocTRES`.
fn read_sacct(path: &Path) -> Result<Vec<Job>, String> {
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
        let cpus = f[tres]
            .split(',')
            .find_map(|kv| kv.strip_prefix("cpu="))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0.0);
        jobs.push(Job {
            user: f[user].to_string(),
            stream: cpus <= STREAM_CPUS,
            submit: at(submit)?,
            start: at(start)?,
            end: at(end)?,
            cpus,
        });
    }
    Ok(jobs)
}

/// A time as sacct prints it (`2026-11-24T07:15:44`), read as UTC, in seconds.
fn time(text: &str) -> Option<f64> {
    let t = humantime::parse_rfc3339_weak(text).ok()?;
    Some(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs_f64())
}

/// The replay's jobs (`policies[0].jobs[]`), in the order of `real`: the replay numbers jobs
/// by their rank in the dump, as `read_sacct` lists them, and every one must be the real
/// job's user and submission.
fn read_replay(path: &Path, real: &[Job]) -> Result<Vec<Job>, String> {
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
        let user = users[j["user"].as_u64().ok_or("a job without user")? as usize];
        let submit = secs(&j["submit"]).ok_or("a job without submit")?;
        if user != job.user || (submit - job.submit).abs() > TIE_S {
            return Err(format!(
                "replay job {id} ({user}) is not the dump's ({})",
                job.user
            ));
        }
        predicted[id] = Some(Job {
            start: secs(&j["start"]).ok_or("a job without start")?,
            end: secs(&j["end"]).ok_or("a job without end")?,
            ..job.clone()
        });
    }
    predicted
        .into_iter()
        .enumerate()
        .map(|(i, j)| j.ok_or(format!("job {i} is not in the replay's window")))
        .collect()
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

/// `user`'s CPU-seconds within `[from, to)` over the machine's (8 CPUs × the length).
fn share(jobs: &[Job], user: &str, from: f64, to: f64) -> f64 {
    let held: f64 = jobs
        .iter()
        .filter(|j| j.user == user)
        .map(|j| (j.end.min(to) - j.start.max(from)).max(0.0) * j.cpus)
        .sum();
    held / (CPUS * (to - from))
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

fn agreement(real: &[Job], predicted: &[Job]) -> Agreement {
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
            if real[i].submit < first_start && real[j].submit < first_start {
                a.contested += 1;
                a.contested_alike += score;
            }
        }
    }
    a
}

/// The jobs' users in the order they started (ties by job order), one letter each, in
/// groups of ten.
fn start_order(jobs: &[Job]) -> String {
    let mut order: Vec<(f64, usize)> = jobs.iter().enumerate().map(|(i, j)| (j.start, i)).collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let letters: Vec<String> = order
        .iter()
        .map(|&(_, i)| {
            let user = &jobs[i].user;
            user.chars()
                .next()
                .unwrap_or('?')
                .to_ascii_uppercase()
                .to_string()
        })
        .collect();
    letters
        .chunks(10)
        .map(|c| c.concat())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The comparison of all runs in one table.
fn summary(md: &mut String, runs: &[Run]) {
    md.push_str("# Slurm adapter experiment: results\n\n");
    md.push_str("Mean wait of the stream's jobs (s), real and as the replay predicts; order agreement with the replay over pairs of jobs of different users (all pairs / contested pairs); mean |real − predicted start|.\n\n");
    md.push_str("| run | alice | bob | carol | replay: alice | bob | carol | order agreement | contested | mean abs. start diff. | run took |\n");
    md.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for run in runs {
        let waits = |jobs: &[Job]| {
            USERS
                .map(|u| {
                    let w = jobs
                        .iter()
                        .filter(|j| j.user == u && j.stream)
                        .map(Job::wait);
                    format!("{:.0}", mean(w))
                })
                .join(" | ")
        };
        let a = agreement(&run.real, &run.predicted);
        let diff = mean(
            run.real
                .iter()
                .zip(&run.predicted)
                .map(|(r, p)| (r.start - p.start).abs()),
        );
        let took = run
            .seconds
            .map(|s| format!("{:.0} min {:02.0} s", (s / 60.0).floor(), s % 60.0))
            .unwrap_or_else(|| "–".into());
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.0} % | {:.0} % | {:.1} s | {took} |",
            run.name,
            waits(&run.real),
            waits(&run.predicted),
            100.0 * a.alike / a.pairs.max(1) as f64,
            100.0 * a.contested_alike / a.contested.max(1) as f64,
            diff,
        );
    }
    md.push('\n');
}

/// One run's table, start orders and agreement.
fn section(md: &mut String, run: &Run) {
    let (real, predicted) = (&run.real, &run.predicted);
    let origin = first_submit(real);
    let end = last_end(real);
    let mid = (origin + end) / 2.0;
    let _ = writeln!(md, "## {}: {}\n", run.name, run.about);
    let _ = writeln!(
        md,
        "From the first submission to the last end: {:.0} s (halves split at {:.0} s).\n",
        end - origin,
        mid - origin
    );
    md.push_str("| user | jobs | mean wait (s) | stream's mean wait (s) | longest wait (s) | share 1st half | share 2nd half | replay: stream's mean wait (s) | replay: share 1st half | 2nd half |\n");
    md.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    let predicted_end = last_end(predicted);
    let predicted_mid = (origin + predicted_end) / 2.0;
    for user in USERS {
        let mine: Vec<&Job> = real.iter().filter(|j| j.user == user).collect();
        let stream = |jobs: &[Job]| {
            mean(
                jobs.iter()
                    .filter(|j| j.user == user && j.stream)
                    .map(Job::wait),
            )
        };
        let longest = mine.iter().map(|j| j.wait()).fold(0.0, f64::max);
        let _ = writeln!(
            md,
            "| {user} | {} | {:.0} | {:.0} | {:.0} | {:.0} % | {:.0} % | {:.0} | {:.0} % | {:.0} % |",
            mine.len(),
            mean(mine.iter().map(|j| j.wait())),
            stream(real),
            longest,
            100.0 * share(real, user, origin, mid),
            100.0 * share(real, user, mid, end),
            stream(predicted),
            100.0 * share(predicted, user, origin, predicted_mid),
            100.0 * share(predicted, user, predicted_mid, predicted_end),
        );
    }
    let a = agreement(real, predicted);
    let diff = mean(
        real.iter()
            .zip(predicted)
            .map(|(r, p)| (r.start - p.start).abs()),
    );
    let _ = writeln!(
        md,
        "\nStart order (A alice, B bob, C carol; ties by job id):\n\n```text\nreal    {}\nreplay  {}\n```\n",
        start_order(real),
        start_order(predicted)
    );
    let _ = writeln!(
        md,
        "Order agreement with the replay: {:.0} % of {} pairs of jobs of different users ({:.0} % of the {} contested pairs, both waiting at once); mean |real − predicted start| {:.1} s.\n",
        100.0 * a.alike / a.pairs.max(1) as f64,
        a.pairs,
        100.0 * a.contested_alike / a.contested.max(1) as f64,
        a.contested,
        diff
    );
}

/// Each user's share of the 8 CPUs over `[origin, end]` in 10-s buckets, as an SVG chart.
fn plot(jobs: &[Job], origin: f64, end: f64, title: &str) -> String {
    let buckets = ((end - origin) / BUCKET_S).ceil() as usize;
    let mut by_user: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for user in USERS {
        // Each bucket a flat step, so that the line reads as the bucket's mean.
        let points = (0..buckets)
            .flat_map(|b| {
                let (from, to) = (b as f64 * BUCKET_S, (b + 1) as f64 * BUCKET_S);
                let held = share(jobs, user, origin + from, origin + to);
                [(from, held), (to, held)]
            })
            .collect();
        by_user.insert(user, points);
    }
    let series = USERS
        .iter()
        .enumerate()
        .map(|(i, user)| Series {
            label: user.to_string(),
            colour: Colour::Palette(i),
            points: by_user.remove(user).unwrap_or_default(),
        })
        .collect();
    line_chart(&LineChart {
        size: (760, 300),
        x: Axis::new(&format!("{title}: seconds since the first submission"))
            .range(0.0, (buckets as f64 * BUCKET_S).max(BUCKET_S)),
        y: Axis::new("share of the 8 CPUs, per 10 s").range(0.0, 1.0),
        series,
        hline: None,
        markers: false,
        legend: true,
    })
}
