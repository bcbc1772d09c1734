//! A Slurm site's limits: any bytes read as `sacctmgr -P show assoc`, `show qos`, `show tres`
//! and `list transactions` outputs; none may panic, every amount read is a number >= 0, and an
//! error names a line and a field.
#![no_main]
use fairshare_trace::slurm_limits::{
    read_assoc_limits, read_limit_changes, read_qos_limits, read_tres_ids,
};
use fairshare_trace::slurm_output::ReadError;

/// The error names a line.
fn about_a_line(e: ReadError) {
    match e {
        ReadError::Field { record, .. } => assert!(record.starts_with("line "), "{record}"),
        other => panic!("not about a line: {other}"),
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let amounts_sound = |tres: &[(fairshare_trace::sacct::Tres, f64)]| {
        assert!(tres.iter().all(|(_, a)| a.is_finite() && *a >= 0.0), "{tres:?}")
    };
    match read_assoc_limits(&text) {
        Ok(read) => read.iter().for_each(|a| amounts_sound(&a.group.tres)),
        Err(e) => about_a_line(e),
    }
    match read_qos_limits(&text) {
        Ok(read) => read.iter().for_each(|q| {
            amounts_sound(&q.per_user.tres);
            amounts_sound(&q.group.tres);
        }),
        Err(e) => about_a_line(e),
    }
    let ids = read_tres_ids(&text).unwrap_or_default();
    let tres = [(1, "cpu".to_owned()), (2, "mem".to_owned())];
    for ids in [&ids[..], &tres[..]] {
        if let Err(e) = read_limit_changes(&text, ids) {
            about_a_line(e);
        }
    }
});
