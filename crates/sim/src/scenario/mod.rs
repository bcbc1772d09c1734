//! Scenario files for the process-level simulator.
//!
//! The paper of Zeldes & Feitelson describes its experiments as a few processes, each running a
//! small program of resource requests (its Figure 1 syntax). A scenario file says which
//! processes run, with what entitlements and programs, over which resources, and how the
//! simulation is set up — in TOML, so that the settings need no parser of their own, while the
//! programs keep the paper's syntax ([`Program`]) and can be copied from it unchanged.
//!
//! ```toml
//! [simulation]          # every key optional
//! runs = 20
//! seed = 0
//!
//! [[process]]
//! name = "red"
//! entitlement = 33
//! program = """
//! loop 1
//! CPU_CS 10 0 NORM
//! """
//!
//! [[process]]
//! name = "green"
//! program_file = "fig01-program.prog"   # the paper's layout; its `# Priority:` is the entitlement
//! ```
//!
//! Loading checks everything the engine relies on, and a mistake is reported as
//! `file:line[:column]: what was expected`; a program line inside the TOML is reported at its
//! line in the scenario file. An `entitlement` in the TOML overrides a program file's
//! `# Priority:`, so one program file can serve several scenarios with other weights.

mod check;
mod limits;
mod program;
mod read;
pub(crate) use read::parse_toml;

pub use limits::{
    check_runs, is_time_sliced, LimitError, MAX_EVENTS_PER_RUN, MAX_RUNS, MAX_TIME_S, MIN_STEP_S,
};
pub use program::{
    parse_program_file, Block, Dist, Program, ProgramError, ProgramErrorKind, Request,
};

use fairshare_core::config::{ConfigError, Location};
pub use fairshare_core::priority::bottleneck::GapForm;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A loaded scenario: the simulation settings, the resources in lane order, the processes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// How to run the simulation.
    pub simulation: Simulation,
    /// The resources, in lane order: as declared, or in order of first use in the programs.
    pub resources: Vec<String>,
    /// The processes, in file order (their index is their id).
    pub processes: Vec<ProcessSpec>,
}

/// The `[simulation]` table: how to run a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Simulation {
    /// The seed of the first run.
    pub seed: u64,
    /// The number of independent runs, seeded `seed`, `seed + 1`, …
    #[serde(deserialize_with = "read::runs")]
    pub runs: u32,
    /// The simulated time, seconds; `None` runs until every program ends.
    #[serde(deserialize_with = "read::duration")]
    pub duration: Option<f64>,
    /// The accounting window T, seconds.
    #[serde(deserialize_with = "read::window")]
    pub window: f64,
    /// The fraction of the window a resource must be busy to be a bottleneck.
    #[serde(deserialize_with = "read::threshold")]
    pub bottleneck_threshold: f64,
    /// The grace period G of a suspension, seconds.
    #[serde(deserialize_with = "read::grace")]
    pub grace: f64,
    /// The quantum Q of time-sliced (`_CS`) resources, seconds.
    #[serde(deserialize_with = "read::quantum")]
    pub quantum: f64,
    /// How often priorities are recomputed, seconds; 0 at every dispatch decision.
    #[serde(deserialize_with = "read::priority_interval")]
    pub priority_interval: f64,
    /// The policy that orders the queues.
    pub policy: ProcessPolicy,
    /// How a client's gap becomes its priority.
    pub priority_form: GapForm,
    /// How allocation is accounted.
    pub accounting: Accounting,
}

impl Default for Simulation {
    fn default() -> Simulation {
        Simulation {
            seed: 1,
            runs: 1,
            duration: None,
            window: 3.0,
            bottleneck_threshold: 0.9,
            grace: 1.0,
            quantum: 0.1,
            priority_interval: 0.0,
            policy: ProcessPolicy::Bottleneck,
            priority_form: GapForm::Normalised,
            accounting: Accounting::Global,
        }
    }
}

/// The policy that orders every resource queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProcessPolicy {
    /// One global priority from the bottleneck resources (Zeldes & Feitelson).
    Bottleneck,
    /// Each resource ranks clients by their gap on that resource alone.
    PerResource,
    /// Dominant resource fairness.
    Drf,
    /// First come, first served.
    Fifo,
}

impl ProcessPolicy {
    /// Every policy as written in a scenario or on the command line.
    pub const ALL: [ProcessPolicy; 4] = [
        ProcessPolicy::Bottleneck,
        ProcessPolicy::PerResource,
        ProcessPolicy::Drf,
        ProcessPolicy::Fifo,
    ];

