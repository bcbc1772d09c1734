//! Writing results: JSON and HTML files, or standard output for `-`.

use anyhow::{Context, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Writes `value` as pretty JSON to `path` (`-` for standard output).
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    write_text(path, &text)
}

/// Writes `text` to `path` (`-` for standard output).
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    if path.as_os_str() == "-" {
        print!("{text}");
        return Ok(());
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Where a summary goes: JSON, an HTML report, and otherwise a table on standard output.
pub struct Outputs {
    /// JSON file, `-` for standard output (which then carries nothing else).
    pub json: Option<PathBuf>,
    /// HTML report file.
    pub report: Option<PathBuf>,
}

impl Outputs {
    /// Writes `summary` as asked, rendering the report and the table with the given functions.
    pub fn write<T: Serialize>(
        &self,
        summary: &T,
        html: impl Fn(&T) -> String,
        table: impl Fn(&T) -> String,
    ) -> Result<()> {
        if let Some(path) = &self.json {
            write_json(path, summary)?;
        }
        if let Some(path) = &self.report {
            write_text(path, &html(summary))?;
        }
        if self.json.as_ref().is_none_or(|p| p.as_os_str() != "-") {
            print!("{}", table(summary));
        }
        Ok(())
    }
}
