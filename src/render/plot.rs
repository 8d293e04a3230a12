//! x–y line plots: several series, each drawn as a line through its points
//! with a marker at each point and, optionally, error bars (mean ± standard
//! deviation); axes with round ("nice") ticks and tick labels, axis labels,
//! a title and a legend. This is what `sweep.png` is made of.
//!
//! Points with a non-finite x or y are left out (the line breaks there), so
//! a failed run in a sweep shows as a gap instead of spoiling the plot.

use super::colormap::series_colour;
use super::image::{Image, Rgb};
use super::text::{
    draw_text, draw_text_centred, draw_text_vertical, fit_text, text_height, text_width,
};
use super::{pow10, RenderError};

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

/// A named list of points, drawn in the given order.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend text (empty: not in the legend).
    pub label: String,
    /// The points, joined by lines in this order.
    pub points: Vec<SeriesPoint>,
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
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            width: 900,
            height: 600,
            title: String::new(),
            x_label: String::new(),
            y_label: String::new(),
        }
    }
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

/// Where a plot's parts go: the axis maps (x: left to right, y: bottom to
/// top, in image pixels) and the ticks.
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
    /// Text scale (1 = 8-pixel characters).
    pub text_scale: u32,
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

/// The layout of a plot of `series`: axis ranges from the finite data
/// (error bars included) extended to round ticks, and the plot area.
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
    let ts = (options.width / 450).min(options.height / 300).max(1);
    let th = i64::from(text_height(ts));
    let x_ticks = nice_ticks(x0, x1, 6);
    let y_ticks = nice_ticks(y0, y1, 6);
    let ylab_w = y_ticks
        .values
        .iter()
        .map(|&v| i64::from(text_width(&y_ticks.label(v), ts)))
        .max()
        .unwrap_or(0);
    let (w, h) = (i64::from(options.width), i64::from(options.height));
    let margin = th;
    let tick = th / 2;
    let left = margin + th + th / 2 + ylab_w + th / 2 + tick;
    let right = w - margin - th; // room for the last x tick label
    let top = margin + if options.title.is_empty() { 0 } else { 2 * th };
    let bottom = h - margin - th - th / 2 - th - th / 2 - tick;
    let (xlo, xhi) = ends(&x_ticks);
    let (ylo, yhi) = ends(&y_ticks);
    Ok(PlotLayout {
        x: AxisMap {
            lo: xlo,
            hi: xhi,
            px_lo: left as f64,
            px_hi: right.max(left + 1) as f64,
        },
        y: AxisMap {
            lo: ylo,
            hi: yhi,
            px_lo: bottom as f64,
            px_hi: top.min(bottom - 1) as f64,
        },
        x_ticks,
        y_ticks,
        text_scale: ts,
    })
}

fn ends(t: &Ticks) -> (f64, f64) {
    match (t.values.first(), t.values.last()) {
        (Some(&a), Some(&b)) if b > a => (a, b),
        _ => (0.0, 1.0),
    }
}

