//! Triangle meshes from CAD files — STL (ASCII and binary) and Wavefront
//! OBJ — for mesh boundaries (funnels, hoppers, drums with lifters; issue
//! #16). This module reads and checks a mesh and places it in the scene
//! (scale, rotation, translation); the sphere–triangle contact that makes
//! it a boundary is built on it.
//!
//! Reading is done by maintained crates (`stl_io` for STL, which tells
//! ASCII from binary by content; `tobj` for OBJ, polygons fanned into
//! triangles, every object and group of the file joined into one mesh);
//! what is checked here:
//!
//! * the file exists, is not empty, and its extension is `.stl` or `.obj`
//!   (any case); a parser's complaint is reported with the file's name;
//! * every vertex coordinate is finite;
//! * there is at least one triangle of non-zero area; zero-area triangles
//!   (repeated vertices, collinear corners — common in exported CAD) are
//!   dropped and counted ([`MeshReport::degenerate_dropped`]).
//!
//! STL stores single-precision coordinates; OBJ is read in double. Vertices
//! that are bit-identical are merged, so triangles of a closed STL solid
//! share their edges ([`TriMesh::open_edges`] counts those that do not).

use std::collections::HashMap;
use std::path::Path;

use glam::{DQuat, DVec3};

/// A triangle mesh: shared vertices and triangles as indices into them,
/// counter-clockwise seen from the side the normal points to.
#[derive(Clone, Debug, PartialEq)]
pub struct TriMesh {
    /// Vertex positions (m).
    pub vertices: Vec<DVec3>,
    /// Triangles as three vertex indices.
    pub triangles: Vec<[u32; 3]>,
}

/// What reading a mesh found besides the mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MeshReport {
    /// Zero-area triangles left out.
    pub degenerate_dropped: usize,
}

/// Why a mesh file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    /// The file cannot be opened or read.
    #[error("{file}: cannot read the mesh file: {err}")]
    Io {
        /// The file.
        file: String,
        /// The error.
        err: std::io::Error,
    },
    /// The extension is not one of the formats read.
    #[error("{file}: unknown mesh format {ext:?}: repose reads .stl (ASCII or binary) and .obj")]
    Format {
        /// The file.
        file: String,
        /// Its extension.
        ext: String,
    },
    /// The parser rejected the content.
    #[error("{file}: not a valid {format} file: {reason}")]
    Parse {
        /// The file.
        file: String,
        /// `STL` or `OBJ`.
        format: &'static str,
        /// The parser's reason.
        reason: String,
    },
    /// A vertex coordinate is NaN or infinite.
    #[error("{file}: vertex {index} has a non-finite coordinate ({x}, {y}, {z})")]
    NonFinite {
        /// The file.
        file: String,
        /// The vertex (0-based, in the file's order after merging).
        index: usize,
        /// Its coordinates.
        x: f64,
        /// Its coordinates.
        y: f64,
        /// Its coordinates.
        z: f64,
    },
    /// No triangle of non-zero area.
    #[error("{file}: the mesh has no triangle of non-zero area ({triangles} triangles read, all degenerate)")]
    Empty {
        /// The file.
        file: String,
        /// Triangles read.
        triangles: usize,
    },
}

/// Reads a mesh file by its extension (`.stl`, `.obj`; any case).
pub fn read_mesh(path: &Path) -> Result<(TriMesh, MeshReport), MeshError> {
    let file = path.display().to_string();
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let bytes = std::fs::read(path).map_err(|err| MeshError::Io {
        file: file.clone(),
        err,
    })?;
    let (vertices, triangles) = match ext.as_str() {
        "stl" => parse_stl(&bytes, &file)?,
        "obj" => parse_obj(&bytes, &file)?,
        _ => return Err(MeshError::Format { file, ext }),
    };
    finish(vertices, triangles, &file)
}

