//! What a site's Slurm configuration sets in a replay of its trace, worked out once for the
//! command line, the Python package and the what-if alike: each policy as the site runs it
//! (its memory, refresh, phase and charging taken from the configuration), and for a Slurm
//! dump the site's machines and the billing of its partitions, each with the sentence that
//! says so.

use crate::slurm_conf::{BillingFiles, SlurmSetup};
use fairshare_core::error::Invalid;
use fairshare_core::model::Time;
use fairshare_core::policy::{PolicyKind, PolicySpec};
use fairshare_trace::slurmctld_log::ControllerLog;
use fairshare_trace::Format;
use std::path::{Path, PathBuf};

/// What a site's Slurm configuration sets in a replay of its trace.
#[derive(Debug, Clone)]
pub struct SiteDefaults {
    /// The policies as the site runs them ([`SlurmSetup::site_policy`]).
    pub policies: Vec<PolicySpec>,
    /// A sentence on each value a policy took from the configuration.
    pub notes: Vec<String>,
    /// The files a Slurm dump is billed by, when the configuration's partitions bill it, and
    /// the sentence that says so.
    pub billing: Option<(BillingFiles, String)>,
}

impl SiteDefaults {
    /// `policies` as given, with nothing taken from a configuration.
    pub fn as_given(policies: Vec<PolicySpec>) -> SiteDefaults {
        SiteDefaults {
            policies,
            notes: Vec::new(),
            billing: None,
        }
    }
}

impl SlurmSetup {
    /// `policy` as the site's Slurm computes its own fairshare factor, when it is `fairshare`
    /// (Slurm's own factor) and leaves a parameter out: the configuration's
    /// `PriorityDecayHalfLife` for `decay`, its `PriorityCalcPeriod` (Slurm's default, 5
    /// minutes, when unset) for `refresh`, billing units for `usage` (what Slurm charges), and
    /// `PriorityFlags=NO_FAIR_TREE`'s classic factor for `function`, and the phase of the
    /// recomputations from `started`, when the controller's log says when it started (Slurm
    /// recomputes every `PriorityCalcPeriod` from then) for `refresh-offset`. The policy keeps
    /// the name it was given; the sentence says what it ran with and where each value came
    /// from. Another policy with a memory its text leaves out remembers as long as
    /// `PriorityDecayHalfLife`, as the Slurm adapter runs it (a sentence says so); the rest
    /// come back as they are, without a sentence.
    pub fn site_policy(
        &self,
        policy: PolicySpec,
        started: Option<(Time, &str)>,
    ) -> Result<(PolicySpec, Option<String>), Invalid> {
        let base = policy
            .name
            .split_once(':')
            .map_or(policy.name.as_str(), |(b, _)| b);
        if base != "fairshare" || !matches!(policy.kind, PolicyKind::Fairshare(_)) {
            return Ok(self.site_memory(policy));
        }
        let site = &self.fairshare;
        let calc_s = site.calc_period.as_ref().map_or(300, |(s, _)| *s);
        // The recomputations' period the phase is taken within: the policy's when it sets one.
        let period_s = match policy.kind {
            PolicyKind::Fairshare(settings) if policy.sets("refresh") => settings.refresh_s,
            _ => calc_s as f64,
        };
        let mut added = Vec::new();
        let mut from = Vec::new();
        if !policy.sets("decay") {
            if let Some((half_life_s, text)) = &site.half_life {
                added.push(match half_life_s {
                    0 => "decay=step:86400:1".to_owned(),
                    s => format!("decay=half-life:{s}"),
                });
                from.push(format!("PriorityDecayHalfLife={text}"));
            }
        }
        if !policy.sets("refresh") {
            added.push(format!("refresh={calc_s}"));
            from.push(match &site.calc_period {
                Some((_, text)) => format!("PriorityCalcPeriod={text}"),
                None => "PriorityCalcPeriod unset: Slurm's 5 minutes".to_owned(),
            });
        }
        let period_us = ((period_s * 1e6) as u64).max(1);
        if let (false, Some((started, source))) = (policy.sets("refresh-offset"), started) {
            let offset_s = (started.as_micros() % period_us) as f64 / 1e6;
            added.push(format!("refresh-offset={offset_s}"));
            from.push(source.to_owned());
        }
        if !policy.sets("usage") {
            added.push("usage=billing".to_owned());
            from.push("Slurm charges billing units".to_owned());
        }
        if !policy.sets("function") && site.classic {
            added.push("function=slurm-classic".to_owned());
            from.push("PriorityFlags=NO_FAIR_TREE".to_owned());
        }
        if added.is_empty() {
            return Ok((policy, None));
        }
        let separator = if policy.name.contains(':') { "," } else { ":" };
        let full = format!("{}{separator}{}", policy.name, added.join(","));
        let ran: PolicySpec = full
            .parse()
            .map_err(|e: fairshare_core::policy::PolicyError| Invalid(e.to_string()))?;
        let note = format!(
            "{}: run as {full}, from the Slurm configuration ({}); give these parameters in the policy to set others",
            policy.name,
            from.join(", ")
        );
        Ok((
            PolicySpec {
                name: policy.name,
                ..ran
            },
            Some(note),
        ))
    }

