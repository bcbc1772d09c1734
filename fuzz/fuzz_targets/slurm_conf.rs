//! A Slurm configuration (`slurm.conf`, `scontrol show config`, `show node`, `show partition`)
//! read as `fairshare replay --slurm-conf` and `--machines` read it: none may panic, every
//! setting read has a value, every node a name and a partition only nodes with names, a fault
//! names its line, and parameters taken from it are ones the Slurm scheduler can run with.
#![no_main]
use fairshare_sim::cluster::SlurmParameters;
use fairshare_trace::slurm_conf::parse_slurm_conf;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let conf = parse_slurm_conf(&text);
    for key in ["SchedulerType", "SchedulerParameters", "OverTimeLimit"] {
        assert!(conf.get(key).is_none_or(|v| !v.is_empty()));
    }
    assert!(conf.nodes().iter().all(|n| !n.name.is_empty() && n.cpus >= 0.0));
    assert!(conf.partitions().iter().all(|p| p.nodes.iter().all(|n| !n.is_empty())));
    assert!(conf.faults().iter().all(|f| f.starts_with("line ")));
    let machines = conf.machines();
    assert_eq!(machines.len(), conf.nodes().len());
    if let Ok((parameters, _notes)) = SlurmParameters::from_conf(|key| conf.get(key)) {
        assert!(parameters.bf_interval_s >= 1);
        assert!(parameters.bf_window_s >= 60);
        assert!(parameters.bf_max_job_test >= 1);
        assert!(parameters.default_queue_depth >= 1);
    }
});
