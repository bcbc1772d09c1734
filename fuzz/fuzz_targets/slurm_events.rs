//! A Slurm site's nodes over a window: any bytes read as `sacctmgr -P show event` and `show
//! reservation` outputs; none may panic, every span read names a node and ends no earlier than
//! it begins where it ends at all, and an error names a line and a field.
#![no_main]
use fairshare_trace::slurm_nodes::{read_node_events, read_reservations};
use fairshare_trace::slurm_output::ReadError;

/// The error names a line.
fn about_a_line(e: ReadError) {
    match e {
        ReadError::Field { record, .. } => assert!(record.starts_with("line "), "{record}"),
        other => panic!("not about a line: {other}"),
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match read_node_events(&text) {
        Ok(events) => events.iter().for_each(|e| assert!(!e.hosts.is_empty(), "{e:?}")),
        Err(e) => about_a_line(e),
    }
    match read_reservations(&text) {
        Ok(read) => read.iter().for_each(|r| assert!(r.to >= r.from, "{r:?}")),
        Err(e) => about_a_line(e),
    }
});
