//! The fairshare functions as a registry: each is one [`FunctionEntry`] in a file of its own
//! and one line in [`FairshareFunction::ALL`](Choice::ALL), and everything that offers them by name (the `function=`
//! parameter of the fairshare policies, `fairshare priorities --policy`, the help, the errors,
//! the documents' names) reads that list. A function with parameters is written
//! `NAME:KEY=VALUE[;KEY=VALUE…]` (`htcondor:floor=0.5`).

use super::entry::{Factor, FunctionEntry, MAX_PARAMS};
use crate::choice::{or_list, Choice};
use crate::error::Invalid;
use serde::{Serialize, Serializer};
use std::fmt;

/// A fairshare function with its parameters' values: what turns shares and usage into a
/// priority factor.
#[derive(Clone, Copy)]
pub struct FairshareFunction {
    entry: &'static FunctionEntry,
    values: [f64; MAX_PARAMS],
}

impl FairshareFunction {
    /// Slurm's Fair Tree (Slurm's default).
    pub const FAIR_TREE: FairshareFunction = FairshareFunction::of(&super::fair_tree::FAIR_TREE);
    /// Slurm's classic factor.
    pub const SLURM_CLASSIC: FairshareFunction =
        FairshareFunction::of(&super::slurm_classic::SLURM_CLASSIC);
    /// PBS Pro's factor.
    pub const PBS: FairshareFunction = FairshareFunction::of(&super::pbs::PBS);
    /// MetaCentrum's factor.
    pub const METACENTRUM: FairshareFunction =
        FairshareFunction::of(&super::metacentrum::METACENTRUM);

    /// Grid Engine's share tree.
    pub const GRID_ENGINE: FairshareFunction =
        FairshareFunction::of(&super::grid_engine::GRID_ENGINE);

    /// `entry` with every parameter at its default.
    pub const fn of(entry: &'static FunctionEntry) -> FairshareFunction {
        let mut values = [0.0; MAX_PARAMS];
        let mut i = 0;
        while i < entry.params.len() {
            values[i] = entry.params[i].default;
            i += 1;
        }
        FairshareFunction { entry, values }
    }

    /// Its registry entry.
    pub fn entry(&self) -> &'static FunctionEntry {
        self.entry
    }

    /// Its parameters' values, in the order of its entry's.
    pub fn values(&self) -> &[f64] {
        &self.values[..self.entry.params.len()]
    }

    /// Whether it is `function`, whatever either's parameters.
    pub fn is(&self, function: FairshareFunction) -> bool {
        self.entry.name == function.entry.name
    }

    /// Whether it is Slurm's Fair Tree.
    pub fn is_fair_tree(&self) -> bool {
        matches!(self.entry.factor, Factor::FairTree)
    }

    /// Whether it is one of Slurm's own factors (Fair Tree or classic), which Slurm computes
    /// itself; any other reaches Slurm as the adapter's site factor.
    pub fn is_slurms(&self) -> bool {
        [
            super::fair_tree::FAIR_TREE.name,
            super::slurm_classic::SLURM_CLASSIC.name,
        ]
        .contains(&self.entry.name)
    }

    /// Parses `NAME[:KEY=VALUE[;KEY=VALUE…]]`; the error names what is wrong and lists what
    /// was expected.
    pub fn parse(text: &str) -> Result<FairshareFunction, Invalid> {
        let (name, params) = text.split_once(':').unwrap_or((text, ""));
        let mut function = FairshareFunction::named(name)
            .ok_or_else(|| format!("expected {}, found {text:?}", FairshareFunction::names()))?;
        let entry = function.entry;
        let mut given = Vec::new();
        for pair in params.split(';').filter(|p| !p.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("{name}: expected key=value, found {pair:?}"))?;
            let Some(i) = entry.params.iter().position(|p| p.key == key) else {
                return Err(Invalid(match entry.params {
                    [] => format!("{name} takes no parameters, found {key:?}"),
                    params => format!(
                        "{name}: unknown parameter {key:?} (expected {})",
                        or_list(params.iter().map(|p| p.key))
                    ),
                }));
            };
            if given.contains(&key) {
                return Err(Invalid(format!("{name}: {key} is given twice")));
            }
            given.push(key);
            let param = &entry.params[i];
            function.values[i] = value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= param.min)
                .ok_or_else(|| {
                    format!(
                        "{name}: {key} must be a number >= {}, found {value:?}",
                        param.min
                    )
                })?;
        }
        Ok(function)
    }

    /// One line per function, its parameters indented below it, as help texts list them.
    pub fn help() -> String {
        let line = |e: &FunctionEntry| {
            let params: String = (e.params.iter())
                .map(|p| format!("\n  {}={}: {} (default {})", p.key, "N", p.about, p.default))
                .collect();
            format!("{}: {}{params}", written(e), e.about)
        };
        (Self::ALL.iter())
            .map(|f| line(f.entry))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// How an entry is written with its parameters: `htcondor[:floor=N]`.
fn written(entry: &FunctionEntry) -> String {
    let params: String = (entry.params.iter().enumerate())
        .map(|(i, p)| format!("[{}{}=N]", if i == 0 { ":" } else { ";" }, p.key))
        .collect();
    format!("{}{params}", entry.name)
}

impl Choice for FairshareFunction {
    /// Every fairshare function, in the order help lists them; the first is the default. A
    /// new function is its file and its line here.
    const ALL: &'static [FairshareFunction] = &[
        FairshareFunction::FAIR_TREE,
        FairshareFunction::SLURM_CLASSIC,
        FairshareFunction::PBS,
        FairshareFunction::METACENTRUM,
        FairshareFunction::of(&super::htcondor::HTCONDOR),
        FairshareFunction::of(&super::grid_engine::GRID_ENGINE),
    ];

    fn name(self) -> &'static str {
        self.entry.name
    }

    fn about(self) -> &'static str {
        self.entry.about
    }
}

