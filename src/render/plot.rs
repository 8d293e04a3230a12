//! x–y line plots: several series, each drawn as a line through its points
//! with a marker at each point and, optionally, error bars (mean ± standard
//! deviation); axes with round ("nice") ticks and tick labels, axis labels,
//! a title and a legend. This is what `sweep.png` and `calibrate.png` are
//! made of, and the documentation's figures.
//!
//! The ticks and the layout are ours ([`nice_ticks`], [`plot_layout`]); the
//! drawing is `plotters` (bitmap backend), with anti-aliased text from the
//! DejaVu Sans font embedded in the binary (`assets/fonts/`, registered with
//! plotters' `ab_glyph` font backend: no system font is looked up, so a
//! plot looks the same on every machine). Every text is measured with that
//! font before it is placed, and the margins are made to hold it: a title,
//! label or legend entry too long for the picture is set smaller (down to
//! [`MIN_FONT_PX`]) and only then shortened with "…", so no text is cut by
//! the picture's edge ([`PlotLayout::texts`] lists where each went).
//!
//! Points with a non-finite x or y are left out (the line breaks there), so
//! a failed run in a sweep shows as a gap instead of spoiling the plot.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontFamily, FontStyle, FontTransform};

use super::colormap::series_colour;
use super::image::{Image, Rgb};
use super::{pow10, RenderError};

/// The font every plot is drawn with (DejaVu Sans; its licence is in
/// `assets/fonts/LICENSE`).
static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// The smallest font size (pixels) a text is shrunk to before it is
/// shortened.
pub const MIN_FONT_PX: f64 = 10.0;

/// Registers [`FONT`] with plotters as its sans-serif family (once).
fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid font (checked by the tests); a failure
        // would only leave plotters without text.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Width and height in pixels of `text` set at `px` pixels.
pub fn text_size(text: &str, px: f64) -> (u32, u32) {
    register_font();
    if text.is_empty() {
        return (0, 0);
    }
    FontDesc::new(FontFamily::SansSerif, px, FontStyle::Normal)
        .box_size(text)
        .unwrap_or((0, 0))
}

/// `text` fitted into `max_w` pixels: the largest size from `px` down to
/// [`MIN_FONT_PX`] at which it fits, else shortened with "…" at that
/// size. Returns the text and its size.
pub fn fit_text(text: &str, px: f64, max_w: u32) -> (String, f64) {
    let mut size = px.max(MIN_FONT_PX);
    while text_size(text, size).0 > max_w && size > MIN_FONT_PX {
        size = (size * 0.9).max(MIN_FONT_PX);
    }
    if text_size(text, size).0 <= max_w {
        return (text.to_string(), size);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut n = chars.len();
    while n > 0 {
        n -= 1;
        let t: String = chars[..n].iter().collect::<String>() + "…";
        if text_size(&t, size).0 <= max_w {
            return (t, size);
        }
    }
    (String::new(), size)
}

/// One point of a series: `y` at `x`, with an optional error `err` drawn
/// as a bar from `y − err` to `y + err`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeriesPoint {
    /// Abscissa.
    pub x: f64,
    /// Ordinate (e.g. a mean).
    pub y: f64,
    /// Half-length of the error bar (e.g. a standard deviation); `None` or
    /// a non-finite or negative value: no bar.
    pub err: Option<f64>,
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SeriesStyle {
    /// The points joined by lines in their order, a filled disc at each.
    #[default]
    Line,
    /// An open ring around each point, no lines: marks laid over another
    /// series' points (runs that did not settle, say).
    Ring,
    /// A cross over each point, no lines (a second kind of mark).
    Cross,
}

/// A named list of points, drawn in the given order.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend text (empty: not in the legend).
    pub label: String,
    /// The points, joined by lines in this order (with [`SeriesStyle::Line`]).
    pub points: Vec<SeriesPoint>,
    /// How the points are drawn.
    pub style: SeriesStyle,
}

