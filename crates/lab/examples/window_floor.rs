//! The floor of a window: how far two real runs of one workload agree on the jobs eligible
//! inside a window cut from them, by the very figures a what-if gives its baseline
//! ([`fairshare_lab::trust::Trust`]), each run standing in turn for the prediction of the
//! other: the contested pairs are the reference run's, so the two directions differ, and a
//! bundle's what-if is set against the direction in which its own run is the reference.
//! Jobs are matched by their order of submission (the i-th submitted in each run, over the
//! whole run's dump); a job that did not start in both is left out, and so is every job
//! eligible before its run's window opened, as a what-if leaves them out.
//!
//! ```text
//! cargo run -p fairshare-lab --example window_floor -- RUN1/sacct.txt OPENS1 RUN2/sacct.txt OPENS2
//! ```
//!
//! `OPENS1` and `OPENS2` are the moments each run's window opened (UTC, as a bundle's
//! manifest writes `since`); `-` opens it at the run's first submission.

use fairshare_core::model::{Task, Time};
use fairshare_lab::trust::{Compared, Trust};
use fairshare_lab::TraceSpec;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [first, opens_one, second, opens_two] = args.as_slice() else {
        return Err("usage: window_floor RUN1/sacct.txt OPENS1 RUN2/sacct.txt OPENS2".into());
    };
    let (users, one) = jobs(first)?;
    let (names, two) = jobs(second)?;
    if one.len() != two.len() {
        return Err(format!(
            "{} and {} jobs started: not one workload",
            one.len(),
            two.len()
        )
        .into());
    }
    let opens = |text: &str, jobs: &[Task]| match text {
        "-" => Ok(jobs.first().map_or(0.0, |j| seconds(j.submit))),
        text => Time::from_utc(text)
            .map(seconds)
            .ok_or(format!("{text:?} is not a UTC moment")),
    };
    let (opens_one, opens_two) = (opens(opens_one, &one)?, opens(opens_two, &two)?);
    let (one, two) = (
        (&one[..], opens_one, &users[..]),
        (&two[..], opens_two, &names[..]),
    );
    for (name, reference, prediction) in [
        ("run 1 predicted by run 2", one, two),
        ("run 2 predicted by run 1", two, one),
    ] {
        let trust = agreement(reference, prediction)?;
        println!(
            "{name}: {} jobs eligible inside both windows: contested order {:.1} % of {} pairs; users' mean waits within 10 % or 30 s: {} of {}",
            trust.jobs,
            100.0 * trust.contested_order.unwrap_or(f64::NAN),
            trust.contested_pairs,
            trust.users_within(),
            trust.users.len()
        );
    }
    Ok(())
}

/// One run: its jobs in order of submission, the moment its window opened, its users.
type Run<'a> = (&'a [Task], f64, &'a [String]);

/// How far the run `prediction` agrees with the run `reference`, each with the moment its
/// window opened, as a what-if's baseline agrees with its bundle's record: the contested
/// pairs are the reference's, so the two directions differ.
fn agreement(
    (reference, opens_reference, users): Run,
    (prediction, opens_prediction, names): Run,
) -> Result<Trust, Box<dyn std::error::Error>> {
    let mut compared = Vec::new();
    for (x, y) in reference.iter().zip(prediction) {
        let (user, other) = (&users[x.user as usize], &names[y.user as usize]);
        if user != other {
            return Err(format!(
                "job {} is {user}'s in one run and {other}'s in the other",
                x.id
            )
            .into());
        }
        if seconds(x.submit) < opens_reference || seconds(y.submit) < opens_prediction {
            continue;
        }
        let shift = seconds(y.submit) - seconds(x.submit);
        compared.push(Compared {
            user: x.user,
            partition: x.partition,
            submit: seconds(x.submit),
            recorded: seconds(x.start.unwrap_or(x.submit)),
            predicted: seconds(y.start.unwrap_or(y.submit)) - shift,
        });
    }
    let left_out = reference.len() - compared.len();
    Ok(Trust::of(&compared, left_out, users, &|a, b| a == b))
}

/// The users and the jobs that started in the dump at `path`, in order of submission.
fn jobs(path: &str) -> Result<(Vec<String>, Vec<Task>), Box<dyn std::error::Error>> {
    let mut source = TraceSpec::new(vec![PathBuf::from(path)]).open()?;
    let mut jobs = Vec::new();
    for task in source.by_ref() {
        let task = task?;
        if task.start.is_some() && task.cancelled.is_none() {
            jobs.push(task);
        }
    }
    jobs.sort_by_key(|t| (t.submit, t.id));
    Ok((source.users().to_vec(), jobs))
}

/// `t` in seconds.
fn seconds(t: Time) -> f64 {
    t.as_micros() as f64 / 1e6
}
