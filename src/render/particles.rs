//! The particle picture: an orthographic side view and top view of all
//! spheres, side by side, with a colour bar and a scale bar.
//!
//! * **Side view** looks along +y: x to the right, z up; a sphere with
//!   smaller y is nearer and hides those behind it.
//! * **Top view** looks down along −z: x to the right, y up; a sphere with
//!   larger z is nearer.
//!
//! Both views share one scale (pixels per metre), chosen so that the
//! bounding box of all spheres (radii included) fits both panels. Each
//! sphere is a shaded disk: its colour from [`viridis`] of its colour value
//! (mapped from the smallest to the largest value; when all values are
//! equal, the middle of the map), times a Lambert term
//! from the sphere's surface normal at that pixel plus some ambient light,
//! with a per-pixel depth test on the sphere's front surface, so nearer
//! spheres hide farther ones and intersecting spheres cut each other
//! correctly. A sphere smaller than a pixel is still drawn as one pixel.
//!
//! A body that is not a sphere is drawn from its surface triangles
//! ([`render_bodies`]): each triangle filled with the same depth test,
//! flat-shaded by the Lambert term of its normal (a shaded silhouette).

use glam::DVec3;

use super::colormap::viridis;
use super::image::{clip_span, Image, Rgb};
use super::text::{
    draw_text, draw_text_centred, draw_text_vertical, fit_text, text_height, text_width,
};
use super::{fmt_length, fmt_num, nice_step_below, RenderError};
use crate::scene::{ColourBy, LookAlong};

impl ColourBy {
    /// The colour-bar label, with the unit.
    pub fn label(self) -> &'static str {
        match self {
            ColourBy::Height => "height z (m)",
            ColourBy::Speed => "speed (m/s)",
        }
    }

    /// The colour value of each sphere: `positions[i].z` or
    /// `|velocities[i]|`. With [`ColourBy::Height`], `velocities` is not
    /// used (and may be empty); with [`ColourBy::Speed`] it must be as long
    /// as `positions`.
    pub fn values(
        self,
        positions: &[DVec3],
        velocities: &[DVec3],
    ) -> Result<Vec<f64>, RenderError> {
        match self {
            ColourBy::Height => Ok(positions.iter().map(|p| p.z).collect()),
            ColourBy::Speed => {
                if velocities.len() != positions.len() {
                    return Err(RenderError::Invalid(format!(
                        "{} velocities for {} positions",
                        velocities.len(),
                        positions.len()
                    )));
                }
                Ok(velocities.iter().map(|v| v.length()).collect())
            }
        }
    }
}

impl LookAlong {
    /// A world point in the frame the default views draw: for `X` the scene
    /// turned a quarter turn about z, (x, y, z) → (y, −x, z).
    pub fn frame(self, p: DVec3) -> DVec3 {
        match self {
            LookAlong::Y => p,
            LookAlong::X => DVec3::new(p.y, -p.x, p.z),
        }
    }

    /// The titles of the side and the top view.
    fn titles(self) -> [&'static str; 2] {
        match self {
            LookAlong::Y => ["side view (x right, z up)", "top view (x right, y up)"],
            LookAlong::X => ["side view (y right, z up)", "top view (y right, -x up)"],
        }
    }
}

/// Size and labels of a particle picture.
#[derive(Clone, Debug, PartialEq)]
pub struct ParticleOptions {
    /// Image width in pixels (at least [`MIN_WIDTH`]).
    pub width: u32,
    /// Image height in pixels (at least [`MIN_HEIGHT`]).
    pub height: u32,
    /// What the colour values are, with the unit (the colour-bar label).
    pub colour_label: String,
    /// A line of text above the views (scene name, time, count, …).
    pub caption: Option<String>,
    /// The axis the side view looks along.
    pub look_along: LookAlong,
    /// Triangles of the mesh boundaries (world coordinates), drawn over
    /// the bodies as translucent glass, so that grains inside a hopper or
    /// drum stay visible.
    pub walls: Vec<[DVec3; 3]>,
    /// Polylines (world coordinates) of boundaries drawn as outlines, such
    /// as a drum's cylinder ([`crate::render::cylinder_outlines`]): thin
    /// grey lines over the bodies. Their points count in the views'
    /// extent, so a drum shows whole around its bed.
    pub outlines: Vec<Vec<DVec3>>,
}

