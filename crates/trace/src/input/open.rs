//! Opening a file whatever its compression: gzip inflated on a thread of its own, ahead of the
//! reader, and the first line for format detection.

use super::*;

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
pub(super) const CHUNK: usize = 1 << 18;
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
