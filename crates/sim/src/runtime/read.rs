//! Reading runtime scenario files: TOML parsed with spans, demand series read from CSV files
//! beside the scenario, every value checked, and each mistake reported at its line.

use super::*;
use crate::scenario::parse_toml;
use fairshare_core::config::{one_line, ConfigError, Location};
use fairshare_core::error::Invalid;
use fairshare_core::heaviness::{heaviness, ResourceKind, Workload};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

/// At most this many nodes after `count` is expanded.
pub const MAX_NODES: usize = 100_000;
/// At most this many workloads after `count` is expanded.
pub const MAX_WORKLOADS: usize = 1_000_000;

impl RuntimeScenario {
    /// Whether a scenario text is a runtime scenario (it has `[runtime]` or `[[workload]]`
    /// tables) rather than a process one.
    pub fn is_runtime(text: &str) -> bool {
        toml::from_str::<toml::Table>(text)
            .map(|t| t.contains_key("runtime") || t.contains_key("workload"))
            .unwrap_or(false)
    }

    /// Reads and checks the runtime scenario file at `path`.
    pub fn read(path: &Path) -> Result<RuntimeScenario, ConfigError> {
        let text = read_text(path)?;
        RuntimeScenario::from_toml(&text, path)
    }

    /// Parses and checks scenario `text`; `origin` is its file, named in errors and the folder
    /// `series` files are read from (the only file I/O).
    pub fn from_toml(text: &str, origin: &Path) -> Result<RuntimeScenario, ConfigError> {
        let raw: RawScenario = parse_toml(text, origin)?;
        Loader { text, origin }.load(raw)
    }
}

/// Reads a whole file.
fn read_text(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|e| ConfigError::io(path, e))
}

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    runtime: Spanned<RawRuntime>,
    #[serde(default)]
    heaviness: HeavinessConfig,
    #[serde(default)]
    priority: PriorityConfig,
    #[serde(default)]
    resource: Vec<RawResource>,
    #[serde(default)]
    node: Vec<RawNode>,
    #[serde(default)]
    user: Vec<RawUser>,
    #[serde(default)]
    workload: Vec<RawWorkload>,
}

/// `[runtime]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRuntime {
    duration_s: Spanned<f64>,
    #[serde(default)]
    policy: Option<Spanned<String>>,
    #[serde(default)]
    profile: Option<Spanned<String>>,
    #[serde(default = "yes")]
    baseline: bool,
}

/// `true`, the default of `baseline`.
fn yes() -> bool {
    true
}

/// `[[resource]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResource {
    name: Spanned<String>,
    kind: ResourceKind,
}

/// A table of amounts by resource name, e.g. `{ cpu = 2, mem = 4e9 }`.
type Amounts = Spanned<BTreeMap<String, Spanned<f64>>>;

/// `[[node]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    name: Spanned<String>,
    supply: Amounts,
    #[serde(default)]
    speed: Option<Spanned<f64>>,
    #[serde(default)]
    count: Option<Spanned<i64>>,
}

/// `[[user]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUser {
    name: Spanned<String>,
    #[serde(default)]
    quota: Option<Amounts>,
}

/// `[[workload]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    name: Spanned<String>,
    owner: Spanned<String>,
    node: Spanned<String>,
    #[serde(default)]
    size: Option<Amounts>,
    #[serde(default)]
    demand: Option<Amounts>,
    #[serde(default)]
    steps: Option<Spanned<Vec<RawStep>>>,
    #[serde(default)]
    series: Option<Spanned<String>>,
    #[serde(default)]
    start_s: Option<Spanned<f64>>,
    #[serde(default)]
    stop_s: Option<Spanned<f64>>,
    #[serde(default)]
    count: Option<Spanned<i64>>,
}

/// One of a workload's `steps`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    at_s: Spanned<f64>,
    demand: Amounts,
}

