//! Grid Engine's accounting file: any bytes written as the file and read twice, the second
//! time on from where the first stopped; none may panic, no record ends before it starts or
//! before the moment asked, and a line that cannot be read is named in a note.
#![no_main]
use fairshare_core::model::Time;
use fairshare_gridengine::accounting::AccountingFile;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("accounting");
    let half = data.len() / 2;
    std::fs::write(&path, &data[..half]).unwrap();
    let mut file = AccountingFile::new(&path);
    let from = Time::from_micros(1_000_000);
    let (first, _) = file.read(from).unwrap();
    std::fs::write(&path, data).unwrap();
    let (second, skipped) = file.read(from).unwrap();
    for record in first.iter().chain(&second) {
        assert!(record.start <= record.end && record.end >= from, "{record:?}");
    }
    assert!(skipped.iter().all(|s| s.contains("skipped accounting line")), "{skipped:?}");
});
