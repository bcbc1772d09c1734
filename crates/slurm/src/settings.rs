//! Slurm's settings that change what its fairshare factor means, read from `scontrol show
//! config`, and a note naming each one fairshare does not model: an administrator must see
//! what the adapter ignores, never find it out from a queue that behaves otherwise.
//!
//! Which settings count (Slurm 22.05, `priority_multifactor.c`, `fair_tree.c`,
//! `assoc_mgr.c`): the `PriorityFlags` that choose the algorithm (`NO_FAIR_TREE`,
//! `DEPTH_OBLIVIOUS`), `PriorityUsageResetPeriod`, `PriorityDecayHalfLife` against the policy's
//! own decay, and what a job is charged: Slurm's billing units (`TRESBillingWeights`,
//! `MAX_TRES`, QOS `UsageFactor`), which the adapter reads and charges under `usage=billing`
//! (its default), and names when the policy charges something else. The other flags change other factors
//! (age, job size, the normalisation of partition, QOS, association and TRES factors) or when
//! priorities are recomputed, not the fairshare factor; they are named once as not read.

use fairshare_core::model::slurm_conf_duration;
use fairshare_core::policy::{PolicyKind, PolicySpec};
use fairshare_core::usage::decay::Decay;
use fairshare_core::usage::metric::billing::BILLING;

/// A note for each setting of Slurm's `scontrol show config` (`value` finds a setting's value)
/// that changes the fairshare factor and that fairshare does not model under `policy`.
pub fn unmodelled<'a>(
    value: impl Fn(&str) -> Option<&'a str> + Copy,
    policy: &PolicySpec,
) -> Vec<String> {
    let mut notes = Vec::new();
    for flag in priority_flags(value) {
        if let Some(note) = flag_note(flag) {
            notes.push(format!("Slurm's PriorityFlags has {flag}: {note}"));
        }
    }
    if let Some(note) = usage_note(policy) {
        notes.push(note);
    }
    let reset = value("PriorityUsageResetPeriod").unwrap_or("NONE");
    if !matches!(reset, "NONE" | "") {
        notes.push(format!(
            "Slurm's PriorityUsageResetPeriod is {reset}: Slurm zeroes every association's usage then, the adapter's policies do not (`fairshare priorities --decay slurm:…,reset={}` models it); the ranking differs after each reset",
            reset.to_ascii_lowercase()
        ));
    }
    if let Some(note) = decay_note(value("PriorityDecayHalfLife"), policy) {
        notes.push(note);
    }
    notes
}

/// The `PriorityFlags` of Slurm's `scontrol show config` (`value` finds a setting's value).
pub fn priority_flags<'a>(
    value: impl Fn(&str) -> Option<&'a str>,
) -> impl Iterator<Item = &'a str> {
    (value("PriorityFlags").unwrap_or_default().split(','))
        .map(str::trim)
        .filter(|f| !f.is_empty())
}

/// Slurm's weighted priority terms other than the site factor, by the setting that weighs
/// each (`value` finds a setting's value), those set above 0: each adds at most its weight
/// to a job's priority, so together they can reorder two jobs whose site factors differ by
/// less than their sum. `PriorityWeightTRES` counts the sum of its weights.
pub fn other_weights<'a>(value: impl Fn(&str) -> Option<&'a str>) -> Vec<(&'static str, u64)> {
    const TERMS: [&str; 6] = [
        "PriorityWeightAge",
        "PriorityWeightJobSize",
        "PriorityWeightPartition",
        "PriorityWeightQOS",
        "PriorityWeightAssoc",
        "PriorityWeightFairShare",
    ];
    let number = |text: &str| text.trim().parse::<u64>().unwrap_or(0);
    let tres = value("PriorityWeightTRES").unwrap_or_default();
    let tres: u64 = (tres.split(',').filter_map(|t| t.split_once('=')))
        .map(|(_, w)| number(w))
        .sum();
    (TERMS.iter())
        .map(|key| (*key, value(key).map_or(0, number)))
        .chain(std::iter::once(("PriorityWeightTRES", tres)))
        .filter(|(_, weight)| *weight > 0)
        .collect()
}

/// A warning when Slurm's `others` weighted terms ([`other_weights`]) add up to as much as
/// the smallest gap between two of the site factors `wanted` (written with `weight` as the
/// highest), naming the weight that would keep the policy's order.
pub fn gap_note(others: &[(&str, u64)], wanted: &[i64], weight: u32) -> Option<String> {
    let mut factors: Vec<i64> = wanted.to_vec();
    factors.sort_unstable();
    factors.dedup();
    let gap = factors.windows(2).map(|w| w[1] - w[0]).min()? as u64;
    let sum: u64 = others.iter().map(|(_, w)| w).sum();
    if sum < gap {
        return None;
    }
    let terms: Vec<String> = others.iter().map(|(k, w)| format!("{k}={w}")).collect();
    let safe = u64::from(weight) * sum / gap + 1;
    let remedy = match safe <= u64::from(crate::config::MOST_WEIGHT) {
        true => format!("a weight of {safe} or more keeps it (weight = {safe} in the adapter's configuration), or lower those weights"),
        false => format!("no weight Slurm can hold (at most {}) keeps it: lower those weights", crate::config::MOST_WEIGHT),
    };
    Some(format!(
        "the site factors written differ by as little as {gap}, and Slurm's other weighted terms ({}) add up to {sum}: they can reorder jobs across such a gap, against the policy's order; {remedy}",
        terms.join(", ")
    ))
}

