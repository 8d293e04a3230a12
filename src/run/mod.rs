//! Running a scene end to end: build the world, step it with a progress bar,
//! write frames (VTU + PVD), `final.csv`, `final.png`, `track.csv`,
//! `summary.json` and checkpoints; or take up a run from its checkpoint
//! ([`resume_run`]).
//!
//! Every step the mean kinetic energy per particle feeds a
//! [`SettleDetector`]; the summary records when the pile settled
//! (`extra.settling`), and with `analysis.stop_when_settled` the run ends
//! there. When the scene asks for it (`analysis.heap`), the final state is
//! measured ([`measure_heap`](crate::analysis::measure_heap)) and the angle
//! of repose goes to `extra.angle_of_repose`; the floor it was measured
//! from goes to `extra.floor_z` (see [`scene_floor`]).
//!
//! Outputs are written as the run goes, each file atomically, so a run that
//! stops with an error (a diverging solver, say) leaves valid files behind.
//! A checkpoint (`checkpoint.bin`, [`checkpoint`]) is written at the start,
//! then as `output.checkpoint` says (every 60 s of wall time by default),
//! and when a signal stops the run; `repose run --resume DIR` continues from
//! it, on the CPU bit-identically, and a run that finishes removes it.
//!
//! The parts: `backend` (the choice of backend), `session` (the step loop
//! and the ending), `report` (the picture and the analyses of the end),
//! `guards` (the output directory, tunnelling, non-finite state),
//! [`checkpoint`].

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::analysis::{DrumFrame, DrumSampler, SettleDetector};
use crate::bodies::Bodies;
use crate::boundary::{Boundary, Shape};
use crate::output::summary::{read_summary, StopReason, Summary};
use crate::scene::Scene;
use crate::step::{Backend, Stepper};

mod backend;
pub mod batch;
pub mod checkpoint;
mod guards;
mod outputs;
mod report;
mod session;

pub use backend::{
    f32_blocker, open_backend, open_backend_for, scene_bodies, BackendChoice, AUTO_GPU_MIN_BODIES,
};
use checkpoint::{read_checkpoint, CheckpointClock, StartOptions, CHECKPOINT_FILE};
pub use guards::tunnelling_risk;
use guards::{prepare_output_dir, DivergenceBounds};
use outputs::Outputs;
use session::Session;

/// How to run a scene.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Output directory; `None` = `out/<scene name>/`.
    pub out_dir: Option<PathBuf>,
    /// Report progress: a bar when stderr is a terminal, else a log line
    /// every 30 s.
    pub progress: bool,
    /// Write no VTU frames (final.csv and summary.json only).
    pub no_frames: bool,
    /// Which solver backend.
    pub backend: BackendChoice,
    /// Write no `final.png` (whatever the scene's `output.picture.enabled`).
    pub no_picture: bool,
    /// Steps whose contact problem is written out, besides the scene's
    /// `output.dump_problems`.
    pub dump_steps: Vec<u64>,
    /// Replace the outputs of an earlier run found in the output directory
    /// (they are removed first); without it such a directory is refused, so
    /// that two runs' files never mix.
    pub overwrite: bool,
    /// Stop after this step as a signal would (a checkpoint is written and
    /// `summary.json` says `interrupted`): for tests of resuming, and for
    /// cutting a long run into pieces.
    pub stop_after_step: Option<u64>,
    /// Where the run stores the index of each step it completes, for a
    /// host that shows progress itself (the Python module's bar); `None`:
    /// nowhere.
    pub steps_done: Option<Arc<AtomicU64>>,
}

/// How to resume a run ([`resume_run`]).
#[derive(Clone, Debug, Default)]
pub struct ResumeOptions {
    /// The backend; `None`: the one the run was started with.
    pub backend: Option<BackendChoice>,
    /// Report progress, as [`RunOptions::progress`].
    pub progress: bool,
    /// As [`RunOptions::stop_after_step`].
    pub stop_after_step: Option<u64>,
}