impl Default for ParticleOptions {
    fn default() -> Self {
        ParticleOptions {
            width: 1200,
            height: 600,
            colour_label: ColourBy::Height.label().to_string(),
            caption: None,
            look_along: LookAlong::Y,
            walls: Vec::new(),
            outlines: Vec::new(),
        }
    }
}

/// The smallest [`ParticleOptions::width`].
pub const MIN_WIDTH: u32 = 320;
/// The smallest [`ParticleOptions::height`].
pub const MIN_HEIGHT: u32 = 160;

/// The background colour of particle pictures.
pub const BACKGROUND: Rgb = Rgb::WHITE;

/// Share of light that reaches every visible surface point.
const AMBIENT: f64 = 0.3;

/// Direction towards the light in view coordinates (right, up, towards the
/// viewer): from the upper left, mostly from the front, so a sphere is
/// brightest near its centre and darkens towards its rim.
fn light() -> DVec3 {
    DVec3::new(-0.3, 0.4, 1.0).normalize()
}

/// How one view maps world points to image pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewMap {
    /// Left, top, width and height of the drawing area in the image (pixels).
    pub area: (i64, i64, i64, i64),
    /// Image pixel coordinates of the world point `centre`.
    pub centre_px: (f64, f64),
    /// The point drawn at `centre_px`, in the view frame
    /// ([`LookAlong::frame`] of a world point).
    pub centre: DVec3,
    /// Pixels per metre.
    pub scale: f64,
    /// `true` for the side view (x, z), `false` for the top view (x, y),
    /// both in the view frame.
    pub side: bool,
    /// The axis the side view looks along (sets the view frame).
    pub look_along: LookAlong,
}

impl ViewMap {
    /// Image pixel coordinates (x right, y down; pixel (i, j) covers
    /// [i, i+1) × [j, j+1)) of the world point `p`.
    pub fn project(&self, p: DVec3) -> (f64, f64) {
        let p = self.look_along.frame(p);
        let up = if self.side {
            p.z - self.centre.z
        } else {
            p.y - self.centre.y
        };
        (
            self.centre_px.0 + (p.x - self.centre.x) * self.scale,
            self.centre_px.1 - up * self.scale,
        )
    }

    /// How near `p` is to the viewer (m): −y in the side view, z in the top
    /// view (in the view frame).
    fn toward(&self, p: DVec3) -> f64 {
        let p = self.look_along.frame(p);
        if self.side {
            -p.y
        } else {
            p.z
        }
    }
}

/// Where everything goes in a particle picture.
#[derive(Clone, Debug, PartialEq)]
pub struct ParticleLayout {
    /// The side view (looking along +y).
    pub side: ViewMap,
    /// The top view (looking down).
    pub top: ViewMap,
    /// Text scale (1 = 8-pixel characters).
    pub text_scale: u32,
    panels: [(i64, i64, i64, i64); 2],
    bar: (i64, i64, i64, i64),
}

