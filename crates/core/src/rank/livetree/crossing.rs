//! When two SDRF priorities cross (docs/mechanisms.md, SDRF §7.4–7.5).
//!
//! Between allocation changes every priority is the maximum of m lines in the decay variable
//! `x = e^(−(t−t_ref)/τ)`, a convex piecewise-linear function of x. The time at which two
//! neighbours swap is therefore the first sign change of the difference of two such functions as
//! x falls from 1 (now) towards 0 (the far future), which this module finds exactly by walking
//! the breakpoints of both upper envelopes together. The walk needs no allocation and works for
//! any number of resources.

/// One line `a + b·x` of a priority, with x the decay variable of the tree's reference time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Line {
    /// Value at x = 0: the priority's limit once the commitment has reached its target.
    pub a: f64,
    /// Slope in x: the part of the priority that decays away.
    pub b: f64,
}

/// The line of a priority that attains it at some x: the highest, and of those the one with the
/// smallest slope (it stays highest as x falls).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Top {
    /// The priority at x.
    pub value: f64,
    /// The slope of the line attaining it.
    pub slope: f64,
    /// Which line that is.
    pub line: usize,
}

/// The top of `lines` at x (`None` for no lines).
pub(crate) fn top(lines: &[Line], x: f64) -> Option<Top> {
    let first = lines.first()?;
    let mut best = Top {
        value: first.a + first.b * x,
        slope: first.b,
        line: 0,
    };
    for (line, l) in lines.iter().enumerate().skip(1) {
        let value = l.a + l.b * x;
        if value > best.value || (value == best.value && l.b < best.slope) {
            best = Top {
                value,
                slope: l.b,
                line,
            };
        }
    }
    Some(best)
}

/// Where the line on top hands over to another as x falls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Handover {
    /// The x (at the lines' own scale) below which line `to` is above it; ≤ 0 if none ever is.
    pub at: f64,
    /// The line that takes over.
    pub to: usize,
}

/// For every line of `lines`, where it hands over when it is on top: the largest x at which a
/// line of smaller slope overtakes it (ties: the smallest slope, which dominates below). It does
/// not depend on the scale of the slopes, so it is computed once per change of the lines.
pub(crate) fn handovers(lines: &[Line], out: &mut [Handover]) {
    for (active, (i, handover)) in lines.iter().zip(out.iter_mut()).enumerate() {
        // The best crossing so far as a fraction num/den with den > 0, compared by cross
        // products: one division per line instead of one per candidate.
        let (mut num, mut den, mut to) = (0.0, 1.0, active);
        for (j, l) in lines.iter().enumerate() {
            if l.b < i.b {
                let (n, d) = (l.a - i.a, i.b - l.b);
                let (ahead, level) = (n * den, num * d);
                let tie = ahead == level && to != active && l.b < lines[to].b;
                if ahead > level || tie {
                    (num, den, to) = (n, d, j);
                }
            }
        }
        *handover = Handover { at: num / den, to };
    }
}

/// A priority as [`crossing`] reads it: its lines, their handovers and the line on [`top`] now.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Priority<'a> {
    /// The lines.
    pub lines: &'a [Line],
    /// Their handovers (see [`handovers`]).
    pub handovers: &'a [Handover],
    /// The line on top at the current x.
    pub top: usize,
}

/// The upper envelope of a set of lines, read from x = 1 down to x = 0.
struct Envelope<'a> {
    priority: Priority<'a>,
    scale: f64,
    active: usize,
    /// The x below which another line takes over (≤ 0 if none does) and which line.
    next: (f64, usize),
}

impl<'a> Envelope<'a> {
    /// The envelope of `priority` with slopes multiplied by `scale`, from its top at x = 1.
    fn new(priority: Priority<'a>, scale: f64) -> Self {
        let mut envelope = Envelope {
            priority,
            scale,
            active: priority.top,
            next: (0.0, priority.top),
        };
        envelope.next = envelope.breakpoint();
        envelope
    }

    /// The active line, with its slope scaled.
    fn line(&self) -> Line {
        let l = self.priority.lines[self.active];
        Line {
            a: l.a,
            b: l.b * self.scale,
        }
    }