    /// `policy` (not Slurm's own fairshare) remembering as long as the site's
    /// `PriorityDecayHalfLife`, when it has a memory its text leaves out, as the Slurm adapter
    /// runs it there ([`PolicySpec::remembering`]), with the sentence that says so.
    fn site_memory(&self, policy: PolicySpec) -> (PolicySpec, Option<String>) {
        let Some((half_life_s, text)) = &self.fairshare.half_life else {
            return (policy, None);
        };
        match policy.remembering(*half_life_s) {
            Some(ran) => {
                let note = format!(
                    "{}: run as {}, as the Slurm adapter runs it there: its memory halves in the configuration's PriorityDecayHalfLife={text}; give the policy its own to set another",
                    policy.name, ran.name
                );
                (
                    PolicySpec {
                        name: policy.name,
                        ..ran
                    },
                    Some(note),
                )
            }
            None => (policy, None),
        }
    }

    /// The configuration at `path` (this setup's) as the machines, when the caller gives no
    /// capacity and it defines nodes, with the sentence that says so; `(conf, capacity)` spell
    /// the configuration's option and the capacity options (`--slurm-conf`, `--machines or
    /// --capacity` on the command line).
    pub fn site_machines(
        &self,
        path: &Path,
        (conf, capacity): (&str, &str),
    ) -> Option<(PathBuf, String)> {
        self.has_nodes.then(|| {
            let note = format!(
                "machines: the nodes and partitions of {conf} {} (give {capacity} for others)",
                path.display()
            );
            (path.to_path_buf(), note)
        })
    }

    /// The configuration at `path` (this setup's, given as the option spelled `conf`) as the
    /// file a Slurm dump is billed by, when `files` names none and its partitions set
    /// `TRESBillingWeights`: the billing files with it (and `MAX_TRES` when its
    /// `PriorityFlags` say so), and the sentence that says so.
    pub fn site_billing(
        &self,
        files: &BillingFiles,
        (path, conf): (&Path, &str),
    ) -> Option<(BillingFiles, String)> {
        let max_tres = self.billing.filter(|_| files.partitions.is_none())?;
        let note = format!(
            "billing: the partitions' TRESBillingWeights of {conf} {}{} (give {}partitions for others)",
            path.display(),
            if max_tres { ", with PriorityFlags=MAX_TRES" } else { "" },
            files.prefix
        );
        let files = BillingFiles {
            partitions: Some(path.to_path_buf()),
            max_tres: files.max_tres || max_tres,
            ..files.clone()
        };
        Some((files, note))
    }

    /// What this setup, given as the option or key spelled `conf`, sets for `policies`: their
    /// recomputations in phase with the controller `log` when given, and, when `billed` gives
    /// the configuration's path on a Slurm dump billed by the files, the billing of its
    /// partitions. Refused: a policy the configuration cannot complete.
    pub fn site_defaults(
        &self,
        conf: &str,
        policies: Vec<PolicySpec>,
        log: Option<&ControllerLog>,
        billed: Option<(&Path, &BillingFiles)>,
    ) -> Result<SiteDefaults, Invalid> {
        let started = log.and_then(ControllerLog::recomputations_phase);
        let started = started.map(|(at, what)| (at, format!("{what} in its log")));
        let started = started.as_ref().map(|(at, what)| (*at, what.as_str()));
        let mut site = SiteDefaults::as_given(Vec::with_capacity(policies.len()));
        for policy in policies {
            let (policy, note) = self.site_policy(policy, started)?;
            site.notes
                .extend(note.map(|note| format!("{conf}: {note}")));
            site.policies.push(policy);
        }
        site.billing = billed.and_then(|(path, files)| self.site_billing(files, (path, conf)));
        Ok(site)
    }
}

