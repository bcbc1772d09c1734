//! The policy registry: every policy fairshare knows, with its name, parameters, one-line doc
//! and constructor — the only place policy names are listed.
//!
//! A policy is written `name` or `name:key=value,key=value` (`sdrf:delta=0.999999,form=max-of-sums`)
//! everywhere: instance files, `--policy`, `--baseline`, scenario overrides. Help texts and
//! error messages are built from [`POLICIES`], so they cannot drift from what the parser takes.
//! Adding a policy is one [`Entry`] here and one file with its priority.

use super::{Policy, PriorityForm};
use crate::alloc::baa::time::{Origin, TimeSettings};
use crate::alloc::baa::{Classification, Solver};
use crate::choice::Choice;
use crate::model::parse_seconds;
use crate::priority::fairshare::FairshareFunction;
use crate::rank::{
    Accounts, Charging, FairshareRanker, FairshareSettings, FifoRanker, Ranker, RankerFactory,
    SdrfRanker, Share, StatelessRanker, UsageRanker,
};
use crate::usage::decay::tau_from_epsilon;
use crate::usage::decay::Decay;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use thiserror::Error;

/// Where a policy can be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// One-shot allocation of an instance file (`fairshare allocate`).
    Allocate,
    /// The cluster engine: trace replays and sweeps (through a [`Ranker`]).
    Replay,
    /// The process engine: scenarios of processes cycling over resource queues.
    Simulate,
    /// The runtime engine: workloads on nodes under the fairness service's knobs.
    Runtime,
}

impl Engine {
    /// The `fairshare` subcommand that runs this engine.
    pub fn command(self) -> &'static str {
        match self {
            Engine::Allocate => "allocate",
            Engine::Replay => "replay and sweep",
            Engine::Simulate => "simulate",
            Engine::Runtime => "simulate's runtime scenarios",
        }
    }
}

/// A parameter a policy takes.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// Its key, as written after the colon.
    pub key: &'static str,
    /// How its value is written, e.g. `D` or `sum-of-maxes|max-of-sums`.
    pub value: &'static str,
    /// What it means, in one line.
    pub about: &'static str,
    /// Lines of help generated from another registry (the fairshare functions under
    /// `function=`), listed under the parameter's own.
    pub more: Option<fn() -> String>,
}

/// What a policy specification means.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PolicyKind {
    /// First come, first served.
    Fifo,
    /// A stateless allocation policy: priorities from holdings and weights alone.
    Stateless(Policy),
    /// Stateful DRF.
    Sdrf {
        /// ε = 1 − δ, when given (δ = 1 − 10⁻⁶ otherwise).
        epsilon: Option<f64>,
        /// How allocation and commitment combine.
        form: PriorityForm,
    },
    /// Bottleneck-based global priorities (the process engine).
    Bottleneck,
    /// Each resource ranks processes by their gap on that resource alone (the process engine).
    PerResource,
    /// Decayed usage over entitlement (classic fairshare).
    DecayedUsage {
        /// Seconds in which usage halves.
        half_life: f64,
    },
    /// A production fairshare factor over job-charged, decayed usage.
    Fairshare(FairshareSettings),
    /// Bottleneck-aware allocation of divisible demands (one-shot allocation).
    Baa(BaaPolicy),
    /// A policy that is only a ranker: its registry entry, by name, builds it.
    Ranked(&'static str),
    /// A ranker from outside the registry: the spec's [`PolicySpec::plugged`] factory builds it.
    Plugged,
    /// What the fairness service does in the runtime engine, by its registry name.
    Runtime(&'static str),
}

/// Builds a policy from its parameters, already split into key and value; the error says
/// which parameter is wrong and what was expected.
pub type BuildFn = fn(&[(&str, &str)]) -> Result<PolicyKind, String>;

/// Builds a ranker for clients with these shares over this many resources.
pub type RankerFn = fn(usize, &[Share]) -> Box<dyn Ranker>;

/// One registered policy.
pub struct Entry {
    /// Its name.
    pub name: &'static str,
    /// Other names it is known by.
    pub aliases: &'static [&'static str],
    /// The parameters it takes.
    pub params: &'static [Param],
    /// What it does, in one line.
    pub about: &'static str,
    /// Where it can be used.
    pub engines: &'static [Engine],
    /// Builds it from its parameters.
    build: BuildFn,
    /// For a policy that is only a ranker ([`PolicyKind::Ranked`]): its constructor.
    ranker: Option<RankerFn>,
}

/// Decayed usage's half-life when none is given: a week, Slurm's default.
pub const DEFAULT_HALF_LIFE_S: f64 = 604_800.0;

/// The SDRF discount ε when none is given: δ = 1 − 10⁻⁶, the paper's best.
pub const DEFAULT_SDRF_EPSILON: f64 = 1e-6;

