//! The page's view of the machines: for a window of the replay, which jobs held which
//! processors of every node under each policy, so an administrator sees packing, backfilled
//! jobs and idle nodes as a batch system's own node view would show them.
//!
//! A node's processors are drawn as slots stacked up its lane: one per processor, or
//! [`MOST_SLOTS`] when a node's processors are not a whole number or are more than that. Jobs
//! are laid in start order, each on the lowest slots free when it starts, in as many
//! contiguous runs as those slots form. A node never holds more than its processors, so with
//! one slot per processor every job finds its slots; with fewer, each job takes at least one
//! and, should rounding leave too few free, is drawn on those there are.

use crate::html;
use crate::svg::{self, Axis, Colour, Gantt, Span};
use crate::text::duration;
use fairshare_core::model::Time;
use fairshare_lab::summary::{MachineView, ReplaySummary};
use fairshare_sim::cluster::{JobRecord, PolicyResult};
use std::collections::HashMap;

/// The most nodes the view draws (the first ones, in catalogue order).
pub const MOST_LANES: usize = 96;

/// The most slots a node is drawn with, and the slots of a node whose processors are not a
/// whole number.
pub const MOST_SLOTS: usize = 4096;

/// Users drawn in a colour of their own; the others share grey.
const COLOURED_USERS: usize = 8;

/// Part of a node's lane a job holds over a span of time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Block {
    /// The node's index.
    pub node: usize,
    /// The job's user.
    pub user: u32,
    /// Start, seconds after the first event.
    pub start_s: f64,
    /// End, seconds after the first event.
    pub end_s: f64,
    /// The slots it holds, as parts of the lane from 0 (bottom) to 1 (top).
    pub part: (f64, f64),
}

/// How many slots a node of `processors` is drawn with.
fn slots_of(processors: f64) -> usize {
    let whole = (processors - processors.round()).abs() < 1e-6;
    let n = processors.round() as usize;
    if whole && (1..=MOST_SLOTS).contains(&n) {
        n
    } else {
        MOST_SLOTS
    }
}

/// Seconds from `origin` to `t`.
fn secs(t: Time, origin: Time) -> f64 {
    t.as_micros().saturating_sub(origin.as_micros()) as f64 / 1e6
}

/// Every job's blocks on every node of `view` (the cluster having `total` processors).
pub fn blocks(view: &MachineView, total: f64, jobs: &[JobRecord]) -> Vec<Block> {
    let mut by_node: Vec<Vec<(&JobRecord, f64)>> = vec![Vec::new(); view.nodes.len()];
    for job in jobs {
        for (node, held) in &job.placed {
            let processors = held.first().copied().unwrap_or(0.0) * total;
            if let Some(lane) = by_node.get_mut(*node) {
                lane.push((job, processors));
            }
        }
    }
    let mut out = Vec::new();
    for (node, mut held) in by_node.into_iter().enumerate() {
        held.sort_by_key(|(j, _)| (j.start, j.id));
        let slots = slots_of(view.nodes[node].processors);
        let per_slot = view.nodes[node].processors / slots as f64;
        let mut free_at = vec![Time::ZERO; slots];
        for (job, processors) in held.into_iter().filter(|(_, p)| *p > 0.0) {
            let need = ((processors / per_slot).round() as usize).clamp(1, slots);
            let taken: Vec<usize> = (0..slots)
                .filter(|s| free_at[*s] <= job.start)
                .take(need)
                .collect();
            taken.iter().for_each(|s| free_at[*s] = job.end);
            for (lo, hi) in runs(&taken) {
                out.push(Block {
                    node,
                    user: job.user,
                    start_s: secs(job.start, view.origin),
                    end_s: secs(job.end, view.origin),
                    part: (lo as f64 / slots as f64, hi as f64 / slots as f64),
                });
            }
        }
    }
    out
}

/// Sorted slot indices as contiguous runs `[lo, hi)`.
fn runs(slots: &[usize]) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &s in slots {
        match runs.last_mut() {
            Some((_, hi)) if *hi == s => *hi += 1,
            _ => runs.push((s, s + 1)),
        }
    }
    runs
}

