//! The Grid Engine adapter's configuration and the scheduler's: any bytes read as
//! `gridengine.toml` and as `qconf -ssconf`; none may panic, and a file that loads passes its
//! own checks.
#![no_main]
use fairshare_gridengine::config::GridEngineConfig;
use fairshare_gridengine::settings::parse_scheduler;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gridengine.toml");
    std::fs::write(&path, data).unwrap();
    if let Ok(config) = GridEngineConfig::load(&path) {
        assert_eq!(config.check(), Ok(()));
    }
    let _ = parse_scheduler(&String::from_utf8_lossy(data)).map(|s| s.notes());
});
