//! Fields that know where they are: a field read as a number, a time or a text, or an error naming
//! file, line and field.

use super::*;

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
    pub(super) fn parse<T: FromStr>(
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

    /// Checks that field `col` is an amount as [`Self::amount`] reads one, without reading it
    /// when it plainly is: a record's amounts that are not used are still checked, at a
    /// fraction of the cost.
    pub fn check_amount(&self, col: Col, raw: &[u8]) -> Result<(), TraceError> {
        match is_plain_amount(raw) {
            true => Ok(()),
            false => self.amount(col, raw).map(drop),
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

/// Whether `raw` is surely an amount [`At::amount`] accepts: ASCII digits, at least one, with
/// at most one decimal point and at most 15 digits before it (so below 10¹⁵, rounded at most
/// to it).
fn is_plain_amount(raw: &[u8]) -> bool {
    let (whole, fraction) = match raw.iter().position(|&b| b == b'.') {
        Some(point) => (&raw[..point], &raw[point + 1..]),
        None => (raw, &[][..]),
    };
    let digits = |part: &[u8]| part.iter().all(u8::is_ascii_digit);
    whole.len() <= 15 && whole.len() + fraction.len() > 0 && digits(whole) && digits(fraction)
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