    /// The process policy a registered policy means, if it runs in the process engine.
    pub fn of(spec: &fairshare_core::policy::PolicySpec) -> Option<ProcessPolicy> {
        use fairshare_core::policy::PolicyKind;
        use fairshare_core::priority::Policy;
        match spec.kind {
            PolicyKind::Bottleneck => Some(ProcessPolicy::Bottleneck),
            PolicyKind::PerResource => Some(ProcessPolicy::PerResource),
            PolicyKind::Stateless(Policy::Drf) => Some(ProcessPolicy::Drf),
            PolicyKind::Fifo => Some(ProcessPolicy::Fifo),
            _ => None,
        }
    }

    /// The policy's name as written in a scenario (its name in the policy registry).
    pub fn name(self) -> &'static str {
        match self {
            ProcessPolicy::Bottleneck => "bottleneck",
            ProcessPolicy::PerResource => "per-resource",
            ProcessPolicy::Drf => "drf",
            ProcessPolicy::Fifo => "fifo",
        }
    }
}

impl fmt::Display for ProcessPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How allocation is accounted (docs/mechanisms.md, bottleneck §2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Accounting {
    /// One allocation per client, growing while it is active anywhere.
    Global,
    /// One allocation per client and resource, growing while it uses that resource (RSVT-like).
    PerResource,
}

/// One `[[process]]`: a client and its program.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProcessSpec {
    /// The process's name, unique in the scenario.
    pub name: String,
    /// The relative entitlement, > 0; renormalised over the active processes.
    pub entitlement: f64,
    /// When the process starts, seconds.
    pub start: f64,
    /// What the process does.
    pub program: Program,
}

/// Everything that can be wrong with a scenario.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The scenario file could not be read, or its TOML is malformed, has an unknown key, or a
    /// value out of range: what every configuration reader reports.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A line of a program written in the scenario file.
    #[error("{at}: process \"{process}\": program {error}")]
    Program {
        /// Where, in the scenario file.
        at: Location,
        /// The process.
        process: String,
        /// The error, with the line within the program (boxed: it is the largest).
        error: Box<ProgramError>,
    },
    /// A line of a process's `program_file`.
    #[error("{at}: process \"{process}\": {}", error.kind)]
    ProgramFile {
        /// Where, in the program file.
        at: Location,
        /// The process.
        process: String,
        /// The error, with its line in the program file (boxed: it is the largest).
        error: Box<ProgramError>,
    },
    /// A process's `program_file` could not be read.
    #[error("{at}: process \"{process}\": cannot read program_file {}: {error}", path.display())]
    ProgramFileIo {
        /// Where the scenario names the file.
        at: Location,
        /// The process.
        process: String,
        /// The program file, resolved against the scenario's folder.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// A process with neither `program` nor `program_file`.
    #[error("{at}: process \"{process}\": expected `program` or `program_file`")]
    NoProgram {
        /// Where the process is named.
        at: Location,
        /// The process.
        process: String,
    },
    /// A process with both `program` and `program_file`.
    #[error("{at}: process \"{process}\": expected `program` or `program_file`, not both")]
    TwoPrograms {
        /// Where the process is named.
        at: Location,
        /// The process.
        process: String,
    },
    /// A process with an inline program and no `entitlement`.
    #[error("{at}: process \"{process}\": expected `entitlement` (a number > 0)")]
    NoEntitlement {
        /// Where the process is named.
        at: Location,
        /// The process.
        process: String,
    },
    /// Two processes with one name.
    #[error("{at}: process \"{process}\": the name is already taken by an earlier process")]
    DuplicateProcess {
        /// Where the second one is named.
        at: Location,
        /// The name.
        process: String,
    },
    /// Two `[[resource]]` tables with one name.
    #[error("{at}: resource \"{resource}\" is declared twice")]
    DuplicateResource {
        /// Where the second one is named.
        at: Location,
        /// The name.
        resource: String,
    },
    /// A program uses a resource that the `[[resource]]` tables do not declare.
    #[error(
        "{at}: process \"{process}\" uses resource \"{resource}\", which no [[resource]] declares"
    )]
    UndeclaredResource {
        /// Where the program first uses it.
        at: Location,
        /// The process.
        process: String,
        /// The resource.
        resource: String,
    },
    /// A scenario without processes.
    #[error("{}: expected at least one [[process]]", file.display())]
    NoProcesses {
        /// The scenario file.
        file: PathBuf,
    },
    /// A scenario the simulator would not finish, or whose output would not be bounded.
    #[error("{at}: {error}")]
    Limit {
        /// Where: the process concerned, or the file.
        at: Location,
        /// What exceeds which limit.
        error: LimitError,
    },
}
