//! Collision detection: a deterministic uniform-grid broadphase and the
//! sphere–sphere and sphere–face narrowphase; bodies of other shapes
//! ([`crate::shape`]) go through the same broadphase as their bounding
//! balls and through parry's narrowphase, several points per pair where the
//! geometry has them (a box on a plane: four); their contacts with the
//! boundaries are in [`walls`].
//!
//! Output is a list of [`ContactGeom`] in a canonical order (by first body,
//! then by second body or boundary face), independent of the number of
//! threads: each sphere's candidate list is built and sorted on its own and the
//! lists are concatenated in body order.
//!
//! Conventions: a contact is between body A (always a dynamic body) and
//! end B (a body with a larger id, or a boundary face). The normal `n`
//! points from A toward B, and the gap Φ is the signed surface distance
//! (negative when overlapping). Pairs with Φ < envelope enter the problem.
//!
//! **A bound on crowding.** Spheres that do not overlap cannot crowd: the
//! neighbours of sphere i within reach (centres closer than
//! R = r_i + r_max + envelope) lie whole inside the ball of radius
//! R + r_min around it and outside sphere i itself, so there are at most
//! ((R + r_min)³ − r_i³) / r_min³ of them (volumes; 29 for equal spheres
//! and the default envelope, against the 12 that touch). More than
//! [`CROWDING_SLACK`] times that means spheres sit inside each other en
//! masse — a lost state, or spheres placed so — and every pair of them
//! would become a contact (memory quadratic in their number): detection
//! stops with a [`Crowded`] error naming the sphere before it allocates
//! them.

use glam::DVec3;
use rayon::prelude::*;

use crate::bodies::Bodies;
use crate::boundary::{Boundary, Face, Shape, SurfacePoint};
use crate::shape::BodyShape;
use shapes::{PointContact, Side};

pub mod mesh;
pub mod shapes;
pub mod walls;

use walls::plate_slab;

/// How many times the volume bound of the module docs a sphere's neighbour
/// count may reach before detection refuses (overlaps of a loaded packing
/// are a few per cent of a radius; this leaves room for far more).
pub const CROWDING_SLACK: f64 = 2.0;

/// Detection refused: a sphere has more neighbours within reach than fit
/// around it without overlapping (module docs).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("sphere {body} (radius {radius:e} m) has more than {limit} neighbours within reach, {CROWDING_SLACK}× the most that fit around it without overlapping: spheres sit inside each other en masse (a lost state, or spheres placed inside each other); contact detection stopped before allocating every pair")]
pub struct Crowded {
    /// The crowded sphere.
    pub body: usize,
    /// Its radius (m).
    pub radius: f64,
    /// The neighbour count it exceeded.
    pub limit: usize,
}

/// Marker for "end B is a kinematic boundary, not a body".
pub const NO_BODY: u32 = u32::MAX;

/// Marker for "end B is a body, not a boundary" ([`ContactGeom::wall`]).
pub const NO_WALL: u32 = u32::MAX;

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
    /// Angular velocity of end B when B is a boundary (rad/s; a spinning drum).
    pub wall_omega: DVec3,
    /// The index of the boundary that end B is, or [`NO_WALL`] when B is a
    /// body: what the boundary loads (`walls.csv`) sum by.
    pub wall: u32,
}

