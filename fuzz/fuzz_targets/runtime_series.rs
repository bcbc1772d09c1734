//! Demand series of runtime scenarios (CSV: `time_s,<resource>,…`).
#![no_main]
use fairshare_core::heaviness::{Resource, ResourceKind};
use fairshare_sim::runtime::read_series;
use std::path::Path;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let resources = [
        Resource { name: "cpu".into(), kind: ResourceKind::Cpu },
        Resource { name: "mem".into(), kind: ResourceKind::Memory },
    ];
    match read_series(text, Path::new("w.csv"), &resources) {
        Ok(demand) => {
            assert!(!demand.steps.is_empty());
            assert!(demand.steps.windows(2).all(|w| w[0].0 < w[1].0));
            for (at, d) in &demand.steps {
                assert!(at.is_finite() && *at >= 0.0 && d.len() == 2);
                assert!(d.iter().all(|v| v.is_finite() && *v >= 0.0));
            }
        }
        Err(e) => assert!(e.to_string().starts_with("w.csv:"), "{e}"),
    }
});
