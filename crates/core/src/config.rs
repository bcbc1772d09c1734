//! What goes wrong reading a TOML configuration, and where in the file.
//!
//! The node agent's `agent.toml`, the daemon's `fairshare.toml` and the runtime and process
//! scenario files are read by different crates, but each can fail in the same three ways: the
//! file cannot be read, its TOML does not fit, or a value is out of range. One
//! [`ConfigError`] serves them all, so every such mistake is reported the same way —
//! `file[:line[:column]]: what` — and a caller handles one type whichever file it read. It
//! lives in the core because the core is the one crate all those readers share; like the rest
//! of the core it reads nothing: each reader reads its file and parses its TOML, and hands the
//! error what went wrong and where ([`Location::in_text`] turns the parser's byte span into a
//! line and a column).

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Where something is in a file: `file[:line[:column]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file, or for settings gathered from several places the name they go by (the
    /// daemon's command line, its whole configuration).
    pub file: PathBuf,
    /// The line, from 1, if known.
    pub line: Option<usize>,
    /// The column, from 1, if known.
    pub column: Option<usize>,
}

impl Location {
    /// The whole of `file`, no line.
    pub fn file(file: impl Into<PathBuf>) -> Location {
        Location {
            file: file.into(),
            line: None,
            column: None,
        }
    }

    /// Line `line` of `file`.
    pub fn line(file: impl Into<PathBuf>, line: usize) -> Location {
        Location {
            line: Some(line),
            ..Location::file(file)
        }
    }

    /// Where the byte range `span` of `text`, the whole text of `file`, starts: its line and
    /// column (in characters), both from 1; the file alone without a span.
    pub fn in_text(text: &str, file: &Path, span: Option<Range<usize>>) -> Location {
        let before = span.and_then(|span| text.get(..span.start));
        Location {
            file: file.to_path_buf(),
            line: before.map(|before| before.matches('\n').count() + 1),
            column: before
                .map(|before| before.rsplit('\n').next().unwrap_or("").chars().count() + 1),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        Ok(())
    }
}

/// A configuration file that cannot be used.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said (shown in the message, so not a separate cause).
        error: std::io::Error,
    },
    /// The TOML is malformed, has an unknown key, or a value of the wrong type.
    #[error("{at}: {message}")]
    Toml {
        /// Where: the file, and the line and column when the reader can tell them.
        at: Location,
        /// What the parser said.
        message: String,
    },
    /// A value is well-formed but wrong: out of range, an unknown name, a duplicate.
    #[error("{at}: {message}")]
    Invalid {
        /// Where: the file, and the line when the reader can tell it.
        at: Location,
        /// Which key, what is wrong and what was expected.
        message: String,
    },
}

impl ConfigError {
    /// File `path` could not be read.
    pub fn io(path: &Path, error: std::io::Error) -> ConfigError {
        ConfigError::Io {
            path: path.to_path_buf(),
            error,
        }
    }

    /// A TOML parser's `message` about byte range `span` of `text`, the whole text of `file`:
    /// reported at its line and column, on one line.
    pub fn toml_in(
        text: &str,
        file: &Path,
        span: Option<Range<usize>>,
        message: &str,
    ) -> ConfigError {
        ConfigError::Toml {
            at: Location::in_text(text, file, span),
            message: one_line(message),
        }
    }

    /// A wrong value at `at`.
    pub fn invalid(at: Location, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            at,
            message: message.into(),
        }
    }
}

/// A possibly multi-line message on one line: its non-blank lines, trimmed, joined by `: `.
pub fn one_line(message: &str) -> String {
    let parts: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_says_as_much_as_is_known() {
        let text = "a = 1\nbé = [\n  2, x]\n";
        let file = Path::new("f.toml");
        let at = |start: usize| Location::in_text(text, file, Some(start..start + 1));
        assert_eq!(at(0).to_string(), "f.toml:1:1");
        assert_eq!(at(text.find('x').unwrap()).to_string(), "f.toml:3:6");
        assert_eq!(at(text.find('[').unwrap()).to_string(), "f.toml:2:6");
        assert_eq!(Location::in_text(text, file, None).to_string(), "f.toml");
        assert_eq!(Location::line(file, 4).to_string(), "f.toml:4");
        assert_eq!(Location::file("configuration").to_string(), "configuration");
    }

    #[test]
    fn every_case_reads_file_place_what() {
        let io = ConfigError::io(
            Path::new("a.toml"),
            std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
        );
        assert_eq!(io.to_string(), "a.toml: gone");
        assert!(
            std::error::Error::source(&io).is_none(),
            "the message carries it"
        );
        let toml = ConfigError::toml_in(
            "x = 1\ny = 2\n",
            Path::new("b.toml"),
            Some(6..7),
            "unknown field `y`\n  expected `x`\n",
        );
        assert_eq!(
            toml.to_string(),
            "b.toml:2:1: unknown field `y`: expected `x`"
        );
        let invalid = ConfigError::invalid(Location::line("c.csv", 3), "cpu: expected a number");
        assert_eq!(invalid.to_string(), "c.csv:3: cpu: expected a number");
    }
}
