//! Every shipped scene (`scenes/*.ron`, found by listing the directory, so
//! new scenes are picked up) loads, builds and takes 3 steps with its own
//! settings, on the CPU and — when an adapter exists — on the GPU, ending
//! with finite positions and velocities. Scenes with a rotating boundary
//! (a spinning drum) run on the CPU only: the GPU's contact records carry no
//! torque bias, and `repose run` routes them to the CPU (tests/cylinder.rs).

use std::path::{Path, PathBuf};

#[path = "common/shipped.rs"]
mod shipped;

use repose::gpu::context_for_tests;
use repose::scene::Scene;
use repose::step::{Backend, Stepper};

const STEPS: u64 = 3;

fn scene_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .collect();
    files.sort();
    assert!(
        files.iter().any(|p| p.ends_with("sphere_on_plane.ron")),
        "expected the shipped scenes in {}, found {files:?}",
        dir.display()
    );
    files
}

/// Loads `path` as it is (no overrides), builds it and steps it 3 times on
/// `stepper`; returns what went wrong, if anything.
fn three_steps(path: &Path, stepper: &mut Stepper) -> Result<(), String> {
    let scene = shipped::load_shipped(path).map_err(|e| format!("load: {e}"))?;
    let mut world = scene.build().map_err(|e| format!("build: {e}"))?;
    // What only the f64 CPU runs (a spinning wall) is refused by the f32
    // backends with a message: tests/cylinder.rs.
    if stepper.backend.is_f32() && repose::run::f32_blocker(&world).is_some() {
        return Ok(());
    }
    // The f32 backends run Jacobi only: a scene that asks for another method
    // runs there as `--backend gpu --solver jacobi` would run it.
    if stepper.backend.is_f32() {
        world.model.solver.method = repose::solver::SolverMethod::Jacobi;
    }
    let n = world.state.bodies.len();
    let inlets = scene.inlet_count() > 0;
    if n == 0 && !inlets {
        return Err("the scene has no bodies and no inlet".into());
    }
    for k in 0..STEPS {
        stepper
            .step(&mut world)
            .map_err(|e| format!("step {k}: {e}"))?;
    }
    if world.state.step_index != STEPS {
        return Err(format!(
            "step_index: expected {STEPS}, got {}",
            world.state.step_index
        ));
    }
    let t = STEPS as f64 * scene.time_step;
    if (world.state.time - t).abs() > 1e-12 * t.max(1.0) {
        return Err(format!("time: expected {t}, got {}", world.state.time));
    }
    // Inlets add bodies as the run goes; otherwise the count is fixed.
    if (inlets && world.state.bodies.len() < n) || (!inlets && world.state.bodies.len() != n) {
        return Err(format!(
            "bodies: expected {n}, got {}",
            world.state.bodies.len()
        ));
    }
    let b = &world.state.bodies;
    for (what, v) in [
        ("position", &b.pos),
        ("velocity", &b.vel),
        ("spin", &b.omega),
    ] {
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(format!("{what} of body {i} is not finite: {}", v[i]));
        }
    }
    Ok(())
}

