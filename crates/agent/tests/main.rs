//! The agent's integration tests, one binary: the daemon link, the fake cgroup tree and the kept files
//! (the limit on open files has a binary of its own: the limit is the whole process's).
//!
//! Gathered into one binary so that CI links one test program per crate; run one part with
//! `cargo test -p <package> --test integration <module>::`.

mod daemon_link;
mod fake_tree;
mod kept_files;
