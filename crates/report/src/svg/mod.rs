//! Plotting primitives that return SVG strings: line charts with several series (linear or log
//! y, optionally with shaded bands), bubble scatters with the y = x diagonal, horizontal bar
//! charts and Gantt charts.
//!
//! They exist so the pages describe *what* to draw (series, axes, captions) while one place
//! decides *how*: sizes, fonts, grid, a colour-blind-safe palette and legends kept beside the
//! data. Drawing goes through `plotters`' SVG backend, which writes text as `<text>` elements
//! and needs no font files. Non-finite values are dropped, so no `NaN` reaches the output.

mod colour;
mod text;

pub use colour::{colour, colours_for, hex, Colour, GREY, PALETTE};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
pub use text::{delta_label, number, shorten_middle, truncate, wrap};
use text::{number_on, xml_escape};

/// Values of this magnitude or more (or not finite) are not drawn.
const LIMIT: f64 = 1e15;
/// Narrowest legend column beside a chart, pixels; it widens to its longest label.
const LEGEND_MIN_W: u32 = 150;
/// Widest share of a chart's width the legend column (or a bar chart's labels) may take.
const SIDE_SHARE: f64 = 0.4;
/// Approximate width of one character of tick and legend text, pixels.
const CHAR_W: u32 = 8;
/// Space around a chart's plot, pixels; more on the right when the last x tick label needs it.
const MARGIN: u32 = 12;
/// Longest lane name a Gantt chart writes; longer ones are cut, whole in a tooltip.
const LANE_NAME_MAX: usize = 24;
/// Font family of every text.
const FONT: &str = "sans-serif";
/// Font sizes as plotters takes them (it draws them at about 0.8×).
const TICK_PT: f64 = 16.5;
const DESC_PT: f64 = 17.5;

/// How an axis is scaled and labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    /// Linear, plain numbers.
    #[default]
    Linear,
    /// Base-10 logarithmic; values ≤ 0 are not drawn.
    Log,
    /// Linear over k, each integer tick labelled δ = 1 − 10⁻ᵏ.
    Delta,
}

/// One axis: its title (with units), scale and optional fixed range.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Axis {
    /// Title, units included.
    pub label: String,
    /// Scale and tick labels.
    pub scale: Scale,
    /// Fixed range; otherwise the data's range, padded.
    pub range: Option<(f64, f64)>,
    /// Whether an automatic range must include zero.
    pub zero: bool,
}

impl Axis {
    /// A linear axis titled `label`.
    pub fn new(label: &str) -> Self {
        Axis {
            label: label.to_string(),
            ..Axis::default()
        }
    }

    /// The same axis with `scale`.
    pub fn scale(self, scale: Scale) -> Self {
        Axis { scale, ..self }
    }

    /// The same axis with a fixed range.
    pub fn range(self, lo: f64, hi: f64) -> Self {
        Axis {
            range: Some((lo, hi)),
            ..self
        }
    }

    /// The same axis, its automatic range stretched to include zero.
    pub fn with_zero(self) -> Self {
        Axis { zero: true, ..self }
    }

    /// Where value `v` lies on the drawn (possibly logarithmic) axis.
    fn map(&self, v: f64) -> Option<f64> {
        let m = match self.scale {
            Scale::Log if v > 0.0 => v.log10(),
            Scale::Log => return None,
            _ => v,
        };
        (m.abs() < LIMIT).then_some(m)
    }

    /// The drawn range for the given drawn values.
    fn span(&self, values: &[f64]) -> (f64, f64) {
        if let Some((lo, hi)) = self
            .range
            .and_then(|(a, b)| Some((self.map(a)?, self.map(b)?)))
        {
            if lo < hi {
                return (lo, hi);
            }
        }
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
        let (lo, hi) = if self.zero {
            (lo.min(0.0), hi.max(0.0))
        } else {
            (lo, hi)
        };
        match self.scale {
            Scale::Log => (lo.floor(), hi.ceil().max(lo.floor() + 1.0)),
            // All values equal: zero gets 0…1 (not −1…1), others ±10 % around the value.
            _ if hi - lo < 1e-12 && lo.abs() < 1e-12 => (0.0, 1.0),
            _ if hi - lo < 1e-12 => (lo - 0.1 * lo.abs(), hi + 0.1 * hi.abs()),
            _ => {
                let pad = (hi - lo) * 0.05;
                (if self.zero && lo == 0.0 { lo } else { lo - pad }, hi + pad)
            }
        }
    }