/// The height of the horizontal floor the spheres rest on: the highest
/// upward-facing horizontal plane or box floor among `boundaries` that lies
/// at or below the lowest sphere bottom (with one largest radius of slack
/// for overlap); `None` when there is none (or no bodies).
pub fn scene_floor(boundaries: &[Boundary], bodies: &Bodies) -> Option<f64> {
    let lowest = (0..bodies.len())
        .map(|i| bodies.pos[i].z - bodies.radius[i])
        .fold(f64::INFINITY, f64::min);
    if !lowest.is_finite() {
        return None;
    }
    let slack = bodies.max_radius();
    boundaries
        .iter()
        .filter_map(|b| match b.shape {
            Shape::Plane { normal } if normal.z > 1.0 - 1e-9 => Some(b.origin.z),
            Shape::BoxContainer { half_extents, .. } => Some(b.origin.z - half_extents.z),
            _ => None,
        })
        .filter(|&z| z.is_finite() && z <= lowest + slack)
        .reduce(f64::max)
}

/// Runs `scene` to its duration and writes its outputs; returns the summary
/// (also written as `summary.json`). On a solver failure the outputs so far
/// stay on disk and the error names the step. With
/// `analysis.stop_when_settled` the run ends at the step where the pile is
/// found settled.
pub fn run_scene(scene: &Scene, opts: &RunOptions) -> Result<Summary> {
    let t0 = Instant::now();
    crate::interrupt::install();
    let world = scene.build()?;
    let (backend, why) = open_backend_for(
        opts.backend,
        &world.model.solver,
        scene_bodies(&world),
        f32_blocker(&world).as_deref(),
    )?;
    start_session(scene, opts, world, backend, why, t0)?.run()
}

/// A run of `scene` set up to its first step on `backend` (chosen for
/// `why`): the output directory prepared, `scene.ron` and the first frame
/// written; [`Session::run`] or a batch ([`batch`]) steps it.
fn start_session<'a>(
    scene: &'a Scene,
    opts: &RunOptions,
    mut world: crate::world::World,
    backend: Backend,
    why: String,
    t0: Instant,
) -> Result<Session<'a>> {
    let out = opts.out_dir.clone().unwrap_or_else(|| scene.output_dir());
    prepare_output_dir(&out, opts.overwrite)?;
    log::info!("backend {why}");
    let b = &world.state.bodies;
    let shaped = b
        .shape
        .iter()
        .filter(|&&s| s != crate::bodies::SPHERE)
        .count();
    log::info!(
        "scene {:?}: {} spheres{} (+{} more from inlets), {} boundaries, h = {} s, {} steps",
        scene.name,
        b.len() - shaped,
        if shaped > 0 {
            format!(" and {shaped} bodies of other shapes")
        } else {
            String::new()
        },
        scene.inlet_count(),
        world.model.boundaries.len(),
        world.model.time_step,
        scene.steps()
    );
    if let Some(w) = tunnelling_risk(&world) {
        log::warn!("{w}");
    }
    let mut summary = Summary::new(&scene.name, &scene.file, backend.describe());
    summary.formulation = world.model.formulation.name().into();
    summary
        .extra
        .insert("backend_reason".into(), serde_json::Value::String(why));
    summary.bodies = world.state.bodies.len();
    let scene_ron = scene.to_ron()?;
    std::fs::write(out.join("scene.ron"), &scene_ron)
        .with_context(|| format!("cannot write {}", out.join("scene.ron").display()))?;

    let outputs = Outputs::create(scene, &world, &out, opts.no_frames)?;
    // A turning drum's bed never comes to rest: settling does not apply to
    // a scene that measures a drum (its closing lines give the dynamic
    // angle instead).
    let settle = if scene.analysis.drum.is_some() {
        None
    } else {
        let (mean_mass, mean_radius) = grain_scales(&world);
        match scene.analysis.settle.resolve(
            mean_mass,
            mean_radius,
            world.model.gravity.length(),
            world.model.time_step,
        ) {
            Ok(c) => Some(SettleDetector::new(c)?),
            Err(e) => {
                log::warn!("settling detection is off: analysis.{e}");
                None
            }
        }
    };
    let drum = match &scene.analysis.drum {
        Some(d) => Some(drum_sampler(scene, &world, d)?),
        None => None,
    };
    world.state.step_index = 0;
    let bounds = DivergenceBounds::new(&world, scene.duration);
    let mut session = Session {
        bounds,
        scene,
        scene_ron,
        start: StartOptions {
            backend: opts.backend,
            no_frames: opts.no_frames,
            no_picture: opts.no_picture,
            dump_steps: opts.dump_steps.clone(),
        },
        progress: opts.progress,
        stop_after_step: opts.stop_after_step,
        steps_done: opts.steps_done.clone(),
        out,
        clock: CheckpointClock::new(&scene.output.checkpoint, 0),
        world,
        stepper: Stepper::with_backend(backend),
        summary,
        outputs,
        settle,
        drum,
        discharge: scene
            .analysis
            .discharge
            .clone()
            .map(crate::analysis::DischargeSampler::new),
        wall_before: 0.0,
        t0,
        last_checkpoint: None,
    };
    session.write_frame()?;
    session.outputs.record_track(&session.world)?;
    if session.clock.is_some() {
        session.checkpoint()?;
    }
    Ok(session)
}