/// Turns the raw tables into a [`RuntimeScenario`], with the text for error locations.
struct Loader<'a> {
    text: &'a str,
    origin: &'a Path,
}

impl Loader<'_> {
    /// Where the value with this span starts.
    fn at(&self, span: Range<usize>) -> Location {
        Location::in_text(self.text, self.origin, Some(span))
    }

    /// A [`ConfigError::Invalid`] at `span`.
    fn invalid(&self, span: Range<usize>, message: impl Into<String>) -> ConfigError {
        ConfigError::invalid(self.at(span), message)
    }

    /// Builds and checks the whole scenario.
    fn load(&self, raw: RawScenario) -> Result<RuntimeScenario, ConfigError> {
        let runtime_span = raw.runtime.span();
        let runtime = raw.runtime.into_inner();
        raw.heaviness
            .check()
            .map_err(|e| self.invalid(runtime_span.clone(), format!("[heaviness]: {e}")))?;
        raw.priority
            .check()
            .map_err(|e| self.invalid(runtime_span.clone(), format!("[priority]: {e}")))?;
        let duration_s = self.positive(&runtime.duration_s, "duration_s")?;
        let ticks = (duration_s / raw.heaviness.update_interval_s).ceil();
        if ticks > f64::from(MAX_TICKS) {
            return Err(self.invalid(
                runtime.duration_s.span(),
                format!(
                    "duration_s / update_interval_s = {ticks} intervals, more than the \
                     {MAX_TICKS} a run may have"
                ),
            ));
        }
        let policy = match &runtime.policy {
            Some(p) => p
                .get_ref()
                .parse()
                .map_err(|e: Invalid| self.invalid(p.span(), e.0))?,
            None => RuntimePolicy::Heaviness,
        };
        let profile = match &runtime.profile {
            Some(p) => p
                .get_ref()
                .parse()
                .map_err(|e: Invalid| self.invalid(p.span(), e.0))?,
            None => KnobProfile::paper(),
        };
        let resources = self.resources(raw.resource, runtime_span.clone())?;
        let nodes = self.nodes(raw.node, &resources, runtime_span.clone())?;
        let mut users = self.users(raw.user, &resources)?;
        let workloads = self.workloads(raw.workload, &resources, &nodes, &mut users)?;
        let scenario = RuntimeScenario {
            name: self.origin.display().to_string(),
            policy,
            duration_s,
            baseline: runtime.baseline,
            profile,
            heaviness: raw.heaviness,
            priority: raw.priority,
            resources,
            nodes,
            users,
            workloads,
        };
        self.first_round(&scenario, runtime_span)?;
        Ok(scenario)
    }

    /// A finite number > 0.
    fn positive(&self, value: &Spanned<f64>, name: &str) -> Result<f64, ConfigError> {
        let v = *value.get_ref();
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(self.invalid(
                value.span(),
                format!("{name} must be a number > 0, found {v}"),
            ))
        }
    }

    /// A finite number ≥ 0.
    fn amount(&self, value: &Spanned<f64>, name: &str) -> Result<f64, ConfigError> {
        let v = *value.get_ref();
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(self.invalid(
                value.span(),
                format!("{name} must be a finite number ≥ 0, found {v}"),
            ))
        }
    }

    /// A name: not blank, not used before.
    fn name(
        &self,
        name: &Spanned<String>,
        what: &str,
        seen: &HashSet<String>,
    ) -> Result<String, ConfigError> {
        let n = name.get_ref().trim();
        if n.is_empty() {
            return Err(self.invalid(
                name.span(),
                format!("expected a {what} name, found a blank one"),
            ));
        }
        if seen.contains(n) {
            return Err(self.invalid(name.span(), format!("{what} \"{n}\" is declared twice")));
        }
        Ok(n.to_string())
    }

    /// The resources, at least one, with distinct names.
    fn resources(
        &self,
        raw: Vec<RawResource>,
        runtime_span: Range<usize>,
    ) -> Result<Vec<Resource>, ConfigError> {
        if raw.is_empty() {
            return Err(self.invalid(
                runtime_span,
                "no [[resource]]: declare each resource with its name and kind \
                 (cpu, memory, disk, network or other)",
            ));
        }
        let mut names: HashSet<String> = HashSet::with_capacity(raw.len());
        let mut resources = Vec::with_capacity(raw.len());
        for r in raw {
            let name = self.name(&r.name, "resource", &names)?;
            names.insert(name.clone());
            resources.push(Resource { name, kind: r.kind });
        }
        Ok(resources)
    }

    /// A vector with one amount per resource from a table by name (absent names are 0).
    fn vector(
        &self,
        table: &Amounts,
        resources: &[Resource],
        field: &str,
    ) -> Result<Vec<f64>, ConfigError> {
        let mut v = vec![0.0; resources.len()];
        for (name, amount) in table.get_ref() {
            let Some(r) = resources.iter().position(|res| &res.name == name) else {
                let known: Vec<&str> = resources.iter().map(|r| r.name.as_str()).collect();
                return Err(self.invalid(
                    amount.span(),
                    format!(
                        "{field}: unknown resource \"{name}\"; the [[resource]]s are {}",
                        known.join(", ")
                    ),
                ));
            };
            v[r] = self.amount(amount, &format!("{field}.{name}"))?;
        }
        Ok(v)
    }

    /// How many copies `count` asks for (1 without it), at most `max` in all.
    fn count(
        &self,
        count: &Option<Spanned<i64>>,
        so_far: usize,
        max: usize,
        what: &str,
    ) -> Result<usize, ConfigError> {
        let Some(c) = count else { return Ok(1) };
        let n = *c.get_ref();
        let room = max.saturating_sub(so_far) as u64;
        if n < 1 || n as u64 > room {
            return Err(self.invalid(
                c.span(),
                format!("count must be at least 1 and keep the scenario within {max} {what}s, found {n}"),
            ));
        }
        Ok(n as usize)
    }

    /// The nodes, `count` expanded to `name-1`, `name-2`, ….
    fn nodes(
        &self,
        raw: Vec<RawNode>,
        resources: &[Resource],
        runtime_span: Range<usize>,
    ) -> Result<Vec<RuntimeNode>, ConfigError> {
        let mut nodes: Vec<RuntimeNode> = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        for n in raw {
            let name = self.name(&n.name, "node", &names)?;
            let supply = self.vector(&n.supply, resources, "supply")?;
            let speed = match &n.speed {
                Some(s) => self.positive(s, "speed")?,
                None => 1.0,
            };
            let count = self.count(&n.count, nodes.len(), MAX_NODES, "node")?;
            for copy in expanded(&name, count) {
                if !names.insert(copy.clone()) {
                    return Err(
                        self.invalid(n.name.span(), format!("node \"{copy}\" is declared twice"))
                    );
                }
                nodes.push(RuntimeNode {
                    name: copy,
                    supply: supply.clone(),
                    speed,
                });
            }
        }
        if nodes.is_empty() {
            return Err(self.invalid(
                runtime_span,
                "no [[node]]: declare at least one node with its supply",
            ));
        }
        for (r, resource) in resources.iter().enumerate() {
            if nodes.iter().all(|n| n.supply[r] == 0.0) {
                return Err(self.invalid(
                    runtime_span.clone(),
                    format!(
                        "no node supplies resource \"{}\": give it in some node's supply or remove it",
                        resource.name
                    ),
                ));
            }
        }
        Ok(nodes)
    }

    /// The declared users.
    fn users(
        &self,
        raw: Vec<RawUser>,
        resources: &[Resource],
    ) -> Result<Vec<RuntimeUser>, ConfigError> {
        let mut users: Vec<RuntimeUser> = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        for u in raw {
            let name = self.name(&u.name, "user", &names)?;
            names.insert(name.clone());
            let quota = u
                .quota
                .as_ref()
                .map(|q| self.vector(q, resources, "quota"))
                .transpose()?;
            users.push(RuntimeUser { name, quota });
        }
        Ok(users)
    }

    /// The workloads; an owner not declared as a `[[user]]` becomes a user without quota.
    fn workloads(
        &self,
        raw: Vec<RawWorkload>,
        resources: &[Resource],
        nodes: &[RuntimeNode],
        users: &mut Vec<RuntimeUser>,
    ) -> Result<Vec<RuntimeWorkload>, ConfigError> {
        let mut workloads: Vec<RuntimeWorkload> = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        for w in raw {
            let name = self.name(&w.name, "workload", &names)?;
            let owner_name = w.owner.get_ref().trim();
            if owner_name.is_empty() {
                return Err(self.invalid(w.owner.span(), "expected an owner, found a blank name"));
            }
            let owner = match users.iter().position(|u| u.name == owner_name) {
                Some(u) => u,
                None => {
                    users.push(RuntimeUser {
                        name: owner_name.to_string(),
                        quota: None,
                    });
                    users.len() - 1
                }
            };
            let node = nodes
                .iter()
                .position(|n| &n.name == w.node.get_ref())
                .ok_or_else(|| {
                    self.invalid(
                        w.node.span(),
                        format!(
                            "unknown node \"{}\"; a workload runs on a declared [[node]]",
                            w.node.get_ref()
                        ),
                    )
                })?;
            let size = match &w.size {
                Some(s) => self.vector(s, resources, "size")?,
                None => vec![0.0; resources.len()],
            };
            let demand = self.demand(&w, resources)?;
            let start_s = match &w.start_s {
                Some(s) => self.amount(s, "start_s")?,
                None => 0.0,
            };
            let stop_s = match &w.stop_s {
                Some(s) => {
                    let stop = self.amount(s, "stop_s")?;
                    if stop <= start_s {
                        return Err(self.invalid(
                            s.span(),
                            format!("stop_s ({stop}) must come after start_s ({start_s})"),
                        ));
                    }
                    Some(stop)
                }
                None => None,
            };
            let count = self.count(&w.count, workloads.len(), MAX_WORKLOADS, "workload")?;
            for copy in expanded(&name, count) {
                if !names.insert(copy.clone()) {
                    return Err(self.invalid(
                        w.name.span(),
                        format!("workload \"{copy}\" is declared twice"),
                    ));
                }
                workloads.push(RuntimeWorkload {
                    name: copy,
                    owner,
                    node,
                    size: size.clone(),
                    demand: demand.clone(),
                    start_s,
                    stop_s,
                });
            }
        }
        Ok(workloads)
    }

    /// A workload's demand: exactly one of `demand`, `steps` or `series`.
    fn demand(&self, w: &RawWorkload, resources: &[Resource]) -> Result<Demand, ConfigError> {
        match (&w.demand, &w.steps, &w.series) {
            (Some(d), None, None) => Ok(Demand {
                steps: vec![(0.0, self.vector(d, resources, "demand")?)],
            }),
            (None, Some(steps), None) => self.steps(steps, resources),
            (None, None, Some(series)) => self.series(series, resources),
            _ => Err(self.invalid(
                w.name.span(),
                format!(
                    "workload \"{}\": give exactly one of demand = {{…}}, steps = [{{ at_s, demand }}, …] \
                     or series = \"file.csv\"",
                    w.name.get_ref()
                ),
            )),
        }
    }

    /// `steps = [{ at_s, demand }, …]`, in increasing time.
    fn steps(
        &self,
        steps: &Spanned<Vec<RawStep>>,
        resources: &[Resource],
    ) -> Result<Demand, ConfigError> {
        if steps.get_ref().is_empty() {
            return Err(self.invalid(
                steps.span(),
                "steps is empty: give at least one { at_s, demand }",
            ));
        }
        let mut out: Vec<(f64, Vec<f64>)> = Vec::with_capacity(steps.get_ref().len());
        for step in steps.get_ref() {
            let at = self.amount(&step.at_s, "at_s")?;
            if out.last().is_some_and(|(previous, _)| at <= *previous) {
                return Err(self.invalid(
                    step.at_s.span(),
                    format!("at_s = {at} does not come after the previous step"),
                ));
            }
            out.push((at, self.vector(&step.demand, resources, "demand")?));
        }
        Ok(Demand { steps: out })
    }

    /// `series = "file.csv"`: a CSV file beside the scenario with a header `time_s,<resource>,…`
    /// and one row per step.
    fn series(
        &self,
        file: &Spanned<String>,
        resources: &[Resource],
    ) -> Result<Demand, ConfigError> {
        let path = self
            .origin
            .parent()
            .unwrap_or(Path::new(""))
            .join(file.get_ref());
        let text = read_text(&path).map_err(|e| self.invalid(file.span(), e.to_string()))?;
        read_series(&text, &path, resources)
    }
}

