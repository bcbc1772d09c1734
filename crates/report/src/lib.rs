//! # fairshare-report
//!
//! Turns what the simulators measured into something a person reads: plain-text tables for the
//! terminal and one self-contained HTML page per replay, sweep, process or runtime simulation. A page
//! carries its CSS and its plots (inline SVG) inside it, loads nothing from the network and
//! needs no script, so it can be mailed, archived or opened offline and always looks the same.
//! The same summary always gives byte-identical output: numbers are written with fixed
//! precision and nothing reads a clock.
#![warn(missing_docs)]

//!
//! The generic parts — [`table`], the HTML page and the [`svg`] charts — need nothing else;
//! the pages of replays, sweeps and simulations come with the `simulation` feature (on by
//! default), which brings in the simulator's result types. The `lab` feature adds the tables
//! of `fairshare penalty` and `fairshare priorities` and the table, page and charts of
//! `fairshare cloud` (from the lab's results), the `service` feature those of `fairshare
//! top`, `explain` and `nodes` (from the daemon's answers), the
//! `agent` feature the readiness check and the cycles of `fairshare agent` (from the node
//! agent's reports), the `adapters` feature the status, syncs and passes of `fairshare slurm`
//! and `fairshare gridengine` (from the adapters' passes).

#[cfg(feature = "simulation")]
mod accounts;
#[cfg(feature = "adapters")]
mod adapter;
#[cfg(feature = "agent")]
mod agent;
#[cfg(feature = "simulation")]
mod allocate;
#[cfg(feature = "simulation")]
mod baa;
#[cfg(feature = "simulation")]
mod charges;
#[cfg(feature = "lab")]
mod cloud;
pub mod html;
#[cfg(feature = "simulation")]
mod occupancy;
#[cfg(feature = "service")]
mod operator;
#[cfg(feature = "lab")]
mod penalty;
#[cfg(feature = "lab")]
mod priorities;
#[cfg(feature = "simulation")]
mod replay;
#[cfg(feature = "simulation")]
mod runtime;
#[cfg(feature = "simulation")]
mod setting;
#[cfg(feature = "simulation")]
mod simulate;
#[cfg(feature = "simulation")]
mod sweep;
pub mod text;
#[cfg(feature = "simulation")]
mod whatif;

pub mod svg;

#[cfg(feature = "adapters")]
pub use adapter::{adapter_status, adapter_sync, pass_line, writes_text};
#[cfg(feature = "agent")]
pub use agent::{check_table, cycle_text};
#[cfg(feature = "simulation")]
pub use allocate::allocate_table;
#[cfg(feature = "simulation")]
pub use baa::{baa_html, baa_table, timeline_table};
#[cfg(feature = "lab")]
pub use cloud::{cloud_charts, cloud_html, cloud_table, CloudChart};
#[cfg(feature = "service")]
pub use operator::{explain_table, nodes_table, top_table, CpuKnob};
#[cfg(feature = "lab")]
pub use penalty::penalty_table;
#[cfg(feature = "lab")]
pub use priorities::priorities_table;
#[cfg(feature = "simulation")]
pub use replay::{
    replay_html, replay_table, replay_warnings, NEVER_FIT_WARNING, SECTIONS as REPLAY_SECTIONS,
    TEXT_TABLES as REPLAY_TEXT_TABLES, TOP_USERS,
};
#[cfg(feature = "simulation")]
pub use runtime::{runtime_html, runtime_table};
#[cfg(feature = "simulation")]
pub use simulate::{simulate_html, simulate_table};
#[cfg(feature = "simulation")]
pub use sweep::{sweep_html, sweep_table};
pub use text::table;
#[cfg(feature = "simulation")]
pub use whatif::{whatif_html, whatif_table};
