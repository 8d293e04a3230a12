//! Pictures: PNG files decode back to what was written; the particle
//! picture puts shaded spheres where the projection says, nearer spheres in
//! front, with a scale bar of the stated length; plots put points where the
//! axis mapping says, with round ticks; contact sheets have the documented
//! size; runs write a decodable `final.png`; `repose render` re-renders one;
//! bad input is an error, never a panic.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use glam::DVec3;
use repose::render::colormap::{series_colour, viridis};
use repose::render::particles::{particle_layout, BACKGROUND};
use repose::render::plot::plot_layout;
use repose::render::sheet::{sheet_size, thumbnail_size, CAPTION_HEIGHT, SHEET_GAP, THUMB_WIDTH};
use repose::render::text::{draw_text, text_height, text_width};
use repose::render::{
    contact_sheet, nice_step_below, nice_ticks, plot_lines, render_particles, write_png, Image,
    ParticleOptions, PlotOptions, RenderError, Rgb, Series,
};
use repose::scene::LookAlong;

const BIN: &str = env!("CARGO_BIN_EXE_repose");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn repose<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(BIN)
        .args(args)
        .current_dir(root())
        .env_remove("RUST_LOG")
        .output()
        .unwrap_or_else(|e| panic!("cannot start {BIN}: {e}"))
}