impl Series {
    /// A series of `(x, y)` points without error bars.
    pub fn new(label: impl Into<String>, points: &[(f64, f64)]) -> Series {
        Series {
            label: label.into(),
            points: points
                .iter()
                .map(|&(x, y)| SeriesPoint { x, y, err: None })
                .collect(),
            style: SeriesStyle::Line,
        }
    }

    /// Marks of `style` (rings or crosses, no lines) at `(x, y)` points.
    pub fn marks(label: impl Into<String>, points: &[(f64, f64)], style: SeriesStyle) -> Series {
        Series {
            style,
            ..Series::new(label, points)
        }
    }

    /// A series of `(x, y, err)` points with error bars `y ± err`.
    pub fn with_errors(label: impl Into<String>, points: &[(f64, f64, f64)]) -> Series {
        Series {
            label: label.into(),
            points: points
                .iter()
                .map(|&(x, y, e)| SeriesPoint { x, y, err: Some(e) })
                .collect(),
            style: SeriesStyle::Line,
        }
    }
}

/// Size and labels of a plot.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotOptions {
    /// Image width in pixels (at least 200).
    pub width: u32,
    /// Image height in pixels (at least 150).
    pub height: u32,
    /// Title above the plot.
    pub title: String,
    /// Label of the x axis (with unit).
    pub x_label: String,
    /// Label of the y axis (with unit).
    pub y_label: String,
    /// A logarithmic x axis: the series' x values are log₁₀ of the
    /// quantity; ticks sit at whole decades labelled 10ⁿ, with the 2…9
    /// multiples as fainter grid lines.
    pub log_x: bool,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            width: 900,
            height: 600,
            title: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            log_x: false,
        }
    }
}

/// Ticks at the whole decades covering log₁₀ values `lo…hi` (every second
/// decade beyond twelve).
pub fn decade_ticks(lo: f64, hi: f64) -> Ticks {
    let (mut a, mut b) = if lo.is_finite() && hi.is_finite() {
        (lo.min(hi).floor(), lo.max(hi).ceil())
    } else {
        (0.0, 1.0)
    };
    if b <= a {
        a -= 1.0;
        b += 1.0;
    }
    let step = if b - a > 12.0 { 2.0 } else { 1.0 };
    let a = (a / step).floor() * step;
    let n = ((b - a) / step).ceil() as i64;
    Ticks {
        values: (0..=n).map(|k| a + k as f64 * step).collect(),
        step,
        exp: 0,
    }
}

/// `10ⁿ` with a superscript exponent, for a tick at log₁₀ value `v`.
pub fn decade_label(v: f64) -> String {
    const SUP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let n = v.round() as i64;
    let mut s = String::from("10");
    if n < 0 {
        s.push('⁻');
    }
    for d in n.unsigned_abs().to_string().chars() {
        s.push(SUP[d.to_digit(10).unwrap_or(0) as usize]);
    }
    s
}

/// Round tick values covering a range, and their common spacing.
#[derive(Clone, Debug, PartialEq)]
pub struct Ticks {
    /// The tick values, increasing; the first ≤ the range's low end, the
    /// last ≥ its high end.
    pub values: Vec<f64>,
    /// The spacing: 1, 2 or 5 × a power of ten.
    pub step: f64,
    /// Decimal exponent of `step` (step = m × 10^exp, m ∈ {1, 2, 5}).
    exp: i32,
}

impl Ticks {
    /// The text of tick `v`: as many decimals as the step needs (`0.4` for
    /// a step of 0.2, `150` for a step of 50), or exponent notation
    /// (`2e-7`) for very small steps and very large values.
    pub fn label(&self, v: f64) -> String {
        let v = if v == 0.0 { 0.0 } else { v };
        let big = self.values.iter().any(|t| t.abs() >= 1e6);
        if self.exp < -5 || big {
            return format!("{v:e}");
        }
        let decimals = (-self.exp).max(0) as usize;
        format!("{v:.decimals$}")
    }
}

