//! Golden files: every instance in `examples/allocate/` run through `fairshare allocate`, its
//! table (head-of-line and skip) and its JSON compared byte for byte with the files in
//! `examples/allocate/expected/`. After an intended change, regenerate them with
//! `FAIRSHARE_BLESS=1 cargo test -p fairshare --test integration golden::` and read the diff.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The project's `examples/allocate` folder.
fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/allocate")
}

/// What `fairshare allocate INSTANCE ARGS` prints.
fn allocate(instance: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .arg("allocate")
        .arg(instance)
        .args(args)
        .output()
        .expect("fairshare runs");
    assert!(
        output.status.success(),
        "{}: {}",
        instance.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

#[test]
fn every_allocate_example_gives_its_expected_output() {
    let bless = std::env::var_os("FAIRSHARE_BLESS").is_some();
    let mut instances: Vec<PathBuf> = std::fs::read_dir(folder())
        .expect("examples/allocate exists")
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    instances.sort();
    assert!(instances.len() >= 2, "instances: {instances:?}");
    let mut compared = 0;
    for instance in &instances {
        let stem = instance
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a name");
        for (suffix, args) in [
            ("txt", vec![]),
            ("skip.txt", vec!["--rule", "skip"]),
            ("json", vec!["--json"]),
        ] {
            let expected = folder().join("expected").join(format!("{stem}.{suffix}"));
            let got = allocate(instance, &args);
            if bless {
                std::fs::write(&expected, &got).expect("write the golden file");
                continue;
            }
            let want = std::fs::read_to_string(&expected).unwrap_or_else(|_| {
                panic!(
                    "{} is missing: run FAIRSHARE_BLESS=1 cargo test -p fairshare --test integration golden::",
                    expected.display()
                )
            });
            assert_eq!(
                got,
                want,
                "{} {args:?} differs from {}",
                instance.display(),
                expected.display()
            );
            compared += 1;
        }
    }
    assert!(bless || compared == 3 * instances.len());
}