/// Every policy, in the order help texts list them.
pub const POLICIES: &[Entry] = &[
    Entry {
        name: "fifo",
        aliases: &[],
        params: &[],
        about: "first come, first served across all users",
        engines: &[Engine::Replay, Engine::Simulate],
        build: |_| Ok(PolicyKind::Fifo),
        ranker: None,
    },
    Entry {
        name: "drf",
        aliases: &[],
        params: &[],
        about: "Dominant Resource Fairness: equalise dominant shares",
        engines: &[Engine::Allocate, Engine::Replay, Engine::Simulate],
        build: |_| Ok(PolicyKind::Stateless(Policy::Drf)),
        ranker: None,
    },
    Entry {
        name: "weighted-drf",
        aliases: &["wdrf"],
        params: &[],
        about: "weighted DRF: equalise dominant share divided by weight (replays take weights from --shares)",
        engines: &[Engine::Allocate, Engine::Replay],
        build: |_| Ok(PolicyKind::Stateless(Policy::WeightedDrf)),
        ranker: None,
    },
    Entry {
        name: "asset",
        aliases: &[],
        params: &[],
        about: "asset fairness: equalise the sum of shares over all resources",
        engines: &[Engine::Allocate, Engine::Replay],
        build: |_| Ok(PolicyKind::Stateless(Policy::Asset)),
        ranker: None,
    },
    Entry {
        name: "sdrf",
        aliases: &[],
        params: &[
            Param {
                key: "delta",
                value: "D",
                about: "discount factor δ per second (default 0.999999)",
                more: None,
            },
            Param {
                key: "epsilon",
                value: "E",
                about: "ε = 1 − δ, for δ too close to 1 to write",
                more: None,
            },
            Param {
                key: "form",
                value: "sum-of-maxes|max-of-sums",
                about: "Eq. 5's water level (default) or Algorithm 1 as printed",
                more: None,
            },
        ],
        about: "Stateful DRF: DRF plus decaying commitments for past over-use",
        engines: &[Engine::Allocate, Engine::Replay],
        build: build_sdrf,
        ranker: None,
    },
    Entry {
        name: "smallest-first",
        aliases: &[],
        params: &[],
        about: "FIFO by size: the user whose next task is smallest goes first",
        engines: &[Engine::Replay],
        build: |_| Ok(PolicyKind::Ranked("smallest-first")),
        ranker: Some(crate::rank::smallest::smallest_first),
    },
    Entry {
        name: "decayed-usage",
        aliases: &[],
        params: &[Param {
            key: "half-life",
            value: "D",
            about: "usage halves every D, seconds or 7d, 12h… (default 604800, a week, as Slurm)",
            more: None,
        }],
        about: "classic fairshare: the user with the least recent usage per entitlement goes first",
        engines: &[Engine::Replay],
        build: build_decayed_usage,
        ranker: None,
    },
    Entry {
        name: "fairshare",
        aliases: &[],
        params: FAIRSHARE_PARAMS,
        about: "a production fairshare factor (Slurm Fair Tree by default) over decayed, job-charged usage and the account tree of --shares",
        engines: &[Engine::Replay],
        build: |params| build_fairshare(FairshareSettings::default(), params),
        ranker: None,
    },
    Entry {
        name: "kueue-afs",
        aliases: &[],
        params: KUEUE_PARAMS,
        about: "Kueue-style admission fair sharing: least decayed usage per share first, each start charged 300 s of its usage at once",
        engines: &[Engine::Replay],
        build: |params| {
            let kueue = FairshareSettings {
                function: FairshareFunction::METACENTRUM,
                entry_penalty_s: 300.0,
                ..FairshareSettings::default()
            };
            build_fairshare(kueue, params)
        },
        ranker: None,
    },
    Entry {
        name: "baa",
        aliases: &[],
        params: STATIC_BAA_PARAMS,
        about: "bottleneck-aware allocation (Wang & Varman): equal bottleneck shares within each bottleneck set, set levels maximising utilisation without envy (divisible mode)",
        engines: &[Engine::Allocate],
        build: |params| build_baa(None, params),
        ranker: None,
    },
    Entry {
        name: "baa-time",
        aliases: &[],
        params: BAA_PARAMS,
        about: "BAA with the time constraint (seed 002): equal cumulative bottleneck shares within a set; with no history, one epoch (divisible mode)",
        engines: &[Engine::Allocate],
        build: |params| build_baa(Some(TimeSettings::default()), params),
        ranker: None,
    },
    Entry {
        name: "bottleneck",
        aliases: &[],
        params: &[],
        about: "one global priority per process from its bottleneck resources",
        engines: &[Engine::Simulate],
        build: |_| Ok(PolicyKind::Bottleneck),
        ranker: None,
    },
    Entry {
        name: "per-resource",
        aliases: &[],
        params: &[],
        about: "each resource ranks processes by their gap on that resource alone",
        engines: &[Engine::Simulate],
        build: |_| Ok(PolicyKind::PerResource),
        ranker: None,
    },
    Entry {
        name: "off",
        aliases: &[],
        params: &[],
        about: "no fairness service: every workload's weight equal, no memory protection",
        engines: &[Engine::Runtime],
        build: |_| Ok(PolicyKind::Runtime("off")),
        ranker: None,
    },
    Entry {
        name: "heaviness",
        aliases: &[],
        params: &[],
        about: "the fairness service: heaviness with the scenario's metric sets every workload's knobs",
        engines: &[Engine::Runtime],
        build: |_| Ok(PolicyKind::Runtime("heaviness")),
        ranker: None,
    },
    Entry {
        name: "drf-heaviness",
        aliases: &[],
        params: &[],
        about: "the fairness service with DRF as the heaviness function",
        engines: &[Engine::Runtime],
        build: |_| Ok(PolicyKind::Runtime("drf-heaviness")),
        ranker: None,
    },
    Entry {
        name: "asset-heaviness",
        aliases: &[],
        params: &[],
        about: "the fairness service with asset fairness as the heaviness function",
        engines: &[Engine::Runtime],
        build: |_| Ok(PolicyKind::Runtime("asset-heaviness")),
        ranker: None,
    },
];