/// Round ticks (1, 2 or 5 × a power of ten apart) covering `lo…hi` with
/// about `target` ticks (at least 2). The first tick is at or below `lo`,
/// the last at or above `hi`, and each value is the double nearest to its
/// decimal text (`0.6`, not `0.6000000000000001`).
///
/// A zero-width range (`lo == hi`) is widened to ±10 % around the value
/// (±1 around 0); non-finite ends give the ticks of 0…1; `lo > hi` are
/// swapped.
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> Ticks {
    let (mut lo, mut hi) = if lo.is_finite() && hi.is_finite() {
        (lo.min(hi), lo.max(hi))
    } else {
        (0.0, 1.0)
    };
    if hi - lo <= f64::EPSILON * lo.abs().max(hi.abs()) || hi == lo {
        let mid = lo / 2.0 + hi / 2.0;
        let d = if mid == 0.0 { 1.0 } else { 0.1 * mid.abs() };
        lo = mid - d;
        hi = mid + d;
    }
    if !(hi - lo).is_finite() {
        lo /= 4.0;
        hi /= 4.0;
    }
    let raw = (hi - lo) / (target.max(2) - 1) as f64;
    let mut exp = raw.log10().floor() as i32;
    let m = raw / pow10(exp);
    let mant: i64 = if m <= 1.0 {
        1
    } else if m <= 2.0 {
        2
    } else if m <= 5.0 {
        5
    } else {
        exp += 1;
        1
    };
    let step = mant as f64 * pow10(exp);
    let k_lo = (lo / step + 1e-9).floor() as i64;
    let k_hi = (hi / step - 1e-9).ceil() as i64;
    let value = |k: i64| {
        let n = (k * mant) as f64;
        if exp >= 0 {
            n * pow10(exp)
        } else {
            n / pow10(-exp)
        }
    };
    Ticks {
        values: (k_lo..=k_hi).map(value).collect(),
        step,
        exp,
    }
}

/// A linear map from data values to pixel coordinates along one axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AxisMap {
    /// The data value at `px_lo`.
    pub lo: f64,
    /// The data value at `px_hi`.
    pub hi: f64,
    /// Pixel coordinate of `lo`.
    pub px_lo: f64,
    /// Pixel coordinate of `hi`.
    pub px_hi: f64,
}

impl AxisMap {
    /// The pixel coordinate of data value `v`.
    pub fn to_px(&self, v: f64) -> f64 {
        self.px_lo + (v - self.lo) / (self.hi - self.lo) * (self.px_hi - self.px_lo)
    }
}

/// `text` fitted into a line of `len` pixels less `pad` at each end and
/// centred on `centre` along it as far as the ends allow: the text, its
/// size, its width and height, and where along the line it starts.
fn fit_centred(
    text: &str,
    px: f64,
    centre: i32,
    pad: i32,
    len: i32,
) -> (String, f64, u32, u32, i32) {
    let (t, px) = fit_text(text, px, (len - 2 * pad).max(1) as u32);
    let (tw, th) = text_size(&t, px);
    let half = tw as i32 / 2;
    let c = centre.clamp(pad + half, (len - pad - half).max(pad + half));
    (t, px, tw, th, c - half)
}

/// Where a text of a plot went: its content, font size, and box (top-left
/// corner and size, in image pixels; a vertical text's box is upright).
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedText {
    /// The text as drawn (shortened with "…" only when even the smallest
    /// size could not hold it).
    pub text: String,
    /// Font size (pixels).
    pub px: f64,
    /// Left edge of the box.
    pub x: i32,
    /// Top edge of the box.
    pub y: i32,
    /// Box width.
    pub w: u32,
    /// Box height.
    pub h: u32,
    /// Drawn rotated a quarter turn (the y axis label).
    pub vertical: bool,
}

