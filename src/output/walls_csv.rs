//! `walls.csv`: every boundary's mean load over each step
//! ([`crate::wall_loads`]), one row per boundary and step, appended as the
//! run goes.
//!
//! | column | unit | what |
//! |---|---|---|
//! | `step` | | the step's index, 1 = the first |
//! | `time` | s | the time at the end of the step |
//! | `boundary` | | the boundary's name (its index when unnamed) |
//! | `fx`, `fy`, `fz` | N | mean force of the bodies on the boundary |
//! | `tx`, `ty`, `tz` | N m | mean torque of the bodies about the boundary's origin |
//! | `power` | W | −(F·v + T·ω): the power the boundary's motion takes |
//! | `contacts` | | contacts with the boundary that carried a load in the step (rigid: a positive normal impulse; penalty: a load at the last sub-step) |
//!
//! Rows are collected in memory and written whole steps at a time, so a
//! process killed at any moment leaves a file that ends on a row boundary.
//! A resumed run keeps the rows up to its checkpoint's step and drops the
//! rest ([`WallsWriter::resume`]), so its file is the uninterrupted run's.

use std::io::{self, Write};
use std::path::Path;

use super::rows::RowFile;
use super::with_path;
use crate::wall_loads::WallLoad;

/// The header line of `walls.csv`.
pub const WALLS_CSV_HEADER: &str = "step,time,boundary,fx,fy,fz,tx,ty,tz,power,contacts";

/// Appends the rows of `walls.csv`, whole steps at a time (module docs).
#[derive(Debug)]
pub struct WallsWriter {
    names: Vec<String>,
    file: RowFile,
}

impl WallsWriter {
    /// Creates (or truncates) the file at `path` and writes the header;
    /// `names` are the boundaries' names in scene order (quoted here once
    /// where CSV needs it).
    pub fn create(path: impl AsRef<Path>, names: &[String]) -> io::Result<Self> {
        Ok(WallsWriter {
            names: names.iter().map(|n| csv_field(n)).collect(),
            file: RowFile::create(path.as_ref(), WALLS_CSV_HEADER)?,
        })
    }

    /// Takes up the `walls.csv` of a run resumed after step `step`: keeps
    /// its header and the rows of steps up to `step`, drops later ones (and
    /// a last line cut short), and appends from there. A missing file is
    /// started afresh (a run from before `walls.csv` existed).
    ///
    /// Errors: `InvalidData` when the first line is not the header (not a
    /// `walls.csv`); I/O failures.
    pub fn resume(path: impl AsRef<Path>, names: &[String], step: u64) -> io::Result<Self> {
        let path = path.as_ref().to_owned();
        let text = match super::bounded::read_text(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return WallsWriter::create(&path, names);
            }
            Err(e) => return Err(with_path(&path, e)),
        };
        let mut lines = text.split_inclusive('\n');
        if lines.next().map(str::trim_end) != Some(WALLS_CSV_HEADER) {
            return Err(with_path(
                &path,
                io::Error::new(io::ErrorKind::InvalidData, "not a walls.csv (no header)"),
            ));
        }
        let mut kept = format!("{WALLS_CSV_HEADER}\n");
        for line in lines {
            let whole = line.ends_with('\n');
            let row_step = line.split(',').next().and_then(|s| s.parse::<u64>().ok());
            match row_step {
                Some(s) if whole && s <= step => kept.push_str(line),
                _ => break,
            }
        }
        let mut w = WallsWriter::create(&path, names)?;
        w.file
            .rows()?
            .extend_from_slice(&kept.as_bytes()[WALLS_CSV_HEADER.len() + 1..]);
        w.flush()?;
        Ok(w)
    }

    /// Records the loads of step `step` ending at `time` (one row per
    /// boundary; nothing when `loads` is empty).
    pub fn record(&mut self, step: u64, time: f64, loads: &[WallLoad]) -> io::Result<()> {
        // Into the pending bytes directly (writes to a Vec do not fail).
        let row = self.file.rows()?;
        for (k, l) in loads.iter().enumerate() {
            let name = self.names.get(k).map(String::as_str).unwrap_or("");
            let _ = write!(row, "{step},{time:e},");
            if name.is_empty() {
                let _ = write!(row, "{k}");
            } else {
                row.extend_from_slice(name.as_bytes());
            }
            for v in [
                l.force.x, l.force.y, l.force.z, l.torque.x, l.torque.y, l.torque.z, l.power,
            ] {
                let _ = write!(row, ",{v:e}");
            }
            let _ = writeln!(row, ",{}", l.contacts);
        }
        self.file.end_record()
    }

    /// Writes the pending rows.
    pub fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// A name as one CSV field: quoted when it holds a comma, quote or line
/// break.
pub(super) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
