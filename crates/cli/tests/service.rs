//! The fairness service end to end: the real `fairshare serve` on a loopback port, on SQLite
//! and (when `FAIRSHARE_TEST_POSTGRES` is set) PostgreSQL — registration, reports, priorities
//! checked against the core's metric, authentication, every class of bad input, restarts,
//! crashes under load, and two replicas sharing one database.

use crate::daemon::*;
use fairshare_core::heaviness::knobs::{priority, KnobProfile, PriorityConfig};
use fairshare_core::heaviness::{
    heaviness, Cloud, HeavinessConfig, Host, Resource, ResourceKind, User, Workload,
};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// What the core computes for E1 on the test node: d1, d2 (of d) and e1 (of e) each using
/// `cpu` CPUs, 1 GiB and no I/O.
fn core_reference(cpu: [f64; 3]) -> (Vec<f64>, Vec<(f64, i32, u64)>) {
    let resources = vec![
        Resource::new("cpu", ResourceKind::Cpu),
        Resource::new("mem", ResourceKind::Memory),
        Resource::new("disk", ResourceKind::Disk),
        Resource::new("net", ResourceKind::Network),
    ];
    let size = vec![2.0, 4294967296.0, 0.0, 0.0];
    let w = |owner, c: f64| {
        Workload::new(owner, 0, size.clone()).using(vec![c, 1073741824.0, 0.0, 0.0])
    };
    let cloud = Cloud {
        resources,
        nodes: vec![Host::new(vec![8.0, 34359738368.0, 2e8, 1.25e8])],
        users: vec![User::default(), User::default()],
        workloads: vec![w(0, cpu[0]), w(0, cpu[1]), w(1, cpu[2])],
    };
    let h = heaviness(&cloud, &HeavinessConfig::default()).unwrap();
    let profile = KnobProfile::cgroup_v2();
    let workloads = h
        .workloads
        .iter()
        .map(|w| {
            let (p, _) = priority(w.priority_input, None, &PriorityConfig::default());
            (w.heaviness, p, profile.values(p, Some(4294967296)).cpu)
        })
        .collect();
    (h.users.iter().map(|u| u.heaviness).collect(), workloads)
}

fn close(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap() - b).abs() < 1e-9
}

#[test]
fn registered_and_reported_workloads_get_the_cores_priorities() {
    for backend in backends() {
        let db = database(backend, "");
        let daemon = Daemon::start(&db, 0.2);
        register_e1(&daemon);
        let ack = daemon.expect(
            200,
            "POST",
            "/v1/usage",
            AGENT,
            Some(&report("n1", 1, &[("d1", 30.0), ("d2", 30.0), ("e1", 5.0)])),
        );
        assert_eq!(ack, json!({"node": "n1", "seq": 1, "duplicate": false}));
        let before = daemon.expect(200, "GET", "/v1/priorities", READER, None)["cycle"]
            .as_u64()
            .unwrap();
        let p = daemon.cycle_after(before + 1);
        let (users, workloads) = core_reference([3.0, 3.0, 0.5]);
        let user = |id: &str| {
            p["users"]
                .as_array()
                .unwrap()
                .iter()
                .find(|u| u["user"] == id)
                .unwrap()
                .clone()
        };
        assert!(close(&user("d")["heaviness"], users[0]), "{backend}: {p}");
        assert!(close(&user("e")["heaviness"], users[1]), "{backend}: {p}");
        assert_eq!(
            p["users"][0]["user"], "e",
            "{backend}: the lighter user is ranked first"
        );
        for (i, id) in ["d1", "d2", "e1"].iter().enumerate() {
            let w = p["workloads"]
                .as_array()
                .unwrap()
                .iter()
                .find(|w| w["workload"] == *id)
                .unwrap();
            let (h, prio, cpu) = workloads[i];
            assert!(close(&w["heaviness"], h), "{backend} {id}: {w}");
            assert_eq!(w["knobs"]["priority"], prio, "{backend} {id}");
            assert_eq!(w["knobs"]["cpu"], cpu, "{backend} {id}");
            assert_eq!(w["measured"], true);
        }
        assert!(
            workloads[2].2 > workloads[0].2,
            "e's workload gets the larger CPU weight"
        );
        let only = daemon.expect(200, "GET", "/v1/priorities?node=n1", READER, None);
        assert_eq!(only["workloads"].as_array().unwrap().len(), 3);
        let none = daemon.expect(200, "GET", "/v1/priorities?node=n2", READER, None);
        assert_eq!(none["workloads"], json!([]), "{backend}");
        assert_eq!(none["users"], json!([]), "{backend}");
        let e = daemon.expect(200, "GET", "/v1/users/d", READER, None);
        let sum = e["static_part"].as_f64().unwrap() + e["dynamic"].as_f64().unwrap()
            - e["entitlement"].as_f64().unwrap();
        assert!(close(&e["heaviness"], sum), "{backend}: {e}");
        assert!(
            close(&e["usage"]["cpu"], 6.0),
            "{backend}: d used 3 + 3 CPUs: {e}"
        );
        assert_eq!(e["workloads"].as_array().unwrap().len(), 2);
        assert_eq!(
            daemon.call("GET", "/v1/users/nobody", Some(READER), None).0,
            404
        );
        assert_eq!(
            daemon.expect(204, "DELETE", "/v1/workloads/d2", ADMIN, None),
            Value::Null
        );
        assert_eq!(
            daemon
                .call("DELETE", "/v1/workloads/d2", Some(ADMIN), None)
                .0,
            404
        );
        let nodes = daemon.expect(200, "GET", "/v1/nodes", READER, None);
        assert_eq!(nodes[0]["workloads"], 2, "{backend}: {nodes}");
        assert_eq!(nodes[0]["last_seq"], 1, "{backend}: {nodes}");
    }
}

