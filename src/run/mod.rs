//! Running a scene end to end: build the world, step it with a progress bar,
//! write frames (VTU + PVD), `final.csv`, `final.png`, `track.csv` and
//! `summary.json`.
//!
//! Every step the mean kinetic energy per particle feeds a
//! [`SettleDetector`]; the summary records when the pile settled
//! (`extra.settling`), and with `analysis.stop_when_settled` the run ends
//! there. When the scene asks for it (`analysis.heap`), the final state is
//! measured ([`measure_heap`]) and the angle of repose goes to
//! `extra.angle_of_repose`; the floor it was measured from goes to
//! `extra.floor_z` (see [`scene_floor`]).
//!
//! Outputs are written as the run goes, each file atomically, so a run that
//! stops with an error (a diverging solver, say) leaves valid files behind.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use crate::analysis::{measure_heap, measure_pile, DrumFrame, DrumSampler, SettleDetector};
use crate::bodies::Bodies;
use crate::boundary::{Boundary, Shape};
use crate::gpu::GpuContext;
use crate::output::csv::{write_final_csv, TrackWriter};
use crate::output::summary::{write_json, StopReason, Summary};
use crate::output::vtk::PvdSeries;
use crate::render::{render_particles, run_caption, write_png, ParticleOptions};
use crate::scene::Scene;
use crate::solver::{SolverMethod, SolverSettings};
use crate::step::{Backend, Stepper};

mod guards;

pub use guards::tunnelling_risk;
use guards::{non_finite, prepare_output_dir};

/// The backend asked for on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// The GPU when an adapter exists (hardware or lavapipe), else the CPU.
    #[default]
    Auto,
    /// The f64 CPU reference solver.
    Cpu,
    /// The f32 CPU mirror of the GPU solver (for comparisons).
    CpuF32,
    /// The GPU solver; an error when no adapter exists.
    Gpu,
}

/// Opens the chosen backend for a scene's solver settings and rotating
/// boundary (the name of the first boundary with a non-zero angular
/// velocity, if any): the f32 and GPU backends run the Jacobi and APGD
/// methods (under either contact law), and their contact records carry no
/// torque bias, so they cannot see a spinning wall. `auto` picks the GPU
/// for Jacobi only: APGD stays on the CPU, whose f64 APGD has the line
/// search and gradient restart the GPU's lacks (`--backend gpu` asks for
/// the GPU's). Otherwise `auto` picks the CPU (and says why) and an
/// explicit choice is an error that says what to change.
pub fn open_backend_for(
    choice: BackendChoice,
    solver: &SolverSettings,
    rotating_boundary: Option<&str>,
) -> Result<(Backend, String)> {
    let f32_method = matches!(solver.method, SolverMethod::Jacobi | SolverMethod::Apgd);
    let unsupported = if !f32_method {
        Some(format!("solver method {}", solver.method))
    } else {
        rotating_boundary.map(|name| format!("the rotating boundary {name:?}"))
    };
    match (choice, unsupported) {
        (BackendChoice::Auto, Some(what)) => Ok((
            Backend::Cpu,
            format!("cpu: the scene uses {what}, which only the cpu backend runs"),
        )),
        (BackendChoice::Auto, None) if solver.method == SolverMethod::Apgd => Ok((
            Backend::Cpu,
            "cpu: auto runs apgd on the cpu (f64, line search and gradient restart); \
             --backend gpu runs the GPU's apgd"
                .to_string(),
        )),
        (BackendChoice::Gpu | BackendChoice::CpuF32, Some(what)) => anyhow::bail!(
            "--backend {}: the scene uses {what}, but this backend runs only the jacobi and apgd methods and no rotating boundaries; use --backend cpu",
            if choice == BackendChoice::Gpu { "gpu" } else { "cpu-f32" }
        ),
        _ => open_backend(choice),
    }
}