/// Basename (and frame prefix) of the series of the bodies' surfaces:
/// `bodies.pvd`, `bodies_NNNNN.vtu`.
pub const SURFACES: &str = "bodies";

/// Basename (and frame prefix) of the series of the contacts
/// (`output.contacts`): `contacts.pvd`, `contacts_NNNNN.vtu` and `.csv`.
pub const CONTACTS: &str = "contacts";

/// Basename (and frame prefix) of the series of the mesh boundaries:
/// `walls.pvd`, `walls_NNNNN.vtu`.
pub const WALLS: &str = "walls";

/// Continues the run whose output directory is `dir` from its checkpoint
/// (`checkpoint.bin`, written at the start, every `output.checkpoint`
/// interval and on a signal) to the end, as if it had never stopped: the
/// scene is the run's own `scene.ron`, the options those it was started
/// with, the frame series and `track.csv` are cut back to the checkpoint
/// and continued. `backend` replaces the backend it was started with; on
/// the CPU backend the resumed `final.csv` is bit-identical to that of an
/// uninterrupted run.
///
/// Errors, each saying what to do: no checkpoint (the run finished, or is
/// not a run directory), a damaged checkpoint, one written by another
/// version of repose, or a `scene.ron` edited since.
pub fn resume_run(dir: &Path, opts: &ResumeOptions) -> Result<Summary> {
    let t0 = Instant::now();
    crate::interrupt::install();
    let ck_path = dir.join(CHECKPOINT_FILE);
    if !ck_path.is_file() {
        let why = match read_summary(dir.join("summary.json")) {
            Ok(s) if matches!(s.stopped, StopReason::Completed | StopReason::Settled) => format!(
                "the run finished ({} after {} steps): there is nothing to resume",
                s.stopped, s.steps
            ),
            Ok(s) => format!(
                "the run stopped ({}) without a checkpoint (checkpoints were off: output.checkpoint.enabled); start it again",
                s.stopped
            ),
            Err(_) if dir.join("scene.ron").is_file() => "the run was stopped before it wrote its first checkpoint; start it again".to_string(),
            Err(_) => "it is not the output directory of a run".to_string(),
        };
        anyhow::bail!("--resume {}: no {CHECKPOINT_FILE}: {why}", dir.display());
    }
    let ck = read_checkpoint(&ck_path)?;
    anyhow::ensure!(
        ck.repose_version == env!("CARGO_PKG_VERSION"),
        "--resume {}: the checkpoint was written by repose {}, this is {}; a resumed run must be continued by the version that started it (or start it again)",
        dir.display(),
        ck.repose_version,
        env!("CARGO_PKG_VERSION")
    );
    let scene_path = dir.join("scene.ron");
    let scene_ron = std::fs::read_to_string(&scene_path)
        .with_context(|| format!("--resume: cannot read {}", scene_path.display()))?;
    anyhow::ensure!(
        scene_ron == ck.scene_ron,
        "--resume: {} was changed since the checkpoint; a resumed run goes on with the scene it started with (put it back, or start a new run with the new scene)",
        scene_path.display()
    );
    let scene = Scene::load(&scene_path, &[])?;
    let mut world = scene.build()?;
    let bounds = DivergenceBounds::new(&world, scene.duration);
    let k = ck.world.step_index;
    world
        .restore(&ck.world)
        .map_err(|e| anyhow::anyhow!("the checkpoint's state: {e}"))
        .with_context(|| {
            format!(
                "--resume: {} does not fit {}",
                ck_path.display(),
                scene_path.display()
            )
        })?;
    let choice = opts.backend.unwrap_or(ck.options.backend);
    let (backend, why) = open_backend_for(
        choice,
        &world.model.solver,
        scene_bodies(&world),
        f32_blocker(&world).as_deref(),
    )?;
    let mut summary: Summary = serde_json::from_str(&ck.summary_json)
        .with_context(|| format!("--resume: the summary in {} is damaged", ck_path.display()))?;
    let described = backend.describe();
    if summary.backend != described {
        log::warn!(
            "the run started on {} and goes on on {described}: the result will not be bit-identical to an uninterrupted run",
            summary.backend
        );
        summary.backend = described;
    }
    summary.stopped = StopReason::Completed;
    summary.stop_message = None;
    let resumed = summary
        .extra
        .entry("resumed_at_steps")
        .or_insert_with(|| serde_json::Value::Array(Vec::new()));
    if let serde_json::Value::Array(a) = resumed {
        a.push(k.into());
    }
    log::info!("backend {why}");
    log::info!(
        "resuming {:?} at step {k} of {} (t = {:.4} s, {} bodies) from {}",
        scene.name,
        scene.steps(),
        world.state.time,
        world.state.bodies.len(),
        ck_path.display()
    );
    let outputs = Outputs::reopen(&scene, &world, dir, ck.frames, ck.track_len)?;
    let session = Session {
        bounds,
        scene: &scene,
        scene_ron,
        start: ck.options,
        progress: opts.progress,
        stop_after_step: opts.stop_after_step,
        steps_done: None,
        out: dir.to_owned(),
        clock: CheckpointClock::new(&scene.output.checkpoint, k),
        world,
        stepper: Stepper::with_backend(backend),
        wall_before: summary.wall_time_s,
        summary,
        outputs,
        settle: ck.settle,
        drum: ck.drum,
        discharge: ck.discharge,
        t0,
        last_checkpoint: Some(k),
    };
    session.run()
}

