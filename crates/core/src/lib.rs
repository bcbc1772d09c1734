//! # fairshare-core
//!
//! The fairness core of fairshare: who goes next, and how much each client gets, when many
//! clients share several resources and the past matters. It is pure — no I/O, no clock, no
//! randomness: time comes in as an argument — so the same code runs in a simulator, a daemon
//! and a node agent. This page is a tour; `use fairshare_core::prelude::*` brings in what it
//! uses.
//!
//! ## 1. Resources and one-shot allocation
//!
//! A [`ResourceSet`](model::ResourceSet) names the resources and their capacities; allocators
//! take demands in its units. [`fill_tasks`](alloc::tasks::fill_tasks) places indivisible
//! tasks one at a time (progressive filling, SDRF's Algorithm 1);
//! [`water_fill`](alloc::divisible::water_fill) solves divisible demands exactly.
//!
//! ```
//! use fairshare_core::prelude::*;
//!
//! // The textbook DRF case: ⟨9 CPU, 18 GB⟩, A runs ⟨1, 4⟩ tasks, B runs ⟨3, 1⟩ tasks.
//! let capacity = ResourceSet::new([("cpu", 9.0), ("mem", 18.0)])?;
//! let clients = [
//!     TaskClient::new(vec![1.0, 4.0]),
//!     TaskClient::new(vec![3.0, 1.0]),
//! ];
//! let placed = fill_tasks(&Policy::Drf, &capacity, &clients, FillRule::HeadOfLine)?;
//! assert_eq!(placed.tasks, vec![3, 2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## 2. Policies, by name
//!
//! Every policy is registered once in [`policy::registry`] — name, parameters, one-line doc —
//! and written the same way everywhere: `drf`, `asset`, `sdrf:delta=0.999999,form=max-of-sums`.
//! A [`PolicySpec`](policy::PolicySpec) is what a parsed name means.
//!
//! ```
//! use fairshare_core::policy::{registry, Engine, PolicySpec};
//!
//! let spec: PolicySpec = "sdrf:delta=0.9999".parse()?;
//! assert!((spec.tau() - 9999.5).abs() < 0.01); // δ per second becomes a time constant
//! println!("{}", registry::help(Engine::Replay)); // what --help lists
//! # Ok::<(), fairshare_core::policy::PolicyError>(())
//! ```
//!
//! ## 3. A scheduler's queue that remembers
//!
//! A [`Ranker`](rank::Ranker) keeps the waiting clients in the order to serve them. Tell it
//! when time moves and what each client holds; ask who is first. The SDRF ranker keeps the
//! decaying commitments and the kinetic [`livetree`](rank::livetree) behind that interface.
//!
//! ```
//! use fairshare_core::prelude::*;
//!
//! let shares = Share::weighted(&[1.0, 1.0])?; // or Share::equal(2)
//! let mut queue = PolicySpec::parse_for("sdrf:delta=0.999", fairshare_core::policy::Engine::Replay)?
//!     .ranker(1, &shares, None)
//!     .expect("sdrf ranks clients");
//! queue.update(0, &[0.9], None)?; // client 0 holds 90 % for ten minutes
//! queue.advance(Time::from_secs_f64(600.0))?;
//! queue.update(0, &[0.0], Some(Head::new(Time::from_secs_f64(600.0), 1)))?;
//! queue.update(1, &[0.0], Some(Head::new(Time::from_secs_f64(600.0), 2)))?;
//! assert_eq!(queue.first(), Some(1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## 4. The folders: account, rank, apply
//!
//! Every mechanism takes the same three steps, and the modules are laid out in that order;
//! each uses only the ones above it in this list.
//!
//! - [`model`] — what the rest shares: [`Time`](model::Time) (integer microseconds), tasks and
//!   job requests, the machine catalogue, the account tree, a reader's counts ([`choice`]: the
//!   named options every front end offers; [`config`]: the one error of every TOML reader).
//! - [`usage`] — **account**: what a job is charged ([`usage::metric`]: CPU time, the
//!   Processor Equivalents of [`usage::penalty`], dominant share, TRES billing), how the past
//!   is forgotten (one [`Decay`](usage::decay::Decay)), every client's decayed usage
//!   ([`usage::ledger`]) and the bottleneck mechanism's exact windows ([`usage::window`]).
//! - [`priority`] — one number per client: DRF, asset fairness, SDRF's two forms, the
//!   bottleneck gaps and the production fairshare factors over a share tree
//!   ([`priority::fairshare`]).
//! - [`rank`] — **rank**: the rankers that keep waiting clients in order while priorities
//!   drift, with the kinetic [`livetree`](rank::livetree) behind SDRF.
//! - [`alloc`] — **apply**: water-filling, task filling, bottleneck-aware allocation (BAA).
//! - [`policy`] — policies by name: the [`registry`](policy::registry) and the
//!   [`PolicySpec`](policy::PolicySpec) that builds a ranker, a priority or an allocator.
//! - [`instance`] — the one-shot allocation files `fairshare allocate` reads.
//! - [`heaviness`] — the runtime side: a workload's heaviness over its consumption, and the
//!   knobs (CPU, I/O, memory, network weights) it maps to.
//!
//! `docs/mechanisms.md` in the repository explains each mechanism and the section numbers the
//! documentation cites.
#![warn(missing_docs)]

pub mod alloc;
pub mod choice;
pub mod config;
pub mod document;
pub mod error;
pub mod heaviness;
pub mod instance;
pub mod model;
pub mod policy;
pub mod priority;
pub mod rank;
pub mod usage;

/// What most embedders need, in one import: `use fairshare_core::prelude::*;`.
pub mod prelude {
    pub use crate::alloc::divisible::{water_fill, DivisibleClient, WaterFill};
    pub use crate::alloc::tasks::{fill_tasks, FillRule, TaskClient, TaskFill};
    pub use crate::model::{ResourceSet, Task, Time};
    pub use crate::policy::PolicySpec;
    pub use crate::priority::{Policy, PriorityForm};
    pub use crate::rank::{
        FifoRanker, Head, RankError, Ranker, SdrfRanker, Share, StatelessRanker,
    };
}
