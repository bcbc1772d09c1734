//! What a person writes for a duration, a window, a moment or a decay (`90m`, `40d+12h`,
//! `2026-11-23T23:16:57Z`, `half-life:7d`), read the same way by every front end of the
//! library: the command line's options and the Python package's arguments.

use crate::Moment;
use fairshare_core::error::Invalid;
use fairshare_core::model::{parse_seconds, Time};
use fairshare_core::usage::decay::Decay;

/// A duration in seconds, or with a unit (`90s`, `15m`, `6h`, `2d`), as microseconds; at most
/// [`Time::LONGEST_INPUT_S`] (about 317 years), so that the end of a run is a time the engine
/// can hold.
pub fn parse_duration(text: &str) -> Result<u64, Invalid> {
    let seconds = parse_seconds(text)?;
    match Time::from_input_secs(seconds) {
        Some(t) => Ok(t.as_micros()),
        None => Err(Invalid(format!(
            "expected a duration from 0 to {:e} s (about 317 years), found {text:?}",
            Time::LONGEST_INPUT_S
        ))),
    }
}

/// `START+LENGTH` (durations, e.g. `40d+12h`) as the window `(start, end)` in microseconds.
pub fn parse_window(text: &str) -> Result<(u64, u64), Invalid> {
    let Some((start, length)) = text.rsplit_once('+') else {
        return Err(Invalid(format!(
            "expected START+LENGTH, e.g. 40d+12h, found {text:?}"
        )));
    };
    let (start, length) = (parse_duration(start)?, parse_duration(length)?);
    if length == 0 {
        return Err(Invalid("the window's LENGTH must be more than 0".into()));
    }
    Ok((start, start.saturating_add(length)))
}

/// `40d`, `30` or `2026-11-23T23:16:57[Z|±HH:MM]`.
pub fn parse_moment(text: &str) -> Result<Moment, Invalid> {
    if text.as_bytes().get(4) == Some(&b'-') {
        parse_date(text).map(Moment::Date)
    } else {
        parse_duration(text).map(Moment::After)
    }
}

/// `2026-11-23T23:16:57` (UTC), with `Z` or with an offset such as `+01:00`; a date alone is
/// its midnight, UTC.
pub fn parse_date(text: &str) -> Result<Time, Invalid> {
    let expected = || {
        format!("expected a date such as 2026-11-23T23:16:57, 2026-11-23T23:16:57Z or 2026-11-24T00:16:57+01:00, found {text:?}")
    };
    let split = text
        .len()
        .checked_sub(6)
        .filter(|&i| text.is_char_boundary(i));
    let (clock, offset_s) = match split.map(|i| text.split_at(i)) {
        Some((clock, zone))
            if clock.len() > 10 && (zone.starts_with('+') || zone.starts_with('-')) =>
        {
            let (h, m) = zone[1..].split_once(':').ok_or_else(expected)?;
            let minutes = h.parse::<i64>().map_err(|_| expected())? * 60
                + m.parse::<i64>().map_err(|_| expected())?;
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            (clock, sign * minutes * 60)
        }
        _ => (text, 0),
    };
    let utc = Time::from_utc(clock).ok_or_else(expected)?;
    let secs = utc.whole_secs() as i64 - offset_s;
    Time::from_input_secs(secs as f64).ok_or_else(|| Invalid(expected()))
}

/// `half-life:7d`, `step:72h:0.5`, `reset:30d` or `slurm:half-life=10m,period=1m,tick=DATE`,
/// durations as `--horizon` reads them.
pub fn parse_decay(text: &str) -> Result<Decay, Invalid> {
    match text.strip_prefix("slurm:") {
        Some(rest) => slurm_decay(rest),
        None => text.parse(),
    }
}

/// Slurm's accounting: `half-life=10m,period=1m,tick=DATE` (or `offset=SECONDS`), the tick's
/// date as the core's offset in seconds.
fn slurm_decay(text: &str) -> Result<Decay, Invalid> {
    let mut items = Vec::new();
    for item in text.split(',').filter(|i| !i.is_empty()) {
        match item.split_once('=') {
            Some(("tick", date)) => items.push(format!(
                "offset={}",
                parse_date(date)?.as_micros() / 1_000_000
            )),
            _ => items.push(item.to_owned()),
        }
    }
    format!("slurm:{}", items.join(",")).parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_in_utc_or_with_an_offset() {
        let utc = parse_date("2026-11-23T23:16:57").unwrap();
        assert_eq!(parse_date("2026-11-23T23:16:57Z"), Ok(utc));
        assert_eq!(parse_date("2026-11-24T00:16:57+01:00"), Ok(utc));
        assert_eq!(parse_date("2026-11-23T17:46:57-05:30"), Ok(utc));
        for bad in [
            "2026-11-2",
            "2026-11-23T25:00:00",
            "2026-11-23T23:16:57+1:00",
            "2026-11-23T23:16:5é",
            "1969-12-31T23:59:59Z",
        ] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
        assert!(matches!(
            parse_moment("2026-11-23T23:16:57"),
            Ok(Moment::Date(_))
        ));
        assert!(matches!(
            parse_moment("90m"),
            Ok(Moment::After(5_400_000_000))
        ));
        assert_eq!(
            parse_moment("2026-11-23"),
            Ok(Moment::Date(parse_date("2026-11-23T00:00:00").unwrap())),
            "a date alone is its midnight"
        );
        assert!(parse_moment("2026-11-2x")
            .unwrap_err()
            .contains("expected a date"));
    }
}
