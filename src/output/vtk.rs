//! VTK XML output for ParaView: one `.vtu` file per frame and a `.pvd`
//! collection that strings the frames into a time series.
//!
//! Each `.vtu` is an *UnstructuredGrid* with one point per sphere (at its
//! centre) and one `VTK_VERTEX` cell per point, so that ParaView draws the
//! points without further filters. Point data arrays:
//!
//! | name | type | components | meaning |
//! | --- | --- | --- | --- |
//! | `id` | Int32 | 1 | body id (index into [`Bodies`]) |
//! | `radius` | Float64 | 1 | sphere radius (m) |
//! | `velocity` | Float64 | 3 | linear velocity (m/s) |
//! | `angular_velocity` | Float64 | 3 | angular velocity, world frame (rad/s) |
//! | `speed` | Float64 | 1 | ‖velocity‖ (m/s) |
//! | `material` | Int32 | 1 | index into the scene's materials table |
//! | `orientation` | Float64 | 4 | unit quaternion body → world, components (w, x, y, z) |
//!
//! The frame's physical time is also stored as the field-data array
//! `TimeValue`, so a single `.vtu` opened on its own still knows its time.
//!
//! Bodies that are not spheres also get a second series of *surfaces*
//! ([`write_surfaces_vtu`]): each body's triangulated surface
//! ([`crate::shape::BodyShape::mesh`]) placed and turned as the body is,
//! as `VTK_TRIANGLE` cells with cell data `id`, `material`, `velocity` and
//! `speed`; `repose run` writes it as `bodies.pvd` beside `frames.pvd`.
//!
//! Mesh boundaries get a third series ([`write_walls_vtu`], `walls.pvd`):
//! their triangles placed and turned as the boundary is, cell data
//! `boundary` and `material`, point data `velocity` (the surface's). A
//! scene whose meshes never move writes it once, with the first frame
//! (ParaView shows a one-frame series at every time).
//!
//! Arrays are written inline as `format="binary"`: little-endian Float64 /
//! Int32 / Int64 / UInt8 values preceded by a UInt64 byte count
//! (`header_type="UInt64"`), the pair base64-encoded as one stream, no
//! compression.
//!
//! **Opening in ParaView:** File → Open the `.pvd` (not the single frames),
//! Apply, then press Play. To see spheres rather than points, apply
//! Filters → Glyph with glyph type *Sphere*, *Scale Array* `radius` and scale
//! factor 2 (the glyph source has radius 0.5), colour by `speed`.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::bodies::Bodies;
use crate::boundary::{Boundary, Shape};

use super::base64::Base64Writer;
use super::{body_count, write_atomic};

