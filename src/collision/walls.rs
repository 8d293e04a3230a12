//! Contacts of bodies that are not spheres with the kinematic boundaries:
//! one function, [`body_wall_points`], used by collision detection each
//! step and by scene validation (a body placed across a wall).
//!
//! | boundary | surfaces (ids as for spheres, [`crate::boundary`]) | how |
//! |---|---|---|
//! | `Plane`, `Box` | each planar face whose extent holds the body's centre | a half-space ([`shapes::halfspace_contacts`]): several points where the geometry has them |
//! | `Mesh` | the triangles near the body | parry's manifolds against its mesh, internal edges corrected ([`shapes::mesh_contacts`]) |
//! | `Plate` | the plate as a slab 1 % of its smaller half extent thick | parry's narrowphase against a box ([`plate_slab`]) |
//! | `Cylinder`, curved wall (0) | while the centre is inside the tube | the tangent plane at the centre's radial direction, then each point's true radial gap (below) |
//! | `Cylinder`, closed caps (1, 2) | while the centre is within the radius | half-spaces |
//! | `Cylinder`, rims of open ends (3, 4) | while the body reaches past the end, near the rim | a segment tangent to the rim circle at the rim point nearest the centre, 2 r_b long |
//!
//! **The curved wall.** The inside of a tube is concave, so no convex
//! narrowphase applies directly. With â the axis, the body's centre at
//! axial coordinate a and radial direction ê, the wall is replaced by its
//! tangent plane T = {y : (y − o − a â − R ê)·ê = 0}; the plane's manifold is
//! searched with the envelope widened by 2 r_b²/R (r_b the bounding radius:
//! a point at distance t ≤ r_b from the line of tangency, at distance u from
//! the axis along ê, sits t²/(2u) deeper in the tube than in T, at most
//! 2 r_b²/R while u ≥ R/4). Each manifold point p then gets
//! the tube's own gap R − ϱ_p, the normal ê_p (its radial direction, from
//! the body toward the wall) and the wall point o + a_p â + R ê_p; points
//! past an open end (|a_p| > L) are dropped. The points are the vertices of
//! the feature nearest T (exact for polyhedral features: a box's corners);
//! for round ones the deepest point in the tube differs from the deepest in
//! T by O(r_b²/R) of the body's curvature — the same order as the
//! widening, small for grains in a drum (r_b/R ≈ 0.1 gives 1 % of r_b).

use glam::{DQuat, DVec3};

use super::shapes::{self, PointContact, Side};
use crate::boundary::{cylinder_coords, Boundary, Caps, Face, Shape as Wall};
use crate::shape::{BodyShape, Shape};

/// A plate as bodies of other shapes meet it: a slab whose top face is the
/// plate, 1 % of its smaller half extent thick (a plate has no thickness;
/// parry's boxes need some), and the slab's centre.
pub fn plate_slab(b: &Boundary) -> Option<(BodyShape, DVec3)> {
    match b.shape {
        Wall::Plate { half_x, half_y } => {
            let t = 0.01 * half_x.min(half_y);
            Some((
                BodyShape::new(Shape::Box {
                    half_extents: DVec3::new(half_x, half_y, t),
                }),
                b.origin - DVec3::Z * t,
            ))
        }
        _ => None,
    }
}

/// The contact points (with the surface id each belongs to) of a body of
/// shape `s` at `x`, turned by `q`, with boundary `b`, closer than
/// `envelope`; the normal of each points from the body toward the wall.
/// `faces` are `b.faces()` and `slab` is `plate_slab(b)` (computed once per
/// step by the caller).
pub fn body_wall_points(
    s: &BodyShape,
    x: DVec3,
    q: DQuat,
    b: &Boundary,
    faces: &[(u32, Face)],
    slab: Option<&(BodyShape, DVec3)>,
    envelope: f64,
) -> Vec<(u32, Vec<PointContact>)> {
    let mut out = Vec::new();
    if let Wall::Mesh { surface, rot } = &b.shape {
        let points = shapes::mesh_contacts(s, x, q, surface.parry(), b.origin, *rot, envelope);
        out.push((0, points));
        return out;
    }
    if let Some((slab, centre)) = slab {
        let points = shapes::contacts(
            Side::Shape(s),
            x,
            q,
            Side::Shape(slab),
            *centre,
            DQuat::IDENTITY,
            envelope,
        );
        out.push((0, points));
        return out;
    }
    if let Wall::Cylinder {
        axis,
        radius,
        half_length,
        caps,
    } = b.shape
    {
        let tube = Tube {
            origin: b.origin,
            axis,
            radius,
            half_length,
            caps,
        };
        tube.points(s, x, q, envelope, &mut out);
        return out;
    }
    for (id, f) in faces {
        if f.applies(x) {
            out.push((
                *id,
                shapes::halfspace_contacts(s, x, q, f.point, f.normal, envelope),
            ));
        }
    }
    out
}

