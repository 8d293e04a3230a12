//! Pictures people can open without ParaView: `final.png` after every run
//! (a side view and a top view of the spheres), line plots for parameter
//! sweeps (`sweep.png`), and contact sheets of many pictures.
//!
//! Everything here is plain Rust on the CPU and needs nothing from the
//! machine: the particle pictures' text is drawn from a built-in bitmap
//! font ([`text`]); plots are drawn by `plotters` with anti-aliased text
//! from the DejaVu Sans font embedded in the binary ([`plot`]); PNG files
//! are written by the `png` crate ([`png_io`]). The pieces:
//!
//! | item | what it makes |
//! | --- | --- |
//! | [`Image`], [`Rgb`] | an RGB raster with simple drawing operations ([`image`]) |
//! | [`write_png`], [`read_png`] | PNG files, written atomically |
//! | [`render_particles`] | the particle picture: shaded spheres coloured by height or speed, colour bar, scale bar, caption ([`particles`]) |
//! | [`render_bodies`] | the same with bodies that are not spheres drawn from their surface triangles |
//! | [`render_output_dir`] | that picture from a run's `final.csv` (and `summary.json` for the caption) |
//! | [`plot_lines`] | an x–y line plot with ticks, labels, legend and error bars, every text measured so none is cut off ([`plot`]) |
//! | [`contact_sheet`] | thumbnails of several pictures in a grid, with captions ([`sheet`]) |
//!
//! Bad input (a NaN position, mismatched lengths, an impossible image
//! size, a malformed file) is a [`RenderError`], never a panic.

pub mod chains;
pub mod colormap;
pub mod image;
pub mod particles;
pub mod plot;
pub mod png_io;
pub mod sheet;
pub mod text;

use std::io;
use std::path::{Path, PathBuf};

use glam::DVec3;
use thiserror::Error;

use crate::output::csv::read_final_csv;
use crate::output::summary::read_summary;
use crate::output::ReadError;

pub use self::image::{Image, Rgb};
pub use self::particles::{render_bodies, render_particles, ParticleOptions, Surface};
pub use self::plot::{nice_ticks, plot_lines, PlotOptions, Series, SeriesStyle};
pub use self::png_io::{read_png, write_png};
pub use self::sheet::contact_sheet;
use crate::scene::{ColourBy, LookAlong};

/// Why a picture could not be made.
#[derive(Debug, Error)]
pub enum RenderError {
    /// An image side is 0 or too large.
    #[error("image size {width}×{height} is not allowed (each side must be 1…{max} pixels)")]
    Size {
        /// Asked-for width.
        width: u32,
        /// Asked-for height.
        height: u32,
        /// The largest allowed side.
        max: u32,
    },
    /// A sphere has a non-finite (or negative, for a radius) value.
    #[error("sphere {index}: {what} is {value}; only finite values can be drawn")]
    NonFinite {
        /// Which quantity (`position`, `radius`, `colour value`).
        what: &'static str,
        /// The sphere's index.
        index: usize,
        /// The offending value, as text.
        value: String,
    },
    /// The input does not fit together (lengths, sizes, file contents).
    #[error("{0}")]
    Invalid(String),
    /// A file could not be read.
    #[error("{}: {err}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        err: io::Error,
    },
    /// A run's output file could not be read back.
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// `v` in at most about 4 significant digits, without trailing zeros:
/// `0`, `0.0125`, `3.5`, `1200`, `-2.5e-6`, `1.2e9`.
pub fn fmt_num(v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    if (1e-3..1e6).contains(&a) {
        let digits = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
        let s = format!("{v:.digits$}");
        let s = if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        };
        if s == "-0" {
            "0".to_string()
        } else {
            s
        }
    } else {
        let s = format!("{v:.3e}");
        // Trim zeros of the mantissa: 1.500e-6 → 1.5e-6.
        match s.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => s,
        }
    }
}

