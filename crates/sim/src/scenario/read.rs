//! Reading scenario files: TOML parsed with spans, programs parsed in the paper's syntax (inline
//! or from a program file), every value checked, and each mistake reported at its line.

use super::program::{is_valid_name, parse_body, parse_file, Parsed};
use super::*;
use serde::de::Error as _;
use serde::Deserializer;
use std::ops::Range;
use toml::Spanned;

impl Scenario {
    /// Reads and checks the scenario file at `path`.
    pub fn read(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::io(path, e))?;
        Scenario::from_toml(&text, path)
    }

    /// Parses and checks scenario `text`; `origin` is its file, named in errors and the folder
    /// `program_file`s are read from (the only file I/O).
    pub fn from_toml(text: &str, origin: &Path) -> Result<Scenario, ScenarioError> {
        let raw: RawScenario = parse_toml(text, origin)?;
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
                at: at.unwrap_or_else(|| Location::file(origin)),
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
            ..Location::in_text(self.text, self.origin, Some(span))
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

/// Parses scenario `text`, the whole of file `origin`; a mistake is reported at its line and
/// column.
pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    origin: &Path,
) -> Result<T, ConfigError> {
    toml::from_str(text)
        .map_err(|error| ConfigError::toml_in(text, origin, error.span(), error.message()))
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
    let line = Location::in_text(text, Path::new(""), Some(span)).line?;
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
pub(super) fn duration<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<f64>, D::Error> {
    limits::DURATION.read(deserializer).map(Some)
}

/// `window`.
pub(super) fn window<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    limits::WINDOW.read(deserializer)
}

/// `bottleneck_threshold`.
pub(super) fn threshold<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    limits::THRESHOLD.read(deserializer)
}

/// `grace`.
pub(super) fn grace<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    limits::GRACE.read(deserializer)
}

/// `quantum`.
pub(super) fn quantum<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    limits::QUANTUM.read(deserializer)
}

/// `priority_interval`.
pub(super) fn priority_interval<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<f64, D::Error> {
    limits::PRIORITY_INTERVAL.read(deserializer)
}

/// A process's `start`.
fn start<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    limits::START.read(deserializer)
}

/// `runs`: from 1 to [`MAX_RUNS`].
pub(super) fn runs<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
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
