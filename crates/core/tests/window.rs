//! The exact sliding windows against a reference that keeps every period and integrates the
//! window directly.

use fairshare_core::model::Time;
use fairshare_core::usage::window::{RateWindow, ServiceWindow, SharedWindow};
use proptest::prelude::*;

/// Overlap in µs of `[start, end)` with `[from, to)`.
fn overlap(start: u64, end: u64, from: u64, to: u64) -> u64 {
    end.min(to).saturating_sub(start.max(from))
}

/// The rate of `history` (`(start, rate)` changes, 0 before the first) integrated segment by
/// segment over the `window` µs ending at `now`, in rate × seconds.
fn integrated(history: &[(u64, f64)], window: u64, now: u64) -> f64 {
    let from = now.saturating_sub(window);
    let segments = history.iter().enumerate().map(|(k, &(start, rate))| {
        let end = history.get(k + 1).map_or(now, |h| h.0);
        rate * overlap(start, end, from, now) as f64
    });
    segments.sum::<f64>() / 1e6
}

/// One step of a client's life: after `gap` µs, start service on a resource, stop, or read.
#[derive(Debug, Clone)]
enum Step {
    Start(u64, usize),
    Stop(u64),
    Read(u64),
}

/// A gap in µs: often none at all, so that events share instants (time 0 included).
fn gap() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), 0..4_000_000u64]
}

