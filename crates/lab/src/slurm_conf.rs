//! A site's Slurm configuration turned into `--scheduler slurm`'s parameters, one place for
//! the command line's `--slurm-conf` and the Python package's `slurm_conf=`.

use fairshare_core::error::Invalid;
use fairshare_sim::cluster::SlurmParameters;
use fairshare_trace::slurm_conf::{parse_slurm_conf, SlurmPartition};

/// The parameters of a `slurm.conf`, or of the saved output of `scontrol show config` (with
/// `scontrol show node`, whose nodes the job size factor counts), and a note, one sentence
/// each, on every setting that changes outcomes but is not modelled. Refused: a text that
/// sets nothing, and a value that is not one the setting takes (the error names it).
pub fn slurm_parameters(text: &str) -> Result<(SlurmParameters, Vec<String>), Invalid> {
    let conf = parse_slurm_conf(text);
    if let Some(fault) = conf.faults().first() {
        return Err(fault.clone().into());
    }
    if conf.is_empty() {
        return Err("no Key=Value setting in it".into());
    }
    let (mut parameters, mut notes) = SlurmParameters::from_conf(|key| conf.get(key))?;
    let partitions = conf.partitions();
    let differ =
        |of: fn(&SlurmPartition) -> u32| partitions.iter().any(|p| of(p) != of(&partitions[0]));
    if differ(|p| p.priority_tier) {
        notes.push("the partitions' PriorityTier differ and are not modelled: every job is considered in one tier".into());
    }
    if differ(|p| p.priority_job_factor) && parameters.priority.orders_jobs() {
        notes.push(
            "the partitions' PriorityJobFactor differ; the partition factor is not modelled".into(),
        );
    }
    parameters.priority.cluster = conf.cluster().map(|(nodes, cpus)| (nodes as f64, cpus));
    if parameters.priority.size_weight != 0.0 && parameters.priority.cluster.is_none() {
        notes.push("the job size factor counts the replay's nodes and processors: the file defines no node (add `scontrol show node`, or the NodeName lines)".into());
    }
    Ok((parameters, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_set_the_size_factors_cluster_and_their_absence_is_noted() {
        let conf = "PriorityWeightJobSize=1000\nNodeName=n[1-4] CPUs=8\n";
        let (parameters, notes) = slurm_parameters(conf).unwrap();
        assert_eq!(parameters.priority.cluster, Some((4.0, 32.0)));
        assert!(notes.is_empty(), "{notes:?}");
        let (parameters, notes) = slurm_parameters("PriorityWeightJobSize=1000\n").unwrap();
        assert_eq!(parameters.priority.cluster, None);
        assert_eq!(notes.len(), 1);
        assert!(slurm_parameters("# nothing\n").is_err());
        let refused = slurm_parameters("NodeName=n[1-4 CPUs=8\n").unwrap_err();
        assert!(
            refused.to_string().starts_with("line 1: NodeName="),
            "{refused}"
        );
    }

    #[test]
    fn partitions_that_differ_in_what_is_not_modelled_are_noted() {
        let conf = "PriorityWeightAge=10\nNodeName=n[1-4] CPUs=8\nPartitionName=a Nodes=n[1-2] PriorityTier=2 PriorityJobFactor=3\nPartitionName=b Nodes=n[3-4]\n";
        let (_, notes) = slurm_parameters(conf).unwrap();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("PriorityTier") && notes[1].contains("PriorityJobFactor"));
        let (_, notes) =
            slurm_parameters("NodeName=n1 CPUs=8\nPartitionName=a Nodes=n1\n").unwrap();
        assert!(notes.is_empty(), "{notes:?}");
    }
}
