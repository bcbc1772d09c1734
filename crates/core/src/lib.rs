//! # fairshare-core
//!
//! The fairness core of fairshare: who goes next, and how much each client gets, when many
//! clients share several resources and the past matters.
//!
//! Every mechanism is three steps, and the modules follow them:
//!
//! 1. **Account** — [`ledger`] records consumption under a [`decay`] model; [`window`] keeps
//!    the exact sliding windows of the bottleneck mechanism.
//! 2. **Rank** — a [`policy`] turns allocations, commitments and weights into one priority per
//!    client; [`livetree`] keeps clients ordered while SDRF priorities drift with time.
//! 3. **Apply** — [`alloc`] turns priorities into allocations: exact water-filling for divisible
//!    demands, progressive filling for indivisible tasks.
//!
//! Nothing here does I/O, reads a clock or draws random numbers: time comes in as an argument.
//!
//! ```
//! use fairshare_core::alloc::tasks::{fill_tasks, Blocking, TaskClient};
//! use fairshare_core::model::ResourceSet;
//! use fairshare_core::policy::Policy;
//!
//! // The textbook DRF case: ⟨9 CPU, 18 GB⟩, A runs ⟨1, 4⟩ tasks, B runs ⟨3, 1⟩ tasks.
//! let capacity = ResourceSet::new([("cpu", 9.0), ("mem", 18.0)]).unwrap();
//! let clients = [
//!     TaskClient::new(vec![1.0, 4.0]),
//!     TaskClient::new(vec![3.0, 1.0]),
//! ];
//! let placed = fill_tasks(&Policy::Drf, &capacity, &clients, Blocking::HeadOfLine).unwrap();
//! assert_eq!(placed.tasks, vec![3, 2]);
//! ```
#![warn(missing_docs)]

pub mod alloc;
pub mod decay;
pub mod instance;
pub mod ledger;
pub mod livetree;
pub mod model;
pub mod policy;
pub mod rank;
pub mod window;

/// What most embedders need, in one import: `use fairshare_core::prelude::*;`.
pub mod prelude {
    pub use crate::alloc::divisible::{water_fill, DivisibleClient, WaterFill};
    pub use crate::alloc::tasks::{fill_tasks, Blocking, TaskClient, TaskFill};
    pub use crate::model::{ResourceSet, Task, Time};
    pub use crate::policy::{Policy, PolicySpec, PriorityForm};
    pub use crate::rank::{FifoRanker, RankError, Ranker, SdrfRanker, Share, StatelessRanker};
}
