//! The pieces every HTML page is made of: escaping, the page frame with its inline style,
//! tables, definition lists and figures. Kept apart so the pages only say what they show.

use crate::svg::Colour;

/// Page style: readable type, compact tables, figures that wrap on narrow screens.
const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;margin:2em auto;max-width:1240px;padding:0 1em;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:.86em}
th,td{padding:.25em .5em;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap}
th{background:#f4f4f4}th.l,td.l{text-align:left}
dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1.2em;margin:.6em 0}dt{font-weight:600}dd{margin:0}
figure{margin:1.2em 0;display:inline-block;vertical-align:top}figcaption.title{font-weight:600;margin:0 0 .2em 1em}figcaption{max-width:900px;font-size:.95em;color:#333;margin-top:.3em}
.legend span{display:inline-block;margin-right:1.2em}.swatch{display:inline-block;width:1.6em;height:.35em;vertical-align:middle;margin-right:.4em}
.note{color:#666;font-size:.9em}.warning{color:#8a4b00;background:#fff4e0;padding:.4em .8em;border-left:4px solid #e69a28}.scroll{overflow-x:auto}";

/// `text` with the characters HTML gives meaning to replaced by entities.
pub fn escape(text: &str) -> String {
    text.chars()
        .fold(String::with_capacity(text.len()), |mut out, c| {
            match c {
                '&' => out.push_str("&amp;"),
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '"' => out.push_str("&quot;"),
                '\'' => out.push_str("&#39;"),
                _ => out.push(c),
            }
            out
        })
}

/// A whole page: `title` (plain text) and `body` (HTML).
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

/// A table of plain-text cells under plain-text headers, the first column (names) aligned
/// left and the others (numbers) right.
pub fn table(headers: &[String], rows: &[Vec<String>]) -> String {
    table_left(headers, rows, 1)
}

/// A table like [`table`] whose first `left` columns hold words, aligned left.
pub fn table_left(headers: &[String], rows: &[Vec<String>], left: usize) -> String {
    let cells = |tag: &str, row: &[String]| {
        row.iter()
            .enumerate()
            .map(|(c, text)| {
                let class = if c < left { " class=\"l\"" } else { "" };
                format!("<{tag}{class}>{}</{tag}>", escape(text))
            })
            .collect::<String>()
    };
    let body: String = rows
        .iter()
        .map(|r| format!("<tr>{}</tr>\n", cells("td", r)))
        .collect();
    format!(
        "<div class=\"scroll\"><table>\n<tr>{}</tr>\n{body}</table></div>\n",
        cells("th", headers)
    )
}

/// A definition list of (term, plain-text description) pairs.
pub fn definitions(items: &[(&str, String)]) -> String {
    let body: String = items
        .iter()
        .map(|(t, d)| format!("<dt>{}</dt><dd>{}</dd>\n", escape(t), escape(d)))
        .collect();
    format!("<dl>\n{body}</dl>\n")
}

/// A figure: an SVG (trusted, made by [`crate::svg`]) and a plain-text caption.
pub fn figure(svg: &str, caption: &str) -> String {
    format!(
        "<figure>\n{svg}<figcaption>{}</figcaption>\n</figure>\n",
        escape(caption)
    )
}

/// A small titled panel: a plain-text title above an SVG made by [`crate::svg`].
pub fn panel(title: &str, svg: &str) -> String {
    format!(
        "<figure>\n<figcaption class=\"title\">{}</figcaption>\n{svg}</figure>\n",
        escape(title)
    )
}

/// A colour legend in HTML: (plain-text label, colour) pairs.
pub fn legend(entries: &[(String, Colour)]) -> String {
    let items: String = entries
        .iter()
        .map(|(label, c)| {
            format!(
                "<span><i class=\"swatch\" style=\"background:{}\"></i>{}</span>",
                crate::svg::hex(*c),
                escape(label)
            )
        })
        .collect();
    format!("<p class=\"legend\">{items}</p>\n")
}
