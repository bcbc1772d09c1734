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
use crate::choice::{or_list, Choice};
use crate::error::Invalid;
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

mod entries;

pub use entries::{
    BaaPolicy, DEFAULT_HALF_LIFE_S, DEFAULT_SDRF_EPSILON, METACENTRUM_DECAY, POLICIES,
};

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
pub type BuildFn = fn(&[(&str, &str)]) -> Result<PolicyKind, Invalid>;

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

/// A policy specification that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// No policy has this name (here).
    #[error("unknown policy {given:?}: {}", match suggestion {
        Some(name) => format!("did you mean {name}? (`--help` lists every policy)"),
        None => format!("expected {expected}"),
    })]
    Unknown {
        /// The specification as given.
        given: String,
        /// The policies that can be used here, as `--help` writes them.
        expected: String,
        /// The name usable here nearest to the one given, when one is a slip away.
        suggestion: Option<&'static str>,
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
                suggestion: nearest(base, engine),
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
        let kind = (entry.build)(&pairs).map_err(|e| problem(e.0))?;
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

    /// Whether the specification as written sets the parameter `key` (`decay` in
    /// `fairshare:decay=half-life:600`), rather than leaving it at its default.
    pub fn sets(&self, key: &str) -> bool {
        let params = self.name.split_once(':').map_or("", |(_, params)| params);
        params
            .split(',')
            .any(|p| p.split_once('=').is_some_and(|(k, _)| k == key))
    }

    /// Whether the policy remembers past usage: SDRF's commitments, decayed usage, a fairshare
    /// factor.
    pub fn has_memory(&self) -> bool {
        matches!(
            self.kind,
            PolicyKind::Sdrf { .. } | PolicyKind::DecayedUsage { .. } | PolicyKind::Fairshare(_)
        )
    }

    /// This specification with a memory that halves every `half_life_s` seconds written into
    /// its text, when it has a memory its text leaves out: SDRF's discount (`epsilon` =
    /// 1 − 2^(−1/half-life), per second), decayed usage's `half-life`, a fairshare factor's
    /// `decay`. `None` for a policy without a memory, one whose text sets it, or a half-life
    /// of 0.
    pub fn remembering(&self, half_life_s: u64) -> Option<PolicySpec> {
        let param = match self.kind {
            _ if half_life_s == 0 || !self.has_memory() => return None,
            PolicyKind::Sdrf { .. } if !self.sets("delta") && !self.sets("epsilon") => {
                format!("epsilon={}", 1.0 - 0.5f64.powf(1.0 / half_life_s as f64))
            }
            PolicyKind::DecayedUsage { .. } if !self.sets("half-life") => {
                format!("half-life={half_life_s}")
            }
            PolicyKind::Fairshare(_) if !self.sets("decay") => {
                format!("decay=half-life:{half_life_s}")
            }
            _ => return None,
        };
        let separator = if self.name.contains(':') { "," } else { ":" };
        format!("{}{separator}{param}", self.name).parse().ok()
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

/// The name or alias of a policy usable in `engine` that `given` is a slip away from (at most
/// two letters added, dropped, changed or swapped, and fewer than half of its letters), when
/// one is nearest.
fn nearest(given: &str, engine: Engine) -> Option<&'static str> {
    let given = given.to_ascii_lowercase();
    let usable = POLICIES.iter().filter(|e| e.engines.contains(&engine));
    let names = usable.flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()));
    let near = names.map(|name| (strsim::damerau_levenshtein(&given, name), name));
    let near = near.filter(|(d, name)| *d <= 2 && 2 * d < name.len().max(given.len()));
    near.min().map(|(_, name)| name)
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

#[cfg(test)]
mod tests;
