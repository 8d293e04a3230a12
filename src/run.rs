//! Running a scene end to end: build the world, step it with a progress bar,
//! write frames (VTU + PVD), `final.csv`, `track.csv` and `summary.json`.
//!
//! Outputs are written as the run goes, each file atomically, so a run that
//! stops with an error (a diverging solver, say) leaves valid files behind.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use crate::gpu::GpuContext;
use crate::material::FrictionLaw;
use crate::output::csv::{write_final_csv, TrackWriter};
use crate::output::summary::{write_json, Summary};
use crate::output::vtk::PvdSeries;
use crate::scene::Scene;
use crate::solver::{SolverMethod, SolverSettings};
use crate::step::{Backend, Stepper};

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

/// Opens the chosen backend for a scene's solver settings, contact law and
/// rotating boundary (the name of the first boundary with a non-zero angular
/// velocity, if any): the f32 and GPU backends run only the Jacobi method
/// under the associated law, and their contact records carry no torque bias,
/// so they cannot see a spinning wall. `auto` then picks the CPU (and says
/// why) and an explicit choice is an error that says what to change.
pub fn open_backend_for(
    choice: BackendChoice,
    solver: &SolverSettings,
    law: FrictionLaw,
    rotating_boundary: Option<&str>,
) -> Result<(Backend, String)> {
    let unsupported = if solver.method != SolverMethod::Jacobi {
        Some(format!("solver method {}", solver.method))
    } else if law != FrictionLaw::Associated {
        Some(format!("friction law {law:?}"))
    } else {
        rotating_boundary.map(|name| format!("the rotating boundary {name:?}"))
    };
    match (choice, unsupported) {
        (BackendChoice::Auto, Some(what)) => Ok((
            Backend::Cpu,
            format!("cpu: the scene uses {what}, which only the cpu backend runs"),
        )),
        (BackendChoice::Gpu | BackendChoice::CpuF32, Some(what)) => anyhow::bail!(
            "--backend {}: the scene uses {what}, but this backend runs only the jacobi method with the Associated law and no rotating boundaries; use --backend cpu",
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
    /// Show a progress bar (only drawn when stderr is a terminal).
    pub progress: bool,
    /// Write no VTU frames (final.csv and summary.json only).
    pub no_frames: bool,
    /// Which solver backend.
    pub backend: BackendChoice,
}

/// Runs `scene` to its duration and writes its outputs; returns the summary
/// (also written as `summary.json`). On a solver failure the outputs so far
/// stay on disk and the error names the step.
pub fn run_scene(scene: &Scene, opts: &RunOptions) -> Result<Summary> {
    let t0 = Instant::now();
    let mut world = scene.build()?;
    let rotating = world
        .boundaries
        .iter()
        .find(|b| b.angular_velocity != glam::DVec3::ZERO)
        .map(|b| b.name.as_str());
    let (backend, why) = open_backend_for(
        opts.backend,
        &world.solver,
        world.contact.friction_law,
        rotating,
    )?;
    let out = opts.out_dir.clone().unwrap_or_else(|| scene.output_dir());
    std::fs::create_dir_all(&out)
        .with_context(|| format!("cannot create output directory {}", out.display()))?;
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
    for k in 1..=steps {
        match stepper.step(&mut world) {
            Ok(rep) => {
                summary.contacts.record(rep.contacts);
                let s = rep.solve;
                summary
                    .solver
                    .record(s.iterations, s.residual_abs, s.residual_rel, s.converged);
                if k % 10 == 0 || k == steps {
                    bar.set_message(format!(
                        "{} contacts, {} it, res {:.1e}",
                        rep.contacts, s.iterations, s.residual_rel
                    ));
                }
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
        let t_out = Instant::now();
        if k % frame_every == 0 || k == steps {
            write_frame(&mut frames, &world)?;
        }
        if let Some(t) = &mut track {
            t.record(world.time, &world.bodies)?;
        }
        summary.add_stage_seconds("output", t_out.elapsed().as_secs_f64());
        bar.inc(1);
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
        let wanted: usize = world.inlets.iter().map(|i| i.count).sum();
        summary
            .extra
            .insert("inlet_emitted".into(), serde_json::Value::from(emitted));
        log::info!("inlets emitted {emitted} of {wanted} spheres");
    }
    summary.steps = world.step_index;
    summary.simulated_time = world.time;
    summary.wall_time_s = t0.elapsed().as_secs_f64();
    for (k, v) in stepper.timers.seconds() {
        summary.add_stage_seconds(&k, v);
    }
    summary.kinetic_energy_final = world.bodies.kinetic_energy();
    write_json(out.join("summary.json"), &summary)
        .with_context(|| format!("cannot write {}", out.join("summary.json").display()))?;
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

/// Loads a scene file with overrides and runs it.
pub fn run_file(path: &Path, overrides: &[(String, String)], opts: &RunOptions) -> Result<Summary> {
    let scene = Scene::load(path, overrides)?;
    run_scene(&scene, opts)
}
