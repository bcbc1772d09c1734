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
    if max_s >= 2.0 * 86_400.0 {
        (86_400.0, "d")
    } else if max_s >= 2.0 * 3_600.0 {
        (3_600.0, "h")
    } else {
        (1.0, "s")
    }
}

/// `s` seconds in the unit `(per, symbol)`: whole seconds, or one decimal for hours and days.
pub fn in_unit(s: f64, (per, symbol): (f64, &str)) -> String {
    let digits = if per > 1.0 { 1 } else { 0 };
    let v = fixed(s / per, digits);
    if v == "–" {
        v
    } else {
        format!("{v} {symbol}")
    }
}

/// A duration in seconds written for people: `42 s`, `3.5 h`, `12.0 d`.
pub fn duration(s: f64) -> String {
    in_unit(s, time_unit(s))
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
        assert_eq!(duration(42.0), "42 s");
        assert_eq!(duration(9_000.0), "2.5 h");
        assert_eq!(duration(864_000.0), "10.0 d");
    }
}
