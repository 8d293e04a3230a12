//! The pre-run overlap checks: whether spheres (or bodies of other shapes,
//! by their narrowphase) start overlapping each other or a boundary.
//!
//! The pair check bins the bodies in a spatial hash of cell 2 r_max, so
//! it tests the pairs of neighbouring cells only: O(n) for spheres of
//! similar size. Its cost is bounded whatever the input: it stops
//! counting at [`MAX_PAIRS`] overlapping pairs (two million copies of one
//! row would otherwise make 2·10¹² pairs) and after a budget of pair tests
//! ([`pair_test_budget`], linear in n), so a scene of a few huge and very
//! many tiny spheres in one cell cannot make it quadratic; the warning
//! then says the count is a lower bound.

use glam::DVec3;

use super::generate::PlacedSphere;
use super::schema::Scene;
use crate::placement::SpatialHash;

/// Overlapping pairs past which the count stops ("at least …").
pub(super) const MAX_PAIRS: usize = 10_000;

/// The most pair tests the check makes for `n` bodies: 64 a body, and
/// at least 10⁸ (about a second), far above what spheres of similar size
/// need (fewer than 30 a body).
pub(super) fn pair_test_budget(n: usize) -> u64 {
    (64 * n as u64).max(100_000_000)
}

/// The side of a placed body for the narrowphase: its shape, or a ball.
fn side_of(p: &PlacedSphere) -> (crate::shape::BodyShape, DVec3, glam::DQuat) {
    match &p.body {
        Some(b) => (crate::shape::BodyShape::new(b.shape.clone()), b.pos, b.rot),
        None => (
            crate::shape::BodyShape::new(crate::shape::Shape::Sphere {
                radius: p.init.radius,
            }),
            p.init.pos,
            glam::DQuat::IDENTITY,
        ),
    }
}

/// Whether two placed bodies whose bounding balls overlap overlap
/// themselves (two spheres: yes; a body of another shape: its narrowphase).
fn bodies_overlap(p: &PlacedSphere, q: &PlacedSphere) -> bool {
    if p.body.is_none() && q.body.is_none() {
        return true;
    }
    let ((sp, xp, qp), (sq, xq, qq)) = (side_of(p), side_of(q));
    let tol = 1e-9 * (p.init.radius + q.init.radius);
    crate::collision::shapes::contacts(
        crate::collision::shapes::Side::Shape(&sp),
        xp,
        qp,
        crate::collision::shapes::Side::Shape(&sq),
        xq,
        qq,
        0.0,
    )
    .iter()
    .any(|c| c.dist < -tol)
}

/// Whether a placed body whose bounding ball reaches into a boundary
/// crosses its surface (a sphere: yes; another shape: a point of it past
/// a surface, as contact detection finds it).
pub(super) fn body_crosses_boundary(p: &PlacedSphere, b: &crate::boundary::Boundary) -> bool {
    let Some(body) = &p.body else {
        return true;
    };
    let shape = crate::shape::BodyShape::new(body.shape.clone());
    let tol = 1e-9 * p.init.radius;
    let slab = crate::collision::walls::plate_slab(b);
    crate::collision::walls::body_wall_points(
        &shape,
        body.pos,
        body.rot,
        b,
        &b.faces(),
        slab.as_ref(),
        0.0,
    )
    .iter()
    .any(|(_, points)| points.iter().any(|c| c.dist < -tol))
}

/// What the pair check found: the overlapping pairs counted, the first
/// pair, and whether it stopped early (the count is then a lower bound).
#[derive(Debug, PartialEq)]
pub(super) struct Overlaps {
    /// Overlapping pairs counted (at most [`MAX_PAIRS`]).
    pub pairs: usize,
    /// The first overlapping pair found (indices into the placed bodies).
    pub first: Option<(usize, usize)>,
    /// Whether the check stopped at [`MAX_PAIRS`] or at its budget of
    /// pair tests before seeing every pair.
    pub stopped: bool,
}

/// Counts the pairs of `placed` that start overlapping, making at most
/// `budget` pair tests (module docs).
pub(super) fn count_overlaps(placed: &[PlacedSphere], budget: u64) -> Overlaps {
    let mut out = Overlaps {
        pairs: 0,
        first: None,
        stopped: false,
    };
    let r_max = placed.iter().map(|p| p.init.radius).fold(0.0, f64::max);
    if placed.len() < 2 || r_max <= 0.0 {
        return out;
    }
    let mut hash = SpatialHash::new(2.0 * r_max);
    let mut tests = 0u64;
    for (i, p) in placed.iter().enumerate() {
        out.stopped = hash.any_near(p.init.pos, |j| {
            tests += 1;
            let q = &placed[j];
            let rr = p.init.radius + q.init.radius;
            if p.init.pos.distance_squared(q.init.pos) < rr * rr * (1.0 - 1e-9)
                && bodies_overlap(p, q)
            {
                out.pairs += 1;
                out.first.get_or_insert((j, i));
            }
            out.pairs >= MAX_PAIRS || tests >= budget
        });
        if out.stopped {
            break;
        }
        hash.insert(p.init.pos, i);
    }
    out
}

