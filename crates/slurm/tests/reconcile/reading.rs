//! What a pass reads of Slurm and says about it: garbage, the priority type and weights, the
//! version, the half-life, `since`, several clusters.

use super::*;

#[test]
fn garbage_from_slurm_is_an_error_that_names_the_command() {
    let mut fake = Fake::new();
    fake.outputs.insert("squeue", "<html>503</html>".into());
    let mut adapter = slurm_adapter(&fake, &config("sdrf")).unwrap();
    let error = adapter.pass(now()).unwrap_err();
    assert!(matches!(error, SlurmError::Answer(Unread::Read { .. })));
    let shown = fairshare_core::error::Chain(&error).to_string();
    assert!(
        shown.starts_with("`squeue --json`: not Slurm's JSON"),
        "{shown}"
    );
}

#[test]
fn priority_basic_is_refused_and_a_fairshare_weight_under_replace_is_said() {
    let mut fake = Fake::new();
    fake.outputs
        .insert("scontrol", "PriorityType = priority/basic\n".into());
    let mut adapter = slurm_adapter(&fake, &config("sdrf")).unwrap();
    assert!(matches!(
        adapter.pass(now()),
        Err(SlurmError::PriorityType(_))
    ));
    let mut fake = Fake::new();
    let text = "PriorityType = priority/multifactor\nPriorityWeightFairShare = 100000\n";
    fake.outputs.insert("scontrol", text.into());
    let mut adapter = slurm_adapter(&fake, &config("sdrf")).unwrap();
    let pass = adapter.pass(now()).unwrap();
    let said = |part: &str| pass.notes.iter().any(|note| note.contains(part));
    assert!(
        said("PriorityWeightFairshare is 100000"),
        "{:?}",
        pass.notes
    );
}

/// Every pass names the Slurm it talks to; a version fairshare is not tested on, or none
/// printed, is said in a note.
#[test]
fn a_pass_names_the_slurm_version_and_says_when_it_is_not_tested() {
    let notes_of = |config_text: &str| {
        let mut fake = Fake::new();
        fake.outputs.insert("scontrol", config_text.into());
        let pass = slurm_adapter(&fake, &config("sdrf"))
            .unwrap()
            .pass(now())
            .unwrap();
        (pass.version, pass.notes)
    };
    let base = "PriorityType = priority/multifactor\nPriorityWeightFairShare = 0\n";
    let (version, notes) = notes_of(&format!("{base}SLURM_VERSION = 22.05.8\n"));
    assert_eq!(
        version.map(|v| v.to_string()).as_deref(),
        Some("Slurm 22.05.8 (tested)")
    );
    assert!(
        notes
            .iter()
            .all(|n| !n.contains("SLURM_VERSION") && !n.contains("tested")),
        "{notes:?}"
    );
    let (version, notes) = notes_of(&format!("{base}SLURM_VERSION = 23.11.10\n"));
    assert_eq!(version.map(|v| v.tested), Some(false));
    let untested = notes
        .iter()
        .find(|n| n.starts_with("Slurm 23.11.10 is not a version"));
    assert!(
        untested.is_some_and(|n| n.contains("tested: 22.05, 24.11")),
        "{notes:?}"
    );
    let (version, notes) = notes_of(base);
    assert_eq!(version, None);
    assert!(
        notes.iter().any(|n| n.contains("printed no SLURM_VERSION")),
        "{notes:?}"
    );
}

/// A policy whose text gives it no memory remembers as long as Slurm's
/// `PriorityDecayHalfLife` (as Slurm reads it, in whole minutes), as the replay of a what-if
/// runs it; one whose text gives it one keeps it; a note says which either way.
#[test]
fn a_policy_remembers_as_long_as_slurms_half_life_unless_it_says() {
    let mut fake = Fake::new();
    let text = "PriorityType = priority/multifactor\nPriorityWeightFairShare = 0\nPriorityDecayHalfLife = 00:10:00\n";
    fake.outputs.insert("scontrol", text.into());
    let pass = |policy: &str| {
        slurm_adapter(&fake, &config(policy))
            .unwrap()
            .pass(now())
            .unwrap()
    };
    let plain = pass("sdrf");
    assert!(
        plain.policy.starts_with("sdrf:epsilon=0.00115"),
        "{}",
        plain.policy
    );
    let said = plain
        .notes
        .iter()
        .find(|n| n.contains("PriorityDecayHalfLife"));
    assert!(
        said.unwrap().contains("policy sdrf: run as sdrf:epsilon="),
        "{:?}",
        plain.notes
    );
    let epsilon = plain.policy.split_once('=').unwrap().1;
    let spelled = pass(&format!("sdrf:epsilon={epsilon}"));
    assert_eq!(
        plain.plan.standings, spelled.plan.standings,
        "the same policy"
    );
    let own = pass("sdrf:delta=0.999999");
    assert_eq!(own.policy, "sdrf:delta=0.999999");
    assert!(own
        .notes
        .iter()
        .any(|n| n.contains("keeps the memory its text gives it")));
    assert_eq!(
        pass("fairshare").policy,
        "fairshare:usage=billing,decay=half-life:600"
    );
    let drf = pass("drf");
    assert_eq!(drf.policy, "drf");
    assert!(!drf
        .notes
        .iter()
        .any(|n| n.contains("PriorityDecayHalfLife")));
}

