//! Tokens: who may do what, a rate limit per token, agent tokens bound to their nodes.

use super::*;

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
