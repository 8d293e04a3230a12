//! Triangle meshes as boundaries: the surface a sphere touches, prepared
//! once per mesh (face normals, edges and what meets at each edge and
//! vertex, a bounding-volume hierarchy), and the sphere–mesh contacts of
//! one sphere.
//!
//! # Which side is free
//!
//! A triangle's normal n_t = (b − a) × (c − a) / ‖…‖ follows its winding
//! (counter-clockwise seen from where n_t points); spheres live on that
//! side ([`crate::scene`]'s `flip` reverses every triangle). A centre
//! behind a face (δ = (p − q)·n_t ≤ 0) touches nothing of it, as with a
//! plate's far side. A `two_sided` mesh (a sheet of no thickness that
//! both sides of touch, like a funnel's wall seen from the heap below)
//! measures δ = |(p − q)·n_t| and pushes toward the centre's side.
//!
//! # Face, edge and vertex regions, and no double counting
//!
//! For a centre p (in the mesh's own frame) and each triangle whose box
//! comes within reach (radius + envelope), q is the point of the triangle
//! nearest p, and lies in its face (all barycentric coordinates above
//! 1e-9), on one of its edges, or at a corner. A triangle that shares an
//! edge or corner with its neighbours finds the *same* feature from each
//! side, so candidates are gathered per feature (face t, edge e, vertex
//! v), once each. A feature's point is a contact only if it is a local
//! minimum of the distance to p over the surface — no neighbouring face
//! has a closer point — which is what keeps a sphere on a flat mesh from
//! feeling the edges and corners of the triangles beside the one under it:
//!
//! | feature | contact when | normal (surface → centre), distance δ |
//! |---|---|---|
//! | face t | q inside t, δ = (p − q)·n_t > 0 | n_t, δ |
//! | edge e | (p − q)·τ_F ≤ 0 for every face F at e (τ_F: in F's plane, ⟂ e, into F); p on the free side of some F at e; no face at e is a contact | (p − q)/‖p − q‖, ‖p − q‖ |
//! | vertex v | (p − v)·ê ≤ 0 for every edge at v (ê: unit, away from v); p on the free side of some face at v; no face or edge at v is a contact | (p − v)/‖p − v‖, ‖p − v‖ |
//!
//! (the tests allow 1e-9 ‖p − q‖ of rounding). On a flat mesh the normal is
//! the plane's and δ the height above it wherever the sphere is, so a
//! sphere rolls across shared edges without a bump; at a convex ridge the
//! normal turns continuously from one face's through the edge's to the
//! next face's (the face and edge distances agree at the border between
//! their regions); in a concave valley both faces touch. A feature's key
//! (face t, edge T + e, vertex T + E + v for T triangles and E edges) is
//! stable while the sphere stays on it, for warm starts.
//!
//! # Nearest point
//!
//! [`MeshSurface::nearest`] finds the nearest point of the whole mesh
//! through the hierarchy (for scene checks and inlets); its sign follows the
//! feature's pseudo-normal — the face normal, the mean of an edge's face
//! normals, the angle-weighted mean of a vertex's (Bærentzen & Aanæs 2005),
//! which tells inside from outside exactly for a closed mesh.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use glam::DVec3;
use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::math::Vector as PVec;
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy};
use parry3d_f64::query::PointProjection;

use crate::mesh::{read_mesh, MeshError, MeshReport, TriMesh};

/// Barycentric margin below which a point counts as on a triangle's edge,
/// and the relative slack of the local-minimum tests.
const FEATURE_TOL: f64 = 1e-9;

/// A part of a mesh's surface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feature {
    /// The inside of triangle t.
    Face(u32),
    /// Edge e (an index into [`MeshSurface::edges`]).
    Edge(u32),
    /// Vertex v.
    Vertex(u32),
}

/// One surface point of a mesh near a sphere centre, in the mesh's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshPoint {
    /// The feature touched.
    pub feature: Feature,
    /// Its stable key within the mesh (module docs).
    pub key: u64,
    /// Nearest point of the feature (m).
    pub point: DVec3,
    /// Unit normal from the surface toward the centre.
    pub normal: DVec3,
    /// Distance of the centre from the surface along `normal` (m).
    pub distance: f64,
}

