//! The adapter's readers on what each tested Slurm printed: the samples
//! `scripts/slurm/samples.sh` recorded on the many-node cluster of each version, one workload
//! (`scripts/slurm/jobs-many.sh`) under way. A recorded Slurm answers each command with its
//! own output, found by the command line (times written `*`), so a reader that asks another
//! command, or cannot read what a version printed, fails here by name.

use fairshare_core::model::Time;
use fairshare_reconcile::job::QueueState;
use fairshare_slurm::adapter::adapter as slurm_adapter;
use fairshare_slurm::command::{CommandError, Commands};
use fairshare_slurm::config::SlurmConfig;
use fairshare_slurm::nodes::{parse_nodes, SchedulerNode, SCONTROL_NODES_COMMAND, SINFO_COMMAND};
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;

/// The versions recorded, each a folder of `tests/data/versions`.
const VERSIONS: [&str; 2] = ["22.05", "24.11"];

/// The folder of `version`'s samples.
fn folder(version: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/versions")
        .join(version)
}

/// A command line as `samples.sh` lists it: the words joined by spaces, the value of a time
/// argument written `*`.
fn listed(command: &[&str]) -> String {
    let timeless = |word: &&str| {
        for key in ["--starttime=", "--endtime=", "Start=", "End="] {
            if word.starts_with(key) {
                return format!("{key}*");
            }
        }
        word.to_string()
    };
    command.iter().map(timeless).collect::<Vec<_>>().join(" ")
}

/// A Slurm of one version's recorded outputs.
struct Recorded {
    version: &'static str,
    outputs: BTreeMap<String, String>,
}

impl Recorded {
    /// The outputs `samples.sh` recorded of `version`.
    fn of(version: &'static str) -> Recorded {
        let dir = folder(version);
        let index = std::fs::read_to_string(dir.join("commands.tsv")).unwrap();
        let outputs = (index.lines())
            .map(|line| line.split_once('\t').unwrap())
            .map(|(file, command)| {
                let output = std::fs::read_to_string(dir.join(file)).unwrap();
                (command.to_owned(), output)
            })
            .collect();
        Recorded { version, outputs }
    }

    /// The output of `command`; panics, naming it, when none was recorded.
    fn output(&self, command: &[&str]) -> &str {
        let line = listed(command);
        (self.outputs.get(&line))
            .unwrap_or_else(|| panic!("Slurm {} has no recorded `{line}`", self.version))
    }
}

impl Commands for &Recorded {
    fn run(&self, command: &[&str]) -> Result<String, CommandError> {
        match self.outputs.get(&listed(command)) {
            Some(output) => Ok(output.clone()),
            None => Err(CommandError::Failed {
                command: listed(command),
                status: std::process::ExitStatus::from_raw(1 << 8),
                stderr: format!("not recorded on Slurm {}", self.version),
            }),
        }
    }
}

/// What a node offers and where, for comparing two versions' readings.
fn offered(nodes: &[SchedulerNode]) -> Vec<(String, u32, u64, u64, Vec<String>)> {
    let each = nodes.iter().map(|n| {
        (
            n.name.clone(),
            n.cpus,
            n.memory_kb,
            n.gpus,
            n.partitions.clone(),
        )
    });
    each.collect()
}

/// The 16 nodes of the many-node layout: n01–n12 in cpu, n13–n16 in gpu with 4 GPUs each.
fn check_layout(nodes: &[SchedulerNode], version: &str) {
    assert_eq!(nodes.len(), 16, "{version}");
    for node in nodes {
        let gpu = node.name.as_str() >= "n13";
        assert_eq!(node.cpus, 8, "{version} {}", node.name);
        assert_eq!(node.memory_kb, if gpu { 32_000 } else { 16_000 } * 1024);
        assert_eq!(
            node.gpus,
            if gpu { 4 } else { 0 },
            "{version} {}",
            node.name
        );
        assert_eq!(
            node.partitions,
            [if gpu { "gpu" } else { "cpu" }],
            "{version}"
        );
    }
}

