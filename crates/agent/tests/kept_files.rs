//! Knob files kept open between writes: on a real cgroup file system each write through the
//! kept file replaces the value (where this machine's cgroups can be written), and on a tree
//! of regular files nothing is kept and each write leaves exactly the value written.

use fairshare_agent::cgroup::{Layout, OpenFiles};
use fairshare_agent::fake::{FakeTree, Shape};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Writes 819 then 757 to every knob of `rel` through `files`, checking after each that the
/// file holds exactly the value written.
fn write_twice(layout: &Layout, files: &mut OpenFiles, rel: &str) {
    let inode = std::fs::metadata(layout.knobs[0].mount.join(rel))
        .unwrap()
        .ino();
    for value in [819, 757] {
        for (k, knob) in layout.knobs.iter().enumerate() {
            let value = value * knob.default.map_or(4096 * 1024, |_| 1);
            files.write(knob, k, rel, inode, value).unwrap();
            let held = std::fs::read_to_string(knob.mount.join(rel).join(&knob.file)).unwrap();
            assert_eq!(held.trim(), value.to_string(), "{}", knob.file);
        }
    }
}

#[test]
fn a_kept_knob_file_takes_each_value_whole_on_real_cgroups() {
    let root = Path::new("/sys/fs/cgroup");
    let layout = match Layout::detect(root) {
        Ok(layout) if !layout.knobs.is_empty() => layout,
        other => {
            eprintln!(
                "skipping: no cgroup knobs to write here ({:?})",
                other.err()
            );
            return;
        }
    };
    let rel = format!("fairshare-kept-{}", std::process::id());
    let made: Vec<_> = layout
        .knobs
        .iter()
        .map(|k| k.mount.join(&rel))
        .filter(|dir| std::fs::create_dir(dir).is_ok())
        .collect();
    if made.len() < layout.knobs.len() {
        eprintln!("skipping: this machine's cgroups cannot be written");
        made.iter().for_each(|d| drop(std::fs::remove_dir(d)));
        return;
    }
    let mut files = OpenFiles::with_budget(100);
    write_twice(&layout, &mut files, &rel);
    let kept = files.held();
    drop(files);
    made.iter().for_each(|d| drop(std::fs::remove_dir(d)));
    assert_eq!(
        kept,
        layout.knobs.len(),
        "every knob written through a kept file"
    );
}

#[test]
fn a_regular_file_is_written_whole_by_path_and_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let tree = FakeTree::new(dir.path(), Shape::V1).unwrap();
    tree.add("fs/user-a.1").unwrap();
    let layout = Layout::detect(&tree.root).unwrap();
    let mut files = OpenFiles::with_budget(100);
    write_twice(&layout, &mut files, "fs/user-a.1");
    assert_eq!(files.held(), 0);
}
