//! Text in charts: numbers and ticks written short, text escaped for XML, wrapped and
//! shortened, and the labels of powers of ten.

/// `text` escaped as plotters escapes SVG text, so what it wrote can be found.
pub(super) fn xml_escape(text: &str) -> String {
    text.chars().fold(String::new(), |mut out, c| {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
        out
    })
}

/// `text` split into lines of at most `width` characters, breaking after a separator
/// (`,` `:` `=` `/` or a space) where one is near, else anywhere.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut rest: Vec<char> = text.chars().collect();
    while rest.len() > width {
        let head = &rest[..width];
        let cut = head
            .iter()
            .rposition(|c| matches!(c, ',' | ':' | '=' | '/' | ' '))
            .filter(|p| *p + 1 >= width / 2)
            .map_or(width, |p| p + 1);
        lines.push(
            rest[..cut]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_string(),
        );
        rest.drain(..cut);
    }
    lines.push(rest.into_iter().collect());
    lines
}

/// `text` cut to `max` characters, with an ellipsis when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{head}…")
}

/// `text` cut to `max` characters by taking out its middle, so both its start and its end
/// (where variants of one policy differ) stay readable.
pub fn shorten_middle(text: &str, max: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= max {
        return text.to_string();
    }
    let keep = max.saturating_sub(1);
    let (head, tail) = (keep - keep / 2, keep / 2);
    let start: String = chars[..head].iter().collect();
    let end: String = chars[chars.len() - tail..].iter().collect();
    format!("{start}…{end}")
}

/// δ = 1 − 10⁻ᵏ written with superscripts.
pub fn delta_label(k: i32) -> String {
    const SUP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let digits: String = k
        .unsigned_abs()
        .to_string()
        .chars()
        .map(|d| SUP[d.to_digit(10).unwrap_or(0) as usize])
        .collect();
    let sign = if k >= 0 { "⁻" } else { "" };
    format!("1−10{sign}{digits}")
}

/// A short, fixed-precision rendering of a tick value: 0.25, 12, 3.5k, 2M.
pub fn number(v: f64) -> String {
    let a = v.abs();
    let s = if !v.is_finite() {
        String::from("–")
    } else if a >= 1e6 {
        format!("{}M", trimmed(v / 1e6, 2))
    } else if a >= 1e4 {
        format!("{}k", trimmed(v / 1e3, 1))
    } else {
        trimmed(v, 3)
    };
    if s == "-0" {
        String::from("0")
    } else {
        s
    }
}

/// `v` as a tick of a linear axis over `(lo, hi)`: in the unit (k, M) its larger end is written
/// in, so all its ticks share one (2k … 10k, not 2000 … 10k), with the decimals its spacing
/// needs.
pub(super) fn number_on(v: f64, (lo, hi): (f64, f64)) -> String {
    let (unit, suffix, digits) = match lo.abs().max(hi.abs()) {
        top if top >= 1e6 => (1e6, "M", 2),
        top if top >= 1e4 => (1e3, "k", 1),
        // As `number` writes it, unless the ticks are closer than its three decimals tell apart.
        _ => (1.0, "", 3),
    };
    let spacing = ((hi - lo) / 10.0 / unit).abs();
    let needed = if spacing > 0.0 {
        -spacing.log10().floor()
    } else {
        0.0
    };
    let s = trimmed(v / unit, digits.max(needed.clamp(0.0, 9.0) as usize));
    match s.as_str() {
        "0" | "-0" => String::from("0"),
        _ if v.is_finite() => format!("{s}{suffix}"),
        _ => number(v),
    }
}

/// `v` with at most `digits` decimals, trailing zeros removed.
fn trimmed(v: f64, digits: usize) -> String {
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}
