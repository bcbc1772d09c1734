//! fairshare-core's integration tests, one binary: the fairness axioms, the live tree and the usage window.
//!
//! Gathered into one binary so that CI links one test program per crate; run one part with
//! `cargo test -p <package> --test integration <module>::`.

mod axioms;
mod livetree;
mod window;