fn assert_all_ok(results: Vec<(PathBuf, Result<(), String>)>, backend: &str) {
    let failures: Vec<String> = results
        .iter()
        .filter_map(|(p, r)| {
            r.as_ref()
                .err()
                .map(|e| format!("{}: {e}", p.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} scenes failed {STEPS} steps on {backend}:\n{}",
        failures.len(),
        results.len(),
        failures.join("\n")
    );
}

#[test]
fn every_scene_takes_three_finite_steps_on_the_cpu() {
    let results = scene_files()
        .into_iter()
        .map(|p| {
            let r = three_steps(&p, &mut Stepper::new());
            (p, r)
        })
        .collect();
    assert_all_ok(results, "the CPU");
}

#[test]
fn every_scene_takes_three_finite_steps_on_the_gpu() {
    let name = "scenes::every_scene_takes_three_finite_steps_on_the_gpu";
    if context_for_tests(name).is_none() {
        return;
    }
    let results = scene_files()
        .into_iter()
        .map(|p| {
            let ctx = context_for_tests(name).expect("a GPU adapter was found before");
            let r = match Backend::gpu(ctx) {
                Ok(b) => three_steps(&p, &mut Stepper::with_backend(b)),
                Err(e) => Err(format!("GPU backend: {e}")),
            };
            (p, r)
        })
        .collect();
    assert_all_ok(results, "the GPU");
}

/// Runs `scenes/NAME` whole on the CPU backend into a temporary directory
/// (no frames, no picture): the scene, its summary and the directory.
fn run_whole_on_the_cpu(
    name: &str,
) -> (Scene, repose::output::summary::Summary, tempfile::TempDir) {
    use repose::run::{run_scene, BackendChoice, RunOptions};
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenes")
        .join(name);
    let scene = Scene::load(&path, &[]).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        out_dir: Some(tmp.path().to_owned()),
        no_frames: true,
        no_picture: true,
        backend: BackendChoice::Cpu,
        ..RunOptions::default()
    };
    let s = run_scene(&scene, &opts).unwrap_or_else(|e| panic!("{name} failed: {e:#}"));
    (scene, s, tmp)
}

/// The commented example scene (`scenes/pour.ron`) runs to its end on the CPU, not
/// stopped by a divergence bound or a failing step: 750 steps, every
/// sphere finite and above the floor. (A bound on overlaps once stopped it
/// at step 36, where impacts at h = 2 ms go more than a radius deep.)
#[test]
fn the_pour_example_runs_to_its_end_on_the_cpu() {
    use repose::output::summary::StopReason;
    let (scene, s, tmp) = run_whole_on_the_cpu("pour.ron");
    assert_eq!(s.stopped, StopReason::Completed, "{:?}", s.stop_message);
    assert_eq!(s.steps, scene.steps());
    let rows = repose::output::csv::read_final_csv(tmp.path().join("final.csv")).unwrap();
    assert_eq!(rows.len(), 3136);
    for r in &rows {
        assert!(r.iter().all(|x| x.is_finite()), "{r:?}");
        assert!(r[3] > 0.0, "sphere {} below the floor: z = {}", r[0], r[3]);
    }
}

/// The README's demo (`scenes/pile.ron`) does what the README says with
/// the scene's own settings: the pile settles and stops the run, at least
/// 95 % of the steps meet the solver's tolerance (so the angle does not
/// depend on the iteration cap), and an angle of repose is measured and
/// written to `summary.json`, with a base radius that is the pile's
/// footprint: at least four bead diameters inside the bin's half-width
/// (beads that rolled to the walls, 0.19 m out, do not set it).
#[test]
fn the_demo_pile_settles_converged_and_measures_its_angle() {
    use repose::output::summary::StopReason;
    let (_, s, _tmp) = run_whole_on_the_cpu("pile.ron");
    assert_eq!(s.stopped, StopReason::Settled, "{:?}", s.stop_message);
    let met = s.solver.steps - s.solver.steps_not_converged;
    assert!(
        met as f64 >= 0.95 * s.solver.steps as f64,
        "{met} of {} steps met the tolerance, fewer than 95 %",
        s.solver.steps
    );
    let angle = s
        .extra
        .get("angle_of_repose")
        .and_then(|a| a.get("angle_deg"))
        .and_then(|a| a.as_f64());
    assert!(
        angle.is_some_and(f64::is_finite),
        "no angle measured: {:?}",
        s.extra.get("angle_of_repose_error")
    );
    // scenes/pile.ron: a bin of half-width 0.2 m, beads of radius 5 mm.
    let (half_width, diameter) = (0.2, 0.01);
    let base = s.extra["angle_of_repose"]["base_radius"]
        .as_f64()
        .expect("angle_of_repose.base_radius");
    assert!(
        base > 0.0 && base <= half_width - 4.0 * diameter,
        "base radius {base} m: not inside the pile's footprint (at most {} m)",
        half_width - 4.0 * diameter
    );
}
