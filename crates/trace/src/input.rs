//! Bytes in: files plain or gzip, several in turn, and field parsing that knows where it is.
//!
//! Every reader needs the same three things — open a file whatever its compression, walk a list
//! of files as one stream (the Google trace comes in 500 parts), and turn a field into a number
//! or an error naming file, line and field — so they live here once.

use crate::TraceError;
use fairshare_core::model::Time;
use flate2::bufread::MultiGzDecoder;
use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

/// The largest amount a record may ask for or a machine may hold, in the trace's own units
/// (10¹⁵: a petabyte in KB). Larger values are errors, not clamped, so that every amount, and
/// every sum of a trace's amounts, stays a finite number.
pub(crate) const LARGEST_AMOUNT: f64 = 1e15;

/// A boxed reader of one file's decompressed bytes.
pub(crate) type Input = Box<dyn BufRead + Send>;

const BUFFER: usize = 1 << 16;

/// Opens `path`, decompressing it when it starts with the gzip magic bytes. A gzip file is
/// inflated on a thread of its own, ahead of the reader: inflating is about half the cost of
/// reading a compressed trace, and this way it runs beside the parsing instead of before it.
pub(crate) fn open_file(path: &Path) -> Result<Input, TraceError> {
    open_file_with(path, Inflate::Ahead)
}

/// Where a gzip file is inflated.
#[derive(Clone, Copy)]
pub(crate) enum Inflate {
    /// On a thread of its own, ahead of the reader.
    Ahead,
    /// On the reader's thread, as it reads (for a reader that has a thread of its own).
    InPlace,
}

/// [`open_file`], inflating where `inflate` says.
pub(crate) fn open_file_with(path: &Path, inflate: Inflate) -> Result<Input, TraceError> {
    let file = File::open(path).map_err(|e| TraceError::io(path, e))?;
    let mut reader = BufReader::with_capacity(BUFFER, file);
    let magic = reader.fill_buf().map_err(|e| TraceError::io(path, e))?;
    if !magic.starts_with(&[0x1f, 0x8b]) {
        return Ok(Box::new(reader));
    }
    let gz = MultiGzDecoder::new(reader);
    Ok(match inflate {
        Inflate::Ahead => Box::new(Inflated::spawn(gz)),
        Inflate::InPlace => Box::new(BufReader::with_capacity(BUFFER, gz)),
    })
}

/// Bytes inflated ahead on another thread, handed over in chunks.
struct Inflated {
    chunks: Receiver<std::io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
    /// Whether the end (an empty chunk) or an error has been handed over.
    done: bool,
}

/// How much one chunk holds, and how many chunks may wait: 4 × 256 KiB ahead at most.
const CHUNK: usize = 1 << 18;
const CHUNKS_AHEAD: usize = 4;

impl Inflated {
    /// Starts inflating `source` on a thread that stops at its end (handed over as an empty
    /// chunk), after its first error (handed over after the bytes before it), or when the
    /// reader is dropped.
    fn spawn(mut source: impl Read + Send + 'static) -> Inflated {
        let (send, chunks) = sync_channel(CHUNKS_AHEAD);
        std::thread::spawn(move || loop {
            let mut chunk = vec![0; CHUNK];
            let (n, error) = fill(&mut source, &mut chunk);
            chunk.truncate(n);
            if let Some(error) = error {
                if n > 0 && send.send(Ok(chunk)).is_err() {
                    return;
                }
                let _ = send.send(Err(error));
                return;
            }
            if send.send(Ok(chunk)).is_err() || n == 0 {
                return;
            }
        });
        Inflated {
            chunks,
            chunk: Vec::new(),
            at: 0,
            done: false,
        }
    }

    /// The next chunk from the inflating thread; empty at the end and after an error.
    fn next_chunk(&mut self) -> std::io::Result<Vec<u8>> {
        if self.done {
            return Ok(Vec::new());
        }
        let next = self.chunks.recv().unwrap_or_else(|_| {
            Err(std::io::Error::other(
                "the inflating thread stopped before the end",
            ))
        });
        self.done = !matches!(&next, Ok(chunk) if !chunk.is_empty());
        next
    }
}

