//! The store against a real SQLite file and (when `FAIRSHARE_TEST_POSTGRES` names a server) a
//! real PostgreSQL database: what it refuses to store.

use fairshare_service::cycle::{Memory, Snapshot, WorkloadMemory};
use fairshare_service::store::{Store, StoreError};

/// Runs `test` on a fresh SQLite file, then on a fresh PostgreSQL database if one is named.
fn on_every_backend(test: impl Fn(&str)) {
    let dir = tempfile_dir();
    test(&format!("sqlite:{}", dir.join("store.db").display()));
    let _ = std::fs::remove_dir_all(&dir);
    let Ok(admin) = std::env::var("FAIRSHARE_TEST_POSTGRES") else {
        eprintln!("skipping PostgreSQL: FAIRSHARE_TEST_POSTGRES is not set");
        return;
    };
    let name = format!("fairshare_store_{}", std::process::id());
    pg(&admin, &format!("CREATE DATABASE {name}"));
    let base = &admin[..admin.rfind('/').expect("a URL with a database")];
    test(&format!("{base}/{name}"));
    pg(&admin, &format!("DROP DATABASE {name} WITH (FORCE)"));
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fairshare-store-{}", std::process::id()));
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