/// Where a plot's parts go: the axis maps (x: left to right, y: bottom to
/// top, in image pixels), the ticks, every text and the legend.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotLayout {
    /// Data x → image column.
    pub x: AxisMap,
    /// Data y → image row (rows grow downwards, so `px_lo > px_hi`).
    pub y: AxisMap,
    /// Ticks of the x axis.
    pub x_ticks: Ticks,
    /// Ticks of the y axis.
    pub y_ticks: Ticks,
    /// Whether x is a log₁₀ axis ([`PlotOptions::log_x`]).
    pub log_x: bool,
    /// The body font size (pixels).
    pub font_px: f64,
    /// Every text: title, axis labels, tick labels, legend entries.
    pub texts: Vec<PlacedText>,
    /// The legend, when any series has a label.
    pub legend: Option<Legend>,
}

/// The legend's box and rows (its texts are in [`PlotLayout::texts`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Legend {
    /// The box: left, top, width, height (pixels).
    pub rect: (i32, i32, u32, u32),
    /// One row per labelled series: its index and the row's centre y.
    pub rows: Vec<(usize, i32)>,
}

/// The finite data extent of all series: x of the points, y ± err.
fn extent(series: &[Series]) -> Option<(f64, f64, f64, f64)> {
    let mut ext: Option<(f64, f64, f64, f64)> = None;
    for p in series.iter().flat_map(|s| &s.points) {
        if !(p.x.is_finite() && p.y.is_finite()) {
            continue;
        }
        let e = bar(p).unwrap_or(0.0);
        let (ylo, yhi) = (p.y - e, p.y + e);
        ext = Some(match ext {
            None => (p.x, p.x, ylo, yhi),
            Some((a, b, c, d)) => (a.min(p.x), b.max(p.x), c.min(ylo), d.max(yhi)),
        });
    }
    ext
}

/// The error-bar half-length of a point, if it has a usable one.
fn bar(p: &SeriesPoint) -> Option<f64> {
    p.err.filter(|e| e.is_finite() && *e > 0.0)
}

fn ends(t: &Ticks) -> (f64, f64) {
    match (t.values.first(), t.values.last()) {
        (Some(&a), Some(&b)) if b > a => (a, b),
        _ => (0.0, 1.0),
    }
}