/// Reads from `source` until `buf` is full, the source ends or fails: how much was read, and
/// the failure if there was one.
fn fill(source: &mut impl Read, buf: &mut [u8]) -> (usize, Option<std::io::Error>) {
    let mut n = 0;
    while n < buf.len() {
        match source.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

impl Read for Inflated {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Inflated {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.at == self.chunk.len() {
            self.chunk = self.next_chunk()?;
            self.at = 0;
        }
        Ok(&self.chunk[self.at..])
    }

    fn consume(&mut self, amount: usize) {
        self.at = (self.at + amount).min(self.chunk.len());
    }
}

/// The first non-blank line of `path` (at most 64 KiB of it), for format detection.
pub(crate) fn first_line(path: &Path) -> Result<String, TraceError> {
    let mut input = open_file(path)?.take(BUFFER as u64);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = input
            .read_until(b'\n', &mut line)
            .map_err(|e| TraceError::io(path, e))?;
        let text = String::from_utf8_lossy(&line);
        if n == 0 || !text.trim().is_empty() {
            return Ok(text.trim().to_owned());
        }
    }
}

/// Whether `field` is there and reads as a number (format detection's test of a record).
pub(crate) fn is_number(field: Option<&str>) -> bool {
    field.is_some_and(|f| f.parse::<f64>().is_ok())
}

/// Whether a line of a whitespace-separated file is blank or a `;` comment.
pub(crate) fn is_comment(text: &str) -> bool {
    let text = text.trim_start();
    text.is_empty() || text.starts_with(';')
}

/// Where a record sits: the file and the line, from 1.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'a> {
    /// The file.
    pub file: &'a Path,
    /// The line.
    pub line: u64,
}

/// A field of a format: its number, from 1, and its documented name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Col {
    /// The field number, from 1.
    pub number: usize,
    /// The field's name.
    pub name: &'static str,
}

impl Col {
    /// The field numbered `number` (from 1) and called `name`.
    pub const fn new(number: usize, name: &'static str) -> Col {
        Col { number, name }
    }
}

