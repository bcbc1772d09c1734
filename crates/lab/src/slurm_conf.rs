//! A site's Slurm configuration turned into `--scheduler slurm`'s parameters and partitions,
//! and the files a Slurm dump is billed by, one place for the command line's `--slurm-conf`,
//! `--partitions`, `--qos` and `--max-tres` and the Python package's keywords of those names.

use crate::LabError;
use fairshare_core::error::Invalid;
use fairshare_core::model::slurm_conf_duration;
use fairshare_sim::cluster::{LoopTurns, Partition, SchedulerEntry, SlurmParameters};
use fairshare_slurm::config::SlurmConfig;
use fairshare_trace::billing::{parse_partitions, parse_qos, parse_qos_priorities, Billing};
use fairshare_trace::slurm_conf::{parse_slurm_conf, OverSubscribe, SlurmConf};
use fairshare_trace::slurmctld_log::ControllerLog;
use fairshare_trace::Format;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// What a site's Slurm configuration sets for `--scheduler slurm` (by default, Slurm 22.05's
/// defaults and no partition).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SlurmSetup {
    /// The schedulers' parameters and the multifactor job priority.
    pub parameters: SlurmParameters,
    /// Its partitions' `PriorityTier` and partition factors, by name.
    pub partitions: Vec<Partition>,
    /// Each QOS's factor by name: its `Priority` over the highest (Slurm's normalised QOS
    /// priority), when the QOS priorities are given ([`SlurmSetup::with_qos`]).
    pub qos_factors: BTreeMap<String, f64>,
    /// One sentence on each setting that changes outcomes but is not modelled.
    pub notes: Vec<String>,
    /// How Slurm's own fairshare factor is computed there, for a `fairshare` policy that
    /// leaves it out ([`SlurmSetup::site_policy`]).
    pub fairshare: SiteFairshare,
    /// The cluster's name (`ClusterName`), which picks its lines from `sacctmgr`'s output
    /// when that lists several clusters.
    pub cluster_name: Option<String>,
    /// Whether it defines nodes, so that it can stand for the machines.
    pub has_nodes: bool,
    /// Whether its partitions set `TRESBillingWeights`, and whether `PriorityFlags` has
    /// `MAX_TRES`: what a Slurm dump is billed by when no other file says.
    pub billing: Option<bool>,
    /// Each setting the model read that the configuration states, with its value as
    /// written, in the order read: every number a replay takes from the file.
    pub settings: Vec<(String, String)>,
}

/// What a Slurm configuration sets of its own fairshare factor.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SiteFairshare {
    /// `PriorityDecayHalfLife`, seconds, as Slurm reads it (whole minutes, rounded up), when
    /// set.
    pub half_life: Option<(u64, String)>,
    /// `PriorityCalcPeriod`, seconds, as Slurm reads it, when set.
    pub calc_period: Option<(u64, String)>,
    /// `PriorityFlags=NO_FAIR_TREE`: the classic factor instead of Fair Tree.
    pub classic: bool,
}