/// The layout of a plot of `series`: axis ranges from the finite data
/// (error bars included) extended to round ticks; margins that hold the
/// measured tick labels, axis labels and title; the legend in the corner
/// of the plot area that hides the least of the data (top right on a tie).
///
/// Errors: [`RenderError::Invalid`] when the image is smaller than
/// 200 × 150 pixels.
pub fn plot_layout(series: &[Series], options: &PlotOptions) -> Result<PlotLayout, RenderError> {
    if options.width < 200 || options.height < 150 {
        return Err(RenderError::Invalid(format!(
            "a plot must be at least 200×150 pixels (asked for {}×{})",
            options.width, options.height
        )));
    }
    let (x0, x1, y0, y1) = extent(series).unwrap_or((0.0, 1.0, 0.0, 1.0));
    let (w, h) = (options.width as i32, options.height as i32);
    let f = (f64::from(options.height.min(options.width * 2 / 3)) / 30.0).clamp(MIN_FONT_PX, 28.0);
    let fi = f.round() as i32;
    let pad = fi / 2 + 2;
    let tick = (fi / 3).max(3);
    let x_ticks = if options.log_x {
        decade_ticks(x0, x1)
    } else {
        nice_ticks(x0, x1, 6)
    };
    let x_text = |v: f64| {
        if options.log_x {
            decade_label(v)
        } else {
            x_ticks.label(v)
        }
    };
    let y_ticks = nice_ticks(y0, y1, 6);
    let size = |t: &str| {
        let (a, b) = text_size(t, f);
        (a as i32, b as i32)
    };
    let line_h = size("0Ag(°)").1.max(fi);
    let ylab_w = y_ticks
        .values
        .iter()
        .map(|&v| size(&y_ticks.label(v)).0)
        .max()
        .unwrap_or(0);
    let first_x = x_ticks
        .values
        .first()
        .map(|&v| size(&x_ticks.label(v)).0)
        .unwrap_or(0);
    let last_x = x_ticks
        .values
        .last()
        .map(|&v| size(&x_ticks.label(v)).0)
        .unwrap_or(0);
    let mut texts = Vec::new();

    // Title at the top, centred, fitted to the width.
    let mut top = pad;
    if !options.title.is_empty() {
        let (t, px) = fit_text(&options.title, f * 1.15, (w - 2 * pad) as u32);
        let (tw, th) = text_size(&t, px);
        texts.push(PlacedText {
            text: t,
            px,
            x: (w - tw as i32) / 2,
            y: top,
            w: tw,
            h: th,
            vertical: false,
        });
        top += th as i32 + pad;
    } else {
        top += line_h / 2;
    }
    let has_ylabel = !options.y_label.is_empty();
    let has_xlabel = !options.x_label.is_empty();
    let left = (pad + if has_ylabel { line_h + pad } else { 0 } + ylab_w + pad / 2 + tick)
        .max(pad + first_x / 2);
    let right = w - pad - (last_x / 2).max(pad);
    let bottom = h - pad - if has_xlabel { line_h + pad / 2 } else { 0 } - line_h - pad / 2 - tick;
    let (right, bottom) = (right.max(left + 10), bottom.max(top + 10));
    let (xlo, xhi) = ends(&x_ticks);
    let (ylo, yhi) = ends(&y_ticks);
    let lay_x = AxisMap {
        lo: xlo,
        hi: xhi,
        px_lo: f64::from(left),
        px_hi: f64::from(right),
    };
    let lay_y = AxisMap {
        lo: ylo,
        hi: yhi,
        px_lo: f64::from(bottom),
        px_hi: f64::from(top),
    };

    // Tick labels.
    for &v in &x_ticks.values {
        let t = x_text(v);
        let (tw, th) = size(&t);
        let cx = lay_x.to_px(v).round() as i32;
        texts.push(PlacedText {
            text: t,
            px: f,
            x: cx - tw / 2,
            y: bottom + tick + pad / 2,
            w: tw as u32,
            h: th as u32,
            vertical: false,
        });
    }
    for &v in &y_ticks.values {
        let t = y_ticks.label(v);
        let (tw, th) = size(&t);
        let cy = lay_y.to_px(v).round() as i32;
        texts.push(PlacedText {
            text: t,
            px: f,
            x: left - tick - pad / 2 - tw,
            y: cy - th / 2,
            w: tw as u32,
            h: th as u32,
            vertical: false,
        });
    }
    // Axis labels.
    if has_xlabel {
        let (text, px, tw, th, x) = fit_centred(&options.x_label, f, (left + right) / 2, pad, w);
        texts.push(PlacedText {
            text,
            px,
            x,
            y: h - pad - th as i32,
            w: tw,
            h: th,
            vertical: false,
        });
    }
    if has_ylabel {
        // Upright box of the rotated text: th wide, tw tall.
        let (text, px, tw, th, y) = fit_centred(&options.y_label, f, (top + bottom) / 2, pad, h);
        texts.push(PlacedText {
            text,
            px,
            x: pad,
            y,
            w: th,
            h: tw,
            vertical: true,
        });
    }

    // The legend: fitted to two thirds of the plot area's width.
    let entries: Vec<(usize, &str)> = series
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.label.is_empty())
        .map(|(k, s)| (k, s.label.as_str()))
        .collect();
    let mut legend = None;
    if !entries.is_empty() {
        let swatch = 2 * fi;
        let max_text = ((right - left) * 2 / 3 - swatch - 3 * pad).max(fi) as u32;
        // One size for all entries: the smallest any entry needs.
        let start = (f * 0.9).max(MIN_FONT_PX);
        let px = entries
            .iter()
            .map(|(_, l)| fit_text(l, start, max_text).1)
            .fold(start, f64::min);
        let fitted: Vec<(String, (u32, u32))> = entries
            .iter()
            .map(|(_, l)| {
                let (t, _) = fit_text(l, px, max_text);
                let s = text_size(&t, px);
                (t, s)
            })
            .collect();
        let text_w = fitted.iter().map(|(_, s)| s.0 as i32).max().unwrap_or(0);
        let row_h = (text_size("0Ag", px).1 as i32).max(fi) + pad / 2;
        let box_w = pad + swatch + pad + text_w + pad;
        let box_h = pad / 2 + row_h * entries.len() as i32 + pad / 2;
        // The corner whose box covers the least of the data (top right
        // on a tie), so that the legend hides no point if it can help it.
        let (xr, xl) = (right - pad / 2 - box_w, left + pad / 2);
        let (yt, yb) = (top + pad / 2, bottom - pad / 2 - box_h);
        let corners = [(xr, yt), (xl, yt), (xr, yb), (xl, yb)];
        // A marker (radius as drawn) reaches past its point.
        let m = marker_radius(f) + 2;
        let (bx, by) = corners
            .into_iter()
            .min_by_key(|&(x, y)| {
                covered(
                    series,
                    &lay_x,
                    &lay_y,
                    (x - m, y - m, box_w + 2 * m, box_h + 2 * m),
                )
            })
            .unwrap_or(corners[0]);
        let mut rows = Vec::new();
        for (row, ((k, _), (t, s))) in entries.iter().zip(fitted).enumerate() {
            let cy = by + pad / 2 + row as i32 * row_h + row_h / 2;
            rows.push((*k, cy));
            texts.push(PlacedText {
                text: t,
                px,
                x: bx + pad + swatch + pad,
                y: cy - s.1 as i32 / 2,
                w: s.0,
                h: s.1,
                vertical: false,
            });
        }
        legend = Some(Legend {
            rect: (bx, by, box_w as u32, box_h as u32),
            rows,
        });
    }
    Ok(PlotLayout {
        x: lay_x,
        y: lay_y,
        x_ticks,
        y_ticks,
        log_x: options.log_x,
        font_px: f,
        texts,
        legend,
    })
}

