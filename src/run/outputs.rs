//! A run's output files as one value, but for those written once at its
//! end (`final.csv`, `final.png`, `summary.json`): the frame series
//! (`frames.pvd` with `frame_NNNNN.vtu`, the bodies' surfaces, the mesh
//! boundaries, the contacts), `bulk.csv`, `track.csv` and `walls.csv`.
//! [`Outputs::create`] starts them for a new run and [`Outputs::reopen`]
//! takes them up for a run resumed from a checkpoint (each cut back to the
//! checkpoint's step); the step loop then records frames
//! ([`Outputs::record_frame`]) and steps ([`Outputs::record_step`]),
//! flushes them for a checkpoint ([`Outputs::flush`]) and closes them
//! ([`Outputs::finish`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::output::contacts::{write_contacts_csv, write_contacts_vtu};
use crate::output::csv::{write_final_csv, TrackWriter};
use crate::output::summary::Summary;
use crate::output::vtk::{write_surfaces_vtu, write_walls_vtu, PvdSeries};
use crate::output::walls_csv::WallsWriter;
use crate::scene::Scene;
use crate::step::Stepper;
use crate::wall_loads::WallLoad;
use crate::world::World;

use super::{CONTACTS, SURFACES, WALLS};

/// The output files a run writes as it goes (module docs); each `None`
/// when the run does not write it.
pub(super) struct Outputs {
    /// The run's output directory.
    dir: PathBuf,
    /// The frame series, when frames are written.
    pub(super) frames: Option<PvdSeries>,
    /// The surfaces of the bodies that are not spheres (`bodies.pvd`), one
    /// frame with each of `frames`, when frames are written and the scene
    /// has such bodies.
    pub(super) surfaces: Option<PvdSeries>,
    /// The mesh boundaries (`walls.pvd`), when frames are written and the
    /// scene has meshes: a frame beside each frame when a mesh moves, else
    /// only the first.
    pub(super) walls: Option<PvdSeries>,
    /// The contacts (`contacts.pvd`, a `.vtu` and a `.csv` beside each
    /// frame), when the scene asks for them and frames are written.
    pub(super) contacts: Option<PvdSeries>,
    /// The bulk measures so far (`bulk.csv`), when the scene asks for them.
    pub(super) bulk: Option<Vec<crate::analysis::BulkSample>>,
    /// `track.csv`, when bodies are tracked.
    pub(super) track: Option<TrackWriter>,
    /// `walls.csv`, when the scene has boundaries.
    pub(super) wall_loads: Option<WallsWriter>,
}

impl Outputs {
    /// The outputs of a new run of `scene` (its initial world `world`) into
    /// `out`: every series and file the scene asks for, none of the frame
    /// series with `no_frames`.
    pub fn create(scene: &Scene, world: &World, out: &Path, no_frames: bool) -> Result<Self> {
        let frames = if no_frames {
            None
        } else {
            Some(PvdSeries::new(out, "frames").context("cannot start the frame series")?)
        };
        let surfaces = if no_frames || !world.state.bodies.has_shapes() {
            None
        } else {
            Some(
                PvdSeries::new_prefixed(out, SURFACES, SURFACES)
                    .context("cannot start the series of the bodies' surfaces")?,
            )
        };
        let walls = if no_frames || !has_meshes(&world.model.boundaries) {
            None
        } else {
            Some(
                PvdSeries::new_prefixed(out, WALLS, WALLS)
                    .context("cannot start the series of the mesh boundaries")?,
            )
        };
        let contacts = contact_series(scene, no_frames, out)?;
        let track = if scene.output.track.is_empty() {
            None
        } else {
            Some(TrackWriter::create(
                out.join("track.csv"),
                &scene.output.track,
            )?)
        };
        let wall_loads = walls_writer(world, out, None)?;
        Ok(Outputs {
            dir: out.to_owned(),
            frames,
            surfaces,
            walls,
            contacts,
            bulk: scene.analysis.bulk.map(|_| Vec::new()),
            track,
            wall_loads,
        })
    }