/// `name` once, or `name-1` … `name-count`.
fn expanded(name: &str, count: usize) -> Vec<String> {
    if count == 1 {
        vec![name.to_string()]
    } else {
        (1..=count).map(|i| format!("{name}-{i}")).collect()
    }
}

/// Parses a demand series: a header `time_s,<resource>,…` (resources not named are 0) and rows
/// of numbers, times increasing.
pub fn read_series(text: &str, path: &Path, resources: &[Resource]) -> Result<Demand, ConfigError> {
    let at = |line: u64, message: String| {
        ConfigError::invalid(Location::line(path, line as usize), message)
    };
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| at(1, format!("unreadable header: {e}")))?
        .clone();
    if header.get(0) != Some("time_s") {
        return Err(at(
            1,
            format!(
                "the header must start with time_s, then resource names; found \"{}\"",
                header.iter().collect::<Vec<_>>().join(",")
            ),
        ));
    }
    let mut columns = Vec::with_capacity(header.len() - 1);
    for name in header.iter().skip(1) {
        let r = resources
            .iter()
            .position(|res| res.name == name)
            .ok_or_else(|| at(1, format!("column \"{name}\" is not a declared resource")))?;
        if columns.contains(&r) {
            return Err(at(1, format!("column \"{name}\" appears twice")));
        }
        columns.push(r);
    }
    let mut steps: Vec<(f64, Vec<f64>)> = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            at(line, one_line(&e.to_string()))
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let number = |i: usize, field: &str| -> Result<f64, ConfigError> {
            let cell = record.get(i).unwrap_or("");
            match cell.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
                _ => Err(at(
                    line,
                    format!("{field}: expected a finite number ≥ 0, found \"{cell}\""),
                )),
            }
        };
        let time = number(0, "time_s")?;
        if steps.last().is_some_and(|(previous, _)| time <= *previous) {
            return Err(at(
                line,
                format!("time_s = {time} does not come after the previous row"),
            ));
        }
        let mut demand = vec![0.0; resources.len()];
        for (i, &r) in columns.iter().enumerate() {
            demand[r] = number(i + 1, &resources[r].name)?;
        }
        steps.push((time, demand));
    }
    if steps.is_empty() {
        return Err(at(1, "the series has no rows".to_string()));
    }
    Ok(Demand { steps })
}

impl Loader<'_> {
    /// Computes one round of heaviness with every workload seen for the first time, so a
    /// scenario the metric cannot handle is refused before it runs.
    fn first_round(&self, s: &RuntimeScenario, span: Range<usize>) -> Result<(), ConfigError> {
        let workloads = s
            .workloads
            .iter()
            .map(|w| Workload {
                owner: w.owner,
                node: w.node,
                size: w.size.clone(),
                usage: None,
            })
            .collect();
        heaviness(&s.cloud(workloads), &s.heaviness)
            .map(|_| ())
            .map_err(|e| self.invalid(span, e.to_string()))
    }
}