/// Compressed lists: the items of entry i are `items[start[i]..start[i + 1]]`.
#[derive(Clone, Debug, Default, PartialEq)]
struct Lists {
    start: Vec<u32>,
    items: Vec<u32>,
}

impl Lists {
    /// Lists from (entry, item) pairs for `n` entries, items in pair order.
    fn from_pairs(n: usize, pairs: &[(u32, u32)]) -> Lists {
        let mut count = vec![0u32; n + 1];
        for &(e, _) in pairs {
            count[e as usize + 1] += 1;
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let mut fill = count.clone();
        let mut items = vec![0u32; pairs.len()];
        for &(e, item) in pairs {
            items[fill[e as usize] as usize] = item;
            fill[e as usize] += 1;
        }
        Lists {
            start: count,
            items,
        }
    }

    fn of(&self, i: u32) -> &[u32] {
        &self.items[self.start[i as usize] as usize..self.start[i as usize + 1] as usize]
    }
}

/// A triangle mesh prepared as a boundary surface, in its own frame.
#[derive(Clone, Debug)]
pub struct MeshSurface {
    /// The triangles (own frame, scaled; winding as the free side says).
    pub mesh: TriMesh,
    /// Unit normal of each triangle, toward the free side.
    pub normals: Vec<DVec3>,
    /// Edges as (lower, higher) vertex index.
    pub edges: Vec<[u32; 2]>,
    /// Whether both sides of every triangle are free (module docs).
    pub two_sided: bool,
    /// Whether every edge has two faces (a closed surface, whose inside
    /// is out of the scene).
    pub closed: bool,
    /// Edge of each triangle side k (corners k and k + 1).
    tri_edges: Vec<[u32; 3]>,
    edge_faces: Lists,
    vertex_faces: Lists,
    vertex_edges: Lists,
    /// Angle-weighted vertex pseudo-normals.
    vertex_normals: Vec<DVec3>,
    bvh: Bvh,
    /// The mesh as parry's, for bodies that are not spheres (built on
    /// first use).
    parry: OnceLock<parry3d_f64::shape::TriMesh>,
}

impl PartialEq for MeshSurface {
    fn eq(&self, other: &Self) -> bool {
        self.mesh == other.mesh && self.two_sided == other.two_sided
    }
}

fn to_p(v: DVec3) -> PVec {
    PVec::new(v.x, v.y, v.z)
}

impl MeshSurface {
    /// Prepares `mesh` (already in its own frame, every triangle of
    /// non-zero area, as [`crate::mesh::read_mesh`] leaves it).
    pub fn new(mesh: TriMesh, two_sided: bool) -> MeshSurface {
        let nv = mesh.vertices.len();
        let normals: Vec<DVec3> = (0..mesh.triangles.len())
            .map(|t| {
                let [a, b, c] = mesh.corners(t);
                (b - a).cross(c - a).normalize()
            })
            .collect();
        let mut index: HashMap<[u32; 2], u32> = HashMap::new();
        let mut edges = Vec::new();
        let mut tri_edges = Vec::with_capacity(mesh.triangles.len());
        let mut edge_face_pairs = Vec::new();
        let mut vertex_face_pairs = Vec::new();
        for (t, tri) in mesh.triangles.iter().enumerate() {
            let mut te = [0u32; 3];
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                let key = [a.min(b), a.max(b)];
                let e = *index.entry(key).or_insert_with(|| {
                    edges.push(key);
                    (edges.len() - 1) as u32
                });
                te[k] = e;
                edge_face_pairs.push((e, t as u32));
                vertex_face_pairs.push((tri[k], t as u32));
            }
            tri_edges.push(te);
        }
        let vertex_edge_pairs: Vec<(u32, u32)> = edges
            .iter()
            .enumerate()
            .flat_map(|(e, [a, b])| [(*a, e as u32), (*b, e as u32)])
            .collect();
        let edge_faces = Lists::from_pairs(edges.len(), &edge_face_pairs);
        let vertex_faces = Lists::from_pairs(nv, &vertex_face_pairs);
        let vertex_edges = Lists::from_pairs(nv, &vertex_edge_pairs);
        let mut vertex_normals = vec![DVec3::ZERO; nv];
        for (t, tri) in mesh.triangles.iter().enumerate() {
            let c = mesh.corners(t);
            for k in 0..3 {
                let u = (c[(k + 1) % 3] - c[k]).normalize();
                let w = (c[(k + 2) % 3] - c[k]).normalize();
                let angle = u.dot(w).clamp(-1.0, 1.0).acos();
                vertex_normals[tri[k] as usize] += normals[t] * angle;
            }
        }
        for n in &mut vertex_normals {
            *n = n.normalize_or_zero();
        }
        let boxes: Vec<Aabb> = (0..mesh.triangles.len())
            .map(|t| {
                let [a, b, c] = mesh.corners(t);
                Aabb::new(to_p(a.min(b).min(c)), to_p(a.max(b).max(c)))
            })
            .collect();
        let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &boxes);
        let closed = (0..edges.len() as u32).all(|e| edge_faces.of(e).len() == 2);
        MeshSurface {
            closed,
            mesh,
            normals,
            edges,
            two_sided,
            tri_edges,
            edge_faces,
            vertex_faces,
            vertex_edges,
            vertex_normals,
            bvh,
            parry: OnceLock::new(),
        }
    }

    /// The mesh as parry's, with its internal edges marked so that a body
    /// sliding across them is not caught (built on first use).
    pub fn parry(&self) -> &parry3d_f64::shape::TriMesh {
        self.parry.get_or_init(|| {
            use parry3d_f64::shape::{TriMesh as PMesh, TriMeshFlags};
            let vertices: Vec<PVec> = self.mesh.vertices.iter().map(|v| to_p(*v)).collect();
            let triangles = self.mesh.triangles.clone();
            let fix = TriMeshFlags::ORIENTED | TriMeshFlags::FIX_INTERNAL_EDGES;
            PMesh::with_flags(vertices.clone(), triangles.clone(), fix)
                .or_else(|_| PMesh::new(vertices, triangles))
                .expect("a mesh of non-degenerate triangles is a valid parry mesh")
        })
    }

    /// The key of a feature (module docs).
    pub fn key(&self, f: Feature) -> u64 {
        let t = self.mesh.triangles.len() as u64;
        let e = self.edges.len() as u64;
        match f {
            Feature::Face(i) => i as u64,
            Feature::Edge(i) => t + i as u64,
            Feature::Vertex(i) => t + e + i as u64,
        }
    }

    /// The point of triangle `t` nearest `p` and the feature it lies on.
    fn nearest_on_triangle(&self, t: usize, p: DVec3) -> (DVec3, Feature) {
        let tri = self.mesh.triangles[t];
        let c = self.mesh.corners(t);
        let n = (c[1] - c[0]).cross(c[2] - c[0]);
        let nn = n.length_squared();
        let bary = [
            (c[1] - p).cross(c[2] - p).dot(n) / nn,
            (c[2] - p).cross(c[0] - p).dot(n) / nn,
            (c[0] - p).cross(c[1] - p).dot(n) / nn,
        ];
        if bary.iter().all(|&b| b > FEATURE_TOL) {
            let unit = self.normals[t];
            return (p - unit * (p - c[0]).dot(unit), Feature::Face(t as u32));
        }
        // On the boundary: the nearest of the three sides.
        let mut best = (f64::INFINITY, DVec3::ZERO, Feature::Face(t as u32));
        for k in 0..3 {
            let (a, b) = (c[k], c[(k + 1) % 3]);
            let e = b - a;
            let s = ((p - a).dot(e) / e.length_squared()).clamp(0.0, 1.0);
            let q = a + e * s;
            let d2 = (p - q).length_squared();
            if d2 < best.0 {
                let feature = if s <= FEATURE_TOL {
                    Feature::Vertex(tri[k])
                } else if s >= 1.0 - FEATURE_TOL {
                    Feature::Vertex(tri[(k + 1) % 3])
                } else {
                    Feature::Edge(self.tri_edges[t][k])
                };
                let q = match feature {
                    Feature::Vertex(v) => self.mesh.vertices[v as usize],
                    _ => q,
                };
                best = (d2, q, feature);
            }
        }
        (best.1, best.2)
    }

    /// Whether `p` is on the free side of face `t` (always, two-sided).
    fn free_side(&self, t: u32, d: DVec3) -> bool {
        self.two_sided || d.dot(self.normals[t as usize]) >= 0.0
    }

    /// The unit vector in face `f`'s plane, perpendicular to edge `e`,
    /// pointing into the face.
    fn inward(&self, e: u32, f: u32) -> DVec3 {
        let [a, b] = self.edges[e as usize].map(|v| self.mesh.vertices[v as usize]);
        let tri = self.mesh.triangles[f as usize];
        let edge = self.edges[e as usize];
        let w = tri
            .iter()
            .find(|v| !edge.contains(v))
            .map(|&v| self.mesh.vertices[v as usize])
            .unwrap_or(a);
        let u = (b - a).normalize();
        let out = (w - a) - u * (w - a).dot(u);
        out.normalize_or_zero()
    }

    /// Every contact of a sphere centre `p` (own frame) within `reach` of
    /// the surface (module docs), in feature-key order; `f` gets each.
    pub fn contacts(&self, p: DVec3, reach: f64, mut f: impl FnMut(MeshPoint)) {
        let r = DVec3::splat(reach);
        let query = Aabb::new(to_p(p - r), to_p(p + r));
        let mut found: Vec<(Feature, DVec3)> = self
            .bvh
            .intersect_aabb(&query)
            .map(|t| self.nearest_on_triangle(t as usize, p))
            .filter(|(q, _)| (p - *q).length_squared() < reach * reach)
            .map(|(q, feat)| (feat, q))
            .collect();
        if found.is_empty() {
            return;
        }
        found.sort_by_key(|a| a.0);
        found.dedup_by(|a, b| a.0 == b.0);
        // Faces first (the enum's order): the accepted ones, for the
        // edge and vertex rules.
        let mut faces: Vec<u32> = Vec::new();
        let mut edges: Vec<u32> = Vec::new();
        for (feature, q) in found {
            let d = p - q;
            let len = d.length();
            let slack = FEATURE_TOL * len;
            let point = match feature {
                Feature::Face(t) => {
                    let n = self.normals[t as usize];
                    let h = d.dot(n);
                    if !(h > 0.0 || (self.two_sided && h < 0.0)) {
                        continue;
                    }
                    faces.push(t);
                    MeshPoint {
                        feature,
                        key: 0,
                        point: q,
                        normal: if h > 0.0 { n } else { -n },
                        distance: h.abs(),
                    }
                }
                Feature::Edge(e) => {
                    let around = self.edge_faces.of(e);
                    if around.iter().any(|t| faces.binary_search(t).is_ok())
                        || !around.iter().any(|&t| self.free_side(t, d))
                        || around.iter().any(|&t| d.dot(self.inward(e, t)) > slack)
                    {
                        continue;
                    }
                    edges.push(e);
                    MeshPoint {
                        feature,
                        key: 0,
                        point: q,
                        normal: self.away(d, len, around),
                        distance: len,
                    }
                }
                Feature::Vertex(v) => {
                    let faces_at = self.vertex_faces.of(v);
                    let edges_at = self.vertex_edges.of(v);
                    let x = self.mesh.vertices[v as usize];
                    if faces_at.iter().any(|t| faces.binary_search(t).is_ok())
                        || edges_at.iter().any(|e| edges.binary_search(e).is_ok())
                        || !faces_at.iter().any(|&t| self.free_side(t, d))
                        || edges_at.iter().any(|&e| {
                            let [a, b] = self.edges[e as usize];
                            let other = if a == v { b } else { a };
                            let u = (self.mesh.vertices[other as usize] - x).normalize();
                            d.dot(u) > slack
                        })
                    {
                        continue;
                    }
                    MeshPoint {
                        feature,
                        key: 0,
                        point: q,
                        normal: self.away(d, len, faces_at),
                        distance: len,
                    }
                }
            };
            f(MeshPoint {
                key: self.key(feature),
                ..point
            });
        }
    }

    /// The unit vector from the surface toward the centre, `d / len`, or
    /// (a centre on an edge or corner) the mean normal of the faces there.
    fn away(&self, d: DVec3, len: f64, faces: &[u32]) -> DVec3 {
        if len > 0.0 {
            return d / len;
        }
        faces
            .iter()
            .map(|&t| self.normals[t as usize])
            .sum::<DVec3>()
            .normalize_or(DVec3::Z)
    }

    /// The nearest point of the whole mesh to `p` (own frame) within
    /// `max_distance`: (feature, point, signed distance), the sign by the
    /// feature's pseudo-normal (module docs; always ≥ 0 two-sided).
    pub fn nearest(&self, p: DVec3, max_distance: f64) -> Option<(Feature, DVec3, f64)> {
        let (t, _) = self.bvh.project_point(to_p(p), max_distance, |t, _| {
            let (q, _) = self.nearest_on_triangle(t as usize, p);
            Some(PointProjection::new(false, to_p(q)))
        })?;
        let (q, feature) = self.nearest_on_triangle(t as usize, p);
        let d = p - q;
        let len = d.length();
        if self.two_sided {
            return Some((feature, q, len));
        }
        let pseudo = match feature {
            Feature::Face(t) => self.normals[t as usize],
            Feature::Edge(e) => self
                .edge_faces
                .of(e)
                .iter()
                .map(|&t| self.normals[t as usize])
                .sum::<DVec3>(),
            Feature::Vertex(v) => self.vertex_normals[v as usize],
        };
        let sign = if d.dot(pseudo) >= 0.0 { 1.0 } else { -1.0 };
        Some((feature, q, sign * len))
    }

    /// The largest distance of a vertex from the mesh's origin (m): how
    /// far a turning mesh's surface reaches.
    pub fn reach(&self) -> f64 {
        self.mesh
            .vertices
            .iter()
            .map(|v| v.length())
            .fold(0.0, f64::max)
    }

    /// The number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.mesh.triangles.len()
    }
}

