//! The readers of a run folder's files: the sacct dump, the replay's predictions (the model's
//! and those with the loop's turns drawn) and the `sprio` samples, each as the jobs or
//! priorities the tables and plots compare.

use crate::{Cancellations, Job, TIE_S};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The predictions of a run folder's `replay-turns-SEED.json` files (seeds in order) for the
/// jobs of `dumped` that ran.
pub(super) fn read_drawn_turns(dir: &Path, dumped: &[Job]) -> Result<Vec<Vec<Job>>, String> {
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

/// The samples of `sprio.log`: a `# TIME` line, then `id|user|priority|fairshare|site` lines.
pub(super) fn read_sprio(text: &str) -> Vec<BTreeMap<u64, f64>> {
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
pub(super) fn read_sacct(
    path: &Path,
    stream_cpus: Option<f64>,
) -> Result<(Vec<Job>, bool), String> {
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
pub(super) fn read_replay(path: &Path, real: &[Job]) -> Result<Vec<Option<Job>>, String> {
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
pub(super) fn ran(
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
