//! The line outputs the readers take (`sacct -P`, `sacctmgr -P`, `sshare -P`, `sprio`): their
//! lines that say something, each named as the readers' errors name it, in one place.

/// Every non-blank line of `text`, with its name for errors: `line 5`, counting from 1.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = (String, &str)> {
    (text.lines().enumerate())
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| (format!("line {}", index + 1), line))
}
