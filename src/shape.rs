//! Rigid-body shapes other than the sphere: their geometry, mass
//! properties, and the colliders (`parry3d-f64` shapes) that the
//! narrowphase of [`crate::collision::shapes`] asks for contacts.
//!
//! # Body frame
//!
//! Every shape is stored in its *body frame*: the origin at the centre of
//! mass and the axes along the principal axes of inertia, so the inertia
//! tensor is diagonal there, I_b = diag(I₁, I₂, I₃). The analytic shapes are
//! built that way (a cylinder's and a capsule's axis is the body z axis); a
//! convex polyhedron's vertices are moved to its centre of mass and turned
//! to its principal axes when the body is made ([`Shape::to_body_frame`]).
//! With the orientation q (body → world, R its matrix) the world inverse
//! inertia is I⁻¹ = R I_b⁻¹ Rᵀ, refreshed every step from q.
//!
//! # Mass properties (uniform density ρ)
//!
//! | shape | volume V | principal moments / m |
//! |---|---|---|
//! | box, half extents (a, b, c) | 8abc | ((b²+c²)/3, (a²+c²)/3, (a²+b²)/3) |
//! | cylinder, radius r, half height h | 2πr²h | (r²/4 + h²/3, r²/4 + h²/3, r²/2) |
//! | ellipsoid, radii (a, b, c) | 4πabc/3 | ((b²+c²)/5, (a²+c²)/5, (a²+b²)/5) |
//! | capsule r, h (cylinder m_c + ball m_s) | 2πr²h + 4πr³/3 | I_z = m_c r²/2 + 2 m_s r²/5; I_x = m_c (r²/4 + h²/3) + m_s (2r²/5 + h² + 3hr/4) |
//! | convex polyhedron | from its tetrahedra (parry) | eigenvalues of the tensor (parry) |
//!
//! Explicit `mass` and principal `inertia` may replace the density (the
//! disk of Tasora & Anitescu 2013: M = 10 kg, J = 4 kg m² about its axis,
//! not a uniform disk); principal moments must then satisfy the triangle
//! inequalities I₁ + I₂ ≥ I₃ (and cyclically), which every real mass
//! distribution does.
//!
//! # Colliders
//!
//! Shapes become `parry3d-f64` shapes at the boundary of this module
//! ([`Collider`], kept with each body); the rest of repose keeps `glam`
//! 0.30, parry uses its own glam, and vectors cross by their components.
//! The contacts between them are the narrowphase's,
//! [`crate::collision::shapes`].

use std::sync::OnceLock;

use glam::{DMat3, DQuat, DVec3};
use parry3d_f64::math::{Pose, Vector as PVec};

use parry3d_f64::shape::{
    Ball, Capsule, ConvexPolyhedron, Cuboid, Cylinder, Shape as PShape, SharedShape, SupportMap,
};
use serde::{Deserialize, Serialize};

/// The geometry of a rigid body, in its body frame (module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Shape {
    /// A sphere (the fast path: repose's own collision and scalar inertia).
    Sphere {
        /// Radius (m).
        radius: f64,
    },
    /// A box with the given half extents along the body axes (m).
    Box {
        /// Half extents (m).
        half_extents: DVec3,
    },
    /// A solid cylinder around the body z axis (a disk is a short one).
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Half of the height along z (m).
        half_height: f64,
    },
    /// A cylinder of half height `half_height` along z capped by two
    /// hemispheres of its radius.
    Capsule {
        /// Radius (m).
        radius: f64,
        /// Half of the straight part's height along z (m).
        half_height: f64,
    },
    /// An ellipsoid with semi-axes along the body axes.
    Ellipsoid {
        /// Semi-axes (m).
        radii: DVec3,
    },
    /// The convex hull of a vertex list; every vertex must be a corner of
    /// the hull (a list with a vertex inside is refused, not silently hulled).
    ConvexPolyhedron {
        /// Vertices (m).
        vertices: Vec<DVec3>,
    },
}

/// Mass, centre of mass and principal inertia of a shape in the frame it
/// was given in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProperties {
    /// Mass (kg).
    pub mass: f64,
    /// Centre of mass in the shape's frame (m).
    pub com: DVec3,
    /// Principal moments about the centre of mass (kg m²).
    pub principal: DVec3,
    /// Rotation from the principal axes to the shape's frame.
    pub frame: DQuat,
}

