//! Comma-separated files, several in turn as one stream (the Google trace comes in 500 parts), read
//! ahead on a thread of their own, with or without a header.

use super::*;

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
pub(super) const RECORDS: usize = 1024;
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
        let mut lines = 0;
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
                        let line = lines + n as u64;
                        failed = Some(TraceError::io_after(path, line, io_error(e)));
                        break;
                    }
                }
            }
            lines += n as u64;
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
            Err(e) => {
                let line = self.reader.position().line().saturating_sub(1);
                Err(TraceError::io_after(self.path, line, io_error(e)))
            }
            Ok(false) => Ok(None),
            Ok(true) => Ok(Some(Record::read(self.path, &self.record))),
        }
    }
}

/// The I/O error under a CSV reader's error (a compressed file cut short keeps its kind), or
/// the CSV error itself as one.
fn io_error(error: csv::Error) -> std::io::Error {
    if !error.is_io_error() {
        return error.into();
    }
    match error.into_kind() {
        csv::ErrorKind::Io(io) => io,
        other => std::io::Error::other(format!("{other:?}")),
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
