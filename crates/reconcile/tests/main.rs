//! fairshare-reconcile's integration tests, one binary: the seam proven by an adapter written
//! outside the crate for a made-up scheduler, and the loop's waits.
//!
//! Run one part with `cargo test -p fairshare-reconcile --test integration <module>::`.

mod made_up;