fn finite_positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

pub(crate) fn to_p(v: DVec3) -> PVec {
    PVec::new(v.x, v.y, v.z)
}

pub(crate) fn from_p(v: PVec) -> DVec3 {
    DVec3::new(v.x, v.y, v.z)
}

/// A pose (position, orientation) as parry's.
pub fn pose(pos: DVec3, rot: DQuat) -> Pose {
    let q = parry3d_f64::math::Rot3::from_xyzw(rot.x, rot.y, rot.z, rot.w);
    Pose::from_parts(to_p(pos), q)
}

impl Shape {
    /// A short name for messages and output columns.
    pub fn kind(&self) -> &'static str {
        match self {
            Shape::Sphere { .. } => "sphere",
            Shape::Box { .. } => "box",
            Shape::Cylinder { .. } => "cylinder",
            Shape::Capsule { .. } => "capsule",
            Shape::Ellipsoid { .. } => "ellipsoid",
            Shape::ConvexPolyhedron { .. } => "convex_polyhedron",
        }
    }

    /// Checks the dimensions; `Err` says which one is wrong and why.
    pub fn validate(&self) -> Result<(), String> {
        let pos3 = |name: &str, v: DVec3| -> Result<(), String> {
            if [v.x, v.y, v.z].into_iter().all(finite_positive) {
                Ok(())
            } else {
                Err(format!(
                    "{name} ({}, {}, {}) must be finite and > 0 in every component",
                    v.x, v.y, v.z
                ))
            }
        };
        let pos = |name: &str, x: f64| -> Result<(), String> {
            if finite_positive(x) {
                Ok(())
            } else {
                Err(format!("{name} {x} must be finite and > 0"))
            }
        };
        match self {
            Shape::Sphere { radius } => pos("radius", *radius),
            Shape::Box { half_extents } => pos3("half_extents", *half_extents),
            Shape::Cylinder {
                radius,
                half_height,
            } => pos("radius", *radius).and(pos("half_height", *half_height)),
            Shape::Capsule {
                radius,
                half_height,
            } => {
                pos("radius", *radius)?;
                if half_height.is_finite() && *half_height >= 0.0 {
                    Ok(())
                } else {
                    Err(format!(
                        "half_height {half_height} must be finite and ≥ 0 (0 is a sphere)"
                    ))
                }
            }
            Shape::Ellipsoid { radii } => pos3("radii", *radii),
            Shape::ConvexPolyhedron { vertices } => validate_vertices(vertices),
        }
    }

    /// Mass properties at uniform density `density` (kg/m³), in the frame
    /// the shape is given in (module docs' table). Assumes [`Shape::validate`].
    pub fn mass_properties(&self, density: f64) -> MassProperties {
        use std::f64::consts::PI;
        let axes = |mass: f64, principal: DVec3| MassProperties {
            mass,
            com: DVec3::ZERO,
            principal,
            frame: DQuat::IDENTITY,
        };
        match self {
            Shape::Sphere { radius: r } => {
                let m = 4.0 / 3.0 * PI * r.powi(3) * density;
                axes(m, DVec3::splat(0.4 * m * r * r))
            }
            Shape::Box { half_extents: e } => {
                let m = 8.0 * e.x * e.y * e.z * density;
                let (a, b, c) = (e.x * e.x, e.y * e.y, e.z * e.z);
                axes(m, DVec3::new(b + c, a + c, a + b) * (m / 3.0))
            }
            Shape::Cylinder {
                radius: r,
                half_height: h,
            } => {
                let m = 2.0 * PI * r * r * h * density;
                let side = m * (r * r / 4.0 + h * h / 3.0);
                axes(m, DVec3::new(side, side, 0.5 * m * r * r))
            }
            Shape::Capsule {
                radius: r,
                half_height: h,
            } => {
                let mc = 2.0 * PI * r * r * h * density;
                let ms = 4.0 / 3.0 * PI * r.powi(3) * density;
                let iz = 0.5 * mc * r * r + 0.4 * ms * r * r;
                let ix =
                    mc * (r * r / 4.0 + h * h / 3.0) + ms * (0.4 * r * r + h * h + 0.75 * h * r);
                axes(mc + ms, DVec3::new(ix, ix, iz))
            }
            Shape::Ellipsoid { radii: e } => {
                let m = 4.0 / 3.0 * PI * e.x * e.y * e.z * density;
                let (a, b, c) = (e.x * e.x, e.y * e.y, e.z * e.z);
                axes(m, DVec3::new(b + c, a + c, a + b) * (m / 5.0))
            }
            Shape::ConvexPolyhedron { vertices } => {
                let points: Vec<PVec> = vertices.iter().map(|v| to_p(*v)).collect();
                let hull = ConvexPolyhedron::from_convex_hull(&points)
                    .expect("validated vertex list has a hull");
                let mp = hull.mass_properties(density);
                let inv = from_p(mp.inv_principal_inertia);
                let f = mp.principal_inertia_local_frame;
                MassProperties {
                    mass: mp.mass(),
                    com: from_p(mp.local_com),
                    principal: DVec3::new(1.0 / inv.x, 1.0 / inv.y, 1.0 / inv.z),
                    frame: DQuat::from_xyzw(f.x, f.y, f.z, f.w).normalize(),
                }
            }
        }
    }

    /// The same shape in the body frame of `mp` (centre of mass at the
    /// origin, principal axes along the axes): only a polyhedron moves.
    pub fn to_body_frame(&self, mp: &MassProperties) -> Shape {
        match self {
            Shape::ConvexPolyhedron { vertices } => {
                let back = mp.frame.inverse();
                Shape::ConvexPolyhedron {
                    vertices: vertices.iter().map(|v| back * (*v - mp.com)).collect(),
                }
            }
            other => other.clone(),
        }
    }

    /// Radius of the smallest origin-centred ball holding the shape (m):
    /// the broadphase treats every body as this ball.
    pub fn bounding_radius(&self) -> f64 {
        match self {
            Shape::Sphere { radius } => *radius,
            Shape::Box { half_extents } => half_extents.length(),
            Shape::Cylinder {
                radius,
                half_height,
            } => radius.hypot(*half_height),
            Shape::Capsule {
                radius,
                half_height,
            } => radius + half_height,
            Shape::Ellipsoid { radii } => radii.max_element(),
            Shape::ConvexPolyhedron { vertices } => {
                vertices.iter().map(|v| v.length()).fold(0.0, f64::max)
            }
        }
    }

    /// The curvature the penalty formulation's rolling and spinning springs
    /// use at a contact point `local` (body frame, near the surface): the
    /// mean of the two principal curvatures (1/m), as Fang & Negrut 2020
    /// (App. C) take for an ellipsoid (𝒦 = (𝒦_xz + 𝒦_yz)/2, Fig. 19).
    /// Closed forms for the smooth shapes:
    ///
    /// | shape | mean curvature |
    /// |---|---|
    /// | sphere, radius r | 1/r |
    /// | ellipsoid, radii (a, b, c), at (x, y, z) on it | (a² + b² + c² − x² − y² − z²) / (2 a²b²c² (x²/a⁴ + y²/b⁴ + z²/c⁴)^{3/2}) |
    ///
    /// (the ellipsoid's at the end of its c axis: (c/a² + c/b²)/2). The
    /// point is first moved onto the surface along its ray from the centre.
    /// Shapes with flat faces, edges or corners (box, cylinder, capsule,
    /// polyhedron) have no one curvature there: `None`, and the caller
    /// takes 1/(bounding radius) as a stand-in.
    pub fn mean_curvature(&self, local: DVec3) -> Option<f64> {
        match self {
            Shape::Sphere { radius } => Some(1.0 / radius),
            Shape::Ellipsoid { radii } => {
                let scaled = local / *radii;
                let len = scaled.length();
                let p = if len > 0.0 {
                    local / len
                } else {
                    DVec3::new(0.0, 0.0, radii.z)
                };
                let (a2, b2, c2) = (radii.x * radii.x, radii.y * radii.y, radii.z * radii.z);
                let q = p.x * p.x / (a2 * a2) + p.y * p.y / (b2 * b2) + p.z * p.z / (c2 * c2);
                Some(
                    (a2 + b2 + c2 - p.length_squared()).abs() / (2.0 * a2 * b2 * c2 * q * q.sqrt()),
                )
            }
            _ => None,
        }
    }

    /// The parry shape (or our ellipsoid) for this shape.
    fn make_collider(&self) -> Collider {
        match self {
            Shape::Sphere { radius } => Collider::Parry(SharedShape::new(Ball::new(*radius))),
            Shape::Box { half_extents } => {
                Collider::Parry(SharedShape::new(Cuboid::new(to_p(*half_extents))))
            }
            // parry's cylinder stands on its y axis; ours on z (see `pose_of`).
            Shape::Cylinder {
                radius,
                half_height,
            } => Collider::Parry(SharedShape::new(Cylinder::new(*half_height, *radius))),
            Shape::Capsule {
                radius,
                half_height,
            } => Collider::Parry(SharedShape::new(Capsule::new(
                PVec::new(0.0, 0.0, -half_height),
                PVec::new(0.0, 0.0, *half_height),
                *radius,
            ))),
            Shape::Ellipsoid { radii } => Collider::Ellipsoid(EllipsoidSupport { radii: *radii }),
            Shape::ConvexPolyhedron { vertices } => {
                let points: Vec<PVec> = vertices.iter().map(|v| to_p(*v)).collect();
                Collider::Parry(SharedShape::new(
                    ConvexPolyhedron::from_convex_hull(&points)
                        .expect("validated vertex list has a hull"),
                ))
            }
        }
    }
}

