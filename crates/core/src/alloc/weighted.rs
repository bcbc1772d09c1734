//! Weighted max–min division of one divisible resource: what a kernel does with CPU weights,
//! I/O weights and memory protection when workloads contend on a node. Work-conserving: the
//! supply is never exceeded, and it is all handed out unless every demand is met.

/// Divides `supply` among `demands` in proportion to `weights`, no one getting more than they
/// demand and what one leaves going to the others (water-filling). Workloads with a weight
/// that is not a positive number share only what the weighted ones leave, equally.
pub fn weighted_max_min(supply: f64, demands: &[f64], weights: &[f64]) -> Vec<f64> {
    let mut shares = vec![0.0; demands.len()];
    let (weighted, unweighted): (Vec<usize>, Vec<usize>) =
        (0..demands.len()).partition(|&i| weights[i] > 0.0 && weights[i].is_finite());
    let left = fill(supply, &weighted, demands, |i| weights[i], &mut shares);
    fill(left, &unweighted, demands, |_| 1.0, &mut shares);
    shares
}

/// Divides `supply` as memory with protection does (cgroup `memory.low`): each workload first
/// gets its demand up to its protection (all cut in proportion when the protections do not
/// fit), then what is left goes by max–min to the demands beyond.
pub fn protected_max_min(supply: f64, demands: &[f64], protections: &[f64]) -> Vec<f64> {
    let floors: Vec<f64> = demands
        .iter()
        .zip(protections)
        .map(|(d, p)| d.min(p.max(0.0)))
        .collect();
    let protected: f64 = floors.iter().sum();
    if protected >= supply {
        let cut = if protected > 0.0 {
            supply / protected
        } else {
            0.0
        };
        return floors.iter().map(|f| f * cut).collect();
    }
    let rest: Vec<f64> = demands.iter().zip(&floors).map(|(d, f)| d - f).collect();
    let extra = weighted_max_min(supply - protected, &rest, &vec![1.0; demands.len()]);
    floors.iter().zip(extra).map(|(f, e)| f + e).collect()
}

/// Water-fills `supply` over the clients `who`, writing their shares; returns what is left.
fn fill(
    supply: f64,
    who: &[usize],
    demands: &[f64],
    weight: impl Fn(usize) -> f64,
    shares: &mut [f64],
) -> f64 {
    let mut order = who.to_vec();
    order.sort_by(|&a, &b| (demands[a] / weight(a)).total_cmp(&(demands[b] / weight(b))));
    let mut left = supply.max(0.0);
    let mut weights: f64 = order.iter().map(|&i| weight(i)).sum();
    for (k, &i) in order.iter().enumerate() {
        let fair = left * weight(i) / weights;
        let demand = demands[i].max(0.0);
        if demand > fair {
            let level = left / weights;
            for &j in &order[k..] {
                shares[j] = level * weight(j);
            }
            return 0.0;
        }
        shares[i] = demand;
        left -= demand;
        weights -= weight(i);
    }
    left
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn weights_one_and_two_give_a_third_and_two_thirds() {
        assert_eq!(
            weighted_max_min(3.0, &[9.0, 9.0], &[1.0, 2.0]),
            vec![1.0, 2.0]
        );
        assert_eq!(
            weighted_max_min(3.0, &[0.5, 9.0], &[1.0, 2.0]),
            vec![0.5, 2.5]
        );
        assert_eq!(
            weighted_max_min(3.0, &[9.0, 9.0], &[0.0, 2.0]),
            vec![0.0, 3.0]
        );
        assert_eq!(
            weighted_max_min(3.0, &[9.0, 1.0], &[0.0, 2.0]),
            vec![2.0, 1.0]
        );
    }

    #[test]
    fn protection_is_served_first() {
        assert_eq!(
            protected_max_min(10.0, &[8.0, 8.0], &[6.0, 0.0]),
            vec![8.0, 2.0]
        );
        assert_eq!(
            protected_max_min(10.0, &[8.0, 8.0], &[1.0, 0.0]),
            vec![5.5, 4.5]
        );
        assert_eq!(
            protected_max_min(10.0, &[8.0, 8.0], &[10.0, 10.0]),
            vec![5.0, 5.0]
        );
        assert_eq!(
            protected_max_min(10.0, &[3.0, 8.0], &[0.0, 0.0]),
            vec![3.0, 7.0]
        );
    }

    proptest! {
        /// Never more than the supply or a demand; all of the supply unless every demand is
        /// met; and max–min: whoever is short has the highest share per weight of all.
        #[test]
        fn water_filling_is_feasible_conserving_and_max_min(
            supply in 0.0..100.0f64,
            clients in prop::collection::vec((0.0..50.0f64, 0.1..10.0f64), 0..12),
        ) {
            let (demands, weights): (Vec<f64>, Vec<f64>) = clients.into_iter().unzip();
            let shares = weighted_max_min(supply, &demands, &weights);
            let total: f64 = shares.iter().sum();
            let wanted: f64 = demands.iter().sum();
            prop_assert!(total <= supply + 1e-9);
            prop_assert!((total - supply.min(wanted)).abs() <= 1e-9 * (1.0 + supply));
            for i in 0..shares.len() {
                prop_assert!(shares[i] >= 0.0 && shares[i] <= demands[i] + 1e-9);
                if shares[i] < demands[i] - 1e-9 {
                    for j in 0..shares.len() {
                        prop_assert!(shares[j] / weights[j] <= shares[i] / weights[i] + 1e-9);
                    }
                }
            }
        }

        /// Memory: never more than the supply or a demand, and all of it handed out unless
        /// every demand is met.
        #[test]
        fn protection_is_feasible_and_conserving(
            supply in 0.0..100.0f64,
            clients in prop::collection::vec((0.0..50.0f64, 0.0..50.0f64), 0..12),
        ) {
            let (demands, floors): (Vec<f64>, Vec<f64>) = clients.into_iter().unzip();
            let shares = protected_max_min(supply, &demands, &floors);
            let total: f64 = shares.iter().sum();
            prop_assert!(total <= supply + 1e-9);
            prop_assert!((total - supply.min(demands.iter().sum())).abs() <= 1e-9 * (1.0 + supply));
            for (s, d) in shares.iter().zip(&demands) {
                prop_assert!(*s >= 0.0 && *s <= d + 1e-9);
            }
        }
    }
}