/// A cylinder boundary's geometry (module docs).
struct Tube {
    origin: DVec3,
    axis: DVec3,
    radius: f64,
    half_length: f64,
    caps: Caps,
}

impl Tube {
    fn points(
        &self,
        s: &BodyShape,
        x: DVec3,
        q: DQuat,
        envelope: f64,
        out: &mut Vec<(u32, Vec<PointContact>)>,
    ) {
        let (ax, r, l) = (self.axis, self.radius, self.half_length);
        let rb = s.shape.bounding_radius();
        let (a, rho, e) = cylinder_coords(x - self.origin, ax);
        let bottom_closed = self.caps != Caps::Open;
        let top_closed = self.caps == Caps::Both;
        // The curved wall, from inside, where the body can reach it.
        if rho < r && rho + rb > r - envelope && a - rb <= l && a + rb >= -l {
            let point = self.origin + ax * a + e * r;
            let widened = envelope + 2.0 * rb * rb / r;
            let points = shapes::halfspace_contacts(s, x, q, point, -e, widened)
                .into_iter()
                .filter_map(|c| self.on_wall(c, envelope))
                .collect();
            out.push((0, points));
        }
        if rho <= r {
            if bottom_closed {
                let p = self.origin - ax * l;
                out.push((1, shapes::halfspace_contacts(s, x, q, p, ax, envelope)));
            }
            if top_closed {
                let p = self.origin + ax * l;
                out.push((2, shapes::halfspace_contacts(s, x, q, p, -ax, envelope)));
            }
        }
        // Rims of open ends: the body reaches past the end, near the circle.
        let near_rim = (rho - r).abs() <= rb + envelope;
        for (closed, end, id) in [(bottom_closed, -l, 3), (top_closed, l, 4)] {
            let past = if end < 0.0 {
                a - rb < end
            } else {
                a + rb > end
            };
            if !closed && near_rim && past && (a - end).abs() <= rb + envelope {
                out.push((id, self.rim(s, x, q, end, e, rb, envelope)));
            }
        }
    }

    /// A curved-wall point from the tangent plane's manifold, with the
    /// tube's own gap, normal and wall point; `None` past an open end or
    /// beyond the envelope.
    fn on_wall(&self, c: PointContact, envelope: f64) -> Option<PointContact> {
        let (ap, rp, ep) = cylinder_coords(c.p1 - self.origin, self.axis);
        let l = self.half_length;
        if rp == 0.0 || !(-l..=l).contains(&ap) {
            return None;
        }
        let gap = self.radius - rp;
        (gap < envelope).then(|| PointContact {
            p1: c.p1,
            p2: self.origin + self.axis * ap + ep * self.radius,
            normal: ep,
            dist: gap,
            tag: c.tag,
        })
    }

