//! The statistics a replay's results are made of: means, nearest-rank percentiles and Jain's
//! fairness index.

/// The mean of `values` (0 for none).
pub fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0u64), |(s, n), v| (s + v, n + 1));
    if n > 0 {
        sum / n as f64
    } else {
        0.0
    }
}

/// Bounded slowdown: `max(1, (wait + run) / max(run, 10 s))`, the usual definition, which
/// keeps very short jobs from dominating a mean.
pub fn bounded_slowdown(wait: f64, run: f64) -> f64 {
    ((wait + run) / run.max(super::SLOWDOWN_FLOOR_S)).max(1.0)
}

/// The `q` quantile (nearest rank) of `values`.
pub fn percentile(mut values: Vec<f32>, q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1;
    let (_, v, _) = values.select_nth_unstable_by(rank, f32::total_cmp);
    *v as f64
}

/// How many points a distribution is summarised by: the 0th, 5th, …, 100th percentiles.
pub const QUANTILES: usize = 21;

/// The [`QUANTILES`] evenly spaced quantiles (nearest rank) of `values`, from the least to the
/// greatest; empty for no values.
pub fn quantiles(values: Vec<f32>) -> Vec<f64> {
    let qs: Vec<f64> = (0..QUANTILES)
        .map(|i| i as f64 / (QUANTILES - 1) as f64)
        .collect();
    match values.is_empty() {
        true => Vec::new(),
        false => percentiles(values, &qs),
    }
}

/// The `qs` quantiles (nearest rank, as [`percentile`]) of `values`; 0 for each when there
/// are no values. Each rank is selected rather than the whole sorted: the quantiles of a
/// replay's 170,000 waits cost a tenth of its run when they were sorted.
pub fn percentiles(mut values: Vec<f32>, qs: &[f64]) -> Vec<f64> {
    let n = values.len();
    if n == 0 {
        return vec![0.0; qs.len()];
    }
    let rank = |q: f64| ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
    let mut ranks: Vec<usize> = qs.iter().map(|&q| rank(q)).collect();
    ranks.sort_unstable();
    ranks.dedup();
    select_ranks(&mut values, &ranks);
    qs.iter().map(|&q| f64::from(values[rank(q)])).collect()
}

/// Puts the value of each of `ranks` (ascending, distinct, within `values`) where a sort would
/// put it: the middle rank by selection, then the ranks on either side within their side.
fn select_ranks(values: &mut [f32], ranks: &[usize]) {
    let Some(&middle) = ranks.get(ranks.len() / 2) else {
        return;
    };
    let (below, _, above) = values.select_nth_unstable_by(middle, f32::total_cmp);
    let (lower, higher) = ranks.split_at(ranks.len() / 2);
    select_ranks(below, lower);
    let higher: Vec<usize> = higher[1..].iter().map(|r| r - middle - 1).collect();
    select_ranks(above, &higher);
}

/// Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one takes everything.
pub fn jain(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, squares, n) =
        values.fold((0.0, 0.0, 0usize), |(s, q, n), v| (s + v, q + v * v, n + 1));
    if squares > 0.0 {
        sum * sum / (n as f64 * squares)
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Selected rank by rank, the quantiles are those of the sorted values, to the bit
        /// (repeated values, infinities and NaNs included, in `total_cmp`'s order).
        #[test]
        fn selected_quantiles_are_the_sorted_values(
            values in prop::collection::vec(
                prop_oneof![any::<f32>(), (0u8..4).prop_map(f32::from)],
                0..300,
            ),
            qs in prop::collection::vec(0.0f64..=1.0, 0..30),
        ) {
            let mut sorted = values.clone();
            sorted.sort_unstable_by(f32::total_cmp);
            let n = sorted.len();
            let expected: Vec<u64> = (qs.iter())
                .map(|&q| match n {
                    0 => 0.0f64,
                    _ => f64::from(sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1]),
                })
                .map(f64::to_bits)
                .collect();
            let got: Vec<u64> = percentiles(values, &qs).into_iter().map(f64::to_bits).collect();
            prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn quantiles_by_hand() {
        assert!(quantiles(Vec::new()).is_empty());
        let q = quantiles((1..=100).rev().map(|v| v as f32).collect());
        assert_eq!(q.len(), QUANTILES);
        assert_eq!((q[0], q[10], q[19], q[20]), (1.0, 50.0, 95.0, 100.0));
    }

    #[test]
    fn jain_by_hand() {
        assert_eq!(jain([1.0, 1.0, 1.0].into_iter()), 1.0);
        assert!((jain([1.0, 0.0, 0.0, 0.0].into_iter()) - 0.25).abs() < 1e-15);
        assert!((jain([1.0, 2.0].into_iter()) - 0.9).abs() < 1e-15);
    }
}