    /// The outputs of a run in `dir` resumed from its checkpoint, `world`
    /// already at the checkpoint's state: the frame series cut back to the
    /// checkpoint's `frames` (`None`: the run wrote none), `track.csv` to
    /// its first `track_len` bytes, `walls.csv` to the checkpoint's step
    /// and the bulk rows to its time.
    pub fn reopen(
        scene: &Scene,
        world: &World,
        dir: &Path,
        frames: Option<Vec<(f64, String)>>,
        track_len: Option<u64>,
    ) -> Result<Self> {
        // A series beside the points' takes up its first `keep` frames,
        // named after theirs.
        let beside = |base: &str, keep: usize, what: &str| -> Result<Option<PvdSeries>> {
            let Some(f) = &frames else {
                return Ok(None);
            };
            let named = f[..keep.min(f.len())]
                .iter()
                .map(|(t, name)| (*t, name.replacen("frame", base, 1)))
                .collect();
            PvdSeries::reopen_prefixed(dir, base, base, named)
                .with_context(|| format!("--resume: cannot take up the series of {what}"))
                .map(Some)
        };
        let all = usize::MAX;
        // The surfaces' and the contacts' series have a frame beside each
        // frame of the points'; the walls' too when a mesh moves, else only
        // the first.
        let surfaces = if world.state.bodies.has_shapes() {
            beside(SURFACES, all, "the bodies' surfaces")?
        } else {
            None
        };
        let walls = if !has_meshes(&world.model.boundaries) {
            None
        } else if meshes_move(&world.model.boundaries) {
            beside(WALLS, all, "the mesh boundaries")?
        } else {
            beside(WALLS, 1, "the mesh boundaries")?
        };
        let contacts = if scene.output.contacts {
            beside(CONTACTS, all, "the contacts")?
        } else {
            None
        };
        let frames = match frames {
            Some(f) => Some(
                PvdSeries::reopen(dir, "frames", f)
                    .context("--resume: cannot take up the frame series")?,
            ),
            None => None,
        };
        let track = match track_len {
            Some(len) => Some(
                TrackWriter::reopen(dir.join("track.csv"), &scene.output.track, len)
                    .context("--resume: cannot take up track.csv")?,
            ),
            None => None,
        };
        let wall_loads = walls_writer(world, dir, Some(world.state.step_index))
            .context("--resume: cannot take up walls.csv")?;
        // The bulk measures of the frames up to the checkpoint.
        let bulk = match scene.analysis.bulk {
            Some(_) => {
                let t = world.state.time;
                let rows = crate::analysis::read_bulk_csv(&dir.join("bulk.csv"))
                    .map_err(|e| anyhow::anyhow!("--resume: cannot take up bulk.csv: {e}"))?;
                Some(rows.into_iter().filter(|r| r.time <= t).collect())
            }
            None => None,
        };
        Ok(Outputs {
            dir: dir.to_owned(),
            frames,
            surfaces,
            walls,
            contacts,
            bulk,
            track,
            wall_loads,
        })
    }

    /// Writes a frame of `world` as `stepper`'s last step left it, when
    /// frames are written: the VTU file and, with `output.csv_frames`,
    /// `frame_NNNNN.csv` beside it (the columns of `final.csv`); the
    /// bodies' surfaces (`bodies_NNNNN.vtu`) when the scene has bodies that
    /// are not spheres; the mesh boundaries; the contacts; and a row of
    /// `bulk.csv` (its last value also in `summary`).
    pub fn record_frame(
        &mut self,
        scene: &Scene,
        world: &World,
        stepper: &Stepper,
        summary: &mut Summary,
    ) -> Result<()> {
        if let Some(s) = &mut self.walls {
            let (walls, time) = (&world.boundaries(), world.state.time);
            if s.is_empty() || meshes_move(walls) {
                s.add_frame_by(time, |path| write_walls_vtu(path, walls, time))
                    .context("cannot write a frame of the mesh boundaries")?;
            }
        }
        if let Some(s) = &mut self.surfaces {
            let (bodies, time) = (&world.state.bodies, world.state.time);
            s.add_frame_by(time, |path| write_surfaces_vtu(path, bodies, time))
                .context("cannot write a frame of the bodies' surfaces")?;
        }
        // The last step's contact loads, once, for what reads them.
        let forces = (self.bulk.is_some() || self.contacts.is_some()).then(|| {
            stepper.contact_forces(world).unwrap_or_else(|| {
                log::warn!(
                    "t = {:.4} s: the contacts could not be recovered (a failed step); this frame's contact records are empty",
                    world.state.time
                );
                Default::default()
            })
        });
        let time = world.state.time;
        if let (Some(rows), Some(region), Some(c)) = (&mut self.bulk, &scene.analysis.bulk, &forces)
        {
            let s = crate::analysis::measure_bulk(region, &world.state.bodies, c, time);
            rows.push(s);
            let path = self.dir.join("bulk.csv");
            crate::analysis::write_bulk_csv(&path, rows)
                .with_context(|| format!("cannot write {}", path.display()))?;
            summary
                .extra
                .insert("bulk".into(), serde_json::to_value(s).unwrap_or_default());
        }
        if let (Some(series), Some(c)) = (&mut self.contacts, &forces) {
            let names = world.model.boundary_names();
            let vtu = series
                .add_frame_by(time, |path| {
                    write_contacts_vtu(path, c, &world.state.bodies, time)
                })
                .context("cannot write a frame of the contacts")?;
            let csv = vtu.with_extension("csv");
            write_contacts_csv(&csv, c, &names)
                .with_context(|| format!("cannot write {}", csv.display()))?;
        }
        if let Some(f) = &mut self.frames {
            let vtu = f
                .add_frame(&world.state.bodies, world.state.time)
                .context("cannot write a frame")?;
            if scene.output.csv_frames {
                let csv = vtu.with_extension("csv");
                write_final_csv(&csv, &world.state.bodies)
                    .with_context(|| format!("cannot write {}", csv.display()))?;
            }
        }
        Ok(())
    }

