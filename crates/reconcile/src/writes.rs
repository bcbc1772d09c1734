//! The writes a reconcile makes: only the jobs whose factor differs from the one wanted,
//! grouped by value so that one call of the scheduler (Slurm's `scontrol update JobId=1,2,3
//! SiteFactor=N`) sets them all; and what making them did, as read back ([`Applied`]).
//!
//! A reconcile must be idempotent — the same cluster state gives no write the second time — and
//! must say what it leaves alone: a job fairshare cannot rank keeps whatever factor it
//! has. Both follow from comparing, job by job, what is wanted with what Slurm holds.

use crate::job::JobId;
use serde::Serialize;
use std::collections::BTreeMap;

/// One pending job: what the scheduler holds now, and what fairshare wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job<J = u64> {
    /// The scheduler's job id.
    pub id: J,
    /// The factor the scheduler holds for it now.
    pub held: i64,
    /// The factor fairshare wants; `None`: fairshare cannot rank it, so it is left alone.
    pub wanted: Option<i64>,
}

/// One call of the scheduler: these jobs get this factor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Write<J = u64> {
    /// The factor to set.
    pub factor: i64,
    /// The jobs, in increasing id.
    pub jobs: Vec<J>,
}

/// What writing a plan did, as the scheduler reads back afterwards: a job that started or
/// left the queue meanwhile no longer needs its factor, and a call the scheduler refused for
/// one such job may still have set the others.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Applied<J = u64> {
    /// Calls made (retries included).
    pub calls: u32,
    /// Calls the scheduler refused even after a retry, each with its message.
    pub refused: Vec<Refusal<J>>,
    /// Jobs written that read back as written.
    pub jobs: usize,
    /// Jobs written, still pending, whose factor reads back other than written.
    pub mismatched: Vec<J>,
    /// Why the read-back could not be made, if it could not.
    pub unverified: Option<String>,
}

/// A write the scheduler refused, with its message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refusal<J = u64> {
    /// The write.
    pub write: Write<J>,
    /// What the scheduler said.
    pub message: String,
}

impl<J> Default for Applied<J> {
    fn default() -> Self {
        Applied {
            calls: 0,
            refused: Vec::new(),
            jobs: 0,
            mismatched: Vec::new(),
            unverified: None,
        }
    }
}

impl<J> Applied<J> {
    /// Whether every job still pending reads back as written.
    pub fn complete(&self) -> bool {
        self.mismatched.is_empty() && self.unverified.is_none()
    }
}

/// The writes that bring `jobs` to the factors wanted, at most `per_call` jobs per call
/// (at least one), in increasing factor and job id: none for a job that already holds
/// what is wanted or that fairshare cannot rank.
pub fn writes<J: JobId>(jobs: &[Job<J>], per_call: usize) -> Vec<Write<J>> {
    let mut by_value: BTreeMap<i64, Vec<J>> = BTreeMap::new();
    for job in jobs {
        if let Some(wanted) = job.wanted.filter(|w| *w != job.held) {
            by_value.entry(wanted).or_default().push(job.id.clone());
        }
    }
    let per_call = per_call.max(1);
    let mut writes = Vec::new();
    for (factor, mut ids) in by_value {
        ids.sort_unstable();
        ids.dedup();
        for chunk in ids.chunks(per_call) {
            writes.push(Write {
                factor,
                jobs: chunk.to_vec(),
            });
        }
    }
    writes
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn job(id: u64, held: i64, wanted: Option<i64>) -> Job {
        Job { id, held, wanted }
    }

    #[test]
    fn only_what_differs_is_written_grouped_by_value() {
        let jobs = [
            job(7, 0, Some(500)),
            job(3, 500, Some(500)),
            job(5, 0, Some(500)),
            job(4, 100, Some(0)),
            job(9, 300, None),
        ];
        let got = writes(&jobs, 100);
        assert_eq!(
            got,
            [
                Write {
                    factor: 0,
                    jobs: vec![4]
                },
                Write {
                    factor: 500,
                    jobs: vec![5, 7]
                },
            ]
        );
    }

    #[test]
    fn long_lists_are_split_into_calls() {
        let jobs: Vec<Job> = (1..=5).map(|id| job(id, 0, Some(1))).collect();
        let sizes: Vec<usize> = writes(&jobs, 2).iter().map(|w| w.jobs.len()).collect();
        assert_eq!(sizes, [2, 2, 1]);
        assert_eq!(writes(&jobs, 0).len(), 5, "at least one job per call");
    }

    proptest! {
        /// Applying the writes gives every rankable job what is wanted, leaves the others as
        /// they were, and a second reconcile of the result writes nothing.
        #[test]
        fn writes_are_complete_minimal_and_idempotent(
            jobs in prop::collection::vec((0i64..4, prop::option::of(0i64..4)), 0..40),
            per_call in 1usize..7,
        ) {
            let jobs: Vec<Job> = jobs.iter().enumerate()
                .map(|(i, &(held, wanted))| job(i as u64, held, wanted))
                .collect();
            let made = writes(&jobs, per_call);
            let mut after = jobs.clone();
            for w in &made {
                prop_assert!(!w.jobs.is_empty() && w.jobs.len() <= per_call);
                for id in &w.jobs {
                    after[*id as usize].held = w.factor;
                }
            }
            let changed = jobs.iter().filter(|j| j.wanted.is_some_and(|w| w != j.held)).count();
            prop_assert_eq!(made.iter().map(|w| w.jobs.len()).sum::<usize>(), changed);
            for (before, now) in jobs.iter().zip(&after) {
                prop_assert_eq!(now.held, before.wanted.unwrap_or(before.held));
            }
            prop_assert!(writes(&after, per_call).is_empty());
        }
    }
}
