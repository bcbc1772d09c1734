//! Grid Engine's hosts: any bytes, split at the first NUL, read as `qstat -f -xml` and `qhost
//! -xml`; none may panic, and every host read is named and serves the queues it was listed in.
#![no_main]
use fairshare_gridengine::hosts::parse_nodes;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (queues, hosts) = text.split_once('\0').unwrap_or((&text, ""));
    if let Ok(nodes) = parse_nodes(queues, hosts) {
        assert!(nodes.iter().all(|n| !n.partitions.is_empty()), "{nodes:?}");
    }
});
