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

mod limits;
mod program;

pub use limits::{
    check_runs, is_time_sliced, LimitError, MAX_EVENTS_PER_RUN, MAX_RUNS, MAX_TIME_S, MIN_STEP_S,
};
pub use program::{
    parse_program_file, Block, Dist, Program, ProgramError, ProgramErrorKind, Request,
};

pub use fairshare_core::policy::bottleneck::GapForm;
use program::{is_valid_name, parse_body, parse_file, Parsed};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use thiserror::Error;
use toml::Spanned;

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
    #[serde(deserialize_with = "runs")]
    pub runs: u32,
    /// The simulated time, seconds; `None` runs until every program ends.
    #[serde(deserialize_with = "duration")]
    pub duration: Option<f64>,
    /// The accounting window T, seconds.
    #[serde(deserialize_with = "window")]
    pub window: f64,
    /// The fraction of the window a resource must be busy to be a bottleneck.
    #[serde(deserialize_with = "threshold")]
    pub bottleneck_threshold: f64,
    /// The grace period G of a suspension, seconds.
    #[serde(deserialize_with = "grace")]
    pub grace: f64,
    /// The quantum Q of time-sliced (`_CS`) resources, seconds.
    #[serde(deserialize_with = "quantum")]
    pub quantum: f64,
    /// How often priorities are recomputed, seconds; 0 at every dispatch decision.
    #[serde(deserialize_with = "priority_interval")]
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
        use fairshare_core::policy::{Policy, PolicyKind};
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

/// Where something is in a file: `file[:line[:column]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file.
    pub file: PathBuf,
    /// The line, from 1, if known.
    pub line: Option<usize>,
    /// The column, from 1, if known.
    pub column: Option<usize>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        Ok(())
    }
}

/// Everything that can be wrong with a scenario.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The scenario file could not be read.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The TOML is malformed, has an unknown key, or a value out of range.
    #[error("{at}: {message}")]
    Toml {
        /// Where.
        at: Location,
        /// What was expected.
        message: String,
    },
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

impl Scenario {
    /// Reads and checks the scenario file at `path`.
    pub fn read(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|error| ScenarioError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        Scenario::from_toml(&text, path)
    }

    /// Parses and checks scenario `text`; `origin` is its file, named in errors and the folder
    /// `program_file`s are read from (the only file I/O).
    pub fn from_toml(text: &str, origin: &Path) -> Result<Scenario, ScenarioError> {
        let raw: RawScenario = toml::from_str(text).map_err(|error| ScenarioError::Toml {
            at: locate(text, origin, error.span()),
            message: one_line(error.message()),
        })?;
        if raw.process.is_empty() {
            return Err(ScenarioError::NoProcesses {
                file: origin.to_path_buf(),
            });
        }
        let loader = Loader { text, origin };
        let mut processes = Vec::with_capacity(raw.process.len());
        let mut named = Vec::with_capacity(raw.process.len());
        let mut uses = Vec::new();
        for process in raw.process {
            named.push(loader.at(process.name.span()));
            let (spec, used) = loader.process(process, &processes)?;
            processes.push(spec);
            uses.extend(used);
        }
        let scenario = Scenario {
            simulation: raw.simulation,
            resources: loader.resources(raw.resource, uses)?,
            processes,
        };
        scenario.check().map_err(|error| {
            let process = match &error {
                LimitError::TooLong { process, .. } | LimitError::TooManyEvents { process, .. } => {
                    scenario.processes.iter().position(|p| &p.name == process)
                }
                LimitError::Setting { .. } => None,
            };
            let at = process.and_then(|i| named.get(i).cloned());
            ScenarioError::Limit {
                at: at.unwrap_or_else(|| locate(text, origin, None)),
                error,
            }
        })?;
        Ok(scenario)
    }
}

/// The file as written, before the programs are parsed.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    #[serde(default)]
    simulation: Simulation,
    #[serde(default)]
    resource: Vec<RawResource>,
    #[serde(default)]
    process: Vec<RawProcess>,
}

/// A `[[resource]]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResource {
    #[serde(deserialize_with = "resource_name")]
    name: Spanned<String>,
}

