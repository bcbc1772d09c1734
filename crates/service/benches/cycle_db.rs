//! One priority cycle with its database round trip, as the leading replica runs it: mark the
//! reports not counted yet, read them with the registry and the previous memory, compute, and
//! store the snapshot and memory ([`Store::run_cycle`]). N nodes of 10 workloads each (N =
//! 100, 1,000, 10,000), every node reporting once per cycle (10 samples), or one node in ten;
//! the reports are stored before each timed cycle and are not part of its time, nor is the
//! checkpoint the daemon runs once a cycle is served (SQLite's log copied into its file). After
//! each case it prints how many bytes the last cycle wrote, its checkpoint included (the
//! server's write-ahead log on PostgreSQL, the process's writes on SQLite), how long that
//! checkpoint took, and the size of its snapshot and memory as JSON. On a fresh SQLite file,
//! and on PostgreSQL as well when `FAIRSHARE_TEST_POSTGRES` names a server (a database is created
//! for the bench and dropped after it).
//!
//! Run with `cargo bench -p fairshare-service --bench cycle_db`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use fairshare_service::cycle::{compute, Settings};
use fairshare_service::model::{NodeSpec, Sample, UsageReport, WorkloadSpec};
use fairshare_service::store::{now_ms, Store};
use fairshare_service::ServiceConfig;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

/// The allocator the `fairshare` binary runs with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const WORKLOADS_PER_NODE: usize = 10;

/// The daemon's settings under its default configuration.
fn settings(config: &ServiceConfig) -> Settings {
    Settings {
        resources: config.resources.clone(),
        heaviness: config.heaviness.clone(),
        priority: config.priority,
        profile: config.knob_profile().expect("the default knob profile"),
    }
}

/// A per-resource map of the default resources.
fn per_resource(config: &ServiceConfig, values: [f64; 4]) -> fairshare_service::model::PerResource {
    config
        .resources
        .iter()
        .zip(values)
        .map(|(r, v)| (r.name.clone(), v))
        .collect()
}

/// Registers `nodes` nodes (64 CPUs, 256 GiB, 1 GB/s disk and network), as many users, and 10
/// workloads of 4 CPUs and 16 GiB on each node, the workloads' owners spread over the users.
async fn register(store: &Store, config: &ServiceConfig, nodes: usize) {
    let gib = 1073741824.0;
    let node = NodeSpec {
        supply: per_resource(config, [64.0, 256.0 * gib, 1e9, 1e9]),
        speed: 1.0,
    };
    for n in 0..nodes {
        store
            .put_node(&format!("node-{n:05}"), &node)
            .await
            .unwrap();
        store.add_user(&format!("user-{n:05}")).await.unwrap();
    }
    for n in 0..nodes {
        for w in 0..WORKLOADS_PER_NODE {
            let spec = WorkloadSpec {
                owner: format!("user-{:05}", (n * 7 + w) % nodes),
                node: format!("node-{n:05}"),
                size: per_resource(config, [4.0, 16.0 * gib, 0.0, 0.0])
                    .into_iter()
                    .filter(|(_, v)| *v > 0.0)
                    .collect(),
            };
            let id = format!("vm-{n:05}-{w}");
            store.put_workload(&id, &spec, |_| Ok(())).await.unwrap();
        }
    }
}

/// One report from every `every`-th node, number `seq`, 10 s of usage that differs by
/// workload and by cycle.
fn reports(config: &ServiceConfig, nodes: usize, every: usize, seq: u64) -> Vec<UsageReport> {
    let gib = 1073741824.0;
    (0..nodes)
        .step_by(every)
        .map(|n| UsageReport {
            node: format!("node-{n:05}"),
            seq,
            interval_s: 10.0,
            samples: (0..WORKLOADS_PER_NODE)
                .map(|w| {
                    let load = ((n * 31 + w * 17 + seq as usize * 13) % 100) as f64 / 100.0;
                    Sample {
                        workload: format!("vm-{n:05}-{w}"),
                        usage: per_resource(
                            config,
                            [40.0 * load, 8.0 * gib * load, 1e8 * load, 1e7 * load],
                        ),
                    }
                })
                .collect(),
            written: None,
        })
        .collect()
}

/// How many of the nodes report before each cycle: all of them, or one in ten (the others'
/// workloads idle, so their memory does not change: what a cycle's writes could be
/// proportional to).
const REPORTING: [(&str, usize); 2] = [("all", 1), ("tenth", 10)];

/// Bytes this process has handed to `write` so far (SQLite writes from the process itself).
fn bytes_written() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    let line = io.lines().find_map(|l| l.strip_prefix("wchar: "));
    line.and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

/// The PostgreSQL server's write-ahead log position, in bytes (`None` on SQLite).
async fn wal_position(store: &Store, backend: &str) -> Option<i64> {
    use sqlx::Row;
    if backend != "postgres" {
        return None;
    }
    let mut conn = store.connection().await.unwrap();
    let sql = "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::BIGINT";
    Some(
        sqlx::query(sql)
            .fetch_one(&mut *conn)
            .await
            .unwrap()
            .get::<i64, _>(0),
    )
}

