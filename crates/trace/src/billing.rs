//! What Slurm charges a job's association for each second it runs: its billing units.
//!
//! A site with GPUs or memory-heavy nodes sets `TRESBillingWeights` per partition, and Slurm
//! then charges fairshare usage in billing units rather than CPUs (`priority_multifactor.c`,
//! `_apply_new_usage`): the job's billable TRES — each allocated TRES times its weight, summed,
//! or with `PriorityFlags=MAX_TRES` the largest of the per-node TRES (CPU, memory, nodes, GRES)
//! plus the sum of the others (`assoc_mgr_tres_weighted`) — times its QOS's `UsageFactor`.
//! A partition without weights charges the job's CPUs. Slurm keeps the billable TRES as a
//! `double`; `billing=` in `AllocTRES` is that number rounded down, so the figure is worked
//! out from the weights where they are known, and read from `billing=` only where they are
//! not.
//!
//! Weights are read as Slurm reads them, by the reader the simulator's `PriorityWeightTRES`
//! shares ([`TresWeights`]): `Mem=0.25G` is 0.25 per gigabyte, 0.25/1024 per megabyte. This
//! module reads the weights from `scontrol show partition`, the usage factors from `sacctmgr
//! show qos`, and a job's TRES from `AllocTRES`.

use crate::slurm_output::{lines, Problem, ReadError};
use fairshare_core::error::Invalid;
pub use fairshare_core::model::TresWeights;
use fairshare_core::model::{tres_name, tres_type};
use std::collections::BTreeMap;

/// The command whose output [`parse_partitions`] reads: every partition, one per line.
pub const PARTITIONS_COMMAND: [&str; 4] = ["scontrol", "--oneliner", "show", "partition"];

/// The command whose output [`parse_qos`] reads.
pub const QOS_COMMAND: [&str; 6] = [
    "sacctmgr",
    "show",
    "qos",
    "--parsable2",
    "--noheader",
    "format=Name,UsageFactor",
];

/// Whether `tres` is one `MAX_TRES` takes the largest of: CPU, memory, nodes and GRES.
fn per_node(tres: &str) -> bool {
    matches!(tres, "cpu" | "mem" | "node") || tres.starts_with("gres/")
}

/// How a site's Slurm bills jobs: the weights of each partition, whether `MAX_TRES` is set,
/// and each QOS's `UsageFactor`. The default bills every job its CPUs, or `billing=` where
/// `AllocTRES` has it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Billing {
    /// Each partition's `TRESBillingWeights` (a partition without any is left out).
    pub partitions: BTreeMap<String, TresWeights>,
    /// `PriorityFlags=MAX_TRES`.
    pub max_tres: bool,
    /// Each QOS's `UsageFactor` (1 where a QOS is not listed).
    pub usage_factors: BTreeMap<String, f64>,
}

impl Billing {
    /// What the job allocated `alloc_tres` (sacct's `AllocTRES`) in `partition` under `qos` is
    /// charged per second: its billable TRES times its QOS's usage factor. The error says what
    /// was expected of `AllocTRES`.
    pub fn charge(
        &self,
        partition: Option<&str>,
        qos: Option<&str>,
        alloc_tres: &str,
    ) -> Result<f64, Invalid> {
        let counts = tres_counts(alloc_tres)?;
        let charge = self.billable(partition, &counts) * self.usage_factor(qos);
        match charge.is_finite() {
            true => Ok(charge),
            false => Err(Invalid(format!("a charge of {charge} for {alloc_tres:?}"))),
        }
    }

    /// The billable TRES of `counts` (each TRES's allocated amount in its base unit) in
    /// `partition`: weighted where the partition's weights are known, else `billing=`, else
    /// the CPUs.
    pub fn billable(&self, partition: Option<&str>, counts: &[(String, f64)]) -> f64 {
        let count = |tres: &str| counts.iter().find(|(t, _)| t == tres).map(|(_, c)| *c);
        let Some(weights) = partition.and_then(|p| self.partitions.get(p)) else {
            return count("billing").or_else(|| count("cpu")).unwrap_or(0.0);
        };
        let (mut node, mut global) = (0.0f64, 0.0);
        for (tres, amount) in counts.iter().filter(|(t, _)| t != "billing") {
            let Some(w) = weights.get(tres) else {
                continue;
            };
            match self.max_tres && per_node(tres) {
                true => node = node.max(amount * w),
                false => global += amount * w,
            }
        }
        node + global
    }