/// Checks the inputs; returns the number of spheres.
fn check_inputs(
    positions: &[DVec3],
    radii: &[f64],
    colour_values: &[f64],
    options: &ParticleOptions,
) -> Result<usize, RenderError> {
    if options.width < MIN_WIDTH || options.height < MIN_HEIGHT {
        return Err(RenderError::Invalid(format!(
            "a particle picture must be at least {MIN_WIDTH}×{MIN_HEIGHT} pixels (asked for {}×{})",
            options.width, options.height
        )));
    }
    let n = positions.len();
    if radii.len() != n || colour_values.len() != n {
        return Err(RenderError::Invalid(format!(
            "{n} positions but {} radii and {} colour values",
            radii.len(),
            colour_values.len()
        )));
    }
    for (i, p) in positions.iter().enumerate() {
        if !p.is_finite() {
            return Err(RenderError::NonFinite {
                what: "position",
                index: i,
                value: format!("({}, {}, {})", p.x, p.y, p.z),
            });
        }
    }
    for (i, &r) in radii.iter().enumerate() {
        if !r.is_finite() || r < 0.0 {
            return Err(RenderError::NonFinite {
                what: "radius",
                index: i,
                value: r.to_string(),
            });
        }
    }
    for (i, &v) in colour_values.iter().enumerate() {
        if !v.is_finite() {
            return Err(RenderError::NonFinite {
                what: "colour value",
                index: i,
                value: v.to_string(),
            });
        }
    }
    Ok(n)
}

/// Smallest and largest of `values` (`None` when empty).
fn range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// The layout of the picture of these spheres: where each view goes and its
/// scale. Errors as [`render_particles`].
pub fn particle_layout(
    positions: &[DVec3],
    radii: &[f64],
    colour_values: &[f64],
    options: &ParticleOptions,
) -> Result<ParticleLayout, RenderError> {
    check_inputs(positions, radii, colour_values, options)?;
    let (w, h) = (i64::from(options.width), i64::from(options.height));
    let ts = (options.width / 600).min(options.height / 300).max(1);
    let th = i64::from(text_height(ts));
    let margin = 4 * th / 3;
    let caption_h = if options.caption.is_some() {
        th + margin
    } else {
        0
    };
    // Colour bar band on the right: vertical label, bar, value labels.
    let (lo, hi) = range(colour_values.iter().copied()).unwrap_or((0.0, 1.0));
    let labels_w = i64::from(text_width(&fmt_num(lo), ts).max(text_width(&fmt_num(hi), ts)));
    let bar_w = 2 * th;
    let band_w = th + th / 2 + bar_w + th / 2 + labels_w;
    let top = margin + caption_h;
    let panel_h = h - top - margin;
    let panel_w = (w - 3 * margin - band_w - margin) / 2;
    let panels = [
        (margin, top, panel_w, panel_h),
        (2 * margin + panel_w, top, panel_w, panel_h),
    ];
    let bar_x = 3 * margin + 2 * panel_w + th + th / 2;
    // Inside a panel: the title above, the scale bar below.
    let title_h = th + th / 2 + th / 2;
    let scale_h = 3 * th;
    let pad = th / 2;
    let area = |(px, py, pw, ph): (i64, i64, i64, i64)| {
        (
            px + pad,
            py + title_h,
            (pw - 2 * pad).max(1),
            (ph - title_h - scale_h).max(1),
        )
    };
    let bar = (
        bar_x,
        area(panels[0]).1 + th,
        bar_w,
        (area(panels[0]).3 - 2 * th).max(1),
    );

    // Bounding box of the spheres in the view frame, radii included, and
    // of the outlines' (finite) points.
    let look = options.look_along;
    let outline_points = || {
        options
            .outlines
            .iter()
            .flatten()
            .filter(|p| p.is_finite())
            .map(|p| look.frame(*p))
    };
    let lo3 = positions
        .iter()
        .zip(radii)
        .map(|(p, &r)| look.frame(*p) - r)
        .chain(outline_points())
        .fold(DVec3::splat(f64::INFINITY), DVec3::min);
    let hi3 = positions
        .iter()
        .zip(radii)
        .map(|(p, &r)| look.frame(*p) + r)
        .chain(outline_points())
        .fold(DVec3::splat(f64::NEG_INFINITY), DVec3::max);
    let (centre, ext) = if positions.is_empty() {
        (DVec3::ZERO, DVec3::ONE)
    } else {
        (lo3 * 0.5 + hi3 * 0.5, hi3 - lo3)
    };
    let (aw, ah) = {
        let a = area(panels[0]);
        (a.2 as f64, a.3 as f64)
    };
    // Fill 94 % of the drawing area; a zero extent sets no limit.
    let fit = |px: f64, e: f64| {
        if e > 0.0 {
            0.94 * px / e
        } else {
            f64::INFINITY
        }
    };
    let mut scale = fit(aw, ext.x).min(fit(ah, ext.z)).min(fit(ah, ext.y));
    if !scale.is_finite() {
        // All spheres of radius 0 at one point: any scale shows it.
        scale = 0.94 * aw.min(ah);
    }
    let view = |panel: (i64, i64, i64, i64), side: bool| {
        let a = area(panel);
        ViewMap {
            area: a,
            centre_px: (a.0 as f64 + a.2 as f64 / 2.0, a.1 as f64 + a.3 as f64 / 2.0),
            centre,
            scale,
            side,
            look_along: look,
        }
    };
    Ok(ParticleLayout {
        side: view(panels[0], true),
        top: view(panels[1], false),
        text_scale: ts,
        panels,
        bar,
    })
}

