//! Everything the node agent reads that it does not write itself: its configuration file, an
//! owner mapping file, and every cgroup counter and limit file format (a kernel, a container
//! runtime or a fake tree may put anything there). None may panic; a counter is finite and
//! not negative.
#![no_main]
use fairshare_agent::cgroup::{cfs_quota, parse, Format};
use fairshare_agent::owner::parse_mapping;
use fairshare_agent::AgentConfig;

const FORMATS: [Format; 7] = [
    Format::Nanoseconds,
    Format::UsageUsec,
    Format::Bytes,
    Format::BlkioBytes,
    Format::IoStat,
    Format::CpuMax,
    Format::MemoryLimit,
];

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let path = fairshare_fuzz::file("agent.toml", data);
    let _ = AgentConfig::load(&path);
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = parse_mapping(text);
    for format in FORMATS {
        if let Some(v) = parse(format, text) {
            assert!(v.is_finite() && v >= 0.0, "{format:?} {text:?} gave {v}");
        }
    }
    let (quota, period) = text.split_once('\n').unwrap_or((text, "100000"));
    if let Some(v) = cfs_quota(quota, period) {
        assert!(v.is_finite() && v > 0.0);
    }
});
