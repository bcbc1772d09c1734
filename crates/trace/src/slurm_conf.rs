//! A Slurm configuration as a replay needs it: the settings of a `slurm.conf` (`Key=Value`,
//! `#` comments) or of the saved output of `scontrol show config` (`Key = Value`), so that
//! `fairshare replay --scheduler slurm --slurm-conf FILE` schedules as that site's
//! `slurmctld` does. Keys are matched without regard to case, as Slurm matches them; the
//! lines that define nodes and partitions (`NodeName=`, `PartitionName=`, …) are not settings
//! and are passed over, as are the headings of `scontrol show config`.

/// The lines of a `slurm.conf` that define things rather than set a value.
const DEFINITIONS: [&str; 6] = [
    "nodename",
    "partitionname",
    "nodeset",
    "frontendname",
    "downnodes",
    "switchname",
];

/// The settings of a Slurm configuration, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlurmConf {
    settings: Vec<(String, String)>,
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
        self.settings.is_empty()
    }
}

/// Reads a `slurm.conf` or the output of `scontrol show config`. Every text reads: a line
/// that sets nothing (prose, a heading, a key with no value or `(null)`, as `scontrol show
/// config` prints unset keys) is passed over, and the caller says what it missed.
pub fn parse_slurm_conf(text: &str) -> SlurmConf {
    let mut settings = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
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
    SlurmConf { settings }
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
