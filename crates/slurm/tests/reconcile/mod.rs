//! The reconcile on outputs recorded from the live Slurm 22.05 (users renamed u1–u4): a fake
//! Slurm answers each command with its recorded output, keeps the site factors written to it,
//! and can refuse writes, ignore them or answer garbage.
//!
//! One file per part: the recorded cluster ranked (`ranking`), writes and the accounting down
//! (`writes`), what a pass reads of Slurm and says about it (`reading`), and the history's own
//! tests (`incremental`, `starts`, `listings`); this file holds the fake Slurm they share.

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

mod incremental;
mod listings;
mod ranking;
mod reading;
mod starts;
mod writes;

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
