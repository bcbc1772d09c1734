//! The order in which a policy would start the pending jobs, played out by the history.

use super::recorded;
use fairshare_core::model::Time;
use fairshare_core::rank::factors::Run;
use fairshare_core::rank::play::Waiting;
use fairshare_core::rank::Head;
use fairshare_reconcile::history::History;
use fairshare_reconcile::machines::Machines;
use fairshare_slurm::accounting::Allocation;
use fairshare_slurm::assoc::parse_assoc;
use fairshare_slurm::clients::clients;
use fairshare_slurm::nodes::parse_nodes;
use std::collections::BTreeMap;

/// The clients of each start of three 2-processor jobs of u1 and three of u2 (one share
/// each under physics, nothing running), all of u1's submitted before u2's, under
/// `policy`, played out for `runs` runs.
fn starts(policy: &str, runs: usize) -> (Vec<u32>, u32, u32) {
    let clients = clients(&parse_assoc(&recorded("sacctmgr.txt")).unwrap(), None).unwrap();
    let machines = Machines::of(&parse_nodes(&recorded("sinfo.json")).unwrap(), &[]).unwrap();
    let history: History =
        History::new(&policy.parse().unwrap(), &clients, &machines, Time::ZERO).unwrap();
    let (u1, u2) = (
        clients.client("physics", "u1").unwrap(),
        clients.client("physics", "u2").unwrap(),
    );
    let queue = |first: u64| -> Vec<Waiting> {
        (0..3)
            .map(|k| {
                let head = Head::new(
                    Time::from_micros((first + 2 * k) * 1_000_000),
                    first + 2 * k,
                );
                history.waiting(head, (&[2.0, 0.0, 0.0], Some(1), None), &machines)
            })
            .collect()
    };
    let queues = BTreeMap::from([(u1, queue(1)), (u2, queue(10))]);
    let played = history.pass_factors(&queues, &BTreeMap::new(), |_, _| None, (runs, 1_000));
    (in_order(&played.unwrap()), u1, u2)
}

/// The client of each start of `runs`, first to last.
fn in_order(runs: &[Run]) -> Vec<u32> {
    let each = |run: &Run| std::iter::repeat_n(run.client, run.jobs.len());
    runs.iter().flat_map(each).collect()
}

fn secs(s: u64) -> Time {
    Time::from_micros(s * 1_000_000)
}

/// The clients of each start under SDRF on the full 8-processor machine: u1 holds 5
/// processors and u2 3 since 0 s (jobs 1 and 2), expected to end at `ends`; each has three
/// pending 2-processor jobs; every job's limit is 60 s.
fn starts_on_a_full_machine(ends: &[(u64, u64)]) -> (Vec<u32>, u32, u32) {
    let clients = clients(&parse_assoc(&recorded("sacctmgr.txt")).unwrap(), None).unwrap();
    let machines = Machines::of(&parse_nodes(&recorded("sinfo.json")).unwrap(), &[]).unwrap();
    let mut history =
        History::new(&"sdrf".parse().unwrap(), &clients, &machines, Time::ZERO).unwrap();
    let running = |id: u64, user: &str, cpus: f64| Allocation {
        id,
        user: user.into(),
        account: "physics".into(),
        partition: "main".into(),
        submit: Time::ZERO,
        start: Time::ZERO,
        end: None,
        demand: vec![cpus, 0.0, 0.0],
        nodes: Some(1),
        qos: "normal".into(),
        billing: cpus,
    };
    let both = [running(1, "u1", 5.0), running(2, "u2", 3.0)];
    history.record(&both, &clients, &machines, secs(5)).unwrap();
    let (u1, u2) = (
        clients.client("physics", "u1").unwrap(),
        clients.client("physics", "u2").unwrap(),
    );
    let queue = |first: u64| -> Vec<Waiting> {
        (first..first + 3)
            .map(|id| {
                let head = Head::new(secs(id), id);
                history.waiting(head, (&[2.0, 0.0, 0.0], Some(1), Some(60)), &machines)
            })
            .collect()
    };
    let queues = BTreeMap::from([(u1, queue(20)), (u2, queue(10))]);
    let ends = ends.iter().map(|&(id, s)| (id, secs(s))).collect();
    let played = history.pass_factors(&queues, &ends, |_, _| None, (100, 1_000));
    (in_order(&played.unwrap()), u1, u2)
}

#[test]
fn whose_job_frees_the_room_weighs_in_the_next_start() {
    // No end known: the play cannot wait for room and ranks the machine as it is: u2,
    // holding less, first.
    let (order, _, u2) = starts_on_a_full_machine(&[]);
    assert_eq!(order[0], u2, "{order:?}");
    // u1's job is expected to end first (10 s): room frees when u1 holds nothing, so u1's
    // job starts first, as SDRF would choose at that moment.
    let (order, u1, _) = starts_on_a_full_machine(&[(1, 10), (2, 100)]);
    assert_eq!(order[0], u1, "{order:?}");
    // u2's ends first: u2 first.
    let (order, _, u2) = starts_on_a_full_machine(&[(1, 100), (2, 10)]);
    assert_eq!(order[0], u2, "{order:?}");
    // Both at 10 s: they end together, both holdings fall before the choice, and u2, who
    // held less over the history, goes first (freed one at a time, u1's job, the first
    // listed, would have left u1 holding nothing against u2's 3 processors).
    let (order, _, u2) = starts_on_a_full_machine(&[(1, 10), (2, 10)]);
    assert_eq!(order[0], u2, "{order:?}");
}

#[test]
fn sdrf_takes_turns_and_fair_tree_keeps_each_users_jobs_together() {
    let (order, u1, u2) = starts("sdrf", 100);
    assert_eq!(
        order,
        [u1, u2, u1, u2, u1, u2],
        "each start adds to its user's share"
    );
    // Played out for two runs only: then each user's remaining jobs together, in the
    // ranker's order at that point (a tie, u1's head older).
    let (order, u1, u2) = starts("sdrf", 2);
    assert_eq!(order, [u1, u2, u1, u1, u2, u2]);
    let (order, u1, u2) = starts("fairshare:function=fair-tree,decay=half-life:600", 100);
    // No usage yet: a tie, broken by the older head, as Slurm breaks it by age; the factors
    // wait for the next refresh, so u1's later jobs stay older than u2's first.
    assert_eq!(order, [u1, u1, u1, u2, u2, u2]);
}
