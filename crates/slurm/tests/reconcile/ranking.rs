//! The recorded cluster ranked: in sshare's order, associations with `parent` and 0 shares,
//! under every replaying policy, the same plan byte for byte, Fair Tree's check of ties, an
//! account tree with a circle.

use super::*;

#[test]
fn fair_tree_on_the_recorded_cluster_agrees_with_sshare_and_keeps_the_factor_slurm_holds() {
    let fake = Fake::new();
    let mut adapter = slurm_adapter(&fake, &config(FAIR_TREE)).unwrap();
    let pass = adapter.pass(now()).unwrap();
    let order: Vec<&str> = pass
        .plan
        .standings
        .iter()
        .map(|s| s.user.as_str())
        .collect();
    // sshare's FairShare: u2 1.0, u1 0.75, u4 0.5 (u3 waits for nothing).
    assert_eq!(order, ["u2", "u1", "u4"]);
    let check = pass.check.as_ref().unwrap();
    assert!(check.agrees, "{check:?}");
    let wanted: Vec<(u64, Option<i64>, Option<i64>)> = (pass.plan.jobs.iter())
        .map(|j| (j.id, j.held, j.wanted))
        .collect();
    // u2's job 9 already holds 500, which falls along the order: it keeps it, and the jobs
    // after it are spread below.
    assert_eq!(
        wanted,
        [
            (8, Some(-300), Some(334)),
            (9, Some(500), Some(500)),
            (10, Some(0), Some(167))
        ]
    );
    assert_eq!((pass.plan.runs, pass.plan.writes.len()), (3, 2));
    // scontrol show config, sacctmgr, sinfo, scontrol show partition, sacctmgr show qos,
    // sacct, squeue, sprio, sshare.
    assert_eq!(pass.reads, 9);
    assert!(fake.writes().is_empty(), "a pass writes nothing");
    assert_eq!(pass.running, 2, "jobs 7 and 11 are still running");
    assert!(pass
        .rebuilt
        .as_deref()
        .unwrap()
        .starts_with("no history yet: usage rebuilt from sacct since"));
}

#[test]
fn associations_with_parent_and_zero_shares_are_ranked() {
    let mut fake = Fake::new();
    let tree = recorded("sacctmgr.txt")
        .replace(
            "fairshare|chemistry|u4||1|",
            "fairshare|chemistry|u4||parent|",
        )
        .replace("fairshare|chemistry|u3||1|", "fairshare|chemistry|u3||0|");
    fake.outputs.insert("sacctmgr", tree);
    for policy in ["sdrf", FAIR_TREE] {
        let mut adapter = slurm_adapter(&fake, &config(policy)).unwrap();
        let pass = adapter.pass(now()).unwrap();
        let job = pass.plan.jobs.iter().find(|j| j.id == 10).unwrap();
        assert!(job.wanted.is_some(), "{policy}: {job:?}");
        assert!(
            !pass.notes.iter().any(|n| n.contains("is not ranked")),
            "{policy}: {:?}",
            pass.notes
        );
        let place = |user: &str| {
            pass.plan
                .standings
                .iter()
                .find(|s| s.user == user)
                .map(|s| s.place)
        };
        assert!(place("u4").is_some(), "{policy}: {:?}", pass.plan.standings);
        if policy == FAIR_TREE {
            // Fair Tree: the `parent` user first among chemistry, the 0-share user last.
            if let Some(u3) = place("u3") {
                assert!(place("u4") < Some(u3), "{:?}", pass.plan.standings);
            }
        }
    }
}

#[test]
fn every_policy_of_the_registry_that_replays_can_rank_the_cluster() {
    let names: Vec<&str> = (POLICIES.iter())
        .filter(|e| e.engines.contains(&Engine::Replay))
        .map(|e| e.name)
        .collect();
    assert!(names.len() >= 8, "{names:?}");
    for name in names {
        let fake = Fake::new();
        let mut adapter = slurm_adapter(&fake, &config(name)).unwrap();
        let pass = adapter
            .pass(now())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let ranked: Vec<&str> = pass
            .plan
            .standings
            .iter()
            .map(|s| s.user.as_str())
            .collect();
        let mut sorted = ranked.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, ["u1", "u2", "u4"], "{name}");
        assert_eq!(pass.plan.left_alone(), 0, "{name}");
    }
}

#[test]
fn the_same_state_gives_the_same_plan_byte_for_byte() {
    let plan = |_| {
        let fake = Fake::new();
        let mut adapter = slurm_adapter(&fake, &config("sdrf")).unwrap();
        serde_json::to_string(&adapter.pass(now()).unwrap()).unwrap()
    };
    assert_eq!(plan(0), plan(1));
}

#[test]
fn the_fair_tree_check_takes_slurm_s_ties_as_either_order() {
    use fairshare_slurm::adapter::fair_tree_check;
    let check = |slurm: &[(&str, f64)], fairshare: &[&str]| {
        fair_tree_check(
            slurm.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
            fairshare.iter().map(|n| n.to_string()).collect(),
        )
    };
    let tied = [("bob (physics)", 1.0), ("carol (chemistry)", 1.0)];
    assert!(check(&tied, &["carol (chemistry)", "bob (physics)"]).agrees);
    let apart = [("bob (physics)", 1.0), ("carol (chemistry)", 0.5)];
    assert!(check(&apart, &["bob (physics)", "carol (chemistry)"]).agrees);
    assert!(!check(&apart, &["carol (chemistry)", "bob (physics)"]).agrees);
}

#[test]
fn an_account_tree_with_a_circle_is_walked_once() {
    use fairshare_slurm::assoc::parse_assoc;
    use fairshare_slurm::clients::clients;
    let text = "c|root|||1|\nc|a|||1|root\nc|b|||1|a\nc|a|||1|b\nc|b|u1||1|\n";
    let tree = parse_assoc(text).unwrap();
    let clients = clients(&tree, None).unwrap();
    assert_eq!(clients.names, [("b".to_string(), "u1".to_string())]);
}
