//! Google 2011 task_events parts: read as tasks, and as the SUBMIT pool of the BAA experiment.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fairshare_fuzz::trace("part.csv", fairshare_trace::Format::GOOGLE, data);
    fairshare_fuzz::submit_pool("part.csv", data);
});
