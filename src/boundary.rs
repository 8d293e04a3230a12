//! Kinematic boundaries: half-spaces, box containers, finite horizontal
//! plates and cylinders (tubes and drums), fixed or moving with a prescribed
//! constant velocity and, for cylinders, spinning about their own axis.
//!
//! Boundaries have infinite mass; the solver sees them only through the
//! contact's bias term (their surface velocity at the contact point and, for
//! rolling and spinning friction, their angular velocity). Conventions:
//! a [`Shape::Plane`]'s `normal` points into the free half-space (where the
//! spheres live); a [`Shape::BoxContainer`] holds spheres *inside* an
//! axis-aligned box and `open_top` removes its +z face (z is "up" for boxes);
//! a [`Shape::Cylinder`] holds spheres *inside* a tube around `axis` through
//! `origin`, with end caps as [`Caps`] says; a [`Shape::Plate`] is a
//! horizontal rectangle of no thickness that spheres rest on from above and
//! fall off at its edges.
//!
//! # Plate geometry
//!
//! With d = x − origin and q the point of the rectangle |q_x| ≤ h_x,
//! |q_y| ≤ h_y, q_z = 0 nearest to d (d's x and y clamped to the
//! rectangle): over the plate (d's x, y inside) the surface is the face,
//! id 0, with n = +z and δ = d_z, applying while d_z ≥ 0 (a centre under
//! the face is on the plate's far side, which nothing reaches from above);
//! beyond it the surface is the edge, id 1, with n = (d − q)/‖d − q‖ and
//! δ = ‖d − q‖. At the rim the two agree (d − q = d_z ẑ), so a sphere
//! rolling off the plate turns smoothly about its edge.
//!
//! # Cylinder geometry
//!
//! With d = x − origin for a sphere centre x, the axial coordinate is
//! a = d·â and the radial vector d − a â has length ϱ and direction ê (any
//! unit vector ⟂ â when ϱ = 0). The surfaces a centre can touch, each with
//! the unit normal n pointing from the surface toward the centre (into the
//! free space) and the centre's distance δ from it (the gap is δ − r):
//!
//! | id | surface | applies when | n | δ |
//! |---|---|---|---|---|
//! | 0 | curved wall | ϱ < R and −L ≤ a ≤ L | −ê | R − ϱ |
//! | 1 | bottom cap (a = −L) | closed bottom, ϱ ≤ R | +â | a + L |
//! | 2 | top cap (a = +L) | closed top, ϱ ≤ R | −â | L − a |
//! | 3 | bottom rim circle | open bottom, a < −L | (x − q)/‖x − q‖ | ‖x − q‖ |
//! | 4 | top rim circle | open top, a > L | (x − q)/‖x − q‖ | ‖x − q‖ |
//!
//! where q = origin ± L â + R ê is the rim point nearest to x (the rim of an
//! open end is a sharp circular edge). The wall has no thickness and acts
//! only from inside (ϱ < R); at a = ±L the wall's δ = R − ϱ equals the rim's
//! ‖x − q‖, so the contact is continuous across the end of the wall.

use std::sync::Arc;

use glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};

use crate::collision::mesh::MeshSurface;

/// Which ends of a [`Shape::Cylinder`] are closed by a flat cap. "Bottom" is
/// the end at −half_length along the axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Caps {
    /// Both ends open: a tube.
    #[default]
    Open,
    /// Only the end at −half_length along the axis is closed: a cup.
    Bottom,
    /// Both ends closed: a drum.
    Both,
}

/// The geometry of a boundary, in its own coordinates around `Boundary::origin`.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// Half-space `{x : (x − origin)·normal ≥ 0}`; `normal` is unit length.
    Plane {
        /// Unit normal pointing into the free side.
        normal: DVec3,
    },
    /// Inside of an axis-aligned box centred on `origin`.
    BoxContainer {
        /// Half extents along x, y, z (m).
        half_extents: DVec3,
        /// Whether the +z face is absent (an open container).
        open_top: bool,
    },
    /// Inside of a cylinder of the given radius around the line through
    /// `origin` along `axis`, from −half_length to +half_length along it.
    Cylinder {
        /// Unit axis direction â.
        axis: DVec3,
        /// Inner radius R (m).
        radius: f64,
        /// Half the length L along the axis (m).
        half_length: f64,
        /// Which ends are closed.
        caps: Caps,
    },
    /// A horizontal rectangle `origin ± (h_x, h_y, 0)` of no thickness,
    /// touched from above and at its edges (see the module docs).
    Plate {
        /// Half extent along x (m).
        half_x: f64,
        /// Half extent along y (m).
        half_y: f64,
    },
    /// A triangle mesh ([`crate::collision::mesh`]), given in its own frame
    /// and placed by turning it by `rot` about `origin`. The only boundary
    /// whose geometry turns: its angular velocity rotates `rot`.
    Mesh {
        /// The prepared surface (shared, read once per file).
        surface: Arc<MeshSurface>,
        /// Orientation of the mesh's frame.
        rot: DQuat,
    },
}

