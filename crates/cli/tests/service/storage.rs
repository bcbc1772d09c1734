//! What the service stores: the same priorities after a restart, every acknowledged report kept
//! once across SIGKILLs under load, a forgotten report's retry recognised, an unreadable stored
//! cycle recomputed, one daemon per SQLite file.

use super::*;

#[test]
fn a_restart_on_the_same_database_serves_the_same_priorities() {
    for backend in backends() {
        let db = database(backend, "");
        let daemon = Daemon::start(&db, 0.2);
        register_e1(&daemon);
        daemon.expect(
            200,
            "POST",
            "/v1/usage",
            AGENT,
            Some(&report("n1", 1, &[("d1", 20.0), ("d2", 5.0), ("e1", 1.0)])),
        );
        daemon.cycle_after(1);
        let status = daemon.terminate();
        assert!(
            status.success(),
            "{backend}: SIGTERM exits cleanly: {status:?}"
        );
        let daemon = Daemon::start(&db, 0.2);
        let first = daemon.expect(200, "GET", "/v1/priorities", READER, None);
        assert!(first["cycle"].as_u64().unwrap() >= 2);
        let status = daemon.terminate();
        assert!(status.success());
        let daemon = Daemon::start(&db, 1000.0);
        let again = daemon.expect(200, "GET", "/v1/priorities", READER, None);
        // The second daemon may have stored one more cycle between the read and its end (a
        // cycle every 0.2 s): the newest is served, the same priorities from the same reports.
        let cycle = |p: &Value| p["cycle"].as_u64().unwrap();
        assert!(cycle(&again) >= cycle(&first), "{backend}: {again}");
        let without_clock = |p: &Value| {
            let mut p = p.clone();
            p["cycle"] = Value::Null;
            p["computed_at_ms"] = Value::Null;
            p
        };
        assert_eq!(
            without_clock(&again),
            without_clock(&first),
            "{backend}: the same priorities, byte for byte"
        );
        let d = daemon.expect(200, "GET", "/v1/users/d", READER, None);
        assert_eq!(d["cycle"], again["cycle"]);
    }
}