    /// The tick label of drawn value `v` on drawn range `range`.
    fn tick(&self, v: f64, range: (f64, f64)) -> String {
        let whole = (v - v.round()).abs() < 1e-9;
        match self.scale {
            Scale::Linear => number_on(v, range),
            Scale::Log if whole => number(10f64.powi(v.round() as i32)),
            Scale::Delta if whole => delta_label(v.round() as i32),
            _ => String::new(),
        }
    }

    /// How many ticks to ask for over drawn range `(lo, hi)`.
    fn ticks(&self, (lo, hi): (f64, f64)) -> usize {
        match self.scale {
            Scale::Linear => 9,
            _ => ((hi - lo).round() as usize + 1).clamp(2, 10),
        }
    }
}

/// A named series of points in one colour.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Colour.
    pub colour: Colour,
    /// The (x, y) points, in drawing order.
    pub points: Vec<(f64, f64)>,
}

/// A line chart: several series, optional horizontal reference line, legend on the right.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// Size in pixels (width, height), legend included.
    pub size: (u32, u32),
    /// The x axis.
    pub x: Axis,
    /// The y axis.
    pub y: Axis,
    /// The series.
    pub series: Vec<Series>,
    /// A horizontal reference line at this y (e.g. zero).
    pub hline: Option<f64>,
    /// Whether to draw markers at the points as well as lines.
    pub markers: bool,
    /// Whether to draw the legend column.
    pub legend: bool,
}

/// One bubble of a scatter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bubble {
    /// Horizontal position.
    pub x: f64,
    /// Vertical position.
    pub y: f64,
    /// Relative area; the largest bubble gets the largest radius.
    pub weight: f64,
    /// Colour.
    pub colour: Colour,
}

/// A bubble scatter with the y = x diagonal.
#[derive(Debug, Clone, PartialEq)]
pub struct BubbleChart {
    /// Size in pixels (width, height), legend included.
    pub size: (u32, u32),
    /// The x axis.
    pub x: Axis,
    /// The y axis.
    pub y: Axis,
    /// The bubbles, drawn in order.
    pub bubbles: Vec<Bubble>,
    /// Legend entries (text, colour).
    pub legend: Vec<(String, Colour)>,
}

/// One bar of a horizontal bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Category name, written left of the bar.
    pub label: String,
    /// Length of the bar.
    pub value: f64,
    /// Text written at the end of the bar.
    pub text: String,
    /// Colour.
    pub colour: Colour,
    /// The half-width of a grey band drawn around zero on the bar's row, if any: how far
    /// from zero a value cannot be told from nothing (a model's own error).
    pub error: Option<f64>,
}

/// A horizontal bar chart, first bar on top, with a zero line.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// Width in pixels; the height follows from the number of bars.
    pub width: u32,
    /// The value axis.
    pub x: Axis,
    /// The bars.
    pub bars: Vec<Bar>,
}

/// A shaded band around a series: at each x, the range from `lo` to `hi`.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// Colour (drawn translucent).
    pub colour: Colour,
    /// The (x, lo, hi) points, in drawing order.
    pub points: Vec<(f64, f64, f64)>,
}

/// One bar of a Gantt chart: lane `lane` held over `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Lane index, 0 on top.
    pub lane: usize,
    /// Start on the x axis.
    pub start: f64,
    /// End on the x axis.
    pub end: f64,
    /// Which part of the bar's height it fills, from 0 (bottom) to 1 (top): `(0, 1)` for all.
    pub part: (f64, f64),
    /// Colour.
    pub colour: Colour,
}

/// A Gantt chart: one lane per row, bars coloured by holder, blank where the lane is idle, and
/// a thin strip of marks above each lane.
#[derive(Debug, Clone, PartialEq)]
pub struct Gantt {
    /// Width in pixels; the height follows from the number of lanes.
    pub width: u32,
    /// Height of one lane in pixels.
    pub lane_px: u32,
    /// The x axis (time); its range, when fixed, is the part drawn.
    pub x: Axis,
    /// Lane names, top to bottom.
    pub lanes: Vec<String>,
    /// The bars, each at least one pixel wide so short ones stay visible.
    pub bars: Vec<Span>,
    /// Marks drawn in the thin strip above their lane.
    pub marks: Vec<Span>,
    /// Legend entries (text, colour).
    pub legend: Vec<(String, Colour)>,
}

