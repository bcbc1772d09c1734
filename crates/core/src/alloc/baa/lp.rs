//! The set levels of BAA (`spec/baa.md` §4): a linear programme with one variable per
//! bottleneck set, solved exactly by a small dense simplex, and the paper's greedy raise
//! (Algorithms 2–3) that may stop short of the optimum.
//!
//! With `p = lo + q` (`lo` the sharing-incentive floors) every constraint becomes `A q ≤ b`
//! with `b ≥ 0` at a feasible floor, so the simplex starts from the slack basis at `q = 0` and
//! needs no first phase. Bland's rule (the lowest eligible index enters and leaves) keeps it
//! from cycling on the degenerate vertices the envy-freeness constraints create.

/// The programme: maximise `objective · p` subject to `rows · p ≤ bounds` and `p ≥ floor`.
#[derive(Debug, Clone, PartialEq)]
pub struct Programme {
    /// The objective's coefficient per variable.
    pub objective: Vec<f64>,
    /// One row of coefficients per constraint.
    pub rows: Vec<Vec<f64>>,
    /// The right-hand side per constraint.
    pub bounds: Vec<f64>,
    /// Each variable's lower bound.
    pub floor: Vec<f64>,
}

/// Slack below which a constraint counts as met, and reduced costs below which the simplex
/// stops: the programmes are in fractions of capacity, so 1e-12 is far below any share.
const EPS: f64 = 1e-12;

/// The most pivots, and rounds of the greedy raise, before giving up: far more than a
/// programme of a few sets needs.
const MOST_STEPS: usize = 10_000;

/// Why a programme has no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LpError {
    /// The floors themselves break a constraint.
    Infeasible,
    /// The simplex did not finish within its step limit (never seen on BAA's programmes).
    NoConvergence,
}

impl std::fmt::Display for LpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LpError::Infeasible => "the equal-share floors break a capacity or envy constraint",
            LpError::NoConvergence => "the simplex did not converge",
        })
    }
}

impl Programme {
    /// Whether `p` meets every constraint and floor (within `tolerance`).
    #[cfg(test)]
    pub fn feasible(&self, p: &[f64], tolerance: f64) -> bool {
        let floors = p
            .iter()
            .zip(&self.floor)
            .all(|(x, lo)| *x >= lo - tolerance);
        floors
            && self
                .rows
                .iter()
                .zip(&self.bounds)
                .all(|(row, b)| dot(row, p) <= b + tolerance)
    }

    /// The constraints in `q = p − floor`: their right-hand sides, `None` when the floor
    /// itself is infeasible.
    fn shifted_bounds(&self) -> Option<Vec<f64>> {
        let b: Vec<f64> = (self.rows.iter().zip(&self.bounds))
            .map(|(row, b)| b - dot(row, &self.floor))
            .collect();
        b.iter()
            .all(|x| *x >= -1e-9)
            .then(|| b.iter().map(|x| x.max(0.0)).collect())
    }

    /// The optimum, by the simplex.
    pub fn solve(&self) -> Result<Vec<f64>, LpError> {
        let b = self.shifted_bounds().ok_or(LpError::Infeasible)?;
        let (n, m) = (self.objective.len(), self.rows.len());
        // Tableau: m rows of [A | I | b], then the objective row of reduced costs.
        let width = n + m + 1;
        let mut t = vec![vec![0.0; width]; m + 1];
        for (i, row) in self.rows.iter().enumerate() {
            t[i][..n].copy_from_slice(row);
            t[i][n + i] = 1.0;
            t[i][width - 1] = b[i];
        }
        t[m][..n].copy_from_slice(&self.objective);
        let mut basis: Vec<usize> = (n..n + m).collect();
        let mut steps = 0;
        while let Some(enter) = (0..n + m).find(|&j| t[m][j] > EPS) {
            steps += 1;
            if steps > MOST_STEPS {
                return Err(LpError::NoConvergence);
            }
            let leave = (0..m).filter(|&i| t[i][enter] > EPS).min_by(|&a, &c| {
                let (ra, rc) = (t[a][width - 1] / t[a][enter], t[c][width - 1] / t[c][enter]);
                ra.total_cmp(&rc).then(basis[a].cmp(&basis[c]))
            });
            // No row limits the entering variable: unbounded, which capacity rows prevent.
            let leave = leave.ok_or(LpError::NoConvergence)?;
            pivot(&mut t, leave, enter);
            basis[leave] = enter;
        }
        let mut q = vec![0.0; n];
        for (i, &v) in basis.iter().enumerate() {
            if v < n {
                q[v] = t[i][width - 1];
            }
        }
        Ok(q.iter().zip(&self.floor).map(|(q, lo)| q + lo).collect())
    }

