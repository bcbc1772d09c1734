//! The lines of several files as one stream, each with where it is: what the whitespace-separated
//! formats (SWF) read.

use super::*;

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