#[test]
fn a_repeated_report_is_acknowledged_and_stored_once() {
    for backend in backends() {
        let db = database(backend, "");
        let daemon = Daemon::start(&db, 0.2);
        register_e1(&daemon);
        let r = report("n1", 7, &[("d1", 10.0), ("e1", 1.0)]);
        for duplicate in [false, true, true] {
            let ack = daemon.expect(200, "POST", "/v1/usage", AGENT, Some(&r));
            assert_eq!(ack["duplicate"], duplicate, "{backend}");
        }
        let changed = report("n1", 7, &[("d1", 11.0), ("e1", 1.0)]);
        let (status, body) = daemon.call("POST", "/v1/usage", Some(AGENT), Some(&changed));
        assert_eq!(
            (status, body["error"].as_str()),
            (409, Some("conflict")),
            "{backend}"
        );
        let metrics = ureq::get(&format!("{}/metrics", daemon.url))
            .call()
            .unwrap()
            .into_string()
            .unwrap();
        assert!(
            metrics.contains("fairshare_usage_reports_stored_total 1\n"),
            "{metrics}"
        );
        assert!(
            metrics.contains("fairshare_usage_reports_duplicate_total 2\n"),
            "{metrics}"
        );
        assert!(
            metrics.contains("fairshare_usage_samples_stored_total 2\n"),
            "{metrics}"
        );
        daemon.cycle_after(1);
        let stored = stored_reports(&db.url);
        assert_eq!(stored.len(), 1, "{backend}: {stored:?}");
        assert!(stored[0].2.is_some(), "{backend}: counted by a cycle");
    }
}

#[test]
fn tokens_decide_who_may_do_what() {
    let db = database("sqlite", "");
    let daemon = Daemon::start(&db, 10.0);
    let put = |token: Option<&str>| daemon.call("PUT", "/v1/nodes/n1", token, Some(&node()));
    let (status, body) = put(None);
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("unauthorized"))
    );
    assert_eq!(put(Some("fs_not_a_token")).0, 401);
    assert_eq!(
        put(Some(&TokenDigestHex::admin())).0,
        401,
        "the digest itself is not a token"
    );
    let (status, body) = put(Some(READER));
    assert_eq!(status, 403);
    assert!(
        body["message"].as_str().unwrap().contains("agent role"),
        "{body}"
    );
    assert_eq!(put(Some(AGENT)).0, 204, "an agent registers its node");
    assert_eq!(put(Some(ADMIN)).0, 204);
    // An agent adds a user without a quota, never changes one an admin set.
    let user = |token, body: Value| daemon.call("PUT", "/v1/users/u", Some(token), Some(&body));
    assert_eq!(user(READER, json!({})).0, 403);
    assert_eq!(user(AGENT, json!({"quota": {"cpu": 1, "mem": 1}})).0, 403);
    assert_eq!(user(ADMIN, json!({"quota": {"cpu": 1, "mem": 1}})).0, 204);
    assert_eq!(user(AGENT, json!({})).0, 204, "present: left as it is");
    let (status, body) = daemon.call("PUT", "/v1/users/v", Some(AGENT), Some(&json!({})));
    assert_eq!(
        status, 409,
        "quotas in use: an agent cannot add a user without one: {body}"
    );
    let broken = json!({"colour": 1});
    let (status, _) = daemon.call("PUT", "/v1/nodes/n1", None, Some(&broken));
    assert_eq!(status, 401, "the token is checked before the body is read");
    let lower = ureq::get(&format!("{}/v1/nodes", daemon.url))
        .set("Authorization", &format!("bearer {READER}"))
        .call()
        .unwrap();
    assert_eq!(lower.status(), 200, "the scheme's case does not matter");
    let r = report("n1", 1, &[]);
    assert_eq!(
        daemon.call("POST", "/v1/usage", Some(READER), Some(&r)).0,
        403
    );
    assert_eq!(
        daemon.call("POST", "/v1/usage", Some(AGENT), Some(&r)).0,
        200
    );
    assert_eq!(
        daemon
            .call(
                "POST",
                "/v1/usage",
                Some(ADMIN),
                Some(&report("n1", 2, &[]))
            )
            .0,
        200
    );
    for token in [READER, AGENT, ADMIN] {
        assert_eq!(
            daemon.call("GET", "/v1/priorities", Some(token), None).0,
            200
        );
    }
    assert_eq!(daemon.call("GET", "/v1/priorities", None, None).0, 401);
    for open in ["/healthz", "/readyz", "/metrics", "/v1/openapi.json"] {
        let response = ureq::get(&format!("{}{open}", daemon.url)).call().unwrap();
        assert_eq!(response.status(), 200, "{open}");
    }
    let unauthorized = ureq::get(&format!("{}/v1/nodes", daemon.url))
        .call()
        .unwrap_err();
    match unauthorized {
        ureq::Error::Status(401, r) => assert_eq!(r.header("www-authenticate"), Some("Bearer")),
        other => panic!("{other:?}"),
    }
}

/// The admin token's digest, to show a digest is not accepted in place of the token.
struct TokenDigestHex;

impl TokenDigestHex {
    fn admin() -> String {
        fairshare_service::TokenDigest::of(ADMIN).to_hex()
    }
}

/// Sends a raw body with a content type; the status and JSON answer.
fn raw(daemon: &Daemon, method: &str, path: &str, content_type: &str, body: &[u8]) -> (u16, Value) {
    let result = ureq::request(method, &format!("{}{path}", daemon.url))
        .set("Authorization", &format!("Bearer {ADMIN}"))
        .set("Content-Type", content_type)
        .send_bytes(body);
    let response = match result {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{e}"),
    };
    let status = response.status();
    (
        status,
        serde_json::from_str(&response.into_string().unwrap()).unwrap_or(Value::Null),
    )
}

/// A request that must be refused: method, path, content type, body, status, and a phrase the
/// message must contain.
type BadInput = (
    &'static str,
    &'static str,
    &'static str,
    Vec<u8>,
    u16,
    &'static str,
);