/// The VTK cell type number of a single vertex.
const VTK_VERTEX: u8 = 1;

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Writes one inline binary `DataArray` element: the opening tag, the base64
/// of (UInt64 byte count, values), the closing tag. `values` must write
/// exactly `n_bytes` bytes; anything else is an error (a bug, not bad input).
pub(super) fn data_array<W, F>(
    w: &mut W,
    ty: &str,
    name: &str,
    components: &[&str],
    n_bytes: usize,
    values: F,
) -> io::Result<()>
where
    W: Write,
    F: FnOnce(&mut Base64Writer<'_, W>) -> io::Result<()>,
{
    write!(w, "        <DataArray type=\"{ty}\" Name=\"{name}\"")?;
    if components.len() > 1 {
        write!(w, " NumberOfComponents=\"{}\"", components.len())?;
        for (k, c) in components.iter().enumerate() {
            if !c.is_empty() {
                write!(w, " ComponentName{k}=\"{c}\"")?;
            }
        }
    }
    write!(w, " format=\"binary\">")?;
    let mut enc = Base64Writer::new(w);
    enc.write_all(&(n_bytes as u64).to_le_bytes())?;
    values(&mut enc)?;
    let written = enc.bytes_in();
    enc.finish()?;
    if written != 8 + n_bytes as u64 {
        return Err(io::Error::other(format!(
            "internal error: DataArray {name} announced {n_bytes} bytes but wrote {}",
            written - 8
        )));
    }
    writeln!(w, "</DataArray>")
}

/// Writes `v` little-endian.
pub(super) fn put_f64(w: &mut impl Write, v: f64) -> io::Result<()> {
    w.write_all(&v.to_le_bytes())
}

/// Writes the VTU document for `bodies` at `time` into `w`.
/// The checks every frame file makes: a finite time, ids and material
/// indices that fit Int32. Returns the body count.
fn check_frame(bodies: &Bodies, time: f64) -> io::Result<usize> {
    let n = body_count(bodies)?;
    if !time.is_finite() {
        return Err(invalid(format!("frame time {time} is not finite")));
    }
    if i32::try_from(n).is_err() {
        return Err(invalid(format!(
            "{n} bodies do not fit the Int32 `id` array of a .vtu file"
        )));
    }
    if let Some(m) = bodies.material.iter().find(|&&m| i32::try_from(m).is_err()) {
        return Err(invalid(format!(
            "material index {m} does not fit the Int32 `material` array of a .vtu file"
        )));
    }
    Ok(n)
}

fn write_vtu_to<W: Write>(w: &mut W, bodies: &Bodies, time: f64) -> io::Result<()> {
    let n = check_frame(bodies, time)?;
    let f = 8; // bytes per Float64
    begin_piece(w, time, n, n)?;
    writeln!(
        w,
        "      <PointData Scalars=\"radius\" Vectors=\"velocity\">"
    )?;
    data_array(w, "Int32", "id", &[], 4 * n, |e| {
        (0..n as i32).try_for_each(|i| e.write_all(&i.to_le_bytes()))
    })?;
    data_array(w, "Float64", "radius", &[], f * n, |e| {
        bodies.radius.iter().try_for_each(|&r| put_f64(e, r))
    })?;
    data_array(w, "Float64", "velocity", &["", "", ""], 3 * f * n, |e| {
        bodies
            .vel
            .iter()
            .try_for_each(|v| v.to_array().iter().try_for_each(|&x| put_f64(e, x)))
    })?;
    data_array(
        w,
        "Float64",
        "angular_velocity",
        &["", "", ""],
        3 * f * n,
        |e| {
            bodies
                .omega
                .iter()
                .try_for_each(|v| v.to_array().iter().try_for_each(|&x| put_f64(e, x)))
        },
    )?;
    data_array(w, "Float64", "speed", &[], f * n, |e| {
        bodies.vel.iter().try_for_each(|v| put_f64(e, v.length()))
    })?;
    data_array(w, "Int32", "material", &[], 4 * n, |e| {
        // Checked above: every index fits in i32.
        bodies
            .material
            .iter()
            .try_for_each(|&m| e.write_all(&(m as i32).to_le_bytes()))
    })?;
    data_array(
        w,
        "Float64",
        "orientation",
        &["w", "x", "y", "z"],
        4 * f * n,
        |e| {
            bodies
                .rot
                .iter()
                .try_for_each(|q| [q.w, q.x, q.y, q.z].iter().try_for_each(|&x| put_f64(e, x)))
        },
    )?;
    writeln!(w, "      </PointData>")?;
    writeln!(w, "      <Points>")?;
    data_array(w, "Float64", "position", &["", "", ""], 3 * f * n, |e| {
        bodies
            .pos
            .iter()
            .try_for_each(|p| p.to_array().iter().try_for_each(|&x| put_f64(e, x)))
    })?;
    writeln!(w, "      </Points>")?;
    writeln!(w, "      <Cells>")?;
    data_array(w, "Int64", "connectivity", &[], 8 * n, |e| {
        (0..n as i64).try_for_each(|i| e.write_all(&i.to_le_bytes()))
    })?;
    data_array(w, "Int64", "offsets", &[], 8 * n, |e| {
        (1..=n as i64).try_for_each(|i| e.write_all(&i.to_le_bytes()))
    })?;
    data_array(w, "UInt8", "types", &[], n, |e| {
        const CHUNK: [u8; 1024] = [VTK_VERTEX; 1024];
        let mut left = n;
        while left > 0 {
            let k = left.min(CHUNK.len());
            e.write_all(&CHUNK[..k])?;
            left -= k;
        }
        Ok(())
    })?;
    writeln!(w, "      </Cells>")?;
    end_piece(w)
}

/// The document's opening up to its one `<Piece>` tag: the XML header, the
/// frame's time as field data `TimeValue`.
pub(super) fn begin_piece<W: Write>(
    w: &mut W,
    time: f64,
    points: usize,
    cells: usize,
) -> io::Result<()> {
    writeln!(w, "<?xml version=\"1.0\"?>")?;
    writeln!(
        w,
        "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">"
    )?;
    writeln!(w, "  <UnstructuredGrid>")?;
    writeln!(w, "    <FieldData>")?;
    writeln!(
        w,
        "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" format=\"ascii\">{time}</DataArray>"
    )?;
    writeln!(w, "    </FieldData>")?;
    writeln!(
        w,
        "    <Piece NumberOfPoints=\"{points}\" NumberOfCells=\"{cells}\">"
    )
}

/// Closes what [`begin_piece`] opened.
pub(super) fn end_piece<W: Write>(w: &mut W) -> io::Result<()> {
    writeln!(w, "    </Piece>")?;
    writeln!(w, "  </UnstructuredGrid>")?;
    writeln!(w, "</VTKFile>")
}

/// The VTK cell type number of a triangle.
const VTK_TRIANGLE: u8 = 5;

/// One placed triangle set of a surface frame: vertices (own frame),
/// triangles, and the position and turn that place them.
type Part<'a> = (&'a [glam::DVec3], &'a [[u32; 3]], glam::DVec3, glam::DQuat);

/// Writes the `<Points>` (each part's vertices placed) and `<Cells>` (its
/// triangles, indices shifted past the earlier parts' vertices) of a
/// surface frame.
fn write_parts<W: Write>(w: &mut W, parts: &[Part]) -> io::Result<()> {
    let points: usize = parts.iter().map(|p| p.0.len()).sum();
    let cells: usize = parts.iter().map(|p| p.1.len()).sum();
    writeln!(w, "      <Points>")?;
    data_array(
        w,
        "Float64",
        "position",
        &["", "", ""],
        3 * 8 * points,
        |e| {
            parts.iter().try_for_each(|(vertices, _, x, q)| {
                vertices.iter().try_for_each(|v| {
                    (*x + *q * *v)
                        .to_array()
                        .iter()
                        .try_for_each(|&c| put_f64(e, c))
                })
            })
        },
    )?;
    writeln!(w, "      </Points>")?;
    writeln!(w, "      <Cells>")?;
    data_array(w, "Int64", "connectivity", &[], 3 * 8 * cells, |e| {
        let mut base = 0i64;
        parts.iter().try_for_each(|(vertices, triangles, _, _)| {
            triangles
                .iter()
                .flatten()
                .try_for_each(|&k| e.write_all(&(base + i64::from(k)).to_le_bytes()))?;
            base += vertices.len() as i64;
            Ok(())
        })
    })?;
    data_array(w, "Int64", "offsets", &[], 8 * cells, |e| {
        (1..=cells as i64).try_for_each(|c| e.write_all(&(3 * c).to_le_bytes()))
    })?;
    data_array(w, "UInt8", "types", &[], cells, |e| {
        (0..cells).try_for_each(|_| e.write_all(&[VTK_TRIANGLE]))
    })?;
    writeln!(w, "      </Cells>")
}

/// Writes the surfaces of the bodies that are not spheres (see
/// [`write_surfaces_vtu`]) into `w`.
fn write_surfaces_to<W: Write>(w: &mut W, bodies: &Bodies, time: f64) -> io::Result<()> {
    let n = check_frame(bodies, time)?;
    let shaped: Vec<(usize, &crate::shape::Mesh)> = (0..n)
        .filter_map(|i| bodies.shape_of(i).map(|s| (i, s.mesh())))
        .collect();
    let points: usize = shaped.iter().map(|(_, m)| m.vertices.len()).sum();
    let cells: usize = shaped.iter().map(|(_, m)| m.triangles.len()).sum();
    let per_cell = |f: &mut dyn FnMut(usize) -> io::Result<()>| -> io::Result<()> {
        for (i, m) in &shaped {
            for _ in &m.triangles {
                f(*i)?;
            }
        }
        Ok(())
    };
    let f = 8;
    begin_piece(w, time, points, cells)?;
    writeln!(w, "      <CellData Scalars=\"id\" Vectors=\"velocity\">")?;
    data_array(w, "Int32", "id", &[], 4 * cells, |e| {
        per_cell(&mut |i| e.write_all(&(i as i32).to_le_bytes()))
    })?;
    data_array(w, "Int32", "material", &[], 4 * cells, |e| {
        per_cell(&mut |i| e.write_all(&(bodies.material[i] as i32).to_le_bytes()))
    })?;
    data_array(
        w,
        "Float64",
        "velocity",
        &["", "", ""],
        3 * f * cells,
        |e| {
            per_cell(&mut |i| {
                bodies.vel[i]
                    .to_array()
                    .iter()
                    .try_for_each(|&x| put_f64(e, x))
            })
        },
    )?;
    data_array(w, "Float64", "speed", &[], f * cells, |e| {
        per_cell(&mut |i| put_f64(e, bodies.vel[i].length()))
    })?;
    writeln!(w, "      </CellData>")?;
    let parts: Vec<Part> = shaped
        .iter()
        .map(|(i, m)| {
            (
                &m.vertices[..],
                &m.triangles[..],
                bodies.pos[*i],
                bodies.rot[*i],
            )
        })
        .collect();
    write_parts(w, &parts)?;
    end_piece(w)
}

/// Writes the triangulated surfaces of the bodies that are not spheres
/// (each placed and turned as the body is, [`crate::shape::BodyShape::mesh`])
/// at time `time` as a `.vtu` of triangle cells, atomically. Cell data:
/// `id` (the body), `material`, `velocity`, `speed`. Spheres are the points
/// of the frames written by [`write_vtu`].
///
/// Errors: as for [`write_vtu`].
pub fn write_surfaces_vtu(path: impl AsRef<Path>, bodies: &Bodies, time: f64) -> io::Result<()> {
    write_atomic(path.as_ref(), |w| write_surfaces_to(w, bodies, time))
}

/// Writes the mesh boundaries among `boundaries` (each placed and turned as
/// it is at time `time`) as a `.vtu` of triangle cells, atomically. Cell
/// data: `boundary` (its index in the scene's `boundaries`) and `material`;
/// point data: `velocity`, the surface's velocity there (m/s). Other
/// boundaries (planes, boxes, cylinders, plates) are not drawn.
///
/// Errors: as for [`write_vtu`].
pub fn write_walls_vtu(
    path: impl AsRef<Path>,
    boundaries: &[Boundary],
    time: f64,
) -> io::Result<()> {
    write_atomic(path.as_ref(), |w| write_walls_to(w, boundaries, time))
}

fn write_walls_to<W: Write>(w: &mut W, boundaries: &[Boundary], time: f64) -> io::Result<()> {
    if !time.is_finite() {
        return Err(invalid(format!("frame time {time} is not finite")));
    }
    let meshes: Vec<(usize, &Boundary, &crate::mesh::TriMesh, glam::DQuat)> = boundaries
        .iter()
        .enumerate()
        .filter_map(|(i, b)| match &b.shape {
            Shape::Mesh { surface, rot } => Some((i, b, &surface.mesh, *rot)),
            _ => None,
        })
        .collect();
    let points: usize = meshes.iter().map(|m| m.2.vertices.len()).sum();
    let cells: usize = meshes.iter().map(|m| m.2.triangles.len()).sum();
    let per_cell = |f: &mut dyn FnMut(usize, &Boundary) -> io::Result<()>| -> io::Result<()> {
        meshes
            .iter()
            .try_for_each(|(i, b, m, _)| m.triangles.iter().try_for_each(|_| f(*i, b)))
    };
    let placed = |f: &mut dyn FnMut(&Boundary, glam::DVec3) -> io::Result<()>| -> io::Result<()> {
        meshes.iter().try_for_each(|(_, b, m, q)| {
            m.vertices.iter().try_for_each(|v| f(b, b.origin + *q * *v))
        })
    };
    let f = 8;
    begin_piece(w, time, points, cells)?;
    writeln!(w, "      <CellData Scalars=\"boundary\">")?;
    data_array(w, "Int32", "boundary", &[], 4 * cells, |e| {
        per_cell(&mut |i, _| e.write_all(&(i as i32).to_le_bytes()))
    })?;
    data_array(w, "Int32", "material", &[], 4 * cells, |e| {
        per_cell(&mut |_, b| e.write_all(&(b.material as i32).to_le_bytes()))
    })?;
    writeln!(w, "      </CellData>")?;
    writeln!(w, "      <PointData Vectors=\"velocity\">")?;
    data_array(
        w,
        "Float64",
        "velocity",
        &["", "", ""],
        3 * f * points,
        |e| {
            placed(&mut |b, x| {
                b.surface_velocity(x, time)
                    .to_array()
                    .iter()
                    .try_for_each(|&c| put_f64(e, c))
            })
        },
    )?;
    writeln!(w, "      </PointData>")?;
    let parts: Vec<Part> = meshes
        .iter()
        .map(|(_, b, m, q)| (&m.vertices[..], &m.triangles[..], b.origin, *q))
        .collect();
    write_parts(w, &parts)?;
    end_piece(w)
}

/// Writes all `bodies` at physical time `time` (s) as a VTK XML
/// UnstructuredGrid file (`.vtu`), atomically (see the [module
/// docs](super)). The layout is described in the [module docs](self).
///
/// Errors: I/O failures (naming the file); `InvalidInput` when `time` is not
/// finite, when the per-body vectors of `bodies` differ in length, or when
/// an id or material index does not fit in Int32.
pub fn write_vtu(path: impl AsRef<Path>, bodies: &Bodies, time: f64) -> io::Result<()> {
    write_atomic(path.as_ref(), |w| write_vtu_to(w, bodies, time))
}

/// A time series of `.vtu` frames and the `.pvd` collection file that lists
/// them, in one directory.
///
/// Frames are named `frame_00000.vtu`, `frame_00001.vtu`, … (five digits,
/// more once past 99999) and referred to from `<basename>.pvd` by file name
/// only, so the directory can be moved as a whole. The `.pvd` is rewritten
/// atomically after every frame (and once, empty, by [`PvdSeries::new`]), so
/// at any moment it is a valid collection of complete frames: a run that
/// stops early, even with an error, leaves a series ParaView can open.
#[derive(Clone, Debug)]
pub struct PvdSeries {
    dir: PathBuf,
    basename: String,
    /// Frame files are `<prefix>_NNNNN.vtu`.
    prefix: String,
    frames: Vec<(f64, String)>,
    /// The collection file's length: each frame overwrites the closing tags
    /// at its end with its entry plus the closing tags, in one write, so the
    /// cost per frame does not grow with the frame count and the file is
    /// whole after every frame.
    pvd_len: u64,
}

/// The closing tags of a collection file.
const PVD_TAIL: &str = "  </Collection>\n</VTKFile>\n";

impl PvdSeries {
    /// Starts a series in `dir` (created if missing) whose collection file
    /// is `<dir>/<basename>.pvd`; writes that file with no frames yet. An
    /// existing `.pvd` of the same name is replaced; old frame files in the
    /// directory are overwritten as new frames are added.
    ///
    /// Errors: `InvalidInput` when `basename` is empty or contains a path
    /// separator; I/O failures.
    pub fn new(dir: impl Into<PathBuf>, basename: &str) -> io::Result<Self> {
        Self::new_prefixed(dir, basename, "frame")
    }

    /// As [`PvdSeries::new`], with frame files named `<prefix>_NNNNN.vtu`
    /// (`frames.pvd` holds `frame_…`, `bodies.pvd` `bodies_…`).
    pub fn new_prefixed(dir: impl Into<PathBuf>, basename: &str, prefix: &str) -> io::Result<Self> {
        let mut series = PvdSeries::new_unwritten(dir.into(), basename, prefix)?;
        series.rewrite_pvd()?;
        Ok(series)
    }

    /// Takes up a series that an earlier process started in `dir`, as it
    /// was when it held exactly `frames` (a checkpoint's list): the
    /// collection file is rewritten (atomically) with those frames, and
    /// frame files written after them (`frame_NNNNN.vtu` numbered from
    /// `frames.len()` on, the per-frame CSV files of the same numbers, and
    /// temporaries) are removed, so the next [`add_frame`](Self::add_frame)
    /// continues the numbering.
    ///
    /// Errors: `InvalidInput` for a bad basename or a listed frame whose
    /// file is missing; I/O failures.
    pub fn reopen(
        dir: impl Into<PathBuf>,
        basename: &str,
        frames: Vec<(f64, String)>,
    ) -> io::Result<Self> {
        Self::reopen_prefixed(dir, basename, "frame", frames)
    }

    /// As [`PvdSeries::reopen`] for a series made by
    /// [`PvdSeries::new_prefixed`]: `frames` are named with `prefix`.
    pub fn reopen_prefixed(
        dir: impl Into<PathBuf>,
        basename: &str,
        prefix: &str,
        frames: Vec<(f64, String)>,
    ) -> io::Result<Self> {
        let mut series = PvdSeries::new_unwritten(dir.into(), basename, prefix)?;
        if let Some((_, missing)) = frames
            .iter()
            .find(|(_, name)| !series.dir.join(name).is_file())
        {
            return Err(invalid(format!(
                "{}: frame {missing} of the series is missing",
                series.dir.display()
            )));
        }
        let kept = frames.len();
        let stale: Vec<PathBuf> = fs::read_dir(&series.dir)
            .map_err(|e| super::with_path(&series.dir, e))?
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let index = name
                    .strip_prefix(series.prefix.as_str())?
                    .strip_prefix('_')?;
                let index = [".vtu", ".vtu.tmp", ".csv", ".csv.tmp"]
                    .iter()
                    .find_map(|ext| index.strip_suffix(ext))?;
                let later = index.parse::<usize>().ok()? >= kept || name.ends_with(".tmp");
                later.then(|| e.path())
            })
            .collect();
        for p in stale {
            fs::remove_file(&p).map_err(|e| super::with_path(&p, e))?;
        }
        series.frames = frames;
        series.rewrite_pvd()?;
        Ok(series)
    }

    /// Writes the whole collection file for the frames held (atomically)
    /// and records its length for [`append_entry`](Self::append_entry).
    fn rewrite_pvd(&mut self) -> io::Result<()> {
        self.write_pvd(&self.frames)?;
        let path = self.pvd_path();
        self.pvd_len = fs::metadata(&path)
            .map_err(|e| super::with_path(&path, e))?
            .len();
        Ok(())
    }

    /// The series value with no file written: checks the basename and
    /// creates the directory.
    fn new_unwritten(dir: PathBuf, basename: &str, prefix: &str) -> io::Result<Self> {
        if basename.is_empty() || basename.contains(['/', '\\']) || basename == ".." {
            return Err(invalid(format!(
                "series basename {basename:?} must be a plain, non-empty file name"
            )));
        }
        fs::create_dir_all(&dir).map_err(|e| super::with_path(&dir, e))?;
        Ok(PvdSeries {
            dir,
            basename: basename.to_owned(),
            prefix: prefix.to_owned(),
            frames: Vec::new(),
            pvd_len: 0,
        })
    }

    /// Writes `bodies` at physical time `time` (s) as the next frame and
    /// rewrites the `.pvd` to include it; returns the frame's path.
    ///
    /// Times must be finite and strictly increasing from frame to frame
    /// (ParaView orders and picks frames by them); otherwise this is an
    /// `InvalidInput` error and nothing is written. When writing fails, the
    /// series on disk and in memory stays as it was before the call.
    pub fn add_frame(&mut self, bodies: &Bodies, time: f64) -> io::Result<PathBuf> {
        self.add_frame_by(time, |path| write_vtu(path, bodies, time))
    }

    /// As [`add_frame`](Self::add_frame), with the frame file written by
    /// `write` (given its path; e.g. [`write_surfaces_vtu`]).
    pub fn add_frame_by(
        &mut self,
        time: f64,
        write: impl FnOnce(&Path) -> io::Result<()>,
    ) -> io::Result<PathBuf> {
        if !time.is_finite() {
            return Err(invalid(format!("frame time {time} is not finite")));
        }
        if let Some(&(last, _)) = self.frames.last() {
            if time <= last {
                return Err(invalid(format!(
                    "frame time {time} is not after the previous frame's time {last}"
                )));
            }
        }
        let name = format!("{}_{:05}.vtu", self.prefix, self.frames.len());
        let path = self.dir.join(&name);
        write(&path)?;
        self.append_entry(time, &name)?;
        self.frames.push((time, name));
        Ok(path)
    }

    /// Path of the collection file, `<dir>/<basename>.pvd`.
    pub fn pvd_path(&self) -> PathBuf {
        self.dir.join(format!("{}.pvd", self.basename))
    }

    /// The directory the series is written to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The frames written so far: (physical time, file name within
    /// [`dir`](Self::dir)), in order.
    pub fn frames(&self) -> &[(f64, String)] {
        &self.frames
    }

    /// Number of frames written so far.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// True when no frame has been written yet.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Overwrites the closing tags with the frame's entry and the closing
    /// tags (one write); on failure puts the old end back.
    fn append_entry(&mut self, time: f64, file: &str) -> io::Result<()> {
        use std::io::{Seek, SeekFrom};
        let path = self.pvd_path();
        let at = self.pvd_len - PVD_TAIL.len() as u64;
        let text = format!("{}{PVD_TAIL}", pvd_entry(time, file));
        let mut f = fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| super::with_path(&path, e))?;
        let result = f
            .seek(SeekFrom::Start(at))
            .and_then(|_| f.write_all(text.as_bytes()));
        match result {
            Ok(()) => {
                self.pvd_len = at + text.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Best effort: the old length and closing tags.
                let _ = f.set_len(at).and_then(|_| {
                    f.seek(SeekFrom::Start(at))?;
                    f.write_all(PVD_TAIL.as_bytes())
                });
                Err(super::with_path(&path, e))
            }
        }
    }

    fn write_pvd(&self, frames: &[(f64, String)]) -> io::Result<()> {
        write_atomic(&self.pvd_path(), |w| {
            writeln!(w, "<?xml version=\"1.0\"?>")?;
            writeln!(
                w,
                "<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">"
            )?;
            writeln!(w, "  <Collection>")?;
            for (t, file) in frames {
                write!(w, "{}", pvd_entry(*t, file))?;
            }
            write!(w, "{PVD_TAIL}")
        })
    }
}

/// One `<DataSet …/>` line of a collection file.
fn pvd_entry(time: f64, file: &str) -> String {
    format!("    <DataSet timestep=\"{time}\" group=\"\" part=\"0\" file=\"{file}\"/>\n")
}
