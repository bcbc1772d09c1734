//! BAA timelines: any text is read as a timeline; none may panic, and a timeline that reads
//! runs (within bounds kept small here) without panicking, its allocations finite and within
//! the capacities.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let path = fairshare_fuzz::file("timeline.toml", data);
    let Ok(timeline) = fairshare_trace::read_timeline(&path) else { return };
    if timeline.epochs > 50 || timeline.users.len() > 50 {
        return;
    }
    let Ok(summary) = fairshare_lab::baa::timeline(&timeline) else { return };
    for epoch in &summary.allocations {
        for (k, capacity) in timeline.capacity.iter().enumerate() {
            let used: f64 = epoch.iter().map(|a| a[k]).sum();
            assert!(used.is_finite() && used <= capacity * (1.0 + 1e-6), "{used} > {capacity}");
        }
    }
});
