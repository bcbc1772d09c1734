//! Grid Engine's share tree: any bytes read as `qconf -sstree` and made a tree with three
//! users for its `default` leaf; none may panic, and a tree made gives clients whose
//! entitlements are finite, within [0, 1] and sum to at most 1.
#![no_main]
use fairshare_gridengine::tree::{parse_share_tree, share_tree};
use fairshare_reconcile::clients::Clients;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(nodes) = parse_share_tree(&text) else {
        return;
    };
    let users = ["gea", "geb", "gea"].map(String::from);
    let Ok(tree) = share_tree(&nodes, &users) else {
        return;
    };
    if let Ok(clients) = Clients::new(tree) {
        let e = &clients.entitlements;
        assert!(e.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)), "{e:?}");
        assert!(e.iter().sum::<f64>() <= 1.0 + 1e-9, "{e:?}");
    }
});
