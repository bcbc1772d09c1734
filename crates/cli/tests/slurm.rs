//! `fairshare priorities` against a real Slurm (22.05, or 24.11 in its root): the one-host cluster of
//! `scripts/slurm/up.sh` (Fair Tree, a 10-minute half-life, a 1-minute period) runs
//! `scripts/slurm/jobs.sh` (a user with `parent` shares, one with 0 and Slurm's root user
//! among them); mid-run, its accounting is dumped and `sshare -a -l` read at the
//! same moment, and every column fairshare computes under `--decay slurm:…` must equal
//! sshare's to the fourth decimal.
//!
//! Runs where `FAIRSHARE_TEST_SLURM` is set (`.ci/run` brings the cluster up and sets it);
//! skipped with a message elsewhere. It takes about three minutes of wall time: Slurm charges
//! usage once a minute.

use crate::live::{agree_with_sshare, run, script, snapshot};
use serde_json::Value;
use std::time::Duration;

#[test]
#[cfg_attr(
    not(live_slurm),
    ignore = "needs a live one-host Slurm: scripts/slurm/up.sh --fresh fair-tree, then FAIRSHARE_TEST_SLURM=1"
)]
fn priorities_reproduce_a_live_sshare() {
    let _cluster = crate::live::exclusive();
    // From a fresh cluster: the other live tests' jobs end when they will, and one that ends
    // in the same second as a decay tick is charged a tick's decay apart in sshare's usage
    // and in the dump's (scripts/slurm/after-tick.sh); jobs.sh's never do.
    script("up.sh", &["--fresh", "fair-tree"]);
    script("jobs.sh", &[]);
    // Past two decay ticks after the first starts, while alice's and bob's long jobs run.
    std::thread::sleep(Duration::from_secs(150));
    let dir = tempfile::tempdir().unwrap();
    let (sshare, tick) = snapshot(dir.path());
    let dump = dir.path().join("sacct.txt");
    let shares = dir.path().join("shares.toml");
    std::fs::write(&shares, "[accounts]\nphysics = { shares = 3 }\nchemistry = { shares = 1 }\n\n[users]\nroot = {}\nalice = { account = \"physics\" }\nbob = { account = \"physics\" }\ncarol = { account = \"chemistry\" }\ndave = { account = \"chemistry\" }\nerin = { account = \"chemistry\", shares = \"parent\" }\nfrank = { account = \"physics\", shares = 0 }\n").unwrap();
    let decay = format!("slurm:half-life=10m,period=1m,tick={tick}");
    let json = run(
        env!("CARGO_BIN_EXE_fairshare"),
        &[
            "priorities",
            dump.to_str().unwrap(),
            "--shares",
            shares.to_str().unwrap(),
            "--decay",
            &decay,
            "--json",
            "-",
        ],
    );
    let doc: Value = serde_json::from_str(&json).unwrap();
    let accounting = std::fs::read_to_string(&dump).unwrap();
    eprintln!("last tick {tick}\nsacct:\n{accounting}\nsshare:\n{sshare}\nfairshare: {json}");
    agree_with_sshare(&sshare, &doc);
}
