//! # fairshare-report
//!
//! Turns what the simulators measured into something a person reads: plain-text tables for the
//! terminal and one self-contained HTML page per replay, sweep or process simulation. A page
//! carries its CSS and its plots (inline SVG) inside it, loads nothing from the network and
//! needs no script, so it can be mailed, archived or opened offline and always looks the same.
//! The same summary always gives byte-identical output: numbers are written with fixed
//! precision and nothing reads a clock.
#![warn(missing_docs)]

mod html;
mod replay;
mod setting;
mod simulate;
mod sweep;
mod text;

pub mod svg;

pub use replay::{replay_html, replay_table, replay_warnings, NEVER_FIT_WARNING, TOP_USERS};
pub use simulate::{simulate_html, simulate_table};
pub use sweep::{sweep_html, sweep_table};
pub use text::table;
