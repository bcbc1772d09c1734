//! Slurm's fair-share standings: any bytes read as `sshare --all --parsable2`; none may panic,
//! every number read is >= 0 and only `LevelFS` may be infinite, and an error names a line
//! and a column.
#![no_main]
use fairshare_slurm::sshare::parse_sshare;
use fairshare_slurm::ReadError;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_sshare(&text) {
        Ok(rows) => {
            for row in &rows {
                assert!(!row.account.is_empty(), "{row:?}");
                let finite = [Some(row.norm_shares), Some(row.effective_usage), row.fairshare];
                assert!(finite.into_iter().flatten().all(|x| x.is_finite() && x >= 0.0));
                assert!(row.level_fs.is_none_or(|x| x >= 0.0), "{row:?}");
            }
        }
        Err(ReadError::Field { record, .. }) => assert!(record.starts_with("line "), "{record}"),
        Err(other) => panic!("not about a line: {other}"),
    }
});