    /// Move past the next breakpoint.
    fn step(&mut self) {
        self.active = self.next.1;
        self.next = self.breakpoint();
    }

    /// The active line's handover, in this envelope's x. Each step lowers the slope, so there
    /// are at most m − 1.
    fn breakpoint(&self) -> (f64, usize) {
        let Handover { at, to } = self.priority.handovers[self.active];
        (at / self.scale, to)
    }
}

/// The first instant after now at which `after` must overtake `before`, as the decay variable
/// there, `x* ∈ [0, 1]` with x = 1 now (the crossing is at `now − τ·ln x*`), or `None` if the two
/// never swap. The caller compares decay variables rather than times, so no logarithm is taken.
///
/// Slopes are multiplied by `scale` (the decay variable at now), so x = 1 is now; the tops are
/// those at `scale`, where the caller has just compared the two. `before`
/// precedes `after` now: on the first piece the difference is taken as ≤ 0 at x = 1 even if
/// rounding made it a hair positive; if it then grows, the pair is due at once (`x* = 1`).
/// Roots are clamped to their piece, never past its end: an early event only re-sorts.
pub(crate) fn crossing(before: Priority<'_>, after: Priority<'_>, scale: f64) -> Option<f64> {
    let mut ea = Envelope::new(before, scale);
    let mut eb = Envelope::new(after, scale);
    let mut hi = 1.0;
    loop {
        let lo = ea.next.0.max(eb.next.0).max(0.0).min(hi);
        let (la, lb) = (ea.line(), eb.line());
        let (da, db) = (la.a - lb.a, la.b - lb.b);
        if difference(da, db, lo, hi) > 0.0 {
            return Some(root(da, db, lo, hi));
        }
        if lo <= 0.0 {
            return None;
        }
        if ea.next.0 >= lo {
            ea.step();
        }
        if eb.next.0 >= lo {
            eb.step();
        }
        hi = lo;
    }
}

/// `d(x) = da + db·x` at x, a point of the piece `[·, hi]`. On the first piece (`hi = 1`) the
/// comparator has already fixed `d(1) ≤ 0`; if rounding made it a hair positive, d is taken from
/// `d(1) = 0`, so that a pair tied up to rounding whose order holds as x falls does not yield a
/// spurious event. Otherwise d is evaluated as it stands, not from `d(1)`: near x = 0, a
/// crossing far in the future, `d(1) + db·(x − 1)` would cancel it away.
fn difference(da: f64, db: f64, x: f64, hi: f64) -> f64 {
    if hi == 1.0 && da + db > 0.0 {
        db * (x - 1.0)
    } else {
        da + db * x
    }
}

