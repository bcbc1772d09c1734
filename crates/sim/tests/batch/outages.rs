//! Outages: drained nodes, announced reservations, an unknown node refused, an outage begun
//! before the run.

use super::*;

/// The outage of `hosts` from `from` to `to` seconds, announced (a reservation) or not.
fn outage(hosts: &[&str], from: f64, to: f64, announced: bool) -> fairshare_sim::cluster::Outage {
    fairshare_sim::cluster::Outage {
        name: format!("{hosts:?}"),
        hosts: hosts.iter().map(|h| h.to_string()).collect(),
        from: Time::from_secs_f64(from),
        to: Some(Time::from_secs_f64(to)),
        announced,
    }
}

/// Nodes drained from 5 s to 30 s take no new job and keep their running one: job 0 runs on
/// n1 to its end at 50 s, and job 1, submitted at 10 s, waits for n2 to come back at 30 s
/// (at once without the drain), under the main scheduler and backfill alike.
#[test]
fn a_drained_node_takes_no_new_job_until_it_is_back() {
    let jobs = [job(0, 0.0, 50.0, 60.0, 4.0), job(1, 10.0, 10.0, 20.0, 4.0)];
    for scheduler in [
        SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine),
        slurm_with(at_every_event()),
    ] {
        let mut config = config_for("fifo", named_nodes(), scheduler, &jobs);
        assert_eq!(starts(&replay_config(&config, &jobs)), [0.0, 10.0]);
        config.outages = vec![outage(&["n1", "n2"], 5.0, 30.0, false)];
        let result = replay_config(&config, &jobs);
        assert_eq!(starts(&result), [0.0, 30.0]);
        assert_eq!(result.jobs[0].end, Time::from_secs_f64(50.0));
        assert_eq!(result.jobs[1].placed[0].0, 1, "on n2");
    }
}

/// A reservation of n2 from 40 s to 100 s, announced from the start, is crossed by no job:
/// job 1 runs on n2 before it; job 2, whose time limit would reach into it, waits for its end
/// though n2 is free at 11 s; job 3, short enough, backfills there before it (at 11 s under
/// EASY, at Slurm's backfill cycle of 30 s), under the main scheduler and Slurm's backfill
/// alike.
#[test]
fn no_job_crosses_an_announced_reservation() {
    let jobs = [
        job(0, 0.0, 150.0, 200.0, 4.0),
        job(1, 1.0, 10.0, 20.0, 4.0),
        job(2, 2.0, 10.0, 50.0, 4.0),
        job(3, 3.0, 5.0, 8.0, 4.0),
    ];
    for (scheduler, backfills_at) in [
        (SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine), 11.0),
        (slurm_with(at_every_event()), 30.0),
    ] {
        let mut config = config_for("fifo", named_nodes(), scheduler, &jobs);
        assert_eq!(
            starts(&replay_config(&config, &jobs)),
            [0.0, 1.0, 11.0, 21.0]
        );
        config.outages = vec![outage(&["n2"], 40.0, 100.0, true)];
        let result = replay_config(&config, &jobs);
        assert_eq!(starts(&result), [0.0, 1.0, 100.0, backfills_at]);
        assert_eq!(result.jobs[2].placed[0].0, 1, "on n2");
    }
}

/// An outage naming a node the run does not have is refused, naming both.
#[test]
fn an_outage_of_an_unknown_node_is_refused() {
    let jobs = [job(0, 0.0, 10.0, 20.0, 4.0)];
    let easy = SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine);
    let mut config = config_for("fifo", named_nodes(), easy, &jobs);
    config.outages = vec![outage(&["n9"], 5.0, 30.0, false)];
    let arrivals = jobs.iter().cloned().map(Ok::<_, Infallible>);
    let e = fairshare_sim::cluster::run(&config, arrivals, |_| {}).unwrap_err();
    assert!(e.to_string().contains("n9"), "{e}");
}

/// An outage that began long before the run's first event (its origin) closes its node from
/// the run's start: the job, submitted after the window opened, goes to the other node.
#[test]
fn an_outage_begun_before_the_run_closes_its_node_from_the_start() {
    let jobs = [job(0, 150.0, 10.0, 20.0, 4.0)];
    let easy = SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine);
    let mut config = config_for("fifo", named_nodes(), easy, &jobs);
    config.opens = Some(Time::from_secs_f64(100.0));
    config.origin = Time::from_secs_f64(150.0);
    config.outages = vec![outage(&["n1"], 5.0, 300.0, false)];
    let result = replay_config(&config, &jobs);
    assert_eq!(starts(&result), [150.0]);
    assert_eq!(result.jobs[0].placed[0].0, 1, "on n2");
}
