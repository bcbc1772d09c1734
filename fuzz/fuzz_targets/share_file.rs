//! Share files: any text is read as TOML accounts and users and placed with a few trace users;
//! none may panic, and every entitlement is a fraction, all of them adding up to at most 1.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let path = fairshare_fuzz::file("shares.toml", data);
    let users: Vec<String> = ["alice", "bob", "1029"].map(String::from).to_vec();
    let Ok(shares) = fairshare_trace::read_shares(&path, &users) else { return };
    let entitlements = shares.entitlements();
    assert_eq!(entitlements.len(), users.len());
    for e in &entitlements {
        assert!(e.is_finite() && *e >= 0.0 && *e <= 1.0 + 1e-9, "{entitlements:?}");
    }
    assert!(entitlements.iter().sum::<f64>() <= 1.0 + 1e-9, "{entitlements:?}");
});