    /// The `UsageFactor` of `qos` (1 for none, or one not listed).
    pub fn usage_factor(&self, qos: Option<&str>) -> f64 {
        qos.and_then(|q| self.usage_factors.get(q))
            .copied()
            .unwrap_or(1.0)
    }
}

/// sacct's `AllocTRES` (`billing=8,cpu=8,gres/gpu=2,mem=16G,node=2`) as each TRES's amount
/// in its base unit (memory in megabytes: `16G` is 16384, a bare number is megabytes as Slurm
/// writes it). The error says what was expected.
pub fn tres_counts(text: &str) -> Result<Vec<(String, f64)>, Invalid> {
    let mut counts = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (tres, value) = item.split_once('=').ok_or_else(|| {
            format!("TRES as key=value pairs, such as cpu=4,mem=16G, found {item:?}")
        })?;
        let tres = tres_name(tres);
        let amount = match tres_type(&tres) {
            "mem" | "bb" => {
                let bare = value.parse::<f64>().is_ok();
                let size = if bare {
                    format!("{value}M")
                } else {
                    value.to_owned()
                };
                crate::parse_size(&size)
                    .map_err(|_| format!("{tres} a size such as 16G or 3900M, found {value:?}"))?
                    / (1024.0 * 1024.0)
            }
            _ => value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("{tres} a number >= 0, found {value:?}"))?,
        };
        counts.push((tres, amount));
    }
    Ok(counts)
}

/// The weights of every partition in `scontrol show partition`'s output, one partition per
/// line (`--oneliner`) or spread over lines as `scontrol` prints it by default; a partition
/// without `TRESBillingWeights` is left out (it bills CPUs).
pub fn parse_partitions(text: &str) -> Result<BTreeMap<String, TresWeights>, ReadError> {
    let mut partitions = BTreeMap::new();
    let mut current: Option<String> = None;
    for (record, line) in lines(text) {
        for token in line.split_whitespace() {
            let Some((key, value)) = token.split_once('=') else {
                continue;
            };
            match key {
                "PartitionName" => current = Some(value.to_owned()),
                "TRESBillingWeights" => {
                    let name = current.clone().ok_or_else(|| {
                        ReadError::field_of(&record, "PartitionName", Problem::Missing)
                    })?;
                    let weights = value.parse().map_err(|e: Invalid| {
                        ReadError::field_of(&record, "TRESBillingWeights", Problem::Invalid(e.0))
                    })?;
                    partitions.insert(name, weights);
                }
                _ => {}
            }
        }
    }
    Ok(partitions)
}

/// Each QOS's `UsageFactor` from `sacctmgr -P -n show qos format=Name,UsageFactor` (a
/// third column, `Priority`, may follow: [`parse_qos_priorities`] reads it).
pub fn parse_qos(text: &str) -> Result<BTreeMap<String, f64>, ReadError> {
    let rows = qos_rows(text)?.into_iter();
    Ok(rows.map(|row| (row.name, row.usage_factor)).collect())
}

/// Each QOS's `Priority` from `sacctmgr -P -n show qos format=Name,UsageFactor,Priority`
/// (an empty field is 0, as Slurm takes it); none from a list without the column.
pub fn parse_qos_priorities(text: &str) -> Result<BTreeMap<String, u32>, ReadError> {
    let rows = qos_rows(text)?.into_iter();
    Ok(rows
        .filter_map(|row| Some((row.name, row.priority?)))
        .collect())
}

/// One QOS as `sacctmgr show qos` lists it.
struct QosRow {
    name: String,
    usage_factor: f64,
    priority: Option<u32>,
}

