//! Build script: stamps the binary with the git commit it was built from, so that
//! `fairshare --version` (and a bug report, or a package) names the exact source.
//!
//! The commit comes from `FAIRSHARE_COMMIT` when the build sets it, else from `git rev-parse`
//! in a checkout, else from the `.cargo_vcs_info.json` that `cargo package` leaves in a crate
//! downloaded from a registry, else it is "unknown". Cargo reruns this script when `HEAD` or the
//! branch it points to moves, not on every build.
//!
//! It also tells the tests what the machine offers them (`crates/test-environment.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

include!("../test-environment.rs");

fn main() {
    probe(&[
        "shared_traces",
        "live_postgres",
        "live_slurm",
        "live_slurm_many",
        "live_gridengine",
    ]);
    println!("cargo:rerun-if-env-changed=FAIRSHARE_COMMIT");
    let commit = std::env::var("FAIRSHARE_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&["rev-parse", "--short=7", "HEAD"]))
        .or_else(vcs_info_commit)
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=FAIRSHARE_COMMIT={commit}");
    for path in watched() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// What `git ARGS…` prints, trimmed; `None` outside a checkout or without git.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

/// The files whose change moves `HEAD`: this worktree's `HEAD`, the branch's loose ref and the
/// packed refs (both kept in the common git folder, shared by every worktree). A branch with no
/// loose ref (packed) gets its folder watched, where its next commit writes one. Only paths
/// that exist are named, since Cargo reruns a script whose watched file is missing every time.
fn watched() -> Vec<PathBuf> {
    let abs = |what: &str| git(&["rev-parse", "--path-format=absolute", what]);
    let (Some(dir), Some(common)) = (abs("--git-dir"), abs("--git-common-dir")) else {
        return Vec::new();
    };
    let common = Path::new(&common);
    let mut paths = vec![Path::new(&dir).join("HEAD"), common.join("packed-refs")];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]).map(|b| common.join(b)) {
        match branch.exists() {
            true => paths.push(branch),
            false => paths.extend(branch.parent().map(Path::to_path_buf)),
        }
    }
    paths.retain(|p| p.exists());
    paths
}

/// The commit `cargo package` recorded in `.cargo_vcs_info.json` (`"sha1": "…"`), shortened.
fn vcs_info_commit() -> Option<String> {
    let text = std::fs::read_to_string(".cargo_vcs_info.json").ok()?;
    let start = text.find("\"sha1\"")? + "\"sha1\"".len();
    let rest = text[start..].trim_start().strip_prefix(':')?.trim_start();
    let sha: String = rest.strip_prefix('"')?.chars().take(7).collect();
    (sha.len() == 7).then_some(sha)
}