/// The setup of a `slurm.conf`, or of the saved output of `scontrol show config` (with
/// `scontrol show node`, whose nodes the job size factor counts, and `scontrol show
/// partition`, whose tiers and job factors order the jobs). Refused: a text that sets nothing,
/// a node or partition definition that cannot be read (the error names its line), and a value
/// that is not one the setting takes (the error names it).
pub fn slurm_setup(text: &str) -> Result<SlurmSetup, Invalid> {
    let conf = parse_slurm_conf(text);
    if let Some(fault) = conf.faults().first() {
        return Err(fault.clone().into());
    }
    if conf.is_empty() {
        return Err("no Key=Value setting in it".into());
    }
    let read = std::cell::RefCell::new(Vec::<(String, String)>::new());
    let get = |key: &str| {
        let value = conf.get(key);
        let stated = value
            .map(str::trim)
            .filter(|v| !v.is_empty() && *v != "(null)");
        let mut read = read.borrow_mut();
        if let Some(v) = stated.filter(|_| !read.iter().any(|(k, _)| k == key)) {
            read.push((key.to_owned(), v.to_owned()));
        }
        value
    };
    let (mut parameters, mut notes) = SlurmParameters::from_conf(get)?;
    parameters.priority.cluster = conf.cluster().map(|(nodes, cpus)| (nodes as f64, cpus));
    if parameters.priority.size_weight != 0.0 && parameters.priority.cluster.is_none() {
        notes.push("the job size factor counts the replay's nodes and processors: the file defines no node (add `scontrol show node`, or the NodeName lines)".into());
    }
    if parameters.priority.partition_weight != 0.0 && conf.partitions().is_empty() {
        notes.push("PriorityWeightPartition is set but the file defines no partition (add `scontrol show partition`, or the PartitionName lines): every job's partition factor is 0".into());
    }
    notes.extend(unmodelled_sharing(&conf));
    notes.extend(unmodelled_settings(&conf));
    let fairshare = site_fairshare(&get)?;
    let cluster_name = get("ClusterName").map(str::trim);
    let cluster_name =
        (cluster_name.filter(|name| !name.is_empty() && *name != "(null)")).map(str::to_owned);
    let flags = get("PriorityFlags").unwrap_or_default();
    Ok(SlurmSetup {
        parameters,
        partitions: partitions(&conf),
        qos_factors: BTreeMap::new(),
        notes,
        fairshare,
        cluster_name,
        has_nodes: !conf.nodes().is_empty(),
        billing: (text.contains("TRESBillingWeights"))
            .then(|| flags.split(',').any(|f| f.trim() == "MAX_TRES")),
        settings: read.into_inner(),
    })
}

/// The fairshare settings of a configuration, read by `get`: its half-life and recomputation
/// period as Slurm reads them, and whether its factor is classic.
fn site_fairshare<'a>(get: &dyn Fn(&str) -> Option<&'a str>) -> Result<SiteFairshare, Invalid> {
    let duration = |key: &str| -> Result<Option<(u64, String)>, Invalid> {
        let Some(text) = get(key).map(str::trim).filter(|v| !v.is_empty()) else {
            return Ok(None);
        };
        match slurm_conf_duration(text) {
            Ok(seconds) => Ok(seconds.map(|s| (s, text.to_owned()))),
            Err(e) => Err(format!("{key}={text}: {e}").into()),
        }
    };
    let flags = get("PriorityFlags").unwrap_or_default();
    Ok(SiteFairshare {
        half_life: duration("PriorityDecayHalfLife")?,
        calc_period: duration("PriorityCalcPeriod")?,
        classic: flags.split(',').any(|f| f.trim() == "NO_FAIR_TREE"),
    })
}

/// Refuses a controller's log beside a trace of `format` unless it is a Slurm dump: the log
/// times a dump's jobs by their Slurm job ids, which other formats do not keep. `option` and
/// `sacct` say how the caller spells the log's option and the dump's format.
pub fn check_log_format(format: Format, (option, sacct): (&str, &str)) -> Result<(), Invalid> {
    if format == Format::SACCT {
        return Ok(());
    }
    Err(
        format!("{option} times the jobs of a Slurm dump ({sacct}), not of a {format} trace")
            .into(),
    )
}

impl SlurmSetup {
    /// This setup with a policy's site factors weighed at `weight` (the Slurm adapter's
    /// `weight`) in the job priority, when given. Refused when `scheduler` is not Slurm's (no
    /// job priority weighs them) or the weight is not from 1 to 2³¹ − 1 (Slurm's site factor
    /// is a signed 32-bit number); `option` and `slurm` say how the caller spells the option
    /// and the Slurm scheduler (`--site-weight`, `--scheduler slurm`).
    pub fn with_site_weight(
        mut self,
        weight: Option<u32>,
        scheduler: SchedulerEntry,
        (option, slurm): (&str, &str),
    ) -> Result<SlurmSetup, Invalid> {
        let Some(weight) = weight else {
            return Ok(self);
        };
        if scheduler != SchedulerEntry::SLURM || !(1..=i32::MAX as u32).contains(&weight) {
            return Err(format!("{option} {weight}: the weight of a policy's site factors in the Slurm scheduler's job priority takes a whole number from 1 to {} and needs {slurm}", i32::MAX).into());
        }
        self.parameters.priority.site_weight = f64::from(weight);
        Ok(self)
    }

