//! Runs stepped together on one GPU (`repose sweep --batch`,
//! `repose::run::batch`): each run's files are those of the run alone on
//! the GPU backend, to the byte, for worlds that differ in friction, size,
//! contact law and tolerance, Jacobi and APGD; each summary says it ran
//! batched and with how many; a run that cannot be a world of a batch is
//! refused with its reason while the others run.
//!
//! The solver-level properties (a batched world's impulses and velocities
//! bit for bit, dispatches and round trips not growing with the worlds) are
//! in `tests/gpu_equivalence/batch.rs`.

use std::fs;
use std::path::Path;

use repose::gpu::{context_for_tests, jacobi::GpuJacobi};
use repose::output::summary::read_summary;
use repose::run::batch::run_batch;
use repose::run::{run_scene, BackendChoice, RunOptions};
use repose::scene::Scene;
use repose::step::GpuState;

/// A column of spheres collapsing on a floor: (spheres per side, layers),
/// friction, rolling friction, law and method vary by run.
fn scene(name: &str, side: u32, layers: u32, extra: &str) -> Scene {
    let text = format!(
        r#"Scene(
    version: 1,
    name: "{name}",
    time_step: 2e-3,
    duration: 0.2,
    {extra}
    spheres: [Lattice(origin: (-0.024, -0.024, 0.012), count: ({side}, {side}, {layers}), spacing: 0.024, radius: 0.01, jitter: 0.05, seed: 1)],
    boundaries: [Plane(name: "floor", point: (0, 0, 0), normal: (0, 0, 1))],
)"#
    );
    Scene::from_str(&text, name, &[]).expect("test scene")
}

fn options(dir: &Path) -> RunOptions {
    RunOptions {
        out_dir: Some(dir.to_owned()),
        no_frames: true,
        no_picture: true,
        backend: BackendChoice::Gpu,
        overwrite: true,
        ..Default::default()
    }
}

fn assert_batched_runs_equal_runs_alone(method: &str) {
    let Some(ctx) = context_for_tests(&format!("batched runs ({method})")) else {
        return;
    };
    let solver = GpuJacobi::new(&ctx).expect("GPU pipelines");
    let mut gpu = GpuState { ctx, solver };
    let tmp = tempfile::tempdir().unwrap();
    let solver =
        |tol: &str| format!("solver: (method: {method}, max_iterations: 200, tolerance: {tol}),");
    let scenes = [
        scene(
            "a",
            3,
            6,
            &format!("{} materials: [(name: \"m\", friction: 0.3, rolling: 0.0)],", solver("1e-4")),
        ),
        scene(
            "b",
            4,
            4,
            &format!(
                "{} materials: [(name: \"m\", friction: 0.6, rolling: 0.002, spinning: 0.002)],",
                solver("1e-5")
            ),
        ),
        scene(
            "c",
            3,
            3,
            &format!(
                "{} materials: [(name: \"m\", friction: 0.5, rolling: 0.001)], contact: (friction_law: DeSaxce),",
                solver("1e-4")
            ),
        ),
    ];
    let alone: Vec<_> = scenes
        .iter()
        .map(|s| {
            let dir = tmp.path().join(format!("alone_{}", s.name));
            run_scene(s, &options(&dir)).expect("run alone");
            dir
        })
        .collect();
    let runs: Vec<_> = scenes
        .iter()
        .map(|s| (s, options(&tmp.path().join(format!("batch_{}", s.name)))))
        .collect();
    let results = run_batch(&runs, &mut gpu);
    for ((s, (_, o)), (r, a)) in scenes.iter().zip(&runs).zip(results.iter().zip(&alone)) {
        let summary = r.as_ref().expect("batched run");
        let dir = o.out_dir.as_ref().unwrap();
        let got = fs::read(dir.join("final.csv")).unwrap();
        let want = fs::read(a.join("final.csv")).unwrap();
        assert!(
            got == want,
            "{method}, scene {}: the batched run's final.csv differs from the run alone",
            s.name
        );
        let solo = read_summary(a.join("summary.json")).unwrap();
        assert_eq!(
            (summary.steps, &summary.solver, &summary.contacts),
            (solo.steps, &solo.solver, &solo.contacts),
            "{method}, scene {}: steps and solver statistics",
            s.name
        );
        assert_eq!(
            summary.extra["batch"]["worlds"], 3,
            "{method}, scene {}: the summary says it ran in a batch of 3",
            s.name
        );
        let written = read_summary(dir.join("summary.json")).unwrap();
        assert_eq!(written.extra["batch"]["worlds"], 3);
        eprintln!(
            "OBSERVED {method}, scene {}: batched = alone ({} steps, {} of them converged, {:.1} iterations a step)",
            s.name,
            summary.steps,
            summary.solver.steps - summary.solver.steps_not_converged,
            summary.solver.iterations_mean
        );
    }
}

