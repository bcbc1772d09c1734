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
            let resources = fairshare_service::ServiceConfig::default().resources;
            let supply = resources.iter().map(|r| (r.name.clone(), 8.0)).collect();
            for n in ["n1", "n2"] {
                let node = NodeSpec {
                    supply: BTreeMap::clone(&supply),
                    speed: 1.0,
                };
                store.put_node(n, &node).await.unwrap();
            }
            store.put_user("d", &UserSpec::default()).await.unwrap();
            let size = resources
                .iter()
                .filter(|r| r.kind.has_virtual())
                .map(|r| (r.name.clone(), 1.0))
                .collect();
            let on = |node: &str| WorkloadSpec {
                owner: "d".into(),
                node: node.into(),
                size: BTreeMap::clone(&size),
            };
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
            let resources = fairshare_service::ServiceConfig::default().resources;
            let node = NodeSpec {
                supply: resources.iter().map(|r| (r.name.clone(), 8.0)).collect(),
                speed: 1.0,
            };
            let on = |owner: &str, node: &str| WorkloadSpec {
                owner: owner.into(),
                node: node.into(),
                size: resources
                    .iter()
                    .filter(|r| r.kind.has_virtual())
                    .map(|r| (r.name.clone(), 1.0))
                    .collect(),
            };
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