/// Lane geometry in lane units (lanes are one unit apart): bar bottom and top, mark strip
/// bottom and top, and the bar of a chart without marks.
const BAR: (f64, f64) = (-0.3, 0.22);
const BAR_ALONE: (f64, f64) = (-0.42, 0.42);
const MARK: (f64, f64) = (0.28, 0.4);
/// Background of a lane, so idle time reads as blank.
const LANE_BG: RGBColor = RGBColor(244, 244, 244);

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;
type Drawn = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// Draws a line chart.
pub fn line_chart(c: &LineChart) -> String {
    line_chart_with_bands(c, &[])
}

/// Draws a line chart with translucent bands under its lines.
pub fn line_chart_with_bands(c: &LineChart, bands: &[Band]) -> String {
    let bands: Vec<(Colour, Vec<(f64, f64)>)> = bands
        .iter()
        .map(|b| (b.colour, outline(&c.x, &c.y, &b.points)))
        .collect();
    let series: Vec<Vec<(f64, f64)>> = c
        .series
        .iter()
        .map(|s| mapped(&c.x, &c.y, &s.points))
        .collect();
    let xs: Vec<f64> = series.iter().flatten().map(|p| p.0).collect();
    let mut ys: Vec<f64> = series.iter().flatten().map(|p| p.1).collect();
    ys.extend(bands.iter().flat_map(|b| &b.1).map(|p| p.1));
    ys.extend(c.hline.and_then(|h| c.y.map(h)));
    let (xr, yr) = (c.x.span(&xs), c.y.span(&ys));
    let legend: Vec<(String, Colour)> = c
        .series
        .iter()
        .map(|s| (s.label.clone(), s.colour))
        .collect();
    render(c.size, |root| {
        let plot = with_legend(root, c.size.0, if c.legend { &legend } else { &[] })?;
        let mut chart = frame(&plot, &c.x, &c.y, xr, yr)?;
        for (i, points) in &bands {
            chart.draw_series([Polygon::new(points.clone(), colour(*i).mix(0.18).filled())])?;
        }
        if let Some(h) = c.hline.and_then(|h| c.y.map(h)) {
            chart.draw_series(LineSeries::new(
                [(xr.0, h), (xr.1, h)],
                colour(GREY).stroke_width(2),
            ))?;
        }
        for (s, points) in c.series.iter().zip(&series) {
            let style = colour(s.colour).stroke_width(2);
            chart.draw_series(LineSeries::new(points.iter().copied(), style))?;
            if c.markers {
                chart.draw_series(points.iter().map(|p| Circle::new(*p, 4, style.filled())))?;
            }
        }
        Ok(())
    })
}

/// Draws a bubble scatter with the y = x diagonal.
pub fn bubble_chart(c: &BubbleChart) -> String {
    let drawn: Vec<(&Bubble, (f64, f64))> = c
        .bubbles
        .iter()
        .filter_map(|b| Some((b, (c.x.map(b.x)?, c.y.map(b.y)?))))
        .collect();
    let xs: Vec<f64> = drawn.iter().map(|(_, p)| p.0).collect();
    let ys: Vec<f64> = drawn.iter().map(|(_, p)| p.1).collect();
    let (xr, yr) = (c.x.span(&xs), c.y.span(&ys));
    let top = drawn
        .iter()
        .map(|(b, _)| b.weight)
        .filter(|w| w.is_finite())
        .fold(0.0, f64::max);
    let radius = |w: f64| {
        let share = if top > 0.0 && w > 0.0 { w / top } else { 0.0 };
        (3.0 + 11.0 * share.sqrt()).round() as i32
    };
    render(c.size, |root| {
        let plot = with_legend(root, c.size.0, &c.legend)?;
        let mut chart = frame(&plot, &c.x, &c.y, xr, yr)?;
        let (lo, hi) = (xr.0.max(yr.0), xr.1.min(yr.1));
        chart.draw_series(LineSeries::new(
            [(lo, lo), (hi, hi)],
            colour(GREY).stroke_width(2),
        ))?;
        for (b, p) in &drawn {
            let (r, c) = (radius(b.weight), colour(b.colour));
            chart.draw_series([
                Circle::new(*p, r, c.mix(0.3).filled()),
                Circle::new(*p, r, c.stroke_width(1)),
            ])?;
        }
        Ok(())
    })
}

