//! Every request body of the fairness service's API, read as the daemon reads it and checked;
//! a usage report that passes is also turned into rates and counted (its knob values written
//! stored and read back as the cycle reads them), and a registry built
//! from the bodies that pass goes through one priority cycle.
#![no_main]
use fairshare_service::api::parse_json;
use fairshare_service::config::ServiceConfig;
use fairshare_service::cycle::{compute, Measured, Memory, NodeEntry, Registry, Settings, WorkloadEntry};
use fairshare_service::model::{
    KnobsWritten, NodeSpec, UsageReport, UserSpec, WorkloadSpec, MAX_KNOB_VALUE,
};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let config = ServiceConfig::default();
    let resources = &config.resources;
    let settings = Settings {
        resources: resources.clone(),
        heaviness: config.heaviness.clone(),
        priority: config.priority,
        profile: config.knob_profile().expect("the default profile exists"),
    };
    let mut registry = Registry::default();
    let mut measured = Measured::default();
    if let Ok(node) = parse_json::<NodeSpec>(data) {
        if let Ok(supply) = node.check(resources) {
            registry.nodes.insert("n1".into(), NodeEntry { supply, speed: node.speed });
        }
    }
    if let Ok(user) = parse_json::<UserSpec>(data) {
        if let Ok(quota) = user.check(resources) {
            registry.users.insert("u1".into(), quota);
        }
    }
    if let Ok(w) = parse_json::<WorkloadSpec>(data) {
        if let (Ok(size), true) = (w.check(resources), registry.nodes.contains_key("n1")) {
            registry.users.entry("u1".into()).or_insert(None);
            registry.workloads.insert("w1".into(), WorkloadEntry { owner: "u1".into(), node: "n1".into(), size });
        }
    }
    if let Ok(report) = parse_json::<UsageReport>(data) {
        if let Ok(amounts) = report.check(resources) {
            for (sample, rates) in report.samples.iter().zip(report.rates(&amounts, resources)) {
                assert!(rates.iter().all(|r| r.is_finite() && *r >= 0.0), "{rates:?}");
                measured.add(&sample.workload, &rates, report.interval_s);
            }
            // The knob values written, stored as JSON, read back as the cycle reads them.
            for knobs in report.written.iter().flat_map(|w| w.values()) {
                let stored = serde_json::to_string(knobs).expect("knob values serialise");
                let read: KnobsWritten = serde_json::from_str(&stored).expect("checked values read back");
                assert_eq!(read.len(), knobs.len());
                assert!(read.values().all(|&v| v <= MAX_KNOB_VALUE), "{read:?}");
            }
        }
    }
    if let Ok(outcome) = compute(&settings, &registry, &Memory::new(), &measured, 1, 0) {
        for w in &outcome.snapshot.workloads {
            assert!((-50..=50).contains(&w.knobs.priority));
        }
    }
});
