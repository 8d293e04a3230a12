//! The force-chain picture (`repose render DIR --force-chains`): a side
//! view of a slice through the bodies with each loaded contact drawn as a
//! line between the two centres (to the contact point for a boundary),
//! as thick and as bright as its normal force.
//!
//! The view looks along +y (or −x, [`LookAlong::X`]): x to the right, z
//! up. Only the slice |y − ȳ| ≤ `half_slab` is drawn (ȳ the bodies' mean;
//! default two mean radii), since a pile's chains seen through its whole
//! depth are a tangle. Beads are pale disks; a contact of normal force f
//! is a line of width 1 + (w_max − 1) f / f_max pixels (w_max: 0.7 of a
//! mean radius) coloured by [`viridis`] of f / f_max, weakest drawn first
//! so that the strong chains lie on top. Contacts without load (pairs in
//! the collision envelope, f = 0) are left out.

use std::path::Path;

use glam::DVec3;

use super::colormap::viridis;
use super::image::{Image, Rgb};
use super::text::{draw_text, draw_text_vertical, text_height};
use super::{fmt_length, fmt_num, RenderError};
use crate::output::csv::read_final_csv;
use crate::scene::LookAlong;

/// One contact to draw: its two ends (centres, or a centre and the point
/// on a boundary) and its normal force (N).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chain {
    /// End A (a body's centre).
    pub a: DVec3,
    /// End B (a body's centre, or the contact point on a boundary).
    pub b: DVec3,
    /// The normal force (N).
    pub force: f64,
}

/// What a force-chain picture shows besides the contacts.
#[derive(Clone, Debug)]
pub struct ChainOptions {
    /// Picture width and height in pixels.
    pub width: u32,
    /// Picture height in pixels.
    pub height: u32,
    /// Half the thickness of the slice drawn (m); `None`: two mean radii.
    pub half_slab: Option<f64>,
    /// The axis the view looks along.
    pub look_along: LookAlong,
    /// A line of text above the picture.
    pub caption: String,
}

