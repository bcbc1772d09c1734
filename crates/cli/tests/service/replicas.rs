//! Two replicas on one PostgreSQL database: one computes at a time, the survivor takes over, and
//! a leader that loses its lock connection stops saying it leads.

use super::*;

#[test]
fn two_replicas_compute_one_at_a_time_and_the_survivor_takes_over() {
    if !backends().contains(&"postgres") {
        return;
    }
    let db = database("postgres", "");
    let a = Daemon::start(&db, 0.3);
    let b = Daemon::start(&db, 0.3);
    register_e1(&a);
    b.expect(
        200,
        "POST",
        "/v1/usage",
        AGENT,
        Some(&report("n1", 1, &[("d1", 5.0)])),
    );
    let leaders = |daemons: &[&Daemon]| -> Vec<bool> {
        daemons
            .iter()
            .map(|d| d.expect(200, "GET", "/healthz", READER, None)["leader"] == true)
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while leaders(&[&a, &b]).iter().filter(|l| **l).count() != 1 {
        assert!(Instant::now() < deadline, "no leader");
        std::thread::sleep(Duration::from_millis(50));
    }
    for _ in 0..20 {
        let l = leaders(&[&a, &b]);
        assert_eq!(
            l.iter().filter(|l| **l).count(),
            1,
            "exactly one leads: {l:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let (leader, follower) = if leaders(&[&a, &b])[0] {
        (a, b)
    } else {
        (b, a)
    };
    let seen = follower.cycle_after(1)["cycle"].as_u64().unwrap();
    assert!(seen >= 2, "the follower serves the leader's cycles");
    leader.kill();
    let killed = Instant::now();
    while !leaders(&[&follower])[0] {
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "no takeover:\n{}",
            follower.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = killed.elapsed();
    let later = follower.cycle_after(seen + 1);
    assert!(later["cycle"].as_u64().unwrap() > seen);
    eprintln!("takeover {took:?} after SIGKILL of the leader (cycle 0.3 s)");
    assert!(
        took < Duration::from_millis(1500),
        "taken over within about one cycle: {took:?}"
    );
}

#[test]
fn healthz_stops_claiming_leadership_when_the_lock_connection_is_lost() {
    if !backends().contains(&"postgres") {
        return;
    }
    let db = database("postgres", "");
    let a = Daemon::start(&db, 30.0);
    let deadline = Instant::now() + Duration::from_secs(10);
    let leads = |d: &Daemon| d.expect(200, "GET", "/healthz", READER, None)["leader"] == true;
    while !leads(&a) {
        assert!(Instant::now() < deadline, "no leader");
        std::thread::sleep(Duration::from_millis(50));
    }
    let b = Daemon::start(&db, 30.0);
    std::thread::sleep(Duration::from_millis(1000));
    assert!(leads(&a) && !leads(&b), "a leads, b follows");
    // End a's lock session, as a failover or an administrator's pg_terminate_backend does.
    // The advisory lock key 0x6661697273686172 is (classid, objid) = (0x66616972, 0x73686172).
    sql(
        &db.url,
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' \
         AND classid = 1717660018 AND objid = 1936220530 AND granted",
    )
    .unwrap();
    let cut = Instant::now();
    let mut both_until = None;
    while cut.elapsed() < Duration::from_secs(3) {
        if leads(&a) && leads(&b) {
            both_until = Some(cut.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(leads(&a) != leads(&b), "exactly one leads at the end");
    // a notices at its next check (every 0.5 s), b may take the lock before that.
    let both_until = both_until.unwrap_or_default();
    assert!(
        both_until < Duration::from_millis(1000),
        "both said they lead until {both_until:?} after a's lock session ended"
    );
}
