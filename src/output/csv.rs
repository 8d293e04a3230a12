//! Plain CSV tables: the final state of all bodies, and trajectories of a
//! few chosen bodies.
//!
//! Both files have one header line, then one row per record, fields
//! separated by commas, lines ended by `\n`. Numbers are printed as the
//! shortest text that parses back to the same bits ([`Num`]: plain decimals,
//! or an exponent where |x| < 10⁻⁵ or ≥ 10¹⁶, so a residual velocity of
//! 10⁻²¹⁰ m/s is `7.4e-210`, not two hundred zeros): two
//! runs that produce the same numbers produce byte-identical files, and
//! [`read_final_csv`] gives back exactly the values written. Open them with
//! any spreadsheet, `pandas.read_csv`, or the readers below (records split
//! by the `csv` crate, fields checked here).
//!
//! * `final.csv` ([`write_final_csv`]): header [`FINAL_CSV_HEADER`]
//!   (`id,x,y,z,vx,vy,vz,wx,wy,wz,radius,qw,qx,qy,qz,shape,material`), one row per
//!   body in id order; position (m; a body's centre of mass), velocity
//!   (m/s), angular velocity in the world frame (rad/s), radius (m; of the
//!   bounding ball for a body that is not a sphere), orientation as a unit
//!   quaternion body → world, and the shape's kind (`sphere`, `box`,
//!   `cylinder`, `capsule`, `ellipsoid`, `convex_polyhedron`; the
//!   dimensions are in `scene.ron`), and the material (its index in the
//!   scene's `materials`). Files of earlier versions, without the material
//!   ([`FINAL_CSV_HEADER_V2`]) or with the first eleven columns only
//!   ([`FINAL_CSV_HEADER_V1`]), are still read.
//! * `track.csv` ([`TrackWriter`]): header [`TRACK_CSV_HEADER`]
//!   (`time,id,x,y,z,vx,vy,vz,wx,wy,wz`), one row per tracked body per
//!   recorded time.

use super::bounded::{clip, LineLimit};
use std::fs;
use std::io::{self, Write};
use std::path::Path;

use crate::bodies::Bodies;

use super::rows::RowFile;
use super::{body_count, with_path, write_atomic, ReadError};

/// Header line of `final.csv`.
pub const FINAL_CSV_HEADER: &str = "id,x,y,z,vx,vy,vz,wx,wy,wz,radius,qw,qx,qy,qz,shape,material";

/// Header line of `final.csv` before materials were written (read, no
/// longer written).
pub const FINAL_CSV_HEADER_V2: &str = "id,x,y,z,vx,vy,vz,wx,wy,wz,radius,qw,qx,qy,qz,shape";

/// Header line of `final.csv` before orientations and shapes were written
/// (read, no longer written).
pub const FINAL_CSV_HEADER_V1: &str = "id,x,y,z,vx,vy,vz,wx,wy,wz,radius";

/// The shape names of `final.csv`'s last column.
const SHAPE_NAMES: [&str; 6] = [
    "sphere",
    "box",
    "cylinder",
    "capsule",
    "ellipsoid",
    "convex_polyhedron",
];

/// Header line of `track.csv`.
pub const TRACK_CSV_HEADER: &str = "time,id,x,y,z,vx,vy,vz,wx,wy,wz";

