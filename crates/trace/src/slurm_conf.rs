//! A Slurm configuration as a replay needs it: the settings of a `slurm.conf` (`Key=Value`,
//! `#` comments) or of the saved output of `scontrol show config` (`Key = Value`), so that
//! `fairshare replay --scheduler slurm --slurm-conf FILE` schedules as that site's
//! `slurmctld` does; and its nodes and partitions, from a `slurm.conf`'s `NodeName=` and
//! `PartitionName=` lines or the saved output of `scontrol show node` and `scontrol show
//! partition` in the same file, so that a Slurm dump is replayed on the site's own nodes, each
//! job in its own partition ([`read_machines`], what `--machines` reads for a Slurm dump).
//! Slurm's job size factor, too, is a share of the whole cluster.
//!
//! Keys are matched without regard to case, as Slurm matches them. A definition (`NodeName=`,
//! `PartitionName=`) runs over its line and, as `scontrol show` prints it, over the indented
//! lines that follow; `NodeName=DEFAULT` and `PartitionName=DEFAULT` set what later
//! definitions leave out. The headings of `scontrol show config` are passed over.

use crate::hostlist::expand_hosts;
use crate::slurm_output::gpus;
use crate::TraceError;
use fairshare_core::model::{partition_property, NodeType};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// The lines of a `slurm.conf` that define things rather than set a value.
const DEFINITIONS: [&str; 6] = [
    "nodename",
    "partitionname",
    "nodeset",
    "frontendname",
    "downnodes",
    "switchname",
];

/// The most hosts a configuration's host lists may name in all (Slurm's own limit on nodes is
/// far lower); a list naming more is a fault, not a reason to fill the memory.
const MOST_HOSTS: usize = 1_000_000;

/// One node of the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmNode {
    /// Its host name.
    pub name: String,
    /// Its processors: `CPUs` (`CPUTot`), else sockets × cores × threads, else 1.
    pub cpus: f64,
    /// Its `RealMemory`, MB (Slurm's default: 1).
    pub memory_mb: f64,
    /// Its GPUs: the counts of its `Gres=gpu…` entries.
    pub gpus: f64,
    /// Its features (`Features=`, `AvailableFeatures=`).
    pub features: Vec<String>,
}

/// One partition of the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmPartition {
    /// Its name.
    pub name: String,
    /// The hosts of its nodes (`Nodes=ALL`: every node).
    pub nodes: Vec<String>,
    /// `PriorityTier`: a job of a higher tier is considered first (default 1).
    pub priority_tier: u32,
    /// `PriorityJobFactor`: its jobs' partition factor, over the highest of all (default 1).
    pub priority_job_factor: u32,
    /// `OverSubscribe` (`Shared`, its older name): whether its jobs share nodes and processors.
    pub over_subscribe: OverSubscribe,
    /// `ExclusiveUser=YES`: a node runs the jobs of one user at a time.
    pub exclusive_user: bool,
    /// `QoS`: the QOS whose limits hold every job of the partition (`N/A`: none).
    pub qos: Option<String>,
}

/// A partition's `OverSubscribe`: how its jobs share nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OverSubscribe {
    /// `NO` (the default): jobs share nodes, never processors.
    #[default]
    No,
    /// `EXCLUSIVE`: each job holds its nodes whole.
    Exclusive,
    /// `YES` or `FORCE` (with or without `:count`): jobs may share processors.
    Processors,
}

/// The settings of a Slurm configuration, in file order, its nodes and partitions, and what
/// could not be read in their definitions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SlurmConf {
    settings: Vec<(String, String)>,
    nodes: Vec<SlurmNode>,
    partitions: Vec<SlurmPartition>,
    faults: Vec<String>,
}

impl SlurmConf {
    /// The value of `key` (any case), the last one set when it is set twice, as Slurm reads it.
    pub fn get(&self, key: &str) -> Option<&str> {
        let key = key.to_ascii_lowercase();
        let found = self.settings.iter().rev().find(|(k, _)| *k == key);
        found.map(|(_, value)| value.as_str())
    }

