//! SWF logs, 18 or 21 fields, plain (gzip is the same reader behind a decoder).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fairshare_fuzz::trace("log.swf", fairshare_trace::Format::SWF, data);
});
