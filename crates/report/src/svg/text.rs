//! Text in charts: escaped for XML, wrapped, shortened, and the labels of powers of ten.

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