    /// This setup with the Slurm adapter's play of starts as `adapter` configures it: its
    /// first `ranked_runs` runs ranked one by one, running jobs expected to end at their
    /// limits when `ends_at_limits`, jobs given a factor at their submission only with a
    /// `submit_table`, and only the jobs of its `partitions` ranked, when it names some.
    pub fn with_adapter_play(mut self, adapter: &SlurmConfig) -> SlurmSetup {
        let priority = &mut self.parameters.priority;
        priority.site_ranked_runs = adapter.shared.ranked_runs;
        priority.site_ends_at_limits = adapter.ends_at_limits;
        priority.site_submit_table = adapter.submit_table.is_some();
        self.parameters.adapter_partitions = adapter.partitions.clone();
        self
    }

    /// This setup with the background loop's turns within each second drawn with `seed`,
    /// when given (see [`SlurmParameters::turn_seed`]). Refused when `scheduler` is not
    /// Slurm's; `option` and `slurm` say how the caller spells the option and the Slurm
    /// scheduler.
    pub fn with_turn_seed(
        mut self,
        seed: Option<u64>,
        scheduler: SchedulerEntry,
        (option, slurm): (&str, &str),
    ) -> Result<SlurmSetup, Invalid> {
        if let Some(seed) = seed {
            if scheduler != SchedulerEntry::SLURM {
                return Err(format!("{option} {seed}: drawing the background loop's turns within each second needs {slurm}").into());
            }
            self.parameters.turn_seed = Some(seed);
        }
        Ok(self)
    }

    /// This setup with the background loop's turns and the backfill's cycles where `log`,
    /// `slurmctld`'s, shows them (see [`SlurmParameters::loop_turns`] and
    /// [`SlurmParameters::bf_cycles`]; the cycles only where it shows some), when given.
    /// Refused when `scheduler` is not Slurm's, or the turns are drawn too (`--turn-seed`:
    /// the log tells what the seed draws); `option` and `slurm` say how the caller spells the
    /// log's option and the Slurm scheduler.
    pub fn with_loop_turns(
        mut self,
        log: Option<&ControllerLog>,
        scheduler: SchedulerEntry,
        (option, slurm): (&str, &str),
    ) -> Result<SlurmSetup, Invalid> {
        let Some(log) = log else {
            return Ok(self);
        };
        if scheduler != SchedulerEntry::SLURM {
            return Err(format!("{option}: the background loop's turns time the Slurm scheduler's passes; add {slurm}").into());
        }
        if self.parameters.turn_seed.is_some() {
            return Err(format!("{option} reads which side of the background loop's turn each event fell, which --turn-seed draws; give one of them").into());
        }
        let turns = LoopTurns::logged_every_second(log.main_passes.clone());
        self.parameters.loop_turns = Some(Arc::new(turns));
        self.parameters.loop_starts = log.background_loop_starts();
        let interval = self.parameters.bf_interval_s.saturating_mul(1_000_000);
        self.parameters.bf_cycles = (!log.backfill_passes.is_empty())
            .then(|| Arc::new(LoopTurns::new(log.backfill_passes.clone(), interval)));
        Ok(self)
    }

