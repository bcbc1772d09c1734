//! Share files: any text is read as TOML accounts and users (or as sacctmgr's association
//! output) and placed with a few trace users; none may panic, every entitlement is a fraction,
//! and those of users with shares of their own add up to at most 1 (a `parent` user is
//! entitled as its account is, so it may repeat its account's); association factors, when
//! given, are one per user in [0, 1]. sacctmgr's output is read for the only cluster it lists,
//! or for a named one (the first byte says which), as a Slurm configuration's ClusterName picks.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let path = fairshare_fuzz::file("shares.toml", data);
    let users: Vec<String> = ["alice", "bob", "1029"].map(String::from).to_vec();
    let cluster = (data.first().is_some_and(|b| b % 2 == 1)).then_some("fairshare");
    let Ok(shares) = fairshare_trace::read_shares(&path, &users, cluster) else { return };
    let entitlements = shares.entitlements();
    assert_eq!(entitlements.len(), users.len());
    for e in &entitlements {
        assert!(e.is_finite() && *e >= 0.0 && *e <= 1.0 + 1e-9, "{entitlements:?}");
    }
    let accounts = shares.tree.accounts();
    let own: f64 = (shares.leaf.iter().zip(&entitlements))
        .filter(|(leaf, _)| !accounts[**leaf].shares.is_parent())
        .map(|(_, e)| e)
        .sum();
    assert!(own <= 1.0 + 1e-9, "{entitlements:?}");
    if let Some(factors) = &shares.assoc_factors {
        assert_eq!(factors.len(), users.len());
        assert!(factors.iter().all(|f| (0.0..=1.0).contains(f)), "{factors:?}");
    }
});