fn parse_error(file: &str, format: &'static str, reason: String) -> MeshError {
    MeshError::Parse {
        file: file.to_string(),
        format,
        reason,
    }
}

/// An empty file is named as such rather than left to the parser.
fn nonempty(bytes: &[u8], file: &str, format: &'static str) -> Result<(), MeshError> {
    if bytes.is_empty() {
        return Err(parse_error(file, format, "the file is empty".into()));
    }
    Ok(())
}

fn parse_stl(bytes: &[u8], file: &str) -> Result<(Vec<DVec3>, Vec<[usize; 3]>), MeshError> {
    let fail = |reason: String| parse_error(file, "STL", reason);
    nonempty(bytes, file, "STL")?;
    let mut cursor = std::io::Cursor::new(bytes);
    let mesh = stl_io::read_stl(&mut cursor).map_err(|e| fail(e.to_string()))?;
    let vertices = mesh
        .vertices
        .iter()
        .map(|v| DVec3::new(f64::from(v[0]), f64::from(v[1]), f64::from(v[2])))
        .collect();
    let triangles = mesh.faces.iter().map(|f| f.vertices).collect();
    Ok((vertices, triangles))
}

fn parse_obj(bytes: &[u8], file: &str) -> Result<(Vec<DVec3>, Vec<[usize; 3]>), MeshError> {
    let fail = |reason: String| parse_error(file, "OBJ", reason);
    nonempty(bytes, file, "OBJ")?;
    let opts = tobj::LoadOptions {
        triangulate: true,
        single_index: true,
        ignore_points: true,
        ignore_lines: true,
    };
    let load = |bytes: &[u8]| {
        let mut reader = std::io::BufReader::new(bytes);
        // Materials are not needed: every mtllib is answered "not loaded".
        tobj::load_obj_buf(&mut reader, &opts, |_| Err(tobj::LoadError::GenericFailure))
    };
    let (models, _) = load(bytes).map_err(|e| {
        // tobj's errors do not say where: find the line.
        let reason = match obj_error_line(bytes, |prefix| load(prefix).is_err()) {
            Some((n, line)) => format!("line {n} (`{line}`): {e}"),
            None => e.to_string(),
        };
        fail(reason)
    })?;
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for m in &models {
        let base = vertices.len();
        let p = &m.mesh.positions;
        vertices.extend(p.chunks_exact(3).map(|c| DVec3::new(c[0], c[1], c[2])));
        for t in m.mesh.indices.chunks_exact(3) {
            triangles.push([
                base + t[0] as usize,
                base + t[1] as usize,
                base + t[2] as usize,
            ]);
        }
    }
    if triangles.is_empty() {
        return Err(fail("no faces (f lines) found".into()));
    }
    Ok((vertices, triangles))
}

/// The line at which an OBJ reader that fails on `bytes` (`fails`) first
/// fails: the shortest prefix of whole lines it fails on, found by
/// bisection (the reader goes line by line, and a face whose vertex index
/// is out of range fails every prefix that holds it, when the model is
/// closed at the prefix's end). Returns the line's number (from 1) and its
/// text, shortened to 60 characters (`None` for an empty file).
fn obj_error_line(bytes: &[u8], fails: impl Fn(&[u8]) -> bool) -> Option<(usize, String)> {
    // ends[k]: the end of line k + 1 (after its newline).
    let ends: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .map(|(i, _)| i + 1)
        .chain((bytes.last() != Some(&b'\n')).then_some(bytes.len()))
        .collect();
    if ends.is_empty() {
        return None;
    }
    // The first k with fails(prefix of k lines): fails(all lines) is known,
    // the prefix of none is taken not to fail.
    let (mut lo, mut hi) = (0, ends.len());
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if fails(&bytes[..ends[mid - 1]]) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let start = if hi >= 2 { ends[hi - 2] } else { 0 };
    let text = String::from_utf8_lossy(&bytes[start..ends[hi - 1]]);
    let text = text.trim();
    let shown: String = text.chars().take(60).collect();
    let more = if shown.len() < text.len() { "…" } else { "" };
    Some((hi, format!("{shown}{more}")))
}