/// The users given colours: those holding the most processor-seconds in the window under
/// the first policy, most first.
fn coloured_users(blocks: &[Block], view: &MachineView) -> Vec<u32> {
    let mut held: HashMap<u32, f64> = HashMap::new();
    for b in blocks {
        let seconds = b.end_s.min(view.to_s) - b.start_s.max(view.from_s);
        let processors = (b.part.1 - b.part.0) * view.nodes[b.node].processors;
        *held.entry(b.user).or_default() += seconds.max(0.0) * processors;
    }
    let mut users: Vec<(u32, f64)> = held.into_iter().collect();
    users.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    users
        .into_iter()
        .take(COLOURED_USERS)
        .map(|(u, _)| u)
        .collect()
}

/// One chart per policy of the jobs on the nodes in the window, when jobs were recorded.
pub fn section(summary: &ReplaySummary) -> String {
    let Some(view) = &summary.setting.machine_view else {
        return String::new();
    };
    let total = summary.setting.capacity.first().copied().unwrap_or(0.0);
    let drawn = view.nodes.len().min(MOST_LANES);
    let lanes: Vec<String> = view.nodes[..drawn].iter().map(|n| n.name.clone()).collect();
    let per_policy: Vec<(&PolicyResult, Vec<Block>)> = summary
        .policies
        .iter()
        .map(|p| (p, blocks(view, total, &p.jobs)))
        .collect();
    let coloured = per_policy
        .first()
        .map(|(_, b)| coloured_users(b, view))
        .unwrap_or_default();
    let colour_of = |user: u32| {
        let i = coloured.iter().position(|u| *u == user);
        i.map_or(svg::GREY, Colour::Palette)
    };
    let length = view.to_s - view.from_s;
    let unit = if length >= 3.0 * 86_400.0 {
        (86_400.0, "d")
    } else {
        (3_600.0, "h")
    };
    let lane_px = (900 / drawn.max(1) as u32).clamp(16, 240);
    let figures: String = per_policy
        .iter()
        .map(|(p, blocks)| {
            let bars = blocks.iter().filter(|b| b.node < drawn).map(|b| Span {
                lane: b.node,
                start: b.start_s / unit.0,
                end: b.end_s / unit.0,
                part: b.part,
                colour: colour_of(b.user),
            });
            let chart = Gantt {
                width: 1180,
                lane_px,
                x: Axis::new(&format!("time since the first event ({})", unit.1))
                    .range(view.from_s / unit.0, view.to_s / unit.0),
                lanes: lanes.clone(),
                bars: bars.collect(),
                marks: Vec::new(),
                legend: Vec::new(),
            };
            html::panel(&p.policy, &svg::gantt_chart(&chart))
        })
        .collect();
    let mut legend: Vec<(String, Colour)> = coloured
        .iter()
        .map(|u| (user_name(view, *u), colour_of(*u)))
        .collect();
    legend.push(("other users".into(), svg::GREY));
    let cut = if drawn < view.nodes.len() {
        format!(
            " The first {drawn} of {} nodes are drawn.",
            view.nodes.len()
        )
    } else {
        String::new()
    };
    format!(
        "<h2>The machines, {} from {} on</h2>\n<p>Every node's processors stacked up its lane, each job drawn on the processors it held, coloured by user (the {} users holding the most in this window under {}, the others grey); blank is idle. Choose the window with <code>--gantt START+LENGTH</code>.{cut}</p>\n{}{figures}",
        duration(length),
        duration(view.from_s),
        coloured.len(),
        html::escape(per_policy.first().map_or("", |(p, _)| p.policy.as_str())),
        html::legend(&legend),
    )
}

