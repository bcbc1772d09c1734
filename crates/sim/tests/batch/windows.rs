//! A window cut from a site's life: the machine as the record had it at the opening, jobs pinned
//! to their recorded hosts, the history before the window charged.

use super::*;

/// A window that opens at 100 s on a busy machine, as a window cut from a site's life: job 0,
/// which the record started at 10 s on n2, starts there then (n1 is the first fit) and holds
/// n2 to its end; job 1, submitted at 50 s, waits for the opening though n1 is free (with its
/// own submission, so that its age is right); job 2, submitted after the opening, waits for
/// room. Job 0 is charged, and jobs 0 and 1 are left out of every count and wait: the results
/// count the jobs eligible inside the window, from the opening.
#[test]
fn a_window_opens_on_the_machine_as_the_record_had_it() {
    let mut pinned = job(0, 0.0, 200.0, 300.0, 4.0);
    pinned.start = Some(Time::from_secs_f64(10.0));
    pinned.hosts = vec!["n2".into()];
    let mut waiting = job(1, 50.0, 30.0, 60.0, 4.0);
    waiting.start = Some(Time::from_secs_f64(150.0));
    let jobs = [pinned, waiting, job(2, 120.0, 10.0, 20.0, 4.0)];
    let easy = SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine);
    let mut config = config_for("fifo", named_nodes(), easy, &jobs);
    let empty = replay_config(&config, &jobs);
    assert_eq!(starts(&empty), [0.0, 50.0, 120.0], "an empty start");
    config.opens = Some(Time::from_secs_f64(100.0));
    let result = replay_config(&config, &jobs);
    assert_eq!(starts(&result), [10.0, 100.0, 130.0]);
    assert_eq!(result.jobs[0].placed, [(1, vec![0.5])], "on n2");
    assert_eq!((result.tasks_pinned, result.tasks_pinned_elsewhere), (1, 0));
    assert_eq!(result.tasks_submitted, 1, "jobs 0 and 1 are not counted");
    let waits: Vec<f64> = result.users.iter().map(|u| u.mean_wait_s).collect();
    assert_eq!(waits, [10.0], "only job 2's user is listed");
    assert_eq!(result.simulated_s, 110.0, "from the opening to job 0's end");
    let opened = result.opened.expect("the machine at the opening");
    assert_eq!((opened.jobs_running, opened.jobs_waiting), (1, 1));
    assert_eq!((opened.held, opened.capacity), (vec![4.0], vec![8.0]));
}

/// A job the record started before the window on a node the catalogue does not name is started
/// at its recorded start where it fits, and counted; one that fits nowhere then waits.
#[test]
fn a_pinned_job_off_the_known_nodes_starts_where_it_fits() {
    let mut elsewhere = job(0, 0.0, 50.0, 60.0, 4.0);
    elsewhere.start = Some(Time::from_secs_f64(5.0));
    elsewhere.hosts = vec!["gone".into()];
    let mut unnamed = job(1, 0.0, 50.0, 60.0, 4.0);
    unnamed.start = Some(Time::from_secs_f64(6.0));
    let mut crowded = job(2, 0.0, 10.0, 60.0, 4.0);
    crowded.start = Some(Time::from_secs_f64(7.0));
    crowded.hosts = vec!["n1".into()];
    let jobs = [elsewhere, unnamed, crowded];
    let easy = SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine);
    let mut config = config_for("fifo", named_nodes(), easy, &jobs);
    config.opens = Some(Time::from_secs_f64(100.0));
    let result = replay_config(&config, &jobs);
    assert_eq!(starts(&result), [5.0, 6.0, 55.0]);
    assert_eq!((result.tasks_pinned, result.tasks_pinned_elsewhere), (3, 3));
}

/// The usage of before the window counts as it counted for the site: under a fairshare
/// policy, the user whose job ran before the opening yields to one with no history, though
/// its job waited longer; without that history, the older job goes first.
#[test]
fn the_history_before_a_window_is_charged_to_the_accounting() {
    let capacity = || {
        Capacity::Machines(MachineCatalogue::new(vec![NodeType::new(
            "n1",
            1,
            vec![4.0],
        )]))
    };
    let mut history = job(0, 0.0, 50.0, 60.0, 4.0);
    history.start = Some(Time::ZERO);
    history.hosts = vec!["n1".into()];
    let mut older = job(1, 60.0, 10.0, 20.0, 4.0);
    older.user = 0;
    let mut newer = job(2, 70.0, 10.0, 20.0, 4.0);
    newer.user = 1;
    let easy = || SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine);
    let opens = Some(Time::from_secs_f64(100.0));
    let jobs = [history, older.clone(), newer.clone()];
    let mut config = config_for("fairshare", capacity(), easy(), &jobs);
    config.opens = opens;
    assert_eq!(starts(&replay_config(&config, &jobs)), [0.0, 110.0, 100.0]);
    let fresh = [older, newer];
    let mut config = config_for("fairshare", capacity(), easy(), &jobs);
    config.opens = opens;
    assert_eq!(starts(&replay_config(&config, &fresh)), [100.0, 110.0]);
}

/// A job of processors anywhere that the record ran over two hosts takes, at its recorded
/// start, as many processors on each in turn as fit there (Slurm spreads them unevenly): 2 on
/// n1 beside job 0's 2, then 4 on n2.
#[test]
fn a_pinned_job_of_processors_fills_its_hosts_in_turn() {
    let mut first = job(0, 0.0, 50.0, 60.0, 2.0);
    first.start = Some(Time::ZERO);
    first.hosts = vec!["n1".into()];
    let mut spread = job(1, 0.0, 50.0, 60.0, 6.0);
    spread.start = Some(Time::from_secs_f64(1.0));
    spread.hosts = vec!["n1".into(), "n2".into()];
    let jobs = [first, spread];
    let easy = SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine);
    let mut config = config_for("fifo", named_nodes(), easy, &jobs);
    config.opens = Some(Time::from_secs_f64(100.0));
    let result = replay_config(&config, &jobs);
    assert_eq!(result.tasks_pinned_elsewhere, 0);
    assert_eq!(result.jobs[1].placed, [(0, vec![0.25]), (1, vec![0.5])]);
}
