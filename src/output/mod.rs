//! Output files that people (and other programs) can open.
//!
//! | file | written by | what it is for | how to open it |
//! | --- | --- | --- | --- |
//! | `frame_NNNNN.vtu` | [`vtk::write_vtu`], [`vtk::PvdSeries`] | one snapshot of all spheres: positions, radii, velocities, spins, orientations, materials | ParaView (or VisIt, or any VTK reader): File → Open; show as *Points* or apply *Glyph* (sphere, scale by `radius`, scale factor 2) |
//! | `bodies_NNNNN.vtu` | [`vtk::write_surfaces_vtu`], [`vtk::PvdSeries::add_frame_by`] | the triangulated surfaces of the bodies that are not spheres, placed and turned | ParaView: File → Open `bodies.pvd` beside `frames.pvd` |
//! | `walls_NNNNN.vtu` | [`vtk::write_walls_vtu`], [`vtk::PvdSeries::add_frame_by`] | the mesh boundaries' triangles, placed and turned (every frame when a mesh moves, else the first) | ParaView: File → Open `walls.pvd` beside `frames.pvd` |
//! | `<basename>.pvd` | [`vtk::PvdSeries`] | the time series of all frames, with physical times | ParaView: File → Open the `.pvd`, then press Play |
//! | `final.csv` | [`csv::write_final_csv`] | the final state of every body, one row each, numbers at full precision (files of equal runs are byte-identical) | any spreadsheet, `pandas.read_csv`, or [`csv::read_final_csv`] |
//! | `final.png` | [`crate::render::write_png`] of [`crate::render::render_particles`] | a picture of the final state: side and top view of the spheres, colour bar, scale bar | any image viewer |
//! | `track.csv` | [`csv::TrackWriter`] | the trajectories of a few chosen bodies over time | as above; plot `x`/`z` against `time` |
//! | `walls.csv` | [`walls_csv::WallsWriter`] | each boundary's mean force, torque (about its origin) and power over every step ([`crate::wall_loads`]) | as above; sum `fz` of a floor, plot `tx` or `power` of a drum against `time` |
//! | `summary.json` | [`summary::write_json`] | what ran and how it went: scene, backend, steps, timings per stage, contact and solver statistics, final kinetic energy, later results such as the angle of repose | any text editor, `jq`, `json.load`, or [`summary::read_summary`] |
//!
//! Every whole-file writer here is *atomic*: it writes `<name>.tmp` beside the
//! target and renames it over the target, so a run that crashes or stops with
//! an error never leaves a half-written file behind — a reader sees either the
//! previous version or the new one. (The rename protects against the process
//! dying; the files are not `fsync`ed, so a power cut may still lose the most
//! recent ones.) The exceptions are [`csv::TrackWriter`] and
//! [`walls_csv::WallsWriter`], which append rows as the run goes; a crash
//! can cut a last line short.

pub mod bounded;
pub mod contacts;
pub mod csv;
pub mod summary;
pub mod vtk;
pub mod walls_csv;

mod base64;
mod rows;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::bodies::Bodies;

/// Why an output file could not be read back.
#[derive(Debug, Error)]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("{}: {err}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        err: io::Error,
    },
    /// The file was read but its contents are not in the expected format.
    #[error("{}:{line}: {reason}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// The 1-based line where the problem is (0 when not known).
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

/// Checks that all per-body vectors of `bodies` have the same length and
/// returns it; an inconsistent `Bodies` is an `InvalidInput` error, not a
/// panic.
pub(crate) fn body_count(bodies: &Bodies) -> io::Result<usize> {
    let n = bodies.pos.len();
    let lens = [
        ("rot", bodies.rot.len()),
        ("vel", bodies.vel.len()),
        ("omega", bodies.omega.len()),
        ("radius", bodies.radius.len()),
        ("inv_mass", bodies.inv_mass.len()),
        ("inv_inertia", bodies.inv_inertia.len()),
        ("material", bodies.material.len()),
        ("shape", bodies.shape.len()),
        ("inv_inertia_body", bodies.inv_inertia_body.len()),
    ];
    for (name, len) in lens {
        if len != n {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bodies: `{name}` has {len} entries but `pos` has {n}"),
            ));
        }
    }
    Ok(n)
}

/// Adds the file name to an I/O error, keeping its kind, so that messages say
/// which file could not be written.
pub(crate) fn with_path(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The temporary file beside `path` that atomic writes go through:
/// `<file name>.tmp` in the same directory (so the rename stays on one file
/// system).
pub(crate) fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Writes a step's contact problem in the Siconos text format with repose's
/// d = 6 extension (see [`crate::siconos`]): W = N and q = r assembled
/// explicitly, every number exact, so `repose solve` reads back the problem
/// the step solved (from zero impulses: the warm start is not part of it).
pub fn write_contact_problem(path: &Path, p: &crate::problem::ContactProblem) -> io::Result<()> {
    let op = crate::problem::explicit::ExplicitDelassus::from_problem(p);
    let text = crate::siconos::SiconosProblem::from_delassus(&op).to_text();
    write_atomic(path, |w| w.write_all(text.as_bytes()))
}

/// Writes a whole file atomically: `fill` writes the contents into a buffered
/// `<path>.tmp`, which is then renamed over `path`. On any error the
/// temporary file is removed and `path` is left as it was. Errors name the
/// file.
pub fn write_atomic<F>(path: &Path, fill: F) -> io::Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
    if path.file_name().is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a file name", path.display()),
        ));
    }
    let tmp = tmp_path(path);
    let result = (|| {
        let file = File::create(&tmp)?;
        let mut w = BufWriter::with_capacity(1 << 16, file);
        fill(&mut w)?;
        w.flush()?;
        drop(w.into_inner().map_err(|e| e.into_error())?);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(with_path(path, e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_replaces_the_file_and_leaves_no_tmp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write_atomic(&p, |w| w.write_all(b"one")).unwrap();
        write_atomic(&p, |w| w.write_all(b"two")).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert!(!tmp_path(&p).exists());
    }

    #[test]
    fn write_atomic_keeps_the_old_file_when_filling_fails() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write_atomic(&p, |w| w.write_all(b"good")).unwrap();
        let err = write_atomic(&p, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("boom"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("a.txt"), "{err}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "good");
        assert!(!tmp_path(&p).exists());
    }

    #[test]
    fn write_atomic_error_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no_such_dir").join("x.json");
        let err = write_atomic(&p, |w| w.write_all(b"x")).unwrap_err();
        assert!(err.to_string().contains("x.json"), "{err}");
    }
}
