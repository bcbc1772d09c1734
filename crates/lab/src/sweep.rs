//! The SDRF paper's grid — SDRF with δ = 1 − 10⁻ᵏ for each k, and a baseline, at each capacity
//! fraction of R — run over a [`MeasuredTrace`], split in shards for a batch system, and merged.

use crate::shard::read_shard;
use crate::summary::{SweepCell, SweepSummary};
use crate::trace::{MeasuredTrace, Replay};
use crate::LabError;
use fairshare_core::error::Chain;
use fairshare_core::policy::PolicySpec;
use fairshare_sim::cluster::Timeline;
use std::path::PathBuf;

/// One cell of the grid before it runs: capacity fraction, ε (`None` for the baseline), policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Capacity as a fraction of R.
    pub fraction: f64,
    /// ε = 1 − δ of an SDRF cell.
    pub epsilon: Option<f64>,
    /// The policy.
    pub policy: PolicySpec,
}

/// Every cell of the grid, in a fixed order: by fraction, baseline first, then ε descending.
pub fn grid(fractions: &[f64], nines: &[u32], baseline: &PolicySpec) -> Vec<Cell> {
    let mut ks = nines.to_vec();
    ks.sort_unstable();
    ks.dedup();
    fractions
        .iter()
        .flat_map(|&fraction| {
            let sdrf = ks.iter().map(move |&k| Cell {
                fraction,
                epsilon: Some(10f64.powi(-(k as i32))),
                policy: PolicySpec::sdrf_with_nines(k),
            });
            let baseline = Cell {
                fraction,
                epsilon: None,
                policy: baseline.clone(),
            };
            std::iter::once(baseline).chain(sdrf)
        })
        .collect()
}

/// The cells of shard `shard` of `shards` of the grid of `fractions` × `nines` against
/// `baseline`, each option checked as `fairshare sweep` checks it.
pub fn plan(
    fractions: &[f64],
    nines: &[u32],
    baseline: &str,
    (index, shards): (usize, usize),
) -> Result<Vec<Cell>, LabError> {
    let refuse = |message: String| Err(LabError::Unusable(message));
    if let Some(f) = fractions.iter().find(|f| !(f.is_finite() && **f > 0.0)) {
        return refuse(format!(
            "--fractions: every fraction must be positive, found {f}"
        ));
    }
    if let Some(k) = nines.iter().find(|k| !(1..=15).contains(*k)) {
        return refuse(format!("--nines: each k must be from 1 to 15, found {k}"));
    }
    if fractions.is_empty() {
        return refuse("--fractions: give at least one".into());
    }
    if index >= shards {
        return refuse(format!(
            "--shard {index}/{shards}: expected i/n with 0 ≤ i < n"
        ));
    }
    let baseline: PolicySpec =
        (baseline.parse()).map_err(|e| LabError::Unusable(format!("--baseline: {e}")))?;
    Ok(shard(grid(fractions, nines, &baseline), index, shards))
}

/// The cells of shard `shard` of `shards`: cell j goes to shard j mod n.
pub fn shard(grid: Vec<Cell>, shard: usize, shards: usize) -> Vec<Cell> {
    grid.into_iter()
        .enumerate()
        .filter(|(j, _)| j % shards.max(1) == shard)
        .map(|(_, c)| c)
        .collect()
}

/// Runs one cell over `measured` (its timeline left out, to keep sweeps small).
pub fn run_cell(
    measured: &MeasuredTrace,
    replay: &Replay,
    cell: &Cell,
) -> Result<SweepCell, LabError> {
    let capacity = measured.pool_of_mean(cell.fraction)?;
    let config = measured.config(replay, cell.policy.clone(), capacity);
    let mut result = measured.run(&config, &mut |_| {})?;
    result.timeline = Timeline::default();
    Ok(SweepCell {
        fraction: cell.fraction,
        epsilon: cell.epsilon,
        result,
    })
}

/// The summary of shard `shard` of `shards`, from its cells' results.
pub fn summary(
    measured: &MeasuredTrace,
    replay: &Replay,
    shard: usize,
    shards: usize,
    cells: Vec<SweepCell>,
) -> Result<SweepSummary, LabError> {
    let capacity = measured.pool_of_mean(1.0)?;
    Ok(SweepSummary {
        input: measured.input.clone(),
        setting: measured.setting(replay, &capacity, None, "fractions of the mean demand R"),
        shard_ids: vec![shard],
        shards,
        cells,
    })
}

/// A merge of shard outputs: the joined sweep and the shards it lacks.
pub struct Merged {
    /// The joined sweep, cells in grid order.
    pub summary: SweepSummary,
    /// Shards of the sweep no file held (the grid is incomplete when any are).
    pub missing: Vec<usize>,
}

/// Joins shard outputs of one sweep, checking each like any input.
pub fn merge(paths: &[PathBuf]) -> Result<Merged, LabError> {
    let mut merged: Option<SweepSummary> = None;
    for path in paths {
        let shown = path.display();
        let text = std::fs::read_to_string(path)
            .map_err(|e| LabError::Unusable(format!("cannot read {shown}: {e}")))?;
        let part =
            read_shard(&text).map_err(|e| LabError::Unusable(format!("{shown}: {}", Chain(&e))))?;
        merged = Some(match merged {
            None => part,
            Some(mut all) => {
                if all.setting != part.setting
                    || all.shards != part.shards
                    || all.input != part.input
                {
                    return Err(LabError::Unusable(format!(
                        "{shown}: comes from a different sweep (trace, input, setting or shard count differ)"
                    )));
                }
                if let Some(dup) = part.shard_ids.iter().find(|s| all.shard_ids.contains(s)) {
                    return Err(LabError::Unusable(format!(
                        "{shown}: shard {dup} is already in the merge"
                    )));
                }
                all.shard_ids.extend(part.shard_ids);
                all.cells.extend(part.cells);
                all
            }
        });
    }
    let mut summary = merged.ok_or_else(|| LabError::Unusable("no shard outputs given".into()))?;
    summary.shard_ids.sort_unstable();
    summary.cells.sort_by(|a, b| {
        let key = |c: &SweepCell| (c.fraction, c.epsilon.map_or(f64::INFINITY, |e| e));
        let (ka, kb) = (key(a), key(b));
        ka.0.total_cmp(&kb.0).then(kb.1.total_cmp(&ka.1))
    });
    let missing = (0..summary.shards)
        .filter(|s| !summary.shard_ids.contains(s))
        .collect();
    Ok(Merged { summary, missing })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_has_the_papers_48_cells_in_order() {
        let grid = grid(
            &[0.5, 0.6, 0.7, 0.8, 0.9, 1.0],
            &[7, 1, 2, 3, 4, 5, 6],
            &"drf".parse().unwrap(),
        );
        assert_eq!(grid.len(), 48);
        assert_eq!(grid[0].policy.name, "drf");
        assert_eq!(grid[1].policy.name, "sdrf:delta=0.9");
        assert_eq!(grid[7].policy.name, "sdrf:delta=0.9999999");
        assert_eq!(grid[8].fraction, 0.6);
        let third = shard(grid.clone(), 2, 3);
        assert_eq!(third.len(), 16);
        assert_eq!(third[0], grid[2]);
    }
}
