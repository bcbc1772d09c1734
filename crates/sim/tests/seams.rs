//! The engine's seams, used from outside the crate as a newcomer would: a scheduler and a
//! placement written here, in one place each, plug into the engine through their registry
//! entry's type alone (docs/architecture.md, "Seams"). Adding either to fairshare is this code
//! in one file plus its line in `SchedulerEntry::ALL` or `PlacementEntry::ALL`. A ranker of
//! one's own needs no line anywhere: its factory rides in the run's policy ([`PolicySpec::plugged`]).

use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::choice::Choice;
use fairshare_core::model::{MachineCatalogue, NodeType, Time};
use fairshare_core::policy::PolicySpec;
use fairshare_core::rank::{Accounts, Head, KeyedRanker, Ranker, RankerFactory, Share};
use fairshare_sim::cluster::{
    run, Capacity, ClusterConfig, Happened, NodeLoad, PassKind, Placement, PlacementEntry,
    PolicyResult, Reservations, Scheduler, SchedulerEntry, SchedulingPass, Standing, Task, Timing,
    Window,
};
use std::convert::Infallible;
use std::sync::Arc;

/// Serves the waiting user with the highest index first: an order no registered policy gives.
struct LastUserFirst;

impl RankerFactory for LastUserFirst {
    fn ranker(&self, _: usize, shares: &[Share], _: Option<&Accounts>) -> Box<dyn Ranker> {
        let key = |client: u32, _: &[f64], _: &Head| std::cmp::Reverse(client);
        Box::new(KeyedRanker::with_key(shares.len(), Arc::new(key), |k| {
            -f64::from(k.0)
        }))
    }
}

/// Starts only the first job of each pass: a strict one-at-a-time scheduler.
#[derive(Debug)]
struct OneAtATime;

impl Scheduler for OneAtATime {
    fn reservations(&self) -> Reservations {
        Reservations::None
    }

    fn pass(&self, pass: &mut dyn SchedulingPass) {
        if let Some(user) = pass.first() {
            pass.start(user);
        }
    }
}

/// Its registry entry, as its file would declare it.
const ONE_AT_A_TIME: SchedulerEntry = SchedulerEntry {
    name: "one-at-a-time",
    about: "Starts at most one job per pass",
    build: |_| Arc::new(OneAtATime),
};

/// Starts whatever fits, but only every 15 s while jobs wait, whatever arrives or ends
/// between: a scheduler with a cycle of its own (Grid Engine's `schedule_interval`), its
/// timing written here too.
#[derive(Debug)]
struct EveryFifteenSeconds;

/// The cycle, in microseconds.
const CYCLE_US: u64 = 15_000_000;

impl Scheduler for EveryFifteenSeconds {
    fn reservations(&self) -> Reservations {
        Reservations::None
    }

    fn timing(&self, _origin: Time) -> Box<dyn Timing> {
        Box::new(Cycle)
    }

    fn pass(&self, pass: &mut dyn SchedulingPass) {
        assert!(pass.kind().periodic, "only the cycle runs passes");
        while let Some(user) = pass.first() {
            if !pass.start(user) {
                pass.set_aside(user);
            }
        }
    }
}

/// Its timing: a pass on each multiple of the cycle, none at events.
#[derive(Debug)]
struct Cycle;

impl Timing for Cycle {
    fn next_wakeup(&self, now: Time, standing: Standing) -> Option<Time> {
        standing
            .waiting
            .then(|| Time((now.as_micros() / CYCLE_US + 1) * CYCLE_US))
    }

    fn pass_at(&mut self, happened: &Happened) -> Option<PassKind> {
        let on_the_cycle = happened.now.as_micros().is_multiple_of(CYCLE_US);
        on_the_cycle.then_some(PassKind {
            periodic: true,
            whole_queue: false,
        })
    }
}

/// Its registry entry.
const EVERY_FIFTEEN_SECONDS: SchedulerEntry = SchedulerEntry {
    name: "every-15s",
    about: "Starts what fits every 15 s",
    build: |_| Arc::new(EveryFifteenSeconds),
};

/// The last node with room: the mirror image of first fit.
#[derive(Debug)]
struct LastFit;

impl Placement for LastFit {
    fn select_node(&self, demand: &[f64], nodes: &[NodeLoad]) -> Option<usize> {
        nodes.iter().rposition(|n| n.has_room(demand))
    }
}

/// Its registry entry.
const LAST: PlacementEntry = PlacementEntry {
    name: "last",
    about: "The last node, in catalogue order, with room",
    build: || Arc::new(LastFit),
};

/// Single-processor jobs of one user each, all submitted at 0, running 10 s.
fn jobs(n: u64) -> Vec<Task> {
    (0..n)
        .map(|id| {
            let mut task = Task::new(id, id as u32, Time::ZERO, 10_000_000, vec![1.0]);
            task.nodes = None;
            task
        })
        .collect()
}

fn replay(
    capacity: Capacity,
    scheduler: SchedulerEntry,
    placement: PlacementEntry,
    jobs: &[Task],
) -> PolicyResult {
    replay_under(
        "fifo".parse().unwrap(),
        capacity,
        scheduler,
        placement,
        jobs,
    )
}

