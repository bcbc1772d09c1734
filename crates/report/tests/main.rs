//! fairshare-report's integration tests, one binary: the pages and the simulation reports.
//!
//! Gathered into one binary so that CI links one test program per crate; run one part with
//! `cargo test -p <package> --test integration <module>::`.

mod pages;
mod simulate;
