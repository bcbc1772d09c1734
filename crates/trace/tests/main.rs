//! fairshare-trace's integration tests, one binary: every reader, and the shared traces where present.
//!
//! Gathered into one binary so that CI links one test program per crate; run one part with
//! `cargo test -p <package> --test integration <module>::`.

mod alibaba;
mod common;
mod google;
mod sacct;
mod shared_traces;
mod swf;