/// Draws a horizontal bar chart.
pub fn bar_chart(c: &BarChart) -> String {
    let n = c.bars.len().max(1);
    let height = 70 + 34 * n as u32;
    let bands = (c.bars.iter()).flat_map(|b| b.error.into_iter().flat_map(|e| [e.abs(), -e.abs()]));
    let values: Vec<f64> = (c.bars.iter().map(|b| b.value).chain(bands))
        .filter_map(|v| c.x.map(v))
        .collect();
    let (lo, hi) = c.x.clone().with_zero().span(&values);
    let room = (hi - lo) * 0.22;
    let xr = (
        if lo < 0.0 { lo - room } else { lo },
        if hi > 0.0 { hi + room } else { hi },
    );
    let yr = (-0.5, n as f64 - 0.5);
    let most = (f64::from(c.width) * SIDE_SHARE) as u32 / CHAR_W;
    let names: Vec<String> = c
        .bars
        .iter()
        .map(|b| shorten_middle(&b.label, most as usize))
        .collect();
    let longest = names.iter().map(|s| s.chars().count()).max().unwrap_or(4) as u32;
    let label_w = longest * CHAR_W + 16;
    let row = |v: f64| n as f64 - 1.0 - v;
    render((c.width, height), |root| {
        let mut chart = lane_frame(root, &c.x, xr, &names, label_w)?;
        for (i, b) in c.bars.iter().enumerate() {
            let (y, v) = (row(i as f64), c.x.map(b.value).unwrap_or(0.0));
            if let Some(e) = b.error.and_then(|e| c.x.map(e.abs())).filter(|e| *e > 0.0) {
                let band = colour(GREY).mix(0.3).filled();
                chart.draw_series([Rectangle::new([(-e, y - 0.45), (e, y + 0.45)], band)])?;
            }
            let style = colour(b.colour).mix(0.85).filled();
            chart.draw_series([Rectangle::new([(0.0, y - 0.32), (v, y + 0.32)], style)])?;
            let (side, dx) = if v < 0.0 {
                (HPos::Right, -6)
            } else {
                (HPos::Left, 6)
            };
            let text = TextStyle::from((FONT, TICK_PT)).pos(Pos::new(side, VPos::Center));
            chart.draw_series([
                EmptyElement::at((v, y)) + Text::new(b.text.clone(), (dx, 0), text)
            ])?;
        }
        chart.draw_series(LineSeries::new(
            [(0.0, yr.0), (0.0, yr.1)],
            colour(GREY).stroke_width(1),
        ))?;
        Ok(())
    })
}

/// Draws a Gantt chart.
pub fn gantt_chart(c: &Gantt) -> String {
    let n = c.lanes.len().max(1);
    let height = 70 + c.lane_px * n as u32;
    let ends = c.bars.iter().chain(&c.marks).flat_map(|b| [b.start, b.end]);
    let xs: Vec<f64> = ends.filter_map(|v| c.x.map(v)).collect();
    let xr = c.x.clone().with_zero().span(&xs);
    let names: Vec<String> = c.lanes.iter().map(|s| truncate(s, LANE_NAME_MAX)).collect();
    let longest = names.iter().map(|s| s.chars().count()).max().unwrap_or(4) as u32;
    let label_w = (longest * CHAR_W + 16).max(70);
    let row = |lane: usize| n.saturating_sub(lane + 1) as f64;
    let svg = render((c.width, height), |root| {
        let plot = with_legend(root, c.width, &c.legend)?;
        let mut chart = lane_frame(&plot, &c.x, xr, &names, label_w)?;
        let pixel = (xr.1 - xr.0) / f64::from(chart.plotting_area().dim_in_pixel().0.max(1));
        let rect = |s: &Span, (lo, hi): (f64, f64)| {
            let (a, b) = (s.start.max(xr.0), s.end.min(xr.1));
            let b = b.max(a + pixel).min(xr.1);
            let y = row(s.lane);
            let (bottom, top) = (lo + (hi - lo) * s.part.0, lo + (hi - lo) * s.part.1);
            Rectangle::new([(a, y + bottom), (b, y + top)], colour(s.colour).filled())
        };
        let bar = if c.marks.is_empty() { BAR_ALONE } else { BAR };
        let background = (0..c.lanes.len()).map(|i| {
            let y = row(i);
            Rectangle::new([(xr.0, y + bar.0), (xr.1, y + bar.1)], LANE_BG.filled())
        });
        chart.draw_series(background)?;
        let drawable = |s: &&Span| {
            let finite = c.x.map(s.start).is_some() && c.x.map(s.end).is_some();
            finite && s.lane < c.lanes.len() && s.start < xr.1 && s.end > xr.0
        };
        chart.draw_series(c.bars.iter().filter(drawable).map(|s| rect(s, bar)))?;
        chart.draw_series(c.marks.iter().filter(drawable).map(|s| rect(s, MARK)))?;
        Ok(())
    });
    with_lane_tooltips(svg, &c.lanes)
}