/// The bytes of JSON the latest cycle's snapshot and memory are stored as: its own row and
/// every node's part.
async fn stored_json(store: &Store) -> usize {
    use sqlx::Row;
    let mut conn = store.connection().await.unwrap();
    let sql = "SELECT (SELECT LENGTH(snapshot) FROM cycles ORDER BY id DESC LIMIT 1)
                    + (SELECT SUM(LENGTH(workloads) + LENGTH(memory)) FROM node_parts)";
    let bytes: i64 = sqlx::query(sql).fetch_one(&mut *conn).await.unwrap().get(0);
    bytes as usize
}

/// The bench on the databases `url` names (each created empty).
fn on(c: &mut Criterion, rt: &Runtime, backend: &str, url: &dyn Fn(&str) -> String) {
    let config = ServiceConfig::default();
    let settings = settings(&config);
    let mut group = c.benchmark_group(format!("cycle_with_database/{backend}"));
    let cases = [100, 1_000, 10_000]
        .into_iter()
        .flat_map(|n| REPORTING.map(|r| (n, r)));
    for (nodes, (reporting, every)) in cases {
        let label = format!("{nodes}x{WORKLOADS_PER_NODE}-{reporting}");
        // Opened and filled when criterion first runs the case, so that a filtered-out case
        // costs nothing (10,000 nodes take minutes to register).
        let mut opened: Option<Store> = None;
        let mut seq = 0;
        // Bytes the last cycle wrote with its checkpoint, the size of its snapshot and memory
        // as JSON, and how long the checkpoint took.
        let (mut written, mut whole, mut checkpoint) = (0, 0, Duration::ZERO);
        let id = BenchmarkId::from_parameter(&label);
        group.bench_function(id, |b| {
            b.iter_custom(|iterations| {
                let store = opened.get_or_insert_with(|| {
                    let url = url(&label.replace('-', "_"));
                    rt.block_on(async {
                        let store = Store::open(&url).await.unwrap();
                        register(&store, &config, nodes).await;
                        store
                    })
                });
                let mut spent = Duration::ZERO;
                for _ in 0..iterations {
                    seq += 1;
                    rt.block_on(async {
                        let answers = store
                            .store_reports(&reports(&config, nodes, every, seq))
                            .await
                            .unwrap();
                        assert!(answers.iter().all(Result::is_ok));
                        let mut conn = store.connection().await.unwrap();
                        let (wal, wrote) = (wal_position(store, backend).await, bytes_written());
                        let start = Instant::now();
                        let cycle = store
                            .run_cycle(
                                &mut conn,
                                &settings.resources,
                                3_600_000,
                                |cycle, registry, memory, measured| {
                                    let outcome = compute(
                                        &settings,
                                        registry,
                                        memory,
                                        measured,
                                        cycle,
                                        now_ms(),
                                    )?;
                                    Ok::<_, fairshare_core::heaviness::HeavinessError>((
                                        outcome.snapshot,
                                        outcome.memory,
                                        0.0,
                                    ))
                                },
                            )
                            .await
                            .unwrap()
                            .unwrap();
                        spent += start.elapsed();
                        let start = Instant::now();
                        store.checkpoint(&mut conn).await.unwrap();
                        checkpoint = start.elapsed();
                        written = match (wal, wal_position(store, backend).await) {
                            (Some(before), Some(after)) => (after - before) as u64,
                            _ => bytes_written() - wrote,
                        };
                        whole = stored_json(store).await;
                        assert_eq!(cycle.0.workloads.len(), nodes * WORKLOADS_PER_NODE);
                    });
                }
                spent
            })
        });
        if seq > 0 {
            let (written, whole) = (written as f64 / 1e6, whole as f64 / 1e6);
            eprintln!(
                "{backend} {label}: the last cycle wrote {written:.1} MB with its checkpoint, which \
                 took {checkpoint:.0?} after it (its snapshot and memory: {whole:.1} MB of JSON)"
            );
        }
        if let Some(store) = opened {
            rt.block_on(store.close());
        }
    }
    group.finish();
}

fn cycle_db(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = |label: &str| {
        format!(
            "sqlite:{}",
            dir.path().join(format!("cycle-{label}.db")).display()
        )
    };
    on(c, &rt, "sqlite", &sqlite);
    let Ok(admin) = std::env::var("FAIRSHARE_TEST_POSTGRES") else {
        eprintln!("skipping PostgreSQL: FAIRSHARE_TEST_POSTGRES is not set");
        return;
    };
    let base = admin[..admin.rfind('/').expect("a URL with a database")].to_string();
    let name = |label: &str| format!("fairshare_cycle_bench_{}_{label}", std::process::id());
    let created = std::cell::RefCell::new(Vec::new());
    let postgres = |label: &str| {
        pg(&rt, &admin, &format!("CREATE DATABASE {}", name(label)));
        created.borrow_mut().push(name(label));
        format!("{base}/{}", name(label))
    };
    on(c, &rt, "postgres", &postgres);
    for database in created.take() {
        pg(
            &rt,
            &admin,
            &format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"),
        );
    }
}

/// Runs one statement on the PostgreSQL server at `url`.
fn pg(rt: &Runtime, url: &str, statement: &str) {
    use sqlx::Connection;
    rt.block_on(async {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::raw_sql(statement).execute(&mut conn).await.unwrap();
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    targets = cycle_db
}
criterion_main!(benches);