/// Checks coordinates, merges bit-identical vertices, drops zero-area
/// triangles.
fn finish(
    vertices: Vec<DVec3>,
    triangles: Vec<[usize; 3]>,
    file: &str,
) -> Result<(TriMesh, MeshReport), MeshError> {
    if let Some((index, v)) = vertices.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(MeshError::NonFinite {
            file: file.to_string(),
            index,
            x: v.x,
            y: v.y,
            z: v.z,
        });
    }
    let mut merged: Vec<DVec3> = Vec::with_capacity(vertices.len());
    let mut index_of: HashMap<[u64; 3], u32> = HashMap::new();
    let remap: Vec<u32> = vertices
        .iter()
        .map(|v| {
            let key = [v.x.to_bits(), v.y.to_bits(), v.z.to_bits()];
            *index_of.entry(key).or_insert_with(|| {
                merged.push(*v);
                (merged.len() - 1) as u32
            })
        })
        .collect();
    let read = triangles.len();
    let mut kept = Vec::with_capacity(read);
    for t in triangles {
        let t = [remap[t[0]], remap[t[1]], remap[t[2]]];
        let [a, b, c] = t.map(|i| merged[i as usize]);
        if (b - a).cross(c - a).length() > 0.0 {
            kept.push(t);
        }
    }
    if kept.is_empty() {
        return Err(MeshError::Empty {
            file: file.to_string(),
            triangles: read,
        });
    }
    let report = MeshReport {
        degenerate_dropped: read - kept.len(),
    };
    Ok((
        TriMesh {
            vertices: merged,
            triangles: kept,
        },
        report,
    ))
}

impl TriMesh {
    /// The mesh scaled by `scale` about the origin, then rotated by `rot`,
    /// then moved by `pos` (the order a scene's `Mesh(scale, rot, pos)`
    /// applies them in).
    pub fn placed(&self, scale: f64, rot: DQuat, pos: DVec3) -> TriMesh {
        TriMesh {
            vertices: self
                .vertices
                .iter()
                .map(|v| pos + rot * (*v * scale))
                .collect(),
            triangles: self.triangles.clone(),
        }
    }

    /// The three corners of triangle `t`.
    pub fn corners(&self, t: usize) -> [DVec3; 3] {
        self.triangles[t].map(|i| self.vertices[i as usize])
    }

    /// Total area (m²).
    pub fn area(&self) -> f64 {
        (0..self.triangles.len())
            .map(|t| {
                let [a, b, c] = self.corners(t);
                0.5 * (b - a).cross(c - a).length()
            })
            .sum()
    }

    /// The axis-aligned bounds (min, max).
    pub fn bounds(&self) -> (DVec3, DVec3) {
        self.vertices.iter().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(lo, hi), v| (lo.min(*v), hi.max(*v)),
        )
    }

    /// Edges used by one triangle only (0 for a closed surface) and edges
    /// used by more than two (0 for a manifold one).
    pub fn open_edges(&self) -> (usize, usize) {
        let mut uses: HashMap<(u32, u32), usize> = HashMap::new();
        for t in &self.triangles {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                *uses.entry((a.min(b), a.max(b))).or_default() += 1;
            }
        }
        let open = uses.values().filter(|&&n| n == 1).count();
        let over = uses.values().filter(|&&n| n > 2).count();
        (open, over)
    }

    /// The enclosed volume of a closed mesh (m³; positive when the
    /// triangles wind counter-clockwise seen from outside), by the
    /// divergence theorem.
    pub fn signed_volume(&self) -> f64 {
        (0..self.triangles.len())
            .map(|t| {
                let [a, b, c] = self.corners(t);
                a.dot(b.cross(c)) / 6.0
            })
            .sum()
    }
}