/// Renders spheres (centres `positions`, radii `radii`, one colour value
/// each) as a side view and a top view side by side; see the [module
/// docs](self).
///
/// Zero spheres give a valid picture with "no spheres" in each view.
/// Errors, never panics: [`RenderError::NonFinite`] for a non-finite
/// position, radius or colour value, or a negative radius;
/// [`RenderError::Invalid`] when the slices differ in length or the picture
/// is smaller than [`MIN_WIDTH`] × [`MIN_HEIGHT`].
pub fn render_particles(
    positions: &[DVec3],
    radii: &[f64],
    colour_values: &[f64],
    options: &ParticleOptions,
) -> Result<Image, RenderError> {
    render_bodies(positions, radii, colour_values, &[], options)
}

/// The world triangles of one body's surface (for [`render_bodies`]).
pub type Surface = Vec<[DVec3; 3]>;

/// As [`render_particles`], with bodies that are not spheres drawn from
/// their surfaces: `surfaces[i]`, when present and `Some`, replaces body
/// i's sphere (its bounding radius `radii[i]` still sizes the views).
/// `surfaces` may be shorter than `positions` (the rest are spheres).
pub fn render_bodies(
    positions: &[DVec3],
    radii: &[f64],
    colour_values: &[f64],
    surfaces: &[Option<Surface>],
    options: &ParticleOptions,
) -> Result<Image, RenderError> {
    let layout = particle_layout(positions, radii, colour_values, options)?;
    let mut img = Image::new(options.width, options.height, BACKGROUND)?;
    let ts = layout.text_scale;
    let th = i64::from(text_height(ts));
    if let Some(c) = &options.caption {
        let c = fit_text(c, options.width.saturating_sub(2 * th as u32), ts);
        draw_text(&mut img, layout.panels[0].0, th * 4 / 3, &c, ts, Rgb::INK);
    }
    let titles = options.look_along.titles();
    for (k, (view, title)) in [layout.side, layout.top].iter().zip(titles).enumerate() {
        let (px, py, pw, _) = layout.panels[k];
        let t = fit_text(title, pw.max(0) as u32, ts);
        draw_text_centred(&mut img, px + pw / 2, py, &t, ts, Rgb::INK);
        let (ax, ay, aw, ah) = view.area;
        img.stroke_rect(ax - 1, ay - 1, aw + 2, ah + 2, Rgb::LIGHT_GREY);
        if positions.is_empty() {
            draw_text_centred(
                &mut img,
                ax + aw / 2,
                ay + ah / 2 - th / 2,
                "no spheres",
                ts,
                Rgb::INK,
            );
            continue;
        }
        draw_view(&mut img, view, positions, radii, colour_values, surfaces);
        for tri in &options.walls {
            rasterize(view, tri, |x, y, _| {
                img.blend(ax + x, ay + y, WALL_GLASS, WALL_ALPHA)
            });
        }
        for line in &options.outlines {
            for pair in line.windows(2) {
                let (x0, y0) = view.project(pair[0]);
                let (x1, y1) = view.project(pair[1]);
                img.line(x0, y0, x1, y1, f64::from(ts), OUTLINE);
            }
        }
        draw_scale_bar(&mut img, view, ts);
    }
    if !positions.is_empty() {
        draw_colour_bar(&mut img, &layout, colour_values, &options.colour_label);
    }
    Ok(img)
}

