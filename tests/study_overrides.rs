//! `repose sweep` and `repose calibrate` with `--set/--solver/--fallback`:
//! overrides that every run of a study takes alike. Each run's `scene.ron`
//! holds them beside its varied or calibrated value, `sweep.json` and
//! `calibrate.json` record them (so shards swept with other overrides do
//! not merge), a path both set and varied (or calibrated) is refused
//! before anything runs, and a bad path is one error naming it.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

#[path = "common/cli.rs"]
mod cli;

use cli::*;

use repose::scene::Scene;
use repose::solver::SolverMethod;
use repose::sweep::Manifest;

/// Twelve spheres dropped on a floor, 25 steps: a run takes milliseconds.
const SMALL: &str = r#"Scene(
    version: 1,
    name: "small",
    time_step: 2e-3,
    duration: 0.05,
    materials: [(name: "glass", friction: 0.3, rolling: 0.0)],
    spheres: [Lattice(origin: (-0.012, -0.012, 0.012), count: (2, 2, 3), spacing: 0.024, radius: 0.01)],
    boundaries: [Plane(name: "floor", point: (0, 0, 0), normal: (0, 0, 1))],
)
"#;

/// `repose sweep SCENE --vary materials.0.friction=0.2,0.4 ARGS --backend
/// cpu --out OUT`.
fn sweep(scene: &Path, out: &Path, args: &[&str]) -> std::process::Output {
    let mut all: Vec<&OsStr> = vec![
        OsStr::new("sweep"),
        scene.as_os_str(),
        OsStr::new("--vary"),
        OsStr::new("materials.0.friction=0.2,0.4"),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--out"),
        out.as_os_str(),
    ];
    all.extend(args.iter().map(OsStr::new));
    repose(all)
}

#[test]
fn every_run_of_a_sweep_takes_the_set_solver_and_fallback_overrides() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("small.ron");
    fs::write(&scene, SMALL).unwrap();
    let out = tmp.path().join("sw");
    let o = sweep(
        &scene,
        &out,
        &[
            "--set",
            "materials.0.rolling=0.001",
            "--solver",
            "pgs",
            "--fallback",
            "interior-point",
        ],
    );
    assert_success(&o, "repose sweep --set --solver --fallback");
    let manifest: Manifest =
        serde_json::from_str(&fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    let mut frictions = Vec::new();
    for dir in manifest.run_dirs.values() {
        let run = Scene::load(&out.join(dir).join("scene.ron"), &[]).unwrap();
        assert_eq!(run.materials[0].rolling, 0.001, "{dir}: rolling not set");
        assert_eq!(run.solver.method, SolverMethod::Pgs, "{dir}: --solver");
        assert_eq!(
            run.solver.fallback,
            Some(SolverMethod::InteriorPoint),
            "{dir}: --fallback"
        );
        frictions.push(run.materials[0].friction);
    }
    frictions.sort_by(f64::total_cmp);
    assert_eq!(frictions, [0.2, 0.4], "the varied values");
    let set: Vec<&str> = manifest.spec.set.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        set,
        ["materials.0.rolling", "solver.method", "solver.fallback"],
        "the manifest records the overrides in order"
    );
}

#[test]
fn a_path_both_set_and_varied_or_unknown_is_one_error_before_any_run() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("small.ron");
    fs::write(&scene, SMALL).unwrap();
    for (args, want) in [
        (
            &["--set", "materials.0.friction=0.5"][..],
            &["--set materials.0.friction", "also varied"][..],
        ),
        // The same path in brackets, or with spaces, is the same path.
        (
            &["--set", "materials[0].friction=0.5"][..],
            &["--set materials[0].friction", "also varied"][..],
        ),
        (
            &["--set", " materials[0] .friction=0.5"][..],
            &["also varied"][..],
        ),
        (
            &["--set", "materials.0.nonsense=1"][..],
            &["materials.0.nonsense", "small.ron"][..],
        ),
        (
            &["--fallback", "simplex"][..],
            &["--fallback", "simplex"][..],
        ),
    ] {
        let out = tmp.path().join("bad");
        let o = sweep(&scene, &out, args);
        assert_one_error(&o, want);
        assert!(
            !out.join("runs").exists(),
            "{args:?}: runs started before the error"
        );
    }
}

/// The small scene with a heap to measure: 54 spheres of a jittered
/// column collapsing on a floor, 125 steps.
const HEAP: &str = r#"Scene(
    version: 1,
    name: "heap",
    time_step: 2e-3,
    duration: 0.25,
    materials: [(name: "glass", friction: 0.3, rolling: 0.0)],
    spheres: [Lattice(origin: (-0.024, -0.024, 0.012), count: (3, 3, 6), spacing: 0.024, radius: 0.01, jitter: 0.05, seed: 1)],
    boundaries: [Plane(name: "floor", point: (0, 0, 0), normal: (0, 0, 1))],
    analysis: (heap: (method: Radial, bin_width: 0.006, min_bins: 3)),
)
"#;

/// `repose calibrate SCENE --param materials.0.friction --range 0.2:0.6
/// --target-angle 20 --max-evals 2 ARGS --backend cpu --out OUT`.
fn calibrate(scene: &Path, out: &Path, args: &[&str]) -> std::process::Output {
    let mut all: Vec<&OsStr> = [
        "calibrate",
        scene.to_str().unwrap(),
        "--param",
        "materials.0.friction",
        "--range",
        "0.2:0.6",
        "--target-angle",
        "20",
        "--max-evals",
        "2",
        "--backend",
        "cpu",
        "--out",
        out.to_str().unwrap(),
    ]
    .into_iter()
    .map(OsStr::new)
    .collect();
    all.extend(args.iter().map(OsStr::new));
    repose(all)
}

#[test]
fn every_run_of_a_calibration_takes_the_set_and_solver_overrides() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("heap.ron");
    fs::write(&scene, HEAP).unwrap();
    let out = tmp.path().join("cal");
    let o = calibrate(
        &scene,
        &out,
        &["--set", "solver.tolerance=1e-5", "--solver", "pgs"],
    );
    // Two points cannot place the root: any outcome but an error will do.
    assert!(
        matches!(o.status.code(), Some(0 | 3 | 4)),
        "expected an outcome, not an error\n{}",
        show(&o)
    );
    let mut runs = 0;
    for point in fs::read_dir(out.join("runs").join("0_heap")).unwrap() {
        let run = Scene::load(&point.unwrap().path().join("seed0").join("scene.ron"), &[]).unwrap();
        assert_eq!(run.solver.tolerance, 1e-5, "--set");
        assert_eq!(run.solver.method, SolverMethod::Pgs, "--solver");
        runs += 1;
    }
    assert_eq!(runs, 2, "the two ends of the range");
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("calibrate.json")).unwrap()).unwrap();
    assert_eq!(
        json["set"],
        serde_json::json!([["solver.tolerance", "1e-5"], ["solver.method", "Pgs"]]),
        "calibrate.json records the overrides"
    );
    let o = calibrate(
        &scene,
        &tmp.path().join("bad"),
        &["--set", "materials.0.friction=0.5"],
    );
    assert_one_error(&o, &["--set materials.0.friction", "calibrated"]);
    let o = calibrate(
        &scene,
        &tmp.path().join("bad2"),
        &["--set", "materials[0].friction=0.5"],
    );
    assert_one_error(&o, &["--set materials[0].friction", "calibrated"]);
}
