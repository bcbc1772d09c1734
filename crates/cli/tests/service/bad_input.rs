//! Bad input: every class of it answered with a named 4xx, nothing stored.

use super::*;

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