/// Draws all bodies of one view into its area, with a depth buffer.
fn draw_view(
    img: &mut Image,
    view: &ViewMap,
    positions: &[DVec3],
    radii: &[f64],
    values: &[f64],
    surfaces: &[Option<Surface>],
) {
    let (ax, ay, aw, ah) = view.area;
    let (aw_u, ah_u) = (aw as usize, ah as usize);
    let mut depth = vec![f64::NEG_INFINITY; aw_u * ah_u];
    let (lo, hi) = range(values.iter().copied()).unwrap_or((0.0, 1.0));
    let l = light();
    let s = view.scale;
    for (i, ((p, &r), &v)) in positions.iter().zip(radii).zip(values).enumerate() {
        let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
        let base = viridis(t);
        if let Some(Some(tris)) = surfaces.get(i) {
            for tri in tris {
                draw_triangle(img, view, &mut depth, tri, base);
            }
            continue;
        }
        let (cx, cy) = view.project(*p);
        // Centre relative to the area's top left.
        let (cx, cy) = (cx - ax as f64, cy - ay as f64);
        let rp = (r * s).max(0.75);
        if !(cx.is_finite() && cy.is_finite() && rp.is_finite()) {
            continue;
        }
        let near = view.toward(*p) * s;
        let (x0, x1) = clip_span(cx - rp, cx + rp, aw as u32);
        let (y0, y1) = clip_span(cy - rp, cy + rp, ah as u32);
        for y in y0..y1 {
            let dy = y as f64 + 0.5 - cy;
            for x in x0..x1 {
                let dx = x as f64 + 0.5 - cx;
                let q = dx * dx + dy * dy;
                if q > rp * rp {
                    continue;
                }
                let hz = (rp * rp - q).sqrt();
                let d = near + hz;
                let k = y as usize * aw_u + x as usize;
                if d <= depth[k] {
                    continue;
                }
                depth[k] = d;
                let n = DVec3::new(dx / rp, -dy / rp, hz / rp);
                let shade = AMBIENT + (1.0 - AMBIENT) * n.dot(l).max(0.0);
                img.set(ax + x, ay + y, base.scaled(shade));
            }
        }
    }
}

/// The colour of boundary outlines in pictures.
pub const OUTLINE: Rgb = Rgb([120, 120, 120]);

/// The colour and opacity of mesh boundaries in pictures.
const WALL_GLASS: Rgb = Rgb::LIGHT_GREY;
const WALL_ALPHA: f64 = 0.22;

/// Fills one world triangle into the view's area with the depth test,
/// flat-shaded by its normal (either side lit: the surfaces are closed, so
/// only front faces survive the depth test).
fn draw_triangle(img: &mut Image, view: &ViewMap, depth: &mut [f64], tri: &[DVec3; 3], base: Rgb) {
    let (ax, ay, aw, _) = view.area;
    // The normal in (right, up, toward) coordinates.
    let v: [DVec3; 3] = tri.map(|p| {
        let (x, y) = view.project(p);
        DVec3::new(x, -y, view.toward(p) * view.scale)
    });
    let Some(n) = (v[1] - v[0]).cross(v[2] - v[0]).try_normalize() else {
        return;
    };
    let colour = base.scaled(AMBIENT + (1.0 - AMBIENT) * n.dot(light()).abs());
    rasterize(view, tri, |x, y, d| {
        let k = y as usize * aw as usize + x as usize;
        if d > depth[k] {
            depth[k] = d;
            img.set(ax + x, ay + y, colour);
        }
    });
}