/// BAA as an instance file names it: static, or with the time constraint's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaaPolicy {
    /// How users are put into sets.
    pub classification: Classification,
    /// How the levels are chosen.
    pub solver: Solver,
    /// The time constraint's settings (`None`: static BAA).
    pub time: Option<TimeSettings>,
}

/// The parameters of the BAA policies (static BAA takes the first two).
const BAA_PARAMS: &[Param] = &[
    Param {
        key: "solver",
        value: "exact|greedy",
        about: "the levels' optimum (default) or the paper's greedy raise",
        more: None,
    },
    Param {
        key: "classification",
        value: "capacity|paper",
        about: "bottleneck by load on capacity (default) or the seed's example rule (memory part >= 0.3 is the CPU set)",
        more: None,
    },
    Param {
        key: "origin",
        value: "arrival|global",
        about: "where a newcomer's cumulative count starts (default arrival)",
        more: None,
    },
    Param {
        key: "catch-up",
        value: "G",
        about: "the most a member may get in one epoch, in levels (default 2; inf: no cap)",
        more: None,
    },
];

/// The parameters of static BAA.
const STATIC_BAA_PARAMS: &[Param] = &[BAA_PARAMS[0], BAA_PARAMS[1]];

/// BAA's parameters over `time` (`None`: static BAA).
fn build_baa(time: Option<TimeSettings>, params: &[(&str, &str)]) -> Result<PolicyKind, String> {
    let mut baa = BaaPolicy {
        classification: Classification::Capacity,
        solver: Solver::Exact,
        time,
    };
    for &(key, value) in params {
        match (key, value) {
            ("solver", "exact") => baa.solver = Solver::Exact,
            ("solver", "greedy") => baa.solver = Solver::Greedy,
            ("classification", "capacity") => baa.classification = Classification::Capacity,
            ("classification", "paper") => {
                baa.classification = Classification::PaperExample { theta: 0.3 }
            }
            ("origin", "arrival" | "global") => {
                if let Some(t) = baa.time.as_mut() {
                    t.origin = if value == "global" {
                        Origin::Global
                    } else {
                        Origin::Arrival
                    };
                }
            }
            ("catch-up", _) => {
                let g = value
                    .parse::<f64>()
                    .ok()
                    .filter(|g| *g >= 1.0)
                    .ok_or_else(|| {
                        format!("catch-up: expected a number >= 1 (or inf), found {value:?}")
                    })?;
                if let Some(t) = baa.time.as_mut() {
                    t.catch_up = g;
                }
            }
            _ => {
                let expected = BAA_PARAMS
                    .iter()
                    .find(|p| p.key == key)
                    .map_or("", |p| p.value);
                return Err(format!("{key}: expected {expected}, found {value:?}"));
            }
        }
    }
    if let Some(t) = baa.time.as_mut() {
        t.solver = baa.solver;
    }
    Ok(PolicyKind::Baa(baa))
}

