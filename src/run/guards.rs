//! Checks before and during a run: the output directory (another run's
//! files are refused or, with `--overwrite`, removed), the tunnelling
//! warning, and what stops a run as diverged — a non-finite state
//! ([`non_finite`]) and the bounds of [`DivergenceBounds`]: a contact
//! sphere inside another or through a wall, a kinetic energy no motion of the scene
//! can reach, a body outside every container that held it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::bodies::Bodies;
use crate::boundary::{Boundary, Caps, Shape};
use crate::collision::NO_BODY;
use crate::problem::ContactProblem;
use crate::world::World;

/// Whether `name` is a file `repose run` writes into its output directory
/// (or a temporary of one, `NAME.tmp`, that a killed run leaves).
fn is_run_output(name: &str) -> bool {
    const FILES: [&str; 13] = [
        super::checkpoint::CHECKPOINT_FILE,
        "summary.json",
        "final.csv",
        "final.png",
        "track.csv",
        "frames.pvd",
        "bodies.pvd",
        "walls.pvd",
        "walls.csv",
        "contacts.pvd",
        "discharge.csv",
        "bulk.csv",
        "scene.ron",
    ];
    FILES.contains(&name)
        || (name.starts_with("frame_") && (name.ends_with(".vtu") || name.ends_with(".csv")))
        || (name.starts_with("bodies_") && name.ends_with(".vtu"))
        || (name.starts_with("walls_") && name.ends_with(".vtu"))
        || (name.starts_with("contacts_") && (name.ends_with(".vtu") || name.ends_with(".csv")))
        || (name.starts_with("problem_step") && name.ends_with(".dat"))
        || name.ends_with(".tmp")
}

/// Creates the output directory, or checks an existing one: when it holds
/// another run's outputs ([`is_run_output`]) it is refused unless
/// `overwrite`, which removes them first (other files are left alone).
pub(super) fn prepare_output_dir(out: &Path, overwrite: bool) -> Result<()> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create output directory {}", out.display()))?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(out)
        .with_context(|| format!("cannot read output directory {}", out.display()))?
        .flatten()
        .filter(|e| e.path().is_file())
        .filter(|e| e.file_name().to_str().is_some_and(is_run_output))
        .map(|e| e.path())
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    found.sort();
    if !overwrite {
        let names: Vec<String> = found
            .iter()
            .take(3)
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        let resumable = found.iter().any(|p| {
            p.file_name()
                .is_some_and(|n| n == super::checkpoint::CHECKPOINT_FILE)
        });
        anyhow::bail!(
            "output directory {} holds the outputs of another run ({} files: {}{}); \
             pass --overwrite to replace them, or choose another --out{}",
            out.display(),
            found.len(),
            names.join(", "),
            if found.len() > 3 { ", …" } else { "" },
            if resumable {
                format!(
                    " (that run stopped part way: `repose run --resume {}` continues it)",
                    out.display()
                )
            } else {
                String::new()
            }
        );
    }
    for p in &found {
        std::fs::remove_file(p)
            .with_context(|| format!("--overwrite: cannot remove {}", p.display()))?;
    }
    log::info!(
        "--overwrite: removed {} files of an earlier run from {}",
        found.len(),
        out.display()
    );
    Ok(())
}

/// A warning when a sphere starts (or an inlet emits one) fast enough to
/// cross its own radius in one time step: contacts are found at the start
/// of a step, so such a sphere can pass through a wall or another sphere
/// between two detections (tunnelling).
pub fn tunnelling_risk(world: &crate::world::World) -> Option<String> {
    let h = world.model.time_step;
    let b = &world.state.bodies;
    // (speed, radius, body index or inlet index)
    let bodies = (0..b.len()).map(|i| (b.vel[i].length(), b.radius[i], Ok(i)));
    let inlets = world.model.inlets.iter().enumerate().map(|(k, s)| {
        // The jitter is per component: at most √3 times it in length.
        let v = s.velocity.length() + 3f64.sqrt() * s.velocity_jitter;
        (v, s.radius, Err(k))
    });
    bodies
        .chain(inlets)
        .filter(|(v, r, _)| v * h > *r)
        .max_by(|a, b| (a.0 * h / a.1).total_cmp(&(b.0 * h / b.1)))
        .map(|(v, r, who)| {
            let what = match who {
                Ok(i) => format!("sphere {i}"),
                Err(k) => format!("inlet {:?}", world.model.inlets[k].name),
            };
            format!(
                "tunnelling risk: {what} moves {v:.3e} m/s, {:.3e} m a step of {h:e} s, more than its radius {r:e} m; \
                 it may pass through walls or spheres between two contact detections (use a smaller time_step)",
                v * h
            )
        })
}

