//! The registered policies: each one's entry (name, parameters, help, where it runs, how it is
//! built), the parameters they share, and the functions that build them from their parameters.

use super::*;
use crate::error::Invalid;

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
fn build_baa(time: Option<TimeSettings>, params: &[(&str, &str)]) -> Result<PolicyKind, Invalid> {
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
                return Err(Invalid(format!(
                    "{key}: expected {expected}, found {value:?}"
                )));
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
    Param {
        key: "refresh-offset",
        value: "D",
        about: "where recomputations fall: D after each multiple of refresh on the trace's clock (default 0; Slurm's fall PriorityCalcPeriod apart from slurmctld's start)",
        more: None,
    },
];

/// The parameters of the Kueue-style policy: the fairshare ones it does not fix.
const KUEUE_PARAMS: &[Param] = &[
    FAIRSHARE_PARAMS[1],
    FAIRSHARE_PARAMS[2],
    FAIRSHARE_PARAMS[4],
    FAIRSHARE_PARAMS[6],
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
) -> Result<PolicyKind, Invalid> {
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
                    return Err(Invalid(format!(
                        "refresh: expected 0 or at least 0.001 seconds, found {value:?}"
                    )));
                }
            }
            "entry-penalty" => settings.entry_penalty_s = seconds()?,
            "refresh-offset" => settings.refresh_offset_s = seconds()?,
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
fn build_decayed_usage(params: &[(&str, &str)]) -> Result<PolicyKind, Invalid> {
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
fn build_sdrf(params: &[(&str, &str)]) -> Result<PolicyKind, Invalid> {
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
            Ok(_) => Err(Invalid(format!("{key} must lie in [0, 1], found {value}"))),
            Err(_) => Err(Invalid(format!(
                "{key}: expected a number, found {value:?}"
            ))),
        };
        match key {
            "delta" => epsilon = Some(1.0 - fraction()?),
            "epsilon" => epsilon = Some(fraction()?),
            "form" => {
                form = match value {
                    "sum-of-maxes" => PriorityForm::SumOfMaxes,
                    "max-of-sums" => PriorityForm::MaxOfSums,
                    _ => {
                        return Err(Invalid(format!(
                            "form: expected sum-of-maxes or max-of-sums, found {value:?}"
                        )))
                    }
                }
            }
            _ => unreachable!("keys are checked against the entry's parameters"),
        }
    }
    Ok(PolicyKind::Sdrf { epsilon, form })
}