    /// How many settings were read.
    pub fn len(&self) -> usize {
        self.settings.len()
    }

    /// Whether nothing was read.
    pub fn is_empty(&self) -> bool {
        self.settings.is_empty() && self.nodes.is_empty() && self.partitions.is_empty()
    }

    /// The nodes it defines and their processors in all, if it defines any.
    pub fn cluster(&self) -> Option<(u64, f64)> {
        let cpus = self.nodes.iter().map(|n| n.cpus).sum();
        (!self.nodes.is_empty()).then_some((self.nodes.len() as u64, cpus))
    }

    /// The nodes it defines, in file order.
    pub fn nodes(&self) -> &[SlurmNode] {
        &self.nodes
    }

    /// The partitions it defines, in file order.
    pub fn partitions(&self) -> &[SlurmPartition] {
        &self.partitions
    }

    /// The pairs of distinct partitions that share a node, both ways round, in the order the
    /// partitions are defined: the partitions whose jobs contend for nodes.
    pub fn sharing_partitions(&self) -> Vec<(String, String)> {
        let mut pairs = Vec::new();
        for a in &self.partitions {
            for b in self.partitions.iter().filter(|b| b.name != a.name) {
                if a.nodes.iter().any(|n| b.nodes.contains(n)) {
                    pairs.push((a.name.clone(), b.name.clone()));
                }
            }
        }
        pairs
    }

    /// What could not be read in its node and partition definitions, one sentence each naming
    /// the line: a value that is not one the key takes, a host list that is not one.
    pub fn faults(&self) -> &[String] {
        &self.faults
    }

    /// The nodes as machines over `[cpu, memory (KB), gpu]`, as a Slurm dump's jobs ask for
    /// them: one node type per node, named by its host, with its features and the
    /// [`partition_property`] of each partition it is in.
    pub fn machines(&self) -> Vec<NodeType> {
        let members: Vec<HashSet<&str>> = (self.partitions.iter())
            .map(|p| p.nodes.iter().map(String::as_str).collect())
            .collect();
        let nodes = self.nodes.iter().map(|node| {
            let capacity = vec![node.cpus, node.memory_mb * 1024.0, node.gpus];
            let mut machine = NodeType::new(node.name.clone(), 1, capacity);
            machine.properties = node.features.clone();
            let of = (self.partitions.iter().zip(&members))
                .filter(|(_, nodes)| nodes.contains(node.name.as_str()));
            machine
                .properties
                .extend(of.map(|(p, _)| partition_property(&p.name)));
            machine
        });
        nodes.collect()
    }
}

/// A definition being read: its kind (`nodename`, `partitionname`), its line, and its
/// `key=value` words, keys in lower case.
struct Definition {
    kind: String,
    line: usize,
    words: Vec<(String, String)>,
}

impl Definition {
    /// The value of `key` (lower case), the last one given.
    fn get(&self, key: &str) -> Option<&str> {
        let found = self.words.iter().rev().find(|(k, _)| k == key);
        found.map(|(_, v)| v.as_str()).filter(|v| *v != "(null)")
    }

    /// What it names: the value of its first word (`n[01-12]`, `cpu`, `DEFAULT`).
    fn named(&self) -> &str {
        self.words.first().map_or("", |(_, v)| v.as_str())
    }
}