/// Opens the chosen backend; returns it with a sentence saying what was chosen and why.
pub fn open_backend(choice: BackendChoice) -> Result<(Backend, String)> {
    match choice {
        BackendChoice::Cpu => Ok((Backend::Cpu, "cpu: asked for with --backend cpu".into())),
        BackendChoice::CpuF32 => Ok((
            Backend::CpuF32,
            "cpu-f32: asked for with --backend cpu-f32".into(),
        )),
        BackendChoice::Gpu => {
            let ctx = GpuContext::try_new().context(
                "--backend gpu: no GPU adapter found (on a machine without a GPU, install mesa-vulkan-drivers for lavapipe and set WGPU_BACKEND=vulkan)",
            )?;
            let b = Backend::gpu(ctx)?;
            let why = format!("{}: asked for with --backend gpu", b.describe());
            Ok((b, why))
        }
        BackendChoice::Auto => match GpuContext::try_new() {
            Some(ctx) => {
                let b = Backend::gpu(ctx)?;
                let why = format!("{}: --backend auto found a GPU adapter", b.describe());
                Ok((b, why))
            }
            None => Ok((
                Backend::Cpu,
                "cpu: --backend auto found no GPU adapter".into(),
            )),
        },
    }
}

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
    let mut world = scene.build()?;
    let rotating = world
        .boundaries
        .iter()
        .find(|b| b.angular_velocity != glam::DVec3::ZERO)
        .map(|b| b.name.as_str());
    let (backend, why) = open_backend_for(opts.backend, &world.solver, rotating)?;
    let out = opts.out_dir.clone().unwrap_or_else(|| scene.output_dir());
    prepare_output_dir(&out, opts.overwrite)?;
    let steps = scene.steps();
    let frame_every = scene.frame_every();
    log::info!("backend {why}");
    log::info!(
        "scene {:?}: {} spheres (+{} from inlets), {} boundaries, h = {} s, {} steps",
        scene.name,
        world.bodies.len(),
        scene.inlet_count(),
        world.boundaries.len(),
        world.time_step,
        steps
    );
    if let Some(w) = tunnelling_risk(&world) {
        log::warn!("{w}");
    }
    let mut summary = Summary::new(&scene.name, &scene.file, backend.describe());
    summary
        .extra
        .insert("backend_reason".into(), serde_json::Value::String(why));
    summary.bodies = world.bodies.len();
    std::fs::write(out.join("scene.ron"), scene.to_ron()?)
        .with_context(|| format!("cannot write {}", out.join("scene.ron").display()))?;

    let mut frames = if opts.no_frames {
        None
    } else {
        Some(PvdSeries::new(&out, "frames").context("cannot start the frame series")?)
    };
    let mut track = if scene.output.track.is_empty() {
        None
    } else {
        Some(TrackWriter::create(
            out.join("track.csv"),
            &scene.output.track,
        )?)
    };
    let bar = if opts.progress {
        let b = ProgressBar::new(steps);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40.cyan/blue} {pos}/{len} steps  ETA {eta}  {msg}",
            )
            .expect("valid template"),
        );
        b
    } else {
        ProgressBar::hidden()
    };

    let mut settle = {
        let (mean_mass, mean_radius) = grain_scales(&world);
        match scene.analysis.settle.resolve(
            mean_mass,
            mean_radius,
            world.gravity.length(),
            world.time_step,
        ) {
            Ok(c) => Some(SettleDetector::new(c)?),
            Err(e) => {
                log::warn!("settling detection is off: analysis.{e}");
                None
            }
        }
    };
    let mut drum = match &scene.analysis.drum {
        Some(d) => Some(drum_sampler(scene, &world, d)?),
        None => None,
    };
    let stop_when_settled = scene.analysis.stop_when_settled && settle.is_some();
    let mut stopped = false;
    let dump_steps: std::collections::BTreeSet<u64> = scene
        .output
        .dump_problems
        .iter()
        .chain(&opts.dump_steps)
        .copied()
        .collect();
    if let Some(last) = dump_steps.last().filter(|&&s| s > steps) {
        log::warn!("the run has {steps} steps: no problem will be written for step {last}");
    }

    let mut stepper = Stepper::with_backend(backend);
    let write_frame = |frames: &mut Option<PvdSeries>, world: &crate::world::World| -> Result<()> {
        if let Some(f) = frames {
            f.add_frame(&world.bodies, world.time)
                .context("cannot write a frame")?;
        }
        Ok(())
    };
    write_frame(&mut frames, &world)?;
    if let Some(t) = &mut track {
        t.record(world.time, &world.bodies)?;
    }
    let mut failure = None;
    // Without a terminal (a batch job, a redirected log) the bar is not
    // drawn; a log line every PROGRESS_LOG_SECONDS takes its place.
    let mut log_progress = (opts.progress && !std::io::stderr().is_terminal()).then(Instant::now);
    let run_start = Instant::now();
    let mut reason = StopReason::Completed;
    let mut diverged: Option<String> = None;
    // The state before the step, kept so that a step that makes it
    // non-finite leaves the last finite one in the outputs.
    let mut before = world.bodies.clone();
    for k in 1..=steps {
        if crate::interrupt::requested() {
            reason = StopReason::Interrupted;
            log::warn!(
                "interrupted: stopping after step {} of {steps} (t = {:.4} s) and writing the outputs",
                k - 1,
                world.time
            );
            break;
        }
        before.clone_from(&world.bodies);
        let (time_before, index_before) = (world.time, world.step_index);
        let step = stepper.step(&mut world);
        // One scan of the new state; a failed step has its own error.
        let bad = step.as_ref().ok().and_then(|_| non_finite(&world.bodies));
        match step {
            Ok(_) if bad.is_some() => {
                let what = bad.unwrap_or_default();
                diverged = Some(format!(
                    "step {k} (t = {:.4} s) made the state non-finite: {what}; \
                     the outputs hold the state after step {} — a smaller time step \
                     (time_step) or a check of the initial velocities usually helps",
                    world.time,
                    k - 1
                ));
                world.bodies.clone_from(&before);
                (world.time, world.step_index) = (time_before, index_before);
                break;
            }
            Ok(rep) => {
                if dump_steps.contains(&k) {
                    let path = out.join(format!("problem_step{k:06}.dat"));
                    crate::output::write_contact_problem(&path, &stepper.last_problem)
                        .with_context(|| format!("cannot write the problem of step {k}"))?;
                    log::info!(
                        "step {k}: wrote its problem ({} contacts) to {}",
                        rep.contacts,
                        path.display()
                    );
                }
                summary.contacts.record(rep.contacts);
                let s = rep.solve;
                summary
                    .solver
                    .record(s.iterations, s.residual_abs, s.residual_rel, s.converged);
                summary.solver.record_work(rep.contacts, s.iterations);
                if k % 10 == 0 || k == steps {
                    bar.set_message(format!(
                        "{} contacts, {} it, res {:.1e}",
                        rep.contacts, s.iterations, s.residual_rel
                    ));
                }
                if let Some(last) = &mut log_progress {
                    if last.elapsed().as_secs_f64() >= PROGRESS_LOG_SECONDS {
                        *last = Instant::now();
                        let wall = run_start.elapsed().as_secs_f64();
                        let eta = wall / k as f64 * (steps - k) as f64;
                        log::info!(
                            "step {k}/{steps} (t = {:.3} s): {} bodies, {} contacts, {} it, res {:.1e}; {:.0} s elapsed, ETA {:.0} s",
                            world.time,
                            world.bodies.len(),
                            rep.contacts,
                            s.iterations,
                            s.residual_rel,
                            wall,
                            eta
                        );
                    }
                }
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
        if let Some(d) = &mut settle {
            // A pile still being poured is not settled, however quiet: the
            // sample is loud (infinite) until every inlet has finished.
            let pouring = world.inlets.iter().any(|i| !i.finished());
            let ke = if pouring || world.bodies.is_empty() {
                f64::INFINITY
            } else {
                world.bodies.kinetic_energy() / world.bodies.len() as f64
            };
            stopped = d.update(world.time, ke) && stop_when_settled;
        }
        let t_out = Instant::now();
        if let Some(d) = &mut drum {
            if k % frame_every == 0 || k == steps {
                d.sample(&world.bodies.pos, &world.bodies.radius, world.time);
            }
        }
        if k % frame_every == 0 || k == steps || stopped {
            write_frame(&mut frames, &world)?;
        }
        if let Some(t) = &mut track {
            t.record(world.time, &world.bodies)?;
        }
        summary.add_stage_seconds("output", t_out.elapsed().as_secs_f64());
        bar.inc(1);
        if stopped {
            log::info!(
                "pile settled at t = {:.4} s (detected at t = {:.4} s); stopping after step {k} of {steps} (analysis.stop_when_settled)",
                settle.as_ref().and_then(|d| d.settle_time()).unwrap_or(world.time),
                world.time
            );
            break;
        }
    }
    bar.finish_and_clear();
    if let Some(t) = track {
        t.finish()?;
    }
    write_final_csv(out.join("final.csv"), &world.bodies)
        .with_context(|| format!("cannot write {}", out.join("final.csv").display()))?;
    // Inlets grow the body count during the run: report the final count.
    summary.bodies = world.bodies.len();
    if !world.inlets.is_empty() {
        let emitted: usize = world.inlets.iter().map(|i| i.emitted).sum();
        let wanted: usize = world.inlets.iter().map(|i| i.settings.count).sum();
        summary
            .extra
            .insert("inlet_emitted".into(), serde_json::Value::from(emitted));
        log::info!("inlets emitted {emitted} of {wanted} spheres");
    }
    if scene.output.picture.enabled && !opts.no_picture {
        let t_pic = Instant::now();
        write_picture(scene, &world, &out.join("final.png"));
        summary.add_stage_seconds("picture", t_pic.elapsed().as_secs_f64());
    }
    if stopped {
        reason = StopReason::Settled;
    }
    if let Some(msg) = &diverged {
        reason = StopReason::Diverged;
        summary.stop_message = Some(msg.clone());
    } else if let Some(e) = &failure {
        reason = StopReason::Failed;
        summary.stop_message = Some(e.to_string());
    }
    summary.stopped = reason;
    summary.steps = world.step_index;
    summary.simulated_time = world.time;
    summary.wall_time_s = t0.elapsed().as_secs_f64();
    for (k, v) in stepper.timers.seconds() {
        summary.add_stage_seconds(&k, v);
    }
    summary.kinetic_energy_final = world.bodies.kinetic_energy();
    if let Some(d) = drum {
        record_dynamic_angle(d, failure.is_none(), &mut summary);
    }
    record_analysis(
        scene,
        &world,
        settle.as_ref(),
        stopped,
        failure.is_none(),
        &mut summary,
    );
    write_json(out.join("summary.json"), &summary)
        .with_context(|| format!("cannot write {}", out.join("summary.json").display()))?;
    if let Some(msg) = diverged {
        return Err(anyhow::anyhow!(
            "simulation of {} diverged: {msg}; outputs are in {}",
            scene.file,
            out.display()
        ));
    }
    if let Some(e) = failure {
        return Err(anyhow::Error::new(e).context(format!(
            "simulation of {} stopped; outputs up to the failing step are in {}",
            scene.file,
            out.display()
        )));
    }
    log::info!(
        "done: {} steps in {:.1} s wall, outputs in {}",
        summary.steps,
        summary.wall_time_s,
        out.display()
    );
    Ok(summary)
}

/// Writes `final.png`, the picture of the final state (settings from
/// `scene.output.picture`), and logs its path. A picture that cannot be
/// made (non-finite positions after a diverged step) or written is a
/// warning, not an error: the numbers of the run matter more.
fn write_picture(scene: &Scene, world: &crate::world::World, path: &Path) {
    let pic = &scene.output.picture;
    let b = &world.bodies;
    // With analysis.floor given, spheres below it (fallen off a plate) are
    // not part of the pile and would only shrink it in the frame.
    let shown: Vec<usize> = match scene.analysis.floor {
        Some(z) => (0..b.len()).filter(|&i| b.pos[i].z >= z).collect(),
        None => (0..b.len()).collect(),
    };
    if shown.len() < b.len() {
        log::info!(
            "picture: {} spheres below the floor (analysis.floor) left out",
            b.len() - shown.len()
        );
    }
    let pos: Vec<glam::DVec3> = shown.iter().map(|&i| b.pos[i]).collect();
    let vel: Vec<glam::DVec3> = shown.iter().map(|&i| b.vel[i]).collect();
    let radius: Vec<f64> = shown.iter().map(|&i| b.radius[i]).collect();
    let result = pic
        .colour
        .values(&pos, &vel)
        .and_then(|values| {
            let opts = ParticleOptions {
                width: pic.width,
                height: pic.height,
                colour_label: pic.colour.label().to_string(),
                caption: Some(run_caption(&scene.name, world.time, pos.len(), pic.colour)),
                look_along: pic.look_along,
            };
            render_particles(&pos, &radius, &values, &opts)
        })
        .map_err(anyhow::Error::new)
        .and_then(|img| write_png(path, &img).map_err(anyhow::Error::new));
    match result {
        Ok(()) => log::info!("picture of the final state: {}", path.display()),
        Err(e) => log::warn!("no picture of the final state ({}): {e:#}", path.display()),
    }
}

/// Loads a scene file with overrides and runs it.
pub fn run_file(path: &Path, overrides: &[(String, String)], opts: &RunOptions) -> Result<Summary> {
    let scene = Scene::load(path, overrides)?;
    run_scene(&scene, opts)
}

/// Writes the settling record, the floor and (when the scene asks for it
/// and the run did not fail) the heap measurement into `summary.extra`. A
/// heap that cannot be measured is a warning and an
/// `angle_of_repose_error` entry, not a failed run.
fn record_analysis(
    scene: &Scene,
    world: &crate::world::World,
    settle: Option<&SettleDetector>,
    stopped: bool,
    completed: bool,
    summary: &mut Summary,
) {
    let extra = &mut summary.extra;
    let settling = match settle {
        Some(d) => {
            let r = d.report(stopped);
            match r.settle_time_s {
                // A stopped run has said so already.
                Some(t) if !stopped => log::info!("pile settled at t = {t:.4} s"),
                Some(_) => {}
                None if world.inlets.iter().any(|i| !i.finished()) => log::info!(
                    "pile not settled at the end: the inlets were still emitting"
                ),
                None => log::info!(
                    "pile not settled at the end (mean kinetic energy per particle {:.3e} J, threshold {:.3e} J for {:.3} s)",
                    r.ke_per_particle_final_j.unwrap_or(f64::NAN),
                    r.ke_threshold_j,
                    r.hold_s
                ),
            }
            serde_json::to_value(r).unwrap_or(serde_json::Value::Null)
        }
        None => serde_json::Value::Null,
    };
    extra.insert("settling".into(), settling);
    let floor = scene
        .analysis
        .floor
        .or_else(|| scene_floor(&world.boundaries, &world.bodies));
    if let Some(z) = floor {
        extra.insert("floor_z".into(), z.into());
        // The pile's size (seed 001 Fig. 5) needs no fit: recorded whenever
        // the floor is known, even for a layer too flat for an angle.
        if completed && !world.bodies.is_empty() {
            let b = &world.bodies;
            match measure_pile(&b.pos, &b.radius, z) {
                Ok(p) => {
                    log::info!(
                        "pile: height {:.4} m = {:.2} diameters; {} spheres on the floor, mean radius {:.4} m = {:.2} diameters{}",
                        p.height,
                        p.height_over_diameter,
                        p.bottom_spheres,
                        p.bottom_mean_radius,
                        p.bottom_mean_radius_over_diameter,
                        if p.spheres_below_floor > 0 {
                            format!("; {} spheres fell below the floor", p.spheres_below_floor)
                        } else {
                            String::new()
                        }
                    );
                    extra.insert(
                        "pile".into(),
                        serde_json::to_value(p).unwrap_or(serde_json::Value::Null),
                    );
                }
                Err(e) => log::warn!("cannot measure the pile: {e}"),
            }
        }
    }
    let Some(heap) = &scene.analysis.heap else {
        return;
    };
    if !completed {
        log::warn!("the run failed: the heap is not measured");
        return;
    }
    let b = &world.bodies;
    let floor = floor.unwrap_or_else(|| {
        (0..b.len())
            .map(|i| b.pos[i].z - b.radius[i])
            .fold(f64::INFINITY, f64::min)
    });
    match measure_heap(&b.pos, &b.radius, floor, heap) {
        Ok(m) => {
            log::info!(
                "angle of repose ({}): {:.2}° ± {:.2}°; height {:.4} m, base radius {:.4} m, atan(H/R) = {:.2}°",
                m.method.name(),
                m.angle_deg,
                m.angle_stderr_deg,
                m.height,
                m.base_radius,
                m.height_base_angle_deg
            );
            extra.insert(
                "angle_of_repose".into(),
                serde_json::to_value(m).unwrap_or(serde_json::Value::Null),
            );
        }
        Err(e) => {
            log::warn!("cannot measure the heap: {e}");
            extra.insert("angle_of_repose_error".into(), e.to_string().into());
        }
    }
}

/// Seconds between progress log lines when no terminal shows the bar.
const PROGRESS_LOG_SECONDS: f64 = 30.0;

/// The mean grain mass (kg) and radius (m) that scale the settling
/// criterion: over the bodies present at the start and the spheres the
/// inlets will emit (radii uniform in `[radius, radius_max]`, so the mean
/// mass takes E[r³] = (b⁴ − a⁴) / 4(b − a)). Zeros when there are no grains.
fn grain_scales(world: &crate::world::World) -> (f64, f64) {
    let b = &world.bodies;
    let mut n = b.len() as f64;
    let mut mass: f64 = b.inv_mass.iter().map(|im| 1.0 / im).sum();
    let mut radius: f64 = b.radius.iter().sum();
    for inlet in &world.inlets {
        let s = &inlet.settings;
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
    let cylinders = || {
        world
            .boundaries
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
        world.gravity,
    )
    .map_err(|e| anyhow::anyhow!("{}: analysis.drum: {e}", scene.file))?;
    let from = d.from_time.unwrap_or(0.5 * scene.duration);
    Ok(DrumSampler::new(found.name.clone(), frame, d.clone(), from))
}

/// Writes `extra.dynamic_angle` (or `dynamic_angle_error`).
fn record_dynamic_angle(d: DrumSampler, completed: bool, summary: &mut Summary) {
    if !completed {
        log::warn!("the run failed: the dynamic angle is not reported");
        return;
    }
    match d.finish() {
        Ok(a) => {
            log::info!(
                "dynamic angle of drum {:?}: {:.2}° (sd {:.2}° over {} samples from t = {:.3} s to {:.3} s; {} of them rising toward the wall's rising side)",
                a.boundary,
                a.angle_deg,
                a.angle_sd_deg,
                a.samples,
                a.window_s[0],
                a.window_s[1],
                a.samples_rising_with_the_wall
            );
            summary.extra.insert(
                "dynamic_angle".into(),
                serde_json::to_value(a).unwrap_or(serde_json::Value::Null),
            );
        }
        Err(e) => {
            log::warn!("cannot measure the dynamic angle: {e}");
            summary
                .extra
                .insert("dynamic_angle_error".into(), e.to_string().into());
        }
    }
}