/// One kinematic boundary.
#[derive(Clone, Debug, PartialEq)]
pub struct Boundary {
    /// Name, for logs and error messages.
    pub name: String,
    /// Geometry.
    pub shape: Shape,
    /// Reference point: a point of the plane, the box or cylinder centre (m).
    /// Moves with `velocity`.
    pub origin: DVec3,
    /// Prescribed constant velocity (m/s), in effect from `start_time` on.
    pub velocity: DVec3,
    /// Prescribed angular velocity about `origin` (rad/s), in effect from
    /// `start_time` on. Only a rotation that leaves the shape invariant is
    /// meaningful (a cylinder about its own axis); the geometry is never
    /// rotated, only the surface velocity ω × (p − origin) and the contact's
    /// relative spin see it.
    pub angular_velocity: DVec3,
    /// Simulated time (s) at which the prescribed motion switches on; before
    /// it the boundary is at rest.
    pub start_time: f64,
    /// Index into the materials table.
    pub material: u32,
}

/// One surface of a boundary near a sphere centre: see the module docs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfacePoint {
    /// Stable id of the surface within its boundary (for warm starting).
    pub id: u32,
    /// Unit normal from the surface toward the centre (into the free space).
    pub normal: DVec3,
    /// Signed distance of the centre from the surface along `normal` (m).
    pub distance: f64,
}

/// One wall face a sphere may touch: a plane with the extent over which it
/// applies (boxes are made of such faces).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Face {
    /// A point of the face's plane.
    pub point: DVec3,
    /// Unit normal pointing to the side where spheres live.
    pub normal: DVec3,
    /// Axis-aligned region (min, max) that the sphere centre must lie in for the
    /// face to apply; `None` for an unbounded half-space.
    pub extent: Option<(DVec3, DVec3)>,
}

impl Boundary {
    /// A boundary at rest (no velocity, no spin) with this shape and origin.
    pub fn fixed(name: &str, shape: Shape, origin: DVec3, material: u32) -> Self {
        Boundary {
            name: name.into(),
            shape,
            origin,
            velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
            start_time: 0.0,
            material,
        }
    }

    /// The faces of this boundary at its current position, with a face id
    /// that is stable over time (used to match contacts for warm starting).
    /// Cylinders have no planar faces (an empty list; see [`Boundary::surfaces`]).
    pub fn faces(&self) -> Vec<(u32, Face)> {
        match &self.shape {
            Shape::Cylinder { .. } | Shape::Plate { .. } | Shape::Mesh { .. } => Vec::new(),
            Shape::Plane { normal } => vec![(
                0,
                Face {
                    point: self.origin,
                    normal: *normal,
                    extent: None,
                },
            )],
            Shape::BoxContainer {
                half_extents,
                open_top,
            } => {
                let c = self.origin;
                let h = *half_extents;
                let (lo, hi) = (c - h, c + h);
                // An open top's side walls rise without end: nothing leaves over a rim.
                let top = if *open_top { f64::INFINITY } else { hi.z };
                let region = (
                    DVec3::new(lo.x, lo.y, f64::NEG_INFINITY),
                    DVec3::new(hi.x, hi.y, top),
                );
                let mut out = Vec::with_capacity(6);
                for axis in 0..3 {
                    for (side, sign) in [(0u32, 1.0), (1u32, -1.0)] {
                        if axis == 2 && side == 1 && *open_top {
                            continue;
                        }
                        let mut n = DVec3::ZERO;
                        n[axis] = sign; // inward normal
                        let mut p = c;
                        p[axis] = if sign > 0.0 { lo[axis] } else { hi[axis] };
                        // The face applies while the centre is within the box along the other axes.
                        let (mut emin, mut emax) = region;
                        emin[axis] = f64::NEG_INFINITY;
                        emax[axis] = f64::INFINITY;
                        out.push((
                            axis as u32 * 2 + side,
                            Face {
                                point: p,
                                normal: n,
                                extent: Some((emin, emax)),
                            },
                        ));
                    }
                }
                out
            }
        }
    }