/// The first non-finite quantity of the bodies, named with its body, or
/// `None` when every position, orientation and velocity is finite.
pub(super) fn non_finite(b: &Bodies) -> Option<String> {
    (0..b.len()).find_map(|i| {
        let quantity = if !b.pos[i].is_finite() {
            format!("position is {}", b.pos[i])
        } else if !b.vel[i].is_finite() {
            format!("velocity is {} m/s", b.vel[i])
        } else if !b.omega[i].is_finite() {
            format!("angular velocity is {} rad/s", b.omega[i])
        } else if !b.rot[i].is_finite() {
            format!("orientation is {}", b.rot[i])
        } else {
            return None;
        };
        Some(format!("body {i}'s {quantity}"))
    })
}

/// The bound on the kinetic energy is this many times the most the scene
/// can give its bodies (see [`DivergenceBounds::new`]).
pub const KE_BOUND_FACTOR: f64 = 10.0;

/// Bounds that a sound run never crosses, checked after every step: past
/// one, the solver has lost the physics (a blow-up that is still finite,
/// tunnelling) and the run stops as diverged with the step, the body and
/// the quantity named.
///
/// * **Passing through**: a contact of the step whose two sphere centres
///   are closer than a tenth of the smaller radius (the spheres have passed
///   into each other), or a sphere centre more than its radius beyond a
///   wall's surface. Shallower overlaps are left alone: with a large time
///   step an impact at speed v goes up to v h deep before the contact is
///   detected (`scenes/pour.ron` has overlaps of more than a radius at
///   impact), and the contact pushes the spheres apart again.
/// * **Kinetic energy** above [`KE_BOUND_FACTOR`] × ½ M (v + g T + w)²:
///   M the mass of every body the run will hold (inlets included), v the
///   fastest initial, inlet or recovery speed (`contact.max_recovery_speed`),
///   g T the speed of a free fall over the whole duration, w the fastest
///   wall surface speed (|v_b| + |ω_b| L, L the scene's size). Energy can
///   only come from those; a free fall off a plate stays below it.
/// * **Containment**: when every body starts (and every inlet emits)
///   inside a container nothing leaves but through a wall — a box, with or
///   without its lid (an open box's side walls rise without end), or a
///   cylinder with both caps — a body whose centre is more than its radius
///   outside every one of them has tunnelled (up to a radius out, the
///   overlap bound judges it).
#[derive(Clone, Debug)]
pub(super) struct DivergenceBounds {
    ke_max: f64,
    /// The containers that hold every body, when there are any.
    containers: Vec<usize>,
}

impl DivergenceBounds {
    /// The bounds of `world` (as the scene builds it, before any step) for a
    /// run of `duration` seconds.
    pub fn new(world: &World, duration: f64) -> Self {
        let b = &world.state.bodies;
        let mut mass: f64 = b.inv_mass.iter().map(|im| 1.0 / im).sum();
        let mut speed = world.model.contact.max_recovery_speed.max(0.0);
        speed = b.vel.iter().map(|v| v.length()).fold(speed, f64::max);
        let (mut lo, mut hi) = (
            glam::DVec3::splat(f64::INFINITY),
            glam::DVec3::splat(f64::NEG_INFINITY),
        );
        for (p, r) in b.pos.iter().zip(&b.radius) {
            lo = lo.min(*p - *r);
            hi = hi.max(*p + *r);
        }
        for s in &world.model.inlets {
            let r = s.radius_max.max(s.radius);
            mass += s.count as f64 * crate::bodies::SphereInit::solid_mass(r, s.density);
            speed = speed.max(s.velocity.length() + 3f64.sqrt() * s.velocity_jitter);
            let (a, c) = s.region.bounds();
            lo = lo.min(a - r);
            hi = hi.max(c + r);
        }
        let size = if hi.cmpge(lo).all() {
            (hi - lo).length()
        } else {
            0.0
        };
        let walls = world.boundaries();
        let wall = walls
            .iter()
            .map(|w| {
                let reach = match w.shape {
                    Shape::Cylinder { radius, .. } => radius.max(size),
                    Shape::Mesh { ref surface, .. } => surface.reach().max(size),
                    _ => size,
                };
                w.velocity.length() + w.angular_velocity.length() * reach
            })
            .fold(0.0, f64::max);
        let v = speed + world.model.gravity.length() * duration.max(0.0) + wall;
        let ke_max = KE_BOUND_FACTOR * 0.5 * mass * v * v;
        let candidates: Vec<usize> = walls
            .iter()
            .enumerate()
            .filter(|(_, w)| is_container(w))
            .map(|(i, _)| i)
            .collect();
        let held = |x: glam::DVec3| candidates.iter().any(|&i| inside(&walls[i], x));
        let inlets_held = world.model.inlets.iter().all(|s| {
            let (a, c) = s.region.bounds();
            held(a) && held(c)
        });
        let containers = if !candidates.is_empty() && b.pos.iter().all(|&p| held(p)) && inlets_held
        {
            candidates
        } else {
            Vec::new()
        };
        DivergenceBounds { ke_max, containers }
    }