/// A mesh surface as a scene reads it: the shared surface and what reading
/// the file found.
#[derive(Clone, Debug)]
pub struct LoadedSurface {
    /// The prepared surface.
    pub surface: Arc<MeshSurface>,
    /// What reading found (triangles dropped).
    pub report: MeshReport,
}

/// What identifies a prepared surface: the file (and its size and
/// modification time, so an edited file is read again) and the options.
type CacheKey = (PathBuf, u64, Option<std::time::SystemTime>, u64, bool, bool);

/// Reads `path` ([`read_mesh`]), scales it, reverses its triangles with
/// `flip`, and prepares it as a surface. A file is read once per process
/// for each (file version, scale, flip, two_sided): a sweep's runs and a
/// scene's repeated validations share it.
pub fn load_surface(
    path: &Path,
    scale: f64,
    flip: bool,
    two_sided: bool,
) -> Result<LoadedSurface, MeshError> {
    static CACHE: OnceLock<Mutex<HashMap<CacheKey, LoadedSurface>>> = OnceLock::new();
    let key = std::fs::metadata(path).ok().map(|m| {
        (
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
            m.len(),
            m.modified().ok(),
            scale.to_bits(),
            flip,
            two_sided,
        )
    });
    let cache = CACHE.get_or_init(Default::default);
    if let Some(k) = &key {
        if let Some(found) = cache.lock().ok().and_then(|c| c.get(k).cloned()) {
            return Ok(found);
        }
    }
    let (mesh, report) = read_mesh(path)?;
    let mesh = TriMesh {
        vertices: mesh.vertices.iter().map(|v| *v * scale).collect(),
        triangles: if flip {
            mesh.triangles.iter().map(|&[a, b, c]| [a, c, b]).collect()
        } else {
            mesh.triangles
        },
    };
    let loaded = LoadedSurface {
        surface: Arc::new(MeshSurface::new(mesh, two_sided)),
        report,
    };
    if let (Some(k), Ok(mut c)) = (key, cache.lock()) {
        c.insert(k, loaded.clone());
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An n × n grid of unit squares on z = 0, each split into two
    /// triangles along alternating diagonals (vertices where 4 and where
    /// 8 triangles meet), normals +z.
    fn grid(n: u32) -> MeshSurface {
        let mut vertices = Vec::new();
        for j in 0..=n {
            for i in 0..=n {
                vertices.push(DVec3::new(i as f64, j as f64, 0.0));
            }
        }
        let id = |i: u32, j: u32| j * (n + 1) + i;
        let mut triangles = Vec::new();
        for j in 0..n {
            for i in 0..n {
                let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
                if (i + j) % 2 == 0 {
                    triangles.extend([[a, b, c], [a, c, d]]);
                } else {
                    triangles.extend([[a, b, d], [b, c, d]]);
                }
            }
        }
        MeshSurface::new(
            TriMesh {
                vertices,
                triangles,
            },
            false,
        )
    }

    /// The unit cube [0, 1]³, normals outward.
    fn cube(flip: bool) -> MeshSurface {
        let vertices = (0..8)
            .map(|k| DVec3::new((k & 1) as f64, (k >> 1 & 1) as f64, (k >> 2 & 1) as f64))
            .collect();
        let quads = [
            [0, 2, 3, 1], // z = 0, normal −z
            [4, 5, 7, 6], // z = 1
            [0, 1, 5, 4], // y = 0
            [2, 6, 7, 3], // y = 1
            [0, 4, 6, 2], // x = 0
            [1, 3, 7, 5], // x = 1
        ];
        let mut triangles = Vec::new();
        for [a, b, c, d] in quads {
            triangles.extend([[a, b, c], [a, c, d]]);
        }
        if flip {
            for t in &mut triangles {
                t.swap(1, 2);
            }
        }
        MeshSurface::new(
            TriMesh {
                vertices,
                triangles,
            },
            false,
        )
    }

    fn contacts_of(m: &MeshSurface, p: DVec3, reach: f64) -> Vec<MeshPoint> {
        let mut out = Vec::new();
        m.contacts(p, reach, |c| out.push(c));
        out
    }

    #[test]
    fn the_cube_is_closed_with_outward_normals() {
        let c = cube(false);
        assert!(c.closed);
        assert!((c.mesh.signed_volume() - 1.0).abs() < 1e-12);
        assert_eq!(c.edges.len(), 18);
    }

    /// Over a flat triangulated plane the sphere meets one surface point
    /// wherever it is — over a face, a shared edge, a diagonal or a vertex
    /// where eight triangles meet — with the plane's normal and its height
    /// as distance: no edge or corner of a neighbouring triangle is felt.
    #[test]
    fn a_flat_mesh_gives_one_contact_with_the_plane_normal_everywhere() {
        let m = grid(4);
        let h = 0.3;
        let mut checked = 0;
        for j in 0..=40 {
            for i in 0..=40 {
                let p = DVec3::new(0.5 + 0.075 * i as f64, 0.5 + 0.075 * j as f64, h);
                let found = contacts_of(&m, p, 0.5);
                assert_eq!(found.len(), 1, "at {p}: {found:?}");
                let c = found[0];
                assert!(
                    (c.normal - DVec3::Z).length() < 1e-12,
                    "at {p}: normal {} ({:?})",
                    c.normal,
                    c.feature
                );
                assert!(
                    (c.distance - h).abs() < 1e-12,
                    "at {p}: distance {} vs {h}",
                    c.distance
                );
                checked += 1;
            }
        }
        // Exactly over vertices and shared edges, too.
        for p in [
            DVec3::new(2.0, 2.0, h),
            DVec3::new(1.0, 2.0, h),
            DVec3::new(1.5, 2.0, h),
            DVec3::new(1.5, 1.5, h),
        ] {
            let found = contacts_of(&m, p, 0.5);
            assert_eq!(found.len(), 1, "at {p}: {found:?}");
            assert!((found[0].distance - h).abs() < 1e-12);
        }
        assert_eq!(checked, 41 * 41);
    }

    /// Beyond the top edge x = 1, z = 1 of the cube (along y) the sphere
    /// meets the edge, with the normal turning from the top face's +z to
    /// the side's +x; at the border of the face's region the edge's
    /// distance equals the face's (no jump); past the corner, the vertex.
    #[test]
    fn beyond_a_convex_edge_or_corner_the_sphere_meets_the_edge_or_the_corner() {
        let c = cube(false);
        let a = 0.1;
        let found = contacts_of(&c, DVec3::new(1.0 + a, 0.5, 1.0 + a), 0.3);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(matches!(found[0].feature, Feature::Edge(_)), "{found:?}");
        let want = DVec3::new(1.0, 0.0, 1.0).normalize();
        assert!((found[0].normal - want).length() < 1e-12, "{found:?}");
        assert!((found[0].distance - a * 2f64.sqrt()).abs() < 1e-12);
        // At the border of the top face's region: same distance either side.
        let inside = contacts_of(&c, DVec3::new(1.0 - 1e-7, 0.5, 1.2), 0.3);
        let outside = contacts_of(&c, DVec3::new(1.0 + 1e-7, 0.5, 1.2), 0.3);
        assert_eq!((inside.len(), outside.len()), (1, 1));
        assert!(matches!(inside[0].feature, Feature::Face(_)));
        assert!(matches!(outside[0].feature, Feature::Edge(_)));
        assert!((inside[0].distance - outside[0].distance).abs() < 1e-9);
        // The corner.
        let found = contacts_of(&c, DVec3::splat(1.0 + a), 0.3);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(matches!(found[0].feature, Feature::Vertex(7)), "{found:?}");
        assert!((found[0].normal - DVec3::ONE.normalize()).length() < 1e-12);
        assert!((found[0].distance - a * 3f64.sqrt()).abs() < 1e-12);
    }

    /// Inside the cube used as a container (triangles flipped), a sphere
    /// in a corner at (0.10, 0.12, 0.14) touches both walls and the floor,
    /// each at its own distance.
    #[test]
    fn in_a_concave_corner_the_sphere_touches_every_face() {
        let c = cube(true);
        let mut found = contacts_of(&c, DVec3::new(0.10, 0.12, 0.14), 0.2);
        assert_eq!(found.len(), 3, "{found:?}");
        found.sort_by(|a, b| a.distance.total_cmp(&b.distance));
        for (f, (n, d)) in found
            .iter()
            .zip([(DVec3::X, 0.10), (DVec3::Y, 0.12), (DVec3::Z, 0.14)])
        {
            assert!(matches!(f.feature, Feature::Face(_)), "{f:?}");
            assert!((f.normal - n).length() < 1e-12, "{f:?} vs {n}");
            assert!((f.distance - d).abs() < 1e-12, "{f:?} vs {d}");
        }
    }

    /// One-sided: a centre behind the faces (inside the solid cube) meets
    /// nothing; the nearest point is signed negative there and positive
    /// outside. Two-sided: a centre under a sheet meets it from below.
    #[test]
    fn behind_a_one_sided_mesh_nothing_touches_and_a_two_sided_sheet_touches_from_both_sides() {
        let c = cube(false);
        assert!(contacts_of(&c, DVec3::splat(0.5), 0.6).is_empty());
        let (_, _, d) = c.nearest(DVec3::new(0.5, 0.5, 0.8), f64::INFINITY).unwrap();
        assert!((d + 0.2).abs() < 1e-12, "{d}");
        let (_, _, d) = c.nearest(DVec3::new(1.3, 1.4, 0.5), f64::INFINITY).unwrap();
        assert!((d - 0.5).abs() < 1e-12, "{d}");
        let g = grid(2);
        let below = DVec3::new(0.7, 0.6, -0.2);
        assert!(contacts_of(&g, below, 0.5).is_empty());
        let sheet = MeshSurface::new(g.mesh.clone(), true);
        let found = contacts_of(&sheet, below, 0.5);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!((found[0].normal + DVec3::Z).length() < 1e-12);
        assert!((found[0].distance - 0.2).abs() < 1e-12);
    }
}
