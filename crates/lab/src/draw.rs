//! A test workload drawn from a real trace: a window of its jobs, with their sizes, run times,
//! time limits and users, made small enough to submit to a test cluster in minutes.
//!
//! Experiments against a real batch system (scripts/slurm-experiment.sh on the many-node
//! Slurm) need workloads that look like a site's, not like a hand-written pattern, yet finish
//! in minutes on a hundred processors. A [`Draw`] says how the window is taken and shrunk; the
//! rule is one a reader can state in a sentence (see [`draw`]), and the [`Drawn`] plan says
//! what the shrinking did (jobs capped, run times clamped, the load offered).

use crate::LabError;
use fairshare_trace::TaskSource;
use std::collections::HashMap;

/// How far past its limit a job its limit killed in the trace is made to run at least, seconds.
const OVERRUN_S: u32 = 30;

/// Whether a job that ran `runtime` under a `walltime` (microseconds both) was killed by its
/// limit: it ran past it, or it failed within 1 % of it.
fn killed_at_limit(runtime: u64, walltime: u64, failed: bool) -> bool {
    runtime > walltime || (failed && runtime as f64 >= 0.99 * walltime as f64)
}

/// How a workload is drawn from a trace and shrunk to a test cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Draw {
    /// Jobs of the trace passed over before the window starts.
    pub skip: usize,
    /// Jobs in the window.
    pub jobs: usize,
    /// The test cluster's users: the window's users, busiest first, go to them in turn.
    pub users: Vec<String>,
    /// The test partition's processors, which the offered load is measured against.
    pub cpus: u32,
    /// A job's processors are capped here.
    pub max_cpus: u32,
    /// A job's memory per processor is capped here, in MB.
    pub max_mem_per_cpu_mb: u64,
    /// What the window's shortest run becomes, seconds.
    pub min_run_s: u32,
    /// What the window's longest run becomes, seconds.
    pub max_run_s: u32,
    /// The load offered while jobs arrive (processor-seconds asked over processor-seconds
    /// there are): the gaps between submissions are scaled to give it.
    pub load: f64,
}

/// One job of the plan: when to submit it and what it asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    /// Seconds after the plan's start.
    pub at_s: f64,
    /// The test user who submits it.
    pub user: String,
    /// Processors.
    pub cpus: u32,
    /// Memory per processor in MB; 0 when the trace records none (the cluster's default).
    pub mem_per_cpu_mb: u64,
    /// How long it runs, seconds.
    pub run_s: u32,
    /// Its time limit in whole minutes (at least 1); shorter than the run when the trace's job
    /// was killed by its own limit, so that it is killed as it was.
    pub limit_min: u32,
    /// The trace's job id.
    pub trace_id: u64,
    /// The trace's user.
    pub trace_user: String,
}

/// A drawn plan and what shrinking it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    /// The jobs, in submission order.
    pub submissions: Vec<Submission>,
    /// Seconds from the first submission to the last.
    pub span_s: f64,
    /// The window's span in the trace, seconds.
    pub trace_span_s: f64,
    /// How many times faster the submissions come than in the trace.
    pub arrival_speedup: f64,
    /// Processor-seconds asked for over the partition's processor-seconds between the first
    /// and last submission (infinite when they all come at once).
    pub offered_load: f64,
    /// Jobs whose processors were capped.
    pub cpus_capped: usize,
    /// Jobs that run past their limit (killed at it by the cluster).
    pub over_limit: usize,
    /// Each trace user with its jobs in the window and the test user it became, busiest first.
    pub users: Vec<(String, usize, String)>,
}