/// Whether a trace is a Slurm dump, as its `format` says, or else as its `first` file shows:
/// a site's Slurm configuration stands for its machines and bills its jobs only then.
pub fn is_slurm_dump(format: Option<Format>, first: Option<&Path>) -> bool {
    let detected = || first.and_then(|path| Format::detect(path).ok());
    format.or_else(detected) == Some(Format::SACCT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slurm_conf::slurm_setup;

    /// Slurm's own `fairshare` takes what its text leaves out from the configuration, as Slurm
    /// reads it; what it sets stays; other policies are left alone.
    #[test]
    fn a_fairshare_policy_takes_the_sites_settings_it_leaves_out() {
        use fairshare_core::priority::fairshare::FairshareFunction;
        use fairshare_core::usage::decay::Decay;
        let conf = "PriorityDecayHalfLife=00:10:00\nPriorityCalcPeriod=00:00:30\nPriorityFlags=NO_FAIR_TREE\n";
        let setup = slurm_setup(conf).unwrap();
        let settings = |spec: &PolicySpec| match spec.kind {
            PolicyKind::Fairshare(settings) => settings,
            _ => panic!("{spec:?}"),
        };
        let (ran, note) = setup
            .site_policy("fairshare".parse().unwrap(), None)
            .unwrap();
        let ran_with = settings(&ran);
        assert_eq!(ran.name, "fairshare", "the name as given");
        assert_eq!(ran_with.decay, Decay::Continuous { half_life_s: 600.0 });
        assert_eq!(ran_with.refresh_s, 60.0, "30 s is a minute to Slurm");
        assert_eq!(ran_with.metric.entry().name, "billing");
        assert_eq!(ran_with.function, FairshareFunction::SLURM_CLASSIC);
        assert_eq!(note.unwrap(), "fairshare: run as fairshare:decay=half-life:600,refresh=60,usage=billing,function=slurm-classic, from the Slurm configuration (PriorityDecayHalfLife=00:10:00, PriorityCalcPeriod=00:00:30, Slurm charges billing units, PriorityFlags=NO_FAIR_TREE); give these parameters in the policy to set others");
        let given = "fairshare:decay=half-life:7d,refresh=120,usage=cpu,function=fair-tree";
        let started = Time::from_micros(1_767_225_600_000_000 + 75_250_000);
        let (ran, note) = setup
            .site_policy(
                given.parse().unwrap(),
                Some((started, "the controller's start in its log")),
            )
            .unwrap();
        assert_eq!(
            settings(&ran).decay,
            Decay::Continuous {
                half_life_s: 604_800.0
            }
        );
        assert_eq!(
            settings(&ran).refresh_offset_s,
            75.25,
            "within the policy's 120 s"
        );
        assert!(note.unwrap().contains("refresh-offset=75.25, from the Slurm configuration (the controller's start in its log)"));
        let (ran, note) = setup
            .site_policy(
                "sdrf".parse().unwrap(),
                Some((started, "the controller's start in its log")),
            )
            .unwrap();
        assert_eq!(ran.name, "sdrf", "the name as given");
        assert!(note.unwrap().contains("sdrf: run as sdrf:epsilon=0.00115"));
        let PolicyKind::Sdrf {
            epsilon: Some(e), ..
        } = ran.kind
        else {
            panic!("{ran:?}")
        };
        assert!(
            ((1.0 - e).powi(600) - 0.5).abs() < 1e-12,
            "halves in 10 minutes"
        );
        for alone in ["sdrf:delta=0.9", "drf"] {
            let (ran, note) = setup.site_policy(alone.parse().unwrap(), None).unwrap();
            assert_eq!((ran.name.as_str(), note), (alone, None));
        }
    }
}