/// The radius of a point's marker (and half the width of an error bar's
/// caps) at body font size `font_px`, in pixels.
fn marker_radius(font_px: f64) -> i32 {
    ((font_px / 4.0).round() as i32).max(4)
}

/// How much of the drawn data a box (left, top, width, height in pixels)
/// covers: its points, the ends of their error bars, and points sampled
/// along the lines between them and along the bars.
fn covered(
    series: &[Series],
    x: &AxisMap,
    y: &AxisMap,
    (bx, by, bw, bh): (i32, i32, i32, i32),
) -> usize {
    const SAMPLES: usize = 16;
    let inside = |dx: f64, dy: f64| {
        let (px, py) = (x.to_px(dx), y.to_px(dy));
        px >= f64::from(bx)
            && px <= f64::from(bx + bw)
            && py >= f64::from(by)
            && py <= f64::from(by + bh)
    };
    let mut n = 0;
    for s in series {
        let pts: Vec<&SeriesPoint> = s
            .points
            .iter()
            .filter(|p| p.x.is_finite() && p.y.is_finite())
            .collect();
        for p in &pts {
            // A point counts for more than a sample of a line.
            n += SAMPLES * usize::from(inside(p.x, p.y));
            if let Some(e) = bar(p) {
                n += (0..=SAMPLES)
                    .filter(|&k| inside(p.x, p.y - e + 2.0 * e * k as f64 / SAMPLES as f64))
                    .count();
            }
        }
        for w in pts.windows(2) {
            n += (1..SAMPLES)
                .filter(|&k| {
                    let t = k as f64 / SAMPLES as f64;
                    inside(
                        w[0].x + t * (w[1].x - w[0].x),
                        w[0].y + t * (w[1].y - w[0].y),
                    )
                })
                .count();
        }
    }
    n
}

