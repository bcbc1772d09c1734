//! Policies by name: every policy fairshare knows, its parameters, and what it builds.
//!
//! The [`registry`] is the one list of policy names; a [`PolicySpec`] is what a parsed name
//! means, and it builds the ranker, the allocation priority or the allocator the policy runs
//! with. It sits above everything it builds: the priorities ([`crate::priority`]), the rankers
//! ([`crate::rank`]) and the allocators ([`crate::alloc`]). A new policy is one file with its
//! priority or ranker and one entry here (docs/architecture.md, "Seams").

pub mod registry;

use crate::priority::{Policy, PriorityForm};
use std::str::FromStr;

pub use registry::{Engine, Factory, PolicyError, PolicyKind, PolicySpec};

impl FromStr for Policy {
    type Err = PolicyError;

    /// A policy usable in an instance file (see [`registry`]): its commitments are given, so
    /// SDRF's discount does not apply there.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let spec = PolicySpec::parse_for(s, Engine::Allocate)?;
        match spec.kind {
            PolicyKind::Stateless(policy) => Ok(policy),
            PolicyKind::Sdrf {
                epsilon: None,
                form,
            } => Ok(Policy::Sdrf(form)),
            PolicyKind::Sdrf { .. } => Err(PolicyError::Parameter {
                given: s.to_owned(),
                problem: "an instance gives each user's commitment, so delta and epsilon do not apply; write sdrf or sdrf:form=…".into(),
            }),
            _ => Err(PolicyError::Parameter {
                given: s.to_owned(),
                problem: "divides resources without priorities (BAA); an instance file runs it in divisible mode".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "drf",
            "weighted-drf",
            "asset",
            "sdrf",
            "sdrf:form=max-of-sums",
        ] {
            let policy: Policy = name.parse().unwrap();
            assert_eq!(policy.to_string(), name);
        }
        assert!("fifo2".parse::<Policy>().is_err());
        assert!("fifo".parse::<Policy>().is_err(), "fifo does not allocate");
        assert!("sdrf:delta=0.9".parse::<Policy>().is_err());
        assert_eq!(
            "wdrf".parse::<Policy>().unwrap(),
            Policy::WeightedDrf,
            "aliases parse"
        );
    }
}