/// A `[[process]]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProcess {
    #[serde(deserialize_with = "process_name")]
    name: Spanned<String>,
    #[serde(default, deserialize_with = "positive_option")]
    entitlement: Option<f64>,
    #[serde(default, deserialize_with = "start")]
    start: f64,
    program: Option<Spanned<String>>,
    program_file: Option<Spanned<String>>,
}

/// A resource a process uses, and where it first does.
struct Use {
    resource: String,
    process: String,
    at: Location,
}

/// Where a process's program lines are.
enum ProgramAt {
    /// In the scenario file, program line 1 at `first` if that can be told.
    Inline { file: PathBuf, first: Option<usize> },
    /// In a program file, line for line.
    File(PathBuf),
}

impl ProgramAt {
    /// The location of program line `line`.
    fn locate(&self, line: usize) -> Location {
        let (file, line) = match self {
            ProgramAt::Inline { file, first } => (file, first.map(|first| first + line - 1)),
            ProgramAt::File(file) => (file, Some(line)),
        };
        Location {
            file: file.clone(),
            line,
            column: None,
        }
    }
}

/// Turns the raw tables into a [`Scenario`], with the text for error locations.
struct Loader<'a> {
    text: &'a str,
    origin: &'a Path,
}

impl Loader<'_> {
    /// Where a TOML value starts.
    fn at(&self, span: Range<usize>) -> Location {
        Location {
            column: None,
            ..locate(self.text, self.origin, Some(span))
        }
    }

    /// Builds one process, and lists the resources it uses.
    fn process(
        &self,
        raw: RawProcess,
        earlier: &[ProcessSpec],
    ) -> Result<(ProcessSpec, Vec<Use>), ScenarioError> {
        let at = self.at(raw.name.span());
        let name = raw.name.into_inner();
        if earlier.iter().any(|process| process.name == name) {
            return Err(ScenarioError::DuplicateProcess { at, process: name });
        }
        let (priority, parsed, program_at) = match (raw.program, raw.program_file) {
            (Some(program), None) => {
                let (parsed, program_at) = self.inline(&name, &program)?;
                (None, parsed, program_at)
            }
            (None, Some(file)) => {
                let (priority, parsed, program_at) = self.program_file(&name, &file)?;
                (Some(priority), parsed, program_at)
            }
            (None, None) => return Err(ScenarioError::NoProgram { at, process: name }),
            (Some(_), Some(_)) => return Err(ScenarioError::TwoPrograms { at, process: name }),
        };
        let Some(entitlement) = raw.entitlement.or(priority) else {
            return Err(ScenarioError::NoEntitlement { at, process: name });
        };
        let uses = parsed
            .uses
            .into_iter()
            .map(|(resource, line)| Use {
                resource,
                process: name.clone(),
                at: program_at.locate(line),
            })
            .collect();
        let spec = ProcessSpec {
            name,
            entitlement,
            start: raw.start,
            program: parsed.program,
        };
        Ok((spec, uses))
    }

    /// Parses a program written in the scenario file.
    fn inline(
        &self,
        process: &str,
        program: &Spanned<String>,
    ) -> Result<(Parsed, ProgramAt), ScenarioError> {
        let program_at = ProgramAt::Inline {
            file: self.origin.to_path_buf(),
            first: first_program_line(self.text, program),
        };
        let parsed = parse_body(program.get_ref()).map_err(|error| ScenarioError::Program {
            at: program_at.locate(error.line),
            process: process.to_owned(),
            error: Box::new(error),
        })?;
        Ok((parsed, program_at))
    }

    /// Reads and parses a program file in the paper's layout.
    fn program_file(
        &self,
        process: &str,
        file: &Spanned<String>,
    ) -> Result<(f64, Parsed, ProgramAt), ScenarioError> {
        let folder = self.origin.parent().unwrap_or(Path::new(""));
        let path = folder.join(file.get_ref());
        let text =
            std::fs::read_to_string(&path).map_err(|error| ScenarioError::ProgramFileIo {
                at: self.at(file.span()),
                process: process.to_owned(),
                path: path.clone(),
                error,
            })?;
        let program_at = ProgramAt::File(path);
        let (priority, parsed) = parse_file(&text).map_err(|error| ScenarioError::ProgramFile {
            at: program_at.locate(error.line),
            process: process.to_owned(),
            error: Box::new(error),
        })?;
        Ok((priority, parsed, program_at))
    }

    /// The lane order: the declared resources, or the used ones in order of first use.
    fn resources(
        &self,
        declared: Vec<RawResource>,
        uses: Vec<Use>,
    ) -> Result<Vec<String>, ScenarioError> {
        let mut names: Vec<String> = Vec::new();
        if declared.is_empty() {
            for used in uses {
                if !names.contains(&used.resource) {
                    names.push(used.resource);
                }
            }
            return Ok(names);
        }
        for resource in declared {
            let at = self.at(resource.name.span());
            let name = resource.name.into_inner();
            if names.contains(&name) {
                return Err(ScenarioError::DuplicateResource { at, resource: name });
            }
            names.push(name);
        }
        match uses
            .into_iter()
            .find(|used| !names.contains(&used.resource))
        {
            Some(used) => Err(ScenarioError::UndeclaredResource {
                at: used.at,
                process: used.process,
                resource: used.resource,
            }),
            None => Ok(names),
        }
    }
}

