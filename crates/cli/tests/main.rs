//! The `fairshare` command's integration tests, one binary: each module runs the real binary as a user would.
//!
//! Gathered into one binary so that CI links one test program per crate; run one part with
//! `cargo test -p <package> --test integration <module>::`.

mod agent;
mod architecture;
mod baa;
mod cloud;
mod daemon;
mod generate;
mod golden;
mod gridengine;
mod inputs;
mod live;
mod penalty;
mod priorities;
mod replay;
mod runtime;
mod service;
mod skips;
mod slurm;
mod slurm_adapter;
mod slurm_commands;
mod slurm_many;
mod whatif;