/// Checks a convex polyhedron's vertex list: at least four finite points,
/// not all in a plane, and every one a corner of their hull.
fn validate_vertices(vertices: &[DVec3]) -> Result<(), String> {
    if vertices.len() < 4 {
        return Err(format!(
            "vertices: {} given, a polyhedron needs at least 4",
            vertices.len()
        ));
    }
    if let Some(k) = vertices.iter().position(|v| !v.is_finite()) {
        return Err(format!("vertices[{k}] is not finite"));
    }
    let points: Vec<PVec> = vertices.iter().map(|v| to_p(*v)).collect();
    let size = vertices
        .iter()
        .flat_map(|a| vertices.iter().map(move |b| (*a - *b).length()))
        .fold(0.0, f64::max);
    let Some(hull) = ConvexPolyhedron::from_convex_hull(&points) else {
        return Err("vertices are all in one plane (or on one line): no volume".into());
    };
    let hull_points: Vec<DVec3> = hull.points().iter().map(|p| from_p(*p)).collect();
    let volume = hull.mass_properties(1.0).mass();
    if volume.is_nan() || volume <= 1e-9 * size.powi(3) {
        return Err("vertices are all in one plane (or on one line): no volume".into());
    }
    for (k, v) in vertices.iter().enumerate() {
        let corner = hull_points
            .iter()
            .any(|h| (*h - *v).length() <= 1e-9 * size.max(f64::MIN_POSITIVE));
        if !corner {
            return Err(format!(
                "vertices[{k}] ({}, {}, {}) is not a corner of the hull (inside it, or on a face or edge): the list is not convex",
                v.x, v.y, v.z
            ));
        }
    }
    Ok(())
}

