//! The store against a real SQLite file and (when `FAIRSHARE_TEST_POSTGRES` names a server) a
//! real PostgreSQL database: what it refuses to store, and the knob values agents report.

use fairshare_service::cycle::{compute, Memory, Settings, Snapshot, WorkloadMemory};
use fairshare_service::model::{NodeSpec, UsageReport, UserSpec, WorkloadSpec};
use fairshare_service::store::{Store, StoreError};
use std::collections::BTreeMap;

/// Runs `test` on a fresh SQLite file, then on a fresh PostgreSQL database if one is named.
fn on_every_backend(test: impl Fn(&str)) {
    static TESTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = TESTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = tempfile_dir(n);
    test(&format!("sqlite:{}", dir.join("store.db").display()));
    let _ = std::fs::remove_dir_all(&dir);
    let Ok(admin) = std::env::var("FAIRSHARE_TEST_POSTGRES") else {
        eprintln!("skipping PostgreSQL: FAIRSHARE_TEST_POSTGRES is not set");
        return;
    };
    let name = format!("fairshare_store_{}_{n}", std::process::id());
    pg(&admin, &format!("CREATE DATABASE {name}"));
    let base = &admin[..admin.rfind('/').expect("a URL with a database")];
    test(&format!("{base}/{name}"));
    pg(&admin, &format!("DROP DATABASE {name} WITH (FORCE)"));
}

fn tempfile_dir(n: usize) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fairshare-store-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every store test runs on SQLite, and on PostgreSQL only where `FAIRSHARE_TEST_POSTGRES`
/// names a server: this test is ignored elsewhere, so that the summary says what was not run.
#[test]
#[cfg_attr(
    not(live_postgres),
    ignore = "needs PostgreSQL: FAIRSHARE_TEST_POSTGRES=postgres://USER:PASSWORD@HOST/DB (a role that may create databases); without it the store tests ran on SQLite only"
)]
fn the_store_tests_reach_postgresql() {
    let admin = std::env::var("FAIRSHARE_TEST_POSTGRES").expect("set when the crate was built");
    pg(&admin, "SELECT 1");
}

fn pg(url: &str, statement: &str) {
    use sqlx::Connection;
    runtime().block_on(async {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::raw_sql(statement).execute(&mut conn).await.unwrap();
    });
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A cycle whose answer (or memory) holds a number that is not finite is refused before it is
/// stored, and the latest stored cycle stays what it was.
#[test]
fn a_cycle_with_a_number_that_is_not_finite_is_not_stored() {
    on_every_backend(|url| {
        runtime().block_on(async {
            let store = Store::open(url).await.unwrap();
            let resources = fairshare_service::ServiceConfig::default().resources;
            let mut conn = store.connection().await.unwrap();
            let good = |cycle, _: &_, _: &_, _: &_| {
                let snapshot = Snapshot {
                    cycle,
                    ..Snapshot::default()
                };
                Ok::<_, ()>((snapshot, Memory::new(), 0.001))
            };
            store
                .run_cycle(&mut conn, &resources, 1000, good)
                .await
                .unwrap()
                .unwrap();
            let nan_memory = |cycle, _: &_, _: &_, _: &_| {
                let snapshot = Snapshot {
                    cycle,
                    ..Snapshot::default()
                };
                let memory = WorkloadMemory {
                    smoothed: Some(vec![f64::NAN]),
                    priority: None,
                };
                Ok::<_, ()>((snapshot, vec![("w1".into(), memory)], 0.001))
            };
            let e = store
                .run_cycle(&mut conn, &resources, 1000, nan_memory)
                .await
                .unwrap_err();
            assert!(matches!(e, StoreError::NotFinite(_)), "{url}: {e}");
            assert!(
                e.to_string().contains("workload \"w1\" would remember NaN"),
                "{e}"
            );
            let infinite = |cycle, _: &_, _: &_, _: &_| {
                let mut snapshot = Snapshot {
                    cycle,
                    ..Snapshot::default()
                };
                let user = fairshare_core::heaviness::UserHeaviness {
                    active: true,
                    endowment: vec![1.0],
                    usage: vec![f64::INFINITY],
                    entitlement: 0.0,
                    static_part: 0.0,
                    dynamic: 0.0,
                    unused_quota: 0.0,
                    heaviness: f64::NAN,
                    rank: 1,
                };
                snapshot.users.insert("alice".into(), user);
                Ok::<_, ()>((snapshot, Memory::new(), 0.001))
            };
            let e = store
                .run_cycle(&mut conn, &resources, 1000, infinite)
                .await
                .unwrap_err();
            assert!(e.to_string().contains("user \"alice\" has NaN"), "{e}");
            assert_eq!(store.latest_cycle().await.unwrap(), 1, "{url}");
            assert_eq!(store.latest_snapshot().await.unwrap().unwrap().cycle, 1);
            drop(conn);
            store.close().await;
        });
    });
}

/// Runs one cycle of the daemon's own computation; the answer as stored.
async fn cycle(store: &Store) -> Snapshot {
    let config = fairshare_service::ServiceConfig::default();
    let settings = Settings {
        resources: config.resources.clone(),
        heaviness: config.heaviness.clone(),
        priority: config.priority,
        profile: config.knob_profile().unwrap(),
    };
    let mut conn = store.connection().await.unwrap();
    let run = |cycle, registry: &_, memory: &_, measured: &_| {
        let o = compute(&settings, registry, memory, measured, cycle, 0)?;
        Ok::<_, fairshare_core::heaviness::HeavinessError>((o.snapshot, o.memory, 0.001))
    };
    let (snapshot, _) = store
        .run_cycle(&mut conn, &settings.resources, 1000, run)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.latest_snapshot().await.unwrap().as_ref(),
        Some(&snapshot)
    );
    snapshot
}