fn colour(c: Rgb) -> RGBColor {
    RGBColor(c.0[0], c.0[1], c.0[2])
}

fn draw_err<E: std::fmt::Debug>(e: E) -> RenderError {
    RenderError::Invalid(format!("plot drawing failed: {e:?}"))
}

/// Draws `series` as an x–y line plot (see the [module docs](self)).
/// Series colours follow [`colormap::PALETTE`](super::colormap::PALETTE) in
/// order. With no finite point at all, the axes run 0…1 and "no data" is
/// written in the middle.
///
/// Errors: as [`plot_layout`].
pub fn plot_lines(series: &[Series], options: &PlotOptions) -> Result<Image, RenderError> {
    let lay = plot_layout(series, options)?;
    let (w, h) = (options.width, options.height);
    let mut buf = vec![255u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw_plot(&root, series, &lay).map_err(draw_err)?;
        root.present().map_err(draw_err)?;
    }
    Image::from_rgb(w, h, buf)
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;

/// One point's marker: a filled disc of radius `mr` for a line series, an
/// open ring of twice that radius, or a cross as wide as the ring.
fn draw_marker(
    root: &Area<'_>,
    (x, y): (i32, i32),
    style: SeriesStyle,
    mr: i32,
    c: RGBColor,
    pen: ShapeStyle,
) -> Result<(), DrawingAreaErrorKind<<BitMapBackend<'static> as DrawingBackend>::ErrorType>> {
    match style {
        SeriesStyle::Line => root.draw(&Circle::new((x, y), mr, c.filled())),
        SeriesStyle::Ring => root.draw(&Circle::new((x, y), 2 * mr, pen)),
        SeriesStyle::Cross => {
            let d = 2 * mr;
            root.draw(&PathElement::new(vec![(x - d, y - d), (x + d, y + d)], pen))?;
            root.draw(&PathElement::new(vec![(x - d, y + d), (x + d, y - d)], pen))
        }
    }
}

