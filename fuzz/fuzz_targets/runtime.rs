//! Runtime scenario files (TOML with constant or stepped demand); small ones are also run.
#![no_main]
use fairshare_sim::runtime::{run, RuntimePolicy, RuntimeScenario};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = fairshare_fuzz::file("runtime.toml", data);
    let Ok(scenario) = RuntimeScenario::from_toml(text, &path) else {
        return;
    };
    if u64::from(scenario.ticks()) * scenario.workloads.len() as u64 > 10_000 {
        return;
    }
    for policy in [RuntimePolicy::Off, scenario.policy] {
        let result = run(&scenario, policy).expect("a scenario that reads runs");
        for w in &result.workloads {
            for series in &w.share {
                assert!(series.iter().all(|s| s.is_finite() && (0.0..=1.0 + 1e-9).contains(s)));
            }
        }
    }
});