/// Draws `spec.jobs` jobs from `source` after skipping `spec.skip`, in the trace's order:
///
/// - processors as recorded, capped at `max_cpus`; memory per processor as recorded, capped at
///   `max_mem_per_cpu_mb`;
/// - run times mapped on a logarithmic scale, the window's shortest to `min_run_s` and its
///   longest to `max_run_s` (a trace's runs span seconds to days: a linear scale would leave
///   most of them at one end), time limits (the trace's walltime, or the run where it has
///   none) by the same map, rounded up to whole minutes; a job the trace's limit killed (it
///   outran its limit, or it failed within 1 % of it: logs that stop a job at its limit, as
///   KTH's, record it failed a few seconds short of it) gets its limit rounded down instead (at
///   least a minute) and runs at least 30 s past it, so that the cluster kills it as the
///   trace's was (a walltime of 0 is none);
/// - submission times kept in the trace's order and proportions, compressed so that the jobs'
///   processor-seconds (each until its run ends or its limit kills it) are `load` times the
///   partition's over the span of submissions;
/// - the window's users by number of jobs (first seen first among equals) dealt to `users`
///   in turn.
pub fn draw(source: &mut dyn TaskSource, spec: &Draw) -> Result<Drawn, LabError> {
    check(spec)?;
    let mem = memory_in_mb(source);
    let mut window = Vec::with_capacity(spec.jobs);
    let mut read = 0;
    for task in &mut *source {
        let task = task?; // a record that stops a strict read stops the draw, skipped or not
        read += 1;
        if read > spec.skip {
            window.push(task);
        }
        if window.len() == spec.jobs {
            break;
        }
    }
    if window.len() < spec.jobs {
        return Err(LabError::Unusable(format!(
            "the trace has {} jobs after skipping {}; {} asked for",
            window.len(),
            spec.skip,
            spec.jobs
        )));
    }
    let names = source.users().to_vec();
    let test_user = deal(&window, &names, &spec.users);
    let first = window.iter().map(|t| t.submit.0).min().unwrap_or(0);
    let last = window.iter().map(|t| t.submit.0).max().unwrap_or(0);
    let trace_span_s = (last - first) as f64 / 1e6;
    let mut drawn = Drawn {
        submissions: Vec::with_capacity(window.len()),
        span_s: 0.0,
        trace_span_s,
        arrival_speedup: f64::INFINITY,
        offered_load: f64::INFINITY,
        cpus_capped: 0,
        over_limit: 0,
        users: test_user.order.clone(),
    };
    let shrink = LogMap::new(&window, spec);
    let mut work = 0.0;
    for task in &window {
        let recorded_cpus = task.demand.first().copied().unwrap_or(1.0).ceil().max(1.0);
        let cpus = (recorded_cpus as u32).min(spec.max_cpus);
        drawn.cpus_capped += usize::from(recorded_cpus > spec.max_cpus as f64);
        let mem_per_cpu_mb = mem
            .and_then(|(m, to_mb)| Some(task.demand.get(m)? * to_mb))
            .map(|mb| (mb / recorded_cpus).ceil() as u64)
            .unwrap_or(0)
            .min(spec.max_mem_per_cpu_mb);
        let mut run_s = shrink.apply(task.runtime).round() as u32;
        // A walltime of 0 is none (Slurm's --time=0, and logs that write 0 for unknown).
        let walltime = task.walltime.filter(|&w| w > 0);
        let killed = walltime.is_some_and(|w| killed_at_limit(task.runtime, w, task.failed));
        // A walltime far beyond the window's runs maps far beyond them: a year at most.
        let limit_s = walltime.map_or(0.0, |w| shrink.apply(w).min(LONGEST_LIMIT_S));
        let limit_min = if killed {
            ((limit_s / 60.0).floor() as u32).max(1)
        } else {
            ((limit_s.max(run_s as f64) / 60.0).ceil() as u32).max(1)
        };
        if killed {
            run_s = run_s.max(limit_min * 60 + OVERRUN_S);
            drawn.over_limit += 1;
        }
        // What the job asks of the partition: until its limit, where the cluster kills it.
        work += cpus as f64 * run_s.min(limit_min * 60) as f64;
        drawn.submissions.push(Submission {
            at_s: (task.submit.0 - first) as f64 / 1e6,
            user: test_user.of[&task.user].clone(),
            cpus,
            mem_per_cpu_mb,
            run_s,
            limit_min,
            trace_id: task.id,
            trace_user: names[task.user as usize].clone(),
        });
    }
    if trace_span_s > 0.0 {
        drawn.span_s = work / (spec.cpus as f64 * spec.load);
        drawn.arrival_speedup = trace_span_s / drawn.span_s;
        drawn.offered_load = spec.load;
        for s in &mut drawn.submissions {
            s.at_s /= drawn.arrival_speedup;
        }
    }
    drawn.submissions.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    Ok(drawn)
}

