//! The fairness service end to end: the real `fairshare serve` on a loopback port, on SQLite
//! and (when `FAIRSHARE_TEST_POSTGRES` is set) PostgreSQL — registration, reports, priorities
//! checked against the core's metric, authentication, every class of bad input, restarts,
//! crashes under load, and two replicas sharing one database.
//!
//! One file per part: the API's answers (`api`), tokens (`tokens`), bad input (`bad_input`), what
//! is stored across restarts and crashes (`storage`), replicas and their leader (`replicas`),
//! connections and slow clients (`connections`), and database outages (`outages`); the daemon
//! they start is `crate::daemon`'s.

use crate::daemon::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

mod api;
mod bad_input;
mod connections;
mod outages;
mod replicas;
mod storage;
mod tokens;