/// Logs a warning when bodies of the scene start overlapping each other.
pub(super) fn warn_overlaps(scene: &Scene, placed: &[PlacedSphere], file: &str) {
    let found = count_overlaps(placed, pair_test_budget(placed.len()));
    let Some((a, b)) = found.first else {
        if found.stopped {
            log::warn!(
                "{file}: the overlap check stopped after {} pair tests without finding an overlap: the spheres are packed far closer than their largest radius, so some may overlap unseen",
                pair_test_budget(placed.len())
            );
        }
        return;
    };
    let name = |p: &PlacedSphere| {
        format!(
            "spheres[{}] ({}) sphere {}",
            p.source,
            scene.spheres[p.source].kind(),
            p.index
        )
    };
    log::warn!(
        "{file}: {}{} pairs of spheres start overlapping, e.g. {} and {}",
        if found.stopped { "at least " } else { "" },
        found.pairs,
        name(&placed[a]),
        name(&placed[b])
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::{BodyInit, SphereInit};
    use crate::shape::Shape;

    fn ball(pos: DVec3, radius: f64) -> PlacedSphere {
        PlacedSphere {
            init: SphereInit {
                pos,
                radius,
                mass: 1.0,
                inertia: 1.0,
                vel: DVec3::ZERO,
                omega: DVec3::ZERO,
                material: 0,
            },
            body: None,
            source: 0,
            index: 0,
        }
    }

    /// Two hundred thousand copies of one sphere make 2·10¹⁰ overlapping
    /// pairs: the count stops at MAX_PAIRS, found among the first few
    /// hundred spheres, and says it stopped.
    #[test]
    fn identical_spheres_stop_the_count_at_its_cap() {
        let placed: Vec<_> = (0..200_000).map(|_| ball(DVec3::ZERO, 0.01)).collect();
        let found = count_overlaps(&placed, pair_test_budget(placed.len()));
        assert_eq!(
            (found.pairs, found.first, found.stopped),
            (MAX_PAIRS, Some((0, 1)), true)
        );
    }

    /// One large sphere beside many tiny ones in one hash cell: no pair
    /// overlaps, but every pair is tested; the budget stops the check
    /// after exactly that many tests, and it says so.
    #[test]
    fn many_tiny_spheres_in_one_cell_stop_at_the_budget() {
        let mut placed = vec![ball(DVec3::new(10.0, 0.0, 0.0), 1.0)];
        for i in 0..20_000 {
            let x = 1e-3 * (i % 100) as f64;
            let y = 1e-3 * (i / 100) as f64;
            placed.push(ball(DVec3::new(x, y, 0.0), 1e-4));
        }
        let found = count_overlaps(&placed, 1_000_000);
        assert_eq!((found.pairs, found.stopped), (0, true));
        // A thousand of them (5·10⁵ pairs) fit in the same budget: the
        // check ends by itself.
        let few = &placed[..1_000];
        let found = count_overlaps(few, 1_000_000);
        assert_eq!((found.pairs, found.stopped), (0, false));
    }

    /// Four spheres in a row, each touching its neighbours by overlap:
    /// three pairs, the first (0, 1), a full count.
    #[test]
    fn a_row_of_overlapping_spheres_counts_each_pair_once() {
        let placed: Vec<_> = (0..4)
            .map(|i| ball(DVec3::new(1.5 * i as f64, 0.0, 0.0), 1.0))
            .collect();
        let found = count_overlaps(&placed, pair_test_budget(placed.len()));
        assert_eq!(
            found,
            Overlaps {
                pairs: 3,
                first: Some((0, 1)),
                stopped: false
            }
        );
    }

    fn cube(pos: DVec3) -> PlacedSphere {
        let body = BodyInit {
            shape: Shape::Box {
                half_extents: DVec3::splat(0.5),
            },
            pos,
            rot: glam::DQuat::IDENTITY,
            vel: DVec3::ZERO,
            omega: DVec3::ZERO,
            mass: 1.0,
            principal: DVec3::ONE,
            material: 0,
        };
        PlacedSphere {
            init: SphereInit {
                pos,
                radius: 0.75f64.sqrt(),
                mass: 1.0,
                inertia: 1.0,
                vel: DVec3::ZERO,
                omega: DVec3::ZERO,
                material: 0,
            },
            body: Some(body),
            source: 0,
            index: 0,
        }
    }

    /// Shapes are checked by their narrowphase, not their bounding balls:
    /// cubes side by side, or one resting on a floor, do not overlap
    /// though their bounding balls do; cubes pushed into each other, or
    /// into the floor, do.
    #[test]
    fn shapes_overlap_by_their_surfaces_not_their_bounding_balls() {
        let a = cube(DVec3::new(0.0, 0.0, 0.5));
        assert!(!bodies_overlap(&a, &cube(DVec3::new(1.01, 0.0, 0.5))));
        assert!(bodies_overlap(&a, &cube(DVec3::new(0.9, 0.0, 0.5))));
        let floor = crate::boundary::Boundary::fixed(
            "floor",
            crate::boundary::Shape::Plane { normal: DVec3::Z },
            DVec3::ZERO,
            0,
        );
        assert!(!body_crosses_boundary(
            &cube(DVec3::new(0.0, 0.0, 0.501)),
            &floor
        ));
        assert!(body_crosses_boundary(
            &cube(DVec3::new(0.0, 0.0, 0.45)),
            &floor
        ));
    }
}