/// The parameters of the fairshare policies.
const FAIRSHARE_PARAMS: &[Param] = &[
    Param {
        key: "function",
        value: "NAME[:KEY=N]",
        about: "the factor that orders users, one of the fairshare functions below (default fair-tree; metacentrum brings MetaCentrum's 72-h halving, decay=step:72h:0.5, unless decay= is given)",
        more: Some(FairshareFunction::help),
    },
    Param {
        key: "usage",
        value: crate::usage::metric::WRITTEN,
        about: "what a job is charged per second it runs (default cpu; pe: the cheapest Processor Equivalent × SPEC)",
        more: None,
    },
    Param {
        key: "decay",
        value: "half-life:D|step:D:F|reset:D",
        about: "how usage fades, D seconds or 7d, 12h… (default half-life:604800, Slurm's week)",
        more: None,
    },
    Param {
        key: "charge",
        value: "running|finish",
        about: "charge jobs as they run (default, Slurm) or when they finish (Alea)",
        more: None,
    },
    Param {
        key: "refresh",
        value: "D",
        about: "time between recomputations of the factors, seconds or 5m… (default 300, Slurm's PriorityCalcPeriod; 0: every decision)",
        more: None,
    },
    Param {
        key: "entry-penalty",
        value: "D",
        about: "this long of a job's usage charged at once when it starts, seconds or 5m… (Kueue's entry penalty)",
        more: None,
    },
];

/// The parameters of the Kueue-style policy: the fairshare ones it does not fix.
const KUEUE_PARAMS: &[Param] = &[
    FAIRSHARE_PARAMS[1],
    FAIRSHARE_PARAMS[2],
    FAIRSHARE_PARAMS[4],
    Param {
        key: "entry-penalty",
        value: "D",
        about: "this long of a job's usage charged at once when it starts, seconds or 5m… (default 300)",
        more: None,
    },
];

/// A decay the batch engine's ranker can keep in closed form: Slurm's tick-by-tick accounting
/// charges each job by the seconds it ran between ticks, which an aggregate rate cannot give.
fn engine_decay(value: &str) -> Result<Decay, String> {
    match value.parse().map_err(|e| format!("decay: {e}"))? {
        Decay::Slurm { .. } => Err(
            "decay: slurm's tick-by-tick accounting is for `fairshare priorities`; the batch engine takes half-life:S, step:S:F or reset:S"
                .to_owned(),
        ),
        decay => Ok(decay),
    }
}

/// A fairshare policy's parameters over `settings`.
fn build_fairshare(
    mut settings: FairshareSettings,
    params: &[(&str, &str)],
) -> Result<PolicyKind, String> {
    let given = |name: &str| params.iter().find(|(k, _)| *k == name).map(|&(_, v)| v);
    if given("function") == Some("metacentrum") && given("decay").is_none() {
        settings.decay = METACENTRUM_DECAY;
    }
    for &(key, value) in params {
        let seconds = || {
            parse_seconds(value)
                .ok()
                .filter(|s| *s >= 0.0)
                .ok_or_else(|| {
                    format!(
                        "{key}: expected a duration >= 0 (seconds, or 90s, 5m…), found {value:?}"
                    )
                })
        };
        match key {
            "function" => {
                settings.function =
                    FairshareFunction::parse(value).map_err(|e| format!("function: {e}"))?
            }
            "usage" => settings.metric = value.parse().map_err(|e| format!("usage: {e}"))?,
            "decay" => settings.decay = engine_decay(value)?,
            "charge" => {
                settings.charging = Charging::named(value).ok_or_else(|| {
                    format!("charge: expected {}, found {value:?}", Charging::names())
                })?
            }
            "refresh" => {
                settings.refresh_s = seconds()?;
                if settings.refresh_s > 0.0 && settings.refresh_s < 1e-3 {
                    return Err(format!(
                        "refresh: expected 0 or at least 0.001 seconds, found {value:?}"
                    ));
                }
            }
            "entry-penalty" => settings.entry_penalty_s = seconds()?,
            _ => unreachable!("keys are checked against the entry's parameters"),
        }
    }
    Ok(PolicyKind::Fairshare(settings))
}

/// MetaCentrum's decay, which `function=metacentrum` brings unless `decay=` says otherwise:
/// usage halves every 72 hours, stepwise (docs/metacentrum.md).
pub const METACENTRUM_DECAY: Decay = Decay::Step {
    period_s: 259_200.0,
    factor: 0.5,
};

/// Decayed usage's parameter: `half-life`, a duration > 0 ([`parse_seconds`]).
fn build_decayed_usage(params: &[(&str, &str)]) -> Result<PolicyKind, String> {
    let mut half_life = DEFAULT_HALF_LIFE_S;
    for &(key, value) in params {
        half_life = parse_seconds(value)
            .ok()
            .filter(|h| *h > 0.0)
            .ok_or_else(|| {
                format!("{key}: expected a duration > 0 (seconds, or 7d, 12h…), found {value:?}")
            })?;
    }
    Ok(PolicyKind::DecayedUsage { half_life })
}

