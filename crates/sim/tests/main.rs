//! fairshare-sim's integration tests, one binary.
//!
//! Gathered into one binary so that CI links one test program per crate; run one part with
//! `cargo test -p <package> --test integration <module>::`.

mod batch;
mod batch_props;
mod bottleneck;
mod cluster;
mod fairshare;
mod figures;
mod runtime_paper;
mod runtime_props;
mod runtime_read;
mod scenario;
mod seams;