impl At<'_> {
    /// The error for field `col` holding `raw` instead of `expected`.
    pub fn error(&self, col: Col, expected: &'static str, raw: impl AsRef<[u8]>) -> TraceError {
        TraceError::Field {
            file: self.file.to_path_buf(),
            line: self.line,
            field: col.number,
            name: col.name,
            expected,
            found: String::from_utf8_lossy(raw.as_ref()).into_owned(),
        }
    }

    /// The error for a record with `found` fields instead of `expected`.
    pub fn count_error(&self, expected: &'static str, found: usize) -> TraceError {
        TraceError::FieldCount {
            file: self.file.to_path_buf(),
            line: self.line,
            expected,
            found,
        }
    }

    /// Field `col` as UTF-8 text.
    pub fn text<'r>(&self, col: Col, raw: &'r [u8]) -> Result<&'r str, TraceError> {
        std::str::from_utf8(raw).map_err(|_| self.error(col, "UTF-8 text", raw))
    }

    /// Field `col` parsed as `T`, or the error saying `expected`.
    fn parse<T: FromStr>(
        &self,
        col: Col,
        raw: impl AsRef<[u8]>,
        expected: &'static str,
    ) -> Result<T, TraceError> {
        let raw = raw.as_ref();
        std::str::from_utf8(raw)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| self.error(col, expected, raw))
    }

    /// Field `col` as a finite number (negative allowed).
    pub fn number(&self, col: Col, raw: impl AsRef<[u8]>) -> Result<f64, TraceError> {
        let x: f64 = self.parse(col, &raw, "a number")?;
        if x.is_finite() {
            Ok(x)
        } else {
            Err(self.error(col, "a number", raw))
        }
    }

    /// Field `col` as an amount: a number from 0 to [`LARGEST_AMOUNT`].
    pub fn amount(&self, col: Col, raw: impl AsRef<[u8]>) -> Result<f64, TraceError> {
        const EXPECTED: &str = "a number from 0 to 1e15";
        let x: f64 = self.parse(col, &raw, EXPECTED)?;
        if (0.0..=LARGEST_AMOUNT).contains(&x) {
            Ok(x)
        } else {
            Err(self.error(col, EXPECTED, raw))
        }
    }

    /// Field `col` as seconds from 0 to [`Time::LONGEST_INPUT_S`].
    pub fn seconds(&self, col: Col, raw: impl AsRef<[u8]>) -> Result<Time, TraceError> {
        const EXPECTED: &str = "seconds from 0 to 1e10";
        let x: f64 = self.parse(col, &raw, EXPECTED)?;
        Time::from_input_secs(x).ok_or_else(|| self.error(col, EXPECTED, raw))
    }

    /// Field `col` as whole microseconds from 0 to [`Time::LONGEST_INPUT_S`] seconds.
    pub fn micros(&self, col: Col, raw: impl AsRef<[u8]>) -> Result<Time, TraceError> {
        const EXPECTED: &str = "whole microseconds from 0 to 1e16";
        let micros: u64 = self.whole(col, &raw, EXPECTED)?;
        Time::from_input_secs(micros as f64 / 1e6)
            .map(|_| Time::from_micros(micros))
            .ok_or_else(|| self.error(col, EXPECTED, raw))
    }

    /// A field that may be empty: `None` then, else what `read` makes of it.
    pub fn optional<T>(
        &self,
        raw: &[u8],
        read: impl FnOnce(&[u8]) -> Result<T, TraceError>,
    ) -> Result<Option<T>, TraceError> {
        (!raw.is_empty()).then(|| read(raw)).transpose()
    }

    /// An SWF field, `-1` (any negative number) when missing: `None` then, else what `read`
    /// makes of it.
    pub fn unless_negative<T>(
        &self,
        col: Col,
        raw: &str,
        read: impl FnOnce(&str) -> Result<T, TraceError>,
    ) -> Result<Option<T>, TraceError> {
        (self.number(col, raw)? >= 0.0)
            .then(|| read(raw))
            .transpose()
    }

    /// Field `col` as a non-negative integer.
    pub fn integer<T: FromStr + TryFrom<u64>>(
        &self,
        col: Col,
        raw: impl AsRef<[u8]>,
    ) -> Result<T, TraceError> {
        self.whole(col, raw, "a whole number >= 0")
    }

    /// Field `col` parsed as the whole number `T`, as [`Self::parse`] does: plain digits (what
    /// trace fields nearly always hold) are read straight from the bytes, anything else
    /// (spaces, a sign, more digits than a `u64` surely holds) goes through `T::from_str`.
    fn whole<T: FromStr + TryFrom<u64>>(
        &self,
        col: Col,
        raw: impl AsRef<[u8]>,
        expected: &'static str,
    ) -> Result<T, TraceError> {
        let bytes = raw.as_ref();
        match plain_digits(bytes) {
            Some(value) => T::try_from(value).map_err(|_| self.error(col, expected, bytes)),
            None => self.parse(col, bytes, expected),
        }
    }
}

/// The value of `raw` when it is 1 to 19 ASCII digits (so that it fits a `u64`), else `None`.
fn plain_digits(raw: &[u8]) -> Option<u64> {
    if raw.is_empty() || raw.len() > 19 {
        return None;
    }
    raw.iter().try_fold(0u64, |value, &b| {
        b.is_ascii_digit().then(|| value * 10 + u64::from(b - b'0'))
    })
}

/// One line of a file, without its line end.
pub(crate) struct Line<'a> {
    /// Where it is.
    pub at: At<'a>,
    /// Its text (invalid UTF-8 replaced, so that it shows in errors).
    pub text: Cow<'a, str>,
}

/// The lines of several files, one file after another.
pub(crate) struct Lines {
    paths: Vec<PathBuf>,
    next_file: usize,
    input: Option<Input>,
    line: u64,
    buf: Vec<u8>,
}

impl Lines {
    /// Lines of `paths`, read in the order given.
    pub fn new(paths: &[PathBuf]) -> Lines {
        Lines {
            paths: paths.to_vec(),
            next_file: 0,
            input: None,
            line: 0,
            buf: Vec::new(),
        }
    }