/// Calls `f(x, y, nearness)` for every pixel of the view's area (x, y
/// relative to its top left) that a world triangle covers, nearness in
/// pixels toward the viewer.
fn rasterize(view: &ViewMap, tri: &[DVec3; 3], mut f: impl FnMut(i64, i64, f64)) {
    let (ax, ay, aw, ah) = view.area;
    // Each vertex in area pixels (x right, y down) and nearness (pixels).
    let v: [DVec3; 3] = tri.map(|p| {
        let (x, y) = view.project(p);
        DVec3::new(x - ax as f64, y - ay as f64, view.toward(p) * view.scale)
    });
    if !v.iter().all(|p| p.is_finite()) {
        return;
    }
    let area = (v[1].x - v[0].x) * (v[2].y - v[0].y) - (v[2].x - v[0].x) * (v[1].y - v[0].y);
    if area.abs() < 1e-12 {
        return;
    }
    let xs = v.map(|p| p.x);
    let ys = v.map(|p| p.y);
    let (x0, x1) = clip_span(
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        aw as u32,
    );
    let (y0, y1) = clip_span(
        ys.iter().copied().fold(f64::INFINITY, f64::min),
        ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ah as u32,
    );
    let edge =
        |a: DVec3, b: DVec3, x: f64, y: f64| (b.x - a.x) * (y - a.y) - (x - a.x) * (b.y - a.y);
    for y in y0..y1 {
        let py = y as f64 + 0.5;
        for x in x0..x1 {
            let px = x as f64 + 0.5;
            // Barycentric weights; inside when all share the area's sign.
            let w0 = edge(v[1], v[2], px, py) / area;
            let w1 = edge(v[2], v[0], px, py) / area;
            let w2 = 1.0 - w0 - w1;
            if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                continue;
            }
            f(x, y, w0 * v[0].z + w1 * v[1].z + w2 * v[2].z);
        }
    }
}

/// Draws a scale bar of a round length under the view's area.
fn draw_scale_bar(img: &mut Image, view: &ViewMap, ts: u32) {
    let (ax, ay, aw, ah) = view.area;
    let th = i64::from(text_height(ts));
    let len_m = nice_step_below(aw as f64 / 4.0 / view.scale);
    let Some(len_m) = len_m else { return };
    let len_px = len_m * view.scale;
    let y = (ay + ah + th + th / 4) as f64;
    let x0 = (ax + th / 2) as f64;
    let lw = (ts as f64 * 1.5).max(2.0);
    img.line(x0, y, x0 + len_px, y, lw, Rgb::INK);
    img.line(
        x0,
        y - th as f64 / 2.0,
        x0,
        y + th as f64 / 2.0,
        lw,
        Rgb::INK,
    );
    img.line(
        x0 + len_px,
        y - th as f64 / 2.0,
        x0 + len_px,
        y + th as f64 / 2.0,
        lw,
        Rgb::INK,
    );
    let label = fmt_length(len_m);
    draw_text(
        img,
        (x0 + len_px) as i64 + th,
        y as i64 - th / 2,
        &label,
        ts,
        Rgb::INK,
    );
}

/// Draws the colour bar with its min/max labels and its vertical label.
fn draw_colour_bar(img: &mut Image, layout: &ParticleLayout, values: &[f64], label: &str) {
    let (bx, by, bw, bh) = layout.bar;
    let ts = layout.text_scale;
    let th = i64::from(text_height(ts));
    let (lo, hi) = range(values.iter().copied()).unwrap_or((0.0, 1.0));
    for j in 0..bh {
        let t = 1.0 - (j as f64 + 0.5) / bh as f64;
        img.fill_rect(bx, by + j, bw, 1, viridis(t));
    }
    img.stroke_rect(bx - 1, by - 1, bw + 2, bh + 2, Rgb::INK);
    let lx = bx + bw + th / 2;
    draw_text(img, lx, by, &fmt_num(hi), ts, Rgb::INK);
    draw_text(img, lx, by + bh - th, &fmt_num(lo), ts, Rgb::INK);
    let label = fit_text(label, bh.max(0) as u32, ts);
    draw_text_vertical(img, bx - th - th / 2, by + bh / 2, &label, ts, Rgb::INK);
}