    /// The rows of a step that `world` has just finished: `track.csv` and
    /// `walls.csv` (the step's `wall_loads`).
    pub fn record_step(&mut self, world: &World, wall_loads: &[WallLoad]) -> Result<()> {
        self.record_track(world)?;
        if let Some(w) = &mut self.wall_loads {
            w.record(world.state.step_index, world.state.time, wall_loads)?;
        }
        Ok(())
    }

    /// A row of `track.csv` for `world` now, when bodies are tracked.
    pub fn record_track(&mut self, world: &World) -> Result<()> {
        if let Some(t) = &mut self.track {
            t.record(world.state.time, &world.state.bodies)?;
        }
        Ok(())
    }

    /// Flushes `walls.csv` and `track.csv` for a checkpoint; returns the
    /// length of `track.csv` (what a resumed run cuts it back to).
    pub fn flush(&mut self) -> Result<Option<u64>> {
        if let Some(w) = &mut self.wall_loads {
            w.flush()
                .context("cannot flush walls.csv for a checkpoint")?;
        }
        match &mut self.track {
            Some(tr) => Ok(Some(
                tr.flushed_len()
                    .context("cannot flush track.csv for a checkpoint")?,
            )),
            None => Ok(None),
        }
    }

    /// The frames of the points' series so far (time, file), when frames
    /// are written: what a checkpoint keeps.
    pub fn frames_written(&self) -> Option<Vec<(f64, String)>> {
        self.frames.as_ref().map(|f| f.frames().to_vec())
    }

    /// Closes `track.csv` and flushes `walls.csv` at the end of the run.
    pub fn finish(&mut self) -> Result<()> {
        if let Some(t) = self.track.take() {
            t.finish()?;
        }
        if let Some(mut w) = self.wall_loads.take() {
            w.flush()?;
        }
        Ok(())
    }
}

/// The `walls.csv` of a run of `world` into `dir`, when it has
/// boundaries: a new file, or for a run resumed after step `resumed` the
/// earlier one taken up ([`WallsWriter::resume`]).
fn walls_writer(
    world: &crate::world::World,
    dir: &Path,
    resumed: Option<u64>,
) -> std::io::Result<Option<WallsWriter>> {
    if world.model.boundaries.is_empty() {
        return Ok(None);
    }
    let names = world.model.boundary_names();
    let path = dir.join("walls.csv");
    match resumed {
        None => WallsWriter::create(path, &names).map(Some),
        Some(step) => WallsWriter::resume(path, &names, step).map(Some),
    }
}

/// The contacts' series of a run into `out` when the scene asks for it
/// (`output.contacts`, which validation refuses under the penalty
/// formulation) and frames are written.
fn contact_series(scene: &Scene, no_frames: bool, out: &Path) -> Result<Option<PvdSeries>> {
    if !scene.output.contacts {
        return Ok(None);
    }
    if no_frames {
        log::warn!(
            "output.contacts: no contacts are written with --no-frames (they are written with the frames)"
        );
        return Ok(None);
    }
    PvdSeries::new_prefixed(out, CONTACTS, CONTACTS)
        .context("cannot start the series of the contacts")
        .map(Some)
}

/// Whether a mesh boundary moves or turns (then its series has a frame
/// beside every frame; otherwise only the first).
pub fn meshes_move(boundaries: &[crate::boundary::Boundary]) -> bool {
    boundaries
        .iter()
        .any(|b| matches!(b.shape, crate::boundary::Shape::Mesh { .. }) && !b.geometry_still())
}

/// Whether the scene has mesh boundaries.
pub fn has_meshes(boundaries: &[crate::boundary::Boundary]) -> bool {
    boundaries
        .iter()
        .any(|b| matches!(b.shape, crate::boundary::Shape::Mesh { .. }))
}
