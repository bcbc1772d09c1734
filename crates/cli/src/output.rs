//! Writing results: JSON and HTML files, or standard output for `-`.
//!
//! Output is where a long run can still fail, so paths are checked before the work starts
//! ([`Outputs::check`]), and standard output closed early by the reader (`| head`) ends the
//! program quietly, as Unix tools do, instead of panicking.

use anyhow::{bail, Context, Result};
use fairshare_sim::stats::RunStats;
use serde::Serialize;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

/// Writes `value` as pretty JSON to `path` (`-` for standard output).
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    write_text(path, &text)
}

/// Writes `text` to `path` (`-` for standard output).
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    if is_stdout(path) {
        return print(text);
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes `text` to standard output; a reader that has gone away (a closed pipe) is not an
/// error: the rest of the output is simply not wanted.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to standard output"),
    }
}

/// Whether `path` means standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Fails unless a file can be written at `path` (`-` always can), without changing it: an
/// existing file must be writable, a new one's folder must exist and accept files.
pub fn check_writable(path: &Path, what: &str) -> Result<()> {
    if is_stdout(path) {
        return Ok(());
    }
    let shown = path.display();
    if path.is_dir() {
        bail!("{what} {shown}: is a folder, expected a file name");
    }
    if path.exists() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .with_context(|| format!("{what} {shown}: cannot be written"))?;
        return Ok(());
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        bail!(
            "{what} {shown}: the folder {} does not exist",
            folder.display()
        );
    }
    tempfile::NamedTempFile::new_in(folder)
        .map(drop)
        .with_context(|| {
            format!(
                "{what} {shown}: cannot create files in {}",
                folder.display()
            )
        })
}

/// Where a summary goes: JSON, an HTML report, and otherwise a table on standard output.
pub struct Outputs {
    /// JSON file, `-` for standard output (which then carries nothing else).
    pub json: Option<PathBuf>,
    /// HTML report file.
    pub report: Option<PathBuf>,
    /// Wall-clock figures of the runs (JSON), kept apart so the other outputs are the same
    /// byte for byte whenever the input is.
    pub stats: Option<PathBuf>,
}

impl Outputs {
    /// Fails unless every output file can be written: call it before the work starts.
    pub fn check(&self) -> Result<()> {
        if let Some(path) = &self.json {
            check_writable(path, "--json")?;
        }
        if let Some(path) = &self.report {
            if is_stdout(path) {
                bail!("--report -: the report is a file; give its name (use --json - for standard output)");
            }
            check_writable(path, "--report")?;
        }
        if let Some(path) = &self.stats {
            check_writable(path, "--stats")?;
        }
        Ok(())
    }

    /// Writes the runs' wall-clock figures where `--stats` asked.
    pub fn write_stats(&self, stats: &[RunStats]) -> Result<()> {
        match &self.stats {
            Some(path) => write_json(path, &stats),
            None => Ok(()),
        }
    }

    /// Writes `summary` where `--json` and `--report` asked, and no table: for a run whose
    /// standard output carries something else.
    pub fn write_files<T: Serialize>(
        &self,
        summary: &T,
        html: impl Fn(&T) -> String,
    ) -> Result<()> {
        if let Some(path) = &self.json {
            write_json(path, summary)?;
        }
        if let Some(path) = &self.report {
            write_text(path, &html(summary))?;
        }
        Ok(())
    }

    /// Writes `summary` as asked, rendering the report and the table with the given functions.
    pub fn write<T: Serialize>(
        &self,
        summary: &T,
        html: impl Fn(&T) -> String,
        table: impl Fn(&T) -> String,
    ) -> Result<()> {
        self.write_files(summary, html)?;
        if !self.json.as_deref().is_some_and(is_stdout) {
            print(&table(summary))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::check_writable;

    #[test]
    fn unwritable_paths_are_refused_before_any_work() {
        let dir = tempfile::TempDir::new().unwrap();
        assert!(check_writable(&dir.path().join("new.html"), "--report").is_ok());
        assert!(
            !dir.path().join("new.html").exists(),
            "the check leaves no file"
        );
        let missing = check_writable(&dir.path().join("no/such/x.html"), "--report");
        let message = format!("{:#}", missing.unwrap_err());
        assert!(message.contains("does not exist"), "{message}");
        let folder = format!("{:#}", check_writable(dir.path(), "--json").unwrap_err());
        assert!(folder.contains("is a folder"), "{folder}");
        assert!(check_writable(std::path::Path::new("-"), "--json").is_ok());
    }
}