impl PartialEq for FairshareFunction {
    fn eq(&self, other: &FairshareFunction) -> bool {
        self.entry.name == other.entry.name && self.values() == other.values()
    }
}

impl fmt::Display for FairshareFunction {
    /// Its name, then each parameter that is not at its default: `htcondor:floor=0.25`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.entry.name)?;
        let changed = (self.entry.params.iter().zip(self.values()))
            .filter(|(p, v)| p.default != **v)
            .enumerate();
        for (i, (param, value)) in changed {
            write!(f, "{}{}={value}", if i == 0 { ":" } else { ";" }, param.key)?;
        }
        Ok(())
    }
}

impl fmt::Debug for FairshareFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FairshareFunction({self})")
    }
}

impl Serialize for FairshareFunction {
    /// As it is written (`fair-tree`, `htcondor:floor=0.25`).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl std::str::FromStr for FairshareFunction {
    type Err = Invalid;

    fn from_str(text: &str) -> Result<FairshareFunction, Invalid> {
        FairshareFunction::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{standings, Association};
    use super::*;
    use crate::model::RawShares;

    /// A root and two users of one share each, with these usages.
    fn two_users(usage: [f64; 2]) -> Vec<Association> {
        let root = Association {
            parent: None,
            shares: RawShares::Count(1.0),
            usage: 0.0,
            user: false,
        };
        let user = |usage| Association {
            parent: Some(0),
            shares: RawShares::Count(1.0),
            usage,
            user: true,
        };
        vec![root, user(usage[0]), user(usage[1])]
    }

    fn factors(function: &str, usage: [f64; 2]) -> Vec<f64> {
        let function = FairshareFunction::parse(function).unwrap();
        let s = standings(&two_users(usage), function).unwrap();
        vec![s[1].factor, s[2].factor]
    }

    /// HTCondor, the function added through the registry: one file and its line in `ALL`.
    /// Normalised shares ½ each; usage 0.2 counts as the floor.
    #[test]
    fn htcondor_divides_shares_by_usage_floored() {
        assert_eq!(factors("htcondor", [0.2, 2.0]), [0.5 / 0.5, 0.5 / 2.0]);
        assert_eq!(
            factors("htcondor:floor=0.1", [0.2, 2.0]),
            [0.5 / 0.2, 0.5 / 2.0]
        );
        // Below the floor every user ties, and tree order breaks the tie.
        let s = standings(&two_users([0.3, 0.1]), "htcondor".parse().unwrap()).unwrap();
        assert_eq!((s[1].rank, s[2].rank), (Some(1), Some(2)));
        let s = standings(&two_users([0.3, 0.1]), "htcondor:floor=0".parse().unwrap()).unwrap();
        assert_eq!((s[1].rank, s[2].rank), (Some(2), Some(1)));
    }

    #[test]
    fn parameters_are_parsed_checked_and_written_back() {
        let f = FairshareFunction::parse("htcondor:floor=0.25").unwrap();
        assert_eq!(f.values(), [0.25]);
        assert_eq!(f.to_string(), "htcondor:floor=0.25");
        assert_eq!(
            serde_json::to_string(&f).unwrap(),
            "\"htcondor:floor=0.25\""
        );
        let default = FairshareFunction::parse("htcondor:floor=0.5").unwrap();
        assert_eq!(default.to_string(), "htcondor", "a default is not written");
        assert_ne!(f, default);
        let error = |text: &str| FairshareFunction::parse(text).unwrap_err();
        assert!(error("htcondor:floor=-1").contains("floor must be a number >= 0"));
        assert!(error("htcondor:floor=nan").contains("floor must be a number"));
        assert!(error("htcondor:cap=1").contains("unknown parameter \"cap\" (expected floor)"));
        assert!(error("htcondor:floor=1;floor=2").contains("floor is given twice"));
        assert!(error("htcondor:floor").contains("expected key=value"));
        assert!(error("pbs:floor=1").contains("pbs takes no parameters"));
        let unknown = error("condor");
        assert!(
            unknown.contains("fair-tree, slurm-classic, pbs, metacentrum, htcondor or grid-engine")
        );
    }

    /// Every registered function is found by its name, written back as it, listed in the help
    /// and the errors, and takes no more parameters than a function may: a new function needs
    /// nothing beyond its file and its line.
    #[test]
    fn every_registered_function_round_trips_and_is_listed() {
        let help = FairshareFunction::help();
        let unknown = FairshareFunction::parse("?").unwrap_err();
        for f in FairshareFunction::ALL {
            assert_eq!(FairshareFunction::parse(f.name()).as_ref(), Ok(f));
            assert_eq!(f.to_string(), f.name());
            assert!(
                help.contains(f.name()) && help.contains(f.about()),
                "{}",
                f.name()
            );
            assert!(unknown.contains(f.name()));
            assert!(f.entry().params.len() <= MAX_PARAMS);
        }
        let names: std::collections::BTreeSet<_> =
            FairshareFunction::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(
            names.len(),
            FairshareFunction::ALL.len(),
            "names are unique"
        );
        assert!(
            FairshareFunction::ALL[0].is_fair_tree(),
            "Fair Tree is the default"
        );
    }
}