/// The map of a window's run times, microseconds, onto the plan's, seconds: logarithmic,
/// the shortest run (at least a second) to the shortest plan run, the longest to the longest.
struct LogMap {
    /// ln of the window's shortest run, seconds.
    low: f64,
    /// ln of the window's longest over its shortest (0 when all runs are equal).
    range: f64,
    /// The plan's shortest run, seconds.
    min_s: f64,
    /// ln of the plan's longest run over its shortest.
    ratio: f64,
}

impl LogMap {
    fn new(window: &[fairshare_core::model::Task], spec: &Draw) -> LogMap {
        let secs = |t: &fairshare_core::model::Task| (t.runtime as f64 / 1e6).max(1.0);
        let low = window.iter().map(secs).fold(f64::INFINITY, f64::min).ln();
        let high = window.iter().map(secs).fold(1.0, f64::max).ln();
        LogMap {
            low,
            range: high - low,
            min_s: spec.min_run_s as f64,
            ratio: (spec.max_run_s as f64 / spec.min_run_s as f64).ln(),
        }
    }

    /// The plan's seconds for `micros` of the trace (beyond the longest run for a limit
    /// longer than it, never below the shortest).
    fn apply(&self, micros: u64) -> f64 {
        if self.range == 0.0 {
            return self.min_s;
        }
        let at = ((micros as f64 / 1e6).max(1.0).ln() - self.low).max(0.0) / self.range;
        self.min_s * (self.ratio * at).exp()
    }
}

/// The memory resource of `source` and what turns its unit into MB: KB (SWF, Slurm dumps) and
/// MiB (Alibaba) convert; any other unit (Google's fractions of a machine) says nothing a test
/// cluster can ask for, so jobs then ask for none.
fn memory_in_mb(source: &dyn TaskSource) -> Option<(usize, f64)> {
    let m = source.resources().iter().position(|r| r == "mem")?;
    match source.units().get(m).map(String::as_str) {
        Some("KB") => Some((m, 1.0 / 1024.0)),
        Some("MiB" | "MB") => Some((m, 1.0)),
        _ => None,
    }
}

/// The longest run a plan may ask for, seconds (a week: far beyond any test, and far from
/// overflowing the plan's seconds).
const LONGEST_RUN_S: u32 = 604_800;

/// The longest time limit a plan gives, seconds (a year: Slurm takes it, and minutes of it
/// times 60 stay far inside the plan's seconds).
const LONGEST_LIMIT_S: f64 = 31_536_000.0;

/// Refuses a spec that cannot draw anything.
fn check(spec: &Draw) -> Result<(), LabError> {
    let fail = |what: &str| Err(LabError::Unusable(format!("drawing a workload: {what}")));
    if spec.jobs == 0 {
        return fail("at least one job is needed");
    }
    if spec.users.is_empty() {
        return fail("at least one test user is needed");
    }
    if let Some(bad) = (spec.users.iter())
        .find(|u| u.is_empty() || u.contains(|c: char| c == '|' || c.is_whitespace()))
    {
        return fail(&format!(
            "test user {bad:?} is not a user name (empty, or with a space or '|')"
        ));
    }
    if spec.cpus == 0 || spec.max_cpus == 0 {
        return fail("the partition's processors and a job's cap must be at least 1");
    }
    if spec.min_run_s == 0 || spec.min_run_s > spec.max_run_s || spec.max_run_s > LONGEST_RUN_S {
        return fail("runs must map onto a range from 1 s to a week (shortest ≤ longest)");
    }
    if !(spec.load.is_finite() && spec.load > 0.0) {
        return fail("the offered load must be a positive number");
    }
    Ok(())
}

/// Trace users dealt to test users.
struct Dealt {
    /// Trace user index → test user.
    of: HashMap<u32, String>,
    /// Trace user name, jobs in the window, test user; busiest first.
    order: Vec<(String, usize, String)>,
}

