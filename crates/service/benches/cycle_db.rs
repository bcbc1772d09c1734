//! One priority cycle with its database round trip, as the leading replica runs it: mark the
//! reports not counted yet, read them with the registry and the previous memory, compute, and
//! store the snapshot and memory ([`Store::run_cycle`]). N nodes of 10 workloads each (N =
//! 100, 1,000, 10,000), every node reporting once per cycle (10 samples); the reports are
//! stored before each timed cycle and are not part of its time. On a fresh SQLite file, and
//! on PostgreSQL as well when `FAIRSHARE_TEST_POSTGRES` names a server (a database is created
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

/// One report per node, number `seq`, 10 s of usage that differs by workload and by cycle.
fn reports(config: &ServiceConfig, nodes: usize, seq: u64) -> Vec<UsageReport> {
    let gib = 1073741824.0;
    (0..nodes)
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

/// The bench on the database at `url` (created empty).
fn on(c: &mut Criterion, rt: &Runtime, backend: &str, url: &dyn Fn(usize) -> String) {
    let config = ServiceConfig::default();
    let settings = settings(&config);
    let mut group = c.benchmark_group(format!("cycle_with_database/{backend}"));
    for nodes in [100, 1_000, 10_000] {
        let url = url(nodes);
        let store = rt.block_on(async {
            let store = Store::open(&url).await.unwrap();
            register(&store, &config, nodes).await;
            store
        });
        let mut seq = 0;
        let id = BenchmarkId::from_parameter(format!("{nodes}x{WORKLOADS_PER_NODE}"));
        group.bench_function(id, |b| {
            b.iter_custom(|iterations| {
                let mut spent = Duration::ZERO;
                for _ in 0..iterations {
                    seq += 1;
                    rt.block_on(async {
                        let answers = store
                            .store_reports(&reports(&config, nodes, seq))
                            .await
                            .unwrap();
                        assert!(answers.iter().all(Result::is_ok));
                        let mut conn = store.connection().await.unwrap();
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
                        assert_eq!(cycle.0.workloads.len(), nodes * WORKLOADS_PER_NODE);
                    });
                }
                spent
            })
        });
        rt.block_on(store.close());
    }
    group.finish();
}

fn cycle_db(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = |nodes: usize| {
        format!(
            "sqlite:{}",
            dir.path().join(format!("cycle-{nodes}.db")).display()
        )
    };
    on(c, &rt, "sqlite", &sqlite);
    let Ok(admin) = std::env::var("FAIRSHARE_TEST_POSTGRES") else {
        eprintln!("skipping PostgreSQL: FAIRSHARE_TEST_POSTGRES is not set");
        return;
    };
    let base = admin[..admin.rfind('/').expect("a URL with a database")].to_string();
    let name = |nodes: usize| format!("fairshare_cycle_bench_{}_{nodes}", std::process::id());
    let postgres = |nodes: usize| {
        pg(&rt, &admin, &format!("CREATE DATABASE {}", name(nodes)));
        format!("{base}/{}", name(nodes))
    };
    on(c, &rt, "postgres", &postgres);
    for nodes in [100, 1_000, 10_000] {
        pg(
            &rt,
            &admin,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", name(nodes)),
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