/// A length in the unit that reads best: `5 cm`, `2 mm`, `1 m`, `500 µm`,
/// `10 km`.
pub fn fmt_length(metres: f64) -> String {
    let a = metres.abs();
    let (v, unit) = if a >= 1000.0 {
        (metres / 1000.0, "km")
    } else if a >= 1.0 {
        (metres, "m")
    } else if a >= 0.01 {
        (metres * 100.0, "cm")
    } else if a >= 0.001 {
        (metres * 1000.0, "mm")
    } else {
        (metres * 1e6, "µm")
    };
    format!("{} {unit}", fmt_num(v))
}

/// The largest round length (1, 2 or 5 × a power of ten) not above `x`;
/// `None` when `x` is not finite and positive.
pub fn nice_step_below(x: f64) -> Option<f64> {
    if !(x.is_finite() && x > 0.0) {
        return None;
    }
    let e = x.log10().floor() as i32;
    let p = pow10(e);
    let m = x / p;
    let mant = if m >= 5.0 {
        5.0
    } else if m >= 2.0 {
        2.0
    } else {
        1.0
    };
    Some(mant * p)
}

/// 10^e, exact for |e| ≤ 22.
pub(crate) fn pow10(e: i32) -> f64 {
    if e >= 0 {
        10f64.powi(e)
    } else {
        1.0 / 10f64.powi(-e)
    }
}

/// The caption of a run's picture: scene name, simulated time, number of
/// bodies ("spheres" when every body is one) and what the colours show.
pub fn run_caption(
    scene: &str,
    time: f64,
    bodies: usize,
    all_spheres: bool,
    colour: ColourBy,
) -> String {
    let what = match colour {
        ColourBy::Height => "height",
        ColourBy::Speed => "speed",
    };
    let noun = if all_spheres { "spheres" } else { "bodies" };
    format!(
        "{scene}   t = {} s   {bodies} {noun}   colour: {what}",
        fmt_num(time)
    )
}

/// The bodies a picture of a pile shows, by index, given their centres'
/// heights: with the scene's `analysis.floor`, those at or above it (the
/// spheres below have fallen off a plate: they are not part of the pile and
/// would only shrink it in the frame); without one, all. Logs how many
/// were left out. The run's own picture and `repose render DIR` both
/// choose by it.
pub fn shown_above_floor(floor: Option<f64>, heights: impl Iterator<Item = f64>) -> Vec<usize> {
    let mut total = 0;
    let shown: Vec<usize> = heights
        .enumerate()
        .inspect(|_| total += 1)
        .filter(|&(_, z)| floor.is_none_or(|f| z >= f))
        .map(|(i, _)| i)
        .collect();
    if shown.len() < total {
        log::info!(
            "picture: {} spheres below the floor (analysis.floor) left out",
            total - shown.len()
        );
    }
    shown
}

