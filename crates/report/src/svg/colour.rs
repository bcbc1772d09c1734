//! Colours: the palette, each policy's fixed colour where it has one, and their SVG forms.

use super::*;

/// The Okabe–Ito palette (colour-blind safe), in the order series take it.
pub const PALETTE: [(u8, u8, u8); 8] = [
    (0, 114, 178),
    (213, 94, 0),
    (0, 158, 115),
    (204, 121, 167),
    (230, 159, 0),
    (86, 180, 233),
    (0, 0, 0),
    (240, 228, 66),
];

/// A colour to draw in: a palette colour or an explicit shade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colour {
    /// Palette colour `i` (see [`PALETTE`]), cycling.
    Palette(usize),
    /// An explicit (red, green, blue) shade.
    Rgb(u8, u8, u8),
}

/// Neutral grey for reference lines, bottleneck strips and points on them.
pub const GREY: Colour = Colour::Rgb(120, 120, 120);

/// Colour names (matched in any case), the shade a name is drawn in, and the palette colour the
/// name keeps from other names: its own, or the one it resembles. Okabe–Ito supplies blue,
/// vermillion for red, bluish green for green, reddish purple for purple, orange, sky blue for
/// cyan, black and yellow; the rest are explicit: pink #F095BE (lighter than purple), magenta
/// #C51B8A (more saturated), brown #8C510A, grey #A0A0A0 (lighter than bottleneck strips).
const NAMED: [(&str, Colour, Option<usize>); 13] = [
    ("blue", Colour::Palette(0), Some(0)),
    ("red", Colour::Palette(1), Some(1)),
    ("green", Colour::Palette(2), Some(2)),
    ("purple", Colour::Palette(3), Some(3)),
    ("orange", Colour::Palette(4), Some(4)),
    ("cyan", Colour::Palette(5), Some(5)),
    ("black", Colour::Palette(6), Some(6)),
    ("yellow", Colour::Palette(7), Some(7)),
    ("pink", Colour::Rgb(240, 149, 190), Some(3)),
    ("magenta", Colour::Rgb(197, 27, 138), Some(3)),
    ("brown", Colour::Rgb(140, 81, 10), None),
    ("grey", Colour::Rgb(160, 160, 160), None),
    ("gray", Colour::Rgb(160, 160, 160), None),
];

/// A colour for each name: its own shade when the name is a colour's (see `NAMED`), else the
/// first colour no colour name takes or keeps: the palette's in order, then the explicit shades
/// of `NAMED`, cycling over the palette only when all are taken. The same names always get
/// the same colours.
pub fn colours_for(names: &[&str]) -> Vec<Colour> {
    let named = |name: &str| NAMED.iter().find(|(n, ..)| n.eq_ignore_ascii_case(name));
    let taken: Vec<Colour> = names
        .iter()
        .filter_map(|n| named(n))
        .flat_map(|(_, shade, kept)| [Some(*shade), kept.map(Colour::Palette)])
        .flatten()
        .collect();
    let palette = (0..PALETTE.len()).map(Colour::Palette);
    let explicit = NAMED.map(|(_, shade, _)| shade);
    let mut free: Vec<Colour> = Vec::new();
    for c in palette.clone().chain(explicit) {
        if !taken.contains(&c) && !free.contains(&c) {
            free.push(c);
        }
    }
    if free.is_empty() {
        free = palette.collect();
    }
    let mut next = free.into_iter().cycle();
    names
        .iter()
        .map(|n| match named(n) {
            Some((_, shade, _)) => *shade,
            None => next.next().expect("a free colour"),
        })
        .collect()
}

/// The colour `c` as plotters draws it.
pub fn colour(c: Colour) -> RGBColor {
    match c {
        Colour::Palette(i) => {
            let (r, g, b) = PALETTE[i % PALETTE.len()];
            RGBColor(r, g, b)
        }
        Colour::Rgb(r, g, b) => RGBColor(r, g, b),
    }
}

/// The colour `c` as a CSS hex string.
pub fn hex(c: Colour) -> String {
    let RGBColor(r, g, b) = colour(c);
    format!("#{r:02x}{g:02x}{b:02x}")
}