/// Reads a `slurm.conf` or the output of `scontrol show config`, `show node` and `show
/// partition`. Every text reads: a line that sets nothing (prose, a heading, a key with no
/// value or `(null)`, as `scontrol show config` prints unset keys) is passed over, a
/// definition's value that cannot be read is kept in [`SlurmConf::faults`], and the caller
/// says what it missed.
pub fn parse_slurm_conf(text: &str) -> SlurmConf {
    let mut settings = Vec::new();
    let mut definitions: Vec<Definition> = Vec::new();
    // A definition is one line of a `slurm.conf`, and the first line and the indented lines
    // that follow it in `scontrol show node` and `show partition`.
    let mut in_definition = false;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or_default().trim();
        let continued = in_definition && raw.starts_with(char::is_whitespace) && !line.is_empty();
        if continued {
            let words = definitions.last_mut().map(|d| &mut d.words);
            words.into_iter().for_each(|w| w.extend(key_values(line)));
            continue;
        }
        in_definition = false;
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let written = key.trim();
        if written.is_empty() || written.contains(char::is_whitespace) {
            // A heading such as `Slurmctld(primary) at h is UP` has no `=`; a key never holds
            // a space, so this is prose, not a setting.
            continue;
        }
        let key = written.to_ascii_lowercase();
        if DEFINITIONS.contains(&key.as_str()) {
            in_definition = true;
            definitions.push(Definition {
                kind: key,
                line: index + 1,
                words: key_values(line).collect(),
            });
            continue;
        }
        let value = value.trim();
        // `slurm.conf` ends a value at the first blank; `scontrol show config` keeps it whole.
        let spaced = line[..line.find('=').unwrap_or(0)].ends_with(' ');
        let value = match spaced {
            true => value,
            false => value.split_whitespace().next().unwrap_or_default(),
        };
        if value.is_empty() || value == "(null)" {
            // `scontrol show config` prints unset keys with nothing, or `(null)`, after `=`.
            continue;
        }
        settings.push((key, value.to_owned()));
    }
    let mut faults = Vec::new();
    // What the host lists may still name, over every definition.
    let mut budget = MOST_HOSTS;
    let nodes = nodes(&definitions, &mut budget, &mut faults);
    let partitions = partitions(&definitions, &nodes, &mut budget, &mut faults);
    SlurmConf {
        settings,
        nodes,
        partitions,
        faults,
    }
}

/// The `key=value` words of a definition's line, keys in lower case.
fn key_values(line: &str) -> impl Iterator<Item = (String, String)> + '_ {
    line.split_whitespace().filter_map(|word| {
        let (key, value) = word.split_once('=')?;
        Some((key.to_ascii_lowercase(), value.to_owned()))
    })
}

/// The definitions of `kind` other than `DEFAULT`, each beside itself with the words of the
/// `DEFAULT` definitions before it put first (so that its own win).
fn with_defaults<'d>(
    definitions: &'d [Definition],
    kind: &str,
) -> Vec<(&'d Definition, Definition)> {
    // By key: a later DEFAULT replaces an earlier one's value.
    let mut defaults: BTreeMap<String, String> = BTreeMap::new();
    let mut read = Vec::new();
    for definition in definitions.iter().filter(|d| d.kind == kind) {
        if definition.named().eq_ignore_ascii_case("default") {
            defaults.extend(definition.words[1..].iter().cloned());
            continue;
        }
        let defaults = defaults.iter().map(|(k, v)| (k.clone(), v.clone()));
        let words = defaults.chain(definition.words.iter().cloned()).collect();
        let whole = Definition {
            kind: definition.kind.clone(),
            line: definition.line,
            words,
        };
        read.push((definition, whole));
    }
    read
}

/// Puts `item` named `name` in `items`, in the place of an earlier one of that name (a later
/// definition wins), `index` finding each name's place.
fn put<T>(items: &mut Vec<T>, index: &mut HashMap<String, usize>, name: String, item: T) {
    match index.get(&name) {
        Some(&at) => items[at] = item,
        None => {
            index.insert(name, items.len());
            items.push(item);
        }
    }
}

