//! Writing results: JSON and HTML files, or standard output for `-`.

use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;

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