/// A node of 8 of every resource.
fn node_spec() -> NodeSpec {
    let resources = fairshare_service::ServiceConfig::default().resources;
    NodeSpec {
        supply: resources.iter().map(|r| (r.name.clone(), 8.0)).collect(),
        speed: 1.0,
    }
}

/// A workload of `owner` on `node`, of virtual size 1 in every resource that has one.
fn workload_spec(owner: &str, node: &str) -> WorkloadSpec {
    let resources = fairshare_service::ServiceConfig::default().resources;
    WorkloadSpec {
        owner: owner.into(),
        node: node.into(),
        size: resources
            .iter()
            .filter(|r| r.kind.has_virtual())
            .map(|r| (r.name.clone(), 1.0))
            .collect(),
    }
}

/// The knob values written of workload `id` in a cycle's answer.
fn written(snapshot: &Snapshot, id: &str) -> Option<Vec<(String, u64)>> {
    let w = snapshot.workloads.iter().find(|w| &*w.workload == id)?;
    w.written.as_ref().map(|k| k.clone().into_iter().collect())
}

/// The knob values a report says are in force are kept per workload, the latest of its node,
/// and given to the workload by the next cycle while it stays on that node; deleting it
/// forgets them.
#[test]
fn knob_values_written_are_kept_per_workload_and_served_by_the_next_cycle() {
    on_every_backend(|url| {
        runtime().block_on(async {
            let store = Store::open(url).await.unwrap();
            for n in ["n1", "n2"] {
                store.put_node(n, &node_spec()).await.unwrap();
            }
            store.put_user("d", &UserSpec::default()).await.unwrap();
            let on = |node: &str| workload_spec("d", node);
            for w in ["d1", "d2"] {
                store.put_workload(w, &on("n1"), |_| Ok(())).await.unwrap();
            }
            let report = |seq, shares: u64| UsageReport {
                node: "n1".into(),
                seq,
                interval_s: 10.0,
                samples: Vec::new(),
                written: Some(BTreeMap::from([(
                    "d1".to_string(),
                    BTreeMap::from([
                        ("cpu.shares".to_string(), shares.into()),
                        ("blkio.weight".to_string(), 500u64.into()),
                    ]),
                )])),
            };
            let kept = |shares| {
                Some(vec![
                    ("blkio.weight".to_string(), 500),
                    ("cpu.shares".to_string(), shares),
                ])
            };
            store.store_reports(&[report(20, 204_472)]).await.unwrap();
            let first = cycle(&store).await;
            assert_eq!(written(&first, "d1"), kept(204_472), "{url}");
            assert_eq!(written(&first, "d2"), None, "{url}: nothing reported");
            // An older report stored later, and a retry, change nothing; a later one replaces.
            store.store_reports(&[report(10, 5)]).await.unwrap();
            store.store_reports(&[report(20, 204_472)]).await.unwrap();
            assert_eq!(written(&cycle(&store).await, "d1"), kept(204_472), "{url}");
            store.store_reports(&[report(30, 1597)]).await.unwrap();
            assert_eq!(written(&cycle(&store).await, "d1"), kept(1597), "{url}");
            // Moved to another node: what n1's agent wrote is no longer in force.
            store
                .put_workload("d1", &on("n2"), |_| Ok(()))
                .await
                .unwrap();
            assert_eq!(written(&cycle(&store).await, "d1"), None, "{url}");
            store
                .put_workload("d1", &on("n1"), |_| Ok(()))
                .await
                .unwrap();
            assert_eq!(written(&cycle(&store).await, "d1"), kept(1597), "{url}");
            // Deleted and registered again: forgotten.
            assert!(store.delete_workload("d1", |_| Ok(())).await.unwrap());
            store
                .put_workload("d1", &on("n1"), |_| Ok(()))
                .await
                .unwrap();
            assert_eq!(written(&cycle(&store).await, "d1"), None, "{url}");
            store.close().await;
        });
    });
}

