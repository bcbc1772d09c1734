//! The input layer's tests.

use super::csv_files::RECORDS;
use super::open::CHUNK;
use super::*;
use flate2::write::GzEncoder;
use std::io::Write;

proptest::proptest! {
    /// Whole numbers read from plain digits are what `from_str` makes of the same bytes,
    /// value or error, for a narrow width and the widest.
    #[test]
    fn whole_numbers_read_as_from_str_reads_them(
        raw in proptest::string::bytes_regex("(?s-u)[0-9]{0,22}|[ +0-9a\\xff-]{0,22}").unwrap()
    ) {
        let at = At { file: Path::new("t.csv"), line: 7 };
        let col = Col::new(3, "job");
        let expected = "a whole number >= 0";
        proptest::prop_assert_eq!(
            format!("{:?}", at.integer::<u64>(col, &raw)),
            format!("{:?}", at.parse::<u64>(col, &raw, expected))
        );
        proptest::prop_assert_eq!(
            format!("{:?}", at.integer::<u8>(col, &raw)),
            format!("{:?}", at.parse::<u8>(col, &raw, expected))
        );
    }

    /// An amount checked without reading it is one that reads: whatever the bytes, the check
    /// and the reading agree on whether they are an amount, and give the same error.
    #[test]
    fn an_amount_checked_is_an_amount_read(
        raw in proptest::string::bytes_regex("(?s-u)[0-9]{0,17}(\\.[0-9]{0,20})?|[ +.0-9eEa\\xff-]{0,22}").unwrap()
    ) {
        let at = At { file: Path::new("t.csv"), line: 7 };
        let col = Col::new(10, "cpu request");
        proptest::prop_assert_eq!(
            format!("{:?}", at.check_amount(col, &raw)),
            format!("{:?}", at.amount(col, &raw).map(drop))
        );
    }
}

/// Lines enough to span several chunks of the inflating thread.
fn text() -> Vec<u8> {
    let lines = (0..200_000).map(|i| format!("{i},{},{}\n", i * 7919 % 1000, i % 13));
    lines.collect::<String>().into_bytes()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

#[test]
fn a_gzip_file_reads_as_its_plain_bytes_across_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, packed) = (dir.path().join("t.csv"), dir.path().join("t.csv.gz"));
    std::fs::write(&plain, text()).unwrap();
    std::fs::write(&packed, gzip(&text())).unwrap();
    assert!(text().len() > 3 * CHUNK);
    let mut read = Vec::new();
    open_file(&packed).unwrap().read_to_end(&mut read).unwrap();
    assert_eq!(read, text());
    let lines = |path: &Path| {
        let mut lines = Lines::new(&[path.to_path_buf()]);
        let mut n = 0;
        while let Some(line) = lines.next_line() {
            line.unwrap();
            n += 1;
        }
        n
    };
    assert_eq!(lines(&packed), 200_000);
    assert_eq!(lines(&plain), lines(&packed));
}

#[test]
fn a_truncated_gzip_file_is_an_error_after_its_good_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let packed = gzip(&text());
    let cut = dir.path().join("cut.csv.gz");
    std::fs::write(&cut, &packed[..packed.len() / 2]).unwrap();
    let mut input = open_file(&cut).unwrap();
    let mut read = Vec::new();
    let error = input.read_to_end(&mut read).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::UnexpectedEof, "{error}");
    assert!(!read.is_empty() && text().starts_with(&read));
}

/// Every record of `files` as (file name, line, first field), or the error that ended them.
fn csv_records(files: &[PathBuf]) -> (Vec<(String, u64, String)>, Option<TraceError>) {
    let mut csv = CsvFiles::new(files);
    let mut seen = Vec::new();
    while let Some(record) = csv.next_record() {
        match record {
            Ok(r) => seen.push((
                r.at.file
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                r.at.line,
                String::from_utf8_lossy(r.raw(Col::new(1, "first"))).into_owned(),
            )),
            Err(e) => return (seen, Some(e)),
        }
    }
    (seen, None)
}

#[test]
fn csv_files_read_ahead_give_every_record_in_order_with_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a.csv"),
        dir.path().join("b.csv.gz"),
        dir.path().join("c.csv"),
    );
    std::fs::write(&a, text()).unwrap();
    std::fs::write(&b, gzip(b"x,1\ny,2\n")).unwrap();
    std::fs::write(&c, "").unwrap();
    let (seen, error) = csv_records(&[a.clone(), b, c, a]);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(seen.len(), 2 * 200_000 + 2);
    assert_eq!(seen[0], ("a.csv".into(), 1, "0".into()));
    assert_eq!(
        seen[RECORDS],
        ("a.csv".into(), RECORDS as u64 + 1, RECORDS.to_string())
    );
    assert_eq!(seen[200_000], ("b.csv.gz".into(), 1, "x".into()));
    assert_eq!(seen[200_001], ("b.csv.gz".into(), 2, "y".into()));
    assert_eq!(seen[200_002], ("a.csv".into(), 1, "0".into()));
    assert_eq!(
        seen.last().unwrap(),
        &("a.csv".into(), 200_000, "199999".into())
    );
}

#[test]
fn csv_files_read_ahead_end_at_a_missing_file_after_the_records_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.csv");
    std::fs::write(&a, "1,2\n3,4\n").unwrap();
    let missing = dir.path().join("missing.csv");
    let (seen, error) = csv_records(&[a, missing.clone()]);
    assert_eq!(seen.len(), 2);
    let error = error.expect("an error for the missing file").to_string();
    assert!(error.contains("missing.csv"), "{error}");
}

#[test]
fn csv_files_dropped_early_stop_reading() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.csv.gz");
    std::fs::write(&a, gzip(&text())).unwrap();
    for _ in 0..20 {
        let mut csv = CsvFiles::new(std::slice::from_ref(&a));
        assert!(csv.next_record().unwrap().is_ok());
    }
}

#[test]
fn a_reader_dropped_early_stops_the_inflating() {
    let dir = tempfile::tempdir().unwrap();
    let packed = dir.path().join("t.csv.gz");
    std::fs::write(&packed, gzip(&text())).unwrap();
    for _ in 0..50 {
        assert_eq!(first_line(&packed).unwrap(), "0,0,0");
    }
}