/// Deals the window's users, by number of jobs (first seen first among equals), to `users`.
fn deal(window: &[fairshare_core::model::Task], names: &[String], users: &[String]) -> Dealt {
    let mut seen: Vec<(u32, usize)> = Vec::new();
    for task in window {
        match seen.iter_mut().find(|(u, _)| *u == task.user) {
            Some((_, n)) => *n += 1,
            None => seen.push((task.user, 1)),
        }
    }
    seen.sort_by_key(|&(_, jobs)| std::cmp::Reverse(jobs)); // stable: first seen first among equals
    let mut dealt = Dealt {
        of: HashMap::new(),
        order: Vec::new(),
    };
    for (i, (user, jobs)) in seen.into_iter().enumerate() {
        let to = users[i % users.len()].clone();
        dealt.of.insert(user, to.clone());
        dealt.order.push((names[user as usize].clone(), jobs, to));
    }
    dealt
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairshare_trace::{open, Format, ReadOptions};
    use std::io::Write;

    /// An SWF of `lines` (submit, runtime, cpus, walltime, memory KB per cpu, user).
    fn swf(lines: &[(u64, u64, u32, i64, i64, u32)]) -> tempfile::NamedTempFile {
        let mut file = tempfile::Builder::new().suffix(".swf").tempfile().unwrap();
        for (i, (submit, run, cpus, wall, mem, user)) in lines.iter().enumerate() {
            writeln!(
                file,
                "{} {submit} 0 {run} {cpus} -1 -1 {cpus} {wall} {mem} 1 {user} 1 -1 1 1 -1 -1",
                i + 1
            )
            .unwrap();
        }
        file
    }

    fn spec() -> Draw {
        Draw {
            skip: 0,
            jobs: 4,
            users: vec!["alice".into(), "bob".into()],
            cpus: 10,
            max_cpus: 8,
            max_mem_per_cpu_mb: 2000,
            min_run_s: 10,
            max_run_s: 300,
            load: 2.0,
        }
    }

    fn drawn(file: &tempfile::NamedTempFile, spec: &Draw) -> Result<Drawn, LabError> {
        let mut source = open(
            &[file.path().to_path_buf()],
            Some(Format::SWF),
            &ReadOptions::default(),
        )?;
        draw(source.as_mut(), spec)
    }

    #[test]
    fn sizes_times_and_users_are_shrunk_as_documented() {
        let file = swf(&[
            (0, 1000, 4, 1200, 1024 * 1000, 7),
            (100, 50, 16, 600, 1024 * 4000, 9),
            (200, 4000, 2, 3000, 1024 * 300, 7),
            (400, 6000, 1, -1, 1024 * 500, 8),
            (500, 10, 1, 60, 1024, 7),
        ]);
        let d = drawn(&file, &spec()).unwrap();
        let s = &d.submissions;
        assert_eq!(s.len(), 4);
        // Runs on a log scale, 50 s → 10 s and 6000 s → 300 s: 1000 s → 10·30^(ln 20/ln 120)
        // = 84 s; 4000 s → 225 s; its limit, 3000 s → 183 s, rounded down to 3 min as it
        // outran it, and it still runs 225 s, past it.
        assert_eq!(
            s.iter().map(|s| s.run_s).collect::<Vec<_>>(),
            [84, 10, 225, 300]
        );
        assert_eq!(d.over_limit, 1);
        // Limits: 1200 s → 96 s → 2 min; 600 s → 58 s → 1; 3 min; no walltime → its run, 5.
        assert_eq!(
            s.iter().map(|s| s.limit_min).collect::<Vec<_>>(),
            [2, 1, 3, 5]
        );
        assert_eq!(s.iter().map(|s| s.cpus).collect::<Vec<_>>(), [4, 8, 2, 1]);
        assert_eq!(d.cpus_capped, 1);
        // Memory: 1000 MB per CPU; 4000 capped at 2000; 300; 500.
        assert_eq!(
            s.iter().map(|s| s.mem_per_cpu_mb).collect::<Vec<_>>(),
            [1000, 2000, 300, 500]
        );
        // User 7 has two jobs, 9 and 8 one each (9 first seen): 7 → alice, 9 → bob, 8 → alice.
        assert_eq!(
            s.iter().map(|s| s.user.as_str()).collect::<Vec<_>>(),
            ["alice", "bob", "alice", "alice"]
        );
        // Work 4·84 + 8·10 + 2·180 (killed at its 3-minute limit) + 1·300 = 1076 CPU-s at
        // load 2 on 10 CPUs: 53.8 s of submissions for the trace's 400 s, its proportions kept.
        assert!((d.span_s - 53.8).abs() < 1e-9);
        assert!((d.arrival_speedup - 400.0 / 53.8).abs() < 1e-9);
        let at: Vec<f64> = s.iter().map(|s| s.at_s).collect();
        for (a, want) in at.iter().zip([0.0, 100.0, 200.0, 400.0]) {
            assert!((a - want * 53.8 / 400.0).abs() < 1e-9, "{at:?}");
        }
    }

    #[test]
    fn a_job_that_outran_its_limit_outruns_it_again() {
        let file = swf(&[(0, 3000, 1, 1200, -1, 1)]);
        let d = drawn(&file, &Draw { jobs: 1, ..spec() }).unwrap();
        // One run: everything maps to the shortest, 10 s; the limit rounds down to nothing and
        // is raised to a minute, and the run to 30 s past it, so that it is killed at its
        // limit as in the trace.
        assert_eq!(
            (d.submissions[0].run_s, d.submissions[0].limit_min),
            (90, 1)
        );
        assert_eq!(d.over_limit, 1);
    }

    #[test]
    fn a_job_that_failed_at_its_limit_was_killed_by_it() {
        // Runs of 995 s under limits of 1000 s (99.5 %): failed (status 0), completed (1);
        // a run of 500 s failed; a run of 1000 s that failed exactly at its limit.
        let mut file = tempfile::Builder::new().suffix(".swf").tempfile().unwrap();
        for (i, (run, status)) in [(995, 0), (995, 1), (500, 0), (1000, 0)].iter().enumerate() {
            let id = i + 1;
            writeln!(
                file,
                "{id} {id} 0 {run} 1 -1 -1 1 1000 -1 {status} 1 1 -1 1 1 -1 -1"
            )
            .unwrap();
        }
        let d = drawn(&file, &Draw { jobs: 4, ..spec() }).unwrap();
        assert_eq!(d.over_limit, 2);
        let over: Vec<bool> = d
            .submissions
            .iter()
            .map(|s| s.run_s > s.limit_min * 60)
            .collect();
        assert_eq!(over, [true, false, false, true]);
    }

    #[test]
    fn a_walltime_far_beyond_every_run_is_held_to_a_year() {
        // Runs of 100 s and 200 s, a walltime of 30 years: its place on the log scale is far
        // beyond the longest run.
        let file = swf(&[(0, 100, 1, 1_000_000_000, -1, 1), (10, 200, 1, 300, -1, 1)]);
        let d = drawn(&file, &Draw { jobs: 2, ..spec() }).unwrap();
        assert_eq!(d.submissions[0].limit_min, 525_600);
    }

    #[test]
    fn a_walltime_of_zero_is_none() {
        let file = swf(&[(0, 3000, 1, 0, -1, 1), (10, 30, 1, 0, -1, 1)]);
        let d = drawn(&file, &Draw { jobs: 2, ..spec() }).unwrap();
        // Not outrun: each job's limit is its run, rounded up to a minute.
        assert_eq!(d.over_limit, 0);
        let limits: Vec<u32> = d.submissions.iter().map(|s| s.limit_min).collect();
        assert_eq!(limits, [5, 1]);
    }

    #[test]
    fn too_short_a_trace_and_bad_specs_are_refused() {
        let file = swf(&[(0, 100, 1, -1, -1, 1)]);
        let refused = |spec: Draw| drawn(&file, &spec).unwrap_err().to_string();
        let err = refused(spec());
        assert!(
            err.contains("has 1 jobs after skipping 0; 4 asked for"),
            "{err}"
        );
        let err = refused(Draw {
            load: 0.0,
            ..spec()
        });
        assert!(err.contains("offered load"), "{err}");
        let err = refused(Draw {
            users: vec![],
            ..spec()
        });
        assert!(err.contains("test user"), "{err}");
        let users = vec!["ann".into(), "b n".into()];
        let err = refused(Draw { users, ..spec() });
        assert!(err.contains("\"b n\" is not a user name"), "{err}");
        let (min_run_s, max_run_s) = (50, 10);
        let err = refused(Draw {
            min_run_s,
            max_run_s,
            ..spec()
        });
        assert!(err.contains("shortest"), "{err}");
    }
}
