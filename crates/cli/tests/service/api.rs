//! The API's answers: priorities checked against the core's metric, a repeated report stored
//! once, a user without workloads explained, a node deleted with its workloads, every operation
//! as the served document describes it.

use super::*;
use fairshare_core::heaviness::knobs::{priority, KnobProfile, PriorityConfig};
use fairshare_core::heaviness::{
    heaviness, Cloud, HeavinessConfig, Host, Resource, ResourceKind, User, Workload,
};

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