/// The nodes of the `NodeName=` definitions, each host once (a later definition of a host
/// replaces an earlier one), with what `NodeName=DEFAULT` sets where a definition is silent.
fn nodes(
    definitions: &[Definition],
    budget: &mut usize,
    faults: &mut Vec<String>,
) -> Vec<SlurmNode> {
    let mut nodes: Vec<SlurmNode> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (definition, whole) in with_defaults(definitions, "nodename") {
        let fault = |what: String| {
            format!(
                "line {}: NodeName={}: {what}",
                definition.line,
                definition.named()
            )
        };
        let read = node_resources(&whole).map_err(fault);
        let names = match definition.named() {
            "" => Err("names no host".to_owned()),
            list => expand_hosts(list, *budget),
        };
        let names = names.map_err(|e| format!("line {}: NodeName={e}", definition.line));
        match (read, names) {
            (Ok(node), Ok(names)) => {
                *budget -= names.len();
                for name in names {
                    let node = SlurmNode {
                        name,
                        ..node.clone()
                    };
                    let name = node.name.clone();
                    put(&mut nodes, &mut index, name, node);
                }
            }
            (Err(fault), _) | (_, Err(fault)) => faults.push(fault),
        }
    }
    nodes
}

/// A node definition's resources and features (its name left empty).
fn node_resources(definition: &Definition) -> Result<SlurmNode, String> {
    // Keys as Slurm writes them, looked up in lower case.
    let number = |key: &str| -> Result<Option<f64>, String> {
        let Some(value) = definition.get(&key.to_ascii_lowercase()) else {
            return Ok(None);
        };
        match value.parse::<f64>() {
            Ok(n) if n.is_finite() && n >= 0.0 => Ok(Some(n)),
            _ => Err(format!("{key} takes a number >= 0, found {value:?}")),
        }
    };
    let cpus = match number("CPUTot")?.or(number("CPUs")?) {
        Some(cpus) => cpus,
        None => ["Boards", "Sockets", "CoresPerSocket", "ThreadsPerCore"]
            .iter()
            .map(|key| number(key).map(|n| n.unwrap_or(1.0)))
            .product::<Result<f64, String>>()?,
    };
    let features = ["availablefeatures", "features", "feature"]
        .iter()
        .find_map(|key| definition.get(key))
        .map_or_else(Vec::new, |list| {
            list.split(',')
                .filter(|f| !f.is_empty())
                .map(str::to_owned)
                .collect()
        });
    let memory_mb = number("RealMemory")?.unwrap_or(1.0);
    if !cpus.is_finite() || !(memory_mb * 1024.0).is_finite() {
        return Err("its processors or memory are too large to count".into());
    }
    Ok(SlurmNode {
        name: String::new(),
        cpus,
        memory_mb,
        gpus: match definition.get("gres") {
            Some(gres) => gpus(gres).map_err(|problem| format!("Gres {problem}"))? as f64,
            None => 0.0,
        },
        features,
    })
}

/// The partitions of the `PartitionName=` definitions, with what `PartitionName=DEFAULT`
/// sets where a definition is silent.
fn partitions(
    definitions: &[Definition],
    nodes: &[SlurmNode],
    budget: &mut usize,
    faults: &mut Vec<String>,
) -> Vec<SlurmPartition> {
    let mut partitions: Vec<SlurmPartition> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let known: HashSet<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    for (definition, whole) in with_defaults(definitions, "partitionname") {
        let name = definition.named();
        let read = partition(&whole, nodes, *budget).and_then(|read| {
            // A partition's hosts are checked where the file defines nodes at all.
            let unknown = read
                .nodes
                .iter()
                .find(|n| !known.is_empty() && !known.contains(n.as_str()));
            match unknown {
                Some(host) => Err(format!(
                    "Nodes names {host}, which no NodeName line defines"
                )),
                None => Ok(read),
            }
        });
        match read {
            Ok(read) => {
                *budget = budget.saturating_sub(read.nodes.len());
                let read = SlurmPartition {
                    name: name.to_owned(),
                    ..read
                };
                put(&mut partitions, &mut index, name.to_owned(), read);
            }
            Err(what) => faults.push(format!(
                "line {}: PartitionName={name}: {what}",
                definition.line
            )),
        }
    }
    partitions
}

