use super::*;

/// The two users of the worked example of docs/mechanisms.md, SDRF §7.5 (n = 4, ρ = 1).
fn worked_example(tau: f64, form: PriorityForm) -> LiveTree {
    let mut tree = LiveTree::new(2, tau, form);
    tree.insert(
        0,
        Member {
            weight: 1.0,
            allocation: vec![0.40, 0.10],
            excess: vec![0.15, 0.0],
            commitment: vec![0.05, 0.20],
        },
    )
    .unwrap();
    tree.insert(
        1,
        Member {
            weight: 1.0,
            allocation: vec![0.20, 0.30],
            excess: vec![0.0, 0.05],
            commitment: vec![0.30, 0.10],
        },
    )
    .unwrap();
    tree
}

/// The time of the tree's next certificate (infinity if none), from its clock −x.
fn next_event(tree: &LiveTree) -> f64 {
    match tree.tournament.due() {
        due if due == f64::INFINITY => due,
        due => tree.t_ref - tree.tau * (-due).ln(),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn worked_example_swaps_once_at_the_crossing() {
    let mut tree = worked_example(100.0, PriorityForm::MaxOfSums);
    assert!(close(tree.priority(0).unwrap(), 0.45));
    assert!(close(tree.priority(1).unwrap(), 0.50));
    assert_eq!(tree.iter().collect::<Vec<_>>(), vec![0, 1]);
    let due = next_event(&tree);
    assert!((due - 13.3531).abs() < 1e-4, "t* = {due}");

    // Just before t*, A is still first; at t* both priorities are 0.4625.
    tree.advance(13.353).unwrap();
    assert_eq!(tree.first(), Some(0));
    tree.advance(due).unwrap();
    assert!(close(tree.priority(0).unwrap(), 0.4625));
    assert!(close(tree.priority(1).unwrap(), 0.4625));
    assert!(close(tree.commitment(0).unwrap()[0], 0.0625));

    // After it B is first, and nothing else ever happens.
    tree.advance(due + 1e-6).unwrap();
    assert_eq!(tree.iter().collect::<Vec<_>>(), vec![1, 0]);
    assert_eq!(next_event(&tree), f64::INFINITY);
    tree.advance(1e6).unwrap();
    assert_eq!(tree.iter().collect::<Vec<_>>(), vec![1, 0]);
    assert!(close(tree.priority(0).unwrap(), 0.55));
    assert!(close(tree.priority(1).unwrap(), 0.35));
    assert_eq!(tree.counters().events, 1);
}

#[test]
fn a_frozen_tree_works_its_certificates_out_again_when_time_moves() {
    let mut tree = worked_example(100.0, PriorityForm::MaxOfSums);
    tree.freeze();
    // B re-entered while frozen: its match is played, without a certificate.
    let b = Member {
        weight: 1.0,
        allocation: vec![0.20, 0.30],
        excess: vec![0.0, 0.05],
        commitment: vec![0.30, 0.10],
    };
    tree.insert(1, b).unwrap();
    assert_eq!(tree.first(), Some(0));
    assert_eq!(next_event(&tree), f64::INFINITY);
    // Past t* = 13.3531 s, B is first, as in the tree that never froze.
    tree.advance(20.0).unwrap();
    assert_eq!(tree.first(), Some(1));
    assert!(next_event(&tree) > 20.0);
}

#[test]
fn sum_of_maxes_ties_the_same_users_at_time_zero() {
    let mut tree = worked_example(100.0, PriorityForm::SumOfMaxes);
    assert!(close(tree.priority(0).unwrap(), 0.60));
    assert!(close(tree.priority(1).unwrap(), 0.60));
    // B's dominant commitment falls faster (slope 0.30 against A's 0.20), so B leads at the
    // tie (rule 2; here 0.4 + 0.2 > 0.3 + 0.3 in floating point already) and from then on.
    assert_eq!(tree.first(), Some(1));
    tree.advance(1e6).unwrap();
    assert_eq!(tree.first(), Some(1));
    assert_eq!(tree.counters().events, 0);
}

#[test]
fn exact_ties_go_to_the_larger_slope_then_the_smaller_id() {
    let member = |commitment: f64, excess: f64| Member {
        weight: 1.0,
        allocation: vec![0.25],
        excess: vec![excess],
        commitment: vec![commitment],
    };
    let mut tree = LiveTree::new(1, 10.0, PriorityForm::SumOfMaxes);
    tree.insert(7, member(0.5, 0.5)).unwrap(); // constant
    tree.insert(3, member(0.5, 0.5)).unwrap(); // identical: the smaller id first
    tree.insert(9, member(0.5, 0.0)).unwrap(); // decays: first
    tree.insert(1, member(0.5, 1.0)).unwrap(); // grows: last
    assert_eq!(tree.iter().collect::<Vec<_>>(), vec![9, 3, 7, 1]);
}

#[test]
fn update_reanchors_with_the_old_excess() {
    let mut tree = LiveTree::new(1, 10.0, PriorityForm::SumOfMaxes);
    let member = Member {
        weight: 2.0,
        allocation: vec![0.5],
        excess: vec![0.2],
        commitment: vec![0.0],
    };
    tree.insert(4, member).unwrap();
    tree.advance(10.0).unwrap();
    let before = tree.commitment(4).unwrap()[0];
    assert!(close(
        before,
        crate::usage::decay::exp_advance(0.0, 0.2, 10.0, 10.0)
    ));
    assert!(tree.update(4, &[0.1], &[0.0]).unwrap());
    assert!(close(tree.commitment(4).unwrap()[0], before));
    assert!(close(tree.priority(4).unwrap(), (0.1 + before) / 2.0));
    tree.advance(20.0).unwrap();
    assert!(close(
        tree.commitment(4).unwrap()[0],
        before * (-1.0f64).exp()
    ));
    assert!(!tree.update(5, &[0.1], &[0.0]).unwrap());
    assert_eq!(tree.allocation(4), Some(vec![0.1]));
}

#[test]
fn zero_tau_commitments_jump_to_the_excess_at_the_next_instant() {
    let mut tree = LiveTree::new(1, 0.0, PriorityForm::MaxOfSums);
    let member = |allocation: f64, excess: f64, commitment: f64| Member {
        weight: 1.0,
        allocation: vec![allocation],
        excess: vec![excess],
        commitment: vec![commitment],
    };
    tree.insert(0, member(0.3, 0.0, 0.0)).unwrap();
    tree.insert(1, member(0.1, 0.0, 0.5)).unwrap(); // 0.6 now, 0.1 from the next instant
    assert_eq!(tree.iter().collect::<Vec<_>>(), vec![0, 1]);
    tree.advance(1e-9).unwrap();
    assert_eq!(tree.iter().collect::<Vec<_>>(), vec![1, 0]);
    assert_eq!(tree.commitment(1), Some(vec![0.0]));
    assert_eq!(tree.counters().events, 1);
    assert!(tree.fresh.is_empty());
}

#[test]
fn infinite_tau_freezes_commitments() {
    let mut tree = worked_example(f64::INFINITY, PriorityForm::MaxOfSums);
    tree.update(0, &[0.40, 0.10], &[0.15, 0.0]).unwrap();
    tree.advance(1e9).unwrap();
    assert_eq!(tree.commitment(0), Some(vec![0.05, 0.20]));
    assert_eq!(tree.counters().events, 0);
}

#[test]
fn rebasing_keeps_commitments_exact_over_a_month() {
    // τ = 9.49 s over one month, stepping a minute at a time: hundreds of rebases.
    let tau = crate::usage::decay::tau_from_epsilon(0.1);
    let mut tree = LiveTree::new(1, tau, PriorityForm::SumOfMaxes);
    let member = Member {
        weight: 1.0,
        allocation: vec![0.5],
        excess: vec![0.25],
        commitment: vec![1.0],
    };
    tree.insert(0, member).unwrap();
    let (mut c, mut t) = (1.0, 0.0);
    for step in 0..2_600_000 / 60 {
        t += 60.0;
        tree.advance(t).unwrap();
        let excess = if step % 2 == 0 { 0.0 } else { 0.25 };
        c = crate::usage::decay::exp_advance(c, if step % 2 == 0 { 0.25 } else { 0.0 }, 60.0, tau);
        tree.update(0, &[0.5], &[excess]).unwrap();
        assert!((tree.commitment(0).unwrap()[0] - c).abs() < 1e-12, "at {t}");
    }
    assert!(tree.x > (-REBASE).exp());
}

/// Two clients whose priorities cross `ln(1/gap)` time constants from now: A holds `level`,
/// B's commitment of 1 decays towards `level − gap` (τ = 1 s, one resource).
fn far_crossing(level: f64, gap: f64) -> (LiveTree, f64) {
    let mut tree = LiveTree::new(1, 1.0, PriorityForm::MaxOfSums);
    let a = Member {
        weight: 1.0,
        allocation: vec![level],
        ..Member::default()
    };
    let target = level - gap;
    let b = Member {
        weight: 1.0,
        allocation: vec![0.0],
        excess: vec![target],
        commitment: vec![target + 1.0],
    };
    tree.insert(0, a).unwrap();
    tree.insert(1, b).unwrap();
    // B's priority `target + e^(−t)` meets A's `level` where e^(−t) = level − target.
    (tree, -(level - target).ln())
}

/// Advances `tree` in 5-second steps up to `t` (a rebase every 32 s or so).
fn walk(tree: &mut LiveTree, t: f64) {
    while tree.now() + 5.0 < t {
        let next = tree.now() + 5.0;
        tree.advance(next).unwrap();
    }
    tree.advance(t).unwrap();
}

#[test]
fn a_crossing_hundreds_of_time_constants_away_survives_every_rebase() {
    // The certificate is a decay variable of e^(−474): kept through 14 rebases.
    let (mut tree, at) = far_crossing(1e-200, 1e-206);
    assert!((at - 474.3).abs() < 0.1, "{at}");
    walk(&mut tree, at - 1.0);
    assert_eq!(tree.first(), Some(0));
    assert_eq!(tree.counters().events, 0);
    walk(&mut tree, at + 1.0);
    assert_eq!(tree.first(), Some(1));
    assert_eq!(tree.counters().events, 1);
}

#[test]
fn a_crossing_beyond_the_farthest_certificate_falls_due_early_and_is_not_lost() {
    // e^(−695) is below `FARTHEST`: the match is replayed early, then the crossing is exact.
    let (mut tree, at) = far_crossing(1e-290, 1e-302);
    assert!((-at).exp() < FARTHEST);
    walk(&mut tree, at - 1.0);
    assert_eq!(tree.first(), Some(0));
    walk(&mut tree, at + 1.0);
    assert_eq!(tree.first(), Some(1));
    assert!(tree.counters().events >= 2, "{:?}", tree.counters());
}

#[test]
fn bad_inputs_are_refused_and_leave_the_tree_as_it_was() {
    let mut tree = LiveTree::new(0, -5.0, PriorityForm::SumOfMaxes);
    let nan_weight = Member {
        weight: f64::NAN,
        allocation: vec![0.5],
        ..Member::default()
    };
    assert!(matches!(
        tree.insert(u32::MAX, nan_weight),
        Err(LiveTreeError::BadValue {
            field: "weight",
            ..
        })
    ));
    let infinite = Member {
        weight: 1.0,
        allocation: vec![f64::INFINITY],
        ..Member::default()
    };
    assert!(tree.insert(u32::MAX, infinite).is_err());
    assert!(tree.is_empty());
    let member = Member {
        weight: 1.0,
        allocation: vec![0.5],
        ..Member::default()
    };
    tree.insert(u32::MAX, member).unwrap();
    for t in [f64::NAN, f64::INFINITY, -1.0] {
        assert!(
            matches!(tree.advance(t), Err(LiveTreeError::Time { .. })),
            "{t}"
        );
    }
    assert!(matches!(
        tree.update(u32::MAX, &[-1.0], &[]),
        Err(LiveTreeError::BadValue { .. })
    ));
    assert!(matches!(
        tree.update(u32::MAX, &[0.1, 0.2, 0.3], &[]),
        Err(LiveTreeError::WrongLength {
            found: 3,
            expected: 1,
            ..
        })
    ));
    assert_eq!(tree.priority(u32::MAX), Some(0.5));
    assert_eq!(tree.now(), 0.0);
    assert_eq!(tree.remove(u32::MAX), Some(vec![0.0]));
    assert_eq!(tree.remove(u32::MAX), None);
    assert!(tree.is_empty());
}
