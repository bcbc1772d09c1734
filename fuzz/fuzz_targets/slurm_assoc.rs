//! Slurm's associations: any bytes read as `sacctmgr show assoc -P`; none may panic, every
//! parent named is an account read, no user's priority (inherited or its own) exceeds the
//! highest, and an error names a line and a column.
#![no_main]
use fairshare_slurm::assoc::parse_assoc;
use fairshare_slurm::ReadError;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_assoc(&text) {
        Ok(tree) => {
            for account in &tree.accounts {
                match &account.parent {
                    None => assert_eq!(account.name, "root"),
                    Some(parent) => assert!(tree.account(&account.cluster, parent).is_some()),
                }
            }
            for user in &tree.users {
                assert!(
                    tree.account(&user.cluster, &user.account).is_some(),
                    "{user:?}"
                );
            }
            for cluster in tree.accounts.iter().map(|a| a.cluster.as_str()) {
                let highest = tree.highest_priority(cluster);
                let priorities = tree.user_priorities(cluster);
                assert!(priorities.values().all(|p| *p <= highest), "{priorities:?}");
            }
        }
        Err(ReadError::Field { record, .. }) => assert!(record.starts_with("line "), "{record}"),
        Err(other) => panic!("not about a line: {other}"),
    }
});
