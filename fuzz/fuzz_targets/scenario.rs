//! Bottleneck scenario files (TOML with programs in the paper's syntax).
#![no_main]
use fairshare_sim::scenario::Scenario;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = fairshare_fuzz::file("scenario.toml", data);
    if let Ok(scenario) = Scenario::from_toml(text, &path) {
        for process in &scenario.processes {
            assert!(process.entitlement.is_finite() && process.entitlement > 0.0);
        }
    }
});
