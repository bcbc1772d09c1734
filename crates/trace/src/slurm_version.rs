//! Which Slurm printed what fairshare reads, and whether fairshare is tested on it.
//!
//! fairshare reads Slurm's commands as the versions it is tested on print them, and its model
//! of Slurm's scheduling follows those versions. Another version may print or schedule
//! otherwise, and the first sign would be a low trust figure or a wrong one. So the adapter's
//! every pass, and the what-if of every bundle, name the version (`SLURM_VERSION` of
//! `scontrol show config`) and say when it is not one of [`TESTED`].

use fairshare_core::model::slurm_release;
use serde::Serialize;
use std::fmt;

/// The Slurm releases (major, minor) fairshare's readers and model are tested on.
pub const TESTED: &[(u32, u32)] = &[(22, 5), (24, 11)];

/// A Slurm version as `scontrol show config` prints it (`SLURM_VERSION = 22.05.8`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SlurmVersion {
    /// The text Slurm printed.
    pub text: String,
    /// Whether its release (major and minor) is one of [`TESTED`]; false for a text that is
    /// not `MAJOR.MINOR[.MICRO…]`.
    pub tested: bool,
}

impl SlurmVersion {
    /// The version Slurm printed as `text`.
    pub fn new(text: &str) -> SlurmVersion {
        let text = text.trim().to_owned();
        let tested = slurm_release(&text).is_some_and(|r| TESTED.contains(&r));
        SlurmVersion { text, tested }
    }

    /// Its release (major, minor), when the text is `MAJOR.MINOR[.MICRO…]`.
    pub fn release(&self) -> Option<(u32, u32)> {
        slurm_release(&self.text)
    }

    /// What an administrator should know of a version fairshare is not tested on (`None`
    /// for a tested one).
    pub fn note(&self) -> Option<String> {
        (!self.tested).then(|| {
            format!(
                "Slurm {} is not a version fairshare is tested on (tested: {}): its commands may print, and its schedulers order jobs, otherwise than fairshare reads and models them (docs/slurm.md, \"Slurm versions\")",
                self.text,
                tested_list()
            )
        })
    }
}

impl fmt::Display for SlurmVersion {
    /// `Slurm 22.05.8 (tested)`, or `Slurm 24.11.5 (not tested)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tested = if self.tested { "tested" } else { "not tested" };
        write!(f, "Slurm {} ({tested})", self.text)
    }
}

/// The tested releases as Slurm numbers them: `22.05`.
pub fn tested_list() -> String {
    let each = TESTED
        .iter()
        .map(|(major, minor)| format!("{major}.{minor:02}"));
    each.collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tested_release_is_told_from_others_whatever_its_micro_version() {
        let bookworm = SlurmVersion::new(" 22.05.8\n");
        assert_eq!(bookworm.text, "22.05.8");
        assert!(bookworm.tested);
        assert_eq!(bookworm.note(), None);
        assert_eq!(bookworm.to_string(), "Slurm 22.05.8 (tested)");
        assert!(SlurmVersion::new("22.05.11").tested);
        let trixie = SlurmVersion::new("24.11.5");
        assert!(trixie.tested);
        assert_eq!(trixie.release(), Some((24, 11)));
        let between = SlurmVersion::new("23.11.10");
        assert!(!between.tested);
        assert_eq!(between.to_string(), "Slurm 23.11.10 (not tested)");
        let note = between.note().unwrap();
        assert!(
            note.starts_with("Slurm 23.11.10 is not a version"),
            "{note}"
        );
        assert!(note.contains("tested: 22.05, 24.11"), "{note}");
        for other in ["23.02.1", "2.05.8", "22", "", "twenty-two", "22.05-rc1"] {
            assert!(!SlurmVersion::new(other).tested, "{other}");
        }
    }
}