/// A number as the CSV files write it: the shortest text that parses back
/// to the same bits, in plain decimals where that is short (Rust's `{}`),
/// with an exponent (Rust's `{:e}`, also shortest) where |x| < 10⁻⁵ or
/// |x| ≥ 10¹⁶, whose plain form would run to hundreds of digits.
#[derive(Clone, Copy, Debug)]
pub struct Num(pub f64);

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let a = self.0.abs();
        if a.is_finite() && a != 0.0 && !(1e-5..1e16).contains(&a) {
            write!(f, "{:e}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

/// Writes the state fields of body `i` (`x,…,wz`), each preceded by a comma.
fn write_state(w: &mut impl Write, bodies: &Bodies, i: usize) -> io::Result<()> {
    let (p, v, o) = (bodies.pos[i], bodies.vel[i], bodies.omega[i]);
    for x in [p.x, p.y, p.z, v.x, v.y, v.z, o.x, o.y, o.z] {
        write!(w, ",{}", Num(x))?;
    }
    Ok(())
}

/// Writes the final state of all bodies as CSV (see the [module
/// docs](self)), atomically: the file is complete or absent/unchanged.
///
/// Errors: I/O failures (naming the file); `InvalidInput` when the per-body
/// vectors of `bodies` differ in length.
pub fn write_final_csv(path: impl AsRef<Path>, bodies: &Bodies) -> io::Result<()> {
    let n = body_count(bodies)?;
    write_atomic(path.as_ref(), |w| {
        writeln!(w, "{FINAL_CSV_HEADER}")?;
        for i in 0..n {
            write!(w, "{i}")?;
            write_state(w, bodies, i)?;
            let q = bodies.rot[i];
            let shape = bodies.shape_of(i).map_or("sphere", |s| s.shape.kind());
            for x in [bodies.radius[i], q.w, q.x, q.y, q.z] {
                write!(w, ",{}", Num(x))?;
            }
            writeln!(w, ",{shape},{}", bodies.material[i])?;
        }
        Ok(())
    })
}

/// Reads a numeric CSV table with exactly the given header and `N` columns.
fn read_table<const N: usize>(path: &Path, header: &str) -> Result<Vec<[f64; N]>, ReadError> {
    read_table_with(path, &[header], |_, _| Ok(()))
        .map(|(_, rows)| rows.into_iter().map(|(r, _)| r).collect())
}

/// Reads a CSV table whose header is one of `headers` (the index of the one
/// found is returned): its first `N` columns numbers, and, when the header
/// has more, the rest checked as text by `extra(line, fields)`.
#[allow(clippy::type_complexity)]
fn read_table_with<const N: usize>(
    path: &Path,
    headers: &[&str],
    extra: impl Fn(usize, &[&str]) -> Result<(), String>,
) -> Result<(usize, Vec<([f64; N], Vec<String>)>), ReadError> {
    let file = fs::File::open(path).map_err(|err| ReadError::Io {
        path: path.to_owned(),
        err,
    })?;
    let format = |line: usize, reason: String| ReadError::Format {
        path: path.to_owned(),
        line,
        reason,
    };
    // The `csv` crate splits records (`\n` or `\r\n`, empty lines skipped,
    // RFC 4180 quotes) as it streams the file through a line-length bound
    // (a file with no line breaks is refused after 64 KiB, not read whole);
    // the field counts and numbers are checked here, and what an error
    // quotes of the file is clipped.
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(LineLimit::new(io::BufReader::new(file)));
    let mut records = reader.records();
    let line_of = |r: &::csv::StringRecord| r.position().map_or(0, |p| p.line() as usize);
    let csv_error = |e: ::csv::Error| {
        let line = e.position().map_or(0, |p| p.line() as usize);
        format(line, e.to_string())
    };
    let found = match records.next() {
        Some(h) => {
            let h = h.map_err(csv_error)?;
            let h: Vec<&str> = h.iter().collect();
            let h = h.join(",");
            headers.iter().position(|x| h == *x).ok_or_else(|| {
                format(
                    1,
                    format!("header is {:?}, expected {:?}", clip(&h), headers[0]),
                )
            })?
        }
        None => {
            return Err(format(
                1,
                format!("empty file, expected header {:?}", headers[0]),
            ))
        }
    };
    let columns: Vec<&str> = headers[found].split(',').collect();
    let width = columns.len();
    debug_assert!(width >= N);
    let mut rows = Vec::new();
    for record in records {
        let record = record.map_err(csv_error)?;
        let line = line_of(&record);
        let fields: Vec<&str> = record.iter().collect();
        if fields.len() != width {
            return Err(format(
                line,
                match columns.get(fields.len()) {
                    Some(missing) if fields.len() < width => {
                        format!(
                            "{} fields, expected {width} (missing `{missing}`)",
                            fields.len()
                        )
                    }
                    _ => format!("{} fields, expected {width}", fields.len()),
                },
            ));
        }
        let mut row = [0.0; N];
        for (c, slot) in row.iter_mut().enumerate() {
            let field = fields[c];
            *slot = field.trim().parse().map_err(|e| {
                format(
                    line,
                    format!(
                        "column `{}`: {:?} is not a number ({e})",
                        columns[c],
                        clip(field)
                    ),
                )
            })?;
        }
        let rest = &fields[N..];
        extra(line, rest).map_err(|reason| format(line, reason))?;
        rows.push((row, rest.iter().map(|f| f.trim().to_owned()).collect()));
    }
    Ok((found, rows))
}

/// Reads a `final.csv` written by [`write_final_csv`] (or by an earlier
/// version, [`FINAL_CSV_HEADER_V1`]): one
/// `[id, x, y, z, vx, vy, vz, wx, wy, wz, radius]` per row, in file order,
/// bit-for-bit the values that were written.
///
/// Errors name the file and, for contents, the line and column: a missing
/// or different header, a row without exactly as many fields as the
/// header, a field that is not a number, an unknown shape name. Empty lines
/// are skipped; `\r\n` line ends are accepted.
pub fn read_final_csv(path: impl AsRef<Path>) -> Result<Vec<[f64; 11]>, ReadError> {
    read_final_csv_full(path).map(|rows| rows.into_iter().map(|r| r.state).collect())
}

/// One row of `final.csv` with everything it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct FinalRow {
    /// `[id, x, y, z, vx, vy, vz, wx, wy, wz, radius]`.
    pub state: [f64; 11],
    /// Orientation (w, x, y, z); the identity in files of earlier versions.
    pub orientation: [f64; 4],
    /// The shape's kind; `sphere` in files of earlier versions.
    pub shape: String,
    /// The material's index; `None` in files of earlier versions.
    pub material: Option<u32>,
}

/// Reads a `final.csv` as [`read_final_csv`] does, with the orientation and
/// shape columns (the defaults for a file of an earlier version).
pub fn read_final_csv_full(path: impl AsRef<Path>) -> Result<Vec<FinalRow>, ReadError> {
    let quaternion = |rest: &[&str]| -> Result<[f64; 4], String> {
        let mut q = [0.0; 4];
        for (k, (slot, name)) in q.iter_mut().zip(["qw", "qx", "qy", "qz"]).enumerate() {
            let field = rest[k];
            *slot = field
                .trim()
                .parse()
                .map_err(|e| format!("column `{name}`: {:?} is not a number ({e})", clip(field)))?;
        }
        Ok(q)
    };
    // Rows of the current header have six more fields than the first
    // version's, the second version's five.
    let material = |field: &str| -> Result<u32, String> {
        field.trim().parse().map_err(|_| {
            format!(
                "column `material`: {:?} is not a material index",
                clip(field)
            )
        })
    };
    let (_, rows) = read_table_with::<11>(
        path.as_ref(),
        &[FINAL_CSV_HEADER, FINAL_CSV_HEADER_V2, FINAL_CSV_HEADER_V1],
        |_, rest: &[&str]| {
            if rest.is_empty() {
                return Ok(());
            }
            quaternion(rest)?;
            let shape = rest[4].trim();
            if !SHAPE_NAMES.contains(&shape) {
                return Err(format!(
                    "column `shape`: {:?} is not one of {}",
                    clip(shape),
                    SHAPE_NAMES.join(", ")
                ));
            }
            match rest.get(5) {
                Some(m) => material(m).map(|_| ()),
                None => Ok(()),
            }
        },
    )?;
    Ok(rows
        .into_iter()
        .map(|(state, rest)| {
            let fields: Vec<&str> = rest.iter().map(String::as_str).collect();
            match fields.as_slice() {
                [] => FinalRow {
                    state,
                    orientation: [1.0, 0.0, 0.0, 0.0],
                    shape: "sphere".into(),
                    material: None,
                },
                _ => FinalRow {
                    state,
                    orientation: quaternion(&fields).expect("checked while reading"),
                    shape: rest[4].clone(),
                    material: fields
                        .get(5)
                        .map(|m| material(m).expect("checked while reading")),
                },
            }
        })
        .collect())
}

/// Reads a `track.csv` written by [`TrackWriter`]: one
/// `[time, id, x, y, z, vx, vy, vz, wx, wy, wz]` per row, in file order.
/// Errors as for [`read_final_csv`].
pub fn read_track_csv(path: impl AsRef<Path>) -> Result<Vec<[f64; 11]>, ReadError> {
    read_table(path.as_ref(), TRACK_CSV_HEADER)
}

/// Appends the trajectories of chosen bodies to a `track.csv` as the run
/// goes, whole records at a time.
///
/// Rows are written when 64 KiB of them are pending, by
/// [`finish`](Self::finish) (which reports errors), by
/// [`flush`](Self::flush), and on drop (where an error can only be logged).
/// Unlike the other writers of this module the file is not written
/// atomically: a process killed at any moment leaves it ending on a row
/// boundary, without the rows still pending.
#[derive(Debug)]
pub struct TrackWriter {
    ids: Vec<usize>,
    file: RowFile,
}

impl TrackWriter {
    /// Creates (or truncates) the file at `path`, writes the header, and
    /// remembers which body ids to record, in the given order (duplicates
    /// are recorded twice).
    pub fn create(path: impl AsRef<Path>, ids: &[usize]) -> io::Result<Self> {
        Ok(TrackWriter {
            ids: ids.to_vec(),
            file: RowFile::create(path.as_ref(), TRACK_CSV_HEADER)?,
        })
    }

    /// Takes up a `track.csv` that an earlier process wrote, cut back to
    /// its first `len` bytes (a length [`flushed_len`](Self::flushed_len)
    /// gave at a checkpoint): rows written after that are removed, and new
    /// rows are appended.
    ///
    /// Errors: `InvalidData` when the file is shorter than `len` (it is not
    /// the file the checkpoint saw); I/O failures.
    pub fn reopen(path: impl AsRef<Path>, ids: &[usize], len: u64) -> io::Result<Self> {
        use std::io::{Seek, SeekFrom};
        let path = path.as_ref().to_owned();
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| with_path(&path, e))?;
        let found = file.metadata().map_err(|e| with_path(&path, e))?.len();
        if found < len {
            return Err(with_path(
                &path,
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{found} bytes, but the checkpoint saw {len}: not the same file"),
                ),
            ));
        }
        file.set_len(len)
            .and_then(|_| file.seek(SeekFrom::End(0)).map(drop))
            .map_err(|e| with_path(&path, e))?;
        Ok(TrackWriter {
            ids: ids.to_vec(),
            file: RowFile::on(path, file),
        })
    }

    /// Writes the pending rows and returns the file's length: what
    /// [`reopen`](Self::reopen) cuts back to.
    pub fn flushed_len(&mut self) -> io::Result<u64> {
        self.file.flushed_len()
    }

    /// The tracked body ids.
    pub fn ids(&self) -> &[usize] {
        &self.ids
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Appends one row `time,id,x,y,z,vx,vy,vz,wx,wy,wz` per tracked id.
    ///
    /// A tracked id that does not exist (yet) in `bodies` — with an inlet,
    /// bodies appear during the run — gets no row at this time.
    /// Errors: I/O failures (naming the file); `InvalidInput` when the
    /// per-body vectors of `bodies` differ in length.
    pub fn record(&mut self, time: f64, bodies: &Bodies) -> io::Result<()> {
        let n = body_count(bodies)?;
        let out = self.file.rows()?;
        for &id in self.ids.iter().filter(|&&id| id < n) {
            write!(out, "{},{id}", Num(time))?;
            write_state(out, bodies, id)?;
            writeln!(out)?;
        }
        self.file.end_record()
    }

    /// Writes the pending rows to the file (whole records, one write).
    pub fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }

    /// Writes the pending rows and closes the file, reporting any error.
    pub fn finish(mut self) -> io::Result<()> {
        self.file.finish()
    }
}
