//! SWF `.machines` files.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fairshare_fuzz::machines("log.swf.machines", fairshare_trace::Format::SWF, data);
});
