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
        let mut chain: Vec<&dyn Error> = vec![self.0];
        while let Some(cause) = chain[chain.len() - 1].source() {
            chain.push(cause);
        }
        f.write_str(&joined(chain.into_iter()))
    }
}

/// The texts of `chain`, an error and its causes, joined by `: `. fairshare's errors never
/// print their source, but some of the crates it uses do (sqlx's `error returned from
/// database: {0}` also returns the `{0}` as its source): a cause whose text already ends
/// what is written is not written again.
pub fn joined<'a>(chain: impl Iterator<Item = &'a (dyn Error + 'a)>) -> String {
    let mut text = String::new();
    for error in chain {
        let said = error.to_string();
        if text.is_empty() {
            text = said;
        } else if !text.ends_with(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
    }
    text
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

    /// An error that prints its source and returns it, as sqlx's do.
    #[derive(Debug, thiserror::Error)]
    #[error("error returned from database: {0}")]
    struct Foreign(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("database")]
    struct Ours(#[source] Foreign);

    #[test]
    fn a_cause_a_foreign_error_already_printed_is_not_repeated() {
        let error = Ours(Foreign(std::io::Error::other("no such table: nodes")));
        assert_eq!(
            Chain(&error).to_string(),
            "database: error returned from database: no such table: nodes"
        );
    }
}