/// A clean start: with `since`, the history is rebuilt from that moment, not from the whole
/// window, so usage Slurm's RawUsage=0 cleared is not brought back from `sacct`.
#[test]
fn since_starts_the_history_clean() {
    let fake = Fake::new();
    let pass = |since: Option<&str>| {
        let mut config = config(FAIR_TREE);
        config.shared.since = since.map(str::to_owned);
        slurm_adapter(&fake, &config).unwrap().pass(now()).unwrap()
    };
    let whole = pass(None);
    let clean = pass(Some("2026-11-24T06:57:59"));
    let counted =
        |p: &fairshare_reconcile::pass::Pass| -> f64 { p.usage.iter().map(|u| u.counted).sum() };
    assert!(counted(&whole) > 0.0);
    assert!(
        counted(&clean) < counted(&whole),
        "{} {}",
        counted(&clean),
        counted(&whole)
    );
    let rebuilt = clean.rebuilt.unwrap();
    assert!(rebuilt.contains("since 2026-11-24T06:57:59"), "{rebuilt}");
    let mut wrong = config(FAIR_TREE);
    wrong.shared.since = Some("yesterday".into());
    let refused = slurm_adapter(&fake, &wrong).err().unwrap().to_string();
    assert!(
        refused.contains("since = \"yesterday\": a UTC moment"),
        "{refused}"
    );
}

/// An age weight as large as the gap between two site factors is warned of in the pass.
#[test]
fn other_weights_that_can_cross_the_factors_gaps_are_warned_of() {
    let mut fake = Fake::new();
    let text = "PriorityType = priority/multifactor\nPriorityWeightFairShare = 0\nPriorityWeightAge = 1000\n";
    fake.outputs.insert("scontrol", text.into());
    let pass = slurm_adapter(&fake, &config("sdrf"))
        .unwrap()
        .pass(now())
        .unwrap();
    let warned = pass
        .notes
        .iter()
        .find(|n| n.contains("can reorder jobs across such a gap"));
    assert!(
        warned.is_some_and(|n| n.contains("PriorityWeightAge=1000")),
        "{:?}",
        pass.notes
    );
    fake.outputs.insert("scontrol", text.replace("1000", "1"));
    let pass = slurm_adapter(&fake, &config("sdrf"))
        .unwrap()
        .pass(now())
        .unwrap();
    assert!(
        !pass.notes.iter().any(|n| n.contains("can reorder")),
        "{:?}",
        pass.notes
    );
}

/// A slurmdbd that serves two clusters lists both in `sacctmgr`: the adapter ranks the one
/// `scontrol show config` names (`ClusterName`) unless its configuration names one, and
/// without either it says which to choose.
#[test]
fn the_cluster_scontrol_names_is_ranked_when_sacctmgr_lists_several() {
    let mut fake = Fake::new();
    let both = recorded("sacctmgr.txt") + &recorded("sacctmgr.txt").replace("fairshare|", "peer|");
    fake.outputs.insert("sacctmgr", both);
    let mut adapter = slurm_adapter(&fake, &config("sdrf")).unwrap();
    let refused = adapter.pass(now()).unwrap_err().to_string();
    assert!(
        refused.contains("several clusters (fairshare, peer)"),
        "{refused}"
    );
    let named = "PriorityType = priority/multifactor\nPriorityWeightFairShare = 0\nClusterName = fairshare\n";
    fake.outputs.insert("scontrol", named.into());
    let mut adapter = slurm_adapter(&fake, &config("sdrf")).unwrap();
    let by_name = adapter.pass(now()).unwrap();
    let mut alone = Fake::new();
    alone.outputs.insert("scontrol", named.into());
    let mut adapter = slurm_adapter(&alone, &config("sdrf")).unwrap();
    let one_cluster = adapter.pass(now()).unwrap();
    assert_eq!(by_name.plan.standings, one_cluster.plan.standings);
    assert!(!by_name.plan.standings.is_empty());
}
