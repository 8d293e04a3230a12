//! Particle generators: single spheres, (jittered) lattices and seeded
//! random packing in a box. All deterministic for a given scene.

use glam::DVec3;

use super::error::Issue;
use super::schema::{BodySpec, LatticeSpec, RandomBoxSpec, Scene, SphereSource};
use crate::bodies::{BodyInit, SphereInit};
use crate::placement::{copy_at, SpatialHash};
use crate::rng::Rng;

/// Random tries per sphere before a [`RandomBoxSpec`] gives up.
pub const RANDOM_BOX_TRIES: usize = 2000;

/// One generated body and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedSphere {
    /// The sphere's initial state; for a body of another shape its
    /// bounding ball (what the checks against boundaries and overlaps see).
    pub init: SphereInit,
    /// The body, when it is not a plain sphere.
    pub body: Option<BodyInit>,
    /// Index of its source in `Scene::spheres`.
    pub source: usize,
    /// Its index within that source (0 for a single `Sphere`).
    pub index: usize,
}

/// Runs every sphere source of a structurally valid scene, in order.
pub(crate) fn generate(scene: &Scene) -> Result<Vec<PlacedSphere>, Vec<Issue>> {
    let mut placed = Vec::new();
    let mut issues = Vec::new();
    for (si, src) in scene.spheres.iter().enumerate() {
        let inits = match src {
            SphereSource::Sphere(s) => {
                let (mass, inertia) =
                    scene.mass_inertia(s.radius, s.mass, s.inertia, s.density, s.material);
                Ok(vec![SphereInit {
                    pos: s.pos,
                    radius: s.radius,
                    mass,
                    inertia,
                    vel: s.velocity,
                    omega: s.angular_velocity,
                    material: s.material,
                }])
            }
            SphereSource::Body(b) => {
                let body = body(scene, b);
                placed.push(PlacedSphere {
                    init: body.bounding_ball(),
                    body: Some(body),
                    source: si,
                    index: 0,
                });
                continue;
            }
            SphereSource::Lattice(l) if l.shape.is_some() => {
                placed.extend(lattice_bodies(scene, l).into_iter().enumerate().map(
                    |(index, body)| PlacedSphere {
                        init: body.bounding_ball(),
                        body: Some(body),
                        source: si,
                        index,
                    },
                ));
                continue;
            }
            SphereSource::Lattice(l) => Ok(lattice(scene, l)),
            SphereSource::RandomBox(b) if b.shape.is_some() => match random_box(scene, b) {
                Ok(balls) => {
                    let shape = b.shape.as_ref().expect("a box of shapes");
                    let proto = prototype(scene, shape, b.material, b.velocity, b.density);
                    // A second stream: the places are those of spheres.
                    let mut turns = Rng::new(b.seed ^ 0x9E37_79B9_7F4A_7C15);
                    placed.extend(balls.iter().enumerate().map(|(index, ball)| {
                        let turn = match b.random_orientation {
                            true => turns.rotation(),
                            false => glam::DQuat::IDENTITY,
                        };
                        let body = copy_at(&proto, ball.pos, turn);
                        PlacedSphere {
                            init: body.bounding_ball(),
                            body: Some(body),
                            source: si,
                            index,
                        }
                    }));
                    continue;
                }
                Err(e) => Err(e),
            },
            SphereSource::RandomBox(b) => random_box(scene, b),
            // Inlets emit during the run (crate::inlet), not at build.
            SphereSource::Inlet(_) => Ok(Vec::new()),
            SphereSource::FromFile(f) => match super::from_file::from_file(scene, f) {
                Ok(read) => {
                    placed.extend(read.into_iter().enumerate().map(|(index, (init, body))| {
                        PlacedSphere {
                            init,
                            body,
                            source: si,
                            index,
                        }
                    }));
                    continue;
                }
                Err(e) => Err(e),
            },
        };
        match inits {
            Ok(inits) => {
                placed.extend(
                    inits
                        .into_iter()
                        .enumerate()
                        .map(|(index, init)| PlacedSphere {
                            init,
                            body: None,
                            source: si,
                            index,
                        }),
                )
            }
            Err(reason) => issues.push(Issue::new(
                format!("spheres[{si}] ({})", src.kind()),
                reason,
            )),
        }
    }
    if issues.is_empty() {
        Ok(placed)
    } else {
        Err(issues)
    }
}

/// How many spheres a source generates (saturating; validation bounds it).
pub(crate) fn source_count(src: &SphereSource) -> usize {
    match src {
        SphereSource::Sphere(_) | SphereSource::Body(_) => 1,
        SphereSource::Lattice(l) => l.count.iter().fold(1usize, |a, &c| a.saturating_mul(c)),
        SphereSource::RandomBox(b) => b.count,
        SphereSource::Inlet(i) => i.count,
        // Known once the file is read (the generator checks the total).
        SphereSource::FromFile(_) => 0,
    }
}

/// The bodies of a lattice with a `shape`, site by site as [`lattice`]
/// places spheres: one seeded stream draws the jitter of every site, then
/// the orientation of every body.
fn lattice_bodies(scene: &Scene, l: &LatticeSpec) -> Vec<BodyInit> {
    let shape = l.shape.as_ref().expect("a lattice of shapes");
    let proto = prototype(scene, shape, l.material, l.velocity, l.density);
    let mut rng = Rng::new(l.seed);
    lattice_sites(l, &mut rng)
        .into_iter()
        .map(|pos| {
            let turn = match l.random_orientation {
                true => rng.rotation(),
                false => glam::DQuat::IDENTITY,
            };
            copy_at(&proto, pos, turn)
        })
        .collect()
}