#[test]
fn each_versions_nodes_are_read_from_the_command_that_lists_them_one_by_one() {
    let old = Recorded::of("22.05");
    let new = Recorded::of("24.11");
    let from_sinfo = parse_nodes(old.output(&SINFO_COMMAND)).unwrap();
    let from_scontrol = parse_nodes(new.output(&SCONTROL_NODES_COMMAND)).unwrap();
    check_layout(&from_sinfo, "22.05");
    check_layout(&from_scontrol, "24.11");
    assert_eq!(offered(&from_sinfo), offered(&from_scontrol));
    // 24.11's sinfo --json groups the nodes: read as 22.05's, it is refused by name.
    let error = parse_nodes(new.output(&SINFO_COMMAND))
        .unwrap_err()
        .to_string();
    assert!(error.contains("groups the nodes"), "{error}");
    assert!(error.contains("scontrol show nodes --json"), "{error}");
}

/// A configuration of Fair Tree with Slurm's 10-minute half-life, weight 1000, a day of history.
fn config() -> SlurmConfig {
    let mut config = SlurmConfig::default();
    config.shared.policy = "fairshare:function=fair-tree,decay=half-life:600".into();
    config.shared.weight = 1000;
    config.shared.window_s = 86_400.0;
    config
}

/// The moment of `version`'s recording (`moment.txt`, seconds after the epoch).
fn moment(version: &str) -> Time {
    let text = std::fs::read_to_string(folder(version).join("moment.txt")).unwrap();
    Time::from_whole_secs(text.trim().parse().unwrap())
}

#[test]
fn an_adapter_pass_reads_every_recorded_version_alike() {
    for version in VERSIONS {
        let slurm = Recorded::of(version);
        let mut adapter = slurm_adapter(&slurm, &config()).unwrap();
        let pass = adapter
            .pass(moment(version))
            .unwrap_or_else(|e| panic!("Slurm {version}: {e:#}"));
        let named = pass.version.as_ref().unwrap();
        assert!(named.text.starts_with(version), "{named:?}");
        assert!(named.tested, "{named:?}");
        assert!(
            pass.notes.iter().all(|n| !n.contains("not a version")),
            "{:?}",
            pass.notes
        );
        let check = pass.check.as_ref().unwrap();
        assert!(check.agrees, "Slurm {version}: {check:?}");
        let users: std::collections::BTreeSet<&str> =
            pass.usage.iter().map(|u| u.user.as_str()).collect();
        // The layout's nine users and Slurm's own root user.
        assert_eq!(users.len(), 10, "Slurm {version}: {users:?}");
        assert!(
            pass.running > 0 && !pass.plan.jobs.is_empty(),
            "Slurm {version}: a queue under way"
        );
    }
}

/// What a version's readers make of the workload's queue, standings, partitions and QOS, in
/// the forms both versions share (the jobs each ran by then, their states aside).
type Reading = (
    Vec<(u64, String, String, String, u32, Option<u64>, u32)>,
    Vec<(String, Option<String>, String)>,
    Vec<String>,
    Vec<String>,
);

/// `version`'s reading of its recorded queue, `sshare`, partitions and QOS.
fn reading(version: &'static str) -> Reading {
    use fairshare_slurm::queue::{parse_queue, SQUEUE_COMMAND};
    use fairshare_slurm::sshare::{parse_sshare, SSHARE_COMMAND};
    use fairshare_trace::billing::{parse_partitions, parse_qos, PARTITIONS_COMMAND, QOS_COMMAND};
    let slurm = Recorded::of(version);
    let read = |what: &str, error: fairshare_slurm::ReadError| -> ! {
        panic!("Slurm {version}'s {what}: {error}")
    };
    let queue = parse_queue(slurm.output(&SQUEUE_COMMAND)).unwrap_or_else(|e| read("squeue", e));
    // 22.05's squeue still lists a job that ended within MinJobAge; 24.11's does not.
    let queued =
        |s: &fairshare_slurm::queue::SqueueJob| !matches!(s.job.state, QueueState::Other(_));
    let queue = (queue.into_iter().filter(queued))
        .map(|s| {
            let job = s.job;
            (
                job.id,
                job.user,
                job.account,
                job.partition,
                job.nodes,
                job.limit,
                s.cpus,
            )
        })
        .collect();
    let shares = parse_sshare(slurm.output(&SSHARE_COMMAND)).unwrap_or_else(|e| read("sshare", e));
    let shares = (shares.into_iter())
        .map(|row| (row.account, row.user, format!("{:?}", row.raw_shares)))
        .collect();
    let partitions = parse_partitions(slurm.output(&PARTITIONS_COMMAND))
        .unwrap_or_else(|e| read("partitions", e));
    let qos = parse_qos(slurm.output(&QOS_COMMAND)).unwrap_or_else(|e| read("QOS", e));
    let partitions = partitions
        .iter()
        .map(|(name, weights)| format!("{name} {weights:?}"));
    let qos = qos.iter().map(|(name, factor)| format!("{name} {factor}"));
    (queue, shares, partitions.collect(), qos.collect())
}

