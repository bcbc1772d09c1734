//! The history carried on pass by pass equals the history rebuilt at once: the same usage
//! and the same priority for every association, whatever the passes' moments.

use super::recorded;
use fairshare_core::model::Time;
use fairshare_core::rank::Head;
use fairshare_reconcile::history::History;
use fairshare_reconcile::machines::Machines;
use fairshare_slurm::accounting::Allocation;
use fairshare_slurm::assoc::parse_assoc;
use fairshare_slurm::clients::clients;
use fairshare_slurm::nodes::parse_nodes;
use proptest::prelude::*;
use std::collections::BTreeMap;

const USERS: [(&str, &str); 4] = [
    ("physics", "u1"),
    ("physics", "u2"),
    ("chemistry", "u3"),
    ("chemistry", "u4"),
];

fn secs(s: u64) -> Time {
    Time::from_micros(s * 1_000_000)
}

/// A job as `sacct` lists it at `now`: still running (no end) if it ends later.
fn listed(job: &(usize, u64, u64, u32), id: usize, now: u64) -> Allocation {
    let (user, start, length, cpus) = *job;
    Allocation {
        id: id as u64,
        user: USERS[user].1.into(),
        account: USERS[user].0.into(),
        partition: "main".into(),
        submit: secs(start),
        start: secs(start),
        end: Some(start + length).filter(|e| *e <= now).map(secs),
        demand: vec![f64::from(cpus), 0.0, 0.0],
        nodes: Some(1),
        qos: "normal".into(),
        billing: f64::from(cpus),
    }
}

/// What `sacct -S from -E to` lists of `jobs`.
fn sacct(jobs: &[(usize, u64, u64, u32)], from: u64, to: u64) -> Vec<Allocation> {
    let active = |j: &&(usize, u64, u64, u32)| j.1 <= to && j.1 + j.2 >= from;
    let active = jobs.iter().enumerate().filter(|(_, j)| active(j));
    active.map(|(id, j)| listed(j, id, to)).collect()
}

/// Every association's counted usage and priority, all waiting with equal heads.
fn standing(history: &mut History) -> Vec<(f64, Option<f64>)> {
    let head = Head::new(secs(0), 0);
    let heads: BTreeMap<u32, Head> = (0..4).map(|c| (c, head)).collect();
    history.order(&heads).unwrap();
    (0..4u32)
        .map(|c| (history.counted(c), history.ranker().priority(c)))
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn passes_add_up_to_the_rebuild(
        jobs in prop::collection::vec((0usize..4, 0u64..3_000, 0u64..1_500, 1u32..=8), 1..25),
        cuts in prop::collection::vec(1u64..4_000, 0..6),
        policy in prop::sample::select(vec!["sdrf:delta=0.999", "fairshare:refresh=0,decay=half-life:600", "kueue-afs:refresh=0", "decayed-usage:half-life=600"]),
    ) {
        let tree = parse_assoc(&recorded("sacctmgr.txt")).unwrap();
        let clients = clients(&tree, None).unwrap();
        let machines = Machines::of(&parse_nodes(&recorded("sinfo.json")).unwrap(), &[]).unwrap();
        let policy = policy.parse().unwrap();
        let now = 4_000;
        let mut whole = History::new(&policy, &clients, &machines, secs(0)).unwrap();
        whole.record(&sacct(&jobs, 0, now), &clients, &machines, secs(now)).unwrap();
        let mut passes = History::new(&policy, &clients, &machines, secs(0)).unwrap();
        let mut cuts = cuts;
        cuts.sort_unstable();
        cuts.push(now);
        let mut last = 0;
        for cut in cuts {
            let listed = sacct(&jobs, last.max(100) - 100, cut);
            let step = passes.record(&listed, &clients, &machines, secs(cut)).unwrap();
            prop_assert_eq!(step.clamped + step.missed + step.unlisted, 0);
            last = cut;
        }
        let (a, b) = (standing(&mut whole), standing(&mut passes));
        for (x, y) in a.iter().zip(&b) {
            prop_assert!(close(x.0, y.0), "counted {:?} against {:?}", a, b);
            match (x.1, y.1) {
                (Some(p), Some(q)) => prop_assert!(close(p, q), "priority {:?} against {:?}", a, b),
                (p, q) => prop_assert_eq!(p, q),
            }
        }
    }
}