    /// The next line, or `None` after the last line of the last file.
    pub fn next_line(&mut self) -> Option<Result<Line<'_>, TraceError>> {
        loop {
            let input = match self.input.as_mut() {
                Some(input) => input,
                None => {
                    let path = self.paths.get(self.next_file)?;
                    self.next_file += 1;
                    self.line = 0;
                    match open_file(path) {
                        Ok(input) => self.input.insert(input),
                        Err(e) => return Some(Err(e)),
                    }
                }
            };
            self.buf.clear();
            let path = &self.paths[self.next_file - 1];
            match input.read_until(b'\n', &mut self.buf) {
                Err(e) => return Some(Err(TraceError::io_after(path, self.line, e))),
                Ok(0) => self.input = None,
                Ok(_) => {
                    self.line += 1;
                    let at = At {
                        file: path,
                        line: self.line,
                    };
                    let text = String::from_utf8_lossy(&self.buf);
                    return Some(Ok(Line { at, text }));
                }
            }
        }
    }
}

/// One CSV record and where it is.
pub(crate) struct Record<'a> {
    /// Where it is.
    pub at: At<'a>,
    /// Its fields.
    pub fields: &'a csv::ByteRecord,
}

impl<'a> Record<'a> {
    /// The record just read from `file` into `fields`, at the reader's position.
    fn read(file: &'a Path, fields: &'a csv::ByteRecord) -> Record<'a> {
        let line = fields.position().map_or(0, |p| p.line());
        Record {
            at: At { file, line },
            fields,
        }
    }

    /// The raw bytes of field `col` (empty when the record is shorter).
    pub fn raw(&self, col: Col) -> &[u8] {
        col.number
            .checked_sub(1)
            .and_then(|i| self.fields.get(i))
            .unwrap_or_default()
    }
}

/// The records of several header-less CSV files, one file after another, inflated and split
/// into fields on a thread of their own ahead of the reader (the two are a third of the cost of
/// reading a Google trace), handed over in batches that come back to be filled again. One
/// thread for both: a third thread (inflating apart, or the fields parsed there too) was
/// slower on two cores.
pub(crate) struct CsvFiles {
    paths: Arc<[PathBuf]>,
    ahead: Option<Ahead>,
    /// The batch being read, the file its records come from, and the next record's index.
    batch: Vec<csv::ByteRecord>,
    file: usize,
    next: usize,
    /// Whether the last batch, the end or an error, has been handed over.
    done: bool,
}

/// The reading thread's two channels: batches to read, and batches read to fill again.
struct Ahead {
    batches: Receiver<Batch>,
    spent: SyncSender<Vec<csv::ByteRecord>>,
}

/// What the reading thread hands over.
enum Batch {
    /// Records of file `0` (an index into the paths), in order.
    Records(usize, Vec<csv::ByteRecord>),
    /// The error that ended reading.
    Failed(TraceError),
    /// The end of the last file.
    End,
}

/// How many records one batch holds, and how many batches may wait.
const RECORDS: usize = 1024;
const BATCHES_AHEAD: usize = 8;

impl CsvFiles {
    /// Records of `paths`, read in the order given; reading starts at the first call to
    /// [`CsvFiles::next_record`].
    pub fn new(paths: &[PathBuf]) -> CsvFiles {
        CsvFiles {
            paths: paths.into(),
            ahead: None,
            batch: Vec::new(),
            file: 0,
            next: 0,
            done: false,
        }
    }

    /// The next record, or `None` after the last record of the last file and after an error.
    pub fn next_record(&mut self) -> Option<Result<Record<'_>, TraceError>> {
        while self.next == self.batch.len() {
            if self.done {
                return None;
            }
            match self.next_batch() {
                Batch::Records(file, records) => {
                    let spent = std::mem::replace(&mut self.batch, records);
                    self.ahead_channels().spent.try_send(spent).ok();
                    (self.file, self.next) = (file, 0);
                }
                Batch::Failed(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Batch::End => self.done = true,
            }
        }
        self.next += 1;
        let record = &self.batch[self.next - 1];
        Some(Ok(Record::read(&self.paths[self.file], record)))
    }

    /// The reading thread's channels, starting it on first use.
    fn ahead_channels(&mut self) -> &Ahead {
        let paths = &self.paths;
        self.ahead.get_or_insert_with(|| {
            let (send, batches) = sync_channel(BATCHES_AHEAD);
            let (spent, recycled) = sync_channel(BATCHES_AHEAD + 2);
            let paths = Arc::clone(paths);
            std::thread::spawn(move || read_ahead(&paths, &send, &recycled));
            Ahead { batches, spent }
        })
    }