/// Checks explicit principal moments: finite, > 0 and within the triangle
/// inequalities I_a + I_b ≥ I_c (to a relative 1e-9).
pub fn validate_inertia(i: DVec3) -> Result<(), String> {
    if ![i.x, i.y, i.z].into_iter().all(finite_positive) {
        return Err(format!(
            "principal moments ({}, {}, {}) must be finite and > 0",
            i.x, i.y, i.z
        ));
    }
    let s = i.x + i.y + i.z;
    for (a, b, c) in [(i.x, i.y, i.z), (i.y, i.z, i.x), (i.z, i.x, i.y)] {
        if a + b < c - 1e-9 * s {
            return Err(format!(
                "principal moments ({}, {}, {}) violate the triangle inequality: {a} + {b} < {c}, which no mass distribution has",
                i.x, i.y, i.z
            ));
        }
    }
    Ok(())
}

/// The farthest point of an ellipsoid with semi-axes `e` in direction `d`:
/// x = E² d / ‖E d‖ with E = diag(e).
pub fn ellipsoid_support(e: DVec3, d: DVec3) -> DVec3 {
    let ed = e * d;
    let l = ed.length();
    if l > 0.0 {
        e * ed / l
    } else {
        DVec3::new(e.x, 0.0, 0.0)
    }
}

