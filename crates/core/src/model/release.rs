//! Slurm's release numbers: the readers name the Slurm that printed what they read, and the
//! simulator's model of Slurm follows what changed between releases, both keyed on the
//! release a version text names.

/// The release (major, minor) a Slurm version text `MAJOR.MINOR[.MICRO…]` names
/// (`24.11.5` → (24, 11)); `None` for any other text.
pub fn slurm_release(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::slurm_release;

    #[test]
    fn a_release_is_the_first_two_numbers() {
        assert_eq!(slurm_release("24.11.5"), Some((24, 11)));
        assert_eq!(slurm_release(" 22.05.8\n"), Some((22, 5)));
        assert_eq!(slurm_release("23.02"), Some((23, 2)));
        for other in ["22", "", "twenty-two.5", "22.x.1", "-1.5"] {
            assert_eq!(slurm_release(other), None, "{other}");
        }
    }
}