/// Key of a sphere–sphere pair (a < b).
pub fn pair_key(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

/// Key of a sphere–boundary-face pair; the top bit marks boundaries.
pub fn wall_key(a: u32, boundary: usize, face: u32) -> u64 {
    (1u64 << 63) | ((a as u64) << 32) | ((boundary as u64) << 4) | face as u64
}

/// Key of a sphere's contact with feature `feature` ([`mesh::MeshSurface::key`])
/// of a mesh boundary: the same hashed family as [`shape_wall_key`].
pub fn mesh_wall_key(a: u32, boundary: usize, feature: u64) -> u64 {
    shape_wall_key(a, boundary, 0, feature)
}

/// A 64-bit mix (splitmix64's finaliser) for the keys of manifold points.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Key of one manifold point of a body pair where one is not a sphere
/// (bits 63–62 = 01; the rest a hash of the pair and the features in
/// touch, so an impulse follows its point from step to step).
pub fn shape_pair_key(a: u32, b: u32, tag: u64) -> u64 {
    (1u64 << 62) | (mix(mix(pair_key(a, b)) ^ tag) >> 2)
}

/// Key of one manifold point of a non-sphere on a boundary face (bits
/// 63–62 = 11, the rest a hash).
pub fn shape_wall_key(a: u32, boundary: usize, face: u32, tag: u64) -> u64 {
    (3u64 << 62) | (mix(mix(wall_key(a, boundary, face)) ^ tag) >> 2)
}

/// The contacts of a pair of bodies of which one or both are not plain
/// spheres, appended to `found` (normal from `a` toward `b`, the point in
/// the middle of the gap, one contact per manifold point).
fn shape_pair(bodies: &Bodies, a: usize, b: usize, envelope: f64, found: &mut Vec<ContactGeom>) {
    let side = |i: usize| match bodies.shape_of(i) {
        Some(s) => Side::Shape(s),
        None => Side::Ball(bodies.radius[i]),
    };
    let points = shapes::contacts(
        side(a),
        bodies.pos[a],
        bodies.rot[a],
        side(b),
        bodies.pos[b],
        bodies.rot[b],
        envelope,
    );
    push_points(
        &points,
        found,
        |tag| shape_pair_key(a as u32, b as u32, tag),
        |c| ContactGeom {
            a: a as u32,
            b: b as u32,
            key: 0,
            normal: c.normal,
            point: 0.5 * (c.p1 + c.p2),
            gap: c.dist,
            material_b: bodies.material[b],
            wall_velocity: DVec3::ZERO,
            wall_omega: DVec3::ZERO,
            wall: NO_WALL,
        },
    );
}

/// Appends one contact per point, keyed by `key(tag)`; a tag repeated in
/// the same manifold is made unique by its order.
fn push_points(
    points: &[PointContact],
    found: &mut Vec<ContactGeom>,
    key: impl Fn(u64) -> u64,
    geom: impl Fn(&PointContact) -> ContactGeom,
) {
    let start = found.len();
    for c in points {
        let mut tag = c.tag;
        while found[start..].iter().any(|g| g.key == key(tag)) {
            tag = tag.wrapping_add(1 << 48);
        }
        let mut g = geom(c);
        g.key = key(tag);
        found.push(g);
    }
}

/// Finds all contacts with gap below `envelope`, in canonical order, at
/// simulated time `time` (which decides whether a boundary's prescribed
/// motion has started; see [`Boundary::motion_at`]).
/// Errors: [`Crowded`] (module docs).
pub fn detect(
    bodies: &Bodies,
    boundaries: &[Boundary],
    envelope: f64,
    time: f64,
) -> Result<Vec<ContactGeom>, Crowded> {
    let mut out = sphere_sphere(bodies, envelope)?;
    out.extend(sphere_boundary(bodies, boundaries, envelope, time));
    Ok(out)
}

/// Integer grid cell of a point.
fn cell_of(x: DVec3, inv_cell: f64) -> [i32; 3] {
    // Clamped one short of the i32 range so that the neighbour cells c ± 1
    // exist: a body flung far away (a diverging run, before its state turns
    // non-finite) shares the outermost cell instead of overflowing.
    let lim = f64::from(i32::MAX - 1);
    let c = (x * inv_cell)
        .floor()
        .clamp(DVec3::splat(-lim), DVec3::splat(lim));
    [c.x as i32, c.y as i32, c.z as i32]
}

/// The contact geometry of spheres `i` < `j` (the sphere–sphere
/// narrowphase of [`sphere_sphere`], also used by the penalty
/// formulation's neighbour list, so both give the same bits).
pub fn sphere_pair(bodies: &Bodies, i: usize, j: usize) -> ContactGeom {
    let xi = bodies.pos[i];
    let ri = bodies.radius[i];
    let d = bodies.pos[j] - xi;
    let dist = d.length_squared().sqrt();
    let normal = if dist > 0.0 {
        d * (1.0 / dist)
    } else {
        DVec3::Z
    };
    let gap = dist - ri - bodies.radius[j];
    ContactGeom {
        a: i as u32,
        b: j as u32,
        key: pair_key(i as u32, j as u32),
        normal,
        point: xi + normal * (ri + 0.5 * gap),
        gap,
        material_b: bodies.material[j],
        wall_velocity: DVec3::ZERO,
        wall_omega: DVec3::ZERO,
        wall: NO_WALL,
    }
}

/// Whether spheres `i` and `j` are closer than `envelope` (the test of
/// [`sphere_sphere`]: squared centre distance against the squared reach).
pub fn spheres_within(bodies: &Bodies, i: usize, j: usize, envelope: f64) -> bool {
    let reach = bodies.radius[i] + bodies.radius[j] + envelope;
    (bodies.pos[j] - bodies.pos[i]).length_squared() < reach * reach
}

/// The broadphase's uniform grid: cells of the largest possible
/// interaction distance (2 r_max + envelope), so every pair within reach
/// lies in the same or an adjacent cell.
///
/// Where the bodies' cells span a box of at most [`DENSE_CELLS_PER_BODY`]
/// cells per body, the grid is dense: a counting sort by cell index, and a
/// table of where each cell's bodies begin, so a neighbour column is two
/// lookups. Elsewhere (bodies flung far apart) the bodies are sorted by
/// (cell, id) and each column found by binary search. Both give the same
/// neighbours, visited in the same order (by cell, then id).
struct Grid {
    /// The bodies by (cell, id).
    order: Vec<u32>,
    index: CellIndex,
    inv_cell: f64,
    envelope: f64,
    r_max: f64,
    r_min: f64,
}

/// How [`Grid`] finds a cell's bodies.
enum CellIndex {
    /// Cell (x, y, z) has linear index ((x − lo.x) · dims.y + y − lo.y) ·
    /// dims.z + z − lo.z, `lo` one cell below the bodies' lowest (so that
    /// every neighbour cell is in the box); its bodies are
    /// `order[start[k]..start[k + 1]]`.
    Dense {
        lo: [i64; 3],
        dims: [i64; 3],
        start: Vec<u32>,
    },
    /// Each body's cell, in `order`'s order.
    Sorted(Vec<[i32; 3]>),
}

/// The most cells per body (and at least 4,096) a dense [`Grid`] may hold.
const DENSE_CELLS_PER_BODY: i64 = 8;

impl Grid {
    fn new(bodies: &Bodies, envelope: f64) -> Grid {
        Self::with_dense_limit(bodies, envelope, DENSE_CELLS_PER_BODY)
    }

    /// As [`Grid::new`], dense where the box holds at most
    /// `per_body` cells per body (0: always sorted; for tests).
    fn with_dense_limit(bodies: &Bodies, envelope: f64, per_body: i64) -> Grid {
        let r_max = bodies.max_radius();
        let r_min = bodies.radius.iter().copied().fold(f64::INFINITY, f64::min);
        let inv_cell = 1.0 / (2.0 * r_max + envelope.max(0.0));
        let cells: Vec<[i32; 3]> = bodies
            .pos
            .par_iter()
            .map(|&x| cell_of(x, inv_cell))
            .collect();
        let (mut lo, mut hi) = ([i64::MAX; 3], [i64::MIN; 3]);
        for c in &cells {
            for a in 0..3 {
                lo[a] = lo[a].min(i64::from(c[a]));
                hi[a] = hi[a].max(i64::from(c[a]));
            }
        }
        let n = bodies.len() as i64;
        let dims = [0, 1, 2].map(|a| (hi[a] - lo[a] + 3).max(3));
        let lo = lo.map(|l| l - 1);
        let total = dims[0].saturating_mul(dims[1]).saturating_mul(dims[2]);
        let grid = |order, index| Grid {
            order,
            index,
            inv_cell,
            envelope,
            r_max,
            r_min,
        };
        if per_body > 0 && total <= (per_body * n).max(4096) {
            let linear = |c: &[i32; 3]| -> usize {
                let [x, y, z] = [0, 1, 2].map(|a| i64::from(c[a]) - lo[a]);
                ((x * dims[1] + y) * dims[2] + z) as usize
            };
            // Counting sort, stable in id: bodies by (cell, id).
            let mut start = vec![0u32; total as usize + 1];
            for c in &cells {
                start[linear(c) + 1] += 1;
            }
            for k in 0..total as usize {
                start[k + 1] += start[k];
            }
            let mut cursor = start.clone();
            let mut order = vec![0u32; cells.len()];
            for (i, c) in cells.iter().enumerate() {
                let k = linear(c);
                order[cursor[k] as usize] = i as u32;
                cursor[k] += 1;
            }
            grid(order, CellIndex::Dense { lo, dims, start })
        } else {
            let mut sorted: Vec<([i32; 3], u32)> = cells.into_iter().zip(0..).collect();
            sorted.par_sort_unstable();
            let order = sorted.iter().map(|e| e.1).collect();
            grid(
                order,
                CellIndex::Sorted(sorted.into_iter().map(|e| e.0).collect()),
            )
        }
    }

    /// The most neighbours sphere of radius `ri` may have within reach
    /// (module docs, "A bound on crowding").
    fn crowding_limit(&self, ri: f64) -> usize {
        let outer = ri + self.r_max + self.envelope.max(0.0) + self.r_min;
        let fit = (outer.powi(3) - ri.powi(3)) / self.r_min.powi(3);
        // At least a handful, however the radii compare.
        (CROWDING_SLACK * fit).ceil().clamp(32.0, 1e9) as usize
    }

    /// The bodies of cells (x, y, z − 1), (x, y, z), (x, y, z + 1) for the
    /// cell c = (x, y, z): one run of `order`, as cells sort by (x, y, z).
    fn column(&self, c: [i32; 3]) -> &[u32] {
        match &self.index {
            CellIndex::Dense { lo, dims, start } => {
                let [x, y, z] = [0, 1, 2].map(|a| i64::from(c[a]) - lo[a]);
                if x < 0 || y < 0 || x >= dims[0] || y >= dims[1] {
                    return &[];
                }
                let k = ((x * dims[1] + y) * dims[2] + z - 1) as usize;
                &self.order[start[k] as usize..start[k + 3] as usize]
            }
            CellIndex::Sorted(keys) => {
                let first = [c[0], c[1], c[2] - 1];
                let last = [c[0], c[1], c[2] + 1];
                let from = keys.partition_point(|q| *q < first);
                let to = from + keys[from..].partition_point(|q| *q <= last);
                &self.order[from..to]
            }
        }
    }

    /// Calls `visit(j)` for every body j > i whose bounding ball comes
    /// within the envelope of body i's (by cell, then id); stops at the
    /// first `Err` `visit` returns.
    fn within<E>(
        &self,
        bodies: &Bodies,
        i: usize,
        mut visit: impl FnMut(usize) -> Result<(), E>,
    ) -> Result<(), E> {
        let xi = bodies.pos[i];
        let ri = bodies.radius[i];
        let c = cell_of(xi, self.inv_cell);
        // Nine neighbour columns of three cells each.
        for dx in -1..=1 {
            for dy in -1..=1 {
                for &j in self.column([c[0] + dx, c[1] + dy, c[2]]) {
                    let j = j as usize;
                    if j <= i {
                        continue;
                    }
                    let reach = ri + bodies.radius[j] + self.envelope;
                    if (bodies.pos[j] - xi).length_squared() < reach * reach {
                        visit(j)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Sphere–sphere contacts via the uniform grid (`Grid`). Errors:
/// [`Crowded`].
pub fn sphere_sphere(bodies: &Bodies, envelope: f64) -> Result<Vec<ContactGeom>, Crowded> {
    let n = bodies.len();
    if n < 2 {
        return Ok(Vec::new());
    }
    let grid = Grid::new(bodies, envelope);
    let shaped = bodies.has_shapes();
    let per_body: Vec<Result<Vec<ContactGeom>, Crowded>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let ri = bodies.radius[i];
            // Only neighbours with larger ids are listed (and counted):
            // in a crowd, the one with the smallest id sees all the others.
            let most = grid.crowding_limit(ri);
            let mut found = Vec::new();
            let mut spheres_found = 0;
            grid.within(bodies, i, |j| {
                if shaped && (bodies.shape_of(i).is_some() || bodies.shape_of(j).is_some()) {
                    shape_pair(bodies, i, j, envelope, &mut found);
                    return Ok(());
                }
                spheres_found += 1;
                if spheres_found > most {
                    return Err(Crowded {
                        body: i,
                        radius: ri,
                        limit: most,
                    });
                }
                found.push(sphere_pair(bodies, i, j));
                Ok(())
            })?;
            // Stable: a manifold's points keep parry's order.
            found.sort_by_key(|g| g.b);
            Ok(found)
        })
        .collect();
    // The first crowded sphere in id order, whatever the threads did.
    let mut out = Vec::with_capacity(
        per_body
            .iter()
            .map(|l| l.as_ref().map_or(0, Vec::len))
            .sum(),
    );
    for list in per_body {
        out.extend(list?);
    }
    Ok(out)
}

/// The pairs (i, j), i < j, of spheres closer than `envelope` (surface to
/// surface), ascending: the pairs of [`sphere_sphere`] without their
/// geometry, for scenes of spheres only (the penalty formulation's
/// neighbour list). Errors: [`Crowded`], as [`sphere_sphere`] gives it.
pub fn sphere_pairs_within(bodies: &Bodies, envelope: f64) -> Result<Vec<(u32, u32)>, Crowded> {
    let n = bodies.len();
    if n < 2 {
        return Ok(Vec::new());
    }
    pairs_in(&Grid::new(bodies, envelope), bodies)
}

/// [`sphere_pairs_within`] on a grid built.
fn pairs_in(grid: &Grid, bodies: &Bodies) -> Result<Vec<(u32, u32)>, Crowded> {
    let n = bodies.len();
    // Bodies in blocks: one vector per block, not per body.
    const BLOCK: usize = 256;
    let blocks: Vec<Result<Vec<(u32, u32)>, Crowded>> = (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let mut found = Vec::new();
            for i in b * BLOCK..n.min((b + 1) * BLOCK) {
                let ri = bodies.radius[i];
                let most = grid.crowding_limit(ri);
                let first = found.len();
                grid.within(bodies, i, |j| {
                    if found.len() - first == most {
                        return Err(Crowded {
                            body: i,
                            radius: ri,
                            limit: most,
                        });
                    }
                    found.push((i as u32, j as u32));
                    Ok(())
                })?;
                found[first..].sort_unstable();
            }
            Ok(found)
        })
        .collect();
    let mut out = Vec::with_capacity(blocks.iter().map(|l| l.as_ref().map_or(0, Vec::len)).sum());
    for block in blocks {
        out.extend(block?);
    }
    Ok(out)
}

/// Sphere–boundary contacts: every sphere against every surface of every
/// boundary (planar faces, cylinder walls, caps and rims; see
/// [`crate::boundary`]), at simulated time `time`. The wall's surface
/// velocity at the contact point is v + ω × (p − origin). Contacts come in
/// body order (then boundary, then surface).
pub fn sphere_boundary(
    bodies: &Bodies,
    boundaries: &[Boundary],
    envelope: f64,
    time: f64,
) -> Vec<ContactGeom> {
    walls_of(bodies, boundaries, envelope, time, None)
}

/// [`sphere_boundary`] for the bodies `candidates` only (ascending ids):
/// the same contacts, in the same order, as the full pass wherever no
/// other body touches a boundary — the caller's promise (the penalty
/// formulation's neighbour list keeps the spheres within its skin of
/// boundaries that do not move).
pub fn sphere_boundary_of(
    bodies: &Bodies,
    boundaries: &[Boundary],
    candidates: &[u32],
    envelope: f64,
    time: f64,
) -> Vec<ContactGeom> {
    walls_of(bodies, boundaries, envelope, time, Some(candidates))
}

/// Bodies per parallel task of [`walls_of`]: each task fills one vector,
/// and the vectors are joined in order.
const WALL_CHUNK: usize = 512;

fn walls_of(
    bodies: &Bodies,
    boundaries: &[Boundary],
    envelope: f64,
    time: f64,
    candidates: Option<&[u32]>,
) -> Vec<ContactGeom> {
    // Planar faces are computed once per step; cylinders per sphere.
    let faces: Vec<Vec<(u32, crate::boundary::Face)>> =
        boundaries.iter().map(|b| b.faces()).collect();
    // Plates as the slabs bodies of other shapes meet (see `plate_slab`).
    let slabs: Vec<Option<(BodyShape, DVec3)>> = if bodies.has_shapes() {
        boundaries.iter().map(plate_slab).collect()
    } else {
        Vec::new()
    };
    let walls = Walls {
        boundaries,
        faces: &faces,
        slabs: &slabs,
    };
    let count = candidates.map_or(bodies.len(), <[u32]>::len);
    let body = |k: usize| candidates.map_or(k, |c| c[k] as usize);
    let per_chunk: Vec<Vec<ContactGeom>> = (0..count.div_ceil(WALL_CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut found = Vec::new();
            for k in c * WALL_CHUNK..((c + 1) * WALL_CHUNK).min(count) {
                body_walls(bodies, body(k), &walls, envelope, time, &mut found);
            }
            found
        })
        .collect();
    per_chunk.concat()
}

/// The contacts of body `i` with every boundary, appended to `found`.
fn body_walls(
    bodies: &Bodies,
    i: usize,
    walls: &Walls,
    envelope: f64,
    time: f64,
    found: &mut Vec<ContactGeom>,
) {
    if let Some(s) = bodies.shape_of(i) {
        shape_boundary(bodies, i, s, walls, envelope, time, found);
        return;
    }
    let x = bodies.pos[i];
    let r = bodies.radius[i];
    let s = SphereAt { i: i as u32, x, r };
    for (bi, b) in walls.boundaries.iter().enumerate() {
        if b.is_planar() {
            for (id, f) in &walls.faces[bi] {
                found.extend(face_contact(s, (bi, b), *id, f, envelope, time));
            }
            continue;
        }
        let mut push = |key: u64, towards: DVec3, distance: f64| {
            found.extend(surface_contact(
                s,
                (bi, b),
                key,
                towards,
                distance,
                envelope,
                time,
            ));
        };
        if let Shape::Mesh { surface, rot } = &b.shape {
            let p = rot.inverse() * (x - b.origin);
            surface.contacts(p, r + envelope, |m| {
                push(
                    mesh_wall_key(i as u32, bi, m.key),
                    *rot * m.normal,
                    m.distance,
                )
            });
            continue;
        }
        b.surfaces(x, |p: SurfacePoint| {
            push(wall_key(i as u32, bi, p.id), p.normal, p.distance)
        });
    }
}

/// A sphere as the boundary tests see it: its id, centre and radius.
#[derive(Clone, Copy, Debug)]
pub struct SphereAt {
    /// The sphere's body id.
    pub i: u32,
    /// Its centre.
    pub x: DVec3,
    /// Its radius.
    pub r: f64,
}

/// Sphere `s`'s contact with face `id` (`f`) of the planar boundary `b`
/// (index `bi`), if its centre is within the face's extent and its surface
/// nearer the face's plane than `envelope`: what [`sphere_boundary`] finds
/// (it calls this), and what the penalty formulation's listed faces test
/// each sub-step.
#[inline]
pub fn face_contact(
    s: SphereAt,
    (bi, b): (usize, &Boundary),
    id: u32,
    f: &Face,
    envelope: f64,
    time: f64,
) -> Option<ContactGeom> {
    if !f.applies(s.x) {
        return None;
    }
    let distance = (s.x - f.point).dot(f.normal);
    surface_contact(
        s,
        (bi, b),
        wall_key(s.i, bi, id),
        f.normal,
        distance,
        envelope,
        time,
    )
}

/// Sphere `s`'s contact with a surface of boundary `b` whose unit normal
/// `towards` the centre and the centre's (signed) `distance` along it are
/// given, if its gap is below `envelope`.
#[inline]
fn surface_contact(
    s: SphereAt,
    (bi, b): (usize, &Boundary),
    key: u64,
    towards: DVec3,
    distance: f64,
    envelope: f64,
    time: f64,
) -> Option<ContactGeom> {
    let gap = distance - s.r;
    if gap >= envelope {
        return None;
    }
    let normal = -towards; // from the sphere toward the wall
    let point = s.x + normal * (s.r + 0.5 * gap);
    let (_, omega) = b.motion_at(time);
    Some(ContactGeom {
        a: s.i,
        b: NO_BODY,
        key,
        normal,
        point,
        gap,
        material_b: b.material,
        wall_velocity: b.surface_velocity(point, time),
        wall_omega: omega,
        wall: bi as u32,
    })
}

/// The boundaries with what a step derives from them once.
struct Walls<'a> {
    boundaries: &'a [Boundary],
    faces: &'a [Vec<(u32, crate::boundary::Face)>],
    slabs: &'a [Option<(BodyShape, DVec3)>],
}

/// The contacts of body `i`, not a sphere, with every boundary
/// ([`walls::body_wall_points`]: faces, plates, tubes and drums).
fn shape_boundary(
    bodies: &Bodies,
    i: usize,
    s: &BodyShape,
    walls: &Walls,
    envelope: f64,
    time: f64,
    found: &mut Vec<ContactGeom>,
) {
    let (x, q) = (bodies.pos[i], bodies.rot[i]);
    for (bi, b) in walls.boundaries.iter().enumerate() {
        let (_, omega) = b.motion_at(time);
        let slab = walls.slabs.get(bi).and_then(Option::as_ref);
        for (id, points) in walls::body_wall_points(s, x, q, b, &walls.faces[bi], slab, envelope) {
            push_points(
                &points,
                found,
                |tag| shape_wall_key(i as u32, bi, id, tag),
                |c| {
                    let point = 0.5 * (c.p1 + c.p2);
                    ContactGeom {
                        a: i as u32,
                        b: NO_BODY,
                        key: 0,
                        normal: c.normal,
                        point,
                        gap: c.dist,
                        material_b: b.material,
                        wall_velocity: b.surface_velocity(point, time),
                        wall_omega: omega,
                        wall: bi as u32,
                    }
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::SphereInit;
    use crate::boundary::{Caps, Shape};

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

    /// Bodies flung to the edge of the f64 range (a diverging run, still
    /// finite) share the outermost grid cells instead of overflowing the
    /// cell index, and two of them touching there are still found.
    #[test]
    fn bodies_flung_far_away_neither_panic_nor_hide_contacts() {
        let far = 1e300;
        let inits = [
            sphere(DVec3::new(far, -far, far), 0.01),
            sphere(DVec3::new(far, -far, far), 0.01),
            sphere(DVec3::new(-far, far, 0.0), 0.01),
            sphere(DVec3::new(0.0, 0.0, 0.0), 0.01),
            sphere(DVec3::new(0.0, 0.0, 0.015), 0.01),
        ];
        let bodies = Bodies::from_inits(&inits);
        let pairs: Vec<(u32, u32)> = sphere_sphere(&bodies, 0.001)
            .unwrap()
            .iter()
            .map(|c| (c.a, c.b))
            .collect();
        assert!(pairs.contains(&(0, 1)), "{pairs:?}");
        assert!(pairs.contains(&(3, 4)), "{pairs:?}");
        assert_eq!(pairs.len(), 2, "{pairs:?}");
        // The box of their cells is far too big to be dense: sorted.
        assert!(matches!(
            Grid::new(&bodies, 0.001).index,
            CellIndex::Sorted(_)
        ));
        assert_eq!(sphere_pairs_within(&bodies, 0.001).unwrap(), pairs);
    }

    /// 200 equal spheres piled into one spot (every pair a contact: 19,900)
    /// are refused, naming the first of them; the same spheres spread on a
    /// touching cubic lattice (6 neighbours each) are not.
    #[test]
    fn spheres_inside_each_other_en_masse_are_refused_before_allocating() {
        let r = 0.01;
        let piled: Vec<SphereInit> = (0..200)
            .map(|k| sphere(DVec3::new(1e-4 * k as f64, 0.0, 0.0), r))
            .collect();
        let err = sphere_sphere(&Bodies::from_inits(&piled), 0.1 * r).unwrap_err();
        assert_eq!(err.body, 0);
        // Equal spheres, envelope r/10: ((3.1 r)³ − r³)/r³ = 28.8, twice that.
        assert_eq!(err.limit, 58);
        let msg = err.to_string();
        assert!(
            msg.contains("sphere 0") && msg.contains("more than 58 neighbours"),
            "{msg}"
        );
        let err = sphere_pairs_within(&Bodies::from_inits(&piled), 0.1 * r).unwrap_err();
        assert_eq!((err.body, err.limit), (0, 58), "pairs only");
        let lattice: Vec<SphereInit> = (0..216)
            .map(|k| {
                let (i, j, l) = (k % 6, (k / 6) % 6, k / 36);
                sphere(DVec3::new(i as f64, j as f64, l as f64) * 2.0 * r, r)
            })
            .collect();
        let found = sphere_sphere(&Bodies::from_inits(&lattice), 0.1 * r).unwrap();
        assert_eq!(found.len(), 3 * 5 * 36, "the lattice's touching pairs");
        let pairs = sphere_pairs_within(&Bodies::from_inits(&lattice), 0.1 * r).unwrap();
        assert_eq!(pairs.len(), 3 * 5 * 36, "pairs only");
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
            .unwrap()
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
        // The pairs-only search, on the dense grid and on the sorted one.
        for (what, per_body) in [("dense", DENSE_CELLS_PER_BODY), ("sorted", 0)] {
            let grid = Grid::with_dense_limit(&bodies, env, per_body);
            assert_eq!(
                matches!(grid.index, CellIndex::Dense { .. }),
                per_body > 0,
                "{what}"
            );
            let pairs = pairs_in(&grid, &bodies).unwrap();
            assert_eq!(pairs, want, "{what}: {} pairs", pairs.len());
        }
    }

    /// Gap, normal and contact point of two spheres match the geometry.
    #[test]
    fn sphere_sphere_gap_normal_and_point_match_geometry() {
        let bodies = Bodies::from_inits(&[
            sphere(DVec3::ZERO, 1.0),
            sphere(DVec3::new(2.5, 0.0, 0.0), 1.0),
        ]);
        let c = sphere_sphere(&bodies, 1.0).unwrap();
        assert_eq!(c.len(), 1);
        assert!(
            (c[0].gap - 0.5).abs() < 1e-15,
            "gap {} expected 0.5",
            c[0].gap
        );
        assert_eq!(c[0].normal, DVec3::X);
        assert!((c[0].point - DVec3::new(1.25, 0.0, 0.0)).length() < 1e-15);
    }

    fn cylinder(origin: DVec3, axis: DVec3, radius: f64, half_length: f64, caps: Caps) -> Boundary {
        let shape = Shape::Cylinder {
            axis,
            radius,
            half_length,
            caps,
        };
        Boundary::fixed("cyl", shape, origin, 0)
    }

    /// The candidates' pass gives the full pass's contacts, in its order,
    /// once every sphere that may touch is a candidate: for a capped drum,
    /// a plate and an open box, 400 spheres each on the inner side of its
    /// surfaces (inside the drum and the box, above the plate, also beyond
    /// its edges), the candidates found within a skin, then every sphere
    /// moved by less than half the skin (the penalty formulation's
    /// neighbour-list promise). A sphere behind a one-sided surface (under
    /// the plate, outside the drum) may meet it abruptly when its centre
    /// crosses, which no skin foresees; that is tunnelling, not contact.
    #[test]
    fn candidate_pass_matches_the_full_pass_within_the_skin() {
        let mut s = 777u64;
        let mut rnd = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let drum = cylinder(DVec3::new(0.0, 0.0, 0.5), DVec3::X, 0.3, 0.4, Caps::Both);
        let bin = Boundary::fixed(
            "bin",
            Shape::BoxContainer {
                half_extents: DVec3::new(1.0, 1.0, 0.6),
                open_top: true,
            },
            DVec3::new(0.0, 0.0, 0.6),
            0,
        );
        // Unit-cube samples mapped to each boundary's inner side.
        type Place = fn(DVec3) -> DVec3;
        let cases: [(&str, Boundary, Place); 3] = [
            ("drum", drum, |u| {
                let (a, t) = (u.x * 0.8 - 0.4, u.y * std::f64::consts::TAU);
                let rr = 0.3 * u.z.sqrt();
                DVec3::new(a, rr * t.cos(), 0.5 + rr * t.sin())
            }),
            ("plate", plate(), |u| {
                DVec3::new(u.x * 2.4 - 1.2, u.y * 1.4 - 0.7, 0.5 + 0.12 * u.z)
            }),
            ("box", bin, |u| {
                DVec3::new(u.x * 2.0 - 1.0, u.y * 2.0 - 1.0, u.z * 1.4)
            }),
        ];
        let skin = 0.02;
        for (name, wall, place) in cases {
            let walls = std::slice::from_ref(&wall);
            let inits: Vec<SphereInit> = (0..400)
                .map(|_| sphere(place(DVec3::new(rnd(), rnd(), rnd())), 0.02 + 0.03 * rnd()))
                .collect();
            let mut bodies = Bodies::from_inits(&inits);
            let mut near: Vec<u32> = sphere_boundary(&bodies, walls, skin, 0.0)
                .iter()
                .map(|c| c.a)
                .collect();
            near.dedup();
            assert!(near.len() < bodies.len(), "{name}: every sphere is near");
            for x in &mut bodies.pos {
                let d = DVec3::new(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5);
                *x += d.normalize_or_zero() * (0.49 * skin);
            }
            let full = sphere_boundary(&bodies, walls, 0.0, 0.0);
            let listed = sphere_boundary_of(&bodies, walls, &near, 0.0, 0.0);
            assert!(full.len() > 20, "{name}: only {} contacts", full.len());
            assert_eq!(
                listed.len(),
                full.len(),
                "{name}: {} candidates of {} spheres",
                near.len(),
                bodies.len()
            );
            for (a, b) in listed.iter().zip(&full) {
                assert_eq!((a.a, a.key), (b.a, b.key), "{name}");
                assert_eq!((a.gap, a.normal, a.point), (b.gap, b.normal, b.point));
            }
        }
    }

    /// The boundary contacts of one sphere, sorted by face id (low key bits).
    fn wall_contacts(b: &Boundary, x: DVec3, r: f64, env: f64) -> Vec<ContactGeom> {
        let bodies = Bodies::from_inits(&[sphere(x, r)]);
        let mut c = sphere_boundary(&bodies, std::slice::from_ref(b), env, 0.0);
        c.sort_by_key(|g| g.key & 0xf);
        c
    }

    fn assert_close(what: &str, got: DVec3, want: DVec3) {
        assert!(
            (got - want).length() < 1e-12,
            "{what}: got {got}, expected {want}"
        );
    }

    fn assert_near(what: &str, got: f64, want: f64) {
        assert!(
            (got - want).abs() < 1e-12,
            "{what}: got {got}, expected {want}"
        );
    }

    /// A 2 × 1 plate at z = 0.5 (half extents 1, 0.5, centre (0, 0, 0.5)).
    fn plate() -> Boundary {
        let shape = Shape::Plate {
            half_x: 1.0,
            half_y: 0.5,
        };
        Boundary::fixed("plate", shape, DVec3::new(0.0, 0.0, 0.5), 0)
    }

    /// Over the plate, r = 0.1 at height 0.15 above it: gap 0.05, normal −z
    /// (sphere toward plate), point 0.5 + 0.025. Under it: no contact.
    #[test]
    fn plate_face_gap_normal_and_point_match_hand_values() {
        let c = wall_contacts(&plate(), DVec3::new(0.3, -0.2, 0.65), 0.1, 0.1);
        assert_eq!(c.len(), 1, "contacts {c:?}");
        assert_near("gap", c[0].gap, 0.05);
        assert_close("normal", c[0].normal, -DVec3::Z);
        assert_close("point", c[0].point, DVec3::new(0.3, -0.2, 0.525));
        assert_eq!(c[0].key & 0xf, 0, "face id");
        assert!(
            wall_contacts(&plate(), DVec3::new(0.3, -0.2, 0.45), 0.1, 0.1).is_empty(),
            "a centre under the plate touches nothing"
        );
    }

    /// Beyond the +x edge (x = 1) by 0.06 and above it by 0.08: the edge is
    /// 0.1 away along (0.6, 0, 0.8); r = 0.08 gives gap 0.02. Beyond the
    /// (+x, +y) corner by (0.03, 0.04) at the plate's height: distance 0.05.
    /// Exactly at the rim the face and edge agree (no jump).
    #[test]
    fn plate_edge_and_corner_match_hand_values() {
        let c = wall_contacts(&plate(), DVec3::new(1.06, 0.1, 0.58), 0.08, 0.1);
        assert_eq!(c.len(), 1, "contacts {c:?}");
        assert_near("gap", c[0].gap, 0.02);
        assert_close("normal", c[0].normal, -DVec3::new(0.6, 0.0, 0.8));
        assert_eq!(c[0].key & 0xf, 1, "edge id");
        let c = wall_contacts(&plate(), DVec3::new(1.03, 0.54, 0.5), 0.04, 0.1);
        assert_eq!(c.len(), 1, "contacts {c:?}");
        assert_near("corner gap", c[0].gap, 0.01);
        assert_close("corner normal", c[0].normal, -DVec3::new(0.6, 0.8, 0.0));
        // Across the rim x = 1 at height 0.1 above the plate.
        let inside = wall_contacts(&plate(), DVec3::new(1.0, 0.0, 0.6), 0.09, 0.1);
        let outside = wall_contacts(&plate(), DVec3::new(1.0 + 1e-9, 0.0, 0.6), 0.09, 0.1);
        assert!((inside[0].gap - outside[0].gap).abs() < 1e-12);
        assert!((inside[0].normal - outside[0].normal).length() < 1e-6);
        // Far below and beside the plate (fallen off): no contact.
        assert!(wall_contacts(&plate(), DVec3::new(2.0, 0.0, -1.0), 0.1, 0.1).is_empty());
    }

    /// A sphere near the curved wall of a vertical drum (R = 1, L = 1) at
    /// ϱ = 0.7, r = 0.2: gap 1 − 0.7 − 0.2 = 0.1, normal +x toward the wall,
    /// point at x = 0.7 + 0.2 + 0.05 = 0.95; the caps (gap 0.8) are out of reach.
    #[test]
    fn cylinder_wall_gap_normal_and_point_match_hand_values() {
        let b = cylinder(DVec3::ZERO, DVec3::Z, 1.0, 1.0, Caps::Both);
        let c = wall_contacts(&b, DVec3::new(0.7, 0.0, 0.0), 0.2, 0.2);
        assert_eq!(c.len(), 1, "contacts {c:?}");
        assert_near("gap", c[0].gap, 0.1);
        assert_close("normal", c[0].normal, DVec3::X);
        assert_close("point", c[0].point, DVec3::new(0.95, 0.0, 0.0));
        assert_eq!(c[0].key & 0xf, 0, "face id of the wall");
        // A centre outside the tube (ϱ > R) touches nothing: the wall acts from inside only.
        assert!(wall_contacts(&b, DVec3::new(1.1, 0.0, 0.0), 0.2, 0.2).is_empty());
    }

    /// Bottom cap at z = −1: a sphere of r = 0.1 at z = −0.85 has gap 0.05,
    /// normal −z, point z = −0.85 − 0.1 − 0.025 = −0.975. Near the corner
    /// (ϱ = 0.85) both the wall (gap 0.05) and the cap (gap 0.05) apply.
    #[test]
    fn cylinder_caps_and_corner_match_hand_values() {
        let b = cylinder(DVec3::ZERO, DVec3::Z, 1.0, 1.0, Caps::Both);
        let c = wall_contacts(&b, DVec3::new(0.0, 0.0, -0.85), 0.1, 0.1);
        assert_eq!(c.len(), 1, "contacts {c:?}");
        assert_near("gap", c[0].gap, 0.05);
        assert_close("normal", c[0].normal, -DVec3::Z);
        assert_close("point", c[0].point, DVec3::new(0.0, 0.0, -0.975));
        assert_eq!(c[0].key & 0xf, 1, "face id of the bottom cap");
        // Top cap at z = +1.
        let c = wall_contacts(&b, DVec3::new(0.0, 0.0, 0.85), 0.1, 0.1);
        assert_eq!(c.len(), 1, "contacts {c:?}");
        assert_close("top normal", c[0].normal, DVec3::Z);
        assert_eq!(c[0].key & 0xf, 2, "face id of the top cap");
        // Corner: wall and bottom cap together.
        let c = wall_contacts(&b, DVec3::new(0.0, 0.85, -0.85), 0.1, 0.1);
        assert_eq!(c.len(), 2, "contacts {c:?}");
        assert_close("wall normal", c[0].normal, DVec3::Y);
        assert_close("cap normal", c[1].normal, -DVec3::Z);
        assert_near("wall gap", c[0].gap, 0.05);
        assert_near("cap gap", c[1].gap, 0.05);
        // An open tube has no caps there.
        let open = cylinder(DVec3::ZERO, DVec3::Z, 1.0, 1.0, Caps::Open);
        assert!(wall_contacts(&open, DVec3::new(0.0, 0.0, -0.85), 0.1, 0.1).is_empty());
    }

    /// Rim of an open end: centre (0.9, 0, 1.1), r = 0.2 beyond the top
    /// (a = 1.1 > L = 1): nearest rim point q = (1, 0, 1), distance 0.1·√2,
    /// gap 0.1·√2 − 0.2, normal (q − x)/|q − x| = (1, 0, −1)/√2. At a = L
    /// exactly, the rim's gap equals the wall's (continuity).
    #[test]
    fn cylinder_rim_edge_matches_hand_values() {
        let b = cylinder(DVec3::ZERO, DVec3::Z, 1.0, 1.0, Caps::Bottom);
        let x = DVec3::new(0.9, 0.0, 1.1);
        let c = wall_contacts(&b, x, 0.2, 0.05);
        assert_eq!(c.len(), 1, "contacts {c:?}");
        let d = 0.1 * 2f64.sqrt();
        assert_near("gap", c[0].gap, d - 0.2);
        let n = DVec3::new(1.0, 0.0, -1.0) / 2f64.sqrt();
        assert_close("normal", c[0].normal, n);
        assert_close("point", c[0].point, x + n * (0.2 + 0.5 * (d - 0.2)));
        assert_eq!(c[0].key & 0xf, 4, "face id of the top rim");
        // The bottom end of an open tube has a rim too (id 3), seen from below.
        let open = cylinder(DVec3::ZERO, DVec3::Z, 1.0, 1.0, Caps::Open);
        let c = wall_contacts(&open, DVec3::new(0.9, 0.0, -1.1), 0.2, 0.05);
        assert_eq!(c.len(), 1, "contacts {c:?}");
        assert_eq!(c[0].key & 0xf, 3, "face id of the bottom rim");
        assert_close(
            "bottom rim normal",
            c[0].normal,
            n * DVec3::new(1.0, 1.0, -1.0),
        );
        // Continuity at the end of the wall: just inside and just beyond a = L.
        let inside = wall_contacts(&b, DVec3::new(0.9, 0.0, 1.0 - 1e-9), 0.15, 0.1);
        let beyond = wall_contacts(&b, DVec3::new(0.9, 0.0, 1.0 + 1e-9), 0.15, 0.1);
        assert!(
            (inside[0].gap - beyond[0].gap).abs() < 1e-8,
            "wall gap {} vs rim gap {} across the end",
            inside[0].gap,
            beyond[0].gap
        );
    }

    /// Arbitrary axis â = (1, 2, 2)/3 through (1, −1, 0.5), R = 0.5, L = 2:
    /// with ê = (2, 1, −2)/3 ⟂ â, a centre at origin + â + 0.3 ê (r = 0.1)
    /// has wall gap 0.5 − 0.3 − 0.1 = 0.1, normal ê, point origin + â + 0.45 ê;
    /// a centre at origin − 1.9 â + 0.1 ê (r = 0.05) has bottom-cap gap
    /// 0.1 − 0.05 = 0.05 and normal −â.
    #[test]
    fn cylinder_with_arbitrary_axis_matches_hand_values() {
        let axis = DVec3::new(1.0, 2.0, 2.0) / 3.0;
        let e = DVec3::new(2.0, 1.0, -2.0) / 3.0;
        let o = DVec3::new(1.0, -1.0, 0.5);
        let b = cylinder(o, axis, 0.5, 2.0, Caps::Both);
        let c = wall_contacts(&b, o + axis + e * 0.3, 0.1, 0.15);
        assert_eq!(c.len(), 1, "contacts {c:?}");
        assert_near("wall gap", c[0].gap, 0.1);
        assert_close("wall normal", c[0].normal, e);
        assert_close("wall point", c[0].point, o + axis + e * 0.45);
        let c = wall_contacts(&b, o - axis * 1.9 + e * 0.1, 0.05, 0.15);
        assert_eq!(c.len(), 1, "contacts {c:?}");
        assert_near("cap gap", c[0].gap, 0.05);
        assert_close("cap normal", c[0].normal, -axis);
        assert_close("cap point", c[0].point, o - axis * 1.975 + e * 0.1);
    }

    /// A drum spinning at ω = 2 rad/s about +z: the wall at the contact point
    /// (0.95, 0, 0) moves at ω ẑ × p = (0, 1.9, 0), the contact carries the
    /// wall's spin, and the assembled bias has the spin in its torque rows.
    /// Before `start_time` the wall is at rest.
    #[test]
    fn spinning_drum_gives_surface_velocity_and_torque_bias() {
        let mut b = cylinder(DVec3::ZERO, DVec3::Z, 1.0, 1.0, Caps::Both);
        b.angular_velocity = DVec3::new(0.0, 0.0, 2.0);
        b.start_time = 0.5;
        let bodies = Bodies::from_inits(&[sphere(DVec3::new(0.7, 0.0, 0.0), 0.2)]);
        let at_rest = sphere_boundary(&bodies, std::slice::from_ref(&b), 0.2, 0.25);
        assert_eq!(at_rest[0].wall_velocity, DVec3::ZERO);
        assert_eq!(at_rest[0].wall_omega, DVec3::ZERO);
        let c = sphere_boundary(&bodies, std::slice::from_ref(&b), 0.2, 0.5);
        assert_close(
            "wall velocity",
            c[0].wall_velocity,
            DVec3::new(0.0, 1.9, 0.0),
        );
        assert_close("wall spin", c[0].wall_omega, DVec3::new(0.0, 0.0, 2.0));
        let mats = vec![crate::material::Material {
            name: "m".into(),
            friction: 0.5,
            rolling: 0.0,
            spinning: 0.0,
            density: 1000.0,
            ..Default::default()
        }];
        let p = crate::problem::ContactProblem::assemble(
            &bodies,
            &c,
            &mats,
            vec![DVec3::ZERO],
            vec![DVec3::ZERO],
            1e-3,
            0.5,
        );
        let [n, u, w] = p.frame[0];
        let spin = DVec3::new(0.0, 0.0, 2.0);
        let want = [n.dot(spin), u.dot(spin), w.dot(spin)];
        for (k, want) in want.iter().enumerate() {
            assert_near("torque bias", p.bias[0][3 + k], *want);
        }
        assert!(p.has_torque_bias());
    }
}
