//! Slurm's accounting: any bytes read as `sacct --allocations --parsable2`; none may panic,
//! every allocation read started before it ended, and an error names a line and a column.
#![no_main]
use fairshare_slurm::accounting::parse_accounting;
use fairshare_slurm::ReadError;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_accounting(&text, &Default::default()) {
        Ok(accounting) => {
            for job in &accounting.allocations {
                assert!(job.end.is_none_or(|end| end >= job.start), "{job:?}");
                assert_eq!(job.demand.len(), 3, "{job:?}");
                assert!(job.demand.iter().all(|x| x.is_finite() && *x >= 0.0));
                assert!(!job.user.is_empty() && !job.account.is_empty());
            }
        }
        Err(ReadError::Field { record, .. }) => assert!(record.starts_with("line "), "{record}"),
        Err(other) => panic!("not about a line: {other}"),
    }
});
