//! Google 2011 task_events parts.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fairshare_fuzz::trace("part.csv", fairshare_trace::Format::Google, data);
});