#[test]
fn batched_runs_equal_runs_alone_jacobi() {
    assert_batched_runs_equal_runs_alone("Jacobi");
}

#[test]
fn batched_runs_equal_runs_alone_apgd() {
    assert_batched_runs_equal_runs_alone("Apgd");
}

/// A run the GPU cannot step (the penalty formulation) fails with the
/// reason, naming its file; the other world of the batch runs to its end.
#[test]
fn a_run_that_cannot_be_batched_is_refused_with_its_reason() {
    let Some(ctx) = context_for_tests("batch refusal") else {
        return;
    };
    let solver = GpuJacobi::new(&ctx).expect("GPU pipelines");
    let mut gpu = GpuState { ctx, solver };
    let tmp = tempfile::tempdir().unwrap();
    let good = scene("good", 2, 2, "materials: [(name: \"m\", friction: 0.3)],");
    let penalty = scene(
        "penalty",
        2,
        2,
        "formulation: Penalty(normal: Hertz), materials: [(name: \"m\", friction: 0.3)],",
    );
    let runs = vec![
        (&good, options(&tmp.path().join("good"))),
        (&penalty, options(&tmp.path().join("penalty"))),
    ];
    let r = run_batch(&runs, &mut gpu);
    let s = r[0].as_ref().expect("the good run");
    assert_eq!(s.steps, 100, "the good run ran to its end");
    let e = format!(
        "{:#}",
        r[1].as_ref().expect_err("the penalty run is refused")
    );
    for part in ["penalty", "cannot run in a GPU batch", "cpu backend"] {
        assert!(e.contains(part), "the error should say {part:?}: {e}");
    }
}

/// `repose run A.ron B.ron`: on the GPU backend one batch of two worlds,
/// each into OUT/<scene name>, with the files of the runs alone; on the CPU
/// backend one run after the other, not batched.
#[test]
fn repose_run_of_several_scenes_batches_them_on_a_gpu() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, friction: &str| {
        let s = scene(
            name,
            3,
            3,
            &format!("materials: [(name: \"m\", friction: {friction})],"),
        );
        let p = tmp.path().join(format!("{name}.ron"));
        fs::write(&p, s.to_ron().unwrap()).unwrap();
        p
    };
    let (a, b) = (write("first", "0.3"), write("second", "0.7"));
    let run = |backend: &str, out: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_repose"))
            .args([
                "run",
                a.to_str().unwrap(),
                b.to_str().unwrap(),
                "--backend",
                backend,
            ])
            .args([
                "--no-frames",
                "--no-picture",
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap()
    };
    let cpu = tmp.path().join("cpu");
    let out = run("cpu", &cpu);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["first", "second"] {
        let s = read_summary(cpu.join(name).join("summary.json")).unwrap();
        assert_eq!(s.backend, "cpu");
        assert!(
            !s.extra.contains_key("batch"),
            "{name}: not batched on the cpu"
        );
    }
    if context_for_tests("repose run A B --backend gpu").is_none() {
        return;
    }
    let gpu = tmp.path().join("gpu");
    let out = run("gpu", &gpu);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.matches("== ").count(),
        2,
        "one report per scene: {stdout}"
    );
    for name in ["first", "second"] {
        let dir = gpu.join(name);
        let s = read_summary(dir.join("summary.json")).unwrap();
        assert_eq!(s.extra["batch"]["worlds"], 2, "{name}");
        let alone = tmp.path().join(format!("alone_{name}"));
        let scene = Scene::load(&tmp.path().join(format!("{name}.ron")), &[]).unwrap();
        run_scene(&scene, &options(&alone)).unwrap();
        assert!(
            fs::read(dir.join("final.csv")).unwrap() == fs::read(alone.join("final.csv")).unwrap(),
            "{name}: the batched run's final.csv differs from the run alone"
        );
    }
}
