//! The narrowphase of bodies that are not plain spheres (through
//! `parry3d-f64`, whose shapes [`crate::shape`] keeps as each body's
//! [`Collider`]): pairs of polyhedral-feature shapes (box, cylinder,
//! capsule, polyhedron, sphere) get parry's contact manifolds — several
//! points where the geometry has them, a box on a plane four — and pairs
//! with an ellipsoid one point from GJK/EPA on the support maps (an
//! ellipsoid is strictly convex: one point is the whole contact). A body
//! against a half-space or a triangle mesh is the same query with the
//! boundary as the second shape.

use glam::{DQuat, DVec3};
use parry3d_f64::query::{self, ContactManifold, PersistentQueryDispatcher};
use parry3d_f64::shape::{Ball, HalfSpace, Shape as PShape, SupportMap};

use parry3d_f64::math::Pose;

use crate::shape::{ellipsoid_support, from_p, pose, to_p, BodyShape, Collider};

/// One contact point between two shapes, in world coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointContact {
    /// Point on the first shape's surface.
    pub p1: DVec3,
    /// Point on the second shape's surface.
    pub p2: DVec3,
    /// Unit normal from the first shape toward the second.
    pub normal: DVec3,
    /// Signed distance along the normal (negative when overlapping).
    pub dist: f64,
    /// The features in touch (parry's feature ids of both shapes, stable
    /// while they stay in touch), for warm starts.
    pub tag: u64,
}

fn tag_of(fid1: u32, fid2: u32) -> u64 {
    u64::from(fid1) << 32 | u64::from(fid2)
}

/// One side of a body pair: a body's shape, or a plain sphere of the given
/// radius (which needs no collider: parry's ball is made on the stack).
#[derive(Clone, Copy, Debug)]
pub enum Side<'a> {
    /// A body of [`Shape`](crate::shape::Shape), with its kept collider.
    Shape(&'a BodyShape),
    /// A plain sphere (m).
    Ball(f64),
}

/// What the narrowphase gets of one side.
enum View<'a> {
    /// A parry shape: manifolds.
    Parry(&'a dyn PShape),
    /// Only a support map (our ellipsoid): GJK/EPA.
    Support(&'a dyn SupportMap),
}

impl<'a> View<'a> {
    fn of(side: Side<'a>, ball: Option<&'a Ball>) -> Self {
        match (side, ball) {
            (_, Some(b)) => View::Parry(b),
            (Side::Shape(s), None) => match s.collider() {
                Collider::Parry(g) => View::Parry(g.as_ref()),
                Collider::Ellipsoid(e) => View::Support(e),
            },
            (Side::Ball(_), None) => unreachable!("a ball side comes with its ball"),
        }
    }

    fn support(&self) -> &'a dyn SupportMap {
        match *self {
            View::Parry(g) => g
                .as_support_map()
                .expect("every repose shape is a support map"),
            View::Support(s) => s,
        }
    }
}

/// The contact points of two bodies whose surfaces are closer than
/// `prediction` (empty when farther): a manifold for polyhedral-feature
/// pairs, one point when an ellipsoid is involved.
pub fn contacts(
    s1: Side,
    x1: DVec3,
    q1: DQuat,
    s2: Side,
    x2: DVec3,
    q2: DQuat,
    prediction: f64,
) -> Vec<PointContact> {
    let pose_of = |s: Side, x, q| match s {
        Side::Shape(b) => b.pose_of(x, q),
        Side::Ball(_) => pose(x, q),
    };
    let ball = |s: Side| match s {
        Side::Ball(r) => Some(Ball::new(r)),
        Side::Shape(_) => None,
    };
    let (pose1, pose2) = (pose_of(s1, x1, q1), pose_of(s2, x2, q2));
    let pos12 = pose1.inv_mul(&pose2);
    let (b1, b2) = (ball(s1), ball(s2));
    match (View::of(s1, b1.as_ref()), View::of(s2, b2.as_ref())) {
        (View::Parry(g1), View::Parry(g2)) => manifold_points(&pose1, &pos12, g1, g2, prediction),
        (v1, v2) => {
            let Some(c) = query::contact::contact_support_map_support_map(
                &pos12,
                v1.support(),
                v2.support(),
                prediction,
            ) else {
                return Vec::new();
            };
            vec![PointContact {
                p1: from_p(pose1 * c.point1),
                p2: from_p(pose1 * (pos12 * c.point2)),
                normal: from_p(pose1.rotation * c.normal1).normalize(),
                dist: c.dist,
                tag: 0,
            }]
        }
    }
}