/// Every write to the registry reaches the next cycle, though a cycle keeps the registry it
/// read while the stored version stands; on PostgreSQL, writes through another replica too.
#[test]
fn every_registry_write_reaches_the_next_cycle() {
    on_every_backend(|url| {
        runtime().block_on(async {
            let store = Store::open(url).await.unwrap();
            // On SQLite one daemon holds the file; on PostgreSQL a second replica writes.
            let other = if url.starts_with("sqlite:") {
                store.clone()
            } else {
                Store::open(url).await.unwrap()
            };
            let (node, on) = (node_spec(), workload_spec);
            let seen = |s: &Snapshot| {
                let users: Vec<String> = s.users.keys().map(|u| u.to_string()).collect();
                let workloads: Vec<String> = s
                    .workloads
                    .iter()
                    .map(|w| format!("{}@{}", w.workload, w.node))
                    .collect();
                (users.join(" "), workloads.join(" "))
            };
            let expect = |users: &str, workloads: &str| (users.into(), workloads.into());
            store.put_node("n1", &node).await.unwrap();
            other.put_user("a", &UserSpec::default()).await.unwrap();
            other
                .put_workload("a1", &on("a", "n1"), |_| Ok(()))
                .await
                .unwrap();
            assert_eq!(seen(&cycle(&store).await), expect("a", "a1@n1"), "{url}");
            assert_eq!(seen(&cycle(&store).await), expect("a", "a1@n1"), "{url}");
            other.put_node("n2", &node).await.unwrap();
            other
                .put_workload("a1", &on("a", "n2"), |_| Ok(()))
                .await
                .unwrap();
            assert_eq!(seen(&cycle(&store).await), expect("a", "a1@n2"), "{url}");
            other.add_user("b").await.unwrap();
            assert_eq!(seen(&cycle(&store).await), expect("a b", "a1@n2"), "{url}");
            other
                .put_workload("b1", &on("b", "n1"), |_| Ok(()))
                .await
                .unwrap();
            assert_eq!(
                seen(&cycle(&store).await),
                expect("a b", "a1@n2 b1@n1"),
                "{url}"
            );
            assert!(other.delete_workload("a1", |_| Ok(())).await.unwrap());
            assert_eq!(seen(&cycle(&store).await), expect("a b", "b1@n1"), "{url}");
            assert!(other.delete_node("n1").await.unwrap());
            assert_eq!(seen(&cycle(&store).await), expect("a b", ""), "{url}");
            other.close().await;
            store.close().await;
        });
    });
}

/// Registers nodes `n1`…`n{nodes}`, each with two workloads of a user of its own (`u1`…).
async fn two_workloads_per_node(store: &Store, nodes: usize) {
    for n in 1..=nodes {
        store
            .put_node(&format!("n{n}"), &node_spec())
            .await
            .unwrap();
        store.add_user(&format!("u{n}")).await.unwrap();
        for w in 1..=2 {
            let spec = workload_spec(&format!("u{n}"), &format!("n{n}"));
            let id = format!("n{n}-w{w}");
            store.put_workload(&id, &spec, |_| Ok(())).await.unwrap();
        }
    }
}

