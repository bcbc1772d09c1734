//! Slurm's will-run test (`_will_run_test` in Slurm 22.05's
//! `plugins/select/cons_common/job_test.c`), which Slurm's backfill asks where and from when a
//! job that cannot start now would run. It does not look for the earliest instant the job
//! fits: it takes the running jobs away in order of their ends, in batches that grow
//! (every job ending within 30 s past the first end rounded up to 30 s, then within 60 s,
//! 120 s, …), tries the job after each batch, and answers the last taken job's end, with
//! the nodes the node selection chooses once the whole batch is gone. A plan found so holds
//! other nodes, and starts later, than the earliest fit would: the nodes later jobs backfill.

use super::*;

/// Seconds of the first batch (`time_window`), which doubles with every batch after.
const FIRST_WINDOW_S: u64 = 30;

/// Most jobs one batch takes away before a try is skipped (`rm_job_cnt > 200`).
const MOST_IN_A_BATCH: usize = 201;

/// One second, in microseconds.
const SECOND_US: u64 = 1_000_000;

/// A running job as the will-run test sees it: when it ends by its time limit, and the key
/// by which the caller finds where it runs.
pub(in crate::cluster) type Ending = (Time, usize);

/// Where a running job runs: each node and what it holds there.
pub(in crate::cluster) type Nodes<'a> = &'a [(usize, Vec<f64>)];

impl Space {
    /// Where and from when `request` would run by Slurm's will-run test, on the nodes
    /// `barred` leaves (the eligible ones): now, if it fits beside what runs; else after the
    /// first batch of the running jobs `ending` (in order of their ends, each placed where
    /// `placed_of` its key says) whose taking away leaves it room, at the end of the last
    /// job taken (the next second if that end has passed). Ends count in whole seconds, as
    /// Slurm's do. `None`: not even with every running job on those nodes gone.
    pub(in crate::cluster) fn will_run<'a>(
        &mut self,
        request: &Request,
        now: Time,
        (ending, placed_of): (&[Ending], impl Fn(usize) -> Nodes<'a>),
        barred: &[bool],
    ) -> Option<(Time, Placed)> {
        // Not even on the nodes left, empty, does it fit: no running job's end can help.
        let mut future = std::mem::take(&mut self.future);
        future.clear();
        future.resize(self.nodes.len() * self.total.len(), 0.0);
        let found = match self.may_fit_beside(request, &future, barred) {
            true => {
                future.clear();
                future.extend(self.nodes.iter().flat_map(|n| n.used.iter().copied()));
                self.will_run_beside(request, now, (ending, placed_of), barred, &mut future)
            }
            false => None,
        };
        self.future = future;
        found
    }

    /// [`Space::will_run`], `future` holding every node's use now, one node after another,
    /// and taking away what the batches free.
    fn will_run_beside<'a>(
        &mut self,
        request: &Request,
        now: Time,
        (ending, placed_of): (&[Ending], impl Fn(usize) -> Nodes<'a>),
        barred: &[bool],
        future: &mut [f64],
    ) -> Option<(Time, Placed)> {
        let resources = self.total.len();
        if let Some(placed) = self.fit_beside(request, future, barred) {
            return Some((now, placed));
        }
        let usable = |i: usize| request.eligible.as_ref().is_none_or(|e| e[i]) && !barred[i];
        let mut window = FIRST_WINDOW_S;
        let mut barrier = None;
        let mut next = 0;
        loop {
            let mut last = None;
            let mut taken = 0;
            let mut more = true;
            let mut tried = true;
            loop {
                let Some(&(end, key)) = ending.get(next) else {
                    more = false;
                    break;
                };
                next += 1;
                let placed = placed_of(key);
                if !placed.iter().any(|(n, _)| usable(*n)) {
                    continue;
                }
                let barrier = *barrier.get_or_insert_with(|| {
                    let end = end.whole_secs();
                    end + FIRST_WINDOW_S - end % FIRST_WINDOW_S
                });
                last = Some(end);
                taken += 1;
                for (node, amount) in placed {
                    release(&mut future[node * resources..][..resources], amount);
                }
                match ending.get(next) {
                    None => more = false,
                    Some(&(after, _)) if after.whole_secs() > barrier + window => {}
                    Some(_) if taken > MOST_IN_A_BATCH => tried = false,
                    Some(_) => continue,
                }
                break;
            }
            let last = last?;
            let barrier = barrier.unwrap_or_default();
            if tried {
                window *= 2;
                while ending
                    .get(next)
                    .is_some_and(|&(after, _)| after.whole_secs() > barrier + window)
                {
                    window *= 2;
                }
                if let Some(placed) = self.fit_beside(request, future, barred) {
                    let end = Time::from_whole_secs(last.whole_secs());
                    let start = if end <= now {
                        now.plus_micros(SECOND_US)
                    } else {
                        end
                    };
                    return Some((start, placed));
                }
            }
            if !more {
                return None;
            }
        }
    }

    /// Where `request` fits on the nodes `barred` leaves, each node using its part of `used`
    /// (one node after another).
    fn fit_beside(&mut self, request: &Request, used: &[f64], barred: &[bool]) -> Option<Placed> {
        if !self.may_fit_beside(request, used, barred) {
            return None;
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let resources = self.total.len();
        for (s, u) in scratch.iter_mut().zip(used.chunks_exact(resources)) {
            s.used.copy_from_slice(u);
        }
        let placed = fit(self.placement.as_ref(), request, &mut scratch, barred);
        self.scratch = scratch;
        placed
    }

    /// Whether [`Space::fit_beside`] could find room, read without placing: `false` only
    /// when too few of the nodes left have room for a part of the job (or, for processors
    /// anywhere, too few processors free on those that have), which no placement overcomes.
    fn may_fit_beside(&self, request: &Request, used: &[f64], barred: &[bool]) -> bool {
        let resources = self.total.len();
        let open = (self
            .nodes
            .iter()
            .zip(used.chunks_exact(resources))
            .enumerate())
        .filter(|(i, _)| request.eligible.as_ref().is_none_or(|e| e[*i]) && !barred[*i])
        .filter(|(_, (node, used))| part_fits(request, &node.capacity, used));
        match &request.shape {
            Shape::Nodes { nodes, .. } => open.count() >= *nodes as usize,
            Shape::Spread { units, per_unit } => {
                let free: f64 = open
                    .map(|(_, (node, used))| node.capacity[0] - used[0])
                    .sum();
                free + FIT_SLACK * self.nodes.len() as f64 >= f64::from(*units) * per_unit[0]
            }
        }
    }
}
