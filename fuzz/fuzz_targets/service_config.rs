//! The fairness service's TOML configuration file, read and checked as `fairshare serve` does.
#![no_main]
use fairshare_service::ServiceConfig;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let path = fairshare_fuzz::file("fairshare.toml", data);
    if let Ok(config) = ServiceConfig::load(Some(&path), &[]) {
        let _ = config.check();
    }
});
