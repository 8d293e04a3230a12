//! Kinematic boundaries: half-spaces and box containers, fixed or moving with
//! a prescribed constant velocity.
//!
//! Boundaries have infinite mass; the solver sees them only through the
//! contact's bias term (their velocity at the contact point). Conventions:
//! a [`Shape::Plane`]'s `normal` points into the free half-space (where the
//! spheres live); a [`Shape::BoxContainer`] holds spheres *inside* an
//! axis-aligned box and `open_top` removes its +z face (z is "up" for boxes).

use glam::DVec3;

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
}

/// One kinematic boundary.
#[derive(Clone, Debug, PartialEq)]
pub struct Boundary {
    /// Name, for logs and error messages.
    pub name: String,
    /// Geometry.
    pub shape: Shape,
    /// Reference point: a point of the plane, or the box centre (m). Moves with `velocity`.
    pub origin: DVec3,
    /// Prescribed constant velocity (m/s).
    pub velocity: DVec3,
    /// Index into the materials table.
    pub material: u32,
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
    /// The faces of this boundary at its current position, with a face id
    /// that is stable over time (used to match contacts for warm starting).
    pub fn faces(&self) -> Vec<(u32, Face)> {
        match &self.shape {
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
                // A sphere centre above an open top's rim touches no side wall.
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
    pub fn clearance(&self, x: DVec3) -> Option<f64> {
        self.faces()
            .iter()
            .filter(|(_, f)| f.applies(x))
            .map(|(_, f)| (x - f.point).dot(f.normal))
            .reduce(f64::min)
    }
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
