//! The table `job_submit.lua` reads, so that a job is ranked at its submission rather than
//! waiting at site factor 0 below every ranked job until the next pass.
//!
//! Slurm runs `slurm_job_submit` of `job_submit.lua` for every submission, and may set
//! `job_desc.site_factor` there. The adapter rewrites a small table every pass — one line per
//! association, `account|user|site factor`, after a first line `# fairshare WRITTEN` giving when
//! (seconds after the epoch) — and the script (`deploy/job_submit.lua`) looks the new job's
//! association up in it. The file is written beside itself and renamed over the old one, so
//! the script reads either table whole, never half of one. A table older than the script's
//! limit, or missing, sets nothing: the job keeps 0 until the next pass, as without the script.

use fairshare_reconcile::plan::SubmitFactor;
use std::io::Write;
use std::path::Path;

/// The table's text: its first line says when it was written.
pub fn table(factors: &[SubmitFactor], written_s: u64) -> String {
    let mut text = format!("# fairshare {written_s}\n");
    for f in factors {
        text.push_str(&format!("{}|{}|{}\n", f.account, f.user, f.factor));
    }
    text
}

/// Writes `text` to `path` whole: to a file beside it, synced, then renamed over it.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_os_string());
    let mut temporary = name;
    temporary.push(".new");
    let beside = path.with_file_name(temporary);
    let mut file = std::fs::File::create(&beside)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&beside, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("factors.txt");
        let factor = |user: &str, factor| SubmitFactor {
            account: "physics".into(),
            user: user.into(),
            factor,
        };
        let text = table(&[factor("alice", 1000), factor("bob", 500)], 1_764_000_000);
        assert_eq!(
            text,
            "# fairshare 1764000000\nphysics|alice|1000\nphysics|bob|500\n"
        );
        write_atomically(&path, "old\n").unwrap();
        write_atomically(&path, &text).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "nothing left beside it");
    }
}
