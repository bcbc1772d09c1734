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

mod csv_files;
mod fields;
mod lines;
mod open;

pub(crate) use csv_files::{columns, CsvFiles, HeadedCsv, Record};
pub(crate) use fields::{is_comment, is_number, At, Col};
pub(crate) use lines::{Line, Lines};
pub(crate) use open::{first_line, open_file, open_file_with, Inflate};

#[cfg(test)]
mod tests;