/// One load client: its own node with five workloads, reports numbered from 1, each retried
/// until it gets an answer; returns the numbers acknowledged.
fn client(
    url: std::sync::Arc<std::sync::Mutex<String>>,
    node: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Vec<u64> {
    let mut acked = Vec::new();
    let mut seq = 1;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let workloads: Vec<String> = (0..5).map(|i| format!("{node}-w{i}")).collect();
        let samples: Vec<(&str, f64)> = workloads
            .iter()
            .map(|w| (w.as_str(), seq as f64 % 7.0))
            .collect();
        let body = report(&node, seq, &samples);
        let base = url.lock().unwrap().clone();
        let answer = ureq::post(&format!("{base}/v1/usage"))
            .set("Authorization", &format!("Bearer {AGENT}"))
            .timeout(Duration::from_secs(5))
            .send_json(&body);
        match answer {
            Ok(r) if r.status() == 200 => {
                acked.push(seq);
                seq += 1;
            }
            Ok(r) => panic!("{node} seq {seq}: {}", r.status()),
            Err(ureq::Error::Status(code, r)) => {
                panic!("{node} seq {seq}: {code} {}", r.into_string().unwrap())
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    acked
}

#[test]
fn killed_under_load_the_daemon_keeps_every_acknowledged_report_once() {
    for backend in backends() {
        let db = database(backend, "");
        let mut daemon = Daemon::start(&db, 0.2);
        let clients = 4;
        for c in 0..clients {
            daemon.expect(204, "PUT", &format!("/v1/nodes/n{c}"), ADMIN, Some(&node()));
            daemon.expect(
                204,
                "PUT",
                &format!("/v1/users/u{c}"),
                ADMIN,
                Some(&json!({})),
            );
            for i in 0..5 {
                daemon.expect(
                    204,
                    "PUT",
                    &format!("/v1/workloads/n{c}-w{i}"),
                    ADMIN,
                    Some(&workload(&format!("u{c}"), &format!("n{c}"))),
                );
            }
        }
        let url = std::sync::Arc::new(std::sync::Mutex::new(daemon.url.clone()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads: Vec<_> = (0..clients)
            .map(|c| {
                let (url, stop) = (url.clone(), stop.clone());
                std::thread::spawn(move || client(url, format!("n{c}"), stop))
            })
            .collect();
        for _round in 0..3 {
            std::thread::sleep(Duration::from_millis(400));
            daemon.kill();
            daemon = Daemon::start(&db, 0.2);
            *url.lock().unwrap() = daemon.url.clone();
        }
        std::thread::sleep(Duration::from_millis(400));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let acked: Vec<Vec<u64>> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let last = daemon.expect(200, "GET", "/v1/priorities", READER, None)["cycle"]
            .as_u64()
            .unwrap();
        daemon.cycle_after(last + 1);
        let stored = stored_reports(&db.url);
        let total: usize = acked.iter().map(Vec::len).sum();
        assert!(
            total >= 40,
            "{backend}: a real load, {total} reports acknowledged"
        );
        for (c, seqs) in acked.iter().enumerate() {
            let node = format!("n{c}");
            let mine: Vec<i64> = stored.iter().filter(|r| r.0 == node).map(|r| r.1).collect();
            for s in seqs {
                assert!(
                    mine.contains(&(*s as i64)),
                    "{backend}: {node} seq {s} acknowledged but lost"
                );
            }
            let expected: Vec<i64> = (1..=seqs.len() as i64).collect();
            assert!(
                mine.starts_with(&expected),
                "{backend}: {node} stored {mine:?}"
            );
        }
        assert!(
            stored.iter().all(|r| r.2.is_some()),
            "{backend}: every stored report counted by a cycle"
        );
        eprintln!("{backend}: {total} reports acknowledged across 3 SIGKILLs, all stored once");
    }
}

#[test]
fn a_retry_of_a_counted_and_forgotten_report_is_still_recognised() {
    for backend in backends() {
        let db = database(backend, "");
        let daemon = Daemon::start_with(&db, &["--interval", "0.2", "--report-retention", "0"]);
        register_e1(&daemon);
        let first = report("n1", 5, &[("d1", 10.0)]);
        daemon.expect(200, "POST", "/v1/usage", AGENT, Some(&first));
        let deadline = Instant::now() + Duration::from_secs(30);
        while !stored_reports(&db.url).is_empty() {
            assert!(
                Instant::now() < deadline,
                "{backend}: the counted report was never forgotten"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let ack = daemon.expect(200, "POST", "/v1/usage", AGENT, Some(&first));
        assert_eq!(
            ack["duplicate"], true,
            "{backend}: a late retry is not counted again"
        );
        assert!(stored_reports(&db.url).is_empty(), "{backend}");
        let nodes = daemon.expect(200, "GET", "/v1/nodes", READER, None);
        assert_eq!(
            nodes[0]["last_seq"], 5,
            "{backend}: the forgotten number is still given"
        );
        let next = daemon.expect(
            200,
            "POST",
            "/v1/usage",
            AGENT,
            Some(&report("n1", 6, &[("d1", 1.0)])),
        );
        assert_eq!(next["duplicate"], false, "{backend}");
    }
}

#[test]
fn a_vanishing_supply_is_refused_and_an_unreadable_stored_cycle_is_recomputed() {
    for backend in backends() {
        let db = database(backend, "");
        let daemon = Daemon::start(&db, 0.2);
        register_e1(&daemon);
        let tiny =
            json!({"supply": {"cpu": 1e-300, "mem": 34359738368u64, "disk": 2e8, "net": 1.25e8}});
        let (status, body) = daemon.call("PUT", "/v1/nodes/n1", Some(ADMIN), Some(&tiny));
        assert_eq!(status, 422, "{backend}: {body}");
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains("supply.cpu must be at least 0.001"),
            "{message}"
        );
        daemon.expect(
            200,
            "POST",
            "/v1/usage",
            AGENT,
            Some(&report("n1", 1, &[("d1", 20.0)])),
        );
        daemon.cycle_after(1);
        assert!(daemon.terminate().success());
        // What an earlier version stored after a NaN: `null` where a number belongs.
        sql(
            &db.url,
            "UPDATE cycles SET snapshot = '{\"cycle\": null}', memory = '[[\"d1\", {\"smoothed\": [null, 1, 0, 0], \"priority\": null}]]'",
        )
        .unwrap();
        let daemon = Daemon::start(&db, 0.2);
        let p = daemon.cycle_after(0);
        assert_eq!(
            p["workloads"].as_array().unwrap().len(),
            3,
            "{backend}: {p}"
        );
        let log = daemon.log();
        assert!(
            log.contains("the latest stored cycle cannot be read"),
            "{backend}: {log}"
        );
        assert!(
            log.contains("without the previous one's memory"),
            "{backend}: {log}"
        );
        assert!(daemon.terminate().success(), "{backend}");
    }
}

#[test]
fn a_second_daemon_on_one_sqlite_file_refuses_to_start() {
    let db = database("sqlite", "");
    let first = Daemon::start(&db, 0.2);
    let (status, log) = Daemon::refused(&db, &[]);
    assert!(!status.success(), "{log}");
    assert!(
        log.contains("is in use by another fairshare serve"),
        "{log}"
    );
    assert!(log.contains("PostgreSQL"), "{log}");
    first.expect(200, "GET", "/v1/nodes", READER, None);
    assert!(first.terminate().success());
    let again = Daemon::start(&db, 0.2);
    again.expect(200, "GET", "/v1/nodes", READER, None);
}
