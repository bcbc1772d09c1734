//! The fairness service of spec `heaviness.md` as a daemon: nodes report what their workloads
//! consumed, the service computes every user's heaviness over the whole cloud with the core's
//! metric, and serves the priorities and knob values each node applies. State lives in SQLite
//! (embedded) or PostgreSQL (several replicas, one computing at a time).

mod admission;
pub mod api;
pub mod auth;
pub mod config;
pub mod error;
pub mod metrics;
pub mod server;
pub mod state;
pub mod store;

pub use fairshare_wire::{cycle, model};

pub use api::ApiDoc;
pub use auth::{new_token, Role, TokenDigest};
pub use config::{ServiceConfig, TokenEntry};
pub use server::{start, Running, ServeError};