    /// This setup with a policy's site factors read every `interval` (a duration such as
    /// `5s`: the Slurm adapter's `interval_s`, optionally `@` how far past each multiple of it
    /// since the epoch its passes fall, `5s@4.4s`: the watcher's phase), when given. Refused
    /// when `scheduler` is not Slurm's, the interval is under a second or either is not a
    /// duration; `option` and `slurm` say how the caller spells the option and the Slurm
    /// scheduler.
    pub fn with_site_interval(
        mut self,
        interval: Option<&str>,
        scheduler: SchedulerEntry,
        (option, slurm): (&str, &str),
    ) -> Result<SlurmSetup, Invalid> {
        let Some(text) = interval else {
            return Ok(self);
        };
        let refuse = |why: String| -> Invalid {
            format!("{option} {text}: how often the Slurm adapter writes a policy's site factors takes a duration of a second or more (5s, 1m), optionally @ how far past each multiple its passes fall (5s@4.4s), and needs {slurm}{why}").into()
        };
        if scheduler != SchedulerEntry::SLURM {
            return Err(refuse(String::new()));
        }
        let (every, offset) = text.split_once('@').unwrap_or((text, "0"));
        let duration =
            |t: &str| crate::input::parse_duration(t).map_err(|e| refuse(format!(": {e}")));
        let (micros, offset) = (duration(every)?, duration(offset)?);
        if micros < 1_000_000 {
            return Err(refuse(String::new()));
        }
        self.parameters.priority.site_interval_s = micros as f64 / 1e6;
        self.parameters.priority.site_offset_s = (offset % micros) as f64 / 1e6;
        Ok(self)
    }

    /// This setup with the QOS factors of `priorities` (each QOS's `Priority`, as
    /// `sacctmgr show qos format=Name,UsageFactor,Priority` lists them; `None`: not given),
    /// and a note when `PriorityWeightQOS` is set without them.
    pub fn with_qos(mut self, priorities: Option<&BTreeMap<String, u32>>) -> SlurmSetup {
        let priorities = priorities.filter(|p| !p.is_empty());
        let highest = priorities.and_then(|p| p.values().max()).copied();
        if let (Some(priorities), Some(highest @ 1..)) = (priorities, highest) {
            let factor = |p: &u32| f64::from(*p) / f64::from(highest);
            self.qos_factors = priorities
                .iter()
                .map(|(q, p)| (q.clone(), factor(p)))
                .collect();
        } else if self.parameters.priority.qos_weight != 0.0 {
            self.notes.push("PriorityWeightQOS is set but no QOS has a priority above 0 (they are listed by `sacctmgr -P -n show qos format=Name,UsageFactor,Priority`): every job's QOS factor is 0".into());
        }
        self
    }
}

/// The files a Slurm dump's jobs are billed by, and whose QOS priorities order them.
#[derive(Debug, Clone, Default)]
pub struct BillingFiles {
    /// The saved output of `scontrol show partition` (their `TRESBillingWeights`).
    pub partitions: Option<PathBuf>,
    /// The output of `sacctmgr -P -n show qos format=Name,UsageFactor,Priority`.
    pub qos: Option<PathBuf>,
    /// Slurm's `PriorityFlags=MAX_TRES`: a job is billed its largest weighted TRES.
    pub max_tres: bool,
    /// How the options are spelled in errors: `--` on the command line, nothing in Python.
    pub prefix: &'static str,
}

impl BillingFiles {
    /// How Slurm bills the dump's jobs (without files: their `billing=`, else their CPUs).
    pub fn billing(&self) -> Result<Billing, LabError> {
        Ok(Billing {
            partitions: self
                .read(&self.partitions, "partitions", parse_partitions)?
                .unwrap_or_default(),
            max_tres: self.max_tres,
            usage_factors: self.read(&self.qos, "qos", parse_qos)?.unwrap_or_default(),
        })
    }

    /// Each QOS's priority, when the QOS file is given.
    pub fn qos_priorities(&self) -> Result<Option<BTreeMap<String, u32>>, LabError> {
        self.read(&self.qos, "qos", parse_qos_priorities)
    }

    /// `parse` of the file at `path`, an error naming the option and the file.
    fn read<T, E: std::fmt::Display>(
        &self,
        path: &Option<PathBuf>,
        option: &str,
        parse: fn(&str) -> Result<T, E>,
    ) -> Result<Option<T>, LabError> {
        let Some(path) = path.as_deref() else {
            return Ok(None);
        };
        let failed = |e: &dyn std::fmt::Display| {
            LabError::Unusable(format!("{}{option} {}: {e}", self.prefix, path.display()))
        };
        let text = std::fs::read_to_string(path).map_err(|e| failed(&e))?;
        parse(&text).map(Some).map_err(|e| failed(&e))
    }
}

