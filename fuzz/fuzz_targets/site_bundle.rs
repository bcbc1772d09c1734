//! A site bundle opened as `fairshare slurm what-if` opens it, one of its small files (the
//! manifest, the last decay's time, the adapter's configuration) replaced by the input: none may
//! panic, and a bundle refused names the file.
#![no_main]
use fairshare_lab::whatif::WhatIf;

/// The files of a small bundle that reads.
const FILES: [(&str, &str); 4] = [
    ("config.txt", "ClusterName=emu\nNodeName=n1 CPUs=4\nPartitionName=cpu Nodes=n1 Default=YES\n"),
    ("assoc.txt", "emu|root|||1||\nemu|a|||1|root|\nemu|a|alice||1|a|\n"),
    ("qos.txt", "normal|1.000000|0\n"),
    ("sacct.txt", "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State\n1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:00|00:01:00|00:02:00|cpu=1,node=1|cpu|COMPLETED\n"),
];

/// The files the input may stand for.
const FUZZED: [&str; 3] = ["manifest.toml", "last-decay.txt", "adapter.toml"];

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&which, text)) = data.split_first() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in FILES {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let fuzzed = FUZZED[usize::from(which) % FUZZED.len()];
    std::fs::write(dir.path().join(fuzzed), text).unwrap();
    let policies = vec!["sdrf".parse().unwrap()];
    if let Err(e) = WhatIf::open(dir.path(), policies) {
        let message = e.to_string();
        assert!(message.contains(fuzzed), "{message} names no file");
    }
});
