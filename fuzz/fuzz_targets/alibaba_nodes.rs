//! Alibaba GPU 2023 node lists.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fairshare_fuzz::machines("nodes.csv", fairshare_trace::Format::ALIBABA, data);
});
