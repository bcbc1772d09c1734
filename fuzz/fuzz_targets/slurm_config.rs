//! The Slurm adapter's TOML configuration file, read and checked as `fairshare slurm` does: a
//! file it takes must give a policy, a mapping and a timeout the adapter can use.
#![no_main]
use fairshare_slurm::config::SlurmConfig;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let path = fairshare_fuzz::file("slurm.toml", data);
    if let Ok(config) = SlurmConfig::load(&path) {
        assert!(config.policy().is_ok() && config.mapping().is_ok());
        assert!(config.shared.timeout().as_secs_f64() >= 1.0);
    }
});