    /// Signed distance from a point to the boundary's admissible region
    /// (positive inside the free space), or `None` where no face applies.
    /// For a cylinder: `None` when ϱ ≥ R (outside the tube), else the
    /// smallest of R − ϱ and the distances to the closed caps (so a centre
    /// beyond an open end but within the radius counts as inside, like the
    /// space above an open box).
    pub fn clearance(&self, x: DVec3) -> Option<f64> {
        if let Shape::Cylinder {
            axis,
            radius,
            half_length,
            caps,
        } = self.shape
        {
            let (a, rho, _) = cylinder_coords(x - self.origin, axis);
            if rho >= radius {
                return None;
            }
            let mut c = radius - rho;
            if caps != Caps::Open {
                c = c.min(a + half_length);
            }
            if caps == Caps::Both {
                c = c.min(half_length - a);
            }
            return Some(c);
        }
        if let Shape::Mesh { surface, rot } = &self.shape {
            return mesh_nearest(surface, *rot, self.origin, x).map(|s| s.distance);
        }
        if let Shape::Plate { .. } = self.shape {
            let mut c = None;
            self.surfaces(x, |s| c = Some(s.distance));
            return c;
        }
        self.faces()
            .iter()
            .filter(|(_, f)| f.applies(x))
            .map(|(_, f)| (x - f.point).dot(f.normal))
            .reduce(f64::min)
    }

    /// Whether the boundary is planar (made of [`Face`]s): planes and boxes.
    pub fn is_planar(&self) -> bool {
        matches!(self.shape, Shape::Plane { .. } | Shape::BoxContainer { .. })
    }

    /// Calls `f` for every surface of this boundary that applies to a sphere
    /// centre at `x` (planar faces through [`Boundary::faces`], cylinder
    /// surfaces as in the module docs).
    pub fn surfaces(&self, x: DVec3, mut f: impl FnMut(SurfacePoint)) {
        match self.shape {
            Shape::Cylinder {
                axis,
                radius,
                half_length,
                caps,
            } => cylinder_surfaces(x - self.origin, axis, radius, half_length, caps, f),
            Shape::Plate { half_x, half_y } => {
                if let Some(s) = plate_surface(x - self.origin, half_x, half_y) {
                    f(s)
                }
            }
            Shape::Mesh { ref surface, rot } => {
                if let Some(s) = mesh_nearest(surface, rot, self.origin, x) {
                    f(s)
                }
            }
            _ => {
                for (id, face) in self.faces() {
                    if face.applies(x) {
                        f(SurfacePoint {
                            id,
                            normal: face.normal,
                            distance: (x - face.point).dot(face.normal),
                        });
                    }
                }
            }
        }
    }

    /// The orientation of the boundary's geometry: a mesh's `rot`, the
    /// identity for every other shape (whose geometry never turns).
    pub fn rotation(&self) -> DQuat {
        match self.shape {
            Shape::Mesh { rot, .. } => rot,
            _ => DQuat::IDENTITY,
        }
    }

    /// Sets a mesh's orientation (a checkpoint's); other shapes ignore it.
    pub fn set_rotation(&mut self, q: DQuat) {
        if let Shape::Mesh { rot, .. } = &mut self.shape {
            *rot = q;
        }
    }

    /// The prescribed (velocity, angular velocity) at simulated time `t`:
    /// zero before `start_time`.
    pub fn motion_at(&self, t: f64) -> (DVec3, DVec3) {
        if t >= self.start_time {
            (self.velocity, self.angular_velocity)
        } else {
            (DVec3::ZERO, DVec3::ZERO)
        }
    }

    /// Where the boundary is: its origin and, for a mesh, its rotation (what
    /// a step's motion changes; [`Boundary::set_pose`] puts it back).
    pub fn pose(&self) -> (DVec3, Option<DQuat>) {
        let rot = match &self.shape {
            Shape::Mesh { rot, .. } => Some(*rot),
            _ => None,
        };
        (self.origin, rot)
    }

    /// Puts back a pose taken by [`Boundary::pose`].
    pub fn set_pose(&mut self, (origin, rot): (DVec3, Option<DQuat>)) {
        self.origin = origin;
        if let (Shape::Mesh { rot: r, .. }, Some(q)) = (&mut self.shape, rot) {
            *r = q;
        }
    }

    /// Whether the boundary's geometry stays where it is for the whole run:
    /// no translation, and no turning of a mesh (the one shape whose
    /// geometry turns; a drum or belt turning about its own axis keeps its
    /// surfaces in place, only their velocity sees ω).
    pub fn geometry_still(&self) -> bool {
        self.velocity == DVec3::ZERO
            && (self.angular_velocity == DVec3::ZERO || !matches!(self.shape, Shape::Mesh { .. }))
    }

    /// Velocity of the boundary's surface at point `p` at time `t`:
    /// v + ω × (p − origin) (rigid motion about `origin`).
    pub fn surface_velocity(&self, p: DVec3, t: f64) -> DVec3 {
        let (v, w) = self.motion_at(t);
        v + w.cross(p - self.origin)
    }
}