/// The root x* of d on the piece `[lo, hi]`, where `d(lo) > 0` (so `db < 0`): `hi` if d is
/// already positive there (on the first piece: the pair is due at once).
fn root(da: f64, db: f64, lo: f64, hi: f64) -> f64 {
    let x = if da + db * hi > 0.0 { hi } else { -da / db };
    x.min(1.0).max(lo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lines(pairs: &[(f64, f64)]) -> Vec<Line> {
        pairs.iter().map(|&(a, b)| Line { a, b }).collect()
    }

    /// [`crossing`] with the handovers and tops found here, as `h = −ln x*`.
    fn cross(before: &[Line], after: &[Line], scale: f64) -> Option<f64> {
        let (a, b) = (top(before, scale)?, top(after, scale)?);
        let mut handed = vec![Handover { at: 0.0, to: 0 }; before.len() + after.len()];
        let (ha, hb) = handed.split_at_mut(before.len());
        handovers(before, ha);
        handovers(after, hb);
        let priority = |lines, handovers, top| Priority {
            lines,
            handovers,
            top,
        };
        crossing(
            priority(before, ha, a.line),
            priority(after, hb, b.line),
            scale,
        )
        .map(|x| -x.ln())
    }

    fn value(lines: &[Line], x: f64) -> f64 {
        lines
            .iter()
            .map(|l| l.a + l.b * x)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    #[test]
    fn worked_example_of_the_spec() {
        // §7.5, MaxOfSums, τ = 100 s: A is first at t = 0 and B overtakes it at x* = 0.875.
        let a = lines(&[(0.55, -0.10), (0.10, 0.20)]);
        let b = lines(&[(0.20, 0.30), (0.35, 0.05)]);
        let h = cross(&a, &b, 1.0).expect("they cross");
        assert!((100.0 * h - 13.3531).abs() < 1e-4, "t* = {}", 100.0 * h);
        let x = (-h).exp();
        assert!((value(&a, x) - 0.4625).abs() < 1e-12);
        assert!((value(&b, x) - 0.4625).abs() < 1e-12);
        // After the swap B stays ahead for good.
        assert_eq!(cross(&b, &a, x), None);
    }

    #[test]
    fn scale_moves_the_reference_time() {
        // The same pair seen from x = 0.95: the crossing is at the same absolute x.
        let a = lines(&[(0.55, -0.10), (0.10, 0.20)]);
        let b = lines(&[(0.20, 0.30), (0.35, 0.05)]);
        let h = cross(&a, &b, 0.95).expect("they cross");
        assert!(((-h).exp() * 0.95 - 0.875).abs() < 1e-12);
    }

    #[test]
    fn asymptotic_ties_and_identical_functions_never_swap() {
        let a = lines(&[(0.5, -0.1)]);
        assert_eq!(cross(&a, &lines(&[(0.5, 0.2)]), 1.0), None);
        assert_eq!(cross(&a, &a, 1.0), None);
        assert_eq!(cross(&a, &[], 1.0), None);
    }

    #[test]
    fn a_crossing_far_in_the_future_is_found() {
        // d(0) = 1e-206 against slopes of 1: the crossing is at x* = 1e-206, h = 474.3.
        let a = lines(&[(1e-200, 0.0)]);
        let b = lines(&[(1e-200 - 1e-206, 1.0)]);
        let h = cross(&a, &b, 1.0).expect("they cross");
        assert!((h - 1e206f64.ln()).abs() < 1e-9, "h = {h}");
    }

    #[test]
    fn a_pair_misordered_by_rounding_is_due_at_once() {
        // `before` leads by a rounding error at x = 1, and `after` falls away below it.
        let a = lines(&[(0.4 + 1e-16, 0.0)]);
        let b = lines(&[(0.3, 0.1)]);
        assert_eq!(cross(&a, &b, 1.0), Some(0.0));
    }

    fn line_set() -> impl Strategy<Value = Vec<Line>> {
        prop::collection::vec((0.0..1.0f64, -1.0..1.0f64), 1..=4)
            .prop_map(|v| v.into_iter().map(|(a, b)| Line { a, b }).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// §7.5: the computed crossing agrees with sampling both priorities over 20τ.
        #[test]
        fn crossing_matches_brute_force_sampling(a in line_set(), b in line_set()) {
            let (before, after) = if value(&a, 1.0) <= value(&b, 1.0) { (a, b) } else { (b, a) };
            let d = |x: f64| value(&before, x) - value(&after, x);
            let found = cross(&before, &after, 1.0);
            // No sign change on the grid before the computed crossing (or at all if none).
            let limit = found.unwrap_or(f64::INFINITY);
            for k in 1..=4000 {
                let h = k as f64 * 20.0 / 4000.0;
                if h < limit - 1e-9 {
                    prop_assert!(d((-h).exp()) <= 1e-12, "missed a crossing at h = {h}");
                }
            }
            // A computed crossing is exact: the order holds just before it, and is violated
            // just after it.
            if let Some(h) = found.filter(|h| h.is_finite()) {
                let x = (-h).exp();
                for e in [1e-9, 1e-6] {
                    prop_assert!(d((x * (1.0 + e)).min(1.0)) <= 1e-12, "late: h = {h}");
                }
                let after_it = [1e-12, 1e-9, 1e-6, 1e-3].iter().map(|e| d(x * (1.0 - e)));
                prop_assert!(after_it.fold(f64::NEG_INFINITY, f64::max) > 0.0, "h = {h}");
            }
        }
    }
}
