//! fairshare-lab's integration tests, one binary.
//!
//! Gathered into one binary so that CI links one test program per crate; run one part with
//! `cargo test -p <package> --test integration <module>::`.

mod cloud;
mod replay_props;
mod shard;
mod trace;
