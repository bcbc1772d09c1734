//! An error with its causes on one line, for whoever shows errors to a person.
//!
//! fairshare's errors keep their cause as a source (`#[source]`) rather than copying its text
//! into their own, so that a caller can inspect the cause and nothing is said twice. Whoever
//! prints an error for a person (the binary, a log line, the Python package) prints it with
//! its causes through [`Chain`]. A parser or check of one value, whose whole story is one
//! sentence, says it as an [`Invalid`].

use std::error::Error;
use std::fmt;

/// A value that cannot be used, and why: what a parser or a check of one value says, the value
/// and what was expected named in the text (`--window 3x: expected a number of seconds…`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

impl From<String> for Invalid {
    fn from(message: String) -> Invalid {
        Invalid(message)
    }
}

impl From<&str> for Invalid {
    fn from(message: &str) -> Invalid {
        Invalid(message.to_owned())
    }
}

impl From<Invalid> for String {
    fn from(invalid: Invalid) -> String {
        invalid.0
    }
}

impl std::ops::Deref for Invalid {
    type Target = str;

    /// The message, to read or test.
    fn deref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for Invalid {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<String> for Invalid {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<&str> for Invalid {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// `error: cause: cause's cause…`, each of the chain's texts once.
pub struct Chain<'a>(pub &'a (dyn Error + 'a));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(error) = cause {
            write!(f, ": {error}")?;
            cause = error.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("reading shares.txt")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn each_cause_follows_once() {
        let error = Outer(std::io::Error::other("permission denied"));
        assert_eq!(
            Chain(&error).to_string(),
            "reading shares.txt: permission denied"
        );
        let alone = std::io::Error::other("no cause");
        assert_eq!(Chain(&alone).to_string(), "no cause");
    }
}
