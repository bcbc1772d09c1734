//! Policy specifications as users write them on the command line (`fifo`, `drf`,
//! `sdrf:delta=0.999999`), parsed once into what the engines need.

use fairshare_core::decay::tau_from_epsilon;
use fairshare_core::policy::{Policy, PriorityForm};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// A policy specification that cannot be understood.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("policy {given:?}: {problem}")]
pub struct PolicySpecError {
    /// The specification as given.
    pub given: String,
    /// What is wrong and what was expected.
    pub problem: String,
}

/// How an engine ranks users.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ranking {
    /// First come, first served across all users.
    Fifo,
    /// A stateless policy: priorities change only when allocations do.
    Stateless(Policy),
    /// Stateful DRF with discount δ = 1 − `epsilon` (Δt = 1 s).
    Sdrf {
        /// ε = 1 − δ.
        epsilon: f64,
        /// How allocation and commitment combine.
        form: PriorityForm,
    },
}

/// A parsed policy specification, remembering how it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicySpec {
    /// The specification as given, e.g. `sdrf:delta=0.999999`.
    pub name: String,
    /// What it means.
    pub ranking: Ranking,
}

impl PolicySpec {
    /// SDRF's time constant τ in seconds (∞ for policies without commitments).
    pub fn tau(&self) -> f64 {
        match self.ranking {
            Ranking::Sdrf { epsilon, .. } => tau_from_epsilon(epsilon),
            _ => f64::INFINITY,
        }
    }

    /// The SDRF specification for δ = 1 − 10^−`k`, written the way the paper writes it.
    pub fn sdrf_with_nines(k: u32) -> PolicySpec {
        let name = format!("sdrf:delta=0.{}", "9".repeat(k as usize));
        let epsilon = 10f64.powi(-(k as i32));
        PolicySpec {
            name,
            ranking: Ranking::Sdrf {
                epsilon,
                form: PriorityForm::SumOfMaxes,
            },
        }
    }
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl FromStr for PolicySpec {
    type Err = PolicySpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let error = |problem: &str| PolicySpecError {
            given: s.into(),
            problem: problem.into(),
        };
        let (base, params) = s.split_once(':').unwrap_or((s, ""));
        let ranking = match base {
            "fifo" if params.is_empty() => Ranking::Fifo,
            "sdrf" => parse_sdrf(params).map_err(|p| error(&p))?,
            _ if params.is_empty() => Ranking::Stateless(base.parse().map_err(|_| {
                error("expected fifo, drf, weighted-drf, asset or sdrf[:delta=D|:epsilon=E][,form=sum-of-maxes|max-of-sums]")
            })?),
            _ => return Err(error("only sdrf takes parameters")),
        };
        Ok(PolicySpec {
            name: s.into(),
            ranking,
        })
    }
}

fn parse_sdrf(params: &str) -> Result<Ranking, String> {
    let mut epsilon = 1e-6;
    let mut form = PriorityForm::SumOfMaxes;
    for param in params.split(',').filter(|p| !p.is_empty()) {
        let (key, value) = param
            .split_once('=')
            .ok_or(format!("expected key=value, found {param:?}"))?;
        let number = || {
            value
                .parse::<f64>()
                .map_err(|_| format!("{key}: expected a number, found {value:?}"))
        };
        match key {
            "delta" => epsilon = 1.0 - number()?,
            "epsilon" => epsilon = number()?,
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
            _ => {
                return Err(format!(
                    "unknown parameter {key:?} (expected delta, epsilon or form)"
                ))
            }
        }
    }
    if !(0.0..=1.0).contains(&epsilon) {
        return Err(format!("delta must lie in [0, 1], found {}", 1.0 - epsilon));
    }
    Ok(Ranking::Sdrf { epsilon, form })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!("fifo".parse::<PolicySpec>().unwrap().ranking, Ranking::Fifo);
        assert_eq!(
            "drf".parse::<PolicySpec>().unwrap().ranking,
            Ranking::Stateless(Policy::Drf)
        );
        let sdrf: PolicySpec = "sdrf:delta=0.999999".parse().unwrap();
        assert!((sdrf.tau() - 999_999.5).abs() < 1e-2, "{}", sdrf.tau());
        assert_eq!(sdrf.to_string(), "sdrf:delta=0.999999");
        let printed: PolicySpec = "sdrf:epsilon=1e-3,form=max-of-sums".parse().unwrap();
        assert_eq!(
            printed.ranking,
            Ranking::Sdrf {
                epsilon: 1e-3,
                form: PriorityForm::MaxOfSums
            }
        );
        assert_eq!(PolicySpec::sdrf_with_nines(3).name, "sdrf:delta=0.999");
    }

    #[test]
    fn rejects_nonsense() {
        for bad in [
            "fair",
            "drf:delta=0.9",
            "sdrf:delta=x",
            "sdrf:delta=2",
            "sdrf:gamma=1",
            "sdrf:form=best",
        ] {
            assert!(bad.parse::<PolicySpec>().is_err(), "{bad}");
        }
    }
}
