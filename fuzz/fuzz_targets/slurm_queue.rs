//! Slurm's queue: any bytes read as `squeue --json` and as `sprio`'s `id|site factor` lines;
//! none may panic, a pending job has no start, and an error about a job names it and a field.
#![no_main]
use fairshare_slurm::queue::{parse_queue, parse_site_factors, QueueState};
use fairshare_slurm::ReadError;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_queue(&text) {
        Ok(jobs) => {
            for job in &jobs {
                assert!(!job.user.is_empty() && !job.account.is_empty(), "{job:?}");
                assert!(
                    job.state != QueueState::Pending || job.start.is_none(),
                    "{job:?}"
                );
            }
        }
        Err(ReadError::Field { record, field, .. }) => {
            assert!(record.starts_with("job ") || record == "top", "{record}");
            assert!(!field.is_empty());
        }
        Err(_) => {}
    }
    if let Err(error) = parse_site_factors(&text) {
        assert!(matches!(&error, ReadError::Field { record, .. } if record.starts_with("line ")));
    }
});