/// Renders the particle picture of a run's output directory `dir` from its
/// `final.csv` (positions, radii, velocities), coloured by `colour`, the
/// side view looking along `look_along`. When
/// `dir/summary.json` can be read, the caption names the scene and the
/// simulated time. From the run's `scene.ron`: spheres below its
/// `analysis.floor` are left out, as the run's own picture leaves them
/// out, and its still mesh boundaries are drawn.
///
/// Errors: [`RenderError::Read`] when `final.csv` is missing or malformed
/// (naming the file, line and column), and the errors of
/// [`render_particles`].
pub fn render_output_dir(
    dir: &Path,
    colour: ColourBy,
    look_along: LookAlong,
    width: u32,
    height: u32,
) -> Result<Image, RenderError> {
    let rows = read_final_csv(dir.join("final.csv"))?;
    let scene = crate::scene::Scene::load(&dir.join("scene.ron"), &[]);
    let floor = scene.as_ref().ok().and_then(|s| s.analysis.floor);
    let shown = shown_above_floor(floor, rows.iter().map(|r| r[3]));
    let positions: Vec<DVec3> = shown
        .iter()
        .map(|&i| DVec3::new(rows[i][1], rows[i][2], rows[i][3]))
        .collect();
    let velocities: Vec<DVec3> = shown
        .iter()
        .map(|&i| DVec3::new(rows[i][4], rows[i][5], rows[i][6]))
        .collect();
    let radii: Vec<f64> = shown.iter().map(|&i| rows[i][10]).collect();
    let values = colour.values(&positions, &velocities)?;
    let mut surfaces = surfaces_of_output(dir, scene.as_ref(), &rows);
    if !surfaces.is_empty() {
        surfaces = shown.iter().map(|&i| surfaces[i].take()).collect();
    }
    let caption = match read_summary(dir.join("summary.json")) {
        Ok(s) => run_caption(
            &s.scene,
            s.simulated_time,
            shown.len(),
            surfaces.iter().all(Option::is_none),
            colour,
        ),
        Err(_) => format!(
            "{}   {} spheres   colour: {}",
            dir.join("final.csv").display(),
            shown.len(),
            colour.label()
        ),
    };
    let opts = ParticleOptions {
        width,
        height,
        colour_label: colour.label().to_string(),
        caption: Some(caption),
        look_along,
        outlines: scene
            .as_ref()
            .map_or_else(|_| Vec::new(), outlines_of_output),
        walls: scene.map_or_else(|_| Vec::new(), |s| walls_of_output(&s)),
    };
    render_bodies(&positions, &radii, &values, &surfaces, &opts)
}

/// Points per circle of a cylinder's outline.
const OUTLINE_POINTS: usize = 96;

/// The outlines of the cylinder boundaries (a drum, a cylindrical
/// container) for [`ParticleOptions::outlines`]: the circles of both ends
/// and four lines along the axis between them, at the boundary's current
/// place. Looking along the axis, as a drum's picture does, the circles
/// coincide and show the drum's wall around the bed.
pub fn cylinder_outlines(boundaries: &[crate::boundary::Boundary]) -> Vec<Vec<DVec3>> {
    let mut out = Vec::new();
    for b in boundaries {
        let crate::boundary::Shape::Cylinder {
            axis,
            radius,
            half_length,
            ..
        } = b.shape
        else {
            continue;
        };
        let (e1, e2) = axis.any_orthonormal_pair();
        let at = |end: f64, phi: f64| {
            b.origin + axis * (end * half_length) + (e1 * phi.cos() + e2 * phi.sin()) * radius
        };
        for end in [-1.0, 1.0] {
            out.push(
                (0..=OUTLINE_POINTS)
                    .map(|k| {
                        at(
                            end,
                            std::f64::consts::TAU * k as f64 / OUTLINE_POINTS as f64,
                        )
                    })
                    .collect(),
            );
        }
        for q in 0..4 {
            let phi = std::f64::consts::FRAC_PI_2 * q as f64;
            out.push(vec![at(-1.0, phi), at(1.0, phi)]);
        }
    }
    out
}

/// The triangles of a run's mesh boundaries that stay where the scene puts
/// them (from the run's `scene.ron`); a mesh that moves is left out, as
/// its final place is not recorded (its series `walls.pvd` has it).
fn walls_of_output(scene: &crate::scene::Scene) -> Vec<[DVec3; 3]> {
    if !scene
        .boundaries
        .iter()
        .any(|b| matches!(b, crate::scene::BoundarySpec::Mesh(_)))
    {
        return Vec::new();
    }
    match scene.built_boundaries() {
        Ok(b) => {
            let still: Vec<_> = b.into_iter().filter(|b| b.geometry_still()).collect();
            crate::boundary::mesh_triangles(&still)
        }
        Err(e) => {
            log::warn!("mesh boundaries left out of the picture: {e}");
            Vec::new()
        }
    }
}

/// The outlines of a run's cylinder boundaries that do not move (from the
/// run's `scene.ron`; a drum turning about its axis keeps its place).
fn outlines_of_output(scene: &crate::scene::Scene) -> Vec<Vec<DVec3>> {
    match scene.built_boundaries() {
        Ok(b) => {
            let still: Vec<_> = b
                .into_iter()
                .filter(|b| b.velocity == DVec3::ZERO)
                .collect();
            cylinder_outlines(&still)
        }
        Err(_) => Vec::new(),
    }
}