/// SDRF's parameters: `delta` or `epsilon`, and `form`.
fn build_sdrf(params: &[(&str, &str)]) -> Result<PolicyKind, String> {
    let discounts = params
        .iter()
        .filter(|(k, _)| matches!(*k, "delta" | "epsilon"));
    if discounts.count() > 1 {
        return Err(
            "give delta or epsilon, once: they set one discount (epsilon = 1 − delta)".into(),
        );
    }
    let mut epsilon = None;
    let mut form = PriorityForm::SumOfMaxes;
    for &(key, value) in params {
        let fraction = || match value.parse::<f64>() {
            Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
            Ok(_) => Err(format!("{key} must lie in [0, 1], found {value}")),
            Err(_) => Err(format!("{key}: expected a number, found {value:?}")),
        };
        match key {
            "delta" => epsilon = Some(1.0 - fraction()?),
            "epsilon" => epsilon = Some(fraction()?),
            "form" => {
                form = match value {
                    "sum-of-maxes" => PriorityForm::SumOfMaxes,
                    "max-of-sums" => PriorityForm::MaxOfSums,
                    _ => {
                        return Err(format!(
                            "form: expected sum-of-maxes or max-of-sums, found {value:?}"
                        ))
                    }
                }
            }
            _ => unreachable!("keys are checked against the entry's parameters"),
        }
    }
    Ok(PolicyKind::Sdrf { epsilon, form })
}

/// A policy specification that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// No policy has this name (here).
    #[error("unknown policy {given:?}: expected {expected}")]
    Unknown {
        /// The specification as given.
        given: String,
        /// The policies that can be used here, as `--help` writes them.
        expected: String,
    },
    /// The policy exists but not where it was asked for.
    #[error("policy {given:?} {reason}; expected {expected}")]
    Elsewhere {
        /// The specification as given.
        given: String,
        /// Where it can be used instead, in words.
        reason: String,
        /// The policies that can be used here.
        expected: String,
    },
    /// The name is known but its parameters are wrong.
    #[error("policy {given:?}: {problem}")]
    Parameter {
        /// The specification as given.
        given: String,
        /// What is wrong and what was expected.
        problem: String,
    },
}

/// A parsed policy specification, remembering how it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicySpec {
    /// The specification as given, e.g. `sdrf:delta=0.999999`.
    pub name: String,
    /// What it means.
    pub kind: PolicyKind,
    /// The factory of a [`PolicyKind::Plugged`] policy; `None` for the registry's.
    pub factory: Option<Factory>,
}

/// A shared [`RankerFactory`]: two are equal when they are the same factory.
#[derive(Clone)]
pub struct Factory(pub Arc<dyn RankerFactory>);

impl fmt::Debug for Factory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Factory(..)")
    }
}