/// A partition definition's nodes and settings (its name left empty).
fn partition(
    definition: &Definition,
    all: &[SlurmNode],
    budget: usize,
) -> Result<SlurmPartition, String> {
    let whole = |key: &str, default: u32| -> Result<u32, String> {
        match definition.get(&key.to_ascii_lowercase()) {
            None => Ok(default),
            Some(v) => v
                .parse::<u32>()
                .map_err(|_| format!("{key} takes a whole number, found {v:?}")),
        }
    };
    // `Priority` is the older name of both.
    let priority = whole("Priority", 1)?;
    let nodes = match definition.get("nodes") {
        None => Vec::new(),
        Some(list) if list.eq_ignore_ascii_case("all") => match all.len() <= budget {
            true => all.iter().map(|n| n.name.clone()).collect(),
            false => return Err(format!("Nodes=ALL names more than {budget} hosts")),
        },
        Some(list) => expand_hosts(list, budget).map_err(|e| format!("Nodes={e}"))?,
    };
    let over_subscribe = match definition
        .get("oversubscribe")
        .or_else(|| definition.get("shared"))
    {
        None => OverSubscribe::No,
        Some(v) => over_subscribe(v).ok_or_else(|| {
            format!("OverSubscribe takes NO, EXCLUSIVE, YES or FORCE, found {v:?}")
        })?,
    };
    let exclusive_user = match definition.get("exclusiveuser") {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("yes") => true,
        Some(v) if v.eq_ignore_ascii_case("no") => false,
        Some(v) => return Err(format!("ExclusiveUser takes YES or NO, found {v:?}")),
    };
    Ok(SlurmPartition {
        name: String::new(),
        nodes,
        priority_tier: whole("PriorityTier", priority)?,
        priority_job_factor: whole("PriorityJobFactor", priority)?,
        over_subscribe,
        exclusive_user,
        qos: (definition.get("qos"))
            .filter(|q| *q != "N/A")
            .map(str::to_owned),
    })
}

/// An `OverSubscribe` value (`EXCLUSIVE`, `FORCE:4`, any case), or `None` for another.
fn over_subscribe(value: &str) -> Option<OverSubscribe> {
    let (mode, count) = value.split_once(':').unwrap_or((value, "1"));
    count.parse::<u32>().ok()?;
    match mode.to_ascii_uppercase().as_str() {
        "NO" => Some(OverSubscribe::No),
        "EXCLUSIVE" => Some(OverSubscribe::Exclusive),
        "YES" | "FORCE" => Some(OverSubscribe::Processors),
        _ => None,
    }
}

