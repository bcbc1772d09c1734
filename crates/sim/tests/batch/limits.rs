//! A site's limits: a group's jobs held, and let go at their ends.

use super::*;

/// A site's limit holds a group's jobs without holding anyone else's: u0 may run one job at a
/// time until its cap is raised to two at 5 s, so its second job starts then and its third
/// when its first ends; u1's job, submitted after them, starts at once on the free room, under
/// the main scheduler and backfill alike.
#[test]
fn a_limit_holds_its_groups_jobs_and_passes_over_them() {
    use fairshare_sim::cluster::{Cap, Limit, Scope};
    let mut jobs: Vec<Task> = (0..3)
        .map(|i| job(i, f64::from(i as u32) * 0.1, 10.0, 20.0, 2.0))
        .collect();
    jobs.iter_mut().for_each(|j| j.user = 0);
    jobs.push(job(3, 1.0, 10.0, 20.0, 2.0));
    jobs[3].user = 1;
    let cap = |most| Cap {
        jobs: Some(most),
        held: vec![None],
    };
    let limit = Limit {
        name: "user u0: MaxJobs".into(),
        scope: Scope {
            users: Some(vec![0]),
            ..Scope::default()
        },
        caps: vec![(Time::ZERO, cap(1)), (Time::from_secs_f64(5.0), cap(2))],
    };
    for scheduler in [
        SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine),
        slurm_with(at_every_event()),
    ] {
        let mut config = config_for("fifo", two_nodes(4.0), scheduler, &jobs);
        config.limits = vec![limit.clone()];
        let result = replay_config(&config, &jobs);
        assert_eq!(starts(&result), [0.0, 5.0, 10.0, 1.0]);
        assert_eq!(result.held_by_limits.get("user u0: MaxJobs"), Some(&2));
    }
}

/// A limit lets a job go when the job ends, not when its nodes are released: u0 may run one
/// job at a time; its first ends at 10 s on n1, whose node is completing for 20 ms more, and
/// a pass run at 10.01 s by u1's submission starts u0's second job on n2 at once (Slurm's
/// accounting policy counts the job out at its completion), u1's job taking n1 once it is
/// released. Counted out only with its node, u0's job would wait for n1.
#[test]
fn a_limit_lets_a_job_go_at_its_end_before_its_nodes_are_released() {
    use fairshare_sim::cluster::{Cap, Limit, Scope};
    let mut jobs = vec![
        job(0, 0.0, 10.0, 20.0, 4.0),
        job(1, 0.1, 10.0, 20.0, 4.0),
        job(2, 10.01, 10.0, 20.0, 4.0),
    ];
    jobs[1].user = 0;
    let limit = Limit {
        name: "user u0: MaxJobs".into(),
        scope: Scope {
            users: Some(vec![0]),
            ..Scope::default()
        },
        caps: vec![(
            Time::ZERO,
            Cap {
                jobs: Some(1),
                held: vec![None],
            },
        )],
    };
    let completing = SlurmParameters {
        completing_us: 20_000,
        ..at_every_event()
    };
    let mut config = config_for("fifo", two_nodes(4.0), slurm_with(completing), &jobs);
    config.limits = vec![limit];
    let result = replay_config(&config, &jobs);
    assert_eq!(starts(&result), [0.0, 10.01, 10.02]);
    assert_eq!(result.jobs[1].placed[0].0, 1, "on n2");
}