#[test]
fn every_class_of_bad_input_gets_a_named_4xx_and_stores_nothing() {
    for backend in backends() {
        let db = database(backend, "");
        let daemon = Daemon::start(&db, 10.0);
        register_e1(&daemon);
        let json = "application/json";
        let cases: Vec<BadInput> = vec![
            (
                "PUT",
                "/v1/nodes/n2",
                json,
                b"{\"supply\": {\"cpu\": 8,".to_vec(),
                400,
                "EOF",
            ),
            (
                "PUT",
                "/v1/nodes/n2",
                json,
                b"{\"supply\": {}, \"colour\": 1}".to_vec(),
                400,
                "unknown field `colour`",
            ),
            (
                "PUT",
                "/v1/nodes/n2",
                json,
                b"{\"supply\": {\"cpu\": NaN}}".to_vec(),
                400,
                "expected value",
            ),
            (
                "PUT",
                "/v1/nodes/n2",
                json,
                b"{\"supply\": {\"cpu\": 1e999}}".to_vec(),
                400,
                "out of range",
            ),
            (
                "PUT",
                "/v1/nodes/n2",
                json,
                br#"{"supply": {"cpu": -8, "mem": 1, "disk": 1, "net": 1}}"#.to_vec(),
                422,
                "supply.cpu",
            ),
            (
                "PUT",
                "/v1/nodes/n2",
                json,
                br#"{"supply": {"cpu": 8, "mem": 1, "disk": 1, "net": 1}, "speed": 1e9}"#.to_vec(),
                422,
                "speed",
            ),
            (
                "PUT",
                "/v1/nodes/n2",
                json,
                br#"{"supply": {"cpu": 8, "mem": 1, "disk": 1, "net": 1, "gpu": 1}}"#.to_vec(),
                422,
                "unknown resource \"gpu\"",
            ),
            (
                "PUT",
                "/v1/nodes/n2",
                json,
                br#"{"supply": {"cpu": 8, "mem": 1, "disk": 1}}"#.to_vec(),
                422,
                "supply.net is missing",
            ),
            (
                "PUT",
                "/v1/nodes/n%202",
                json,
                br#"{"supply": {"cpu": 8, "mem": 1, "disk": 1, "net": 1}}"#.to_vec(),
                422,
                "node id",
            ),
            (
                "PUT",
                "/v1/nodes/n2",
                "text/plain",
                br#"{"supply": {"cpu": 8, "mem": 1, "disk": 1, "net": 1}}"#.to_vec(),
                415,
                "application/json",
            ),
            (
                "PUT",
                "/v1/nodes/n2",
                json,
                vec![b' '; (1 << 20) + 1],
                413,
                "larger than",
            ),
            (
                "PUT",
                "/v1/workloads/w9",
                json,
                workload("nobody", "n1").to_string().into_bytes(),
                422,
                "owner \"nobody\" is not registered",
            ),
            (
                "PUT",
                "/v1/workloads/w9",
                json,
                workload("d", "n9").to_string().into_bytes(),
                422,
                "node \"n9\" is not registered",
            ),
            (
                "PUT",
                "/v1/workloads/w9",
                json,
                br#"{"owner": "d", "node": "n1", "virtual": {"cpu": 2}}"#.to_vec(),
                422,
                "virtual.mem is missing",
            ),
            (
                "PUT",
                "/v1/workloads/wz",
                json,
                br#"{"owner": "d", "node": "n1", "virtual": {"cpu": 0, "mem": 0}}"#.to_vec(),
                422,
                "virtual.cpu must be positive",
            ),
            (
                "PUT",
                "/v1/workloads/wz",
                json,
                br#"{"owner": "d", "node": "n1", "virtual": {"cpu": 2, "mem": 0}}"#.to_vec(),
                422,
                "virtual.mem must be positive",
            ),
            (
                "PUT",
                "/v1/users/u9",
                json,
                br#"{"quota": {"cpu": 4, "mem": 1}}"#.to_vec(),
                409,
                "either every user has a quota",
            ),
            (
                "POST",
                "/v1/usage",
                json,
                report("n9", 1, &[]).to_string().into_bytes(),
                422,
                "node \"n9\" is not registered",
            ),
            (
                "POST",
                "/v1/usage",
                json,
                report("n1", 1, &[("ghost", 1.0)]).to_string().into_bytes(),
                422,
                "workload \"ghost\"",
            ),
            (
                "POST",
                "/v1/usage",
                json,
                report("n1", 1, &[("d1", 1e6)]).to_string().into_bytes(),
                422,
                "more than 2 times",
            ),
            (
                "POST",
                "/v1/usage",
                json,
                report("n1", 1, &[("d1", -1.0)]).to_string().into_bytes(),
                422,
                "usage.cpu",
            ),
            (
                "POST",
                "/v1/usage",
                json,
                report("n1", 1, &[("d1", 1.0), ("d1", 1.0)])
                    .to_string()
                    .into_bytes(),
                422,
                "reported twice",
            ),
            (
                "POST",
                "/v1/usage",
                json,
                br#"{"node": "n1", "seq": 1, "interval_s": 10, "samples": [],
                    "written": {"d1": {"cpu.shares": -1}}}"#
                    .to_vec(),
                422,
                r#"written["d1"]["cpu.shares"] must be a whole number"#,
            ),
            (
                "POST",
                "/v1/usage",
                json,
                br#"{"node": "n1", "seq": 1, "interval_s": 10, "samples": [],
                    "written": {"ghost": {"cpu.shares": 2}}}"#
                    .to_vec(),
                422,
                r#"written["ghost"]: workload "ghost" is not registered on node "n1""#,
            ),
            (
                "POST",
                "/v1/usage",
                json,
                br#"{"node": "n1", "seq": -1, "interval_s": 10, "samples": []}"#.to_vec(),
                400,
                "seq",
            ),
            (
                "POST",
                "/v1/usage",
                json,
                br#"{"node": "n1", "seq": 1, "interval_s": 0, "samples": []}"#.to_vec(),
                422,
                "interval_s",
            ),
            (
                "POST",
                "/v1/nowhere",
                json,
                b"{}".to_vec(),
                404,
                "no such endpoint",
            ),
            ("DELETE", "/v1/usage", json, Vec::new(), 405, "method"),
        ];
        for (method, path, content_type, body, status, needle) in &cases {
            let (got, answer) = raw(&daemon, method, path, content_type, body);
            assert_eq!(got, *status, "{backend} {method} {path}: {answer}");
            let message = answer["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(needle),
                "{backend} {method} {path}: {needle:?} not in {message:?}"
            );
            assert!(answer["error"].is_string(), "{backend}: a JSON error body");
        }
        // An agent's zero-size workload is refused as an admin's is.
        let zero = json!({"owner": "d", "node": "n1", "virtual": {"cpu": 0, "mem": 0}});
        let answer = daemon.expect(422, "PUT", "/v1/workloads/wz", AGENT, Some(&zero));
        assert_eq!(answer["error"], "invalid", "{backend}: {answer}");
        let nodes = daemon.expect(200, "GET", "/v1/nodes", READER, None);
        assert_eq!(
            nodes.as_array().unwrap().len(),
            1,
            "{backend}: only n1 registered: {nodes}"
        );
        assert_eq!(
            nodes[0]["last_seq"],
            Value::Null,
            "{backend}: no report stored"
        );
        assert!(stored_reports(&db.url).is_empty(), "{backend}");
        let p = daemon.cycle_after(0);
        assert_eq!(
            p["workloads"].as_array().unwrap().len(),
            3,
            "{backend}: no workload w9"
        );
    }
}

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