/// Draws `series` as an x–y line plot (see the [module docs](self)).
/// Series colours follow [`colormap::PALETTE`](super::colormap::PALETTE) in
/// order. With no finite point at all, the axes run 0…1 and "no data" is
/// written in the middle.
///
/// Errors: as [`plot_layout`].
pub fn plot_lines(series: &[Series], options: &PlotOptions) -> Result<Image, RenderError> {
    let lay = plot_layout(series, options)?;
    let mut img = Image::new(options.width, options.height, Rgb::WHITE)?;
    let ts = lay.text_scale;
    let th = i64::from(text_height(ts));
    let (left, right) = (lay.x.px_lo as i64, lay.x.px_hi as i64);
    let (top, bottom) = (lay.y.px_hi as i64, lay.y.px_lo as i64);
    let tick = th / 2;
    let w = i64::from(options.width);

    // Grid, ticks and tick labels.
    for &v in &lay.x_ticks.values {
        let x = lay.x.to_px(v).round() as i64;
        img.fill_rect(x, top, 1, bottom - top, Rgb([230, 230, 230]));
        img.fill_rect(x, bottom, 1, tick, Rgb::INK);
        draw_text_centred(
            &mut img,
            x,
            bottom + tick + th / 2,
            &lay.x_ticks.label(v),
            ts,
            Rgb::INK,
        );
    }
    for &v in &lay.y_ticks.values {
        let y = lay.y.to_px(v).round() as i64;
        img.fill_rect(left, y, right - left, 1, Rgb([230, 230, 230]));
        img.fill_rect(left - tick, y, tick, 1, Rgb::INK);
        let label = lay.y_ticks.label(v);
        let lw = i64::from(text_width(&label, ts));
        draw_text(
            &mut img,
            left - tick - th / 2 - lw,
            y - th / 2,
            &label,
            ts,
            Rgb::INK,
        );
    }
    img.stroke_rect(left, top, right - left + 1, bottom - top + 1, Rgb::INK);

    // Title and axis labels.
    if !options.title.is_empty() {
        let t = fit_text(
            &options.title,
            options.width.saturating_sub(2 * th as u32),
            ts,
        );
        draw_text_centred(&mut img, w / 2, th, &t, ts, Rgb::INK);
    }
    if !options.x_label.is_empty() {
        let t = fit_text(&options.x_label, (right - left).max(0) as u32, ts);
        let y = i64::from(options.height) - th - th;
        draw_text_centred(&mut img, (left + right) / 2, y, &t, ts, Rgb::INK);
    }
    if !options.y_label.is_empty() {
        let t = fit_text(&options.y_label, (bottom - top).max(0) as u32, ts);
        draw_text_vertical(&mut img, th, (top + bottom) / 2, &t, ts, Rgb::INK);
    }

    if extent(series).is_none() {
        draw_text_centred(
            &mut img,
            (left + right) / 2,
            (top + bottom) / 2,
            "no data",
            ts,
            Rgb::INK,
        );
    }

    // Series: error bars, lines, markers.
    let lw = f64::from(ts) * 1.5 + 0.5;
    let mr = f64::from(ts) * 2.5 + 1.0;
    for (k, s) in series.iter().enumerate() {
        let c = series_colour(k);
        let px = |p: &SeriesPoint| (lay.x.to_px(p.x), lay.y.to_px(p.y));
        for p in s
            .points
            .iter()
            .filter(|p| p.x.is_finite() && p.y.is_finite())
        {
            if let Some(e) = bar(p) {
                let x = lay.x.to_px(p.x);
                let (ya, yb) = (lay.y.to_px(p.y - e), lay.y.to_px(p.y + e));
                img.line(x, ya, x, yb, lw, c);
                img.line(x - mr, ya, x + mr, ya, lw, c);
                img.line(x - mr, yb, x + mr, yb, lw, c);
            }
        }
        for pair in s.points.windows(2) {
            let ok = |p: &SeriesPoint| p.x.is_finite() && p.y.is_finite();
            if ok(&pair[0]) && ok(&pair[1]) {
                let (a, b) = (px(&pair[0]), px(&pair[1]));
                img.line(a.0, a.1, b.0, b.1, lw, c);
            }
        }
        for p in s
            .points
            .iter()
            .filter(|p| p.x.is_finite() && p.y.is_finite())
        {
            let (x, y) = px(p);
            img.fill_circle(x, y, mr, c);
        }
    }

    draw_legend(&mut img, series, &lay, ts);
    Ok(img)
}

/// The legend box in the top-right corner of the plot area.
fn draw_legend(img: &mut Image, series: &[Series], lay: &PlotLayout, ts: u32) {
    let entries: Vec<(usize, &str)> = series
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.label.is_empty())
        .map(|(k, s)| (k, s.label.as_str()))
        .collect();
    if entries.is_empty() {
        return;
    }
    let th = i64::from(text_height(ts));
    let (left, right) = (lay.x.px_lo as i64, lay.x.px_hi as i64);
    let top = lay.y.px_hi as i64;
    let max_text = ((right - left) / 2).max(th) as u32;
    let labels: Vec<String> = entries
        .iter()
        .map(|(_, l)| fit_text(l, max_text, ts))
        .collect();
    let text_w = labels
        .iter()
        .map(|l| i64::from(text_width(l, ts)))
        .max()
        .unwrap_or(0);
    let swatch = 3 * th;
    let row_h = th + th / 2;
    let box_w = th / 2 + swatch + th / 2 + text_w + th / 2;
    let box_h = th / 2 + row_h * entries.len() as i64;
    let bx = right - th / 2 - box_w;
    let by = top + th / 2;
    img.fill_rect(bx, by, box_w, box_h, Rgb::WHITE);
    img.stroke_rect(bx, by, box_w, box_h, Rgb::LIGHT_GREY);
    for (row, ((k, _), label)) in entries.iter().zip(&labels).enumerate() {
        let c = series_colour(*k);
        let y = by + th / 2 + row as i64 * row_h;
        let cy = (y + th / 2) as f64;
        let x0 = (bx + th / 2) as f64;
        img.line(x0, cy, x0 + swatch as f64, cy, f64::from(ts) * 1.5 + 0.5, c);
        img.fill_circle(x0 + swatch as f64 / 2.0, cy, f64::from(ts) * 2.5 + 1.0, c);
        draw_text(img, bx + th / 2 + swatch + th / 2, y, label, ts, Rgb::INK);
    }
}
