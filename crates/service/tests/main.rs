//! fairshare-service's integration tests, one binary: the store on a real SQLite file and a real PostgreSQL server.
//!
//! Gathered into one binary so that CI links one test program per crate; run one part with
//! `cargo test -p <package> --test integration <module>::`.

mod store;
