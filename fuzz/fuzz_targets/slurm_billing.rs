//! Slurm's billing rules and a job's TRES: any bytes read as `scontrol --oneliner show
//! partition`, `sacctmgr show qos` (with or without priorities) and `AllocTRES`; none may
//! panic, an error names a line, every charge worked out is a number >= 0 (never NaN), and
//! the QOS with a priority are QOS with a usage factor.
#![no_main]
use fairshare_trace::billing::{parse_partitions, parse_qos, parse_qos_priorities, Billing};
use fairshare_trace::slurm_output::ReadError;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\u{1e}');
    let (partitions, qos, tres) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let line = |e: ReadError| match e {
        ReadError::Field { record, .. } => assert!(record.starts_with("line "), "{record}"),
        other => panic!("not about a line: {other}"),
    };
    let partitions = parse_partitions(partitions).map_err(line).unwrap_or_default();
    let usage_factors = parse_qos(qos).map_err(line).unwrap_or_default();
    assert!(usage_factors.values().all(|f| f.is_finite() && *f >= 0.0));
    let priorities = parse_qos_priorities(qos).map_err(line).unwrap_or_default();
    assert!(priorities.keys().all(|q| usage_factors.contains_key(q)));
    for max_tres in [false, true] {
        let billing = Billing {
            partitions: partitions.clone(),
            max_tres,
            usage_factors: usage_factors.clone(),
        };
        for partition in billing.partitions.keys().map(Some).chain([None]) {
            let qos = billing.usage_factors.keys().next().map(String::as_str);
            if let Ok(charge) = billing.charge(partition.map(String::as_str), qos, tres) {
                assert!(charge >= 0.0, "{charge}");
            }
        }
    }
});