/// An ellipsoid as a parry support map (parry has no ellipsoid).
#[derive(Clone, Copy, Debug)]
pub struct EllipsoidSupport {
    pub(crate) radii: DVec3,
}

impl SupportMap for EllipsoidSupport {
    fn local_support_point(&self, dir: PVec) -> PVec {
        to_p(ellipsoid_support(self.radii, from_p(dir)))
    }
}

/// A shape as the narrowphase sees it.
#[derive(Clone)]
pub enum Collider {
    /// A parry shape.
    Parry(SharedShape),
    /// Our ellipsoid (support map only).
    Ellipsoid(EllipsoidSupport),
}

impl std::fmt::Debug for Collider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Collider::Parry(s) => write!(f, "Parry({:?})", s.shape_type()),
            Collider::Ellipsoid(e) => write!(f, "{e:?}"),
        }
    }
}

/// A body's shape with its collider, made on first use and kept (not
/// serialised: a checkpoint holds the shape, the collider is rebuilt).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BodyShape {
    /// The shape in its body frame.
    pub shape: Shape,
    #[serde(skip)]
    collider: OnceLock<Collider>,
    #[serde(skip)]
    mesh: OnceLock<Mesh>,
}

/// A triangulated surface in the body frame: vertices and outward-wound
/// triangles (indices into the vertices).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// Vertices (m, body frame).
    pub vertices: Vec<DVec3>,
    /// Triangles.
    pub triangles: Vec<[u32; 3]>,
}

/// Subdivisions of the round surfaces' meshes (around; and along a
/// meridian): enough for a picture, few enough for frames of many bodies.
const ROUND_SUBDIV: u32 = 24;

impl PartialEq for BodyShape {
    fn eq(&self, other: &Self) -> bool {
        self.shape == other.shape
    }
}

impl BodyShape {
    /// Wraps a shape given in its body frame.
    pub fn new(shape: Shape) -> Self {
        BodyShape {
            shape,
            collider: OnceLock::new(),
            mesh: OnceLock::new(),
        }
    }

    /// The shape's surface as triangles in the body frame (made once):
    /// exact for boxes and polyhedra, ROUND_SUBDIV facets around round ones.
    pub fn mesh(&self) -> &Mesh {
        self.mesh.get_or_init(|| {
            let n = ROUND_SUBDIV;
            let (vertices, triangles) = match &self.shape {
                Shape::Sphere { radius } => Ball::new(*radius).to_trimesh(n, n / 2),
                Shape::Box { half_extents } => Cuboid::new(to_p(*half_extents)).to_trimesh(),
                Shape::Cylinder {
                    radius,
                    half_height,
                } => {
                    // parry's stands on y: turn it onto our z.
                    let (v, t) = Cylinder::new(*half_height, *radius).to_trimesh(n);
                    let turn = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2);
                    let v = v.into_iter().map(|p| to_p(turn * from_p(p))).collect();
                    (v, t)
                }
                Shape::Capsule {
                    radius,
                    half_height,
                } => Capsule::new(
                    PVec::new(0.0, 0.0, -half_height),
                    PVec::new(0.0, 0.0, *half_height),
                    *radius,
                )
                .to_trimesh(n, n / 2),
                Shape::Ellipsoid { radii } => {
                    let (v, t) = Ball::new(1.0).to_trimesh(n, n / 2);
                    (v.into_iter().map(|p| to_p(from_p(p) * *radii)).collect(), t)
                }
                Shape::ConvexPolyhedron { vertices } => {
                    let points: Vec<PVec> = vertices.iter().map(|v| to_p(*v)).collect();
                    ConvexPolyhedron::from_convex_hull(&points)
                        .expect("validated vertex list has a hull")
                        .to_trimesh()
                }
            };
            Mesh {
                vertices: vertices.into_iter().map(from_p).collect(),
                triangles,
            }
        })
    }

    /// The collider, made once.
    pub fn collider(&self) -> &Collider {
        self.collider.get_or_init(|| self.shape.make_collider())
    }

    /// parry's pose for a body at (pos, rot): parry's cylinder stands on y,
    /// so it is turned onto our z.
    pub(crate) fn pose_of(&self, pos: DVec3, rot: DQuat) -> Pose {
        match self.shape {
            Shape::Cylinder { .. } => pose(
                pos,
                rot * DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2),
            ),
            _ => pose(pos, rot),
        }
    }
}