/// `svg` with each cut lane name holding its whole name as a tooltip (a `<title>`). Lane names
/// are written bottom lane first, so a name cut like another's takes the right one's tooltip.
fn with_lane_tooltips(mut svg: String, lanes: &[String]) -> String {
    for whole in lanes.iter().rev() {
        let cut = truncate(whole, LANE_NAME_MAX);
        if cut != *whole {
            let cut = xml_escape(&cut);
            // The label right after its tag's last attribute: not one titled already.
            let label = format!("\">\n{cut}\n</text>");
            let titled = format!("\"><title>{}</title>\n{cut}\n</text>", xml_escape(whole));
            svg = svg.replacen(&label, &titled, 1);
        }
    }
    svg
}

/// The right margin of a chart: wide enough for half the x axis's last tick label, which is
/// centred on the plot's right edge, so the label stays inside the chart.
fn right_margin(x: &Axis, xr: (f64, f64)) -> u32 {
    let last = x.tick(xr.1, xr).chars().count() as u32;
    MARGIN.max(last * CHAR_W / 2 + 2)
}

/// The outline of a band (lower edge forwards, upper edge back), non-drawable points dropped.
fn outline(x: &Axis, y: &Axis, points: &[(f64, f64, f64)]) -> Vec<(f64, f64)> {
    let drawn: Vec<(f64, f64, f64)> = points
        .iter()
        .filter_map(|&(a, lo, hi)| Some((x.map(a)?, y.map(lo)?, y.map(hi)?)))
        .collect();
    let lower = drawn.iter().map(|p| (p.0, p.1));
    let upper = drawn.iter().rev().map(|p| (p.0, p.2));
    lower.chain(upper).collect()
}

/// The points mapped onto the drawn axes, non-drawable ones dropped.
fn mapped(x: &Axis, y: &Axis, points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    points
        .iter()
        .filter_map(|&(a, b)| Some((x.map(a)?, y.map(b)?)))
        .collect()
}

/// Renders into a string; a failure (none expected with a string sink) gives an empty SVG.
fn render(size: (u32, u32), draw: impl FnOnce(&Area) -> Drawn) -> String {
    let mut out = String::new();
    let ok = {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE)
            .and_then(|_| draw(&root))
            .and_then(|_| root.present())
            .is_ok()
    };
    if ok {
        out
    } else {
        format!(
            r#"<svg width="{}" height="{}" xmlns="http://www.w3.org/2000/svg"/>"#,
            size.0, size.1
        )
    }
}