    /// The next batch from the reading thread.
    fn next_batch(&mut self) -> Batch {
        let next = self.ahead_channels().batches.recv();
        next.unwrap_or_else(|_| {
            let error = std::io::Error::other("the reading thread stopped before the end");
            Batch::Failed(TraceError::io(&self.paths[self.file], error))
        })
    }
}

/// Reads the records of `paths` in batches into `send`, filling the batches `recycled` hands
/// back when there are any; stops after the end, an error, or when the reader is gone.
fn read_ahead(
    paths: &[PathBuf],
    send: &SyncSender<Batch>,
    recycled: &Receiver<Vec<csv::ByteRecord>>,
) {
    for (file, path) in paths.iter().enumerate() {
        let mut reader = match open_file_with(path, Inflate::InPlace) {
            Ok(input) => csv_reader(input, false),
            Err(e) => {
                let _ = send.send(Batch::Failed(e));
                return;
            }
        };
        loop {
            let mut records = recycled.try_recv().unwrap_or_default();
            records.resize_with(RECORDS, csv::ByteRecord::new);
            let mut n = 0;
            let mut failed = None;
            while n < RECORDS {
                match reader.read_byte_record(&mut records[n]) {
                    Ok(true) => n += 1,
                    Ok(false) => break,
                    Err(e) => {
                        failed = Some(TraceError::io(path, e.into()));
                        break;
                    }
                }
            }
            records.truncate(n);
            if n > 0 && send.send(Batch::Records(file, records)).is_err() {
                return;
            }
            if let Some(e) = failed {
                let _ = send.send(Batch::Failed(e));
                return;
            }
            if n < RECORDS {
                break;
            }
        }
    }
    let _ = send.send(Batch::End);
}

/// One CSV file with a header row, read record by record.
pub(crate) struct HeadedCsv<'p> {
    path: &'p Path,
    reader: csv::Reader<Input>,
    record: csv::ByteRecord,
}

impl<'p> HeadedCsv<'p> {
    /// Opens `path` (plain or gzip), comma-separated.
    pub fn open(path: &'p Path) -> Result<HeadedCsv<'p>, TraceError> {
        HeadedCsv::open_with(path, b',')
    }

    /// Opens `path` (plain or gzip), its fields separated by `delimiter`.
    pub fn open_with(path: &'p Path, delimiter: u8) -> Result<HeadedCsv<'p>, TraceError> {
        let reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .delimiter(delimiter)
            .quoting(delimiter == b',')
            .from_reader(open_file(path)?);
        Ok(HeadedCsv {
            path,
            reader,
            record: csv::ByteRecord::new(),
        })
    }

    /// The header row.
    pub fn header(&mut self) -> Result<&csv::ByteRecord, TraceError> {
        let path = self.path;
        self.reader
            .byte_headers()
            .map_err(|e| TraceError::io(path, e.into()))
    }

    /// The next record, or `None` after the last.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, TraceError> {
        match self.reader.read_byte_record(&mut self.record) {
            Err(e) => Err(TraceError::io(self.path, e.into())),
            Ok(false) => Ok(None),
            Ok(true) => Ok(Some(Record::read(self.path, &self.record))),
        }
    }
}

/// A CSV reader that accepts records of any length (the formats check lengths themselves).
pub(crate) fn csv_reader(input: Input, has_headers: bool) -> csv::Reader<Input> {
    csv::ReaderBuilder::new()
        .has_headers(has_headers)
        .flexible(true)
        .from_reader(input)
}

/// The position of each of `names` in a CSV header, or the error naming the first one missing.
pub(crate) fn columns<const N: usize>(
    file: &Path,
    header: &csv::ByteRecord,
    names: [&'static str; N],
) -> Result<[Col; N], TraceError> {
    let mut cols = [Col::new(0, ""); N];
    for (col, name) in cols.iter_mut().zip(names) {
        let index = header
            .iter()
            .position(|h| h.trim_ascii() == name.as_bytes());
        let index = index.ok_or_else(|| TraceError::MissingColumn {
            file: file.to_path_buf(),
            column: name,
        })?;
        *col = Col::new(index + 1, name);
    }
    Ok(cols)
}

#[cfg(test)]
mod tests {
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
}
