//! Queue files: any text is read as queue lines; none may panic, and every queue read has a
//! name, a limit that is a non-negative number or none, a finite cost >= 0, and a name no
//! other queue has.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let path = fairshare_fuzz::file("log.swf.queues", data);
    let Ok(queues) = fairshare_trace::read_queues(&path) else { return };
    for (i, q) in queues.iter().enumerate() {
        assert!(!q.name.is_empty());
        assert!(q.processor_limit.is_none_or(|l| l.is_finite() && l >= 0.0), "{q:?}");
        assert!(q.cost.is_finite() && q.cost >= 0.0, "{q:?}");
        assert!(queues[..i].iter().all(|p| p.name != q.name), "{q:?} twice");
    }
});