#[test]
fn each_versions_queue_standings_partitions_and_qos_read_as_the_same_workload() {
    // squeue --json is openapi v0.0.38 on 22.05 and data_parser v0.0.42 on 24.11 (numbers as
    // {set, infinite, number}, states as arrays): read alike, the 19 jobs still queued.
    let [old, new] = VERSIONS.map(reading);
    assert_eq!((old.0.len(), new.0.len()), (19, 19));
    assert_eq!(old, new);
}

#[test]
fn a_24_11_background_loop_passes_on_whole_seconds_its_clock_still_on_the_second_before() {
    use fairshare_trace::slurmctld_log::read_controller_log;
    let log_of = |version| {
        let path = folder(version).join("bundle/slurmctld.log.gz");
        read_controller_log(&path).unwrap_or_else(|e| panic!("Slurm {version}: {e}"))
    };
    // 24.11's loop wakes at each whole second: its passes are logged within a few
    // milliseconds of one (but for a pass a killed job's epilog runs at once); 22.05's turn a
    // second after their work, anywhere in the second.
    let into_second = |t: &Time| t.as_micros() % 1_000_000;
    let on_the_second = |passes: &[Time]| {
        let on = passes.iter().filter(|t| into_second(t) < 10_000).count();
        on as f64 / passes.len() as f64
    };
    let new = log_of("24.11");
    assert!(new.main_passes.len() >= 20, "{:?}", new.main_passes);
    assert!(
        on_the_second(&new.main_passes) > 0.9,
        "{:?}",
        new.main_passes
    );
    let old = log_of("22.05");
    assert!(old.main_passes.len() >= 20, "{:?}", old.main_passes);
    assert!(
        on_the_second(&old.main_passes) < 0.2,
        "{:?}",
        old.main_passes
    );
    // 24.11 logs the priority plugin's start before the controller's, and no MCS line: the
    // background loop is taken to begin with the controller.
    assert_eq!(new.background_loop_starts(), new.controller_starts);
    // time() reads the kernel's coarse clock, still on the second before for the first
    // milliseconds of a second: at the loop's wake, and for the first jobs its pass starts,
    // which the dump dates a second before the log does (22.05's passes fall mid-second).
    let early = |version: &str, log: &fairshare_trace::slurmctld_log::ControllerLog| {
        let dump = std::fs::read_to_string(folder(version).join("bundle/sacct.txt")).unwrap();
        let starts = dump.lines().skip(1).filter_map(|line| {
            let columns: Vec<&str> = line.split('|').collect();
            let id: u64 = columns[0].parse().ok()?;
            let start = humantime::parse_rfc3339(&format!("{}Z", columns[5])).ok()?;
            let second = start.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
            Some((log.jobs.get(&id)?.started?.whole_secs(), second))
        });
        let (ahead, all) = starts.fold((0, 0), |(ahead, all), (logged, dumped)| {
            (ahead + usize::from(logged == dumped + 1), all + 1)
        });
        (ahead, all)
    };
    let (ahead, all) = early("24.11", &new);
    assert!(all >= 12 && ahead >= 1, "{ahead} of {all}");
    assert_eq!(early("22.05", &old).0, 0);
}
