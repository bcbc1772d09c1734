//! Sweep shard outputs, as `fairshare sweep merge` reads them.
#![no_main]
use fairshare_lab::shard::{check_sweep, read_shard};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(summary) = read_shard(text) {
        let again = serde_json::to_string(&summary).expect("serialises");
        let summary = read_shard(&again).expect("what was accepted is accepted again");
        check_sweep(&summary).expect("checked");
    }
});
