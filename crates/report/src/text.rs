//! Number formatting and aligned plain-text tables, shared by the terminal tables and the
//! pages, so both show the same digits.

/// `v` with `digits` decimals, or `–` when it is not a finite number.
pub fn fixed(v: f64, digits: usize) -> String {
    if v.is_finite() {
        let s = format!("{v:.digits$}");
        if s.trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            s.trim_start_matches('-').to_string()
        } else {
            s
        }
    } else {
        String::from("–")
    }
}

/// `v` as a percentage with one decimal.
pub fn percent(v: f64) -> String {
    let p = fixed(100.0 * v, 1);
    if p == "–" {
        p
    } else {
        format!("{p} %")
    }
}

/// A column-aligned text table: the first column left-aligned, the others right-aligned.
pub fn table(headers: &[String], rows: &[Vec<String>]) -> String {
    let columns = headers
        .len()
        .max(rows.iter().map(Vec::len).max().unwrap_or(0));
    let width = |c: usize| {
        let cell = |r: &[String]| r.get(c).map_or(0, |s| s.chars().count());
        rows.iter()
            .map(|r| cell(r))
            .max()
            .unwrap_or(0)
            .max(cell(headers))
    };
    let widths: Vec<usize> = (0..columns).map(width).collect();
    let line = |row: &[String]| {
        let cells = widths.iter().enumerate().map(|(c, w)| {
            let s = row.get(c).map_or("", String::as_str);
            if c == 0 {
                format!("{s:<w$}")
            } else {
                format!("{s:>w$}")
            }
        });
        cells.collect::<Vec<_>>().join("  ").trim_end().to_string() + "\n"
    };
    let rule = widths
        .iter()
        .map(|w| "─".repeat(*w))
        .collect::<Vec<_>>()
        .join("  ")
        + "\n";
    let body: String = rows.iter().map(|r| line(r)).collect();
    format!("{}{rule}{body}", line(headers))
}

/// A unit fitting durations up to `max_s` seconds: (seconds per unit, symbol).
pub fn time_unit(max_s: f64) -> (f64, &'static str) {
    if max_s >= 86_400.0 {
        (86_400.0, "d")
    } else if max_s >= 3_600.0 {
        (3_600.0, "h")
    } else if max_s >= 60.0 {
        (60.0, "min")
    } else {
        (1.0, "s")
    }
}

/// `s` seconds in the unit `(per, symbol)`, to three significant digits.
pub fn in_unit(s: f64, (per, symbol): (f64, &str)) -> String {
    with_symbol(significant(s / per), symbol)
}

/// `v` to three significant digits (all of its whole part when it has more).
pub fn significant(v: f64) -> String {
    let digits = match v.abs() {
        a if a < 10.0 => 2,
        a if a < 100.0 => 1,
        _ => 0,
    };
    fixed(v, digits)
}

/// `v` followed by its unit symbol, or `–` alone when `v` is not a number.
fn with_symbol(v: String, symbol: &str) -> String {
    if v == "–" {
        v
    } else {
        format!("{v} {symbol}")
    }
}

/// A duration in seconds written for people in the unit that fits it: `42.0 s`, `9.70 min`,
/// `3.50 h`, `110 d`.
pub fn duration(s: f64) -> String {
    in_unit(s, time_unit(s))
}

/// Bytes in one unit of memory, for the memory units the trace readers give (SWF's
/// kilobytes are read as KiB, as the archive's logs come from systems counting in 1024s).
fn bytes_per(unit: &str) -> Option<f64> {
    let k = 1024.0;
    match unit {
        "B" | "bytes" => Some(1.0),
        "KB" | "KiB" => Some(k),
        "MB" | "MiB" => Some(k * k),
        "GB" | "GiB" => Some(k * k * k),
        _ => None,
    }
}

/// An amount of a resource measured in `unit`, written for people: memory in KiB … PiB,
/// other amounts with two decimals and their unit when it is one word (`512.00 cores`).
pub fn amount(v: f64, unit: &str) -> String {
    if let Some(per) = bytes_per(unit) {
        return bytes(v * per);
    }
    let v = fixed(v, 2);
    if unit.is_empty() || unit.contains(' ') {
        v
    } else {
        with_symbol(v, unit)
    }
}

/// A number of bytes in the largest binary unit that leaves at least 1: `4.03 TiB`.
fn bytes(b: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let step = (0..UNITS.len())
        .rev()
        .find(|i| b.abs() >= 1024f64.powi(*i as i32))
        .unwrap_or(0);
    with_symbol(significant(b / 1024f64.powi(step as i32)), UNITS[step])
}

/// The strings `items`, owned (for table headers).
pub fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_hides_negative_zero_and_nan() {
        assert_eq!(fixed(-0.0001, 2), "0.00");
        assert_eq!(fixed(f64::NAN, 2), "–");
        assert_eq!(fixed(1.234, 1), "1.2");
    }

    #[test]
    fn tables_align() {
        let t = table(&strings(&["a", "bb"]), &[strings(&["xyz", "1"])]);
        assert_eq!(t, "a    bb\n───  ──\nxyz   1\n");
    }

    #[test]
    fn durations_pick_a_unit() {
        assert_eq!(duration(42.0), "42.0 s");
        assert_eq!(duration(582.1), "9.70 min");
        assert_eq!(duration(6_084.7), "1.69 h");
        assert_eq!(duration(864_000.0), "10.0 d");
        assert_eq!(duration(9_521_692.0), "110 d");
        assert_eq!(duration(f64::NAN), "–");
    }

    #[test]
    fn memory_is_written_in_binary_units() {
        assert_eq!(amount(4_327_511_465.89, "KB"), "4.03 TiB");
        assert_eq!(amount(1536.0, "MiB"), "1.50 GiB");
        assert_eq!(amount(0.5, "KB"), "512 B");
        assert_eq!(amount(0.0, "KB"), "0.00 B");
        assert_eq!(amount(1013.188, "processors"), "1013.19 processors");
        assert_eq!(amount(218.03, "fraction of largest machine"), "218.03");
        assert_eq!(amount(f64::NAN, "MiB"), "–");
    }
}