/// The location of byte `span.start` of `text`, or just the file without a span.
fn locate(text: &str, file: &Path, span: Option<Range<usize>>) -> Location {
    let before = span.and_then(|span| text.get(..span.start));
    Location {
        file: file.to_path_buf(),
        line: before.map(|before| before.matches('\n').count() + 1),
        column: before.map(|before| before.rsplit('\n').next().unwrap_or("").chars().count() + 1),
    }
}

/// A possibly multi-line message on one line.
fn one_line(message: &str) -> String {
    let parts: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    parts.join(": ")
}

/// The scenario-file line of a TOML program string's first line, when its lines map one to
/// one (no escaped newlines or line-ending backslashes).
fn first_program_line(text: &str, program: &Spanned<String>) -> Option<usize> {
    let span = program.span();
    let literal = text.get(span.clone())?;
    let trimmed = ["\"\"\"\n", "\"\"\"\r\n", "'''\n", "'''\r\n"]
        .iter()
        .any(|opening| literal.starts_with(opening));
    let newlines = |s: &str| s.matches('\n').count();
    let exact = newlines(literal) == newlines(program.get_ref()) + usize::from(trimmed);
    let line = locate(text, Path::new(""), Some(span)).line?;
    exact.then_some(line + usize::from(trimmed))
}

/// Reads a number and checks it is finite and > 0.
fn checked<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    let value = f64::deserialize(deserializer)?;
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(D::Error::custom(format!(
            "expected a number > 0, found {value}"
        )))
    }
}

/// An entitlement: a number > 0, present.
fn positive_option<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    checked(deserializer).map(Some)
}

/// `duration`, present.
fn duration<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    limits::DURATION.read(deserializer).map(Some)
}

/// `window`.
fn window<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    limits::WINDOW.read(deserializer)
}

/// `bottleneck_threshold`.
fn threshold<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    limits::THRESHOLD.read(deserializer)
}

/// `grace`.
fn grace<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    limits::GRACE.read(deserializer)
}

/// `quantum`.
fn quantum<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    limits::QUANTUM.read(deserializer)
}

/// `priority_interval`.
fn priority_interval<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    limits::PRIORITY_INTERVAL.read(deserializer)
}

/// A process's `start`.
fn start<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    limits::START.read(deserializer)
}

/// `runs`: from 1 to [`MAX_RUNS`].
fn runs<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    check_runs(u32::deserialize(deserializer)?).map_err(|e| D::Error::custom(e.to_string()))
}

/// A resource name: `[A-Za-z0-9_.-]+`, not `idle`.
fn resource_name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Spanned<String>, D::Error> {
    let name = Spanned::<String>::deserialize(deserializer)?;
    if is_valid_name(name.get_ref()) && !name.get_ref().eq_ignore_ascii_case("idle") {
        Ok(name)
    } else {
        Err(D::Error::custom(format!(
            "expected a resource name of letters, digits, `_`, `.` or `-`, other than idle, found \"{}\"",
            name.get_ref()
        )))
    }
}

/// A process name: not empty.
fn process_name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Spanned<String>, D::Error> {
    let name = Spanned::<String>::deserialize(deserializer)?;
    if name.get_ref().trim().is_empty() {
        Err(D::Error::custom(
            "expected a process name, found a blank one",
        ))
    } else {
        Ok(name)
    }
}
