//! The reconcile on outputs recorded from the live Slurm 22.05 (users renamed u1–u4): a fake
//! Slurm answers each command with its recorded output, keeps the site factors written to it,
//! and can refuse writes, ignore them or answer garbage.

use fairshare_core::model::Time;
use fairshare_core::policy::registry::POLICIES;
use fairshare_core::policy::Engine;
use fairshare_reconcile::command::Unread;
use fairshare_slurm::adapter::{adapter as slurm_adapter, SlurmError};
use fairshare_slurm::command::CommandError;
use fairshare_slurm::command::Commands;
use fairshare_slurm::config::SlurmConfig;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

/// A recorded output.
fn recorded(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// The recorded cluster's one partition, as `scontrol --oneliner show partition` prints it:
/// no billing weights, so jobs are billed their CPUs.
const PARTITIONS: &str = "PartitionName=main AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL \
    AllocNodes=ALL Default=YES QoS=N/A DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO \
    GraceTime=0 Hidden=NO MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO \
    MaxCPUsPerNode=UNLIMITED Nodes=vm PriorityJobFactor=1 PriorityTier=1 RootOnly=NO \
    ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF State=UP TotalCPUs=8 \
    TotalNodes=1 SelectTypeParameters=NONE JobDefaults=(null) DefMemPerNode=UNLIMITED \
    MaxMemPerNode=UNLIMITED TRES=cpu=8,mem=7900M,node=1,billing=8\n";

/// What the fake does with `scontrol update`.
#[derive(Clone, Copy, PartialEq)]
enum Writes {
    Take,
    Refuse,
    Ignore,
}

/// A Slurm of recorded outputs whose site factors follow the writes it takes.
struct Fake {
    outputs: BTreeMap<&'static str, String>,
    held: RefCell<BTreeMap<u64, i64>>,
    writes: Writes,
    calls: RefCell<Vec<String>>,
    /// A program that fails as a command whose daemon is down (`sacct` without slurmdbd).
    down: std::cell::Cell<Option<&'static str>>,
}

impl Fake {
    fn new() -> Fake {
        let mut outputs = BTreeMap::new();
        for (command, file) in [
            ("squeue", "squeue.json"),
            ("sacctmgr", "sacctmgr.txt"),
            ("sinfo", "sinfo.json"),
            ("sacct", "sacct.txt"),
            ("sshare", "sshare.txt"),
        ] {
            outputs.insert(command, recorded(file));
        }
        outputs.insert(
            "scontrol",
            "PriorityType            = priority/multifactor\nPriorityWeightFairShare = 0\nSLURM_VERSION           = 22.05.8\n".into(),
        );
        let held = recorded("sprio.txt")
            .lines()
            .map(|l| l.split_once('|').unwrap())
            .map(|(id, s)| (id.parse().unwrap(), s.parse().unwrap()))
            .collect();
        Fake {
            outputs,
            held: RefCell::new(held),
            writes: Writes::Take,
            calls: RefCell::new(Vec::new()),
            down: std::cell::Cell::new(None),
        }
    }

    fn writes(&self) -> Vec<String> {
        let calls = self.calls.borrow();
        calls
            .iter()
            .filter(|c| c.contains("update"))
            .cloned()
            .collect()
    }
}

impl Commands for &Fake {
    fn run(&self, command: &[&str]) -> Result<String, CommandError> {
        self.calls.borrow_mut().push(command.join(" "));
        if self.down.get() == command.first().copied() {
            return Err(CommandError::Failed {
                command: command.join(" "),
                status: std::process::ExitStatus::from_raw(1 << 8),
                stderr: "Problem talking to the database: Connection refused".into(),
            });
        }
        match command {
            ["sprio", ..] => {
                let held = self.held.borrow();
                Ok(held.iter().map(|(id, s)| format!("{id}|{s}\n")).collect())
            }
            ["scontrol", "update", jobs, factor] => self.update(command, jobs, factor),
            ["scontrol", "--oneliner", "show", "partition"] => Ok(PARTITIONS.into()),
            // From 23.02 the nodes come from scontrol, in the records 22.05's sinfo gives.
            ["scontrol", "show", "nodes", "--json"] => Ok(self.outputs["sinfo"].clone()),
            ["sacctmgr", "show", "qos", ..] => Ok("normal|1.000000\n".into()),
            [program, ..] => Ok(self.outputs[program].clone()),
            [] => unreachable!(),
        }
    }
}

impl Fake {
    fn update(&self, command: &[&str], jobs: &str, factor: &str) -> Result<String, CommandError> {
        match self.writes {
            Writes::Refuse => Err(CommandError::Failed {
                command: command.join(" "),
                status: std::process::ExitStatus::from_raw(1 << 8),
                stderr: "Access/permission denied".into(),
            }),
            Writes::Ignore => Ok(String::new()),
            Writes::Take => {
                let factor: i64 = factor.strip_prefix("SiteFactor=").unwrap().parse().unwrap();
                let ids = jobs.strip_prefix("JobId=").unwrap().split(',');
                for id in ids {
                    self.held.borrow_mut().insert(id.parse().unwrap(), factor);
                }
                Ok(String::new())
            }
        }
    }
}

/// Shortly after the recorded accounting's last event.
fn now() -> Time {
    let at = humantime::parse_rfc3339("2026-11-24T06:58:00Z").unwrap();
    Time::from_micros(
        at.duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros() as u64,
    )
}

/// A configuration of `policy`, weight 1000, a day of history.
fn config(policy: &str) -> SlurmConfig {
    let mut config = SlurmConfig::default();
    config.shared.policy = policy.into();
    config.shared.weight = 1000;
    config.shared.window_s = 86_400.0;
    config
}

const FAIR_TREE: &str = "fairshare:function=fair-tree,decay=half-life:600";

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
fn applied_writes_read_back_and_a_second_pass_or_a_restart_writes_nothing() {
    let fake = Fake::new();
    let mut adapter = slurm_adapter(&fake, &config(FAIR_TREE)).unwrap();
    let first = adapter.pass(now()).unwrap();
    let applied = adapter.apply(&first.plan);
    assert!(applied.complete(), "{applied:?}");
    assert_eq!((applied.calls, applied.jobs), (2, 2));
    assert_eq!(
        fake.writes(),
        [
            "scontrol update JobId=10 SiteFactor=167",
            "scontrol update JobId=8 SiteFactor=334",
        ]
    );
    let later = Time(now().as_micros() + 60_000_000);
    let second = adapter.pass(later).unwrap();
    assert!(
        second.rebuilt.is_none(),
        "the history is carried on, not rebuilt"
    );
    assert!(second.plan.writes.is_empty(), "{:?}", second.plan.writes);
    let mut restarted = slurm_adapter(&fake, &config(FAIR_TREE)).unwrap();
    let again = restarted.pass(later).unwrap();
    assert_eq!(again.plan.standings, second.plan.standings);
    assert!(again.plan.writes.is_empty());
}

#[test]
fn a_refused_write_is_retried_once_then_reported_not_applied() {
    let fake = Fake {
        writes: Writes::Refuse,
        ..Fake::new()
    };
    let mut adapter = slurm_adapter(&fake, &config(FAIR_TREE)).unwrap();
    let pass = adapter.pass(now()).unwrap();
    let applied = adapter.apply(&pass.plan);
    assert!(!applied.complete());
    assert_eq!(
        (applied.calls, applied.jobs, applied.refused.len()),
        (4, 0, 2)
    );
    assert!(applied.refused[0]
        .message
        .contains("Access/permission denied"));
    assert_eq!(applied.mismatched, [10, 8]);
}

#[test]
fn a_write_slurm_ignores_is_found_when_read_back() {
    let fake = Fake {
        writes: Writes::Ignore,
        ..Fake::new()
    };
    let mut adapter = slurm_adapter(&fake, &config(FAIR_TREE)).unwrap();
    let pass = adapter.pass(now()).unwrap();
    let applied = adapter.apply(&pass.plan);
    assert!(!applied.complete());
    assert_eq!(applied.mismatched, [10, 8]);
}

/// With the accounting down (`sacct` failing, slurmdbd stopped), a pass writes nothing, first
/// pass or not: no factor comes from a history it could not bring to now. Back up, the
/// history catches up and the factors it wrote stand.
#[test]
fn with_the_accounting_down_a_pass_writes_nothing() {
    let fake = Fake::new();
    let mut adapter = slurm_adapter(&fake, &config(FAIR_TREE)).unwrap();
    fake.down.set(Some("sacct"));
    let error = adapter.pass(now()).unwrap_err().to_string();
    assert!(error.contains("sacct"), "{error}");
    fake.down.set(None);
    let first = adapter.pass(now()).unwrap();
    assert!(adapter.apply(&first.plan).complete());
    let written = fake.writes().len();
    assert!(written > 0);
    fake.down.set(Some("sacct"));
    let later = Time(now().as_micros() + 60_000_000);
    let error = adapter.pass(later).unwrap_err();
    assert!(
        matches!(error, SlurmError::Answer(Unread::Command(_))),
        "{error}"
    );
    assert_eq!(fake.writes().len(), written, "nothing written while down");
    fake.down.set(None);
    let back = adapter.pass(later).unwrap();
    assert_eq!(back.rebuilt, None, "the history kept, brought to now");
    assert!(back.plan.writes.is_empty(), "{:?}", back.plan.writes);
}

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

mod incremental {
    //! The history carried on pass by pass equals the history rebuilt at once: the same usage
    //! and the same priority for every association, whatever the passes' moments.

    use super::recorded;
    use fairshare_core::model::Time;
    use fairshare_core::rank::Head;
    use fairshare_reconcile::history::History;
    use fairshare_reconcile::machines::Machines;
    use fairshare_slurm::accounting::Allocation;
    use fairshare_slurm::assoc::parse_assoc;
    use fairshare_slurm::clients::clients;
    use fairshare_slurm::nodes::parse_nodes;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    const USERS: [(&str, &str); 4] = [
        ("physics", "u1"),
        ("physics", "u2"),
        ("chemistry", "u3"),
        ("chemistry", "u4"),
    ];

    fn secs(s: u64) -> Time {
        Time::from_micros(s * 1_000_000)
    }

    /// A job as `sacct` lists it at `now`: still running (no end) if it ends later.
    fn listed(job: &(usize, u64, u64, u32), id: usize, now: u64) -> Allocation {
        let (user, start, length, cpus) = *job;
        Allocation {
            id: id as u64,
            user: USERS[user].1.into(),
            account: USERS[user].0.into(),
            partition: "main".into(),
            submit: secs(start),
            start: secs(start),
            end: Some(start + length).filter(|e| *e <= now).map(secs),
            demand: vec![f64::from(cpus), 0.0, 0.0],
            nodes: Some(1),
            qos: "normal".into(),
            billing: f64::from(cpus),
        }
    }

    /// What `sacct -S from -E to` lists of `jobs`.
    fn sacct(jobs: &[(usize, u64, u64, u32)], from: u64, to: u64) -> Vec<Allocation> {
        let active = |j: &&(usize, u64, u64, u32)| j.1 <= to && j.1 + j.2 >= from;
        let active = jobs.iter().enumerate().filter(|(_, j)| active(j));
        active.map(|(id, j)| listed(j, id, to)).collect()
    }

    /// Every association's counted usage and priority, all waiting with equal heads.
    fn standing(history: &mut History) -> Vec<(f64, Option<f64>)> {
        let head = Head::new(secs(0), 0);
        let heads: BTreeMap<u32, Head> = (0..4).map(|c| (c, head)).collect();
        history.order(&heads).unwrap();
        (0..4u32)
            .map(|c| (history.counted(c), history.ranker().priority(c)))
            .collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn passes_add_up_to_the_rebuild(
            jobs in prop::collection::vec((0usize..4, 0u64..3_000, 0u64..1_500, 1u32..=8), 1..25),
            cuts in prop::collection::vec(1u64..4_000, 0..6),
            policy in prop::sample::select(vec!["sdrf:delta=0.999", "fairshare:refresh=0,decay=half-life:600", "kueue-afs:refresh=0", "decayed-usage:half-life=600"]),
        ) {
            let tree = parse_assoc(&recorded("sacctmgr.txt")).unwrap();
            let clients = clients(&tree, None).unwrap();
            let machines = Machines::of(&parse_nodes(&recorded("sinfo.json")).unwrap(), &[]).unwrap();
            let policy = policy.parse().unwrap();
            let now = 4_000;
            let mut whole = History::new(&policy, &clients, &machines, secs(0)).unwrap();
            whole.record(&sacct(&jobs, 0, now), &clients, &machines, secs(now)).unwrap();
            let mut passes = History::new(&policy, &clients, &machines, secs(0)).unwrap();
            let mut cuts = cuts;
            cuts.sort_unstable();
            cuts.push(now);
            let mut last = 0;
            for cut in cuts {
                let listed = sacct(&jobs, last.max(100) - 100, cut);
                let step = passes.record(&listed, &clients, &machines, secs(cut)).unwrap();
                prop_assert_eq!(step.clamped + step.missed + step.unlisted, 0);
                last = cut;
            }
            let (a, b) = (standing(&mut whole), standing(&mut passes));
            for (x, y) in a.iter().zip(&b) {
                prop_assert!(close(x.0, y.0), "counted {:?} against {:?}", a, b);
                match (x.1, y.1) {
                    (Some(p), Some(q)) => prop_assert!(close(p, q), "priority {:?} against {:?}", a, b),
                    (p, q) => prop_assert_eq!(p, q),
                }
            }
        }
    }
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

mod starts {
    //! The order in which a policy would start the pending jobs, played out by the history.

    use super::recorded;
    use fairshare_core::model::Time;
    use fairshare_core::rank::factors::Run;
    use fairshare_core::rank::play::Waiting;
    use fairshare_core::rank::Head;
    use fairshare_reconcile::history::History;
    use fairshare_reconcile::machines::Machines;
    use fairshare_slurm::accounting::Allocation;
    use fairshare_slurm::assoc::parse_assoc;
    use fairshare_slurm::clients::clients;
    use fairshare_slurm::nodes::parse_nodes;
    use std::collections::BTreeMap;

    /// The clients of each start of three 2-processor jobs of u1 and three of u2 (one share
    /// each under physics, nothing running), all of u1's submitted before u2's, under
    /// `policy`, played out for `runs` runs.
    fn starts(policy: &str, runs: usize) -> (Vec<u32>, u32, u32) {
        let clients = clients(&parse_assoc(&recorded("sacctmgr.txt")).unwrap(), None).unwrap();
        let machines = Machines::of(&parse_nodes(&recorded("sinfo.json")).unwrap(), &[]).unwrap();
        let history: History =
            History::new(&policy.parse().unwrap(), &clients, &machines, Time::ZERO).unwrap();
        let (u1, u2) = (
            clients.client("physics", "u1").unwrap(),
            clients.client("physics", "u2").unwrap(),
        );
        let queue = |first: u64| -> Vec<Waiting> {
            (0..3)
                .map(|k| {
                    let head = Head::new(
                        Time::from_micros((first + 2 * k) * 1_000_000),
                        first + 2 * k,
                    );
                    history.waiting(head, (&[2.0, 0.0, 0.0], Some(1), None), &machines)
                })
                .collect()
        };
        let queues = BTreeMap::from([(u1, queue(1)), (u2, queue(10))]);
        let played = history.pass_factors(&queues, &BTreeMap::new(), |_, _| None, (runs, 1_000));
        (in_order(&played.unwrap()), u1, u2)
    }

    /// The client of each start of `runs`, first to last.
    fn in_order(runs: &[Run]) -> Vec<u32> {
        let each = |run: &Run| std::iter::repeat_n(run.client, run.jobs.len());
        runs.iter().flat_map(each).collect()
    }

    fn secs(s: u64) -> Time {
        Time::from_micros(s * 1_000_000)
    }

    /// The clients of each start under SDRF on the full 8-processor machine: u1 holds 5
    /// processors and u2 3 since 0 s (jobs 1 and 2), expected to end at `ends`; each has three
    /// pending 2-processor jobs; every job's limit is 60 s.
    fn starts_on_a_full_machine(ends: &[(u64, u64)]) -> (Vec<u32>, u32, u32) {
        let clients = clients(&parse_assoc(&recorded("sacctmgr.txt")).unwrap(), None).unwrap();
        let machines = Machines::of(&parse_nodes(&recorded("sinfo.json")).unwrap(), &[]).unwrap();
        let mut history =
            History::new(&"sdrf".parse().unwrap(), &clients, &machines, Time::ZERO).unwrap();
        let running = |id: u64, user: &str, cpus: f64| Allocation {
            id,
            user: user.into(),
            account: "physics".into(),
            partition: "main".into(),
            submit: Time::ZERO,
            start: Time::ZERO,
            end: None,
            demand: vec![cpus, 0.0, 0.0],
            nodes: Some(1),
            qos: "normal".into(),
            billing: cpus,
        };
        let both = [running(1, "u1", 5.0), running(2, "u2", 3.0)];
        history.record(&both, &clients, &machines, secs(5)).unwrap();
        let (u1, u2) = (
            clients.client("physics", "u1").unwrap(),
            clients.client("physics", "u2").unwrap(),
        );
        let queue = |first: u64| -> Vec<Waiting> {
            (first..first + 3)
                .map(|id| {
                    let head = Head::new(secs(id), id);
                    history.waiting(head, (&[2.0, 0.0, 0.0], Some(1), Some(60)), &machines)
                })
                .collect()
        };
        let queues = BTreeMap::from([(u1, queue(20)), (u2, queue(10))]);
        let ends = ends.iter().map(|&(id, s)| (id, secs(s))).collect();
        let played = history.pass_factors(&queues, &ends, |_, _| None, (100, 1_000));
        (in_order(&played.unwrap()), u1, u2)
    }

    #[test]
    fn whose_job_frees_the_room_weighs_in_the_next_start() {
        // No end known: the play cannot wait for room and ranks the machine as it is: u2,
        // holding less, first.
        let (order, _, u2) = starts_on_a_full_machine(&[]);
        assert_eq!(order[0], u2, "{order:?}");
        // u1's job is expected to end first (10 s): room frees when u1 holds nothing, so u1's
        // job starts first, as SDRF would choose at that moment.
        let (order, u1, _) = starts_on_a_full_machine(&[(1, 10), (2, 100)]);
        assert_eq!(order[0], u1, "{order:?}");
        // u2's ends first: u2 first.
        let (order, _, u2) = starts_on_a_full_machine(&[(1, 100), (2, 10)]);
        assert_eq!(order[0], u2, "{order:?}");
        // Both at 10 s: they end together, both holdings fall before the choice, and u2, who
        // held less over the history, goes first (freed one at a time, u1's job, the first
        // listed, would have left u1 holding nothing against u2's 3 processors).
        let (order, _, u2) = starts_on_a_full_machine(&[(1, 10), (2, 10)]);
        assert_eq!(order[0], u2, "{order:?}");
    }

    #[test]
    fn sdrf_takes_turns_and_fair_tree_keeps_each_users_jobs_together() {
        let (order, u1, u2) = starts("sdrf", 100);
        assert_eq!(
            order,
            [u1, u2, u1, u2, u1, u2],
            "each start adds to its user's share"
        );
        // Played out for two runs only: then each user's remaining jobs together, in the
        // ranker's order at that point (a tie, u1's head older).
        let (order, u1, u2) = starts("sdrf", 2);
        assert_eq!(order, [u1, u2, u1, u1, u2, u2]);
        let (order, u1, u2) = starts("fairshare:function=fair-tree,decay=half-life:600", 100);
        // No usage yet: a tie, broken by the older head, as Slurm breaks it by age; the factors
        // wait for the next refresh, so u1's later jobs stay older than u2's first.
        assert_eq!(order, [u1, u1, u1, u2, u2, u2]);
    }
}

mod listings {
    //! What `sacct` may list that the history must not trip on: a job id listed twice (ids
    //! reset), a job that ran no time, a running job whose end comes too late to be listed.

    use super::recorded;
    use fairshare_core::model::Time;
    use fairshare_reconcile::clients::Clients;
    use fairshare_reconcile::history::History;
    use fairshare_reconcile::machines::Machines;
    use fairshare_slurm::accounting::Allocation;
    use fairshare_slurm::assoc::parse_assoc;
    use fairshare_slurm::clients::clients;
    use fairshare_slurm::nodes::parse_nodes;

    fn secs(s: u64) -> Time {
        Time::from_micros(s * 1_000_000)
    }

    fn job(id: u64, start: u64, end: Option<u64>) -> Allocation {
        Allocation {
            id,
            user: "u1".into(),
            account: "physics".into(),
            partition: "main".into(),
            submit: secs(start),
            start: secs(start),
            end: end.map(secs),
            demand: vec![2.0, 0.0, 0.0],
            nodes: Some(1),
            qos: "normal".into(),
            billing: 2.0,
        }
    }

    fn history() -> (History, Clients, Machines) {
        let clients = clients(&parse_assoc(&recorded("sacctmgr.txt")).unwrap(), None).unwrap();
        let machines = Machines::of(&parse_nodes(&recorded("sinfo.json")).unwrap(), &[]).unwrap();
        let policy = "sdrf".parse().unwrap();
        (
            History::new(&policy, &clients, &machines, secs(0)).unwrap(),
            clients,
            machines,
        )
    }

    #[test]
    fn an_id_listed_twice_starts_once() {
        let (mut history, clients, machines) = history();
        let twice = [job(7, 10, None), job(7, 20, None)];
        let step = history
            .record(&twice, &clients, &machines, secs(30))
            .unwrap();
        assert_eq!((step.started, history.running()), (1, 1));
    }

    #[test]
    fn a_job_that_ran_no_time_is_never_held() {
        let (mut history, clients, machines) = history();
        let step = history
            .record(&[job(8, 10, Some(10))], &clients, &machines, secs(30))
            .unwrap();
        assert_eq!((step.started, history.running()), (0, 0));
        let u1 = clients.client("physics", "u1").unwrap();
        assert_eq!(history.holdings(u1), &[0.0, 0.0]);
    }

    #[test]
    fn a_running_job_no_longer_listed_ends_at_the_last_pass() {
        let (mut history, clients, machines) = history();
        history
            .record(&[job(9, 10, None)], &clients, &machines, secs(30))
            .unwrap();
        let step = history.record(&[], &clients, &machines, secs(90)).unwrap();
        assert_eq!((step.unlisted, step.ended, history.running()), (1, 1, 0));
        let u1 = clients.client("physics", "u1").unwrap();
        assert_eq!(
            history.counted(u1),
            2.0 * 20.0,
            "charged from 10 s to the last pass, 30 s"
        );
    }
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