/// The nearest point of a mesh placed at `origin`, turned by `rot`, to
/// `x` ([`MeshSurface::nearest`]), as a surface point in world axes with
/// id 0: signed (negative inside) for a closed one-sided mesh, unsigned
/// for an open or two-sided one — behind an open sheet is not outside the
/// scene, only out of its reach.
fn mesh_nearest(s: &MeshSurface, rot: DQuat, origin: DVec3, x: DVec3) -> Option<SurfacePoint> {
    let p = rot.inverse() * (x - origin);
    let (_, q, d) = s.nearest(p, f64::INFINITY)?;
    let d = if s.closed { d } else { d.abs() };
    let normal = (p - q).normalize_or(DVec3::Z);
    Some(SurfacePoint {
        id: 0,
        normal: rot * if d < 0.0 { -normal } else { normal },
        distance: d,
    })
}

/// (a, ϱ, ê) of a point d relative to the axis: axial coordinate a = d·â,
/// radial distance ϱ and radial unit vector ê (any unit vector ⟂ â on the axis).
pub(crate) fn cylinder_coords(d: DVec3, axis: DVec3) -> (f64, f64, DVec3) {
    let a = d.dot(axis);
    let radial = d - axis * a;
    let rho = radial.length();
    let e = if rho > 0.0 {
        radial / rho
    } else {
        axis.any_orthonormal_vector()
    };
    (a, rho, e)
}

/// The surfaces of a cylinder (centred at the origin) that apply to a centre
/// at `d` — the table in the module docs.
fn cylinder_surfaces(
    d: DVec3,
    axis: DVec3,
    radius: f64,
    half_length: f64,
    caps: Caps,
    mut f: impl FnMut(SurfacePoint),
) {
    let (a, rho, e) = cylinder_coords(d, axis);
    let l = half_length;
    if rho < radius && (-l..=l).contains(&a) {
        f(SurfacePoint {
            id: 0,
            normal: -e,
            distance: radius - rho,
        });
    }
    let bottom_closed = caps != Caps::Open;
    let top_closed = caps == Caps::Both;
    if rho <= radius {
        if bottom_closed {
            f(SurfacePoint {
                id: 1,
                normal: axis,
                distance: a + l,
            });
        }
        if top_closed {
            f(SurfacePoint {
                id: 2,
                normal: -axis,
                distance: l - a,
            });
        }
    }
    // Rim edge of an open end: the nearest point q of the circle to d.
    let rim = |end: f64, id: u32, f: &mut dyn FnMut(SurfacePoint)| {
        let q = axis * end + e * radius;
        let v = d - q;
        let dist = v.length();
        let normal = if dist > 0.0 { v / dist } else { -e };
        f(SurfacePoint {
            id,
            normal,
            distance: dist,
        });
    };
    if !bottom_closed && a < -l {
        rim(-l, 3, &mut f);
    }
    if !top_closed && a > l {
        rim(l, 4, &mut f);
    }
}

/// The surface of a plate (centred at the origin, half extents `hx`, `hy`)
/// nearest to a centre at `d` — the plate geometry in the module docs; `None`
/// for a centre under the face.
fn plate_surface(d: DVec3, hx: f64, hy: f64) -> Option<SurfacePoint> {
    let q = DVec3::new(d.x.clamp(-hx, hx), d.y.clamp(-hy, hy), 0.0);
    if q.x == d.x && q.y == d.y {
        // Over the face: a contact from above (a centre under the face is
        // on the plate's far side, which no sphere reaches from above).
        return (d.z >= 0.0).then_some(SurfacePoint {
            id: 0,
            normal: DVec3::Z,
            distance: d.z,
        });
    }
    let v = d - q;
    let dist = v.length();
    Some(SurfacePoint {
        id: 1,
        normal: v / dist,
        distance: dist,
    })
}

impl Face {
    /// Whether a sphere centre at `x` is within the face's extent.
    pub fn applies(&self, x: DVec3) -> bool {
        match self.extent {
            None => true,
            Some((lo, hi)) => x.cmpge(lo).all() && x.cmple(hi).all(),
        }
    }
}

/// The triangles of the mesh boundaries, placed and turned as they are now
/// (for pictures).
pub fn mesh_triangles(boundaries: &[Boundary]) -> Vec<[DVec3; 3]> {
    boundaries
        .iter()
        .filter_map(|b| match &b.shape {
            Shape::Mesh { surface, rot } => Some((b, surface, *rot)),
            _ => None,
        })
        .flat_map(|(b, s, q)| {
            (0..s.mesh.triangles.len()).map(move |t| s.mesh.corners(t).map(|v| b.origin + q * v))
        })
        .collect()
}