/// A body's surface triangles in the world, for a body at (x, q).
pub fn surface_triangles(s: &BodyShape, x: DVec3, q: DQuat) -> Vec<[DVec3; 3]> {
    let m = s.mesh();
    m.triangles
        .iter()
        .map(|t| t.map(|k| x + q * m.vertices[k as usize]))
        .collect()
}

/// The world inverse inertia R I_b⁻¹ Rᵀ of a body with principal inverse
/// moments `inv_body` and orientation `q`.
pub fn world_inverse_inertia(q: DQuat, inv_body: DVec3) -> DMat3 {
    let r = DMat3::from_quat(q);
    r * DMat3::from_diagonal(inv_body) * r.transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(what: &str, a: f64, b: f64, tol: f64) {
        assert!(
            (a - b).abs() <= tol * b.abs().max(1.0),
            "{what}: {a:e} vs {b:e} (relative tolerance {tol:e})"
        );
    }

    /// The curvatures 𝒦 of Fang & Negrut 2020, Table 5: the ellipsoid
    /// a = b = 2 cm, c = 5 cm upright (on the end of c) 125 /m and flat (on
    /// the end of a) 29 /m; the sphere of its volume 36.84 /m; and at
    /// generic points the mean curvature of the implicit surface F = 0,
    /// H = (|∇F|² tr(∇²F) − ∇Fᵀ ∇²F ∇F) / (2 |∇F|³) (Goldman 2005), for
    /// F = x²/a² + y²/b² + z²/c² − 1.
    #[test]
    fn mean_curvature_is_seed_003_table_5s() {
        let e = Shape::Ellipsoid {
            radii: DVec3::new(0.02, 0.02, 0.05),
        };
        let up = e.mean_curvature(DVec3::new(0.0, 0.0, 0.05)).unwrap();
        let flat = e.mean_curvature(DVec3::new(0.02, 0.0, 0.0)).unwrap();
        close("upright", up, 125.0, 1e-12);
        close("flat", flat, 29.0, 1e-12);
        // Slightly inside the surface: moved onto it first.
        close(
            "upright, 0.1 mm inside",
            e.mean_curvature(DVec3::new(0.0, 0.0, 0.0499)).unwrap(),
            125.0,
            1e-12,
        );
        let r = (0.02f64 * 0.02 * 0.05).cbrt();
        let s = Shape::Sphere { radius: r };
        close(
            "sphere",
            s.mean_curvature(DVec3::X * r).unwrap(),
            36.84,
            1e-3,
        );
        // Unequal axes at the end of c: (c/a² + c/b²)/2.
        let g = Shape::Ellipsoid {
            radii: DVec3::new(0.1, 0.2, 0.3),
        };
        close(
            "generic ellipsoid at (0, 0, c)",
            g.mean_curvature(DVec3::new(0.0, 0.0, 0.3)).unwrap(),
            (0.3 / 0.01 + 0.3 / 0.04) / 2.0,
            1e-12,
        );
        let radii = DVec3::new(0.1, 0.2, 0.3);
        for dir in [
            DVec3::new(1.0, 1.0, 1.0),
            DVec3::new(-0.3, 0.8, 0.1),
            DVec3::new(0.05, -0.2, -1.0),
        ] {
            let p = dir / (dir / radii).length();
            let grad = 2.0 * p / (radii * radii);
            let hess = 2.0 / (radii * radii);
            let g2 = grad.length_squared();
            let h = (g2 * hess.element_sum() - (grad * grad * hess).element_sum())
                / (2.0 * g2 * g2.sqrt());
            close(
                &format!("ellipsoid at {p}"),
                g.mean_curvature(p).unwrap(),
                h,
                1e-12,
            );
        }
        assert_eq!(
            Shape::Box {
                half_extents: DVec3::ONE
            }
            .mean_curvature(DVec3::X),
            None
        );
    }

    /// The closed forms of the module docs agree with parry's mass
    /// properties of the same shapes (a cylinder turned onto z, a capsule
    /// and a box as polyhedra integrated by parry).
    #[test]
    fn closed_form_mass_properties_match_parrys() {
        let rho = 1300.0;
        let cases = [
            (
                Shape::Box {
                    half_extents: DVec3::new(0.3, 0.2, 0.1),
                },
                Cuboid::new(PVec::new(0.3, 0.2, 0.1)).mass_properties(rho),
                [0, 1, 2],
            ),
            (
                Shape::Capsule {
                    radius: 0.1,
                    half_height: 0.25,
                },
                Capsule::new(PVec::new(0.0, 0.0, -0.25), PVec::new(0.0, 0.0, 0.25), 0.1)
                    .mass_properties(rho),
                [0, 1, 2],
            ),
            (
                Shape::Cylinder {
                    radius: 0.2,
                    half_height: 0.05,
                },
                // parry's cylinder stands on y: its y moment is our z.
                Cylinder::new(0.05, 0.2).mass_properties(rho),
                [0, 2, 1],
            ),
        ];
        for (shape, parry, order) in cases {
            let ours = shape.mass_properties(rho);
            close(
                &format!("{} mass", shape.kind()),
                ours.mass,
                parry.mass(),
                1e-9,
            );
            // parry's principal moments, sorted as ours by the axis map.
            let mut theirs: Vec<f64> = {
                let inv = from_p(parry.inv_principal_inertia);
                let f = parry.principal_inertia_local_frame;
                let q = DQuat::from_xyzw(f.x, f.y, f.z, f.w);
                // The moment about each of parry's local axes.
                [DVec3::X, DVec3::Y, DVec3::Z]
                    .iter()
                    .map(|a| {
                        let b = q.inverse() * *a;
                        1.0 / (b * b * inv).element_sum()
                    })
                    .collect()
            };
            theirs = order.iter().map(|&k| theirs[k]).collect();
            let ours_v = [ours.principal.x, ours.principal.y, ours.principal.z];
            for k in 0..3 {
                close(
                    &format!("{} I[{k}]", shape.kind()),
                    ours_v[k],
                    theirs[k],
                    1e-6,
                );
            }
        }
    }

    /// A polyhedron's centre of mass and principal moments: a unit cube's
    /// eight corners shifted by (1, 2, 3) have their centre there and the
    /// cube's moments m/6.
    #[test]
    fn polyhedron_mass_properties_find_the_centre_and_axes() {
        let c = DVec3::new(1.0, 2.0, 3.0);
        let vertices: Vec<DVec3> = (0..8)
            .map(|k| {
                c + DVec3::new(
                    (k & 1) as f64 - 0.5,
                    ((k >> 1) & 1) as f64 - 0.5,
                    ((k >> 2) & 1) as f64 - 0.5,
                )
            })
            .collect();
        let shape = Shape::ConvexPolyhedron { vertices };
        shape.validate().expect("a cube is convex");
        let mp = shape.mass_properties(1000.0);
        close("mass", mp.mass, 1000.0, 1e-9);
        close("com distance", (mp.com - c).length(), 0.0, 1e-9);
        for k in 0..3 {
            close("moment", mp.principal[k], 1000.0 / 6.0, 1e-9);
        }
        let body = shape.to_body_frame(&mp);
        close(
            "bounding radius",
            body.bounding_radius(),
            0.75f64.sqrt(),
            1e-9,
        );
    }

    /// Bad shapes are named with the reason.
    #[test]
    fn bad_shapes_are_refused_with_the_reason() {
        let zero = Shape::Box {
            half_extents: DVec3::new(0.5, 0.0, 0.5),
        };
        assert!(zero.validate().unwrap_err().contains("half_extents"));
        let mut vertices: Vec<DVec3> = (0..8)
            .map(|k| DVec3::new((k & 1) as f64, ((k >> 1) & 1) as f64, ((k >> 2) & 1) as f64))
            .collect();
        vertices.push(DVec3::splat(0.5));
        let err = Shape::ConvexPolyhedron { vertices }.validate().unwrap_err();
        assert!(
            err.contains("vertices[8]") && err.contains("not convex"),
            "{err}"
        );
        let flat = Shape::ConvexPolyhedron {
            vertices: vec![DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::X + DVec3::Y],
        };
        assert!(flat.validate().unwrap_err().contains("one plane"));
        let err = validate_inertia(DVec3::new(1.0, 1.0, 3.0)).unwrap_err();
        assert!(err.contains("triangle inequality"), "{err}");
        validate_inertia(DVec3::new(2.0, 2.0, 4.0)).expect("a thin disk's moments are allowed");
    }
}