    /// The first bound that the state after a step (`world`, whose kinetic
    /// energy is `ke`) or the step's contact problem crosses, in words;
    /// `None` when all hold.
    pub fn check(&self, world: &World, ke: f64, problem: &ContactProblem) -> Option<String> {
        let b = &world.state.bodies;
        // Overlaps: the geometry the step started from. The limit is the
        // overlap at which the centres are a tenth of the smaller radius
        // apart (two spheres), or the centre a radius past the surface (a
        // wall).
        let deepest = (0..problem.gap.len())
            .filter_map(|c| {
                let (i, j) = (problem.body_a[c] as usize, problem.body_b[c]);
                let ri = b.radius.get(i).copied()?;
                let limit = if j == NO_BODY {
                    2.0 * ri
                } else {
                    let rj = b.radius.get(j as usize).copied()?;
                    if b.shape_of(i).is_some() || b.shape_of(j as usize).is_some() {
                        // Bodies of other shapes: deeper than the smaller
                        // bounding radius (centres may be close: stacked disks).
                        ri.min(rj)
                    } else {
                        ri + rj - 0.1 * ri.min(rj)
                    }
                };
                let overlap = -problem.gap[c];
                (overlap > limit).then_some((overlap / limit, overlap, ri, i, j))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((_, overlap, ri, i, j)) = deepest {
            let advice = "the solver did not hold the contact (a smaller time_step or more solver.max_iterations usually helps)";
            return Some(if j == NO_BODY {
                format!(
                    "body {i}'s centre is {:.3e} m beyond a boundary's surface, more than its radius {ri:.3e} m: {advice}",
                    overlap - ri
                )
            } else if b.shape_of(i).is_some() || b.shape_of(j as usize).is_some() {
                format!(
                    "body {i} and body {j} overlap by {overlap:.3e} m, more than the smaller bounding radius {:.3e} m: {advice}",
                    ri.min(b.radius[j as usize])
                )
            } else {
                let rj = b.radius[j as usize];
                format!(
                    "the centres of body {i} and body {j} are {:.3e} m apart, less than a tenth of the smaller radius {:.3e} m (they overlap by {overlap:.3e} m): {advice}",
                    ri + rj - overlap,
                    ri.min(rj)
                )
            });
        }
        if ke > self.ke_max {
            let fastest = (0..b.len())
                .max_by(|&x, &y| b.vel[x].length().total_cmp(&b.vel[y].length()))
                .unwrap_or(0);
            return Some(format!(
                "the kinetic energy {ke:.3e} J exceeds {:.3e} J, {KE_BOUND_FACTOR}× the most the scene's speeds, walls and gravity can give over its duration (fastest: body {fastest} at {:.3e} m/s) — a smaller time_step usually helps",
                self.ke_max,
                b.vel.get(fastest).map_or(0.0, |v| v.length())
            ));
        }
        if !self.containers.is_empty() {
            let walls = world.boundaries();
            let out = (0..b.len()).find(|&i| {
                self.containers
                    .iter()
                    .all(|&c| escaped(&walls[c], b.pos[i], b.radius[i]))
            });
            if let Some(i) = out {
                let names: Vec<&str> = self
                    .containers
                    .iter()
                    .map(|&c| walls[c].name.as_str())
                    .collect();
                return Some(format!(
                    "body {i} at {} left the container{} {} that held every body: it passed through a wall (tunnelling; a smaller time_step helps)",
                    b.pos[i],
                    if names.len() > 1 { "s" } else { "" },
                    names.join(", ")
                ));
            }
        }
        None
    }
}

/// Whether a boundary encloses a region that nothing leaves but through a
/// wall: a box (with or without its lid: an open box's side walls rise
/// without end, so nothing leaves over a rim) or a cylinder with both caps.
fn is_container(b: &Boundary) -> bool {
    match b.shape {
        Shape::BoxContainer { .. } => true,
        Shape::Cylinder { caps, .. } => caps == Caps::Both,
        _ => false,
    }
}

/// Whether the point `x` is inside the container `b` (on its free side of
/// every wall).
fn inside(b: &Boundary, x: glam::DVec3) -> bool {
    !escaped(b, x, 0.0)
}

/// Whether a sphere centre at `x` is more than `r` outside the container
/// `b`: beyond the reach of the overlap bound (a centre up to a radius
/// past a wall is a deep contact, which that bound judges; further out it
/// has passed through). A box measures the distance from the box (its
/// prism without end upward when open, so a point past an edge counts its
/// distance from the edge); a cylinder counts as left once the centre is
/// outside its tube at all, or past a cap by more than `r`.
fn escaped(b: &Boundary, x: glam::DVec3, r: f64) -> bool {
    match b.shape {
        Shape::BoxContainer {
            half_extents: h,
            open_top,
        } => {
            let d = x - b.origin;
            let below = (-d.z - h.z).max(0.0);
            let vertical = if open_top {
                below
            } else {
                below.max(d.z - h.z)
            };
            let out = glam::DVec3::new(
                (d.x.abs() - h.x).max(0.0),
                (d.y.abs() - h.y).max(0.0),
                vertical,
            );
            out.length() > r
        }
        _ => !b.clearance(x).is_some_and(|c| c >= -r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::SphereInit;
    use crate::material::Material;
    use glam::DVec3;

    fn ball(pos: DVec3, vel: DVec3) -> SphereInit {
        let mass = SphereInit::solid_mass(0.01, 1000.0);
        SphereInit {
            pos,
            radius: 0.01,
            mass,
            inertia: SphereInit::solid_inertia(mass, 0.01),
            vel,
            omega: DVec3::ZERO,
            material: 0,
        }
    }

    fn world(balls: &[SphereInit], boundaries: Vec<Boundary>) -> World {
        World::new(
            Bodies::from_inits(balls),
            boundaries,
            vec![Material {
                name: "m".into(),
                friction: 0.5,
                rolling: 0.0,
                spinning: 0.0,
                density: 1000.0,
                ..Default::default()
            }],
        )
    }

    /// The energy bound is 10 × ½ M (v + g T)² (no walls; recovery speed
    /// 0.5 m/s is the fastest speed here): a body just under it passes, one
    /// just over it is named.
    #[test]
    fn kinetic_energy_beyond_what_the_scene_can_give_is_divergence() {
        let mut w = world(
            &[ball(DVec3::ZERO, DVec3::ZERO), ball(DVec3::X, DVec3::ZERO)],
            vec![],
        );
        let duration = 2.0;
        let bounds = DivergenceBounds::new(&w, duration);
        let m = 2.0 / w.state.bodies.inv_mass[0];
        let v = 0.5 + 9.81 * duration;
        let bound = KE_BOUND_FACTOR * 0.5 * m * v * v;
        assert!(
            (bounds.ke_max - bound).abs() <= 1e-12 * bound,
            "{} vs {bound}",
            bounds.ke_max
        );
        // All the energy in body 1: speed² = 2 E / m₁.
        let m1 = 1.0 / w.state.bodies.inv_mass[1];
        let speed = |e: f64| (2.0 * e / m1).sqrt();
        let p = ContactProblem::default();
        w.state.bodies.vel[1] = DVec3::new(0.0, 0.0, -speed(0.99 * bound));
        assert_eq!(bounds.check(&w, w.state.bodies.kinetic_energy(), &p), None);
        w.state.bodies.vel[1] = DVec3::new(0.0, 0.0, -speed(1.01 * bound));
        let msg = bounds
            .check(&w, w.state.bodies.kinetic_energy(), &p)
            .expect("over the bound");
        assert!(
            msg.contains("kinetic energy") && msg.contains("body 1"),
            "{msg}"
        );
    }

    /// Two spheres of radius 1 cm whose centres are closer than 1 mm, or a
    /// centre more than a radius beyond a wall, are named; an overlap of
    /// more than a radius, as a fast impact gives, is not.
    #[test]
    fn spheres_passing_into_each_other_or_through_a_wall_are_divergence() {
        let w = world(
            &[
                ball(DVec3::ZERO, DVec3::ZERO),
                ball(DVec3::X * 0.015, DVec3::ZERO),
            ],
            vec![],
        );
        let bounds = DivergenceBounds::new(&w, 1.0);
        let mut p = ContactProblem {
            body_a: vec![0, 1],
            body_b: vec![1, NO_BODY],
            gap: vec![-0.0189, -0.0199],
            ..ContactProblem::default()
        };
        assert_eq!(bounds.check(&w, w.state.bodies.kinetic_energy(), &p), None);
        p.gap[0] = -0.0192;
        let msg = bounds
            .check(&w, w.state.bodies.kinetic_energy(), &p)
            .expect("too deep");
        assert!(
            msg.contains("the centres of body 0 and body 1 are 8.000e-4 m apart"),
            "{msg}"
        );
        p.gap = vec![0.0, -0.0205];
        let msg = bounds
            .check(&w, w.state.bodies.kinetic_energy(), &p)
            .expect("too deep");
        assert!(
            msg.contains("body 1's centre is 1.050e-2 m beyond a boundary's surface"),
            "{msg}"
        );
    }

    /// Containment applies only when every body starts inside a container
    /// (a box, with or without lid, a cylinder with both caps): a body that
    /// starts outside turns it off. An open box's side walls rise without
    /// end: a body above its rim is inside, one beyond a side wall has
    /// tunnelled, once its centre is more than its radius out.
    #[test]
    fn containment_applies_to_containers_holding_every_body() {
        let boxed = |open_top| Boundary {
            name: "crate".into(),
            shape: Shape::BoxContainer {
                half_extents: DVec3::splat(0.5),
                open_top,
            },
            origin: DVec3::ZERO,
            velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
            start_time: 0.0,
            material: 0,
        };
        let p = ContactProblem::default();
        let mut w = world(&[ball(DVec3::ZERO, DVec3::ZERO)], vec![boxed(false)]);
        let bounds = DivergenceBounds::new(&w, 1.0);
        assert_eq!(bounds.check(&w, w.state.bodies.kinetic_energy(), &p), None);
        w.state.bodies.pos[0] = DVec3::new(0.0, 0.6, 0.0);
        let msg = bounds
            .check(&w, w.state.bodies.kinetic_energy(), &p)
            .expect("outside");
        assert!(msg.contains("body 0") && msg.contains("crate"), "{msg}");
        let open = world(&[ball(DVec3::ZERO, DVec3::ZERO)], vec![boxed(true)]);
        let mut moved = open.clone();
        moved.state.bodies.pos[0] = DVec3::new(0.0, 0.0, 0.7);
        let open_bounds = DivergenceBounds::new(&open, 1.0);
        assert_eq!(
            open_bounds.check(&moved, moved.state.bodies.kinetic_energy(), &p),
            None
        );
        moved.state.bodies.pos[0] = DVec3::new(0.6, 0.0, 0.2);
        let msg = open_bounds
            .check(&moved, moved.state.bodies.kinetic_energy(), &p)
            .expect("through the open box's side wall");
        assert!(msg.contains("body 0") && msg.contains("crate"), "{msg}");
        // Up to a radius (0.01) out, the centre is a deep contact, not an
        // escape: under the floor, past a side, past an edge (0.007 from it).
        for (x, out) in [
            (DVec3::new(0.0, 0.0, -0.505), false),
            (DVec3::new(0.0, 0.509, 0.0), false),
            (DVec3::new(0.505, 0.505, 0.0), false),
            (DVec3::new(0.0, 0.0, -0.52), true),
            (DVec3::new(0.508, 0.508, 0.0), true),
        ] {
            moved.state.bodies.pos[0] = x;
            let got = open_bounds.check(&moved, moved.state.bodies.kinetic_energy(), &p);
            assert_eq!(got.is_some(), out, "centre at {x}: {got:?}");
        }
        let outside = world(
            &[
                ball(DVec3::ZERO, DVec3::ZERO),
                ball(DVec3::X * 2.0, DVec3::ZERO),
            ],
            vec![boxed(false)],
        );
        assert!(DivergenceBounds::new(&outside, 1.0).containers.is_empty());
    }
}