/// The surfaces of a run's bodies that are not spheres, placed as
/// `final.csv` has them. Their shapes come from the run's `scene.ron`: the
/// bodies it builds keep their ids, and a body an inlet added later takes
/// the shape of the one inlet that emits its kind (when two inlets emit
/// the same kind, or `scene.ron` cannot be built, which is logged, such
/// bodies are drawn as their bounding spheres).
fn surfaces_of_output(
    dir: &Path,
    scene: Result<&crate::scene::Scene, &crate::scene::SceneError>,
    rows: &[[f64; 11]],
) -> Vec<Option<Surface>> {
    let full = match crate::output::csv::read_final_csv_full(dir.join("final.csv")) {
        Ok(f) if f.iter().any(|r| r.shape != "sphere") => f,
        _ => return Vec::new(),
    };
    let world = match scene
        .map_err(|e| e.to_string())
        .and_then(|s| s.build().map_err(|e| e.to_string()))
    {
        Ok(w) => w,
        Err(e) => {
            log::warn!("bodies drawn as their bounding spheres: {e}");
            return Vec::new();
        }
    };
    let poured: Vec<crate::shape::BodyShape> = world
        .model
        .inlets
        .iter()
        .filter_map(|s| s.shape.as_ref())
        .map(|b| crate::shape::BodyShape::new(b.shape.clone()))
        .collect();
    let mut ambiguous = 0usize;
    let surfaces = full
        .iter()
        .zip(rows)
        .enumerate()
        .map(|(i, (r, row))| {
            let shape = if i < world.state.bodies.len() {
                world.state.bodies.shape_of(i)?
            } else {
                let mut of_kind = poured.iter().filter(|s| s.shape.kind() == r.shape);
                match (of_kind.next(), of_kind.next()) {
                    (Some(s), None) => s,
                    (Some(_), Some(_)) => {
                        ambiguous += 1;
                        return None;
                    }
                    _ => return None,
                }
            };
            let [w, x, y, z] = r.orientation;
            let q = glam::DQuat::from_xyzw(x, y, z, w);
            Some(crate::shape::surface_triangles(
                shape,
                DVec3::new(row[1], row[2], row[3]),
                q,
            ))
        })
        .collect();
    if ambiguous > 0 {
        log::warn!(
            "{ambiguous} bodies drawn as their bounding spheres: more than one inlet pours their kind of shape"
        );
    }
    surfaces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(-0.0), "0");
        assert_eq!(fmt_num(0.0125), "0.0125");
        assert_eq!(fmt_num(3.5), "3.5");
        assert_eq!(fmt_num(1200.0), "1200");
        assert_eq!(fmt_num(0.123456), "0.1235");
        assert_eq!(fmt_num(-2.5e-6), "-2.5e-6");
        assert_eq!(fmt_num(1.2e9), "1.2e9");
        assert_eq!(fmt_num(1e-4), "1e-4");
    }

    #[test]
    fn lengths_pick_their_unit() {
        assert_eq!(fmt_length(0.05), "5 cm");
        assert_eq!(fmt_length(0.002), "2 mm");
        assert_eq!(fmt_length(1.0), "1 m");
        assert_eq!(fmt_length(5e-4), "500 µm");
        assert_eq!(fmt_length(2000.0), "2 km");
        assert_eq!(fmt_length(0.2), "20 cm");
    }

    #[test]
    fn round_steps_below() {
        assert_eq!(nice_step_below(0.07), Some(0.05));
        assert_eq!(nice_step_below(0.05), Some(0.05));
        assert_eq!(nice_step_below(3.0), Some(2.0));
        assert_eq!(nice_step_below(1.9), Some(1.0));
        assert_eq!(nice_step_below(0.0), None);
        assert_eq!(nice_step_below(f64::NAN), None);
    }
}