#[test]
fn each_token_has_its_own_rate_limit() {
    let db = database("sqlite", "");
    let daemon = Daemon::start_with(&db, &["--rate-limit", "1", "--rate-burst", "3"]);
    let statuses: Vec<u16> = (0..4)
        .map(|_| daemon.call("GET", "/v1/nodes", Some(READER), None).0)
        .collect();
    assert_eq!(statuses, [200, 200, 200, 429]);
    let response = ureq::get(&format!("{}/v1/nodes", daemon.url))
        .set("Authorization", &format!("Bearer {READER}"))
        .call()
        .unwrap_err();
    match response {
        ureq::Error::Status(429, r) => assert!(r.header("retry-after").is_some()),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        daemon.call("GET", "/v1/nodes", Some(AGENT), None).0,
        200,
        "another token is not limited"
    );
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
fn with_a_certificate_the_daemon_speaks_only_tls() {
    let db = database("sqlite", "");
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let (cert_path, key_path) = (
        db.dir.path().join("cert.pem"),
        db.dir.path().join("key.pem"),
    );
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.key_pair.serialize_pem()).unwrap();
    let daemon = Daemon::start_with(
        &db,
        &[
            "--tls-cert",
            cert_path.to_str().unwrap(),
            "--tls-key",
            key_path.to_str().unwrap(),
        ],
    );
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.cert.der().clone()).unwrap();
    let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let agent = ureq::AgentBuilder::new()
        .tls_config(std::sync::Arc::new(tls))
        .build();
    let port = daemon.url.rsplit(':').next().unwrap();
    let answer = agent
        .get(&format!("https://localhost:{port}/v1/nodes"))
        .set("Authorization", &format!("Bearer {READER}"))
        .call()
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.into_json::<Value>().unwrap(), json!([]));
    let plain = ureq::get(&format!("http://localhost:{port}/healthz"))
        .timeout(Duration::from_secs(5))
        .call();
    assert!(plain.is_err(), "plain HTTP is not answered");
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

/// Whether the daemon closed this connection within `within` (reading until end of file,
/// an error, or the time is up; what the daemon sent is discarded).
fn closed_within(stream: &mut std::net::TcpStream, within: Duration) -> bool {
    use std::io::Read;
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline {
        stream
            .set_read_timeout(Some(deadline - Instant::now() + Duration::from_millis(1)))
            .unwrap();
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return false,
            Err(_) => return true,
        }
    }
    false
}

