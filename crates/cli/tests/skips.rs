//! A test that cannot run here must say so in `cargo test`'s summary: it is `#[ignore]`d with
//! the reason, by the `cfg`s `crates/test-environment.rs` sets, and never passes by returning
//! early after a message the harness hides. This test finds such early returns in every test
//! and example of the workspace by the words they printed.

use std::path::{Path, PathBuf};

/// What a test printed before returning early, the ways the workspace once wrote it.
const SKIP_WORDS: [&str; 3] = ["SKIPPED", "skipped: ", "skipping "];

/// Early returns that stay, each with why its absence is still told.
const KNOWN: [(&str, &str); 3] = [
    (
        "service/tests/store.rs",
        "the PostgreSQL half of a store test; the_store_tests_reach_postgresql is ignored with the reason",
    ),
    (
        "cli/tests/daemon/mod.rs",
        "the PostgreSQL half of a daemon test; the_daemon_tests_reach_postgresql is ignored with the reason",
    ),
    (
        "cli/tests/agent.rs",
        "the real cgroup experiment, where the machine's cgroups refuse the test at run time (not known when it is built)",
    ),
];

#[test]
fn no_test_passes_by_skipping_itself() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found = Vec::new();
    for file in rust_files(&root.join("crates")) {
        let in_tests = file.components().any(|c| c.as_os_str() == "tests");
        let known = KNOWN.iter().any(|(path, _)| file.ends_with(path));
        if !in_tests || known || file.ends_with("skips.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !line.contains("eprintln!") {
                continue;
            }
            let printed = lines[i..lines.len().min(i + 4)].join(" ");
            let returns = printed.contains("return");
            if returns && SKIP_WORDS.iter().any(|w| printed.contains(w)) {
                found.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "tests that skip themselves and pass; #[ignore] them with the reason instead:\n{}",
        found.join("\n")
    );
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}