/// The machines of a Slurm dump ([`crate::Format::SACCT`]'s machine list): the nodes of a
/// `slurm.conf` or of the saved output of `scontrol show node` (with `scontrol show
/// partition`, so that each job runs in its partition), as [`SlurmConf::machines`] gives them.
/// Refused: a file with a definition that cannot be read, and one that defines no node.
pub fn read_machines(path: &Path) -> Result<Vec<NodeType>, TraceError> {
    let text = std::fs::read_to_string(path).map_err(|error| TraceError::Io {
        path: path.to_owned(),
        error,
    })?;
    let conf = parse_slurm_conf(&text);
    let refuse = |message: String| TraceError::Catalogue {
        path: path.to_owned(),
        message,
    };
    if let Some(fault) = conf.faults().first() {
        return Err(refuse(fault.clone()));
    }
    if conf.nodes().is_empty() {
        return Err(refuse("defines no node: a Slurm dump's machines are a slurm.conf's NodeName lines or the saved output of `scontrol show node` (and `scontrol show partition`), or a TOML catalogue".into()));
    }
    Ok(conf.machines())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_conf_and_scontrol_show_config_read_alike() {
        let conf = "# a site\nSchedulerType=sched/backfill\nSchedulerParameters=bf_interval=60,bf_continue # tuned\nNodeName=n[1-4] CPUs=8\nPriorityWeightAge=1000\n";
        let shown = "Configuration data as of 2026-11-26T03:56:50\nSchedulerType           = sched/backfill\nSchedulerParameters     = bf_interval=60,bf_continue\nPriorityWeightAge       = 1000\n\nSlurmctld(primary) at h is UP\n";
        for text in [conf, shown] {
            let read = parse_slurm_conf(text);
            assert_eq!(read.get("schedulertype"), Some("sched/backfill"));
            assert_eq!(
                read.get("SchedulerParameters"),
                Some("bf_interval=60,bf_continue")
            );
            assert_eq!(read.get("PriorityWeightAge"), Some("1000"));
            assert_eq!(read.get("NodeName"), None);
            assert_eq!(read.len(), 3);
        }
    }

    #[test]
    fn nodes_are_read_from_slurm_conf_and_scontrol_show_node() {
        let conf = "NodeName=DEFAULT RealMemory=1000\nNodeName=n[01-12] NodeAddr=127.0.0.1 CPUs=8 RealMemory=16000\nNodeName=n[13-16],big1 CPUs=16 Gres=gpu:a100:2,gpu:k80:2(S:0) Features=fast,ib\nNodeName=s1 Sockets=2 CoresPerSocket=4 ThreadsPerCore=2\nPartitionName=cpu Nodes=n[01-12]\n";
        let read = parse_slurm_conf(conf);
        assert_eq!(
            read.cluster(),
            Some((18, 12.0 * 8.0 + 5.0 * 16.0 + 16.0)),
            "{:?}",
            read.faults()
        );
        let big = &read.nodes()[16];
        assert_eq!(
            (big.name.as_str(), big.gpus, big.memory_mb),
            ("big1", 4.0, 1000.0)
        );
        assert_eq!(big.features, ["fast", "ib"]);
        assert_eq!(read.nodes()[0].name, "n01");
        let shown = "NodeName=n01 Arch=x86_64 CoresPerSocket=1\n   CPUAlloc=0 CPUEfctv=8 CPUTot=8 CPULoad=0.00\n   AvailableFeatures=(null)\n   Gres=(null)\n   RealMemory=16000 AllocMem=0\n   State=IDLE\n\nNodeName=n02 Arch=x86_64\n   CPUTot=4\n   Gres=gpu:4\n\nSchedulerType = sched/backfill\n";
        let read = parse_slurm_conf(shown);
        assert_eq!(read.cluster(), Some((2, 12.0)));
        assert_eq!(read.nodes()[0].memory_mb, 16000.0);
        assert!(read.nodes()[0].features.is_empty());
        assert_eq!(read.nodes()[1].gpus, 4.0);
        assert_eq!(read.get("SchedulerType"), Some("sched/backfill"));
        assert_eq!(read.get("State"), None, "a node's words are not settings");
        assert_eq!(parse_slurm_conf("Schedulertype=x\n").cluster(), None);
    }

    #[test]
    fn partitions_are_read_from_slurm_conf_and_scontrol_show_partition() {
        let conf = "NodeName=n[1-4] CPUs=8\nPartitionName=DEFAULT MaxTime=60\nPartitionName=cpu Nodes=n[1-3] Default=YES PriorityTier=2 PriorityJobFactor=10\nPartitionName=all Nodes=ALL MaxTime=INFINITE Priority=5\n";
        let shown = "NodeName=n1 CPUTot=8\nNodeName=n2 CPUTot=8\nNodeName=n3 CPUTot=8\nNodeName=n4 CPUTot=8\nPartitionName=cpu\n   AllowGroups=ALL Default=YES QoS=N/A\n   MaxNodes=UNLIMITED MaxTime=01:00:00 MinNodes=0\n   Nodes=n[1-3]\n   PriorityJobFactor=10 PriorityTier=2 RootOnly=NO\n\nPartitionName=all AllowGroups=ALL Default=NO MaxTime=UNLIMITED Nodes=n[1-4] PriorityJobFactor=5 PriorityTier=5\n";
        for text in [conf, shown] {
            let read = parse_slurm_conf(text);
            assert!(read.faults().is_empty(), "{:?}", read.faults());
            let [cpu, all] = read.partitions() else {
                panic!("{:?}", read.partitions());
            };
            assert_eq!(cpu.nodes, ["n1", "n2", "n3"]);
            assert_eq!((cpu.priority_tier, cpu.priority_job_factor), (2, 10));
            assert_eq!(all.nodes.len(), 4);
            assert_eq!((all.priority_tier, all.priority_job_factor), (5, 5));
            let machines = read.machines();
            assert_eq!(machines[0].properties, ["partition:cpu", "partition:all"]);
            assert_eq!(machines[3].properties, ["partition:all"]);
        }
    }

    #[test]
    fn over_subscribe_and_exclusive_user_are_read_and_bad_values_are_faults() {
        let conf = "NodeName=n1 CPUs=8\nPartitionName=a Nodes=n1 OverSubscribe=EXCLUSIVE\nPartitionName=b Nodes=n1 OverSubscribe=FORCE:4 ExclusiveUser=YES\nPartitionName=c Nodes=n1 Shared=yes\nPartitionName=d Nodes=n1 OverSubscribe=NO ExclusiveUser=NO\n";
        let read = parse_slurm_conf(conf);
        assert!(read.faults().is_empty(), "{:?}", read.faults());
        let seen: Vec<(OverSubscribe, bool)> = (read.partitions().iter())
            .map(|p| (p.over_subscribe, p.exclusive_user))
            .collect();
        use OverSubscribe::*;
        assert_eq!(
            seen,
            [
                (Exclusive, false),
                (Processors, true),
                (Processors, false),
                (No, false)
            ]
        );
        for (bad, says) in [
            (
                "OverSubscribe=SOMETIMES",
                "OverSubscribe takes NO, EXCLUSIVE, YES or FORCE, found \"SOMETIMES\"",
            ),
            ("OverSubscribe=FORCE:x", "found \"FORCE:x\""),
            (
                "ExclusiveUser=maybe",
                "ExclusiveUser takes YES or NO, found \"maybe\"",
            ),
        ] {
            let read = parse_slurm_conf(&format!(
                "NodeName=n1 CPUs=8\nPartitionName=a Nodes=n1 {bad}\n"
            ));
            assert!(
                read.faults()
                    .iter()
                    .any(|f| f.starts_with("line 2: PartitionName=a: ") && f.contains(says)),
                "{:?}",
                read.faults()
            );
        }
    }

    #[test]
    fn unreadable_definitions_and_unknown_nodes_are_faults() {
        let read = parse_slurm_conf("NodeName=n[1-4 CPUs=8\nNodeName=m1 CPUs=many\nPartitionName=p Nodes=m1 PriorityTier=high\nNodeName=k1 Sockets=1e300 CoresPerSocket=1e300\nNodeName= CPUs=2\nNodeName=ok CPUs=2\nPartitionName=q Nodes=ok,ghost\n");
        assert_eq!(read.faults().len(), 6, "{:?}", read.faults());
        assert!(
            read.faults()[5].contains("Nodes names ghost"),
            "{:?}",
            read.faults()
        );
        assert!(
            read.faults()[1].starts_with("line 2: NodeName=m1: CPUs takes"),
            "{:?}",
            read.faults()
        );
        let read = parse_slurm_conf("NodeName=g1 CPUs=8 Gres=gpu:a100:x:2\n");
        assert!(
            read.faults()[0].contains("Gres is invalid: GPU count in `gpu:a100:x:2`"),
            "{:?}",
            read.faults()
        );
    }

    #[test]
    fn the_last_setting_wins_and_an_empty_one_is_unset() {
        let read = parse_slurm_conf(
            "bf=1\nBF=2\nPowerPlugin = \nOverTimeLimit=\nSchedulerParameters = (null)\n",
        );
        assert_eq!(read.get("bf"), Some("2"));
        assert_eq!(read.get("PowerPlugin"), None);
        assert_eq!(read.get("OverTimeLimit"), None);
        assert_eq!(read.get("SchedulerParameters"), None);
        assert_eq!(read.len(), 2);
    }
}