/// The contact points of a body with the half-space {y : (y − point)·normal ≤ 0}
/// (a wall whose free side is along `normal`), closer than `prediction`.
/// The normal of each contact points from the body toward the wall (−normal).
pub fn halfspace_contacts(
    s: &BodyShape,
    x: DVec3,
    q: DQuat,
    point: DVec3,
    normal: DVec3,
    prediction: f64,
) -> Vec<PointContact> {
    match s.collider() {
        Collider::Ellipsoid(e) => {
            // The deepest point: the support point toward the wall.
            let d = q.inverse() * -normal;
            let p1 = x + q * ellipsoid_support(e.radii, d);
            let dist = (p1 - point).dot(normal);
            if dist >= prediction {
                return Vec::new();
            }
            vec![PointContact {
                p1,
                p2: p1 - normal * dist,
                normal: -normal,
                dist,
                tag: 0,
            }]
        }
        Collider::Parry(g) => {
            let pose1 = s.pose_of(x, q);
            // parry's half-space keeps its solid on the side opposite its
            // normal: the wall's solid is behind `point`.
            let wall = HalfSpace::new(to_p(normal).normalize());
            let pose2 = pose(point, DQuat::IDENTITY);
            let pos12 = pose1.inv_mul(&pose2);
            manifold_points(&pose1, &pos12, g.as_ref(), &wall, prediction)
        }
    }
}

/// The contact points of a body with a triangle mesh placed at `origin`,
/// turned by `rot` (parry's manifolds against each triangle near the body,
/// with parry's correction of normals at internal edges), closer than
/// `prediction`. An ellipsoid has no manifold with a mesh: none (scenes
/// refuse ellipsoids beside meshes).
pub fn mesh_contacts(
    s: &BodyShape,
    x: DVec3,
    q: DQuat,
    mesh: &parry3d_f64::shape::TriMesh,
    origin: DVec3,
    rot: DQuat,
    prediction: f64,
) -> Vec<PointContact> {
    let pose1 = s.pose_of(x, q);
    let pos12 = pose1.inv_mul(&pose(origin, rot));
    match s.collider() {
        Collider::Parry(g) => manifold_points(&pose1, &pos12, g.as_ref(), mesh, prediction),
        Collider::Ellipsoid(_) => Vec::new(),
    }
}

