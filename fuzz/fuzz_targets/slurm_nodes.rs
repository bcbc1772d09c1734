//! Slurm's nodes: any bytes read as `sinfo --json`; none may panic, every node read has a
//! name, and an error about a node names it and a field.
#![no_main]
use fairshare_slurm::nodes::parse_nodes;
use fairshare_slurm::ReadError;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_nodes(&text) {
        Ok(nodes) => assert!(nodes.iter().all(|n| !n.name.is_empty())),
        Err(ReadError::Field { record, field, .. }) => {
            assert!(record.starts_with("node ") || record == "top", "{record}");
            assert!(!field.is_empty());
        }
        Err(_) => {}
    }
});
