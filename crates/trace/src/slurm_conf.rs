//! A Slurm configuration as a replay needs it: the settings of a `slurm.conf` (`Key=Value`,
//! `#` comments) or of the saved output of `scontrol show config` (`Key = Value`), so that
//! `fairshare replay --scheduler slurm --slurm-conf FILE` schedules as that site's
//! `slurmctld` does. Keys are matched without regard to case, as Slurm matches them; the
//! lines that define nodes and partitions (`NodeName=`, `PartitionName=`, …) are not settings
//! and are passed over, as are the headings of `scontrol show config`. The nodes are counted,
//! with their processors, from a `slurm.conf`'s `NodeName=` lines or from the saved output of
//! `scontrol show node` in the same file: Slurm's job size factor is a share of the whole
//! cluster.

/// The lines of a `slurm.conf` that define things rather than set a value.
const DEFINITIONS: [&str; 6] = [
    "nodename",
    "partitionname",
    "nodeset",
    "frontendname",
    "downnodes",
    "switchname",
];

/// The settings of a Slurm configuration, in file order, and the nodes it defines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SlurmConf {
    settings: Vec<(String, String)>,
    nodes: u64,
    cpus: f64,
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
        self.settings.is_empty() && self.nodes == 0
    }

    /// The nodes it defines and their processors in all, if it defines any.
    pub fn cluster(&self) -> Option<(u64, f64)> {
        (self.nodes > 0).then_some((self.nodes, self.cpus))
    }
}

/// A node definition being read: its hosts and, once seen, its processors.
struct NodeDefinition {
    hosts: u64,
    cpus: Option<f64>,
}

/// The hosts a Slurm host list names: `n[01-12],gpu[1-4]` names 16, `a,b` two. A host list
/// that is not one (a bracket left open, a range that falls) counts as one host.
fn count_hosts(list: &str) -> u64 {
    let mut total: u64 = 0;
    let (mut depth, mut start) = (0, 0);
    let bytes = list.as_bytes();
    for i in 0..=bytes.len() {
        match bytes.get(i) {
            Some(b'[') => depth += 1,
            Some(b']') => depth -= 1,
            Some(b',') if depth == 0 => {
                total = total.saturating_add(count_host(&list[start..i]));
                start = i + 1;
            }
            None => total = total.saturating_add(count_host(&list[start..])),
            _ => {}
        }
    }
    total
}

/// The hosts one name of a host list stands for: the product of its bracketed ranges.
fn count_host(name: &str) -> u64 {
    let mut count: u64 = 1;
    let mut rest = name;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else {
            return 1;
        };
        let ranges = &rest[open + 1..open + close];
        let mut here: u64 = 0;
        for range in ranges.split(',') {
            let (low, high) = range.split_once('-').unwrap_or((range, range));
            match (low.trim().parse::<u64>(), high.trim().parse::<u64>()) {
                (Ok(l), Ok(h)) if l <= h => here = here.saturating_add(h - l + 1),
                _ => return 1,
            }
        }
        count = count.saturating_mul(here);
        rest = &rest[open + close + 1..];
    }
    count
}

/// The processors a node definition's `key=value` word sets, if it sets them.
fn cpus_of(word: &str) -> Option<f64> {
    let (key, value) = word.split_once('=')?;
    let key = key.to_ascii_lowercase();
    (key == "cpus" || key == "cputot")
        .then(|| {
            value
                .parse::<f64>()
                .ok()
                .filter(|c| c.is_finite() && *c >= 0.0)
        })
        .flatten()
}

/// Reads a `slurm.conf` or the output of `scontrol show config`. Every text reads: a line
/// that sets nothing (prose, a heading, a key with no value or `(null)`, as `scontrol show
/// config` prints unset keys) is passed over, and the caller says what it missed.
pub fn parse_slurm_conf(text: &str) -> SlurmConf {
    let mut settings = Vec::new();
    let mut nodes: Vec<NodeDefinition> = Vec::new();
    // A node is defined on one line of a `slurm.conf`, and over the indented lines that
    // follow `NodeName=` in `scontrol show node`.
    let mut in_node = false;
    for raw in text.lines() {
        let line = raw.split('#').next().unwrap_or_default().trim();
        let continued = in_node && raw.starts_with(char::is_whitespace) && !line.is_empty();
        if !continued {
            in_node = false;
        }
        for word in line.split_whitespace() {
            if let Some(list) = word
                .strip_prefix("NodeName=")
                .or_else(|| word.strip_prefix("nodename="))
            {
                in_node = !list.eq_ignore_ascii_case("default");
                if in_node {
                    nodes.push(NodeDefinition {
                        hosts: count_hosts(list),
                        cpus: None,
                    });
                }
            } else if let (true, Some(node), Some(cpus)) =
                (in_node, nodes.last_mut(), cpus_of(word))
            {
                node.cpus.get_or_insert(cpus);
            }
        }
        if in_node {
            continue;
        }
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
    let cpus = nodes
        .iter()
        .map(|n| n.hosts as f64 * n.cpus.unwrap_or(1.0))
        .sum();
    SlurmConf {
        settings,
        nodes: nodes.iter().map(|n| n.hosts).fold(0, u64::saturating_add),
        cpus,
    }
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
    fn nodes_are_counted_from_slurm_conf_and_scontrol_show_node() {
        let conf = "NodeName=DEFAULT CPUs=4\nNodeName=n[01-12] NodeAddr=127.0.0.1 CPUs=8 RealMemory=16000\nNodeName=n[13-16],big1 CPUs=16 Gres=gpu:4\nPartitionName=cpu Nodes=n[01-12]\n";
        assert_eq!(
            parse_slurm_conf(conf).cluster(),
            Some((17, 12.0 * 8.0 + 5.0 * 16.0))
        );
        let shown = "NodeName=n01 Arch=x86_64 CoresPerSocket=1\n   CPUAlloc=0 CPUEfctv=8 CPUTot=8 CPULoad=0.00\n   State=IDLE\n\nNodeName=n02 Arch=x86_64\n   CPUTot=4\n\nSchedulerType = sched/backfill\n";
        let read = parse_slurm_conf(shown);
        assert_eq!(read.cluster(), Some((2, 12.0)));
        assert_eq!(read.get("SchedulerType"), Some("sched/backfill"));
        assert_eq!(read.get("State"), None, "a node's words are not settings");
        assert_eq!(count_hosts("a,b[1-3,7],c[0-1]d[1-2]"), 1 + 4 + 4);
        assert_eq!(count_hosts("n[5-1]"), 1);
        assert_eq!(parse_slurm_conf("Schedulertype=x\n").cluster(), None);
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
