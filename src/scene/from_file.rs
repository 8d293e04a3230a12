//! The `FromFile` source: bodies read back from the state another run
//! wrote, so that one scene starts where another ended ("fill and settle",
//! then "open the outlet").
//!
//! Two kinds of file are read, told apart by their first bytes:
//!
//! | file | holds | bodies | mass and inertia |
//! |---|---|---|---|
//! | `final.csv`, `frame_NNNNN.csv` ([`crate::output::csv`]) | id, position, velocity, spin, radius, orientation, shape's kind, material | spheres only (a row gives a shape's kind, not its dimensions) | from the radius and the material's density in *this* scene |
//! | `checkpoint.bin` ([`crate::run::checkpoint`]) | every body array of the run | any shape, with its orientation | the run's own, exactly |
//!
//! A run writes `checkpoint.bin` while it runs and removes it when it
//! finishes, unless its scene sets `output.checkpoint.keep: true`, which
//! also writes a last one at the end. Either way the reading is the same:
//! each body's material (the file's, or the source's `material` for all)
//! must exist in this scene, `offset` moves every body, `within` keeps the
//! bodies whose centres lie in a box, `keep_velocities: false` starts them
//! at rest. A sphere starts unturned (its orientation does not change its
//! motion); a body of another shape keeps its orientation. Contact
//! histories and warm starts are not carried: the new scene's contacts
//! start afresh.

use glam::{DQuat, DVec3};

use super::schema::{FromFileSpec, Scene, MAX_SPHERES};
use crate::bodies::{Bodies, BodyInit, SphereInit, SPHERE};
use crate::output::csv::read_final_csv_full;
use crate::shape::Shape;

/// One body as a file gives it, before this scene's choices apply.
struct FileBody {
    /// Where the file holds it, for messages (`:5` for a CSV line, ` body
    /// 17` for a checkpoint).
    at: String,
    /// Its id in the run that wrote it.
    id: u64,
    pos: DVec3,
    vel: DVec3,
    omega: DVec3,
    /// Its material in the file (`None`: a CSV of an earlier version).
    material: Option<u32>,
    kind: Kind,
}

enum Kind {
    /// A sphere, with its mass and moment of inertia where the file holds
    /// them.
    Sphere {
        radius: f64,
        mass_inertia: Option<(f64, f64)>,
    },
    /// A body of another shape (from a checkpoint): its shape in its body
    /// frame, orientation, mass and principal moments.
    Body {
        shape: Shape,
        rot: DQuat,
        mass: f64,
        principal: DVec3,
    },
}

/// The bodies of a [`FromFileSpec`] (module docs): read, filtered, moved;
/// each a sphere or, from a checkpoint, a body of any shape. Errors name
/// the file: unreadable or malformed (line and column, or body), a CSV row
/// that is not a sphere, a material this scene does not have, nothing in
/// `within`, more than a scene may hold.
pub(super) fn from_file(
    scene: &Scene,
    f: &FromFileSpec,
) -> Result<Vec<(SphereInit, Option<BodyInit>)>, String> {
    let path = scene.relative_path(&f.file);
    let shown = path.display();
    // A device or a directory would be read without end or not at all;
    // a file beyond what a scene's spheres could fill (about 400 bytes a
    // row) is not a run's state.
    const MAX_BYTES: u64 = 400 * MAX_SPHERES as u64;
    match std::fs::metadata(&path) {
        Ok(m) if m.is_file() && m.len() > MAX_BYTES => {
            let n = m.len();
            return Err(format!(
                "file: {shown} has {n} bytes, more than a run's state holds"
            ));
        }
        Ok(m) if m.is_file() => {}
        Ok(_) => return Err(format!("file: {shown} is not a regular file")),
        Err(e) => return Err(format!("file: cannot read {shown}: {e}")),
    }
    let read = if crate::run::checkpoint::is_checkpoint(&path) {
        read_checkpoint_bodies(&path)?
    } else {
        read_csv_bodies(&path)?
    };
    let total = read.len();
    let n_materials = scene.materials.len();
    let mut out = Vec::new();
    for b in read {
        let at = format!("{shown}{}", b.at);
        // A file's bodies are checked as a scene's are: a number that is
        // not finite would stop the first step, blaming the solver.
        for (what, v) in [
            ("position", b.pos),
            ("velocity", b.vel),
            ("angular velocity", b.omega),
        ] {
            if !v.is_finite() {
                return Err(format!(
                    "file: {at}: body {} has a {what} that is not finite ({v})",
                    b.id
                ));
            }
        }
        let material = f.material.or(b.material).unwrap_or(0);
        if material as usize >= n_materials {
            return Err(format!(
                "file: {at}: body {} has material {material}, but this scene has {n_materials} material(s); add it, or set `material` for all",
                b.id
            ));
        }
        let pos = b.pos + f.offset;
        if let Some(w) = &f.within {
            if pos.cmplt(w.min).any() || pos.cmpgt(w.max).any() {
                continue;
            }
        }
        let (vel, omega) = if f.keep_velocities {
            (b.vel, b.omega)
        } else {
            (DVec3::ZERO, DVec3::ZERO)
        };
        out.push(match b.kind {
            Kind::Sphere {
                radius,
                mass_inertia,
            } => {
                if !(radius.is_finite() && radius >= crate::sizes::MIN_RADIUS) {
                    return Err(format!(
                        "file: {at}: radius {radius} is not ≥ {:e} m",
                        crate::sizes::MIN_RADIUS
                    ));
                }
                let (mass, inertia) = mass_inertia
                    .unwrap_or_else(|| scene.mass_inertia(radius, None, None, None, material));
                let init = SphereInit {
                    pos,
                    radius,
                    mass,
                    inertia,
                    vel,
                    omega,
                    material,
                };
                (init, None)
            }
            Kind::Body {
                shape,
                rot,
                mass,
                principal,
            } => {
                let body = BodyInit {
                    shape,
                    pos,
                    rot,
                    vel,
                    omega,
                    mass,
                    principal,
                    material,
                };
                (body.bounding_ball(), Some(body))
            }
        });
        if out.len() > MAX_SPHERES {
            return Err(format!(
                "file: {shown} holds more than the {MAX_SPHERES} bodies a scene may have"
            ));
        }
    }
    if out.is_empty() {
        return Err(match &f.within {
            Some(b) => format!(
                "no body of {shown} ({total} in all) lies within min {} .. max {}",
                b.min, b.max
            ),
            None => format!("file: {shown} holds no bodies"),
        });
    }
    Ok(out)
}

