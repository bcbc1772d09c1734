//! The tests' view of the machine: see `crates/test-environment.rs`.

include!("../test-environment.rs");

fn main() {
    probe(&["live_postgres"]);
}