/// The body every site of a generator of shapes copies: `shape` in its
/// body frame with the mass from the density, its centre of mass at the
/// origin, unturned (the principal frame's turn is in `rot`).
pub(crate) fn prototype(
    scene: &Scene,
    shape: &crate::shape::Shape,
    material: u32,
    velocity: DVec3,
    density: Option<f64>,
) -> BodyInit {
    let mut b = body(
        scene,
        &BodySpec {
            shape: shape.clone(),
            pos: DVec3::ZERO,
            rot: None,
            material,
            velocity,
            angular_velocity: DVec3::ZERO,
            density,
            mass: None,
            inertia: None,
        },
    );
    b.pos = DVec3::ZERO;
    b
}

/// The body of a validated [`BodySpec`], in its body frame (see
/// [`crate::shape`]): mass and principal moments from the spec or the
/// density, the centre of mass and principal axes of a polyhedron found.
pub(crate) fn body(scene: &Scene, b: &BodySpec) -> BodyInit {
    let density = b
        .density
        .unwrap_or(scene.materials[b.material as usize].density);
    let uniform = b.shape.mass_properties(density);
    let mass = b.mass.unwrap_or(uniform.mass);
    let rot = b.rot.unwrap_or(glam::DQuat::IDENTITY).normalize();
    let (principal, frame) = match b.inertia {
        Some(i) => (i, glam::DQuat::IDENTITY),
        None => (uniform.principal * (mass / uniform.mass), uniform.frame),
    };
    let mp = crate::shape::MassProperties {
        mass,
        com: uniform.com,
        principal,
        frame,
    };
    BodyInit {
        shape: b.shape.to_body_frame(&mp),
        pos: b.pos + rot * uniform.com,
        rot: rot * frame,
        vel: b.velocity,
        omega: b.angular_velocity,
        mass,
        principal,
        material: b.material,
    }
}

/// The sites of a lattice, x fastest, each jittered from `rng` when the
/// lattice has jitter.
fn lattice_sites(l: &LatticeSpec, rng: &mut Rng) -> Vec<DVec3> {
    let amp = l.jitter * l.spacing;
    let [nx, ny, nz] = l.count;
    let mut out = Vec::with_capacity(nx * ny * nz);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let mut pos = l.origin + DVec3::new(i as f64, j as f64, k as f64) * l.spacing;
                if amp > 0.0 {
                    pos += DVec3::new(
                        rng.uniform(-amp, amp),
                        rng.uniform(-amp, amp),
                        rng.uniform(-amp, amp),
                    );
                }
                out.push(pos);
            }
        }
    }
    out
}

fn lattice(scene: &Scene, l: &LatticeSpec) -> Vec<SphereInit> {
    let radius = l
        .radius
        .expect("a validated lattice of spheres has a radius");
    let (mass, inertia) = scene.mass_inertia(radius, None, None, l.density, l.material);
    let mut rng = Rng::new(l.seed);
    lattice_sites(l, &mut rng)
        .into_iter()
        .map(|pos| SphereInit {
            pos,
            radius,
            mass,
            inertia,
            vel: l.velocity,
            omega: DVec3::ZERO,
            material: l.material,
        })
        .collect()
}

fn random_box(scene: &Scene, b: &RandomBoxSpec) -> Result<Vec<SphereInit>, String> {
    let (radius, r_max) = match &b.sizes {
        Some(d) => d.bounds(),
        None => {
            let r = super::schema::placement_radius(b.radius, &b.shape);
            (r, b.radius_max.unwrap_or(r))
        }
    };
    let mut rng = Rng::new(b.seed);
    let mut hash = SpatialHash::new(2.0 * r_max);
    let mut out: Vec<SphereInit> = Vec::with_capacity(b.count);
    for n in 0..b.count {
        let r = if let Some(d) = &b.sizes {
            d.sample(&mut rng)
        } else if r_max > radius {
            rng.uniform(radius, r_max)
        } else {
            radius
        };
        let (lo, hi) = (b.min + r, b.max - r);
        let mut found = None;
        for _ in 0..RANDOM_BOX_TRIES {
            let p = DVec3::new(
                rng.uniform(lo.x, hi.x),
                rng.uniform(lo.y, hi.y),
                rng.uniform(lo.z, hi.z),
            );
            let overlaps = hash.any_near(p, |id| {
                let o = &out[id];
                p.distance_squared(o.pos) < (r + o.radius) * (r + o.radius)
            });
            if !overlaps {
                found = Some(p);
                break;
            }
        }
        let Some(pos) = found else {
            let size = b.max - b.min;
            let volume = size.x * size.y * size.z;
            let mean_r3 = if r_max > radius {
                // E[r³] for r uniform in [a, b]: (b⁴ − a⁴) / (4 (b − a)).
                (r_max.powi(4) - radius.powi(4)) / (4.0 * (r_max - radius))
            } else {
                radius.powi(3)
            };
            let fraction = b.count as f64 * 4.0 / 3.0 * std::f64::consts::PI * mean_r3 / volume;
            return Err(format!(
                "only {n} of {} spheres fit: no free place for sphere {n} after {RANDOM_BOX_TRIES} \
                 random tries (the request fills {:.0}% of the box; random placement jams near 38%) \
                 — enlarge min..max or lower count or radius",
                b.count,
                100.0 * fraction
            ));
        };
        let (mass, inertia) = scene.mass_inertia(r, None, None, b.density, b.material);
        hash.insert(pos, n);
        out.push(SphereInit {
            pos,
            radius: r,
            mass,
            inertia,
            vel: b.velocity,
            omega: DVec3::ZERO,
            material: b.material,
        });
    }
    Ok(out)
}
