//! What the Debian package takes from the binary: `--version` with the commit, and the manual
//! pages and completions of the hidden `fairshare generate`, which document every public
//! command and leave `generate` itself out.

use std::path::Path;
use std::process::Command;

/// `fairshare ARGS…`: its standard output; panics with the error output on failure.
fn fairshare(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "fairshare {args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// The names of the files in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn version_names_the_commit() {
    let version = fairshare(&["--version"]);
    let expected = format!("fairshare {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(version.starts_with(&expected), "{version}");
    assert!(version.trim_end().ends_with(')'), "{version}");
}

#[test]
fn man_pages_cover_every_public_command() {
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man");
    let printed = fairshare(&["generate", "man", man.to_str().unwrap()]);
    let names = names(&man);
    assert_eq!(printed.lines().count(), names.len(), "{printed}");
    for page in [
        "fairshare.1",
        "fairshare-serve.1",
        "fairshare-agent.1",
        "fairshare-slurm-sync.1",
    ] {
        assert!(
            names.iter().any(|n| n == page),
            "{page} missing from {names:?}"
        );
    }
    assert!(!names.iter().any(|n| n.contains("generate")), "{names:?}");
    let page = std::fs::read_to_string(man.join("fairshare.1")).unwrap();
    assert!(page.contains("\n.TH fairshare 1 "), "{page}");
    assert!(page.contains("fairshare\\-serve(1)"), "{page}");
    assert!(!page.contains("generate"), "{page}");
}

#[test]
fn completions_for_bash_zsh_and_fish_leave_generate_out() {
    let dir = tempfile::tempdir().unwrap();
    fairshare(&["generate", "completions", dir.path().to_str().unwrap()]);
    assert_eq!(
        names(dir.path()),
        ["_fairshare", "fairshare.bash", "fairshare.fish"]
    );
    for name in names(dir.path()) {
        let text = std::fs::read_to_string(dir.path().join(&name)).unwrap();
        assert!(text.contains("serve") && text.contains("slurm"), "{name}");
        assert!(
            !text.contains("generate"),
            "{name} completes the hidden generate"
        );
    }
}