/// Splits off a legend column on the right when there are entries, draws it, and returns the
/// area left for the plot.
fn with_legend<'a>(
    root: &Area<'a>,
    width: u32,
    entries: &[(String, Colour)],
) -> Result<Area<'a>, DrawingAreaErrorKind<std::io::Error>> {
    if entries.is_empty() {
        return Ok(root.clone());
    }
    let widest = (f64::from(width) * SIDE_SHARE) as u32;
    let longest = entries.iter().map(|(l, _)| l.chars().count()).max();
    let side_w = (longest.unwrap_or(0) as u32 * CHAR_W + 48)
        .max(LEGEND_MIN_W)
        .min(widest);
    let (plot, side) = root.split_horizontally(width.saturating_sub(side_w));
    let text = TextStyle::from((FONT, TICK_PT)).pos(Pos::new(HPos::Left, VPos::Center));
    // Labels too long for the column wrap onto further lines rather than being cut, so
    // names that differ only at the end (sdrf:delta=0.9999 and 0.999999) stay apart.
    let per_line = (side_w.saturating_sub(48) / CHAR_W).max(8) as usize;
    let lines: Vec<Vec<String>> = entries.iter().map(|(l, _)| wrap(l, per_line)).collect();
    let heights: Vec<i32> = lines.iter().map(|l| 4 + 20 * l.len() as i32).collect();
    let room = (side.dim_in_pixel().1 as i32).saturating_sub(12);
    let used = |k: usize| heights[..k].iter().sum::<i32>();
    // Every entry when all fit; otherwise as many as leave a row saying how many are left out.
    let shown = if used(entries.len()) <= room {
        entries.len()
    } else {
        (0..entries.len())
            .rev()
            .find(|k| used(*k) + 24 <= room)
            .unwrap_or(0)
    };
    let top = |i: usize| 24 + used(i);
    for (i, (_, c)) in entries.iter().take(shown).enumerate() {
        let line = colour(*c).stroke_width(3);
        side.draw(&PathElement::new(vec![(6, top(i)), (30, top(i))], line))?;
        for (k, text_line) in lines[i].iter().enumerate() {
            let at = (38, top(i) + 20 * k as i32);
            side.draw(&Text::new(text_line.clone(), at, text.clone()))?;
        }
    }
    if shown < entries.len() {
        let more = format!("… and {} more", entries.len() - shown);
        side.draw(&Text::new(more, (6, top(shown)), text))?;
    }
    Ok(plot)
}

/// Builds the axes of a chart with one horizontal lane per name, the first on top, over the
/// drawn x range `xr`; lanes sit at y = n − 1 … 0.
fn lane_frame<'a, 'b>(
    area: &'a Area<'b>,
    x: &'a Axis,
    xr: (f64, f64),
    names: &[String],
    label_w: u32,
) -> Result<Chart<'a, 'b>, DrawingAreaErrorKind<std::io::Error>> {
    let n = names.len().max(1);
    let name_of = |v: &f64| {
        let i = n as f64 - 1.0 - v.round();
        let whole = (v - v.round()).abs() < 1e-9 && i >= 0.0;
        let name = whole.then(|| names.get(i as usize).cloned());
        name.flatten().unwrap_or_default()
    };
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .margin_right(right_margin(x, xr))
        .x_label_area_size(50)
        .y_label_area_size(label_w)
        .build_cartesian_2d(xr.0..xr.1, -0.5..n as f64 - 0.5)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&name_of)
        .x_labels(x.ticks(xr))
        .x_label_formatter(&|v| x.tick(*v, xr))
        .x_desc(x.label.as_str())
        .label_style((FONT, TICK_PT))
        .axis_desc_style((FONT, DESC_PT))
        .bold_line_style(RGBColor(225, 225, 225))
        .max_light_lines(0)
        .draw()?;
    Ok(chart)
}

/// Builds the axes, grid and labels of a chart over drawn ranges `xr`, `yr`.
fn frame<'a, 'b>(
    area: &'a Area<'b>,
    x: &'a Axis,
    y: &'a Axis,
    xr: (f64, f64),
    yr: (f64, f64),
) -> Result<Chart<'a, 'b>, DrawingAreaErrorKind<std::io::Error>> {
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .margin_right(right_margin(x, xr))
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)?;
    chart
        .configure_mesh()
        .x_labels(x.ticks(xr))
        .y_labels(y.ticks(yr))
        .x_label_formatter(&|v| x.tick(*v, xr))
        .y_label_formatter(&|v| y.tick(*v, yr))
        .x_desc(x.label.as_str())
        .y_desc(y.label.as_str())
        .label_style((FONT, TICK_PT))
        .axis_desc_style((FONT, DESC_PT))
        .bold_line_style(RGBColor(225, 225, 225))
        .max_light_lines(0)
        .draw()?;
    Ok(chart)
}

#[cfg(test)]
mod tests;