/// The partitions of `conf` as the engine orders jobs by them: each one's `PriorityTier`, and
/// its `PriorityJobFactor` over the highest of all (Slurm's normalised partition factor).
fn partitions(conf: &SlurmConf) -> Vec<Partition> {
    let highest = conf
        .partitions()
        .iter()
        .map(|p| p.priority_job_factor)
        .max();
    let highest = f64::from(highest.unwrap_or(0));
    let partition = |p: &fairshare_trace::slurm_conf::SlurmPartition| Partition {
        name: p.name.clone(),
        tier: i32::try_from(p.priority_tier).unwrap_or(i32::MAX),
        factor: match highest > 0.0 {
            true => f64::from(p.priority_job_factor) / highest,
            false => 0.0,
        },
        exclusive: p.over_subscribe == OverSubscribe::Exclusive,
    };
    conf.partitions().iter().map(partition).collect()
}

/// A sentence on each partition whose nodes are shared in a way the replay does not model:
/// processors shared (`OverSubscribe=YES` or `FORCE`) or nodes kept to one user at a time
/// (`ExclusiveUser=YES`).
fn unmodelled_sharing(conf: &SlurmConf) -> Vec<String> {
    let mut notes = Vec::new();
    for p in conf.partitions() {
        if p.over_subscribe == OverSubscribe::Processors {
            notes.push(format!("partition {}: OverSubscribe=YES or FORCE lets jobs share processors, which is not modelled: each job holds its processors alone", p.name));
        }
        if p.exclusive_user {
            notes.push(format!("partition {}: ExclusiveUser=YES keeps a node to one user's jobs at a time, which is not modelled: users share its nodes", p.name));
        }
    }
    notes
}

/// Settings of Slurm's fairshare and scheduling that change which job goes first but that the
/// model leaves out, with the values that leave them inert (as `scontrol show config` or a
/// `slurm.conf` spells them).
const UNMODELLED: [(&str, &[&str], &str); 3] = [
    (
        "PriorityUsageResetPeriod",
        &["NONE", "0"],
        "usage is never reset in the replay",
    ),
    (
        "FairShareDampeningFactor",
        &["1"],
        "the fairshare factor is not dampened in the replay",
    ),
    (
        "PreemptType",
        &["preempt/none"],
        "no job is preempted in the replay",
    ),
];

/// `PriorityFlags` the model follows, or that change nothing it computes.
const MODELLED_FLAGS: [&str; 7] = [
    "MAX_TRES",
    "NO_FAIR_TREE",
    "FAIR_TREE",
    "SMALL_RELATIVE_TO_TIME",
    "NO_NORMAL_QOS",
    "NO_NORMAL_TRES",
    "NO_NORMAL_ASSOC",
];