fn draw_plot(
    root: &Area<'_>,
    series: &[Series],
    lay: &PlotLayout,
) -> Result<(), DrawingAreaErrorKind<<BitMapBackend<'static> as DrawingBackend>::ErrorType>> {
    let ink = colour(Rgb::INK);
    let grid = RGBColor(230, 230, 230);
    let (left, right) = (lay.x.px_lo.round() as i32, lay.x.px_hi.round() as i32);
    let (top, bottom) = (lay.y.px_hi.round() as i32, lay.y.px_lo.round() as i32);
    let fi = lay.font_px.round() as i32;
    let tick = (fi / 3).max(3);
    let line = |c: RGBColor, wd: u32| ShapeStyle {
        color: c.to_rgba(),
        filled: false,
        stroke_width: wd,
    };

    // Grid and ticks; on a log axis, fainter lines at 2…9 × each decade.
    if lay.log_x {
        for w in lay.x_ticks.values.windows(2) {
            if w[1] - w[0] != 1.0 {
                continue;
            }
            for m in 2..10 {
                let x = lay.x.to_px(w[0] + f64::from(m).log10()).round() as i32;
                root.draw(&PathElement::new(
                    vec![(x, top), (x, bottom)],
                    line(RGBColor(243, 243, 243), 1),
                ))?;
            }
        }
    }
    for &v in &lay.x_ticks.values {
        let x = lay.x.to_px(v).round() as i32;
        root.draw(&PathElement::new(
            vec![(x, top), (x, bottom)],
            line(grid, 1),
        ))?;
        root.draw(&PathElement::new(
            vec![(x, bottom), (x, bottom + tick)],
            line(ink, 1),
        ))?;
    }
    for &v in &lay.y_ticks.values {
        let y = lay.y.to_px(v).round() as i32;
        root.draw(&PathElement::new(
            vec![(left, y), (right, y)],
            line(grid, 1),
        ))?;
        root.draw(&PathElement::new(
            vec![(left - tick, y), (left, y)],
            line(ink, 1),
        ))?;
    }
    root.draw(&Rectangle::new(
        [(left, top), (right, bottom)],
        line(ink, 1),
    ))?;
    if extent(series).is_none() {
        let style = TextStyle::from(("sans-serif", lay.font_px).into_font())
            .color(&ink)
            .pos(Pos::new(HPos::Center, VPos::Center));
        root.draw(&Text::new(
            "no data",
            ((left + right) / 2, (top + bottom) / 2),
            style,
        ))?;
    }

    // Series: error bars, lines, markers.
    let lw = ((lay.font_px / 8.0).round() as u32).max(2);
    let mr = marker_radius(lay.font_px);
    let ok = |p: &SeriesPoint| p.x.is_finite() && p.y.is_finite();
    for (k, s) in series.iter().enumerate() {
        let c = colour(series_colour(k));
        let px = |p: &SeriesPoint| {
            (
                lay.x.to_px(p.x).round() as i32,
                lay.y.to_px(p.y).round() as i32,
            )
        };
        for p in s.points.iter().filter(|p| ok(p)) {
            if let Some(e) = bar(p) {
                let x = lay.x.to_px(p.x).round() as i32;
                let ya = lay.y.to_px(p.y - e).round() as i32;
                let yb = lay.y.to_px(p.y + e).round() as i32;
                root.draw(&PathElement::new(vec![(x, ya), (x, yb)], line(c, lw)))?;
                root.draw(&PathElement::new(
                    vec![(x - mr, ya), (x + mr, ya)],
                    line(c, lw),
                ))?;
                root.draw(&PathElement::new(
                    vec![(x - mr, yb), (x + mr, yb)],
                    line(c, lw),
                ))?;
            }
        }
        if s.style == SeriesStyle::Line {
            for pair in s.points.windows(2) {
                if ok(&pair[0]) && ok(&pair[1]) {
                    root.draw(&PathElement::new(
                        vec![px(&pair[0]), px(&pair[1])],
                        line(c, lw),
                    ))?;
                }
            }
        }
        for p in s.points.iter().filter(|p| ok(p)) {
            draw_marker(root, px(p), s.style, mr, c, line(c, lw))?;
        }
    }

    // The legend box and its swatches (its texts are in `texts`).
    if let Some(Legend { rect, rows }) = &lay.legend {
        let (bx, by, bw, bh) = *rect;
        let (x1, y1) = (bx + bw as i32, by + bh as i32);
        root.draw(&Rectangle::new([(bx, by), (x1, y1)], WHITE.filled()))?;
        root.draw(&Rectangle::new(
            [(bx, by), (x1, y1)],
            line(colour(Rgb::LIGHT_GREY), 1),
        ))?;
        let pad = fi / 2 + 2;
        for &(k, cy) in rows {
            let c = colour(series_colour(k));
            let x0 = bx + pad;
            let style = series[k].style;
            if style == SeriesStyle::Line {
                root.draw(&PathElement::new(
                    vec![(x0, cy), (x0 + 2 * fi, cy)],
                    line(c, lw),
                ))?;
            }
            draw_marker(root, (x0 + fi, cy), style, mr, c, line(c, lw))?;
        }
    }

    // Every text, at its measured place.
    for t in &lay.texts {
        let font = FontDesc::new(FontFamily::SansSerif, t.px, FontStyle::Normal);
        if t.vertical {
            // Rotated a quarter turn anticlockwise, reading upwards: drawn
            // from the bottom-left of its upright box.
            let style = TextStyle::from(font.transform(FontTransform::Rotate270)).color(&ink);
            root.draw(&Text::new(t.text.clone(), (t.x, t.y + t.h as i32), style))?;
        } else {
            let style = TextStyle::from(font).color(&ink);
            root.draw(&Text::new(t.text.clone(), (t.x, t.y), style))?;
        }
    }
    Ok(())
}