/// A note when a fairshare policy charges something other than Slurm's billing units.
fn usage_note(policy: &PolicySpec) -> Option<String> {
    let PolicyKind::Fairshare(settings) = policy.kind else {
        return None;
    };
    (settings.metric.entry().name != BILLING.name).then(|| {
        format!(
            "the policy charges usage={}, Slurm charges billing units (TRESBillingWeights, QOS UsageFactor): its usage is not Slurm's (leave usage= out, or set usage=billing, to follow Slurm)",
            settings.metric
        )
    })
}

/// What a flag means for fairshare, when it changes the fairshare factor or is not read.
fn flag_note(flag: &str) -> Option<&'static str> {
    Some(match flag {
        "FAIR_TREE" | "MAX_TRES" => return None,
        "NO_FAIR_TREE" => "Slurm's own fairshare factor is classic, not Fair Tree (fairshare models it as fairshare:function=slurm-classic; the Fair Tree check beside sshare does not apply)",
        "DEPTH_OBLIVIOUS" => "Slurm's own fairshare factor is the depth-oblivious classic one, which fairshare does not model",
        _ => "not read: it changes factors other than fairshare's, or when they are recomputed",
    })
}

/// A note when Slurm decays usage differently from a fairshare policy's half-life.
fn decay_note(half_life: Option<&str>, policy: &PolicySpec) -> Option<String> {
    let PolicyKind::Fairshare(settings) = policy.kind else {
        return None;
    };
    let slurm_s = slurm_conf_duration(half_life?).ok().flatten()?;
    let policy_s = match settings.decay {
        Decay::Continuous { half_life_s } | Decay::Slurm { half_life_s, .. } => half_life_s,
        Decay::Step { .. } => return None,
    };
    if slurm_s == 0 {
        return Some(format!(
            "Slurm's PriorityDecayHalfLife is 0: Slurm never decays usage, the policy halves it every {policy_s} s (set decay=step:86400:1, which never decays, to follow Slurm)"
        ));
    }
    ((slurm_s as f64 - policy_s).abs() > 0.5).then(|| {
        format!(
            "Slurm's PriorityDecayHalfLife is {slurm_s} s, the policy's half-life {policy_s} s: the policy's usage is not Slurm's (set decay=half-life:{slurm_s} to follow Slurm)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Age and QOS weights that add up to a gap between factors warn, naming the weight that
    /// keeps the order; below the gap, or with one factor only, nothing is said.
    #[test]
    fn weights_that_can_cross_the_smallest_gap_are_warned_of() {
        let config = [
            ("PriorityWeightAge", "2000"),
            ("PriorityWeightQOS", "500"),
            ("PriorityWeightFairShare", "0"),
            ("PriorityWeightTRES", "CPU=100,Mem=50"),
        ];
        let value = |key: &str| config.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        let others = other_weights(value);
        assert_eq!(
            others,
            [
                ("PriorityWeightAge", 2000),
                ("PriorityWeightQOS", 500),
                ("PriorityWeightTRES", 150)
            ]
        );
        // Four ranks under weight 10000: 10000, 7500, 5000, 2500, a gap of 2500 < 2650.
        let note = gap_note(&others, &[10_000, 7_500, 5_000, 2_500, 7_500], 10_000).unwrap();
        assert!(note.contains("differ by as little as 2500"), "{note}");
        assert!(note.contains("add up to 2650"), "{note}");
        assert!(note.contains("a weight of 10601 or more"), "{note}");
        assert_eq!(gap_note(&others, &[100_000, 75_000], 100_000), None);
        assert_eq!(gap_note(&others, &[10_000, 10_000], 10_000), None);
        assert!(gap_note(&others, &[2, 1], 1_000_000_000)
            .unwrap()
            .contains("no weight Slurm can hold"));
    }

    fn notes(config: &[(&str, &str)], policy: &str) -> Vec<String> {
        let policy: PolicySpec = policy.parse().unwrap();
        let value = |key: &str| config.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        unmodelled(value, &policy)
    }

    #[test]
    fn every_setting_that_changes_fairshare_and_is_not_modelled_is_named() {
        let config = [
            ("PriorityFlags", "NO_FAIR_TREE,MAX_TRES,CALCULATE_RUNNING"),
            ("PriorityUsageResetPeriod", "QUARTERLY"),
            ("PriorityDecayHalfLife", "7-00:00:00"),
        ];
        let n = notes(&config, "fairshare:function=fair-tree,decay=half-life:600");
        assert_eq!(n.len(), 5, "{n:#?}");
        assert!(n[0].contains("NO_FAIR_TREE") && n[0].contains("slurm-classic"));
        assert!(n[1].contains("CALCULATE_RUNNING") && n[1].contains("not read"));
        assert!(
            n[2].contains("usage=cpu") && n[2].contains("billing"),
            "{}",
            n[2]
        );
        assert!(n[3].contains("QUARTERLY") && n[3].contains("reset=quarterly"));
        assert!(
            n[4].contains("604800 s") && n[4].contains("600 s"),
            "{}",
            n[4]
        );
        // Slurm's defaults under a policy that follows them: nothing to say; MAX_TRES is
        // modelled by the billing metric.
        let quiet = [
            ("PriorityFlags", "MAX_TRES"),
            ("PriorityUsageResetPeriod", "NONE"),
            ("PriorityDecayHalfLife", "00:10:00"),
        ];
        let billed = "fairshare:function=fair-tree,decay=half-life:600,usage=billing";
        assert_eq!(notes(&quiet, billed), Vec::<String>::new());
        assert!(
            notes(&config[..1], "sdrf").len() == 2,
            "flags are named under every policy"
        );
        let never = [("PriorityDecayHalfLife", "00:00:00")];
        assert!(
            notes(&never, "fairshare:decay=half-life:600,usage=billing")[0]
                .contains("never decays")
        );
    }
}