/// A connection to the daemon from `source`, a loopback address of its own (127.0.0.2, …), as a
/// different host would come.
fn connect_from(source: &str, daemon: &Daemon) -> std::net::TcpStream {
    use socket2::{Domain, SockAddr, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    let from: std::net::SocketAddr = format!("{source}:0").parse().unwrap();
    socket.bind(&SockAddr::from(from)).unwrap();
    let to: std::net::SocketAddr = daemon.addr().parse().unwrap();
    socket.connect(&SockAddr::from(to)).unwrap();
    socket.into()
}

/// Sends `GET path` with `token` on a kept-alive connection and reads the whole answer: its
/// status line, or `None` when the connection was closed first.
fn get_on(stream: &mut std::net::TcpStream, path: &str, token: &str) -> Option<String> {
    use std::io::{Read, Write};
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = Vec::new();
    let mut byte = [0u8; 1];
    while !answer.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => answer.push(byte[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8(answer).unwrap();
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).ok()?;
    head.lines().next().map(str::to_string)
}

/// The value of a counter or gauge in the daemon's metrics.
fn metric(daemon: &Daemon, name: &str) -> f64 {
    let text = ureq::get(&format!("{}/metrics", daemon.url))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

/// The daemon's counter `name` once it has reached `at_least`, or its value after 10 s: the
/// daemon counts a connection when it handles it, which on a loaded machine can come a moment
/// after the client connected.
fn metric_reaching(daemon: &Daemon, name: &str, at_least: f64) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let value = metric(daemon, name);
        if value >= at_least || Instant::now() > deadline {
            return value;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn slow_headers_idle_and_surplus_connections_are_closed() {
    use std::io::Write;
    use std::net::TcpStream;
    let db = database("sqlite", "");
    let daemon = Daemon::start_with(
        &db,
        &[
            "--header-timeout",
            "1",
            "--idle-timeout",
            "2",
            "--max-connections",
            "8",
            "--max-connections-per-peer",
            "8",
        ],
    );
    // Headers one byte every 0.3 s: cut off at the header timeout.
    let mut slow = TcpStream::connect(daemon.addr()).unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let started = Instant::now();
    let mut closed = false;
    for byte in b"X-Slow: 1234567890\r\n".iter().cycle().take(30) {
        if slow.write_all(&[*byte]).is_err() || closed_within(&mut slow, Duration::from_millis(300))
        {
            closed = true;
            break;
        }
    }
    assert!(closed, "slow headers held for {:?}", started.elapsed());
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // An HTTP/2 connection that makes one request (GET /healthz: the static table's GET and
    // http, literal :path and :authority) and then says nothing: cut off at the idle timeout.
    let mut h2 = TcpStream::connect(daemon.addr()).unwrap();
    let mut block = vec![0x82, 0x86, 0x44, 8];
    block.extend_from_slice(b"/healthz");
    block.extend_from_slice(&[0x41, 1, b'x']);
    let mut frames =
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00".to_vec();
    frames.extend_from_slice(&[0, 0, block.len() as u8, 0x01, 0x05, 0, 0, 0, 1]);
    frames.extend_from_slice(&block);
    h2.write_all(&frames).unwrap();
    let started = Instant::now();
    assert!(
        closed_within(&mut h2, Duration::from_secs(5)),
        "idle HTTP/2 connection held"
    );
    assert!(
        started.elapsed() > Duration::from_millis(1500),
        "closed before the idle timeout, at {:?}: the request was not taken",
        started.elapsed()
    );
    // Eight connections that have shown a token fill the limit: a ninth is closed at once,
    // unanswered, since none of them may be closed to make room.
    let mut proven: Vec<TcpStream> = (0..8)
        .map(|_| TcpStream::connect(daemon.addr()).unwrap())
        .collect();
    for stream in &mut proven {
        let status = get_on(stream, "/v1/nodes", READER);
        assert_eq!(status.as_deref(), Some("HTTP/1.1 200 OK"));
    }
    let mut ninth = TcpStream::connect(daemon.addr()).unwrap();
    assert_eq!(
        get_on(&mut ninth, "/healthz", READER),
        None,
        "a ninth was served"
    );
    drop(proven);
    std::thread::sleep(Duration::from_millis(200));
    daemon.expect(200, "GET", "/healthz", READER, None);
    assert_eq!(metric(&daemon, "fairshare_connections_refused_total"), 1.0);
    assert_eq!(metric(&daemon, "fairshare_connections_evicted_total"), 0.0);
}

/// The daemon of issue 46's report: 20 connections, a header timeout of `header_timeout`
/// seconds (2 there), an idle timeout of 15 s; so a quarter of the slots, 5, per peer.
fn small_daemon(db: &Database, header_timeout: &str) -> Daemon {
    Daemon::start_with(
        db,
        &[
            "--max-connections",
            "20",
            "--header-timeout",
            header_timeout,
            "--idle-timeout",
            "15",
        ],
    )
}

#[test]
fn silent_connections_are_closed_at_the_header_timeout_from_their_accept() {
    let db = database("sqlite", "");
    let daemon = small_daemon(&db, "2");
    // As reported: 20 silent sockets from one host, then the same host asks for /healthz
    // 3.5 s later. Its fifth share of the slots is closed at 2 s, so it is served.
    let started = Instant::now();
    let mut silent: Vec<_> = (0..20)
        .map(|_| connect_from("127.0.0.1", &daemon))
        .collect();
    let mut closed_at = Vec::new();
    for stream in &mut silent {
        assert!(
            closed_within(stream, Duration::from_secs(5)),
            "held after 5 s"
        );
        closed_at.push(started.elapsed());
    }
    let last = *closed_at.iter().max().unwrap();
    eprintln!("20 silent connections from one host: the last closed after {last:?}");
    assert!(last >= Duration::from_millis(1500), "{closed_at:?}");
    assert!(last < Duration::from_secs(4), "{closed_at:?}");
    std::thread::sleep(Duration::from_millis(3500).saturating_sub(started.elapsed()));
    daemon.expect(200, "GET", "/healthz", READER, None);
    assert_eq!(metric(&daemon, "fairshare_connections_refused_total"), 15.0);
}

#[test]
fn strangers_at_the_cap_cannot_keep_an_agent_from_reporting() {
    let db = database("sqlite", "");
    // A header timeout long enough that no stranger leaves by it while the test runs.
    let daemon = small_daemon(&db, "5");
    register_e1(&daemon);
    // An agent with a kept-alive connection that has shown its token.
    let mut agent = connect_from("127.0.0.1", &daemon);
    let status = get_on(&mut agent, "/v1/access?node=n1", AGENT);
    assert_eq!(status.as_deref(), Some("HTTP/1.1 204 No Content"));
    // Strangers from four hosts fill every other slot and try for more: each host holds at
    // most 5, and the sixth of each is closed at once. The daemon admits accepted connections
    // in tasks of their own, so the test waits for each host's refusal before the next host
    // connects: otherwise, at the cap, a late sixth could take the slot of an earlier host's
    // first instead of being refused.
    let mut strangers = Vec::new();
    for host in 2..=5 {
        for _ in 0..6 {
            strangers.push(connect_from(&format!("127.0.0.{host}"), &daemon));
        }
        let expected = f64::from(host - 1);
        let refused = metric_reaching(&daemon, "fairshare_connections_refused_total", expected);
        assert_eq!(refused, expected, "refusals after host 127.0.0.{host}");
    }
    std::thread::sleep(Duration::from_millis(200));
    // A new agent connection at the cap takes a stranger's slot and is answered at once.
    let asked = Instant::now();
    let mut second = connect_from("127.0.0.1", &daemon);
    let status = get_on(&mut second, "/v1/access?node=n1", AGENT);
    let waited = asked.elapsed();
    eprintln!("an agent at a cap held by 19 silent strangers answered in {waited:?}");
    assert_eq!(status.as_deref(), Some("HTTP/1.1 204 No Content"));
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    // More strangers from more hosts: they displace each other, never the agents.
    for host in 6..=9 {
        for _ in 0..5 {
            strangers.push(connect_from(&format!("127.0.0.{host}"), &daemon));
        }
    }
    std::thread::sleep(Duration::from_millis(200));
    for stream in [&mut agent, &mut second] {
        let status = get_on(stream, "/v1/access?node=n1", AGENT);
        assert_eq!(status.as_deref(), Some("HTTP/1.1 204 No Content"));
    }
    let report = report("n1", 1, &[("d1", 5.0)]);
    daemon.expect(200, "POST", "/v1/usage", AGENT, Some(&report));
    let evicted = metric_reaching(&daemon, "fairshare_connections_evicted_total", 20.0);
    assert!(evicted >= 20.0, "{evicted} evicted");
    // Every later connection found a stranger to displace.
    let refused = metric(&daemon, "fairshare_connections_refused_total");
    assert_eq!(refused, 4.0, "{refused} refused");
    // The strangers are closed within the header timeout of their accept.
    for stream in &mut strangers {
        assert!(
            closed_within(stream, Duration::from_secs(7)),
            "a stranger held"
        );
    }
}

#[test]
fn a_body_sent_too_slowly_is_answered_408() {
    use std::io::{Read, Write};
    let db = database("sqlite", "");
    let daemon = Daemon::start_with(&db, &["--body-timeout", "1"]);
    let mut stream = std::net::TcpStream::connect(daemon.addr()).unwrap();
    let head = format!(
        "POST /v1/usage HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {AGENT}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    while started.elapsed() < Duration::from_secs(6) {
        let _ = stream.write_all(b" ");
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.starts_with("HTTP/1.1 408"),
        "no 408 in {:?}: {answer:?}",
        started.elapsed()
    );
    assert!(answer.contains("body_timeout_s"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

/// The token of an agent bound to node n1.
const AGENT_N1: &str = "fs_test_agent_n1_0123456789abcdef0123456789abc";

#[test]
fn an_agent_token_bound_to_nodes_acts_only_for_them() {
    for backend in backends() {
        let bound = format!(
            "[[tokens]]\nrole = \"agent\"\nname = \"agent-n1\"\nsha256 = \"{}\"\nnodes = [\"n1\"]\n",
            fairshare_service::TokenDigest::of(AGENT_N1).to_hex()
        );
        let db = database(backend, &bound);
        let daemon = Daemon::start(&db, 10.0);
        register_e1(&daemon);
        daemon.expect(204, "PUT", "/v1/nodes/n2", ADMIN, Some(&node()));
        daemon.expect(
            204,
            "PUT",
            "/v1/workloads/x2",
            ADMIN,
            Some(&workload("d", "n2")),
        );
        // What an agent's --check asks, changing nothing.
        daemon.expect(204, "GET", "/v1/access?node=n1", AGENT_N1, None);
        daemon.expect(403, "GET", "/v1/access?node=n2", AGENT_N1, None);
        daemon.expect(204, "GET", "/v1/access?node=n2", ADMIN, None);
        daemon.expect(403, "GET", "/v1/access?node=n1", READER, None);
        daemon.expect(422, "GET", "/v1/access?node=a%20b", ADMIN, None);
        let forbidden = |method: &str, path: &str, body: Option<&Value>| {
            let (status, answer) = daemon.call(method, path, Some(AGENT_N1), body);
            assert_eq!(status, 403, "{backend} {method} {path}: {answer}");
            let message = answer["message"].as_str().unwrap();
            assert!(
                message.contains("agent-n1 may act only for node \"n1\""),
                "{message}"
            );
        };
        forbidden("PUT", "/v1/nodes/n2", Some(&node()));
        forbidden("POST", "/v1/usage", Some(&report("n2", 1, &[("x2", 1.0)])));
        forbidden("PUT", "/v1/workloads/x3", Some(&workload("d", "n2")));
        forbidden("PUT", "/v1/workloads/x2", Some(&workload("d", "n1")));
        forbidden("PUT", "/v1/workloads/d1", Some(&workload("d", "n2")));
        forbidden("DELETE", "/v1/workloads/x2", None);
        forbidden("DELETE", "/v1/nodes/n2", None);
        daemon.expect(204, "PUT", "/v1/nodes/n1", AGENT_N1, Some(&node()));
        daemon.expect(
            200,
            "POST",
            "/v1/usage",
            AGENT_N1,
            Some(&report("n1", 1, &[("d1", 1.0)])),
        );
        daemon.expect(
            204,
            "PUT",
            "/v1/workloads/x1",
            AGENT_N1,
            Some(&workload("e", "n1")),
        );
        daemon.expect(204, "DELETE", "/v1/workloads/x1", AGENT_N1, None);
        daemon.expect(200, "GET", "/v1/priorities", AGENT_N1, None);
        // The unbound agent token acts for every node, as before.
        daemon.expect(
            200,
            "POST",
            "/v1/usage",
            AGENT,
            Some(&report("n2", 1, &[("x2", 1.0)])),
        );
        let nodes = daemon.expect(200, "GET", "/v1/nodes", READER, None);
        assert_eq!(
            nodes[1]["workloads"], 1,
            "{backend}: x2 stayed on n2: {nodes}"
        );
    }
}

#[test]
fn token_new_binds_an_agent_to_its_nodes() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_fairshare"))
            .args(["token", "new"])
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["--role", "agent", "--node", "n1", "--node", "n2"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("nodes = [\"n1\", \"n2\"]"), "{text}");
    let out = run(&["--role", "admin", "--node", "n1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("agent tokens only"));
}

#[test]
fn a_registered_user_without_workloads_is_explained_with_zero_usage() {
    for backend in backends() {
        let db = database(backend, "");
        let daemon = Daemon::start(&db, 0.2);
        daemon.expect(204, "PUT", "/v1/users/idle", ADMIN, Some(&json!({})));
        daemon.cycle_after(1);
        let e = daemon.expect(200, "GET", "/v1/users/idle", READER, None);
        assert_eq!(e["active"], false, "{backend}: {e}");
        assert_eq!(e["heaviness"], 0.0, "{backend}: {e}");
        assert_eq!(e["usage"]["cpu"], 0.0, "{backend}: {e}");
        assert_eq!(e["workloads"], json!([]), "{backend}: {e}");
        assert_eq!(
            daemon.call("GET", "/v1/users/nobody", Some(READER), None).0,
            404
        );
    }
}

#[test]
fn a_node_is_deleted_with_its_workloads() {
    for backend in backends() {
        let db = database(backend, "");
        let daemon = Daemon::start(&db, 0.2);
        register_e1(&daemon);
        daemon.expect(204, "PUT", "/v1/nodes/n2", ADMIN, Some(&node()));
        daemon.expect(
            204,
            "PUT",
            "/v1/workloads/x2",
            ADMIN,
            Some(&workload("e", "n2")),
        );
        daemon.expect(
            200,
            "POST",
            "/v1/usage",
            AGENT,
            Some(&report("n1", 3, &[("d1", 5.0)])),
        );
        daemon.expect(204, "DELETE", "/v1/nodes/n1", ADMIN, None);
        let (status, body) = daemon.call("DELETE", "/v1/nodes/n1", Some(ADMIN), None);
        assert_eq!(
            (status, body["error"].as_str()),
            (404, Some("not_found")),
            "{backend}"
        );
        assert_eq!(
            daemon.call("DELETE", "/v1/nodes/n2", Some(READER), None).0,
            403
        );
        let nodes = daemon.expect(200, "GET", "/v1/nodes", READER, None);
        assert_eq!(nodes.as_array().unwrap().len(), 1, "{backend}: {nodes}");
        assert_eq!(nodes[0]["node"], "n2");
        let before = daemon.expect(200, "GET", "/v1/priorities", READER, None)["cycle"]
            .as_u64()
            .unwrap();
        let p = daemon.cycle_after(before);
        let workloads: Vec<&str> = p["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["workload"].as_str().unwrap())
            .collect();
        assert_eq!(workloads, ["x2"], "{backend}: n1's workloads went with it");
        // Registered again, the node goes on numbering its reports where it was.
        daemon.expect(204, "PUT", "/v1/nodes/n1", AGENT, Some(&node()));
        let nodes = daemon.expect(200, "GET", "/v1/nodes", READER, None);
        assert_eq!(nodes[0]["last_seq"], 3, "{backend}: {nodes}");
    }
    let db = database("sqlite", "");
    let daemon = Daemon::start(&db, 10.0);
    let doc: Value = ureq::get(&format!("{}/v1/openapi.json", daemon.url))
        .call()
        .unwrap()
        .into_json()
        .unwrap();
    assert!(
        doc["paths"]["/v1/nodes/{id}"]["delete"].is_object(),
        "{doc}"
    );
    // The knobs are the core's KnobValues, derived behind its openapi feature, under the
    // schema name the API always gave them.
    let knobs = &doc["components"]["schemas"]["Knobs"];
    assert!(knobs["properties"]["cpu"].is_object(), "{knobs}");
    let workload = &doc["components"]["schemas"]["WorkloadPriority"]["properties"]["knobs"];
    assert!(workload.to_string().contains("Knobs"), "{workload}");
}

/// A TCP relay from a loopback port to `target` that can be cut: every connection through it
/// closed and new ones refused, as when the database's host goes away.
struct Relay {
    port: u16,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    stalled: std::sync::Arc<std::sync::atomic::AtomicU8>,
}

impl Relay {
    fn to(target: &str) -> Relay {
        use std::net::{Shutdown, TcpListener, TcpStream};
        use std::sync::atomic::Ordering;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stalled = std::sync::Arc::new(std::sync::atomic::AtomicU8::new(FLOWING));
        let target = target.to_string();
        let flag = cut.clone();
        let stall = stalled.clone();
        std::thread::spawn(move || {
            let mut open: Vec<TcpStream> = Vec::new();
            listener.set_nonblocking(true).unwrap();
            loop {
                if flag.load(Ordering::Relaxed) {
                    for s in &open {
                        let _ = s.shutdown(Shutdown::Both);
                    }
                    return; // the listener goes too: connections are refused
                }
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        let server = TcpStream::connect(&target).unwrap();
                        for (mut from, mut to) in [
                            (client.try_clone().unwrap(), server.try_clone().unwrap()),
                            (server.try_clone().unwrap(), client.try_clone().unwrap()),
                        ] {
                            let stall = stall.clone();
                            std::thread::spawn(move || {
                                forward(&mut from, &mut to, &stall, STALL_AT);
                                let _ = to.shutdown(Shutdown::Both);
                            });
                        }
                        open.extend([client, server]);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Relay { port, cut, stalled }
    }

    /// Closes every connection and refuses new ones: an outage that fails fast.
    fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(100));
    }

    /// From the next report's insert on, stops forwarding while keeping every connection
    /// open: a database host that starts dropping packets in the middle of a commit.
    fn stall(&self) {
        self.stalled
            .store(ARMED, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The relay's stall states: forwarding, waiting for [`STALL_AT`], holding everything back.
const FLOWING: u8 = 0;
const ARMED: u8 = 1;
const STALLED: u8 = 2;

/// What, sent to the database once the relay is told to stall, stalls it: a report's insert,
/// so that the database stops answering in the middle of a group commit.
const STALL_AT: &[u8] = b"INSERT INTO reports";

/// Copies `from` to `to` until either ends. Once `stall` is armed, the first chunk holding
/// `at` and everything after it are held back, the connections left open.
fn forward(
    from: &mut std::net::TcpStream,
    to: &mut std::net::TcpStream,
    stall: &std::sync::atomic::AtomicU8,
    at: &[u8],
) {
    use std::io::{Read, Write};
    use std::sync::atomic::Ordering;
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if stall.load(Ordering::Relaxed) == ARMED && buf[..n].windows(at.len()).any(|w| w == at) {
            stall.store(STALLED, Ordering::Relaxed);
        }
        while stall.load(Ordering::Relaxed) == STALLED {
            std::thread::sleep(Duration::from_millis(20));
        }
        if to.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}

/// A daemon on PostgreSQL reached through a [`Relay`], ready, with user e and workload d1 on
/// node n1; `None` (the test skips) without a PostgreSQL server.
fn behind_a_relay() -> Option<(Relay, Database, Daemon)> {
    if !backends().contains(&"postgres") {
        return None;
    }
    let mut db = database("postgres", "");
    let relay = Relay::to("127.0.0.1:5432");
    db.url = db
        .url
        .replacen("127.0.0.1/", &format!("127.0.0.1:{}/", relay.port), 1);
    let daemon = Daemon::start(&db, 10.0);
    register_e1(&daemon);
    daemon.expect(200, "GET", "/readyz", READER, None);
    Some((relay, db, daemon))
}

#[test]
fn in_a_database_outage_readyz_and_writes_answer_503_within_a_second() {
    let Some((relay, _db, daemon)) = behind_a_relay() else {
        return;
    };
    relay.cut();
    for (method, path, body) in [
        ("GET", "/readyz", None),
        ("POST", "/v1/usage", Some(report("n1", 1, &[("d1", 1.0)]))),
        ("PUT", "/v1/nodes/n1", Some(node())),
        ("GET", "/readyz", None),
    ] {
        let started = Instant::now();
        let (status, answer) = daemon.call(method, path, Some(ADMIN), body.as_ref());
        let took = started.elapsed();
        assert_eq!(status, 503, "{method} {path}: {answer}");
        assert!(
            took < Duration::from_millis(1500),
            "{method} {path} took {took:?}"
        );
    }
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

/// A database host that stops answering in the middle of a commit without closing its
/// connections (dropped packets): the report being stored and the next are answered 503
/// within the write deadline (2 s), `/readyz` within the acquire bound (1 s), instead of
/// waiting until TCP gives up.
#[test]
fn a_database_that_stops_answering_gets_503_not_a_hang() {
    let Some((relay, _db, daemon)) = behind_a_relay() else {
        return;
    };
    relay.stall();
    for (method, path, body, within) in [
        (
            "POST",
            "/v1/usage",
            Some(report("n1", 1, &[("d1", 1.0)])),
            2500,
        ),
        (
            "POST",
            "/v1/usage",
            Some(report("n1", 2, &[("d1", 1.0)])),
            2500,
        ),
        ("GET", "/readyz", None, 1500),
    ] {
        let started = Instant::now();
        let (status, answer) = daemon.call(method, path, Some(ADMIN), body.as_ref());
        let took = started.elapsed();
        assert_eq!(status, 503, "{method} {path}: {answer}");
        assert!(
            took < Duration::from_millis(within),
            "{method} {path} took {took:?}"
        );
    }
}

#[test]
fn every_operation_is_answered_as_the_served_document_describes_it() {
    let db = database("sqlite", "");
    let daemon = Daemon::start_with(&db, &["--resources", "cores=cpu,ram=memory,io=disk"]);
    let doc = daemon.expect(200, "GET", "/v1/openapi.json", READER, None);
    // The resource maps name this daemon's resources, and their examples are accepted.
    let schemas = &doc["components"]["schemas"];
    let map = |schema: &str, field: &str| schemas[schema]["properties"][field].clone();
    for (schema, field, names) in [
        ("NodeSpec", "supply", json!(["cores", "ram", "io"])),
        ("UserSpec", "quota", json!(["cores", "ram"])),
        ("WorkloadSpec", "virtual", json!(["cores", "ram"])),
        ("Sample", "usage", json!(["cores", "ram", "io"])),
    ] {
        let m = map(schema, field);
        assert_eq!(m["required"], names, "{schema}.{field}: {m}");
        assert_eq!(m["additionalProperties"], false, "{schema}.{field}: {m}");
    }
    let example = |schema: &str, field: &str| map(schema, field)["example"].clone();
    let bodies = [
        (
            "PUT",
            "/v1/nodes/{id}",
            json!({"supply": example("NodeSpec", "supply")}),
        ),
        (
            "PUT",
            "/v1/users/{id}",
            json!({"quota": example("UserSpec", "quota")}),
        ),
        (
            "PUT",
            "/v1/workloads/{id}",
            json!({"owner": "u1", "node": "n1", "virtual": example("WorkloadSpec", "virtual")}),
        ),
        (
            "POST",
            "/v1/usage",
            json!({"node": "n1", "seq": 1, "interval_s": 10,
            "samples": [{"workload": "w1", "usage": example("Sample", "usage")}]}),
        ),
    ];
    // Every operation, its path and query parameters filled as the document lays them out.
    let id_for = |path: &str| match path.split('/').nth(2) {
        Some("nodes") => "n1",
        Some("users") => "u1",
        _ => "w1",
    };
    // Registered before they are used, deleted after; deleting a node takes its workloads.
    let order = [
        ("PUT", "/v1/nodes"),
        ("PUT", "/v1/users"),
        ("PUT", "/v1/workloads"),
        ("POST", "/"),
        ("GET", "/"),
        ("DELETE", "/v1/workloads"),
        ("DELETE", "/v1/nodes"),
    ];
    let mut operations = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let method = method.to_uppercase();
            let rank = order
                .iter()
                .position(|(m, p)| *m == method && path.starts_with(p))
                .unwrap_or_else(|| panic!("{method} {path} has no place in the order"));
            operations.push((rank, path.clone(), method, op.clone()));
        }
    }
    operations.sort_by_key(|o| o.0);
    assert!(operations.len() >= 14, "{operations:?}");
    for (_, path, method, op) in &operations {
        let params = op["parameters"].as_array().cloned().unwrap_or_default();
        let in_path: Vec<&str> = params
            .iter()
            .filter(|p| p["in"] == "path")
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        let templated: Vec<&str> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
            .collect();
        assert_eq!(in_path, templated, "{method} {path}: path parameters");
        let mut url = path.replace("{id}", id_for(path));
        let query: Vec<String> = params
            .iter()
            .filter(|p| p["in"] == "query")
            .map(|p| format!("{}=n1", p["name"].as_str().unwrap()))
            .collect();
        if !query.is_empty() {
            url = format!("{url}?{}", query.join("&"));
        }
        let body = bodies
            .iter()
            .find(|(m, p, _)| m == method && p == path)
            .map(|(_, _, b)| b);
        assert_eq!(
            body.is_some(),
            op.get("requestBody").is_some(),
            "{method} {path}"
        );
        let (status, answer) = daemon.call(method, &url, Some(ADMIN), body);
        assert!(
            (200..300).contains(&status),
            "{method} {url} as documented: {status} {answer}"
        );
        // A required query parameter left out is refused, so the document is right to require it.
        for p in params
            .iter()
            .filter(|p| p["in"] == "query" && p["required"] == true)
        {
            let (status, answer) = daemon.call(method, path, Some(ADMIN), body);
            assert_eq!(
                status, 400,
                "{method} {path} without {}: {answer}",
                p["name"]
            );
        }
    }
}