fn show(out: &Output) -> String {
    format!(
        "exit status: {}\n--- stdout ---\n{}--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Decodes a PNG file with the `png` crate itself (not our reader):
/// (width, height, colour type, bytes).
fn decode_with_png_crate(path: &Path) -> (u32, u32, png::ColorType, Vec<u8>) {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let dec = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = dec.read_info().expect("a valid PNG header");
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).expect("valid PNG data");
    buf.truncate(info.buffer_size());
    (info.width, info.height, info.color_type, buf)
}

fn px(img: &Image, x: f64, y: f64) -> Rgb {
    img.get(x.floor() as i64, y.floor() as i64)
        .unwrap_or_else(|| {
            panic!(
                "({x}, {y}) is outside the {}×{} image",
                img.width(),
                img.height()
            )
        })
}

fn brightness(c: Rgb) -> u32 {
    c.0.iter().map(|&v| u32::from(v)).sum()
}

/// `c` is `base` scaled by one factor (a shade of that colour), to ±3 per
/// channel.
fn is_shade_of(c: Rgb, base: Rgb) -> bool {
    // The scale factor from the brightest channel of `base`.
    let i = (0..3).max_by_key(|&i| base.0[i]).unwrap();
    let k = f64::from(c.0[i]) / f64::from(base.0[i]);
    (0..3).all(|i| (f64::from(c.0[i]) - k * f64::from(base.0[i])).abs() <= 3.0)
}

// ---------------------------------------------------------------- PNG

#[test]
fn png_round_trip_gives_back_size_and_pixels() {
    let (w, h) = (37, 23);
    let mut data = Vec::new();
    for y in 0..h {
        for x in 0..w {
            data.extend_from_slice(&[(x * 7) as u8, (y * 11) as u8, ((x * y) % 256) as u8]);
        }
    }
    let img = Image::from_rgb(w, h, data.clone()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.png");
    write_png(&path, &img).unwrap();
    let (dw, dh, ct, bytes) = decode_with_png_crate(&path);
    assert_eq!((dw, dh), (w, h));
    assert_eq!(ct, png::ColorType::Rgb);
    assert_eq!(bytes, data);
    // Our own reader agrees, and no temporary file is left behind.
    assert_eq!(repose::render::read_png(&path).unwrap(), img);
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn reading_a_non_png_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.png");
    fs::write(&path, b"not a png").unwrap();
    let err = repose::render::read_png(&path).unwrap_err();
    assert!(err.to_string().contains("bad.png"), "{err}");
    let err = repose::render::read_png(dir.path().join("missing.png")).unwrap_err();
    assert!(err.to_string().contains("missing.png"), "{err}");
}

// ---------------------------------------------------------------- particles

#[test]
fn single_sphere_is_a_shaded_disk_at_its_projection() {
    // A second, far sphere makes the scale independent of the first one's size.
    let pos = [DVec3::new(0.1, 0.2, 0.3), DVec3::new(-0.5, -0.4, 0.0)];
    let radii = [0.05, 0.01];
    let values = [1.0, 0.0];
    let opts = ParticleOptions::default();
    let lay = particle_layout(&pos, &radii, &values, &opts).unwrap();
    let img = render_particles(&pos, &radii, &values, &opts).unwrap();
    assert_eq!((img.width(), img.height()), (1200, 600));
    let yellow = viridis(1.0);
    for view in [lay.side, lay.top] {
        let (cx, cy) = view.project(pos[0]);
        let rp = radii[0] * view.scale;
        assert!(rp > 10.0, "the sphere should be several pixels wide ({rp})");
        let centre = px(&img, cx, cy);
        assert_ne!(centre, BACKGROUND);
        assert!(
            is_shade_of(centre, yellow),
            "centre {centre:?} is not a shade of {yellow:?}"
        );
        // Just outside the radius, in all four directions: background.
        for (dx, dy) in [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)] {
            let out = px(&img, cx + dx * (rp + 2.0), cy + dy * (rp + 2.0));
            assert_eq!(out, BACKGROUND, "outside at ({dx}, {dy})");
            // Near the rim: the same colour, darker than the centre.
            let rim = px(&img, cx + dx * 0.93 * rp, cy + dy * 0.93 * rp);
            assert!(is_shade_of(rim, yellow), "rim {rim:?}");
            assert!(
                brightness(rim) < brightness(centre),
                "rim {rim:?} should be darker than centre {centre:?}"
            );
        }
    }
}

/// `look_along: X` turns the views a quarter turn about z: a row of spheres
/// along y, one dot in the default side view, is a row in the view along x
/// (y to the right), drawn where the projection says; and in its top view −x
/// is up.
#[test]
fn side_view_looks_along_the_chosen_axis() {
    let pos: Vec<DVec3> = (0..5)
        .map(|k| DVec3::new(0.0, 0.1 * k as f64, 0.05))
        .collect();
    let radii = [0.04; 5];
    let values = [0.0, 1.0, 2.0, 3.0, 4.0];
    for look in [LookAlong::Y, LookAlong::X] {
        let opts = ParticleOptions {
            look_along: look,
            ..ParticleOptions::default()
        };
        let lay = particle_layout(&pos, &radii, &values, &opts).unwrap();
        let xs: Vec<f64> = pos.iter().map(|p| lay.side.project(*p).0).collect();
        let spread = xs[4] - xs[0];
        match look {
            LookAlong::Y => assert!(
                spread.abs() < 1e-9,
                "{look:?}: a row along y should be one dot in the side view, spread {spread} px"
            ),
            LookAlong::X => {
                let want = 0.4 * lay.side.scale;
                assert!(
                    (spread - want).abs() < 1e-6,
                    "{look:?}: the row should span {want} px to the right, spans {spread} px"
                );
                // −x is up in the top view (image y grows downwards).
                let (_, y0) = lay.top.project(DVec3::ZERO);
                let (_, y1) = lay.top.project(DVec3::new(0.1, 0.0, 0.0));
                assert!(
                    y1 > y0,
                    "{look:?}: +x should be lower in the top view ({y1} vs {y0})"
                );
                let img = render_particles(&pos, &radii, &values, &opts).unwrap();
                for (p, v) in pos.iter().zip(values) {
                    let (cx, cy) = lay.side.project(*p);
                    let c = px(&img, cx, cy);
                    assert!(
                        is_shade_of(c, viridis(v / 4.0)),
                        "{look:?}: the sphere at {p} should be drawn at ({cx}, {cy}), found {c:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn nearer_sphere_wins_where_two_overlap_in_both_views() {
    // A is nearer in the side view (smaller y), B in the top view (larger z).
    let a = DVec3::new(0.0, -0.6, 0.0);
    let b = DVec3::new(0.6, 0.0, 0.6);
    let radii = [1.0, 1.0];
    let values = [0.0, 1.0];
    let opts = ParticleOptions::default();
    let (purple, yellow) = (viridis(0.0), viridis(1.0));
    for order in [[a, b], [b, a]] {
        let vals = if order[0] == a {
            values
        } else {
            [values[1], values[0]]
        };
        let lay = particle_layout(&order, &radii, &vals, &opts).unwrap();
        let img = render_particles(&order, &radii, &vals, &opts).unwrap();
        // Side view: the overlap around x = 0.3, z = 0.3 shows A.
        let (sx, sy) = lay.side.project(DVec3::new(0.3, 0.0, 0.3));
        let c = px(&img, sx, sy);
        assert!(
            is_shade_of(c, purple),
            "side overlap shows {c:?}, expected A's purple"
        );
        // Top view: the overlap around x = 0.3, y = −0.3 shows B.
        let (tx, ty) = lay.top.project(DVec3::new(0.3, -0.3, 0.0));
        let c = px(&img, tx, ty);
        assert!(
            is_shade_of(c, yellow),
            "top overlap shows {c:?}, expected B's yellow"
        );
    }
}

#[test]
fn scale_bar_has_the_length_it_states() {
    let pos = [DVec3::new(0.0, 0.0, 0.0), DVec3::new(0.3, 0.1, 0.05)];
    let radii = [0.01, 0.01];
    let values = [0.0, 0.05];
    let opts = ParticleOptions::default();
    let lay = particle_layout(&pos, &radii, &values, &opts).unwrap();
    let img = render_particles(&pos, &radii, &values, &opts).unwrap();
    let (ax, ay, aw, ah) = lay.side.area;
    let th = i64::from(text_height(lay.text_scale));
    let len_m = nice_step_below(aw as f64 / 4.0 / lay.side.scale).unwrap();
    let len_px = len_m * lay.side.scale;
    // The bar's row: the longest run of dark pixels below the drawing area.
    let mut best = 0i64;
    for y in ay + ah..ay + ah + 3 * th {
        let mut run = 0;
        for x in ax..ax + aw {
            if brightness(img.get(x, y).unwrap()) < 3 * 128 {
                run += 1;
                best = best.max(run);
            } else {
                run = 0;
            }
        }
    }
    assert!(
        (best as f64 - len_px).abs() <= 4.0,
        "scale bar run {best} px, expected {len_px:.1} px ({len_m} m)"
    );
}

#[test]
fn text_draws_ink_inside_its_box_only() {
    let mut img = Image::new(200, 60, Rgb::WHITE).unwrap();
    let (x, y, s) = (12, 20, 2);
    draw_text(&mut img, x, y, "5 cm", s, Rgb::BLACK);
    let (w, h) = (i64::from(text_width("5 cm", s)), i64::from(text_height(s)));
    assert_eq!((w, h), (64, 16));
    let mut inside = 0;
    for yy in 0..60 {
        for xx in 0..200 {
            if img.get(xx, yy) != Some(Rgb::WHITE) {
                assert!(
                    (x..x + w).contains(&xx) && (y..y + h).contains(&yy),
                    "ink at ({xx}, {yy}) outside the text box"
                );
                inside += 1;
            }
        }
    }
    assert!(inside > 40, "only {inside} ink pixels");
}

#[test]
fn zero_spheres_give_a_valid_picture_with_a_note() {
    let opts = ParticleOptions {
        caption: Some("empty".into()),
        ..ParticleOptions::default()
    };
    let lay = particle_layout(&[], &[], &[], &opts).unwrap();
    let img = render_particles(&[], &[], &[], &opts).unwrap();
    assert_eq!((img.width(), img.height()), (1200, 600));
    // "no spheres" is written around the middle of each view.
    for view in [lay.side, lay.top] {
        let (ax, ay, aw, ah) = view.area;
        let (cx, cy) = (ax + aw / 2, ay + ah / 2);
        let ink = (cx - 60..cx + 60)
            .flat_map(|x| (cy - 12..cy + 12).map(move |y| (x, y)))
            .filter(|&(x, y)| img.get(x, y) == Some(Rgb::INK))
            .count();
        assert!(ink > 50, "no note in the view ({ink} ink pixels)");
    }
}

#[test]
fn degenerate_inputs_are_errors_or_pictures_never_panics() {
    let opts = ParticleOptions::default();
    let p = |x| DVec3::new(x, 0.0, 0.0);
    // A NaN position: an error naming the sphere.
    let err =
        render_particles(&[p(0.0), p(f64::NAN)], &[0.1, 0.1], &[0.0, 0.0], &opts).unwrap_err();
    assert!(
        matches!(
            err,
            RenderError::NonFinite {
                what: "position",
                index: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("sphere 1"), "{err}");
    let err = render_particles(&[p(f64::INFINITY)], &[0.1], &[0.0], &opts).unwrap_err();
    assert!(
        matches!(err, RenderError::NonFinite { index: 0, .. }),
        "{err:?}"
    );
    // Bad radius, bad colour value, mismatched lengths, tiny picture.
    assert!(render_particles(&[p(0.0)], &[-1.0], &[0.0], &opts).is_err());
    assert!(render_particles(&[p(0.0)], &[0.1], &[f64::NAN], &opts).is_err());
    assert!(render_particles(&[p(0.0)], &[0.1, 0.2], &[0.0], &opts).is_err());
    let tiny = ParticleOptions {
        width: 10,
        height: 10,
        ..ParticleOptions::default()
    };
    assert!(render_particles(&[p(0.0)], &[0.1], &[0.0], &tiny).is_err());
    // All spheres at one point, even with radius 0: a picture with a dot.
    let pos = vec![DVec3::new(1.0, 2.0, 3.0); 5];
    for r in [0.0, 0.1] {
        let radii = vec![r; 5];
        let lay = particle_layout(&pos, &radii, &[0.0; 5], &opts).unwrap();
        let img = render_particles(&pos, &radii, &[0.0; 5], &opts).unwrap();
        let (x, y) = lay.side.project(pos[0]);
        assert_ne!(px(&img, x, y), BACKGROUND, "radius {r}");
    }
}

#[test]
fn forty_thousand_spheres_all_show_in_the_top_view() {
    let mut pos = Vec::new();
    let mut values = Vec::new();
    for i in 0..200 {
        for j in 0..200 {
            let (x, y) = (i as f64 * 0.01, j as f64 * 0.01);
            let z = 0.5 - ((x - 1.0).powi(2) + (y - 1.0).powi(2)).sqrt() * 0.4;
            pos.push(DVec3::new(x, y, z));
            values.push(z);
        }
    }
    let radii = vec![0.0045; pos.len()];
    // (Speed is measured by the render benchmark, not asserted here.)
    let opts = ParticleOptions::default();
    let img = render_particles(&pos, &radii, &values, &opts).unwrap();
    assert_eq!(img.width(), 1200);
    let lay = particle_layout(&pos, &radii, &values, &opts).unwrap();
    let hidden = pos
        .iter()
        .filter(|p| {
            let (x, y) = lay.top.project(**p);
            px(&img, x, y) == BACKGROUND
        })
        .count();
    assert_eq!(
        hidden, 0,
        "{hidden} of 40 000 sphere centres show background in the top view"
    );
}

// ---------------------------------------------------------------- plots

#[test]
fn ticks_are_round_and_cover_the_range() {
    let close = |a: &[f64], b: &[f64]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y);
    let t = nice_ticks(0.0, 1.0, 6);
    assert!(
        close(&t.values, &[0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        "{:?}",
        t.values
    );
    assert_eq!(t.label(0.6), "0.6");
    let t = nice_ticks(0.03, 0.93, 6);
    assert!(
        close(&t.values, &[0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        "{:?}",
        t.values
    );
    let t = nice_ticks(-3.0, 47.0, 6);
    assert!(
        close(&t.values, &[-10.0, 0.0, 10.0, 20.0, 30.0, 40.0, 50.0]),
        "{:?}",
        t.values
    );
    assert_eq!(t.label(-10.0), "-10");
    let t = nice_ticks(20.0, 35.0, 6);
    assert!(
        close(&t.values, &[20.0, 25.0, 30.0, 35.0]) || t.step == 5.0,
        "{:?}",
        t.values
    );
    let t = nice_ticks(1e-7, 5e-7, 6);
    assert_eq!(t.step, 1e-7);
    assert_eq!(t.label(3e-7), "3e-7");
    // Zero-width ranges are widened around the value.
    let t = nice_ticks(0.0, 0.0, 6);
    assert!(
        close(&t.values, &[-1.0, -0.5, 0.0, 0.5, 1.0]),
        "{:?}",
        t.values
    );
    let t = nice_ticks(5.0, 5.0, 6);
    assert!(
        t.values[0] <= 4.5 && *t.values.last().unwrap() >= 5.5,
        "{:?}",
        t.values
    );
    assert!(t.values.contains(&5.0));
    // Every result: increasing, evenly spaced by a 1/2/5 step, covering.
    for (lo, hi) in [
        (0.0, 1.0),
        (-0.37, 12.9),
        (1e3, 1e3 + 1.0),
        (-5e-4, -1e-4),
        (25.0, 40.0),
    ] {
        let t = nice_ticks(lo, hi, 6);
        assert!(
            t.values[0] <= lo && *t.values.last().unwrap() >= hi,
            "{lo}..{hi}: {:?}",
            t.values
        );
        assert!(
            (2..=12).contains(&t.values.len()),
            "{lo}..{hi}: {:?}",
            t.values
        );
        let m = t.step / 10f64.powf(t.step.log10().floor());
        assert!(
            [1.0, 2.0, 5.0].iter().any(|v| (m - v).abs() < 1e-9),
            "step {}",
            t.step
        );
        for w in t.values.windows(2) {
            assert!(
                (w[1] - w[0] - t.step).abs() < 1e-9 * t.step.max(1.0),
                "{:?}",
                t.values
            );
        }
    }
    // Non-finite ends do not panic.
    assert!(!nice_ticks(f64::NAN, 1.0, 6).values.is_empty());
}

#[test]
fn plot_points_land_where_the_axes_map_them() {
    let s1 = Series::with_errors(
        "rolling 0",
        &[(0.0, 20.0, 1.0), (0.01, 24.0, 2.0), (0.02, 27.0, 0.5)],
    );
    let s2 = Series::new(
        "rolling 0.001",
        &[(0.0, 22.0), (0.01, 26.0), (0.02, f64::NAN)],
    );
    let series = [s1, s2];
    let opts = PlotOptions {
        title: "angle of repose".into(),
        x_label: "friction".into(),
        y_label: "angle (°)".into(),
        ..PlotOptions::default()
    };
    let lay = plot_layout(&series, &opts).unwrap();
    // The mapping: ends of the axes at the ends of the plot area.
    assert_eq!(lay.x.to_px(lay.x.lo), lay.x.px_lo);
    assert_eq!(lay.x.to_px(lay.x.hi), lay.x.px_hi);
    assert_eq!(lay.y.to_px(lay.y.lo), lay.y.px_lo);
    assert!(lay.y.px_lo > lay.y.px_hi, "y grows upwards");
    let mid = lay.x.to_px((lay.x.lo + lay.x.hi) / 2.0);
    assert!((mid - (lay.x.px_lo + lay.x.px_hi) / 2.0).abs() < 1e-9);
    // The data (error bars included) lies within the axes.
    assert!(lay.y.lo <= 19.0 && lay.y.hi >= 27.5, "{:?}", lay.y);
    let img = plot_lines(&series, &opts).unwrap();
    assert_eq!((img.width(), img.height()), (900, 600));
    // Markers of series 2 (drawn last) are at the mapped points.
    for (x, y) in [(0.0, 22.0), (0.01, 26.0)] {
        let c = px(&img, lay.x.to_px(x), lay.y.to_px(y));
        assert_eq!(c, series_colour(1), "marker at ({x}, {y})");
    }
    // Series 1's last marker, and its error-bar caps at y ± sd (x offset
    // by a pixel from the bar itself).
    let (x, y, e) = (0.02, 27.0, 0.5);
    assert_eq!(px(&img, lay.x.to_px(x), lay.y.to_px(y)), series_colour(0));
    for yy in [y - e, y + e] {
        let (cx, cy) = (lay.x.to_px(x) + 3.0, lay.y.to_px(yy));
        let hit = [-1.0, 0.0, 1.0]
            .iter()
            .any(|d| px(&img, cx, cy + d) == series_colour(0));
        assert!(hit, "no cap at y = {yy}");
    }
    // Halfway along a line between two markers: the series colour.
    let (ax, ay) = (lay.x.to_px(0.0), lay.y.to_px(20.0));
    let (bx, by) = (lay.x.to_px(0.01), lay.y.to_px(24.0));
    let (mx, my) = ((ax + bx) / 2.0, (ay + by) / 2.0);
    let hit = [-1.0, 0.0, 1.0]
        .iter()
        .any(|d| px(&img, mx, my + d) == series_colour(0));
    assert!(hit, "no line between the first two markers");
}

#[test]
fn plots_of_nothing_or_a_point_are_pictures() {
    let opts = PlotOptions::default();
    let img = plot_lines(&[], &opts).unwrap();
    assert_eq!(img.width(), 900);
    let one = [Series::new("", &[(1.0, 2.0)])];
    let lay = plot_layout(&one, &opts).unwrap();
    assert!(lay.x.lo < 1.0 && lay.x.hi > 1.0 && lay.y.lo < 2.0 && lay.y.hi > 2.0);
    plot_lines(&one, &opts).unwrap();
    let nan = [Series::new("nan", &[(f64::NAN, 1.0), (1.0, f64::INFINITY)])];
    plot_lines(&nan, &opts).unwrap();
    let tiny = PlotOptions {
        width: 5,
        ..PlotOptions::default()
    };
    assert!(plot_lines(&one, &tiny).is_err());
}

// ---------------------------------------------------------------- contact sheet

#[test]
fn contact_sheet_has_the_documented_size() {
    let red = Rgb([200, 0, 0]);
    let pic = Image::new(1200, 600, red).unwrap();
    assert_eq!(thumbnail_size(1200, 600), (400, 200));
    assert_eq!(thumbnail_size(300, 100), (300, 100));
    for n in 1..=5usize {
        for c in 1..=4usize {
            let items: Vec<(Image, String)> =
                (0..n).map(|k| (pic.clone(), format!("run {k}"))).collect();
            let sheet = contact_sheet(&items, c).unwrap();
            let cols = c.min(n) as u32;
            let rows = n.div_ceil(c.min(n)) as u32;
            let w = cols * THUMB_WIDTH + (cols + 1) * SHEET_GAP;
            let h = rows * (200 + CAPTION_HEIGHT) + (rows + 1) * SHEET_GAP;
            assert_eq!((sheet.width(), sheet.height()), (w, h), "n = {n}, c = {c}");
            assert_eq!(sheet_size(n, c, 200), (u64::from(w), u64::from(h)));
            // The last thumbnail's middle shows the picture.
            let k = n - 1;
            let (col, row) = ((k % cols as usize) as u32, (k / cols as usize) as u32);
            let x = SHEET_GAP + col * (THUMB_WIDTH + SHEET_GAP) + THUMB_WIDTH / 2;
            let y = SHEET_GAP + row * (200 + CAPTION_HEIGHT + SHEET_GAP) + 100;
            assert_eq!(sheet.get(i64::from(x), i64::from(y)), Some(red));
        }
    }
    assert!(contact_sheet(&[(pic.clone(), "x".into())], 0).is_err());
    let empty = contact_sheet(&[], 3).unwrap();
    assert!(empty.width() > 0 && empty.height() > 0);
}

#[test]
fn thumbnails_are_area_averages() {
    // Alternating black and white columns average to mid grey.
    let mut img = Image::new(800, 400, Rgb::WHITE).unwrap();
    for x in (0..800).step_by(2) {
        img.fill_rect(x, 0, 1, 400, Rgb::BLACK);
    }
    let sheet = contact_sheet(&[(img, "stripes".into())], 1).unwrap();
    let c = sheet
        .get(i64::from(SHEET_GAP + 200), i64::from(SHEET_GAP + 100))
        .unwrap();
    assert!(c.0.iter().all(|&v| (126..=129).contains(&v)), "{c:?}");
}

// ---------------------------------------------------------------- runs and the CLI

/// `repose run scenes/sphere_on_plane.ron` for 0.05 s on the CPU into `out`.
fn run_small(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "scenes/sphere_on_plane.ron",
        "--backend",
        "cpu",
        "--no-frames",
        "--set",
        "duration=0.05",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    repose(args)
}

#[test]
fn a_run_writes_a_decodable_final_png() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = run_small(&out, &[]);
    assert!(o.status.success(), "{}", show(&o));
    let png_path = out.join("final.png");
    let (w, h, ct, bytes) = decode_with_png_crate(&png_path);
    assert_eq!((w, h, ct), (1200, 600, png::ColorType::Rgb));
    // Not a blank picture: the sphere is drawn in colour.
    let coloured = bytes
        .chunks_exact(3)
        .filter(|p| p.iter().max().unwrap() - p.iter().min().unwrap() > 40)
        .count();
    assert!(coloured > 1000, "only {coloured} coloured pixels");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("final.png"),
        "the log names the picture\n{}",
        show(&o)
    );

    // Scene settings: size and colour from output.picture.
    let out2 = dir.path().join("run2");
    let o = run_small(
        &out2,
        &[
            "--set",
            "output.picture.width=400",
            "--set",
            "output.picture.height=300",
            "--set",
            "output.picture.colour=Speed",
        ],
    );
    assert!(o.status.success(), "{}", show(&o));
    let (w, h, _, _) = decode_with_png_crate(&out2.join("final.png"));
    assert_eq!((w, h), (400, 300));

    // --no-picture, and output.picture.enabled=false.
    for extra in [
        &["--no-picture"][..],
        &["--set", "output.picture.enabled=false"][..],
    ] {
        let out3 = dir.path().join("run3");
        let o = run_small(&out3, extra);
        assert!(o.status.success(), "{}", show(&o));
        assert!(out3.join("final.csv").exists());
        assert!(!out3.join("final.png").exists(), "{extra:?}");
        fs::remove_dir_all(&out3).unwrap();
    }

    // A picture too small to lay out is a scene error naming the field.
    let o = run_small(
        &dir.path().join("run4"),
        &["--set", "output.picture.width=10"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("output.picture.width"),
        "{}",
        show(&o)
    );

    // `repose render` re-renders the run, to DIR/final.png or --out.
    let other = dir.path().join("speed.png");
    let o = repose([
        OsStr::new("render"),
        out.as_os_str(),
        OsStr::new("--colour"),
        OsStr::new("speed"),
        OsStr::new("--out"),
        other.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", show(&o));
    let (w, h, _, _) = decode_with_png_crate(&other);
    assert_eq!((w, h), (1200, 600));
    fs::remove_file(&png_path).unwrap();
    let o = repose([OsStr::new("render"), out.as_os_str()]);
    assert!(o.status.success(), "{}", show(&o));
    decode_with_png_crate(&png_path);
}

/// `repose render DIR` leaves out the spheres below the scene's
/// `analysis.floor`, as the run's picture does: a sphere 20 m below the
/// pile would otherwise take the frame, and the pile would shrink to a
/// few pixels. The same directory without the floor shows it that way.
#[test]
fn render_leaves_out_spheres_below_the_analysis_floor() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = run_small(&out, &["--no-picture"]);
    assert!(o.status.success(), "{}", show(&o));
    // A second sphere far below the plane, as if it had fallen off.
    let csv = fs::read_to_string(out.join("final.csv")).unwrap();
    let row = csv.lines().nth(1).expect("one sphere").to_string();
    let mut cols: Vec<String> = row.split(',').map(str::to_string).collect();
    cols[0] = "1".into();
    cols[3] = "-20".into();
    fs::write(
        out.join("final.csv"),
        format!("{}{}\n", csv, cols.join(",")),
    )
    .unwrap();
    let scene = fs::read_to_string(out.join("scene.ron")).unwrap();
    let coloured = |path: &Path| {
        let (_, _, _, bytes) = decode_with_png_crate(path);
        bytes
            .chunks_exact(3)
            .filter(|p| p.iter().max().unwrap() - p.iter().min().unwrap() > 40)
            .count()
    };
    let mut counts = Vec::new();
    for (floor, name) in [(false, "all.png"), (true, "floor.png")] {
        // The run writes every field: analysis.floor is there as None.
        assert!(scene.contains("floor: None,"), "{scene}");
        let text = if floor {
            scene.replacen("floor: None,", "floor: Some(-1.0),", 1)
        } else {
            scene.clone()
        };
        fs::write(out.join("scene.ron"), text).unwrap();
        let png = dir.path().join(name);
        let o = repose([
            OsStr::new("render"),
            out.as_os_str(),
            OsStr::new("--out"),
            png.as_os_str(),
        ]);
        assert!(o.status.success(), "{}", show(&o));
        counts.push(coloured(&png));
    }
    assert!(
        counts[1] > 10 * counts[0].max(1),
        "coloured pixels without the floor {}, with it {}: the fallen sphere still frames the picture",
        counts[0],
        counts[1]
    );
}

/// Asserts exit code 1, one `error: …` line on stderr containing `parts`.
fn assert_one_error(o: &Output, parts: &[&str]) {
    assert_eq!(o.status.code(), Some(1), "{}", show(o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{}", show(o));
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}", show(o));
    assert!(lines[0].starts_with("error: "), "{}", show(o));
    for p in parts {
        assert!(lines[0].contains(p), "expected {p:?} in {:?}", lines[0]);
    }
}

#[test]
fn render_command_reports_missing_and_malformed_files() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let o = repose([OsStr::new("render"), missing.as_os_str()]);
    assert_one_error(&o, &["nope", "not a directory"]);

    let o = repose([OsStr::new("render"), dir.path().as_os_str()]);
    assert_one_error(&o, &["final.csv"]);

    let csv = dir.path().join("final.csv");
    fs::write(
        &csv,
        "id,x,y,z,vx,vy,vz,wx,wy,wz,radius\n0,0,0,0.1,0,0,0,0,0,0,0.05\n1,0,zz,0,0,0,0,0,0,0,0.05\n",
    )
    .unwrap();
    let o = repose([OsStr::new("render"), dir.path().as_os_str()]);
    assert_one_error(&o, &["final.csv:3", "`y`"]);

    fs::write(
        &csv,
        "id,x,y,z,vx,vy,vz,wx,wy,wz,radius\n0,0,0,NaN,0,0,0,0,0,0,0.05\n",
    )
    .unwrap();
    let o = repose([OsStr::new("render"), dir.path().as_os_str()]);
    assert_one_error(&o, &["sphere 0", "position"]);
    assert!(!dir.path().join("final.png").exists());

    // An empty final.csv (header only) renders the "no spheres" picture.
    fs::write(&csv, "id,x,y,z,vx,vy,vz,wx,wy,wz,radius\n").unwrap();
    let o = repose([OsStr::new("render"), dir.path().as_os_str()]);
    assert!(o.status.success(), "{}", show(&o));
    decode_with_png_crate(&dir.path().join("final.png"));
}

/// A body that is not a sphere is drawn from its surface: a long thin box
/// along x (1 m × 0.1 m × 0.1 m, bounding radius 0.51 m) covers its own
/// rectangle in both views — coloured at its centre and near its ends on
/// the x axis, background a bounding radius's half away across it, where
/// its bounding sphere would have been drawn.
#[test]
fn a_box_is_drawn_as_its_own_silhouette_not_its_bounding_sphere() {
    use repose::render::render_bodies;
    use repose::shape::{surface_triangles, BodyShape, Shape};
    let shape = BodyShape::new(Shape::Box {
        half_extents: DVec3::new(0.5, 0.05, 0.05),
    });
    let pos = [DVec3::ZERO, DVec3::new(-1.5, -1.5, -1.5)];
    let radii = [DVec3::new(0.5, 0.05, 0.05).length(), 0.01];
    let values = [1.0, 0.0];
    let surfaces = vec![
        Some(surface_triangles(&shape, pos[0], glam::DQuat::IDENTITY)),
        None,
    ];
    let opts = ParticleOptions::default();
    let lay = particle_layout(&pos, &radii, &values, &opts).unwrap();
    let img = render_bodies(&pos, &radii, &values, &surfaces, &opts).unwrap();
    let yellow = viridis(1.0);
    for view in [lay.side, lay.top] {
        for x in [0.0, 0.45, -0.45] {
            let (cx, cy) = view.project(DVec3::new(x, 0.0, 0.0));
            let c = px(&img, cx, cy);
            assert!(
                is_shade_of(c, yellow) && c != BACKGROUND,
                "box at x = {x}: {c:?}"
            );
        }
        // Across the box, 0.25 m from its axis: inside the bounding sphere,
        // outside the box.
        let (cx, cy) = view.project(DVec3::ZERO);
        let off = 0.25 * view.scale;
        assert_eq!(px(&img, cx, cy - off), BACKGROUND, "above the box's side");
        assert_eq!(px(&img, cx, cy + off), BACKGROUND, "below the box's side");
    }
}

// ---------------------------------------------------------------- plot texts

/// Whether the box has some dark (text) pixels.
fn inked(img: &Image, x: i32, y: i32, w: u32, h: u32) -> bool {
    (y..y + h as i32).any(|yy| {
        (x..x + w as i32).any(|xx| {
            img.get(i64::from(xx), i64::from(yy))
                .is_some_and(|c| c.0.iter().all(|&v| v < 140))
        })
    })
}

#[test]
fn plot_texts_are_measured_placed_inside_the_picture_and_drawn() {
    use repose::render::plot::{text_size, MIN_FONT_PX};
    // The embedded font is there: text has a size without any system font.
    let (w, h) = text_size("angle (°)", 20.0);
    assert!(w > 40 && h > 10, "text_size gave {w}×{h}");
    let series = [
        Series::with_errors(
            "mean angle over three seeds ± sd",
            &[
                (0.0002, 10.0, 4.0),
                (0.0006, 27.0, 2.0),
                (0.0012, 34.0, 3.0),
            ],
        ),
        Series::new("target 27.96°", &[(0.0002, 27.96), (0.0012, 27.96)]),
    ];
    for (width, height, title) in [
        (
            900,
            600,
            "repose_small to 27.96°: noise limited".to_string(),
        ),
        (
            300,
            200,
            "a title far too long for a picture three hundred pixels wide: ".repeat(3),
        ),
    ] {
        let opts = PlotOptions {
            width,
            height,
            title: title.clone(),
            x_label: "materials.0.rolling+materials.0.spinning".into(),
            y_label: "angle of repose (°)".into(),
            log_x: false,
        };
        let lay = plot_layout(&series, &opts).unwrap();
        let img = plot_lines(&series, &opts).unwrap();
        for t in &lay.texts {
            assert!(
                t.x >= 0
                    && t.y >= 0
                    && t.x + t.w as i32 <= width as i32
                    && t.y + t.h as i32 <= height as i32,
                "{width}×{height}: {:?} at ({}, {}) size {}×{} leaves the picture",
                t.text,
                t.x,
                t.y,
                t.w,
                t.h
            );
            assert!(t.px >= MIN_FONT_PX, "{:?} set at {} px", t.text, t.px);
            assert!(
                inked(&img, t.x, t.y, t.w, t.h),
                "{width}×{height}: no ink where {:?} should be",
                t.text
            );
        }
        let texts: Vec<&str> = lay.texts.iter().map(|t| t.text.as_str()).collect();
        // Tick labels whole; the last x tick (the widest) included.
        for v in &lay.x_ticks.values {
            let l = lay.x_ticks.label(*v);
            assert!(
                texts.contains(&l.as_str()),
                "{width}×{height}: x tick {l} missing: {texts:?}"
            );
        }
        if width == 900 {
            for whole in [
                title.as_str(),
                "materials.0.rolling+materials.0.spinning",
                "angle of repose (°)",
                "mean angle over three seeds ± sd",
                "target 27.96°",
            ] {
                assert!(
                    texts.contains(&whole),
                    "{whole:?} not drawn whole: {texts:?}"
                );
            }
        } else {
            // Too long even at the smallest size: shortened visibly.
            let t = &lay.texts[0];
            assert!(t.text.ends_with('…') && t.px == MIN_FONT_PX, "{t:?}");
        }
    }
}

/// The legend goes to the corner of the plot area that hides the least of
/// the data: away from a curve that ends in the top right (the calibration
/// plot's usual shape), and to the top right where that is free.
#[test]
fn plot_legend_takes_a_corner_that_hides_no_point() {
    let opts = PlotOptions {
        width: 900,
        height: 600,
        title: "legend placement".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        log_x: false,
    };
    // The calibration plot's shape: the last points near the top right.
    let rising = [
        (0.0, 10.0, 2.0),
        (0.5, 29.0, 5.0),
        (0.7, 39.0, 3.0),
        (0.8, 40.0, 3.0),
        (0.9, 41.0, 3.0),
        (1.0, 42.0, 2.0),
    ];
    let falling: Vec<(f64, f64, f64)> = rising.iter().map(|&(x, y, e)| (1.0 - x, y, e)).collect();
    for (name, data, top_right) in [
        ("rising", &rising[..], false),
        ("falling", &falling[..], true),
    ] {
        let series = [
            Series::with_errors("mean ± sd, 3 seeds", data),
            Series::new("target 29.6°", &[(0.0, 29.6), (1.0, 29.6)]),
        ];
        let lay = plot_layout(&series, &opts).unwrap();
        let (bx, by, bw, bh) = lay.legend.as_ref().expect("a legend").rect;
        for &(x, y, _) in data {
            let (px, py) = (lay.x.to_px(x), lay.y.to_px(y));
            assert!(
                !(px >= f64::from(bx)
                    && px <= f64::from(bx) + f64::from(bw)
                    && py >= f64::from(by)
                    && py <= f64::from(by) + f64::from(bh)),
                "{name}: the legend ({bx}, {by}, {bw}×{bh}) hides the point ({x}, {y}) at ({px:.0}, {py:.0})"
            );
        }
        let right = lay.x.px_hi as i32;
        let at_top_right = bx + bw as i32 > right - 20 && by < lay.y.px_hi as i32 + 20;
        assert_eq!(
            at_top_right, top_right,
            "{name}: legend at ({bx}, {by}, {bw}×{bh}), plot area right edge {right}, top {}",
            lay.y.px_hi
        );
    }
}