/// Report `seq` of node `node`: its two workloads used `load` of every resource.
fn usage(node: &str, seq: u64, load: f64) -> UsageReport {
    let resources = fairshare_service::ServiceConfig::default().resources;
    let samples = (1..=2).map(|w| fairshare_service::model::Sample {
        workload: format!("{node}-w{w}"),
        usage: resources.iter().map(|r| (r.name.clone(), load)).collect(),
    });
    UsageReport {
        node: node.into(),
        seq,
        interval_s: 10.0,
        samples: samples.collect(),
        written: None,
    }
}

/// Each node's part as the latest snapshot serves it, and the cycle that last wrote it.
async fn parts(store: &Store) -> BTreeMap<String, (String, i64)> {
    use sqlx::Row;
    let snapshot = store.latest_snapshot().await.unwrap().unwrap();
    let mut conn = store.connection().await.unwrap();
    let rows = sqlx::query("SELECT node, cycle FROM node_parts")
        .fetch_all(&mut *conn)
        .await
        .unwrap();
    rows.iter()
        .map(|r| {
            let node: String = r.get(0);
            let served = snapshot.workloads.iter().filter(|w| *w.node == *node);
            let served = serde_json::to_string(&served.collect::<Vec<_>>()).unwrap();
            (node, (served, r.get(1)))
        })
        .collect()
}

/// A cycle rewrites a node's part exactly when what it serves for that node's workloads
/// changed: once the priorities have settled, a cycle in which one node reports rewrites that
/// node's part and leaves the others as they were.
#[test]
fn a_cycle_rewrites_only_the_nodes_parts_that_changed() {
    on_every_backend(|url| {
        runtime().block_on(async {
            let store = Store::open(url).await.unwrap();
            two_workloads_per_node(&store, 3).await;
            let mut before = BTreeMap::new();
            let mut unchanged = 0;
            for seq in 1..=40 {
                if seq == 40 {
                    store.store_reports(&[usage("n2", seq, 0.5)]).await.unwrap();
                }
                let cycle = cycle(&store).await.cycle as i64;
                let now = parts(&store).await;
                for (node, (served, written)) in &now {
                    let same = before.get(node).map(|(s, _)| s) == Some(served);
                    assert_eq!(*written == cycle, !same, "{url}: cycle {cycle}, {node}");
                    unchanged += usize::from(same);
                }
                assert_eq!(now.len(), 3, "{url}");
                before = now;
            }
            assert!(unchanged > 0, "{url}: every part changed every cycle");
            let last = 40;
            assert_eq!(before["n2"].1, last, "{url}: the reporting node's part");
            assert!(
                before["n1"].1 < last && before["n3"].1 < last,
                "{url}: {before:?}"
            );
            store.close().await;
        });
    });
}

/// A cycle starts from the memory of the latest stored cycle whoever stored it: replicas
/// taking turns compute what one replica computes alone (on SQLite, one daemon's clone).
#[test]
fn a_cycle_starts_from_the_latest_stored_memory_whichever_replica_stored_it() {
    let run = |url: &str, alternate: bool| {
        runtime().block_on(async {
            let one = Store::open(url).await.unwrap();
            let other = match (alternate, url.starts_with("sqlite:")) {
                (true, false) => Store::open(url).await.unwrap(),
                _ => one.clone(),
            };
            two_workloads_per_node(&one, 2).await;
            let mut served = Vec::new();
            for seq in 1..=6 {
                one.store_reports(&[usage("n1", seq, seq as f64 / 10.0)])
                    .await
                    .unwrap();
                let store = if seq % 3 == 0 { &other } else { &one };
                served.push(cycle(store).await);
            }
            other.close().await;
            one.close().await;
            served
        })
    };
    on_every_backend(|url| {
        let alone = run(url, false);
        with_another_database(url, |replicas| {
            assert_eq!(run(replicas, true), alone, "{url}")
        });
    });
}

/// Runs `test` with a second, fresh database on the backend of `url`.
fn with_another_database(url: &str, test: impl FnOnce(&str)) {
    let Some((base, name)) = url.rsplit_once('/').filter(|_| !url.starts_with("sqlite:")) else {
        return test(&format!("{url}.other"));
    };
    let other = format!("{name}_other");
    pg(url, &format!("CREATE DATABASE {other}"));
    test(&format!("{base}/{other}"));
    pg(url, &format!("DROP DATABASE {other} WITH (FORCE)"));
}

