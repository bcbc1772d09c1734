//! A site's Slurm configuration turned into `--scheduler slurm`'s parameters, one place for
//! the command line's `--slurm-conf` and the Python package's `slurm_conf=`.

use fairshare_core::error::Invalid;
use fairshare_sim::cluster::SlurmParameters;
use fairshare_trace::slurm_conf::parse_slurm_conf;

/// The parameters of a `slurm.conf`, or of the saved output of `scontrol show config` (with
/// `scontrol show node`, whose nodes the job size factor counts), and a note, one sentence
/// each, on every setting that changes outcomes but is not modelled. Refused: a text that
/// sets nothing, and a value that is not one the setting takes (the error names it).
pub fn slurm_parameters(text: &str) -> Result<(SlurmParameters, Vec<String>), Invalid> {
    let conf = parse_slurm_conf(text);
    if conf.is_empty() {
        return Err("no Key=Value setting in it".into());
    }
    let (mut parameters, mut notes) = SlurmParameters::from_conf(|key| conf.get(key))?;
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
    }
}