fn replay_under(
    policy: PolicySpec,
    capacity: Capacity,
    scheduler: SchedulerEntry,
    placement: PlacementEntry,
    jobs: &[Task],
) -> PolicyResult {
    let users = (0..jobs.len()).map(|u| format!("u{u}")).collect();
    let mut config = ClusterConfig::new(policy, capacity, vec!["cpu".into()], users);
    config.scheduler = scheduler.scheduler(FillRule::HeadOfLine);
    config.placement = placement.placement();
    config.record_jobs = Some(Window::ALL);
    run(
        &config,
        jobs.iter().cloned().map(Ok::<_, Infallible>),
        |_| {},
    )
    .unwrap()
}

fn starts(result: &PolicyResult) -> Vec<f64> {
    let mut jobs: Vec<_> = result.jobs.iter().map(|j| (j.id, j.start)).collect();
    jobs.sort();
    jobs.into_iter().map(|(_, s)| s.as_secs_f64()).collect()
}

#[test]
fn a_scheduler_written_outside_plugs_in_through_its_entry() {
    let jobs = jobs(3);
    let fill = replay(
        Capacity::Pool(vec![4.0]),
        SchedulerEntry::FILL,
        PlacementEntry::FIRST,
        &jobs,
    );
    assert_eq!(starts(&fill), [0.0, 0.0, 0.0], "filling starts all three");
    // One per pass: the engine passes again at each finish, so the jobs run one after another.
    let one = replay(
        Capacity::Pool(vec![4.0]),
        ONE_AT_A_TIME,
        PlacementEntry::FIRST,
        &jobs,
    );
    assert_eq!(starts(&one), [0.0, 10.0, 20.0]);
}

#[test]
fn a_scheduler_with_a_timing_of_its_own_plugs_in_through_its_entry() {
    let jobs = jobs(3);
    // One processor: each 10-s job waits for the cycle after the last one's end.
    let cyclic = replay(
        Capacity::Pool(vec![1.0]),
        EVERY_FIFTEEN_SECONDS,
        PlacementEntry::FIRST,
        &jobs,
    );
    assert_eq!(starts(&cyclic), [0.0, 15.0, 30.0]);
    let fill = replay(
        Capacity::Pool(vec![1.0]),
        SchedulerEntry::FILL,
        PlacementEntry::FIRST,
        &jobs,
    );
    assert_eq!(
        starts(&fill),
        [0.0, 10.0, 20.0],
        "at every event, by default"
    );
}

#[test]
fn a_placement_written_outside_plugs_in_through_its_entry() {
    let machines = || {
        let two = NodeType::new("n", 2, vec![1.0]);
        Capacity::Machines(MachineCatalogue::new(vec![two]))
    };
    let mut jobs = jobs(1);
    jobs[0].nodes = Some(1);
    let node_of = |r: &PolicyResult| r.jobs[0].placed.iter().map(|p| p.0).collect::<Vec<_>>();
    let first = replay(
        machines(),
        SchedulerEntry::FILL,
        PlacementEntry::FIRST,
        &jobs,
    );
    assert_eq!(node_of(&first), [0]);
    let last = replay(machines(), SchedulerEntry::FILL, LAST, &jobs);
    assert_eq!(node_of(&last), [1], "last fit takes the last node");
}

#[test]
fn a_ranker_written_outside_plugs_in_through_a_factory() {
    let jobs = jobs(3);
    let fifo = replay(
        Capacity::Pool(vec![1.0]),
        SchedulerEntry::FILL,
        PlacementEntry::FIRST,
        &jobs,
    );
    assert_eq!(starts(&fifo), [0.0, 10.0, 20.0], "FIFO: in submit order");
    let plugged = PolicySpec::plugged("last-user-first", Arc::new(LastUserFirst)).unwrap();
    let last = replay_under(
        plugged,
        Capacity::Pool(vec![1.0]),
        SchedulerEntry::FILL,
        PlacementEntry::FIRST,
        &jobs,
    );
    assert_eq!(starts(&last), [20.0, 10.0, 0.0], "the last user first");
    assert_eq!(last.policy, "last-user-first");
    let taken = PolicySpec::plugged("drf", Arc::new(LastUserFirst)).unwrap_err();
    assert!(
        taken.to_string().contains("registered policy's name"),
        "{taken}"
    );
}

/// Every registered entry is found by its own name, names are unique, each has its line of
/// help, and the first is the default: a new entry needs nothing more than its line.
#[test]
fn the_registries_are_the_only_lists() {
    fn check<C: Choice + PartialEq + std::fmt::Debug + Default>(what: &str) {
        for entry in C::ALL {
            assert_eq!(C::named(entry.name()), Some(*entry), "{what} {entry:?}");
            assert!(!entry.about().is_empty(), "{what} {entry:?} has no help");
            assert!(C::names().contains(entry.name()), "{what} {entry:?}");
        }
        let mut names: Vec<&str> = C::ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), C::ALL.len(), "{what} names are unique");
        assert_eq!(C::default(), C::ALL[0], "{what}: the first is the default");
    }
    check::<SchedulerEntry>("scheduler");
    check::<PlacementEntry>("placement");
    assert!(
        SchedulerEntry::ALL.len() >= 3 && PlacementEntry::ALL.len() >= 2,
        "the shipped ones are there"
    );
}