fn steps(resources: usize) -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        (gap(), 0..resources).prop_map(|(g, r)| Step::Start(g, r)),
        gap().prop_map(Step::Stop),
        gap().prop_map(Step::Read),
    ];
    prop::collection::vec(step, 1..60)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn service_window_equals_direct_integration(
        resources in 1..5usize,
        window in 1..5_000_000u64,
        script in steps(4),
    ) {
        let mut fast = ServiceWindow::new(resources, window);
        let (mut now, mut periods, mut open) = (0u64, Vec::new(), None::<(u64, usize)>);
        for step in script {
            match step {
                Step::Start(gap, r) => {
                    let r = r % resources;
                    now += gap;
                    periods.extend(open.take().map(|(s, k)| (s, now, k)));
                    open = Some((now, r));
                    fast.start(Time(now), r).unwrap();
                }
                Step::Stop(gap) => {
                    now += gap;
                    periods.extend(open.take().map(|(s, k)| (s, now, k)));
                    fast.stop(Time(now)).unwrap();
                }
                Step::Read(gap) => {
                    now += gap;
                    let from = now.saturating_sub(window);
                    let mut want = vec![0u64; resources];
                    for &(s, e, k) in periods.iter().chain(open.map(|(s, k)| (s, now, k)).iter()) {
                        want[k] += overlap(s, e, from, now);
                    }
                    let mut got = vec![0u64; resources];
                    fast.amounts(Time(now), &mut got).unwrap();
                    prop_assert_eq!(&got, &want);
                    // Up to `steady_until` the reading stays; between services, right after
                    // it the oldest period starts to leave.
                    let until = fast.steady_until().as_micros();
                    if until < u64::MAX / 2 && open.is_none() {
                        let mut later = fast.clone();
                        let mut after = vec![0u64; resources];
                        later.amounts(Time(until), &mut after).unwrap();
                        prop_assert_eq!(&after, &want);
                        later.amounts(Time(until + 1), &mut after).unwrap();
                        prop_assert_ne!(&after, &want);
                    }
                    for (k, w) in want.iter().enumerate() {
                        prop_assert_eq!(fast.amount(Time(now), k).unwrap(), *w);
                    }
                    let mut seconds = vec![0.0; resources];
                    fast.seconds(Time(now), &mut seconds).unwrap();
                    for (s, w) in seconds.iter().zip(&want) {
                        prop_assert_eq!(*s, *w as f64 / 1e6);
                    }
                }
            }
        }
    }

    #[test]
    fn rate_window_equals_direct_integration(
        window in 1..5_000_000u64,
        changes in prop::collection::vec((gap(), 0.0..4.0f64, any::<bool>()), 1..60),
    ) {
        let mut fast = RateWindow::new(window);
        let (mut now, mut history) = (0u64, vec![(0u64, 0.0f64)]);
        for (gap, rate, read) in changes {
            now += gap;
            if read {
                let want = integrated(&history, window, now);
                let got = fast.integral(Time(now)).unwrap();
                prop_assert!((got - want).abs() <= 1e-9 * want.max(1.0), "{} vs {}", got, want);
                // A steady reading stays, bit for bit; an unsteady one moves within a window.
                let mut later = fast.clone();
                if fast.steady_until() == Time(u64::MAX) {
                    prop_assert_eq!(later.integral(Time(now + 3 * window)).unwrap(), got);
                } else {
                    prop_assert_ne!(later.integral(Time(now + 1)).unwrap(), got);
                }
            } else {
                history.push((now, rate));
                fast.set(Time(now), rate).unwrap();
                prop_assert_eq!(fast.rate(), rate);
            }
        }
    }

    /// Far from time 0, after hundreds of rate changes and days-long stretches, a reading — a
    /// difference of two large running integrals — stays within 10⁻¹² of what the window can
    /// hold.
    #[test]
    fn rate_window_keeps_its_precision_over_a_long_run(
        window in 1..5_000_000u64,
        offset in 0..(1u64 << 45),
        changes in prop::collection::vec(
            (prop_oneof![8 => 0..400_000u64, 1 => 100_000_000_000..1_000_000_000_000u64], 0.0..4.0f64),
            100..600,
        ),
    ) {
        let mut fast = RateWindow::new(window);
        let (mut now, mut history) = (offset, Vec::new());
        for (k, (gap, rate)) in changes.into_iter().enumerate() {
            now += gap;
            history.push((now, rate));
            fast.set(Time(now), rate).unwrap();
            if k % 7 != 0 {
                continue;
            }
            let want = integrated(&history, window, now);
            let got = fast.integral(Time(now)).unwrap();
            let room = 4.0 * window as f64 / 1e6;
            prop_assert!((got - want).abs() <= 1e-12 * room, "{} vs {}", got, want);
        }
    }

    /// Members join and leave (several in one instant, some back in the instant they left);
    /// each one's reading equals its own rate `wᵢ / Σ w` kept and integrated segment by
    /// segment, far from time 0 and across days-long stretches, and stays, bit for bit, for as
    /// long as it says it will.
    #[test]
    fn shared_window_equals_each_members_own_rate_integrated(
        window in 1..5_000_000u64,
        offset in prop_oneof![Just(0u64), 0..(1u64 << 45)],
        weights in prop::collection::vec(0.05..5.0f64, 1..6),
        instants in prop::collection::vec(
            (
                prop_oneof![4 => gap(), 1 => 100_000_000_000..1_000_000_000_000u64],
                prop::collection::vec((0..6usize, any::<bool>()), 0..4),
                any::<bool>(),
            ),
            1..80,
        ),
    ) {
        let n = weights.len();
        let mut fast = SharedWindow::new(weights.clone(), window).unwrap();
        let mut active = vec![false; n];
        let mut history: Vec<Vec<(u64, f64)>> = vec![Vec::new(); n];
        let mut now = offset;
        for (gap, toggles, read) in instants {
            now += gap;
            for (member, on) in toggles {
                let member = member % n;
                active[member] = on;
                fast.set_active(Time(now), member, on).unwrap();
            }
            fast.settle(Time(now)).unwrap();
            let total: f64 = (0..n).filter(|k| active[*k]).map(|k| weights[k]).sum();
            for k in 0..n {
                let rate = if active[k] { weights[k] / total } else { 0.0 };
                history[k].push((now, rate));
            }
            if !read {
                continue;
            }
            for k in 0..n {
                prop_assert_eq!(fast.is_active(k), active[k]);
                let want = integrated(&history[k], window, now);
                let (got, steady) = fast.read(Time(now), k).unwrap();
                let room = window as f64 / 1e6;
                prop_assert!((got - want).abs() <= 1e-12 * room, "member {}: {} vs {}", k, got, want);
                // What it says holds, holds (saying less only costs the engine a reading).
                let until = match steady {
                    Time(u64::MAX) => now + 3 * window,
                    Time(until) => until,
                };
                prop_assert!(until >= now);
                prop_assert_eq!(fast.clone().read(Time(until), k).unwrap().0, got);
            }
        }
    }

    #[test]
    fn shared_window_refuses_what_it_cannot_integrate(bad in prop_oneof![Just(f64::NAN), Just(-1.0), Just(f64::INFINITY)]) {
        prop_assert!(SharedWindow::new(vec![1.0, bad], 1_000).is_err());
        let mut w = SharedWindow::new(vec![1.0], 1_000).unwrap();
        w.set_active(Time(10), 0, true).unwrap();
        w.settle(Time(10)).unwrap();
        prop_assert!(w.read(Time(9), 0).is_err());
        prop_assert!(w.set_active(Time(5), 0, false).is_err());
    }
}
