// What the machine offers the tests that need more than the workspace, told to the compiler as
// `cfg`s so that a test without what it needs is `#[ignore]`d with the reason, and the summary
// of `cargo test` counts it as ignored rather than passed. Included by the `build.rs` of each
// crate with such tests, which names the `cfg`s its tests use (a variable watched by a crate
// that others depend on would rebuild them all when it changes):
//
// - `shared_traces`: the real traces at `../shared/traces` beside the workspace (decided when
//   the crate is built: after adding the folder, touch the crate's `build.rs`);
// - `live_postgres`: `FAIRSHARE_TEST_POSTGRES` names a PostgreSQL server;
// - `live_slurm`: `FAIRSHARE_TEST_SLURM` is set (a one-host Slurm is up);
// - `live_slurm_many`: `FAIRSHARE_TEST_SLURM_MANY` is set (the many-node Slurm is up);
// - `live_gridengine`: `FAIRSHARE_TEST_GRIDENGINE` is set (a one-host Grid Engine is up).

/// Tells the compiler which of `cfgs` this machine offers.
fn probe(cfgs: &[&str]) {
    println!("cargo::rerun-if-changed=build.rs");
    for cfg in cfgs {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        let offered = match *cfg {
            "shared_traces" => {
                let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
                let shared = std::path::Path::new(&manifest).join("../../../shared/traces");
                if shared.is_dir() {
                    println!("cargo::rerun-if-changed={}", shared.display());
                }
                shared.is_dir()
            }
            _ => {
                let variable = match *cfg {
                    "live_postgres" => "FAIRSHARE_TEST_POSTGRES",
                    "live_slurm" => "FAIRSHARE_TEST_SLURM",
                    "live_slurm_many" => "FAIRSHARE_TEST_SLURM_MANY",
                    "live_gridengine" => "FAIRSHARE_TEST_GRIDENGINE",
                    other => panic!("no such test environment: {other}"),
                };
                println!("cargo::rerun-if-env-changed={variable}");
                std::env::var_os(variable).is_some()
            }
        };
        if offered {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
