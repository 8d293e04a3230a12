//! Collision detection: a deterministic uniform-grid broadphase and the
//! sphere–sphere and sphere–face narrowphase.
//!
//! Output is a list of [`ContactGeom`] in a canonical order (by first body,
//! then by second body or boundary face), independent of the number of
//! threads: each sphere's candidate list is built and sorted on its own and the
//! lists are concatenated in body order.
//!
//! Conventions: a contact is between body A (always a dynamic sphere) and
//! end B (a sphere with a larger id, or a boundary face). The normal `n`
//! points from A toward B, and the gap Φ is the signed surface distance
//! (negative when overlapping). Pairs with Φ < envelope enter the problem.

use glam::DVec3;
use rayon::prelude::*;

use crate::bodies::Bodies;
use crate::boundary::Boundary;

/// Marker for "end B is a kinematic boundary, not a body".
pub const NO_BODY: u32 = u32::MAX;

/// The geometry of one contact, before the problem is assembled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactGeom {
    /// Body A (dynamic sphere).
    pub a: u32,
    /// Body B, or [`NO_BODY`] for a boundary.
    pub b: u32,
    /// Stable key of the pair, for warm starting across steps.
    pub key: u64,
    /// Unit normal from A toward B.
    pub normal: DVec3,
    /// Contact point: the middle of the gap between the two surfaces.
    pub point: DVec3,
    /// Signed gap Φ (m).
    pub gap: f64,
    /// Material of end B (the sphere's or the boundary's).
    pub material_b: u32,
    /// Velocity of end B's surface at the contact point when B is a boundary (m/s).
    pub wall_velocity: DVec3,
}

/// Key of a sphere–sphere pair (a < b).
pub fn pair_key(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

/// Key of a sphere–boundary-face pair; the top bit marks boundaries.
pub fn wall_key(a: u32, boundary: usize, face: u32) -> u64 {
    (1u64 << 63) | ((a as u64) << 32) | ((boundary as u64) << 4) | face as u64
}

/// Finds all contacts with gap below `envelope`, in canonical order.
pub fn detect(bodies: &Bodies, boundaries: &[Boundary], envelope: f64) -> Vec<ContactGeom> {
    let mut out = sphere_sphere(bodies, envelope);
    out.extend(sphere_boundary(bodies, boundaries, envelope));
    out
}

/// Integer grid cell of a point.
fn cell_of(x: DVec3, inv_cell: f64) -> [i32; 3] {
    let c = (x * inv_cell).floor();
    [c.x as i32, c.y as i32, c.z as i32]
}

/// Sphere–sphere contacts via a uniform grid whose cell is the largest
/// possible interaction distance (2 r_max + envelope), so every pair within
/// reach lies in the same or an adjacent cell.
pub fn sphere_sphere(bodies: &Bodies, envelope: f64) -> Vec<ContactGeom> {
    let n = bodies.len();
    if n < 2 {
        return Vec::new();
    }
    let cell = 2.0 * bodies.max_radius() + envelope.max(0.0);
    let inv_cell = 1.0 / cell;
    // Counting-sort-like bucketing: sort (cell, id) once; cells are runs.
    let mut order: Vec<([i32; 3], u32)> = (0..n)
        .into_par_iter()
        .map(|i| (cell_of(bodies.pos[i], inv_cell), i as u32))
        .collect();
    order.par_sort_unstable();
    let keys: Vec<[i32; 3]> = order.iter().map(|e| e.0).collect();
    let per_body: Vec<Vec<ContactGeom>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let xi = bodies.pos[i];
            let ri = bodies.radius[i];
            let c = cell_of(xi, inv_cell);
            let mut found = Vec::new();
            for dx in -1..=1 {
                for dy in -1..=1 {
                    for dz in -1..=1 {
                        let k = [c[0] + dx, c[1] + dy, c[2] + dz];
                        let start = keys.partition_point(|q| *q < k);
                        for &(kk, j) in &order[start..] {
                            if kk != k {
                                break;
                            }
                            let j = j as usize;
                            if j <= i {
                                continue;
                            }
                            let d = bodies.pos[j] - xi;
                            let reach = ri + bodies.radius[j] + envelope;
                            let dist2 = d.length_squared();
                            if dist2 >= reach * reach {
                                continue;
                            }
                            let dist = dist2.sqrt();
                            let normal = if dist > 0.0 { d / dist } else { DVec3::Z };
                            let gap = dist - ri - bodies.radius[j];
                            found.push(ContactGeom {
                                a: i as u32,
                                b: j as u32,
                                key: pair_key(i as u32, j as u32),
                                normal,
                                point: xi + normal * (ri + 0.5 * gap),
                                gap,
                                material_b: bodies.material[j],
                                wall_velocity: DVec3::ZERO,
                            });
                        }
                    }
                }
            }
            found.sort_unstable_by_key(|g| g.b);
            found
        })
        .collect();
    per_body.into_iter().flatten().collect()
}