/// The QOS of `Name|UsageFactor[|Priority]` lines.
fn qos_rows(text: &str) -> Result<Vec<QosRow>, ReadError> {
    let mut rows = Vec::new();
    for (record, line) in lines(text) {
        let columns: Vec<&str> = line.trim().split('|').map(str::trim).collect();
        let (name, factor, priority) = match columns[..] {
            [name, factor] => (name, factor, None),
            [name, factor, priority] => (name, factor, Some(priority)),
            _ => {
                let problem = Problem::Invalid(format!(
                    "expected Name|UsageFactor or Name|UsageFactor|Priority, found {line:?}"
                ));
                return Err(ReadError::field_of(&record, "Name", problem));
            }
        };
        let usage_factor = (factor.parse::<f64>().ok())
            .filter(|f| f.is_finite() && *f >= 0.0)
            .ok_or_else(|| {
                let problem = Problem::Invalid(format!("not a number >= 0: {factor:?}"));
                ReadError::field_of(&record, "UsageFactor", problem)
            })?;
        let priority = match priority {
            None => None,
            Some("") => Some(0),
            Some(p) => Some(p.parse::<u32>().map_err(|_| {
                let problem = Problem::Invalid(format!("not a whole number >= 0: {p:?}"));
                ReadError::field_of(&record, "Priority", problem)
            })?),
        };
        let name = name.to_owned();
        rows.push(QosRow {
            name,
            usage_factor,
            priority,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARTITIONS: &str = "\
PartitionName=cpu\n   AllowGroups=ALL Default=YES\n   TRES=cpu=64,mem=128000M,node=8,billing=64\n   TRESBillingWeights=CPU=1.0,Mem=0.25G\n\n\
PartitionName=gpu AllowGroups=ALL TRES=cpu=64,mem=128000M,node=8,billing=96,gres/gpu=16 TRESBillingWeights=CPU=0.5,Mem=0.125G,GRES/gpu=4.0\n\
PartitionName=debug AllowGroups=ALL TRES=cpu=8\n";

    fn billing(max_tres: bool) -> Billing {
        Billing {
            partitions: parse_partitions(PARTITIONS).unwrap(),
            max_tres,
            usage_factors: parse_qos("normal|1.000000\nscavenger|0.250000\n").unwrap(),
        }
    }

    #[test]
    fn partitions_weights_are_read_in_base_units() {
        let parts = parse_partitions(PARTITIONS).unwrap();
        assert_eq!(parts.len(), 2, "debug has no weights");
        let read = |p: &str| {
            parts[p]
                .iter()
                .map(|(t, w)| (t.to_owned(), w))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            read("cpu"),
            [("cpu".to_owned(), 1.0), ("mem".to_owned(), 0.25 / 1024.0)]
        );
        assert_eq!(parts["gpu"].get("gres/gpu"), Some(4.0));
    }

    #[test]
    fn jobs_are_billed_as_slurm_bills_them() {
        let tres = "billing=9,cpu=4,mem=8000M,node=1,gres/gpu=2";
        // Sum: 4 × 1 + 8000 MB × 0.25/1024.
        let sum = billing(false);
        let expected = 4.0 + 8000.0 * 0.25 / 1024.0;
        assert_eq!(sum.charge(Some("cpu"), None, tres).unwrap(), expected);
        // MAX_TRES on gpu: max(4 × 0.5, 8000 × 0.125/1024, 2 × 4) = 8.
        let max = billing(true);
        assert_eq!(max.charge(Some("gpu"), Some("normal"), tres).unwrap(), 8.0);
        // A scavenger QOS is charged a quarter.
        assert_eq!(
            max.charge(Some("gpu"), Some("scavenger"), tres).unwrap(),
            2.0
        );
        // No weights: billing= as Slurm printed it, else the CPUs.
        assert_eq!(sum.charge(Some("debug"), None, tres).unwrap(), 9.0);
        assert_eq!(sum.charge(None, None, "cpu=3,mem=1G").unwrap(), 3.0);
        assert_eq!(Billing::default().charge(None, None, "").unwrap(), 0.0);
        assert!(sum.charge(None, None, "cpu=x").unwrap_err().contains("cpu"));
        assert!(sum
            .charge(None, None, "mem=3Q")
            .unwrap_err()
            .contains("mem"));
    }

    #[test]
    fn bad_outputs_name_the_line_and_field() {
        let e = parse_partitions("TRESBillingWeights=CPU=1").unwrap_err();
        assert_eq!(e.field(), Some("PartitionName"));
        let e = parse_partitions("PartitionName=a\n TRESBillingWeights=CPU=x").unwrap_err();
        assert_eq!(e.to_string().split(':').next(), Some("line 2"));
        assert_eq!(
            parse_qos("normal|-1").unwrap_err().field(),
            Some("UsageFactor")
        );
        assert_eq!(parse_qos("normal").unwrap_err().field(), Some("Name"));
        let listed = "normal|1.000000|0\nhigh|2.0|1000\nlow|0.5|\n";
        assert_eq!(parse_qos(listed).unwrap()["high"], 2.0);
        let priorities = parse_qos_priorities(listed).unwrap();
        assert_eq!(
            priorities.into_iter().collect::<Vec<_>>(),
            [
                ("high".into(), 1000),
                ("low".into(), 0),
                ("normal".into(), 0)
            ]
        );
        assert!(parse_qos_priorities("normal|1.0\n").unwrap().is_empty());
        let bad = parse_qos_priorities("normal|1.0|-5\n").unwrap_err();
        assert_eq!(bad.field(), Some("Priority"));
        assert_eq!(parse_qos("root|||1|").unwrap_err().field(), Some("Name"));
    }
}