    /// The paper's greedy raise: from the floors, each variable in `order` in turn is raised
    /// by the most every constraint allows with the others fixed, round after round, until no
    /// variable can rise by more than a billionth of its value (two envy constraints can let
    /// two sets push each other up by ever smaller steps), or after 10,000 rounds.
    pub fn greedy(&self, order: &[usize]) -> Result<Vec<f64>, LpError> {
        self.shifted_bounds().ok_or(LpError::Infeasible)?;
        let mut p = self.floor.clone();
        for _ in 0..MOST_STEPS {
            let mut moved = false;
            for &v in order {
                let step = self.room(&p, v);
                if step > EPS.max(1e-9 * p[v].abs()) {
                    p[v] += step;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
        Ok(p)
    }

    /// How far variable `v` can rise from `p` with the others fixed.
    fn room(&self, p: &[f64], v: usize) -> f64 {
        (self.rows.iter().zip(&self.bounds))
            .filter(|(row, _)| row[v] > EPS)
            .map(|(row, b)| ((b - dot(row, p)) / row[v]).max(0.0))
            .fold(f64::INFINITY, f64::min)
    }
}

/// One pivot of the tableau on row `r`, column `c`.
fn pivot(t: &mut [Vec<f64>], r: usize, c: usize) {
    let scale = t[r][c];
    t[r].iter_mut().for_each(|x| *x /= scale);
    let row = t[r].clone();
    for (i, other) in t.iter_mut().enumerate() {
        if i != r && other[c] != 0.0 {
            let factor = other[c];
            other
                .iter_mut()
                .zip(&row)
                .for_each(|(x, y)| *x -= factor * y);
        }
    }
}

/// The dot product.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Spec §4.1 in absolute units: the optimum is (25, 100), the greedy raise stops at
    /// (29.167, 50).
    #[test]
    fn the_seeds_example() {
        let m = 1.5 + 0.3 / 0.7 + 0.1 / 0.9;
        let programme = Programme {
            objective: vec![3.0 + m, 1.25],
            rows: vec![
                vec![3.0, 0.25],
                vec![m, 1.0],
                vec![1.5, -1.0],
                vec![-1.0, 0.25],
            ],
            bounds: vec![100.0, 200.0, 0.0, 0.0],
            floor: vec![25.0, 50.0],
        };
        let p = programme.solve().unwrap();
        assert!(
            (p[0] - 25.0).abs() < 1e-9 && (p[1] - 100.0).abs() < 1e-9,
            "{p:?}"
        );
        let g = programme.greedy(&[0, 1]).unwrap();
        assert!(
            (g[0] - 29.1667).abs() < 1e-3 && (g[1] - 50.0).abs() < 1e-9,
            "{g:?}"
        );
    }

    #[test]
    fn an_infeasible_floor_is_none() {
        let programme = Programme {
            objective: vec![1.0],
            rows: vec![vec![1.0]],
            bounds: vec![1.0],
            floor: vec![2.0],
        };
        assert_eq!(programme.solve(), Err(LpError::Infeasible));
        assert_eq!(programme.greedy(&[0]), Err(LpError::Infeasible));
    }

    /// The reference: every vertex, i.e. every choice of as many tight constraints (floors
    /// included) as variables, solved by elimination; the best feasible one.
    fn by_vertices(p: &Programme) -> f64 {
        let n = p.objective.len();
        let mut rows = p.rows.clone();
        let mut bounds = p.bounds.clone();
        for v in 0..n {
            let mut row = vec![0.0; n];
            row[v] = -1.0;
            rows.push(row);
            bounds.push(-p.floor[v]);
        }
        let mut best = f64::NEG_INFINITY;
        let k = rows.len();
        for mask in 0u32..(1 << k) {
            if mask.count_ones() as usize != n {
                continue;
            }
            let chosen: Vec<usize> = (0..k).filter(|i| mask & (1 << i) != 0).collect();
            if let Some(x) = solve_square(
                &chosen.iter().map(|&i| rows[i].clone()).collect::<Vec<_>>(),
                &chosen.iter().map(|&i| bounds[i]).collect::<Vec<_>>(),
            ) {
                if p.feasible(&x, 1e-7) {
                    best = best.max(dot(&p.objective, &x));
                }
            }
        }
        best
    }

    /// Gaussian elimination with partial pivoting; `None` when singular.
    fn solve_square(a: &[Vec<f64>], b: &[f64]) -> Option<Vec<f64>> {
        let n = b.len();
        let mut m: Vec<Vec<f64>> = a
            .iter()
            .zip(b)
            .map(|(r, b)| [r.clone(), vec![*b]].concat())
            .collect();
        for c in 0..n {
            let p = (c..n).max_by(|&x, &y| m[x][c].abs().total_cmp(&m[y][c].abs()))?;
            if m[p][c].abs() < 1e-12 {
                return None;
            }
            m.swap(c, p);
            for r in 0..n {
                if r != c {
                    let f = m[r][c] / m[c][c];
                    let pivot_row = m[c].clone();
                    m[r].iter_mut()
                        .zip(&pivot_row)
                        .for_each(|(x, y)| *x -= f * y);
                }
            }
        }
        Some((0..n).map(|i| m[i][n] / m[i][i]).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// On random programmes of BAA's shape (positive capacity rows, envy rows, floors that
        /// are feasible), the simplex finds the best vertex, and the greedy raise is feasible
        /// and never better.
        #[test]
        fn the_simplex_finds_the_best_vertex(
            n in 1usize..4,
            coefficients in prop::collection::vec(0.05..2.0f64, 12),
            kappas in prop::collection::vec(0.0..1.0f64, 9),
            objective in prop::collection::vec(0.1..3.0f64, 3),
        ) {
            let mut rows = Vec::new();
            let mut bounds = Vec::new();
            for k in 0..n {
                rows.push((0..n).map(|v| coefficients[k * 3 + v]).collect::<Vec<_>>());
                bounds.push(1.0);
            }
            for r in 0..n {
                for s in 0..n {
                    if r != s {
                        let mut row = vec![0.0; n];
                        row[r] = kappas[r * 3 + s];
                        row[s] = -1.0;
                        rows.push(row);
                        bounds.push(0.0);
                    }
                }
            }
            let sum: f64 = (0..n).map(|k| rows[k].iter().sum::<f64>()).fold(0.0, f64::max);
            let programme = Programme {
                objective: objective[..n].to_vec(),
                rows,
                bounds,
                floor: vec![0.5 / sum; n],
            };
            let p = programme.solve().unwrap();
            prop_assert!(programme.feasible(&p, 1e-9), "{p:?}");
            let best = by_vertices(&programme);
            let got = dot(&programme.objective, &p);
            prop_assert!((got - best).abs() <= 1e-7 * (1.0 + best.abs()), "{got} vs {best}");
            let order: Vec<usize> = (0..n).collect();
            let g = programme.greedy(&order).unwrap();
            prop_assert!(programme.feasible(&g, 1e-9));
            prop_assert!(dot(&programme.objective, &g) <= got + 1e-9);
        }
    }
}
