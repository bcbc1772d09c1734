//! Instance files of `fairshare allocate`: parsed, then solved under both fill rules.
#![no_main]
use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::instance::Instance;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(instance) = Instance::from_json(text) else {
        return;
    };
    for rule in [FillRule::HeadOfLine, FillRule::Skip] {
        let Ok(outcome) = instance.solve(rule) else {
            continue;
        };
        for user in &outcome.users {
            for amount in user.allocation.values() {
                assert!(amount.is_finite() && *amount >= -1e-9, "{outcome:?}");
            }
        }
        for used in outcome.utilization.values() {
            assert!(*used >= -1e-9 && *used <= 1.0 + 1e-6, "{outcome:?}");
        }
    }
});