/// Loads a scene file with overrides and runs it.
pub fn run_file(path: &Path, overrides: &[(String, String)], opts: &RunOptions) -> Result<Summary> {
    let scene = Scene::load(path, overrides)?;
    run_scene(&scene, opts)
}

/// The mean grain mass (kg) and radius (m) that scale the settling
/// criterion: over the bodies present at the start and the spheres the
/// inlets will emit (radii uniform in `[radius, radius_max]`, so the mean
/// mass takes E(r³) = (b⁴ − a⁴) / 4(b − a)). Zeros when there are no grains.
fn grain_scales(world: &crate::world::World) -> (f64, f64) {
    let b = &world.state.bodies;
    let mut n = b.len() as f64;
    let mut mass: f64 = b.inv_mass.iter().map(|im| 1.0 / im).sum();
    let mut radius: f64 = b.radius.iter().sum();
    for s in &world.model.inlets {
        let (a, c) = (s.radius, s.radius_max.max(s.radius));
        let r3 = if c > a {
            (c.powi(4) - a.powi(4)) / (4.0 * (c - a))
        } else {
            a.powi(3)
        };
        let k = s.count as f64;
        n += k;
        radius += k * 0.5 * (a + c);
        mass += k * s.density * 4.0 / 3.0 * std::f64::consts::PI * r3;
    }
    if n > 0.0 {
        (mass / n, radius / n)
    } else {
        (0.0, 0.0)
    }
}

/// The sampler of `analysis.drum`: the named cylinder (or the first that
/// spins), sampled from `from_time` (default: half the duration).
fn drum_sampler(
    scene: &Scene,
    world: &crate::world::World,
    d: &crate::analysis::DrumSettings,
) -> Result<DrumSampler> {
    let walls = world.boundaries();
    let cylinders = || {
        walls
            .iter()
            .filter(|b| matches!(b.shape, Shape::Cylinder { .. }))
    };
    let found = match &d.boundary {
        Some(name) => cylinders().find(|b| &b.name == name).ok_or_else(|| {
            anyhow::anyhow!(
                "{}: analysis.drum.boundary: no cylinder named {name:?} (cylinders: {:?})",
                scene.file,
                cylinders().map(|b| b.name.as_str()).collect::<Vec<_>>()
            )
        })?,
        None => cylinders()
            .find(|b| b.angular_velocity != glam::DVec3::ZERO)
            .or_else(|| cylinders().next())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: analysis.drum: the scene has no cylinder boundary to measure",
                    scene.file
                )
            })?,
    };
    let Shape::Cylinder { axis, .. } = found.shape else {
        unreachable!("filtered to cylinders")
    };
    let frame = DrumFrame::new(
        found.origin,
        axis,
        found.angular_velocity.dot(axis),
        world.model.gravity,
    )
    .map_err(|e| anyhow::anyhow!("{}: analysis.drum: {e}", scene.file))?;
    let from = d.from_time.unwrap_or(0.5 * scene.duration);
    Ok(DrumSampler::new(found.name.clone(), frame, d.clone(), from))
}