impl PartialEq for Factory {
    fn eq(&self, other: &Factory) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl PolicySpec {
    /// Parses `text` as a policy usable in `engine`.
    pub fn parse_for(text: &str, engine: Engine) -> Result<PolicySpec, PolicyError> {
        let (base, params) = text.split_once(':').unwrap_or((text, ""));
        let entry = POLICIES
            .iter()
            .find(|e| e.name == base || e.aliases.contains(&base))
            .ok_or_else(|| PolicyError::Unknown {
                given: text.into(),
                expected: names(engine),
            })?;
        if !entry.engines.contains(&engine) {
            return Err(PolicyError::Elsewhere {
                given: text.into(),
                reason: format!(
                    "runs only in {} ({})",
                    or_list(entry.engines.iter().map(|e| e.command())),
                    entry.about
                ),
                expected: names(engine),
            });
        }
        let problem = |problem: String| PolicyError::Parameter {
            given: text.into(),
            problem,
        };
        let mut pairs = Vec::new();
        for param in params.split(',').filter(|p| !p.is_empty()) {
            let (key, value) = param
                .split_once('=')
                .ok_or_else(|| problem(format!("expected key=value, found {param:?}")))?;
            if !entry.params.iter().any(|p| p.key == key) {
                return Err(problem(match entry.params {
                    [] => format!("{} takes no parameters", entry.name),
                    keys => format!(
                        "unknown parameter {key:?} (expected {})",
                        or_list(keys.iter().map(|p| p.key))
                    ),
                }));
            }
            if pairs.iter().any(|&(k, _)| k == key) {
                return Err(problem(format!("{key} is given twice")));
            }
            pairs.push((key, value));
        }
        let kind = (entry.build)(&pairs).map_err(problem)?;
        Ok(PolicySpec {
            name: text.into(),
            kind,
            factory: None,
        })
    }

    /// A policy named `name` whose ranker `factory` builds: a ranker of the caller's own run
    /// through the same engines as the registry's. The name must be new (not a registered
    /// policy's, nor one of their aliases) and printable, as results and tables show it.
    pub fn plugged(name: &str, factory: Arc<dyn RankerFactory>) -> Result<PolicySpec, PolicyError> {
        let problem = |problem: &str| PolicyError::Parameter {
            given: name.into(),
            problem: problem.into(),
        };
        let base = name.split_once(':').map_or(name, |(base, _)| base);
        if POLICIES
            .iter()
            .any(|e| e.name == base || e.aliases.contains(&base))
        {
            return Err(problem(
                "is a registered policy's name; give a plugged ranker a name of its own",
            ));
        }
        if name.trim().is_empty() || name.chars().any(char::is_control) {
            return Err(problem(
                "a plugged ranker's name must be printable text, not empty",
            ));
        }
        Ok(PolicySpec {
            name: name.into(),
            kind: PolicyKind::Plugged,
            factory: Some(Factory(factory)),
        })
    }

    /// SDRF's time constant τ in seconds (∞ for policies without commitments).
    pub fn tau(&self) -> f64 {
        match self.kind {
            PolicyKind::Sdrf { epsilon, .. } => {
                tau_from_epsilon(epsilon.unwrap_or(DEFAULT_SDRF_EPSILON))
            }
            _ => f64::INFINITY,
        }
    }

    /// The SDRF specification for δ = 1 − 10^−`k`, written the way the paper writes it.
    pub fn sdrf_with_nines(k: u32) -> PolicySpec {
        PolicySpec {
            name: format!("sdrf:delta=0.{}", "9".repeat(k as usize)),
            kind: PolicyKind::Sdrf {
                epsilon: Some(10f64.powi(-(k as i32))),
                form: PriorityForm::SumOfMaxes,
            },
            factory: None,
        }
    }

    /// The ranker of this policy for clients with these shares over `resources` resources,
    /// placed in `accounts` when a fairshare policy should see the account tree (otherwise
    /// every client is a user of the root with its weight as its shares; the caller checks
    /// that `accounts` places as many clients as there are shares); `None` for the process
    /// engine's policies, which rank processes, not clients.
    pub fn ranker(
        &self,
        resources: usize,
        shares: &[Share],
        accounts: Option<&Accounts>,
    ) -> Option<Box<dyn Ranker>> {
        Some(match self.kind {
            PolicyKind::Fifo => Box::new(FifoRanker::new(shares.len())),
            PolicyKind::Stateless(policy) => Box::new(StatelessRanker::new(policy, shares)),
            PolicyKind::Sdrf { form, .. } => {
                Box::new(SdrfRanker::new(resources, self.tau(), form, shares))
            }
            PolicyKind::DecayedUsage { half_life } => {
                Box::new(UsageRanker::new(resources, half_life, shares))
            }
            PolicyKind::Fairshare(settings) => {
                let accounts = accounts.cloned().unwrap_or_else(|| Accounts::flat(shares));
                Box::new(FairshareRanker::new(settings, accounts))
            }
            PolicyKind::Ranked(name) => {
                let build = POLICIES.iter().find(|e| e.name == name)?.ranker?;
                build(resources, shares)
            }
            PolicyKind::Plugged => self.factory.as_ref()?.0.ranker(resources, shares, accounts),
            PolicyKind::Bottleneck
            | PolicyKind::PerResource
            | PolicyKind::Baa(_)
            | PolicyKind::Runtime(_) => return None,
        })
    }
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl FromStr for PolicySpec {
    type Err = PolicyError;

    /// A policy for the cluster engine (see [`PolicySpec::parse_for`] for the others).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PolicySpec::parse_for(s, Engine::Replay)
    }
}

/// The policies usable in `engine`, as help texts and errors write them: `fifo, drf, … or
/// sdrf[:delta=D|epsilon=E][,form=…]`.
pub fn names(engine: Engine) -> String {
    or_list(
        POLICIES
            .iter()
            .filter(|e| e.engines.contains(&engine))
            .map(written),
    )
}

/// One line per policy usable in `engine`: its written form and what it does.
pub fn help(engine: Engine) -> String {
    POLICIES
        .iter()
        .filter(|e| e.engines.contains(&engine))
        .map(|e| {
            let params: String = e
                .params
                .iter()
                .map(|p| {
                    let more = p.more.map(|more| more().replace('\n', "\n        "));
                    let more = more.map_or(String::new(), |m| format!("\n        {m}"));
                    format!("\n      {}={}: {}{more}", p.key, p.value, p.about)
                })
                .collect();
            format!("  {}: {}{params}", written(e), e.about)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How an entry is written, with its parameters: `sdrf[:delta=D][,epsilon=E][,form=…]`.
fn written(entry: &Entry) -> String {
    let params: String = entry
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| format!("[{}{}={}]", if i == 0 { ":" } else { "," }, p.key, p.value))
        .collect();
    format!("{}{params}", entry.name)
}

/// `a, b or c`.
fn or_list(items: impl Iterator<Item = impl Into<String>>) -> String {
    let items: Vec<String> = items.map(Into::into).collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        let kind = |s: &str| s.parse::<PolicySpec>().unwrap().kind;
        assert_eq!(kind("fifo"), PolicyKind::Fifo);
        assert_eq!(kind("drf"), PolicyKind::Stateless(Policy::Drf));
        assert_eq!(
            PolicySpec::parse_for("wdrf", Engine::Allocate)
                .unwrap()
                .kind,
            PolicyKind::Stateless(Policy::WeightedDrf)
        );
        let sdrf: PolicySpec = "sdrf:delta=0.999999".parse().unwrap();
        assert!((sdrf.tau() - 999_999.5).abs() < 1e-2, "{}", sdrf.tau());
        assert_eq!(sdrf.to_string(), "sdrf:delta=0.999999");
        assert_eq!(
            kind("sdrf:epsilon=1e-3,form=max-of-sums"),
            PolicyKind::Sdrf {
                epsilon: Some(1e-3),
                form: PriorityForm::MaxOfSums
            }
        );
        assert_eq!(PolicySpec::sdrf_with_nines(3).name, "sdrf:delta=0.999");
        assert_eq!(
            "sdrf".parse::<PolicySpec>().unwrap().tau(),
            tau_from_epsilon(DEFAULT_SDRF_EPSILON)
        );
    }

    #[test]
    fn rejects_nonsense_and_says_what_is_expected() {
        for bad in [
            "fair",
            "drf:delta=0.9",
            "sdrf:delta=x",
            "sdrf:delta=2",
            "sdrf:gamma=1",
            "sdrf:form=best",
            "sdrf:delta",
            "sdrf:delta=0.99,epsilon=0.5",
            "bottleneck",
        ] {
            assert!(bad.parse::<PolicySpec>().is_err(), "{bad}");
        }
        let unknown = "fair".parse::<PolicySpec>().unwrap_err().to_string();
        assert!(
            unknown.starts_with(
                "unknown policy \"fair\": expected fifo, drf, weighted-drf, asset, sdrf[:delta=D][,epsilon=E][,form=sum-of-maxes|max-of-sums], smallest-first, decayed-usage[:half-life=D], fairshare[:function=NAME[:KEY=N]]"
            ),
            "{unknown}"
        );
        let simulate = PolicySpec::parse_for("asset", Engine::Simulate).unwrap_err();
        assert!(simulate
            .to_string()
            .ends_with("fifo, drf, bottleneck or per-resource"));
        let elsewhere = PolicySpec::parse_for("weighted-drf", Engine::Simulate)
            .unwrap_err()
            .to_string();
        assert!(
            elsewhere
                .starts_with("policy \"weighted-drf\" runs only in allocate or replay and sweep"),
            "{elsewhere}"
        );
        let param = "drf:delta=0.9"
            .parse::<PolicySpec>()
            .unwrap_err()
            .to_string();
        assert_eq!(param, "policy \"drf:delta=0.9\": drf takes no parameters");
        let twice = "fairshare:usage=pe,usage=cpu".parse::<PolicySpec>();
        assert_eq!(
            twice.unwrap_err().to_string(),
            "policy \"fairshare:usage=pe,usage=cpu\": usage is given twice"
        );
        let both = "sdrf:delta=0.99,epsilon=0.5"
            .parse::<PolicySpec>()
            .unwrap_err();
        assert_eq!(
            both.to_string(),
            "policy \"sdrf:delta=0.99,epsilon=0.5\": give delta or epsilon, once: they set one discount (epsilon = 1 − delta)"
        );
        for (spec, problem) in [
            (
                "sdrf:epsilon=-0.1",
                "epsilon must lie in [0, 1], found -0.1",
            ),
            ("sdrf:delta=7", "delta must lie in [0, 1], found 7"),
        ] {
            let error = spec.parse::<PolicySpec>().unwrap_err().to_string();
            assert!(error.ends_with(problem), "{spec}: {error}");
        }
    }

    #[test]
    fn every_name_is_unique_and_every_entry_parses_in_its_engines() {
        let mut names: Vec<&str> = POLICIES
            .iter()
            .flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()))
            .collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all);
        for entry in POLICIES {
            for engine in entry.engines {
                let spec = PolicySpec::parse_for(entry.name, *engine).unwrap();
                if *engine == Engine::Replay {
                    assert!(
                        spec.ranker(2, &Share::equal(3), None).is_some(),
                        "{}",
                        entry.name
                    );
                }
            }
        }
    }

    /// The seam for a ranking policy (docs/architecture.md, "Seams"): `smallest-first` is one
    /// file (`rank/smallest.rs`) and one entry here, and that is enough for every front end —
    /// the parser, the ranker it builds, `--help` and the error for a misspelt name.
    #[test]
    fn a_ranked_policy_is_its_file_and_its_entry() {
        let spec = PolicySpec::parse_for("smallest-first", Engine::Replay).unwrap();
        let mut ranker = spec.ranker(1, &Share::equal(2), None).expect("it ranks");
        let head = |size: f64, seq| crate::rank::Head {
            size,
            ..crate::rank::Head::new(crate::model::Time::ZERO, seq)
        };
        ranker.update(0, &[0.0], Some(head(0.5, 1))).unwrap();
        ranker.update(1, &[0.0], Some(head(0.1, 2))).unwrap();
        assert_eq!(ranker.first(), Some(1), "the smaller next task goes first");
        assert!(help(Engine::Replay).contains("smallest-first: FIFO by size"));
        let misspelt = PolicySpec::parse_for("smalest-first", Engine::Replay).unwrap_err();
        assert!(
            misspelt.to_string().contains("smallest-first"),
            "{misspelt}"
        );
    }

    #[test]
    fn fairshare_parameters_parse_and_bad_ones_say_what_was_expected() {
        let spec: PolicySpec =
            "fairshare:function=pbs,usage=tres:1+0.5,decay=step:259200:0.5,charge=finish,refresh=3600,entry-penalty=60"
                .parse()
                .unwrap();
        let PolicyKind::Fairshare(s) = spec.kind else {
            panic!("{:?}", spec.kind)
        };
        assert_eq!(s.function, FairshareFunction::PBS);
        assert_eq!(
            s.metric,
            crate::usage::metric::UsageMetric::with(
                &crate::usage::metric::tres::TRES,
                [1.0, 0.5, 0.0, 0.0]
            )
        );
        assert_eq!(s.charging, Charging::AtFinish);
        assert_eq!((s.refresh_s, s.entry_penalty_s), (3600.0, 60.0));
        let kueue: PolicySpec = "kueue-afs".parse().unwrap();
        let PolicyKind::Fairshare(k) = kueue.kind else {
            panic!("{:?}", kueue.kind)
        };
        assert_eq!(k.entry_penalty_s, 300.0);
        // Durations read as everywhere else: seconds, or with units.
        let with_units: PolicySpec = "fairshare:decay=half-life:7d,refresh=5m,entry-penalty=90s"
            .parse()
            .unwrap();
        let in_seconds: PolicySpec =
            "fairshare:decay=half-life:604800,refresh=300,entry-penalty=90"
                .parse()
                .unwrap();
        assert_eq!(with_units.kind, in_seconds.kind);
        // MetaCentrum's function brings its 72-hour halving; a decay given wins; kueue-afs,
        // which orders by the same function, keeps the week's half-life.
        let decay_of = |text: &str| match text.parse::<PolicySpec>().unwrap().kind {
            PolicyKind::Fairshare(s) => s.decay,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            decay_of("fairshare:function=metacentrum"),
            METACENTRUM_DECAY
        );
        assert_eq!(
            decay_of("fairshare:function=metacentrum,decay=half-life:1d"),
            Decay::Continuous {
                half_life_s: 86_400.0
            }
        );
        assert_eq!(decay_of("kueue-afs"), FairshareSettings::default().decay);
        let day: PolicySpec = "decayed-usage:half-life=1d".parse().unwrap();
        assert_eq!(
            day.kind,
            PolicyKind::DecayedUsage {
                half_life: 86_400.0
            }
        );
        for (bad, says) in [
            (
                "fairshare:function=lottery",
                "expected fair-tree, slurm-classic, pbs, metacentrum or htcondor",
            ),
            (
                "fairshare:function=htcondor:floor=-1",
                "function: htcondor: floor must be a number >= 0",
            ),
            ("fairshare:usage=gpu", "expected cpu, maui-pe"),
            (
                "fairshare:usage=tres:1+x",
                "a TRES weight must be a number >= 0",
            ),
            ("fairshare:decay=half-life:0", "must be a duration > 0"),
            ("fairshare:decay=half-life:7y-", "must be a duration > 0"),
            ("fairshare:decay=slurm", "is for `fairshare priorities`"),
            ("fairshare:charge=never", "expected running or finish"),
            ("fairshare:refresh=-1", "refresh: expected a duration >= 0"),
            (
                "fairshare:refresh=1e-300",
                "expected 0 or at least 0.001 seconds",
            ),
        ] {
            let error = bad.parse::<PolicySpec>().unwrap_err().to_string();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }
}
