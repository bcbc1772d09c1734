//! Alibaba GPU 2023 pod lists.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fairshare_fuzz::trace("pods.csv", fairshare_trace::Format::ALIBABA, data);
});
