//! From heaviness to the knobs a kernel or hypervisor understands (spec §9): a priority in
//! [−50, 50] (−50 the highest), optionally smoothed toward the previous one, then each knob's
//! value by a linear map onto its range. One mapping serves the simulator, the daemon and the
//! agent, whatever the knobs: cgroup v2, cgroup v1, libvirt, or the paper's own ranges.

use crate::error::Invalid;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The highest priority value (the lowest is its negation).
pub const PRIORITY_BOUND: f64 = 50.0;

/// How heaviness becomes a priority.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PriorityConfig {
    /// How much more a negative heaviness counts than a positive one (reference A: 2.5).
    pub negative_heaviness_factor: f64,
    /// Smoothing toward the previous priority.
    pub smoothing: PrioritySmoothing,
}

impl PriorityConfig {
    /// Checks the values are in range.
    pub fn check(&self) -> Result<(), Invalid> {
        let f = self.negative_heaviness_factor;
        if !(f.is_finite() && f > 0.0) {
            return Err(Invalid(format!(
                "negative_heaviness_factor must be a positive number, found {f}"
            )));
        }
        match self.smoothing {
            PrioritySmoothing::Ema { alpha } if !(alpha > 0.0 && alpha <= 1.0) => Err(Invalid(
                format!("smoothing alpha must lie in (0, 1], found {alpha}"),
            )),
            _ => Ok(()),
        }
    }
}

impl Default for PriorityConfig {
    fn default() -> Self {
        PriorityConfig {
            negative_heaviness_factor: 2.5,
            smoothing: PrioritySmoothing::None,
        }
    }
}

/// Smoothing of priorities between rounds (spec §9.2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum PrioritySmoothing {
    /// The target itself, truncated toward zero (what reference A runs).
    None,
    /// Reference B: 90 % of the previous target plus 10 % of the new one.
    Blend10,
    /// An exponential filter over the applied values with weight `alpha` for the new target.
    Ema {
        /// Weight of the new target, in (0, 1].
        alpha: f64,
    },
}

/// What a workload's priority remembers between rounds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct PriorityMemory {
    /// The previous round's target p*.
    pub target: f64,
    /// The previous round's smoothed value, before truncation.
    pub smoothed: f64,
}

/// The target priority p* of a heaviness (spec §9.1): 50·h for h ≥ 0, factor·50·h below,
/// clamped to [−50, 50]. NaN counts as 0 (neutral).
pub fn target_priority(heaviness: f64, negative_factor: f64) -> f64 {
    let scale = if heaviness < 0.0 {
        negative_factor * PRIORITY_BOUND
    } else {
        PRIORITY_BOUND
    };
    let p = scale * heaviness;
    if p.is_nan() {
        0.0
    } else {
        p.clamp(-PRIORITY_BOUND, PRIORITY_BOUND)
    }
}

/// The priority to apply this round and what to remember for the next; `memory` is `None`
/// for a workload seen the first time (the references start from priority 0).
pub fn priority(
    heaviness: f64,
    memory: Option<PriorityMemory>,
    config: &PriorityConfig,
) -> (i32, PriorityMemory) {
    let target = target_priority(heaviness, config.negative_heaviness_factor);
    let previous = memory.unwrap_or_default();
    let smoothed = match config.smoothing {
        PrioritySmoothing::None => target,
        PrioritySmoothing::Blend10 => previous.target + 0.1 * (target - previous.target),
        PrioritySmoothing::Ema { alpha } => {
            previous.smoothed + alpha * (target - previous.smoothed)
        }
    };
    let applied = smoothed.trunc().clamp(-PRIORITY_BOUND, PRIORITY_BOUND) as i32;
    (applied, PriorityMemory { target, smoothed })
}

/// One knob's valid range, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnobRange {
    /// The value for the lowest priority (+50).
    pub lo: u64,
    /// The value for the highest priority (−50).
    pub hi: u64,
}

impl KnobRange {
    /// The knob's value for a priority (spec §9.3): `lo + ⌊(50 − p)(hi − lo)/100⌋`, clamped.
    pub fn value(self, priority: i32) -> u64 {
        let hi = self.hi.max(self.lo);
        let p = i64::from(priority.clamp(-50, 50));
        let step = (50 - p) as u128 * u128::from(hi - self.lo) / 100;
        (u128::from(self.lo) + step).min(u128::from(hi)) as u64
    }

    /// Whether `value` lies in the range.
    pub fn contains(self, value: u64) -> bool {
        (self.lo..=self.hi.max(self.lo)).contains(&value)
    }
}

/// The knobs of one system: names, ranges and the memory unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnobProfile {
    /// The profile's name.
    pub name: String,
    /// The CPU weight knob (file or parameter name) and its range.
    pub cpu: NamedKnob,
    /// The I/O weight knob and its range.
    pub io: NamedKnob,
    /// The memory protection knob; its range runs from `memory_floor` to the workload's
    /// memory size.
    pub memory: String,
    /// The smallest memory protection, in `memory_unit`s.
    pub memory_floor: u64,
    /// Bytes per unit of the memory knob (1, or 1024 for KiB).
    pub memory_unit: u64,
    /// The network class knob, where the system has one.
    pub network: Option<NamedKnob>,
}

