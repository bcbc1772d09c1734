//! fairshare-slurm's integration tests, one binary: reading Slurm's outputs and reconciling.
//!
//! Gathered into one binary so that CI links one test program per crate; run one part with
//! `cargo test -p <package> --test integration <module>::`.

mod read;
mod reconcile;
mod versions;
