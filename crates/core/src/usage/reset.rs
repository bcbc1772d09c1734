//! Slurm's `PriorityUsageResetPeriod`: every association's usage zeroed at the start of each
//! day, week, month, quarter or year — how sites with allocations per period start each one
//! afresh. Slurm resets at its first decay tick at or after the boundary, in the controller's
//! local time; fairshare takes the boundaries in UTC (run the controller in UTC, or expect
//! the reset shifted by the zone's offset).

use crate::error::Invalid;
use serde::Serialize;

/// Seconds in a day.
const DAY: i64 = 86_400;

/// How often usage is zeroed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reset {
    /// At every midnight.
    Daily,
    /// At every Sunday's midnight.
    Weekly,
    /// On the first of every month.
    Monthly,
    /// On the first of January, April, July and October.
    Quarterly,
    /// On the first of January.
    Yearly,
}

impl Reset {
    /// The last boundary at or before `t_s` (seconds after the Unix epoch, UTC; taken within
    /// ± a million years, so that the calendar's arithmetic cannot overflow).
    pub fn last_boundary(self, t_s: f64) -> f64 {
        const FAR_DAYS: f64 = 365.25e6;
        let days = (t_s / DAY as f64).floor().clamp(-FAR_DAYS, FAR_DAYS) as i64;
        let day = match self {
            Reset::Daily => days,
            // The epoch was a Thursday: Sunday is 3 days later, or 4 days before.
            Reset::Weekly => days - (days + 4).rem_euclid(7),
            Reset::Monthly | Reset::Quarterly | Reset::Yearly => {
                let (year, month, _) = civil_from_days(days);
                let first_month = match self {
                    Reset::Monthly => month,
                    Reset::Quarterly => (month - 1) / 3 * 3 + 1,
                    _ => 1,
                };
                days_from_civil(year, first_month, 1)
            }
        };
        (day * DAY) as f64
    }
}

impl std::str::FromStr for Reset {
    type Err = Invalid;

    /// `daily`, `weekly`, `monthly`, `quarterly` or `yearly`, in any case (as slurm.conf writes
    /// `PriorityUsageResetPeriod`).
    fn from_str(s: &str) -> Result<Reset, Invalid> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "daily" => Reset::Daily,
            "weekly" => Reset::Weekly,
            "monthly" => Reset::Monthly,
            "quarterly" => Reset::Quarterly,
            "yearly" => Reset::Yearly,
            _ => {
                return Err(Invalid(format!(
                    "a reset period is daily, weekly, monthly, quarterly or yearly, found {s:?}"
                )))
            }
        })
    }
}

impl std::fmt::Display for Reset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Reset::Daily => "daily",
            Reset::Weekly => "weekly",
            Reset::Monthly => "monthly",
            Reset::Quarterly => "quarterly",
            Reset::Yearly => "yearly",
        })
    }
}

/// The day (after 1970-01-01) of a date in the proleptic Gregorian calendar (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date `(year, month, day)` of a day after 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Seconds after the epoch of a UTC date and time.
    fn at(year: i64, month: i64, day: i64, hour: i64) -> f64 {
        (days_from_civil(year, month, day) * DAY + hour * 3_600) as f64
    }

    #[test]
    fn boundaries_fall_on_the_calendar() {
        // Thursday 2026-11-26, 15:00 UTC.
        let t = at(2026, 11, 26, 15);
        assert_eq!(Reset::Daily.last_boundary(t), at(2026, 11, 26, 0));
        assert_eq!(Reset::Weekly.last_boundary(t), at(2026, 11, 22, 0));
        assert_eq!(Reset::Monthly.last_boundary(t), at(2026, 11, 1, 0));
        assert_eq!(Reset::Quarterly.last_boundary(t), at(2026, 10, 1, 0));
        assert_eq!(Reset::Yearly.last_boundary(t), at(2026, 1, 1, 0));
        // A boundary is its own last boundary; a second before it is not.
        let april = at(2024, 4, 1, 0);
        assert_eq!(Reset::Quarterly.last_boundary(april), april);
        assert_eq!(
            Reset::Quarterly.last_boundary(april - 1.0),
            at(2024, 1, 1, 0)
        );
        assert_eq!(
            Reset::Monthly.last_boundary(at(2024, 2, 29, 23)),
            at(2024, 2, 1, 0)
        );
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        // The far future and past stay on the calendar, never overflow.
        assert!(Reset::Yearly.last_boundary(f64::MAX) > 3e13);
        assert!(Reset::Weekly.last_boundary(f64::MIN) < -3e13);
        assert_eq!("Quarterly".parse(), Ok(Reset::Quarterly));
        assert!("fortnightly".parse::<Reset>().is_err());
    }

    proptest! {
        #[test]
        fn dates_round_trip_and_boundaries_are_the_latest_before(days in -100_000i64..100_000, s in 0i64..DAY) {
            let (y, m, d) = civil_from_days(days);
            prop_assert_eq!(days_from_civil(y, m, d), days);
            let t = (days * DAY + s) as f64;
            for reset in [Reset::Daily, Reset::Weekly, Reset::Monthly, Reset::Quarterly, Reset::Yearly] {
                let b = reset.last_boundary(t);
                prop_assert!(b <= t);
                // Walking back day by day from t, the first boundary met is b.
                let day = |k: i64| {
                    let (_, m, d) = civil_from_days(k);
                    match reset {
                        Reset::Daily => true,
                        Reset::Weekly => (k + 4).rem_euclid(7) == 0,
                        Reset::Monthly => d == 1,
                        Reset::Quarterly => d == 1 && (m - 1) % 3 == 0,
                        Reset::Yearly => d == 1 && m == 1,
                    }
                };
                let first = (0..400).map(|k| days - k).find(|&k| day(k)).unwrap();
                prop_assert_eq!(b, (first * DAY) as f64);
            }
        }
    }
}