/// A knob's name and range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedKnob {
    /// The file or parameter it is written to.
    pub name: String,
    /// Its valid range.
    #[serde(flatten)]
    pub range: KnobRange,
}

/// The knob values of a profile for one workload: what to write.
// The daemon's API sends this type as it is; with the `openapi` feature it has a schema, named
// `Knobs` as the API has always called it, whose descriptions are these doc comments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = Knobs))]
pub struct KnobValues {
    /// The priority they come from, in [−50, 50], −50 the highest.
    pub priority: i32,
    /// The CPU weight.
    pub cpu: u64,
    /// The I/O weight.
    pub io: u64,
    /// The memory protection in the profile's unit, when the workload's memory size is known.
    pub memory: Option<u64>,
    /// The network weight (the paper's traffic class), when the profile has one.
    pub network: Option<u64>,
}

/// The profiles fairshare knows by name.
pub const PROFILES: [&str; 4] = ["cgroup-v2", "cgroup-v1", "libvirt", "paper"];

/// Ten MiB, the smallest memory protection of the references.
const MEMORY_FLOOR_BYTES: u64 = 10 * 1024 * 1024;

impl KnobProfile {
    /// cgroup v2: `cpu.weight` 1–10000, `io.weight` 1–10000, `memory.low` in bytes.
    pub fn cgroup_v2() -> KnobProfile {
        KnobProfile::bytes(
            "cgroup-v2",
            ("cpu.weight", 1, 10_000),
            ("io.weight", 1, 10_000),
            "memory.low",
        )
    }

    /// cgroup v1: `cpu.shares` 2–262144, `blkio.weight` 10–1000, `memory.soft_limit_in_bytes`.
    pub fn cgroup_v1() -> KnobProfile {
        KnobProfile::bytes(
            "cgroup-v1",
            ("cpu.shares", 2, 262_144),
            ("blkio.weight", 10, 1000),
            "memory.soft_limit_in_bytes",
        )
    }

    /// libvirt: `cputune/shares` 2–262144, `blkiotune/weight` 100–1000, `memtune/soft_limit` KiB.
    pub fn libvirt() -> KnobProfile {
        KnobProfile {
            memory_floor: MEMORY_FLOOR_BYTES / 1024,
            memory_unit: 1024,
            ..KnobProfile::bytes(
                "libvirt",
                ("cputune/shares", 2, 262_144),
                ("blkiotune/weight", 100, 1000),
                "memtune/soft_limit",
            )
        }
    }

    /// The paper's ranges (spec §9.3): CPU shares 1–100, disk weight 100–1000, memory soft
    /// limit in KiB from 10240, network classes 1–98.
    pub fn paper() -> KnobProfile {
        KnobProfile {
            name: "paper".into(),
            network: Some(NamedKnob {
                name: "tc class".into(),
                range: KnobRange { lo: 1, hi: 98 },
            }),
            ..KnobProfile::libvirt().with_cpu("cpu_shares", 1, 100)
        }
    }

    /// A profile by name, one of [`PROFILES`].
    pub fn named(name: &str) -> Option<KnobProfile> {
        match name {
            "cgroup-v2" => Some(KnobProfile::cgroup_v2()),
            "cgroup-v1" => Some(KnobProfile::cgroup_v1()),
            "libvirt" => Some(KnobProfile::libvirt()),
            "paper" => Some(KnobProfile::paper()),
            _ => None,
        }
    }

    /// The knob values for a priority; `memory_bytes` is the workload's memory size, if known.
    pub fn values(&self, priority: i32, memory_bytes: Option<u64>) -> KnobValues {
        let memory = memory_bytes.map(|bytes| {
            KnobRange {
                lo: self.memory_floor,
                hi: bytes / self.memory_unit,
            }
            .value(priority)
        });
        KnobValues {
            priority,
            cpu: self.cpu.range.value(priority),
            io: self.io.range.value(priority),
            memory,
            network: self.network.as_ref().map(|k| k.range.value(priority)),
        }
    }

    /// A profile with memory in bytes and no network knob.
    fn bytes(name: &str, cpu: (&str, u64, u64), io: (&str, u64, u64), memory: &str) -> KnobProfile {
        let knob = |(name, lo, hi): (&str, u64, u64)| NamedKnob {
            name: name.into(),
            range: KnobRange { lo, hi },
        };
        KnobProfile {
            name: name.into(),
            cpu: knob(cpu),
            io: knob(io),
            memory: memory.into(),
            memory_floor: MEMORY_FLOOR_BYTES,
            memory_unit: 1,
            network: None,
        }
    }

    /// The same profile with another CPU knob.
    fn with_cpu(self, name: &str, lo: u64, hi: u64) -> KnobProfile {
        KnobProfile {
            cpu: NamedKnob {
                name: name.into(),
                range: KnobRange { lo, hi },
            },
            ..self
        }
    }
}

impl fmt::Display for KnobProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl FromStr for KnobProfile {
    type Err = Invalid;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        KnobProfile::named(s).ok_or_else(|| {
            Invalid(format!(
                "unknown knob profile `{s}`: expected one of {}",
                PROFILES.join(", ")
            ))
        })
    }
}