    /// The rim circle of the end at axial coordinate `end`, near radial
    /// direction `e`, as a segment tangent to it (module docs): a capsule of
    /// radius ε around the segment, its distances moved back by ε.
    #[allow(clippy::too_many_arguments)]
    fn rim(
        &self,
        s: &BodyShape,
        x: DVec3,
        q: DQuat,
        end: f64,
        e: DVec3,
        rb: f64,
        envelope: f64,
    ) -> Vec<PointContact> {
        let eps = 1e-6 * rb;
        let centre = self.origin + self.axis * end + e * self.radius;
        let tangent = self.axis.cross(e);
        // A capsule's axis is its body z: turn z onto the tangent.
        let turn = DQuat::from_rotation_arc(DVec3::Z, tangent);
        let edge = BodyShape::new(Shape::Capsule {
            radius: eps,
            half_height: rb,
        });
        shapes::contacts(
            Side::Shape(s),
            x,
            q,
            Side::Shape(&edge),
            centre,
            turn,
            envelope + eps,
        )
        .into_iter()
        .map(|c| PointContact {
            p2: c.p2 + c.normal * eps,
            dist: c.dist + eps,
            ..c
        })
        .filter(|c| c.dist < envelope)
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drum(axis: DVec3, caps: Caps) -> Boundary {
        Boundary::fixed(
            "drum",
            Wall::Cylinder {
                axis,
                radius: 0.5,
                half_length: 0.3,
                caps,
            },
            DVec3::ZERO,
            0,
        )
    }

    fn points(
        b: &Boundary,
        s: &BodyShape,
        x: DVec3,
        q: DQuat,
        env: f64,
    ) -> Vec<(u32, PointContact)> {
        body_wall_points(s, x, q, b, &b.faces(), plate_slab(b).as_ref(), env)
            .into_iter()
            .flat_map(|(id, pts)| pts.into_iter().map(move |p| (id, p)))
            .collect()
    }

    /// A box (half extents 0.1, 0.05, 0.04) with its centre 0.4 m below the
    /// axis of a drum along y (R = 0.5): its four bottom corners (±0.1, ±0.05,
    /// −0.44) are ϱ = √(0.1² + 0.44²) = 0.451221 from the axis, a gap of
    /// 0.048779 each, with the radial normal (±0.1, 0, −0.44)/ϱ and the wall
    /// point R/ϱ times the corner's radial part; its top corners are far
    /// from the wall and outside the envelope.
    #[test]
    fn box_corners_in_a_drum_get_the_tube_gap_and_radial_normal() {
        let s = BodyShape::new(Shape::Box {
            half_extents: DVec3::new(0.1, 0.05, 0.04),
        });
        let b = drum(DVec3::Y, Caps::Both);
        let x = DVec3::new(0.0, 0.0, -0.4);
        let found = points(&b, &s, x, DQuat::IDENTITY, 0.06);
        assert_eq!(found.len(), 4, "{found:?}");
        let rho = (0.1f64 * 0.1 + 0.44 * 0.44).sqrt();
        for (id, c) in &found {
            assert_eq!(*id, 0, "the curved wall");
            let radial = DVec3::new(c.p1.x, 0.0, c.p1.z);
            assert!(
                (c.p1.x.abs() - 0.1).abs() < 1e-12 && (c.p1.z + 0.44).abs() < 1e-12,
                "corner {:?}",
                c.p1
            );
            assert!(
                (c.dist - (0.5 - rho)).abs() < 1e-12,
                "gap {} vs {}",
                c.dist,
                0.5 - rho
            );
            assert!(
                (c.normal - radial / rho).length() < 1e-12,
                "normal {:?}",
                c.normal
            );
            assert!(
                (c.p2 - (radial * (0.5 / rho) + DVec3::Y * c.p1.y)).length() < 1e-12,
                "wall point {:?}",
                c.p2
            );
        }
        // Moved 0.05 m up, the corners are 0.098 from the wall: nothing
        // within an envelope of 0.06.
        let up = points(&b, &s, x + DVec3::Z * 0.05, DQuat::IDENTITY, 0.06);
        assert!(up.is_empty(), "{up:?}");
    }

    /// The same box standing on the closed bottom cap of an upright cup:
    /// four corners on the cap plane at gap 0.01 (its centre 0.05 above the
    /// cap at z = −0.3); beyond an open top nothing but the rim can touch
    /// it, and a box wholly inside an open tube, away from the wall, touches
    /// nothing.
    #[test]
    fn box_on_a_cup_floor_touches_the_cap_with_four_corners() {
        let s = BodyShape::new(Shape::Box {
            half_extents: DVec3::new(0.1, 0.05, 0.04),
        });
        let cup = drum(DVec3::Z, Caps::Bottom);
        let found = points(&cup, &s, DVec3::new(0.0, 0.0, -0.25), DQuat::IDENTITY, 0.02);
        assert_eq!(found.len(), 4, "{found:?}");
        for (id, c) in &found {
            assert_eq!(*id, 1, "the bottom cap");
            assert!((c.dist - 0.01).abs() < 1e-12, "gap {}", c.dist);
            assert!(
                (c.normal + DVec3::Z).length() < 1e-12,
                "normal {:?}",
                c.normal
            );
        }
        let tube = drum(DVec3::Z, Caps::Open);
        assert!(points(&tube, &s, DVec3::ZERO, DQuat::IDENTITY, 0.02).is_empty());
    }

    /// A box straddling the open end of a tube along x, its bottom face
    /// resting on the rim at the bottom (the rim point (0.3, 0, −0.5)):
    /// the rim touches its bottom face (gap 0, normal −z), and the curved
    /// wall touches only its corners still inside the tube.
    #[test]
    fn box_over_the_rim_of_an_open_end_touches_the_rim() {
        let s = BodyShape::new(Shape::Box {
            half_extents: DVec3::new(0.1, 0.05, 0.04),
        });
        let tube = drum(DVec3::X, Caps::Open);
        // Bottom face at z = −0.5 + 1e-4, centre past the end by 0.05.
        let x = DVec3::new(0.35, 0.0, -0.5 + 0.04 + 1e-4);
        let found = points(&tube, &s, x, DQuat::IDENTITY, 0.01);
        let rim: Vec<_> = found.iter().filter(|(id, _)| *id == 4).collect();
        assert!(!rim.is_empty(), "no rim contact: {found:?}");
        for (_, c) in &rim {
            assert!((c.dist - 1e-4).abs() < 1e-9, "rim gap {}", c.dist);
            assert!(
                (c.normal + DVec3::Z).length() < 1e-6,
                "rim normal {:?}",
                c.normal
            );
            assert!((c.p2.x - 0.3).abs() < 1e-9, "rim point {:?}", c.p2);
        }
        for (id, c) in &found {
            if *id == 0 {
                assert!(c.p1.x <= 0.3, "a wall point past the end: {:?}", c.p1);
            }
        }
    }
}