/// The trace's name of user `u`.
fn user_name(view: &MachineView, u: u32) -> String {
    view.users
        .get(u as usize)
        .cloned()
        .unwrap_or_else(|| u.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairshare_lab::summary::NodeLane;
    use proptest::prelude::*;

    /// A one-node view of `processors` processors over all time.
    fn view(processors: f64) -> MachineView {
        MachineView {
            origin: Time::ZERO,
            from_s: 0.0,
            to_s: 100.0,
            nodes: vec![NodeLane {
                name: "node-1".into(),
                processors,
            }],
            users: Vec::new(),
        }
    }

    /// Job `id` of user `id` holding `cpus` of an 8-processor cluster's one node over
    /// `[start, end)` seconds.
    fn job(id: u64, start: u64, end: u64, cpus: f64) -> JobRecord {
        JobRecord {
            id,
            user: id as u32,
            submit: Time::ZERO,
            start: Time::from_secs_f64(start as f64),
            end: Time::from_secs_f64(end as f64),
            placed: vec![(0, vec![cpus / 8.0])],
            first_reserved: None,
        }
    }

    #[test]
    fn a_job_takes_the_lowest_processors_free_when_it_starts() {
        let jobs = [
            job(1, 0, 10, 4.0),
            job(2, 0, 5, 2.0),
            job(3, 2, 8, 2.0),
            job(4, 5, 9, 1.0),
            job(5, 9, 12, 4.0),
        ];
        let parts: Vec<(u32, (f64, f64))> = blocks(&view(8.0), 8.0, &jobs)
            .iter()
            .map(|b| (b.user, b.part))
            .collect();
        assert_eq!(
            parts,
            [
                (1, (0.0, 0.5)),
                (2, (0.5, 0.75)),
                (3, (0.75, 1.0)),
                (4, (0.5, 0.625)),
                // Slots 4 to 7 are all free again at 9 (job 2's since 5, job 3's since 8,
                // job 4's since 9), and slots 0 to 3 are job 1's until 10.
                (5, (0.5, 1.0)),
            ]
        );
    }

    #[test]
    fn processors_not_free_together_are_drawn_in_several_runs() {
        assert_eq!(runs(&[0, 2, 3, 7]), [(0, 1), (2, 4), (7, 8)]);
        let jobs = [
            job(1, 0, 10, 2.0),
            job(2, 0, 4, 2.0),
            job(3, 0, 10, 2.0),
            job(4, 5, 9, 4.0),
        ];
        let drawn = blocks(&view(8.0), 8.0, &jobs);
        let last: Vec<(f64, f64)> = drawn
            .iter()
            .filter(|b| b.user == 4)
            .map(|b| b.part)
            .collect();
        assert_eq!(last, [(0.25, 0.5), (0.75, 1.0)]);
    }

    proptest! {
        /// Jobs that never hold more than the node has are drawn on exactly their processors,
        /// and no two jobs running at once share a drawn processor.
        #[test]
        fn jobs_running_together_are_drawn_apart(
            wanted in prop::collection::vec((0u64..50, 1u64..30, 1u32..=8), 1..40)
        ) {
            let mut jobs: Vec<JobRecord> = Vec::new();
            let load = |jobs: &[JobRecord], t: Time| -> f64 {
                jobs.iter().filter(|j| j.start <= t && t < j.end).map(|j| j.placed[0].1[0] * 8.0).sum()
            };
            for (id, (start, run, cpus)) in wanted.into_iter().enumerate() {
                let candidate = job(id as u64, start, start + run, f64::from(cpus));
                let instants = jobs.iter().map(|j| j.start).chain([candidate.start]);
                let during: Vec<Time> = instants.filter(|t| candidate.start <= *t && *t < candidate.end).collect();
                if during.iter().all(|t| load(&jobs, *t) + f64::from(cpus) <= 8.0) {
                    jobs.push(candidate);
                }
            }
            jobs.sort_by_key(|j| (j.start, j.id));
            let drawn = blocks(&view(8.0), 8.0, &jobs);
            for j in &jobs {
                let slots: f64 = drawn.iter().filter(|b| b.user == j.user).map(|b| (b.part.1 - b.part.0) * 8.0).sum();
                prop_assert!((slots - j.placed[0].1[0] * 8.0).abs() < 1e-9, "job {} drawn on {slots}", j.id);
            }
            for (i, a) in drawn.iter().enumerate() {
                for b in &drawn[i + 1..] {
                    let together = a.start_s < b.end_s && b.start_s < a.end_s;
                    let shared = a.part.0 < b.part.1 && b.part.0 < a.part.1;
                    prop_assert!(!(together && shared), "{a:?} and {b:?}");
                }
            }
        }
    }
}