/// Sphere–boundary contacts: every sphere against every face of every boundary.
pub fn sphere_boundary(
    bodies: &Bodies,
    boundaries: &[Boundary],
    envelope: f64,
) -> Vec<ContactGeom> {
    let faces: Vec<(usize, u32, crate::boundary::Face, u32, DVec3)> = boundaries
        .iter()
        .enumerate()
        .flat_map(|(bi, b)| {
            b.faces()
                .into_iter()
                .map(move |(fid, f)| (bi, fid, f, b.material, b.velocity))
        })
        .collect();
    let per_body: Vec<Vec<ContactGeom>> = (0..bodies.len())
        .into_par_iter()
        .map(|i| {
            let x = bodies.pos[i];
            let r = bodies.radius[i];
            let mut found = Vec::new();
            for &(bi, fid, ref f, mat, vel) in &faces {
                if !f.applies(x) {
                    continue;
                }
                let dist = (x - f.point).dot(f.normal);
                let gap = dist - r;
                if gap >= envelope {
                    continue;
                }
                let normal = -f.normal; // from the sphere toward the wall
                found.push(ContactGeom {
                    a: i as u32,
                    b: crate::collision::NO_BODY,
                    key: wall_key(i as u32, bi, fid),
                    normal,
                    point: x + normal * (r + 0.5 * gap),
                    gap,
                    material_b: mat,
                    wall_velocity: vel,
                });
            }
            found
        })
        .collect();
    per_body.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::SphereInit;

    fn sphere(pos: DVec3, radius: f64) -> SphereInit {
        SphereInit {
            pos,
            radius,
            mass: 1.0,
            inertia: 0.4 * radius * radius,
            vel: DVec3::ZERO,
            omega: DVec3::ZERO,
            material: 0,
        }
    }

    /// The grid finds exactly the pairs a brute-force O(n²) search finds.
    #[test]
    fn grid_broadphase_finds_every_pair_brute_force_finds() {
        let mut inits = Vec::new();
        let mut s = 12345u64;
        let mut rnd = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..600 {
            let p = DVec3::new(rnd(), rnd(), rnd()) * 0.3 - 0.1;
            inits.push(sphere(p, 0.005 + 0.01 * rnd()));
        }
        let bodies = Bodies::from_inits(&inits);
        let env = 0.002;
        let got: Vec<(u32, u32)> = sphere_sphere(&bodies, env)
            .iter()
            .map(|c| (c.a, c.b))
            .collect();
        let mut want = Vec::new();
        for i in 0..bodies.len() {
            for j in i + 1..bodies.len() {
                let d = (bodies.pos[j] - bodies.pos[i]).length();
                if d - bodies.radius[i] - bodies.radius[j] < env {
                    want.push((i as u32, j as u32));
                }
            }
        }
        assert!(!want.is_empty());
        assert_eq!(
            got,
            want,
            "grid found {} pairs, brute force {}",
            got.len(),
            want.len()
        );
    }

    /// Gap, normal and contact point of two spheres match the geometry.
    #[test]
    fn sphere_sphere_gap_normal_and_point_match_geometry() {
        let bodies = Bodies::from_inits(&[
            sphere(DVec3::ZERO, 1.0),
            sphere(DVec3::new(2.5, 0.0, 0.0), 1.0),
        ]);
        let c = sphere_sphere(&bodies, 1.0);
        assert_eq!(c.len(), 1);
        assert!(
            (c[0].gap - 0.5).abs() < 1e-15,
            "gap {} expected 0.5",
            c[0].gap
        );
        assert_eq!(c[0].normal, DVec3::X);
        assert!((c[0].point - DVec3::new(1.25, 0.0, 0.0)).length() < 1e-15);
    }
}
