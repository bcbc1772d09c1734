//! Machine catalogues: any text is read as TOML machines; none may panic, and every machine
//! read has four amounts that are numbers >= 0, a positive SPEC and its name as a property.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let path = fairshare_fuzz::file("cluster.toml", data);
    let Ok(catalogue) = fairshare_trace::read_catalogue(&path) else { return };
    for t in &catalogue.types {
        assert_eq!(t.capacity.len(), 4, "{t:?}");
        assert!(t.capacity.iter().all(|a| a.is_finite() && *a >= 0.0), "{t:?}");
        assert!(t.spec.is_finite() && t.spec > 0.0 && t.cost >= 0.0, "{t:?}");
        assert!(t.properties.first() == Some(&t.name), "{t:?}");
    }
});
