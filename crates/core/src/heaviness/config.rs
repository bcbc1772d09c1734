//! The settings of the heaviness metric, with the defaults of spec §11.

use super::cloud::{HeavinessError, ResourceKind};
use serde::{Deserialize, Serialize};

/// How the metric is computed (spec §11; every field has the reference default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HeavinessConfig {
    /// μ, seconds between two rounds of the service (a number, or a duration such as `"10s"`).
    #[serde(deserialize_with = "crate::model::seconds")]
    pub update_interval_s: f64,
    /// δ, the weight of the newest measurement in the smoothed demand (§4.1).
    pub resource_decay_factor: f64,
    /// κ, the heaviness of a user consuming exactly an equal share of everything (§7.2).
    pub normalizer: f64,
    /// The dynamic heaviness function.
    pub metric: Metric,
    /// How a workload's endowment is computed.
    pub endowment: EndowmentMode,
    /// Caps a workload's endowment at its virtual size (reference B's node service).
    pub cap_endowment_at_vr: bool,
    /// Whether a workload's priority input adds its static heaviness too (reference B) or only
    /// its dynamic part (reference A, the default).
    pub hp_includes_static: bool,
    /// Overcommit ratios: virtual over actual scale; they enter only the normalisation.
    pub overcommit: Overcommit,
}

impl Default for HeavinessConfig {
    fn default() -> Self {
        HeavinessConfig {
            update_interval_s: 10.0,
            resource_decay_factor: 0.5,
            normalizer: 1.0,
            metric: Metric::default(),
            endowment: EndowmentMode::Proportional,
            cap_endowment_at_vr: false,
            hp_includes_static: false,
            overcommit: Overcommit::default(),
        }
    }
}

impl HeavinessConfig {
    /// Checks every value is in its range.
    pub fn check(&self) -> Result<(), HeavinessError> {
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(HeavinessError::Config(format!(
                    "{name} must be a positive number, found {v}"
                )))
            }
        };
        positive("update_interval_s", self.update_interval_s)?;
        positive("normalizer", self.normalizer)?;
        let d = self.resource_decay_factor;
        if !(d > 0.0 && d <= 1.0) {
            return Err(HeavinessError::Config(format!(
                "resource_decay_factor must lie in (0, 1], found {d}"
            )));
        }
        positive("overcommit.cpu", self.overcommit.cpu)?;
        positive("overcommit.memory", self.overcommit.memory)?;
        positive("overcommit.disk", self.overcommit.disk)?;
        positive("overcommit.network", self.overcommit.network)?;
        self.metric.check()
    }
}

/// The dynamic heaviness function d(v) (spec §7.3 and §8).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Metric {
    /// Reference A's greediness: over-use charged with `penalty`, under-use credited with
    /// `discount` times the fraction of it others absorbed; a negative `discount` credits
    /// under-use with weight |discount| whether or not anyone absorbed it.
    Greediness {
        /// π ≥ 1.
        penalty: f64,
        /// θ ∈ [−1, 1].
        discount: f64,
    },
    /// DRF as a heaviness: the dominant normalised use over the dominant normalised endowment.
    Drf,
    /// Asset fairness as a heaviness: the summed normalised use over the summed endowment.
    Asset,
}

impl Default for Metric {
    fn default() -> Self {
        Metric::Greediness {
            penalty: 1.0,
            discount: 1.0,
        }
    }
}

impl Metric {
    /// Reference B's one-parameter greediness: `dcf ∈ [0, 1]`, θ = 2/(dcf + 2), π = 2θ.
    pub fn greediness_dcf(dcf: f64) -> Result<Metric, HeavinessError> {
        if !(0.0..=1.0).contains(&dcf) {
            return Err(HeavinessError::Config(format!(
                "dcf must lie in [0, 1], found {dcf}"
            )));
        }
        let discount = 2.0 / (dcf + 2.0);
        Ok(Metric::Greediness {
            penalty: 2.0 * discount,
            discount,
        })
    }

    /// Checks the parameters.
    pub fn check(&self) -> Result<(), HeavinessError> {
        if let Metric::Greediness { penalty, discount } = *self {
            if !(penalty.is_finite() && penalty >= 1.0) {
                return Err(HeavinessError::Config(format!(
                    "greediness penalty must be a number ≥ 1, found {penalty}"
                )));
            }
            if !(-1.0..=1.0).contains(&discount) {
                return Err(HeavinessError::Config(format!(
                    "greediness discount must lie in [−1, 1], found {discount}"
                )));
            }
        }
        Ok(())
    }

    /// The name reports print: `greediness`, `drf` or `asset`.
    pub fn name(&self) -> &'static str {
        match self {
            Metric::Greediness { .. } => "greediness",
            Metric::Drf => "drf",
            Metric::Asset => "asset",
        }
    }
}

/// How a workload's endowment (its share of its node) is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndowmentMode {
    /// Eq. 1: the node's supply in proportion to virtual sizes; an equal split for resources
    /// without a virtual counterpart.
    Proportional,
    /// Reference A: as `Proportional`, except that memory's endowment is the virtual memory itself.
    Reference,
}

/// Overcommit ratios per resource kind (spec §7.1; defaults are OpenStack Nova's).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Overcommit {
    /// `cpu_allocation_ratio`.
    pub cpu: f64,
    /// `ram_allocation_ratio`.
    pub memory: f64,
    /// `disk_allocation_ratio`.
    pub disk: f64,
    /// Network (never overcommitted in Nova).
    pub network: f64,
}

impl Default for Overcommit {
    fn default() -> Self {
        Overcommit {
            cpu: 16.0,
            memory: 1.5,
            disk: 1.0,
            network: 1.0,
        }
    }
}

impl Overcommit {
    /// No overcommit: every ratio 1.
    pub fn none() -> Overcommit {
        Overcommit {
            cpu: 1.0,
            memory: 1.0,
            disk: 1.0,
            network: 1.0,
        }
    }

    /// The ratio for a resource of this kind.
    pub fn of(&self, kind: ResourceKind) -> f64 {
        match kind {
            ResourceKind::Cpu => self.cpu,
            ResourceKind::Memory => self.memory,
            ResourceKind::Disk => self.disk,
            ResourceKind::Network => self.network,
            ResourceKind::Other => 1.0,
        }
    }
}