/// A sentence on each setting of `conf` that is not modelled and not inert.
fn unmodelled_settings(conf: &SlurmConf) -> Vec<String> {
    let stated = |key: &str| (conf.get(key).map(str::trim)).filter(|v| !v.is_empty());
    let mut notes: Vec<String> = UNMODELLED
        .iter()
        .filter_map(|(key, inert, why)| {
            let value = stated(key)?;
            let inert = inert.iter().any(|i| i.eq_ignore_ascii_case(value));
            (!inert).then(|| format!("{key}={value} is not modelled: {why}"))
        })
        .collect();
    let flags = stated("PriorityFlags").unwrap_or_default();
    let flags = flags.split(',').map(str::trim).filter(|f| !f.is_empty());
    let other: Vec<&str> = flags.filter(|f| !MODELLED_FLAGS.contains(f)).collect();
    if !other.is_empty() {
        notes.push(format!(
            "PriorityFlags {} not modelled: the priorities are computed without them",
            other.join(",")
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_set_the_size_factors_cluster_and_their_absence_is_noted() {
        let conf = "PriorityWeightJobSize=1000\nNodeName=n[1-4] CPUs=8\n";
        let setup = slurm_setup(conf).unwrap();
        assert_eq!(setup.parameters.priority.cluster, Some((4.0, 32.0)));
        assert!(setup.notes.is_empty(), "{:?}", setup.notes);
        let setup = slurm_setup("PriorityWeightJobSize=1000\n").unwrap();
        assert_eq!(setup.parameters.priority.cluster, None);
        assert_eq!(setup.notes.len(), 1);
        assert!(slurm_setup("# nothing\n").is_err());
        let refused = slurm_setup("NodeName=n[1-4 CPUs=8\n").unwrap_err();
        assert!(
            refused.to_string().starts_with("line 1: NodeName="),
            "{refused}"
        );
    }

    #[test]
    fn qos_factors_are_each_priority_over_the_highest_and_their_absence_is_noted() {
        let setup = || slurm_setup("PriorityWeightQOS=1000\n").unwrap();
        let priorities: BTreeMap<String, u32> = [
            ("normal".into(), 0),
            ("high".into(), 400),
            ("top".into(), 1600),
        ]
        .into();
        let with = setup().with_qos(Some(&priorities));
        assert!(with.notes.is_empty(), "{:?}", with.notes);
        let factors: Vec<(&str, f64)> = (with.qos_factors.iter())
            .map(|(q, f)| (q.as_str(), *f))
            .collect();
        assert_eq!(factors, [("high", 0.25), ("normal", 0.0), ("top", 1.0)]);
        for none in [
            None,
            Some(BTreeMap::new()),
            Some([("normal".into(), 0)].into()),
        ] {
            let without = setup().with_qos(none.as_ref());
            assert!(without.qos_factors.is_empty());
            assert!(
                without.notes[0].starts_with("PriorityWeightQOS is set"),
                "{:?}",
                without.notes
            );
        }
        let unweighted = slurm_setup("PriorityWeightAge=1\n").unwrap().with_qos(None);
        assert!(unweighted.notes.is_empty(), "{:?}", unweighted.notes);
    }

    #[test]
    fn an_exclusive_partition_gives_whole_nodes_and_unmodelled_sharing_is_noted() {
        let conf = "NodeName=n[1-2] CPUs=8\nPartitionName=a Nodes=n1 OverSubscribe=EXCLUSIVE\nPartitionName=b Nodes=n2 OverSubscribe=FORCE:4 ExclusiveUser=YES\n";
        let setup = slurm_setup(conf).unwrap();
        let exclusive: Vec<bool> = setup.partitions.iter().map(|p| p.exclusive).collect();
        assert_eq!(exclusive, [true, false]);
        assert_eq!(setup.notes.len(), 2, "{:?}", setup.notes);
        assert!(setup.notes[0].starts_with("partition b: OverSubscribe=YES or FORCE"));
        assert!(setup.notes[1].starts_with("partition b: ExclusiveUser=YES"));
    }

    #[test]
    fn partitions_give_their_tiers_and_factors_over_the_highest() {
        let conf = "PriorityWeightPartition=1000\nNodeName=n[1-4] CPUs=8\nPartitionName=a Nodes=n[1-2] PriorityTier=2 PriorityJobFactor=4\nPartitionName=b Nodes=n[3-4]\n";
        let setup = slurm_setup(conf).unwrap();
        assert!(setup.notes.is_empty(), "{:?}", setup.notes);
        assert_eq!(setup.parameters.priority.partition_weight, 1000.0);
        let partition = |name: &str, tier, factor| Partition {
            tier,
            factor,
            ..Partition::named(name)
        };
        assert_eq!(
            setup.partitions,
            [partition("a", 2, 1.0), partition("b", 1, 0.25)]
        );
        let setup = slurm_setup("PriorityWeightPartition=1000\n").unwrap();
        assert!(
            setup.notes[0].starts_with("PriorityWeightPartition is set"),
            "{:?}",
            setup.notes
        );
    }
}