/// Draws the bodies (`centres`, `radii`) and the contacts `chains`
/// (module docs).
pub fn render_chains(
    centres: &[DVec3],
    radii: &[f64],
    chains: &[Chain],
    opts: &ChainOptions,
) -> Result<Image, RenderError> {
    if centres.len() != radii.len() {
        return Err(RenderError::Invalid(format!(
            "{} centres but {} radii",
            centres.len(),
            radii.len()
        )));
    }
    let turn = |p: DVec3| opts.look_along.frame(p);
    let mut img = Image::new(opts.width, opts.height, Rgb([255, 255, 255]))?;
    let n = centres.len().max(1) as f64;
    let mean_r = radii.iter().sum::<f64>() / n;
    let y_mid = centres.iter().map(|&p| turn(p).y).sum::<f64>() / n;
    let half = opts.half_slab.unwrap_or(2.0 * mean_r);
    let inside = |p: DVec3| (turn(p).y - y_mid).abs() <= half;
    let shown: Vec<usize> = (0..centres.len()).filter(|&i| inside(centres[i])).collect();
    let lines: Vec<&Chain> = chains
        .iter()
        .filter(|c| c.force > 0.0 && inside(c.a) && c.force.is_finite())
        .collect();
    // The view's extent: the shown bodies with their radii.
    let (mut x0, mut x1, mut z0, mut z1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &i in &shown {
        let p = turn(centres[i]);
        x0 = x0.min(p.x - radii[i]);
        x1 = x1.max(p.x + radii[i]);
        z0 = z0.min(p.z - radii[i]);
        z1 = z1.max(p.z + radii[i]);
    }
    let ts = if opts.width >= 900 { 2 } else { 1 };
    let th = i64::from(text_height(ts));
    let (top, left, bottom) = (th * 2 + 8, 10, th + 16);
    let bar_w = 90 * i64::from(ts);
    let area_w = (i64::from(opts.width) - left - bar_w - 10).max(1) as f64;
    let area_h = (i64::from(opts.height) - top - bottom).max(1) as f64;
    draw_text(&mut img, left, 6, &opts.caption, ts, Rgb([0, 0, 0]));
    if shown.is_empty() || !(x1 > x0 && z1 > z0) {
        draw_text(
            &mut img,
            left,
            top + 10,
            "no bodies in the slice",
            ts,
            Rgb([120, 0, 0]),
        );
        return Ok(img);
    }
    let scale = (area_w / (x1 - x0)).min(area_h / (z1 - z0));
    let ox = left as f64 + 0.5 * (area_w - scale * (x1 - x0));
    let oz = top as f64 + 0.5 * (area_h + scale * (z1 - z0));
    let px = |p: DVec3| {
        let q = turn(p);
        (ox + scale * (q.x - x0), oz - scale * (q.z - z0))
    };
    for &i in &shown {
        let (cx, cy) = px(centres[i]);
        let r = radii[i] * scale;
        img.fill_circle(cx, cy, r, Rgb([200, 200, 200]));
        img.fill_circle(cx, cy, (r - 1.0).max(0.0), Rgb([238, 238, 238]));
    }
    let f_max = lines.iter().map(|c| c.force).fold(0.0, f64::max);
    let w_max = (0.7 * mean_r * scale).max(2.0);
    let mut order: Vec<&&Chain> = lines.iter().collect();
    order.sort_by(|p, q| p.force.total_cmp(&q.force));
    for c in order {
        let t = c.force / f_max;
        let (ax, ay) = px(c.a);
        let (bx, by) = px(c.b);
        img.line(ax, ay, bx, by, 1.0 + (w_max - 1.0) * t, viridis(t));
    }
    // Colour bar: 0 at the bottom, f_max at the top.
    let bx = i64::from(opts.width) - bar_w + 10;
    let (by0, by1) = (top, top + area_h as i64);
    for y in by0..by1 {
        let t = 1.0 - (y - by0) as f64 / (by1 - by0).max(1) as f64;
        img.fill_rect(bx, y, 14 * i64::from(ts), 1, viridis(t));
    }
    let lx = bx + 16 * i64::from(ts);
    draw_text(&mut img, lx, by0, &fmt_num(f_max), ts, Rgb([0, 0, 0]));
    draw_text(&mut img, lx, by1 - th, "0", ts, Rgb([0, 0, 0]));
    draw_text_vertical(
        &mut img,
        lx + 8,
        (by0 + by1) / 2,
        "normal force (N)",
        ts,
        Rgb([0, 0, 0]),
    );
    let foot = format!(
        "{} loaded contacts, slice {} thick; line width and colour: normal force",
        lines.len(),
        fmt_length(2.0 * half)
    );
    draw_text(
        &mut img,
        left,
        i64::from(opts.height) - th - 6,
        &foot,
        ts,
        Rgb([60, 60, 60]),
    );
    Ok(img)
}

/// The force chains of a run's output directory: its bodies from
/// `final.csv` and the contacts of its last frame (the `contacts_NNNNN.csv`
/// of the largest N, written with `--contacts`; the state of `final.csv`).
///
/// Errors: no contact table in `dir` (the run was made without
/// `--contacts`), a malformed table or `final.csv` (naming the file and
/// line), a contact naming a body `final.csv` does not have.
pub fn render_chains_dir(
    dir: &Path,
    width: u32,
    height: u32,
    look_along: LookAlong,
    half_slab: Option<f64>,
) -> Result<Image, RenderError> {
    let rows = read_final_csv(dir.join("final.csv"))?;
    let last = std::fs::read_dir(dir)
        .map_err(|err| RenderError::Io {
            path: dir.to_owned(),
            err,
        })?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.starts_with("contacts_") && n.ends_with(".csv"))
        .max()
        .ok_or_else(|| {
            RenderError::Invalid(format!(
                "{}: no contacts_NNNNN.csv: run the scene with --contacts (or output.contacts: true) to draw its force chains",
                dir.display()
            ))
        })?;
    let path = dir.join(&last);
    let text = crate::output::bounded::read_text(&path).map_err(|err| RenderError::Io {
        path: path.clone(),
        err,
    })?;
    let centre = |i: usize| DVec3::new(rows[i][1], rows[i][2], rows[i][3]);
    let mut chains = Vec::new();
    for (k, line) in text.lines().enumerate().skip(1) {
        let bad =
            |why: String| RenderError::Invalid(format!("{}:{}: {why}", path.display(), k + 1));
        let f: Vec<&str> = line.split(',').collect();
        // 19 columns; 18 in files written before the elastic energy.
        if !(18..=19).contains(&f.len()) {
            return Err(bad(format!("{} columns, expected 19", f.len())));
        }
        let num = |j: usize| {
            f[j].parse::<f64>()
                .map_err(|_| bad(format!("column {}: {:?} is not a number", j + 1, f[j])))
        };
        let body = |j: usize| -> Result<usize, RenderError> {
            let i: usize = f[j]
                .parse()
                .map_err(|_| bad(format!("column {}: {:?} is not a body id", j + 1, f[j])))?;
            if i >= rows.len() {
                return Err(bad(format!(
                    "body {i}, but final.csv has {} bodies",
                    rows.len()
                )));
            }
            Ok(i)
        };
        let a = centre(body(0)?);
        let b = if f[1].is_empty() {
            DVec3::new(num(3)?, num(4)?, num(5)?)
        } else {
            centre(body(1)?)
        };
        chains.push(Chain {
            a,
            b,
            force: num(10)?,
        });
    }
    let centres: Vec<DVec3> = (0..rows.len()).map(centre).collect();
    let radii: Vec<f64> = rows.iter().map(|r| r[10]).collect();
    let caption = format!("force chains: {} ({})", dir.display(), last);
    render_chains(
        &centres,
        &radii,
        &chains,
        &ChainOptions {
            width,
            height,
            half_slab,
            look_along,
            caption,
        },
    )
}