/// A cycle stored before migration 5 (its whole snapshot and memory in its own row, no node's
/// part) is served as it is, and the next cycle starts from its memory and writes every part.
#[test]
fn a_cycle_stored_whole_before_migration_5_is_read_as_it_is() {
    let run = |url: &str, whole: bool| {
        runtime().block_on(async {
            let store = Store::open(url).await.unwrap();
            two_workloads_per_node(&store, 2).await;
            let mut served = Vec::new();
            for seq in 1..=2 {
                store.store_reports(&[usage("n1", seq, 0.3)]).await.unwrap();
                served.push(cycle(&store).await);
            }
            if whole {
                store_whole(&store).await;
                assert_eq!(
                    store.latest_snapshot().await.unwrap().as_ref(),
                    served.last()
                );
            }
            store.close().await;
            drop(store);
            // A daemon started afresh: nothing kept from the cycles before.
            let store = Store::open(url).await.unwrap();
            store.store_reports(&[usage("n1", 3, 0.7)]).await.unwrap();
            served.push(cycle(&store).await);
            assert_eq!(parts(&store).await.len(), 2, "{url}");
            store.close().await;
            served
        })
    };
    on_every_backend(|url| {
        let parts = run(url, false);
        with_another_database(url, |whole| assert_eq!(run(whole, true), parts, "{url}"));
    });
}

/// Rewrites the latest cycle as a version before migration 5 stored it: its whole snapshot
/// and memory in its own row, no node's part.
async fn store_whole(store: &Store) {
    use sqlx::Row;
    let snapshot = store.latest_snapshot().await.unwrap().unwrap();
    let mut conn = store.connection().await.unwrap();
    let texts = sqlx::query("SELECT memory FROM node_parts")
        .fetch_all(&mut *conn)
        .await
        .unwrap();
    let mut memory: Memory = texts
        .iter()
        .flat_map(|r| serde_json::from_str::<Memory>(&r.get::<String, _>(0)).unwrap())
        .collect();
    memory.sort_by(|a, b| a.0.cmp(&b.0));
    sqlx::query("UPDATE cycles SET snapshot = $1, memory = $2 WHERE id = $3")
        .bind(serde_json::to_string(&snapshot).unwrap())
        .bind(serde_json::to_string(&memory).unwrap())
        .bind(snapshot.cycle as i64)
        .execute(&mut *conn)
        .await
        .unwrap();
    sqlx::query("DELETE FROM node_parts")
        .execute(&mut *conn)
        .await
        .unwrap();
}

/// The log a cycle leaves on SQLite reaches the database file at the checkpoint the daemon runs
/// once the cycle is served: the file alone, copied without its log, holds the cycle after it
/// and not before.
#[test]
fn a_checkpoint_puts_the_cycle_into_the_database_file() {
    let dir = tempfile_dir(usize::MAX);
    let path = dir.join("store.db");
    let latest_in_file_alone = |name: &str| {
        let copy = dir.join(name);
        std::fs::copy(&path, &copy).unwrap();
        let url = format!("sqlite:{}", copy.display());
        async move {
            Store::open(&url)
                .await
                .unwrap()
                .latest_cycle()
                .await
                .unwrap()
        }
    };
    runtime().block_on(async {
        let store = Store::open(&format!("sqlite:{}", path.display()))
            .await
            .unwrap();
        two_workloads_per_node(&store, 2).await;
        let served = cycle(&store).await.cycle;
        assert_eq!(latest_in_file_alone("before.db").await, 0);
        let mut conn = store.connection().await.unwrap();
        store.checkpoint(&mut conn).await.unwrap();
        assert_eq!(latest_in_file_alone("after.db").await, served);
        store.close().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// On PostgreSQL the store's connections compress long texts (the nodes' parts) with lz4.
#[test]
fn postgres_connections_compress_long_texts_with_lz4() {
    on_every_backend(|url| {
        if url.starts_with("sqlite:") {
            return;
        }
        runtime().block_on(async {
            use sqlx::Row;
            let store = Store::open(url).await.unwrap();
            let mut conn = store.connection().await.unwrap();
            let row = sqlx::query("SELECT current_setting('default_toast_compression')")
                .fetch_one(&mut *conn)
                .await
                .unwrap();
            assert_eq!(row.get::<String, _>(0), "lz4");
            drop(conn);
            store.close().await;
        });
    });
}