fn manifold_points(
    pose1: &Pose,
    pos12: &Pose,
    g1: &dyn PShape,
    g2: &dyn PShape,
    prediction: f64,
) -> Vec<PointContact> {
    let mut manifolds: Vec<ContactManifold<(), ()>> = Vec::new();
    let mut ws = None;
    if query::DefaultQueryDispatcher
        .contact_manifolds(pos12, g1, g2, prediction, &mut manifolds, &mut ws)
        .is_err()
    {
        // Every pair of repose shapes is supported; fall back to one point.
        return query::contact(&Pose::IDENTITY, g1, pos12, g2, prediction)
            .ok()
            .flatten()
            .map(|c| PointContact {
                p1: from_p(*pose1 * c.point1),
                p2: from_p(*pose1 * c.point2),
                normal: from_p(pose1.rotation * c.normal1).normalize(),
                dist: c.dist,
                tag: 0,
            })
            .into_iter()
            .collect();
    }
    let mut out = Vec::new();
    for m in &manifolds {
        let normal = from_p(pose1.rotation * m.local_n1).normalize();
        for p in &m.points {
            if p.dist >= prediction {
                continue;
            }
            let p1 = from_p(*pose1 * p.local_p1);
            // parry's clipping can return a point twice (degenerate
            // features): one contact per place.
            let eps = 1e-9 * (1.0 + p1.length());
            if out
                .iter()
                .any(|q: &PointContact| (q.p1 - p1).length() <= eps)
            {
                continue;
            }
            out.push(PointContact {
                p1,
                p2: from_p(*pose1 * (*pos12 * p.local_p2)),
                normal,
                dist: p.dist,
                // A composite (a mesh) has a manifold per triangle: its
                // index keeps the tags apart (0 for single shapes).
                tag: tag_of(p.fid1.0, p.fid2.0)
                    .wrapping_add(u64::from(m.subshape2).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::Shape;

    fn close(what: &str, a: f64, b: f64, tol: f64) {
        assert!(
            (a - b).abs() <= tol * b.abs().max(1.0),
            "{what}: {a:e} vs {b:e} (relative tolerance {tol:e})"
        );
    }

    /// Contact geometry against hand-computed cases.
    #[test]
    fn contact_geometry_matches_hand_computed_cases() {
        let boxed = BodyShape::new(Shape::Box {
            half_extents: DVec3::splat(0.5),
        });
        // A cube resting 1 mm above a plane, flat: four corners at 1 mm.
        let pts = halfspace_contacts(
            &boxed,
            DVec3::new(0.0, 0.0, 0.501),
            DQuat::IDENTITY,
            DVec3::ZERO,
            DVec3::Z,
            0.01,
        );
        assert_eq!(pts.len(), 4, "{pts:?}");
        for p in &pts {
            close("corner gap", p.dist, 0.001, 1e-9);
            close("normal z", p.normal.z, -1.0, 1e-12);
            close("corner |x|", p.p1.x.abs(), 0.5, 1e-9);
        }
        // The same cube balanced on a corner: one point, gap 1 mm below
        // the lowest corner at z = c − √3/2.
        let q = DQuat::from_rotation_arc(DVec3::splat(1.0).normalize(), DVec3::Z);
        let c = 0.75f64.sqrt() + 0.001;
        let pts = halfspace_contacts(
            &boxed,
            DVec3::new(0.0, 0.0, c),
            q,
            DVec3::ZERO,
            DVec3::Z,
            0.01,
        );
        assert_eq!(pts.len(), 1, "{pts:?}");
        close("corner-down gap", pts[0].dist, 0.001, 1e-9);
        // A box edge on another box's face: turned 45° about x, its lowest
        // edge is √2/2 below its centre.
        let edge = contacts(
            Side::Shape(&boxed),
            DVec3::ZERO,
            DQuat::IDENTITY,
            Side::Shape(&boxed),
            DVec3::new(0.0, 0.0, 0.5 + 0.5f64.sqrt() + 0.002),
            DQuat::from_rotation_x(std::f64::consts::FRAC_PI_4),
            0.01,
        );
        assert!(!edge.is_empty() && edge.len() <= 2, "{edge:?}");
        for p in &edge {
            close("edge gap", p.dist, 0.002, 1e-9);
            close("edge normal z", p.normal.z, 1.0, 1e-9);
        }
        // A cylinder standing on its rim, tilted 30°: the lowest rim point
        // is R sin 30° + h cos 30° below the centre.
        let cyl = BodyShape::new(Shape::Cylinder {
            radius: 0.2,
            half_height: 0.1,
        });
        let tilt = 30f64.to_radians();
        let low = 0.2 * tilt.sin() + 0.1 * tilt.cos();
        let pts = halfspace_contacts(
            &cyl,
            DVec3::new(0.0, 0.0, low + 0.003),
            DQuat::from_rotation_x(tilt),
            DVec3::ZERO,
            DVec3::Z,
            0.01,
        );
        assert!(!pts.is_empty(), "no rim contact");
        let deepest = pts.iter().map(|p| p.dist).fold(f64::INFINITY, f64::min);
        close("rim gap", deepest, 0.003, 1e-6);
        // An ellipsoid's support point: for semi-axes (a, b, c) along d = z
        // it is (0, 0, c); tilted, the lowest point of x²/a² + z²/c² = 1
        // turned by θ is √(a² sin²θ + c² cos²θ) below the centre.
        let e = DVec3::new(0.3, 0.2, 0.1);
        close("support z", ellipsoid_support(e, DVec3::Z).z, 0.1, 1e-12);
        let ell = BodyShape::new(Shape::Ellipsoid { radii: e });
        let th = 0.4f64;
        let depth = (0.09 * th.sin().powi(2) + 0.01 * th.cos().powi(2)).sqrt();
        let pts = halfspace_contacts(
            &ell,
            DVec3::new(0.0, 0.0, depth + 0.001),
            DQuat::from_rotation_y(th),
            DVec3::ZERO,
            DVec3::Z,
            0.01,
        );
        assert_eq!(pts.len(), 1);
        close("ellipsoid gap", pts[0].dist, 0.001, 1e-9);
        // Ellipsoid on a box face by GJK: the same gap.
        let slab = BodyShape::new(Shape::Box {
            half_extents: DVec3::new(1.0, 1.0, 0.5),
        });
        let pts = contacts(
            Side::Shape(&slab),
            DVec3::new(0.0, 0.0, -0.5),
            DQuat::IDENTITY,
            Side::Shape(&ell),
            DVec3::new(0.0, 0.0, depth + 0.001),
            DQuat::from_rotation_y(th),
            0.01,
        );
        assert_eq!(pts.len(), 1);
        close("ellipsoid–box gap", pts[0].dist, 0.001, 1e-6);
        close("ellipsoid–box normal", pts[0].normal.z, 1.0, 1e-6);
        // A plain sphere (no collider of its own) 1 mm above the box, and
        // 2 mm from the ellipsoid's tip along its x axis.
        let pts = contacts(
            Side::Shape(&slab),
            DVec3::new(0.0, 0.0, -0.5),
            DQuat::IDENTITY,
            Side::Ball(0.05),
            DVec3::new(0.3, 0.2, 0.051),
            DQuat::IDENTITY,
            0.01,
        );
        assert_eq!(pts.len(), 1, "{pts:?}");
        close("ball–box gap", pts[0].dist, 0.001, 1e-9);
        let pts = contacts(
            Side::Shape(&ell),
            DVec3::ZERO,
            DQuat::IDENTITY,
            Side::Ball(0.05),
            DVec3::new(0.352, 0.0, 0.0),
            DQuat::IDENTITY,
            0.01,
        );
        assert_eq!(pts.len(), 1, "{pts:?}");
        close("ball–ellipsoid gap", pts[0].dist, 0.002, 1e-6);
        close("ball–ellipsoid normal", pts[0].normal.x, 1.0, 1e-6);
    }
}