/// The rows of a `final.csv` or frame CSV, spheres only.
fn read_csv_bodies(path: &std::path::Path) -> Result<Vec<FileBody>, String> {
    let shown = path.display();
    let rows = read_final_csv_full(path).map_err(|e| format!("file: {e}"))?;
    rows.iter()
        .enumerate()
        .map(|(k, row)| {
            let s = &row.state;
            let line = k + 2;
            if row.shape != "sphere" {
                return Err(format!(
                    "file: {shown}:{line}: body {} is a {}: a CSV gives a shape's kind, not its dimensions; read the run's checkpoint.bin instead (a run keeps it when its scene sets `output: (checkpoint: (keep: true))`)",
                    s[0], row.shape
                ));
            }
            Ok(FileBody {
                at: format!(":{line}"),
                id: s[0] as u64,
                pos: DVec3::new(s[1], s[2], s[3]),
                vel: DVec3::new(s[4], s[5], s[6]),
                omega: DVec3::new(s[7], s[8], s[9]),
                material: row.material,
                kind: Kind::Sphere {
                    radius: s[10],
                    mass_inertia: None,
                },
            })
        })
        .collect()
}

/// The bodies of a checkpoint, every shape.
fn read_checkpoint_bodies(path: &std::path::Path) -> Result<Vec<FileBody>, String> {
    let ck = crate::run::checkpoint::read_checkpoint(path).map_err(|e| format!("file: {e:#}"))?;
    let b: Bodies = ck.world.bodies;
    let shown = path.display();
    b.check_arrays()
        .map_err(|e| format!("file: {shown}: {e}"))?;
    (0..b.len())
        .map(|i| {
            let at = format!(" body {i}");
            let positive = |x: f64| x.is_finite() && x > 0.0;
            let mass = 1.0 / b.inv_mass[i];
            let principal = b.inv_inertia_body[i].recip();
            if !(positive(mass) && principal.is_finite() && principal.cmpgt(DVec3::ZERO).all()) {
                return Err(format!(
                    "file: {shown}{at}: its mass {mass} or moments {principal} are not finite and > 0"
                ));
            }
            let kind = if b.shape[i] == SPHERE {
                Kind::Sphere {
                    radius: b.radius[i],
                    mass_inertia: Some((mass, 1.0 / b.inv_inertia[i])),
                }
            } else {
                // The shape and the moments are checked as a scene's body's
                // are (a NaN vertex or an infinite radius would reach the
                // narrowphase and panic there).
                let shape = b.shapes[b.shape[i] as usize].shape.clone();
                shape
                    .validate()
                    .and_then(|()| crate::shape::validate_inertia(principal))
                    .map_err(|why| format!("file: {shown}{at}: its {}: {why}", shape.kind()))?;
                let q = b.rot[i];
                if !(q.is_finite() && q.length() > 1e-12) {
                    return Err(format!(
                        "file: {shown}{at}: its orientation {q} has no direction (zero or not finite)"
                    ));
                }
                Kind::Body {
                    shape,
                    rot: q,
                    mass,
                    principal,
                }
            };
            Ok(FileBody {
                at,
                id: i as u64,
                pos: b.pos[i],
                vel: b.vel[i],
                omega: b.omega[i],
                material: Some(b.material[i]),
                kind,
            })
        })
        .collect()
}
