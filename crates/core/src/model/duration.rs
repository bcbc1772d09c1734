//! Durations as people write them, one syntax for every option and parameter that takes one:
//! a number of seconds (`3600`, `0.5`) or a length with units (`90s`, `10m`, `6h`, `7d`,
//! `1h 30m`, `2days`), so that `--horizon 7d`, `decay=half-life:7d` and
//! `decayed-usage:half-life=7d` all read alike, in the command line, the Python package and
//! policy strings.

/// `text` in seconds: a number of seconds, or a length with units as [`humantime`] reads it
/// (`s`, `m`, `h`, `d`, `w`, and their long names).
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<f64>() {
        return match seconds.is_finite() {
            true => Ok(seconds),
            false => Err(format!("expected a finite duration, found {text:?}")),
        };
    }
    humantime::parse_duration(text)
        .map(|d| d.as_secs_f64())
        .map_err(|e| {
            format!(
                "expected seconds or a duration such as 90s, 10m, 6h or 7d, found {text:?} ({e})"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::parse_seconds;

    #[test]
    fn seconds_and_units_read_alike() {
        for (text, seconds) in [
            ("3600", 3600.0),
            ("0.5", 0.5),
            ("90s", 90.0),
            ("10m", 600.0),
            ("6h", 21_600.0),
            ("7d", 604_800.0),
            ("1h 30m", 5_400.0),
            ("2days", 172_800.0),
            (" 1w ", 604_800.0),
        ] {
            assert_eq!(parse_seconds(text), Ok(seconds), "{text}");
        }
    }

    #[test]
    fn what_is_not_a_duration_says_what_is_expected() {
        for bad in ["", "x", "7 parsecs", "inf", "NaN", "1d-"] {
            let err = parse_seconds(bad).unwrap_err();
            assert!(err.contains("expected"), "{bad}: {err}");
        }
    }
}
