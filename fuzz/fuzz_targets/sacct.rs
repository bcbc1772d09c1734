//! Slurm accounting dumps (`sacct --parsable2`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fairshare_fuzz::trace("jobs.sacct", fairshare_trace::Format::SACCT, data);
});
