//! The `repose` binary end to end: `run` writes every output file, bad input
//! is one clear error (exit code 1, no panic), a diverging solve stops with
//! the step named and valid outputs left behind, `validate` and `info` work,
//! a run records settling and the heap and can stop once settled, and
//! `measure` re-measures saved output.
//!
//! Scene validation messages themselves are covered at the library level by
//! `tests/scene_errors.rs`; here we check what reaches the terminal.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use glam::DVec2;
use repose::bodies::{Bodies, SphereInit};
use repose::output::csv::{read_final_csv, read_track_csv, write_final_csv};
use repose::output::summary::write_json;
use repose::output::summary::{read_summary, StopReason, Summary};
use repose::scene::Scene;

const BIN: &str = env!("CARGO_BIN_EXE_repose");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scene_path(name: &str) -> PathBuf {
    root().join("scenes").join(name)
}

/// Runs the binary in the repository root, with the default log level.
fn repose<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    repose_with_env(args, &[])
}

fn repose_with_env<I, S>(args: I, env: &[(&str, &str)]) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(root()).env_remove("RUST_LOG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot start {BIN}: {e}"))
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn show(out: &Output) -> String {
    format!(
        "exit status: {}\n--- stdout ---\n{}--- stderr ---\n{}",
        out.status,
        stdout(out),
        stderr(out)
    )
}

fn assert_success(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: expected exit code 0\n{}",
        show(out)
    );
    assert!(
        !stderr(out).contains("panicked"),
        "{what}: a panic was reported\n{}",
        show(out)
    );
}

/// Asserts a failed run with exit code 1 whose stderr is exactly one line
/// `error: …` containing every one of `parts`, and no panic; returns that line.
fn assert_one_error(out: &Output, parts: &[&str]) -> String {
    let err = stderr(out);
    assert!(
        !err.contains("panicked"),
        "expected an error message, got a panic\n{}",
        show(out)
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected exit code 1\n{}",
        show(out)
    );
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "expected exactly one line on stderr, got {}:\n{err}",
        lines.len()
    );
    let line = lines[0];
    assert!(
        line.starts_with("error: "),
        "expected the line to start with \"error: \", got:\n{line}"
    );
    for p in parts {
        assert!(
            line.contains(p),
            "expected the error to contain {p:?}, got:\n{line}"
        );
    }
    line.to_string()
}

/// The text of scenes/sphere_on_plane.ron with `from` (which must occur
/// exactly once) replaced by `to`.
fn sphere_on_plane_with(from: &str, to: &str) -> String {
    let text = fs::read_to_string(scene_path("sphere_on_plane.ron")).unwrap();
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} must occur exactly once in sphere_on_plane.ron"
    );
    text.replace(from, to)
}

/// The 1-based line of `needle` in `text`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in the scene text"))
        + 1
}

/// Writes `text` as `<tmp>/<name>`, runs `repose run` on it on the CPU, and
/// asserts it fails with one error line naming the file and `parts`; also
/// asserts that nothing was written (the output directory was not created).
fn assert_bad_scene(name: &str, text: &str, parts: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    fs::write(&file, text).unwrap();
    let out_dir = dir.path().join("out");
    let out = repose([
        OsStr::new("run"),
        file.as_os_str(),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--out"),
        out_dir.as_os_str(),
    ]);
    let file_s = file.display().to_string();
    let mut all = vec![file_s.as_str()];
    all.extend_from_slice(parts);
    let line = assert_one_error(&out, &all);
    assert!(
        !out_dir.exists(),
        "a rejected scene must write nothing, but {} exists",
        out_dir.display()
    );
    line
}

/// `repose run scenes/sphere_on_plane.ron --backend cpu --out DIR <extra>`.
fn run_sphere_on_plane(out_dir: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<&OsStr> = vec![
        OsStr::new("run"),
        OsStr::new("scenes/sphere_on_plane.ron"),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--out"),
        out_dir.as_os_str(),
    ];
    args.extend(extra.iter().map(OsStr::new));
    repose(args)
}

/// The (time, file) entries of a .pvd collection, in order.
fn pvd_entries(path: &Path) -> Vec<(f64, String)> {
    let text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        text.contains("<Collection>") && text.trim_end().ends_with("</VTKFile>"),
        "{} is not a complete PVD collection:\n{text}",
        path.display()
    );
    let attr = |line: &str, name: &str| -> String {
        let key = format!("{name}=\"");
        let start = line
            .find(&key)
            .unwrap_or_else(|| panic!("no {name}= in {line:?}"))
            + key.len();
        let len = line[start..].find('"').expect("closing quote");
        line[start..start + len].to_string()
    };
    text.lines()
        .filter(|l| l.contains("<DataSet"))
        .map(|l| {
            let t = attr(l, "timestep");
            let t: f64 = t
                .parse()
                .unwrap_or_else(|e| panic!("timestep {t:?} in {l:?}: {e}"));
            (t, attr(l, "file"))
        })
        .collect()
}

/// Asserts the frame series in `dir` is consistent: frames.pvd lists exactly
/// the frame_*.vtu files present, each a complete VTU file, with strictly
/// increasing times, and no temporary file is left; returns the entries.
fn assert_valid_frame_series(dir: &Path) -> Vec<(f64, String)> {
    let entries = pvd_entries(&dir.join("frames.pvd"));
    for w in entries.windows(2) {
        assert!(
            w[1].0 > w[0].0,
            "frame times must increase: {:?} then {:?}",
            w[0],
            w[1]
        );
    }
    let mut listed: Vec<String> = entries.iter().map(|(_, f)| f.clone()).collect();
    for f in &listed {
        let p = dir.join(f);
        let text = fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("frames.pvd lists {f}, which cannot be read: {e}"));
        assert!(
            text.starts_with("<?xml") && text.trim_end().ends_with("</VTKFile>"),
            "{f} is not a complete VTU file"
        );
    }
    let mut present: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("frame_") && n.ends_with(".vtu"))
        .collect();
    listed.sort();
    present.sort();
    assert_eq!(
        listed, present,
        "frames.pvd (left) must list exactly the frame files present (right)"
    );
    let tmp: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(tmp.is_empty(), "temporary files left behind: {tmp:?}");
    entries
}

fn summary_of(dir: &Path) -> Summary {
    read_summary(dir.join("summary.json"))
        .unwrap_or_else(|e| panic!("summary.json does not parse: {e}"))
}

#[test]
fn run_cpu_writes_frames_final_csv_summary_scene_and_track() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let out = run_sphere_on_plane(&dir, &[]);
    assert_success(&out, "repose run sphere_on_plane --backend cpu");

    // summary.json
    let s = summary_of(&dir);
    assert_eq!(s.scene, "sphere_on_plane");
    assert_eq!(s.scene_file, "scenes/sphere_on_plane.ron");
    assert_eq!(s.backend, "cpu");
    assert_eq!(s.steps, 1000, "steps: 1.0 s at h = 1e-3 s");
    assert!(
        (s.simulated_time - 1.0).abs() < 1e-9,
        "simulated_time: expected 1.0, got {}",
        s.simulated_time
    );
    assert_eq!(s.bodies, 1);
    assert_eq!(s.contacts.steps, 1000, "contact statistics over every step");
    assert_eq!(s.solver.steps, 1000, "solver statistics over every step");
    assert_eq!(s.repose_version, env!("CARGO_PKG_VERSION"));

    // frames: one at t = 0 and one every 0.02 s (the default 50 frames).
    let frames = assert_valid_frame_series(&dir);
    assert_eq!(frames.len(), 51, "frames: expected 51, got {frames:?}");
    assert_eq!(frames[0], (0.0, "frame_00000.vtu".to_string()));
    assert!(
        (frames[50].0 - 1.0).abs() < 1e-9,
        "last frame time: expected 1.0, got {}",
        frames[50].0
    );

    // final.csv: the sphere still rests on the plane.
    let rows = read_final_csv(dir.join("final.csv")).unwrap();
    assert_eq!(rows.len(), 1, "final.csv rows");
    let r = rows[0];
    assert_eq!(r[0], 0.0, "id");
    assert!(r.iter().all(|x| x.is_finite()), "final.csv: {r:?}");
    assert!(
        (r[3] - 0.05).abs() < 1e-4,
        "final z: expected 0.05 (resting), got {}",
        r[3]
    );
    assert_eq!(r[10], 0.05, "radius");

    // scene.ron parses back to the scene that ran.
    let ran = Scene::load(&dir.join("scene.ron"), &[])
        .unwrap_or_else(|e| panic!("scene.ron does not load back: {e}"));
    let mut original = Scene::load(&scene_path("sphere_on_plane.ron"), &[]).unwrap();
    original.file = ran.file.clone();
    assert_eq!(ran, original, "scene.ron (left) vs the scene file (right)");

    // track.csv: body 0 at t = 0 and after every step.
    let track = read_track_csv(dir.join("track.csv")).unwrap();
    assert_eq!(track.len(), 1001, "track.csv rows");
    assert!(track.iter().all(|row| row[1] == 0.0), "only body 0 tracked");
    assert_eq!(track[0][0], 0.0, "first track time");
    assert!(
        track.windows(2).all(|w| w[1][0] > w[0][0]),
        "track times must increase"
    );
    // The last tracked state is the final state.
    assert_eq!(&track[1000][2..], &r[1..10], "last track row vs final.csv");
}

#[test]
fn run_applies_set_overrides_and_no_frames_writes_no_frames() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let out = run_sphere_on_plane(
        &dir,
        &[
            "--set",
            "duration=0.01",
            "--set",
            "materials.0.friction=0.3",
            "--no-frames",
        ],
    );
    assert_success(&out, "repose run with --set and --no-frames");
    let s = summary_of(&dir);
    assert_eq!(s.steps, 10, "steps with duration=0.01");
    let ran = Scene::load(&dir.join("scene.ron"), &[]).unwrap();
    assert_eq!(
        ran.duration, 0.01,
        "scene.ron records the overridden duration"
    );
    assert_eq!(
        ran.materials[0].friction, 0.3,
        "scene.ron records the overridden friction"
    );
    assert!(dir.join("final.csv").exists(), "final.csv is written");
    let vtk: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".vtu") || n.ends_with(".pvd"))
        .collect();
    assert!(vtk.is_empty(), "--no-frames wrote {vtk:?}");
}

#[test]
fn malformed_ron_is_one_error_with_file_line_and_column() {
    let text = sphere_on_plane_with("duration: 1.0,", "duration: 1.0,,");
    let line = line_of(&text, "duration: 1.0,,");
    let msg = assert_bad_scene("malformed.ron", &text, &[]);
    let at = format!("malformed.ron:{line}:");
    assert!(msg.contains(&at), "expected the position {at:?} in:\n{msg}");
}

#[test]
fn unknown_field_is_one_error_naming_the_field_and_its_position() {
    let text = sphere_on_plane_with(
        "name: \"sphere_on_plane\",",
        "name: \"sphere_on_plane\", colour: 3,",
    );
    let line = line_of(&text, "colour");
    let at = format!("unknown_field.ron:{line}:");
    assert_bad_scene(
        "unknown_field.ron",
        &text,
        &[&at, "Unexpected field named `colour`"],
    );
}

#[test]
fn negative_radius_is_one_error_naming_the_field() {
    let text = sphere_on_plane_with("radius: 0.05,", "radius: -0.05,");
    assert_bad_scene(
        "negative_radius.ron",
        &text,
        &["spheres[0].radius", "must be > 0 (got -0.05)"],
    );
}

#[test]
fn nan_is_one_error_naming_the_field() {
    let text = sphere_on_plane_with("radius: 0.05,", "radius: NaN,");
    assert_bad_scene(
        "nan.ron",
        &text,
        &["spheres[0].radius", "must be a finite number (got NaN)"],
    );
}

#[test]
fn negative_friction_is_one_error_naming_the_field() {
    let text = sphere_on_plane_with("friction: 0.5,", "friction: -0.5,");
    assert_bad_scene(
        "negative_mu.ron",
        &text,
        &["materials[0].friction", "must be ≥ 0 (got -0.5)"],
    );
}

#[test]
fn zero_time_step_is_one_error_naming_the_field() {
    let text = sphere_on_plane_with("time_step: 1e-3,", "time_step: 0.0,");
    assert_bad_scene("zero_h.ron", &text, &["time_step", "must be > 0 (got 0)"]);
}

#[test]
fn negative_time_step_is_one_error_naming_the_field() {
    let text = sphere_on_plane_with("time_step: 1e-3,", "time_step: -1e-3,");
    assert_bad_scene(
        "negative_h.ron",
        &text,
        &["time_step", "must be > 0 (got -0.001)"],
    );
}

#[test]
fn sphere_outside_its_boundary_is_one_error_naming_sphere_and_boundary() {
    let text = sphere_on_plane_with("pos: (0.0, 0.0, 0.05)", "pos: (0.0, 0.0, -0.5)");
    assert_bad_scene(
        "outside.ron",
        &text,
        &[
            "spheres[0]",
            "is outside boundary \"floor\"",
            "boundaries[0]",
        ],
    );
}

#[test]
fn missing_scene_file_is_one_error_naming_the_file_and_the_reason_once() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("no_such_scene.ron");
    let out = repose([
        OsStr::new("run"),
        file.as_os_str(),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--out"),
        tmp.path().join("out").as_os_str(),
    ]);
    let file_s = file.display().to_string();
    let msg = assert_one_error(&out, &[&file_s, "cannot read the scene file"]);
    // What the operating system says, e.g. "No such file or directory (os error 2)".
    let reason = fs::read_to_string(&file).unwrap_err().to_string();
    assert_eq!(
        msg.matches(&reason).count(),
        1,
        "expected the reason {reason:?} exactly once in:\n{msg}"
    );
}

#[test]
fn unknown_set_path_is_one_error_listing_the_available_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_sphere_on_plane(&tmp.path().join("out"), &["--set", "solver.omegaa=1"]);
    assert_one_error(
        &out,
        &[
            "scenes/sphere_on_plane.ron",
            "--set solver.omegaa=1",
            "no key `omegaa` at `solver`",
            "available keys:",
            "omega",
        ],
    );
}

#[test]
fn set_without_equals_is_one_error_saying_the_expected_form() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_sphere_on_plane(&tmp.path().join("out"), &["--set", "solver.omega"]);
    assert_one_error(&out, &["--set", "solver.omega", "expected path=value"]);
}

#[test]
fn set_of_a_non_number_is_one_error_naming_the_path_and_value() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_sphere_on_plane(&tmp.path().join("out"), &["--set", "solver.omega=abc"]);
    assert_one_error(
        &out,
        &[
            "scenes/sphere_on_plane.ron",
            "solver.omega=abc",
            "expects a finite number",
        ],
    );
}

#[test]
fn set_of_an_invalid_value_is_one_error_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_sphere_on_plane(&tmp.path().join("out"), &["--set", "solver.omega=-1"]);
    assert_one_error(
        &out,
        &[
            "scenes/sphere_on_plane.ron",
            "solver.omega",
            "must be > 0 (got -1)",
        ],
    );
}

#[test]
fn gpu_backend_without_an_adapter_is_one_clear_error() {
    // wgpu is built with its Vulkan backend only; asking for Metal hides every adapter.
    let tmp = tempfile::tempdir().unwrap();
    let out = repose_with_env(
        [
            "run",
            "scenes/sphere_on_plane.ron",
            "--backend",
            "gpu",
            "--set",
            "duration=0.01",
            "--out",
            tmp.path().join("out").to_str().unwrap(),
        ],
        &[("WGPU_BACKEND", "metal")],
    );
    assert_one_error(&out, &["--backend gpu", "no GPU adapter found"]);
}

/// A column of 10 spheres with the Jacobi step scale ω = 80 (far past the
/// convergent range (0, 2)): the first step's impulses blow up to ~1e160,
/// whose squares overflow the residual — a genuine divergence, caught in
/// that step (before, the second step's NaN velocities caught it).
#[test]
fn diverging_solve_exits_nonzero_naming_the_step_and_leaves_valid_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let out = repose([
        OsStr::new("run"),
        OsStr::new("scenes/column.ron"),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--set"),
        OsStr::new("solver.omega=80"),
        OsStr::new("--set"),
        OsStr::new("duration=0.01"),
        OsStr::new("--set"),
        OsStr::new("output.frame_interval=0.001"),
        OsStr::new("--out"),
        dir.as_os_str(),
    ]);
    // stderr: the log lines of the run, then one error line.
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "a panic:\n{}", show(&out));
    assert_eq!(out.status.code(), Some(1), "exit code\n{}", show(&out));
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "expected one error line in:\n{err}");
    let msg = errors[0];
    for p in ["scenes/column.ron", "is not finite", "diverged"] {
        assert!(msg.contains(p), "expected {p:?} in:\n{msg}");
    }
    let step: u64 = msg
        .split(": step ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("expected \": step N (t = …)\" in:\n{msg}"));
    assert!(
        (0..10).contains(&step),
        "expected the solve to diverge before the end, at step {step}"
    );

    // summary.json parses, says the run failed and why, and counts the
    // completed steps (0..step).
    let s = summary_of(&dir);
    assert_eq!(s.stopped, StopReason::Failed, "summary.stopped");
    let why = s.stop_message.as_deref().unwrap_or("");
    assert!(
        why.contains("is not finite"),
        "summary.stop_message: {why:?}"
    );
    assert_eq!(
        s.steps, step,
        "summary steps: expected the {step} steps before the failing one"
    );
    assert!(
        (s.simulated_time - step as f64 * 1e-3).abs() < 1e-12,
        "simulated_time: expected {}, got {}",
        step as f64 * 1e-3,
        s.simulated_time
    );

    // frames.pvd lists only existing, complete frames: t = 0 and one per completed step.
    let frames = assert_valid_frame_series(&dir);
    assert_eq!(
        frames.len() as u64,
        step + 1,
        "frames: expected {} (t = 0 and after each completed step), got {frames:?}",
        step + 1
    );

    // final.csv holds the last completed step's state: finite, and equal to
    // the last rows of track.csv (bodies 0 and 9).
    let rows = read_final_csv(dir.join("final.csv")).unwrap();
    assert_eq!(rows.len(), 10, "final.csv rows");
    for r in &rows {
        assert!(
            r.iter().all(|x| x.is_finite()),
            "final.csv must hold the last good (finite) state, got {r:?}"
        );
    }
    let track = read_track_csv(dir.join("track.csv")).unwrap();
    let last_t = track.last().expect("track rows")[0];
    assert!(
        (last_t - s.simulated_time).abs() < 1e-12,
        "last track time: expected {}, got {last_t}",
        s.simulated_time
    );
    for row in track.iter().filter(|r| r[0] == last_t) {
        let id = row[1] as usize;
        assert_eq!(
            &row[2..],
            &rows[id][1..10],
            "body {id}: last track row (left) vs final.csv (right)"
        );
    }
    assert!(dir.join("scene.ron").exists(), "scene.ron is written");
}

/// Runs `repose run SCENE --backend cpu --no-picture --out DIR`, which must
/// fail with exit code 1 and no panic; returns its stderr.
fn run_failing_cpu(scene: &Path, dir: &Path) -> String {
    let out = repose([
        OsStr::new("run"),
        scene.as_os_str(),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--no-picture"),
        OsStr::new("--out"),
        dir.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1), "exit code\n{}", show(&out));
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "a panic:\n{}", show(&out));
    err
}

/// A sphere thrown at 1e308 m/s with nothing to hit: its position
/// overflows after about 1,800 steps of 1 ms. The run must stop there with
/// the step, the body and the quantity named, exit 1, and leave outputs of
/// the last finite step, with `summary.json` saying it diverged.
#[test]
fn non_finite_state_stops_the_run_as_diverged_naming_body_and_quantity() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("runaway.ron");
    fs::write(
        &scene,
        r#"Scene(
    version: 1,
    name: "runaway",
    time_step: 1e-3,
    duration: 2.0,
    materials: [(name: "plain", friction: 0.5, rolling: 0.0, spinning: 0.0, density: 1000.0)],
    spheres: [Sphere(pos: (0.0, 0.0, 1.0), radius: 0.05, material: 0, velocity: (1e308, 0.0, 0.0))],
    boundaries: [],
    output: (track: [0]),
)"#,
    )
    .unwrap();
    let dir = tmp.path().join("out");
    let err = run_failing_cpu(&scene, &dir);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "expected one error line in:\n{err}");
    let msg = errors[0];
    for p in ["runaway.ron", "diverged", "non-finite", "body 0's position"] {
        assert!(msg.contains(p), "expected {p:?} in:\n{msg}");
    }
    // x after k steps is k · 1e305 m: the first step past f64::MAX ≈ 1.8e308.
    let expected = (f64::MAX / 1e305).floor() as u64 + 1;
    assert!(
        msg.contains(&format!("step {expected} ")),
        "expected the overflow at step {expected} in:\n{msg}"
    );
    let s = summary_of(&dir);
    assert_eq!(s.stopped, StopReason::Diverged, "summary.stopped");
    assert_eq!(s.steps, expected - 1, "summary.steps: the last finite step");
    let rows = read_final_csv(dir.join("final.csv")).unwrap();
    assert!(
        rows.iter().flatten().all(|x| x.is_finite()),
        "final.csv must hold the last finite state, got {rows:?}"
    );
    assert_valid_frame_series(&dir);
}

/// A sphere at 1.3 km/s in a closed box with h = 0.1 s: it crosses the
/// wall between two contact detections (tunnelling). The run is warned
/// about before it starts, and stops as diverged at the step where the
/// sphere is outside the box, naming the body, the box and the cause; the
/// outputs are whole and hold that step.
#[test]
fn a_body_that_leaves_its_closed_container_stops_the_run_as_diverged() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("tunnel.ron");
    fs::write(
        &scene,
        r#"Scene(
    version: 1,
    name: "tunnel",
    time_step: 0.1,
    duration: 1.0,
    materials: [(name: "plain", friction: 0.5, rolling: 0.0, spinning: 0.0, density: 1000.0)],
    spheres: [Sphere(pos: (0.0, 0.0, 0.5), radius: 0.05, material: 0, velocity: (1300.0, 0.0, 0.0))],
    boundaries: [Box(name: "crate", center: (0.0, 0.0, 0.5), half_extents: (0.5, 0.5, 0.5), open_top: false, material: 0)],
    output: (track: [0]),
)"#,
    )
    .unwrap();
    let dir = tmp.path().join("out");
    let err = run_failing_cpu(&scene, &dir);
    assert!(err.contains("tunnelling risk: sphere 0"), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "expected one error line in:\n{err}");
    for p in [
        "diverged",
        "step 1 ",
        "body 0",
        "left the closed container crate",
        "tunnelling",
    ] {
        assert!(errors[0].contains(p), "expected {p:?} in:\n{}", errors[0]);
    }
    let s = summary_of(&dir);
    assert_eq!(s.stopped, StopReason::Diverged);
    assert!(s
        .stop_message
        .as_deref()
        .is_some_and(|m| m.contains("left the closed container")));
    assert_eq!(s.steps, 1, "the outputs hold the step where it left");
    let rows = read_final_csv(dir.join("final.csv")).unwrap();
    assert_eq!(rows.len(), 1);
    assert!(
        rows[0][1] > 0.5,
        "final.csv holds the sphere outside the box: x = {}",
        rows[0][1]
    );
    read_track_csv(dir.join("track.csv")).unwrap();
    assert_valid_frame_series(&dir);
}

/// Starts `repose run ARGS --out DIR` in the background (stdout and stderr
/// captured, or discarded) and returns once it is stepping: its first frame
/// is written just before step 1.
fn spawn_stepping_run(args: &[&OsStr], dir: &Path, capture: bool) -> std::process::Child {
    let io = || {
        if capture {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        }
    };
    let child = Command::new(BIN)
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(dir)
        .current_dir(root())
        .env_remove("RUST_LOG")
        .stdout(io())
        .stderr(io())
        .spawn()
        .expect("start repose");
    let start = std::time::Instant::now();
    while !dir.join("frame_00000.vtu").exists() {
        assert!(
            start.elapsed().as_secs() < 60,
            "the run did not start within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child
}

/// SIGINT during a run: it stops after the step in progress, writes
/// complete outputs for that step, says `"stopped": "interrupted"` and
/// exits with 130 (the shell's code for Ctrl-C).
#[test]
fn sigint_stops_after_a_step_with_complete_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let child = spawn_stepping_run(
        &[
            OsStr::new("scenes/repose_small.ron"),
            OsStr::new("--backend"),
            OsStr::new("cpu"),
        ],
        &dir,
        true,
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(kill.success(), "kill -INT failed");
    let out = child.wait_with_output().expect("wait for repose");
    assert_eq!(out.status.code(), Some(130), "exit code\n{}", show(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", show(&out));
    assert!(
        stdout(&out).contains("interrupted after step"),
        "{}",
        show(&out)
    );
    let s = summary_of(&dir);
    assert_eq!(s.stopped, StopReason::Interrupted, "summary.stopped");
    let total = 2000; // 4 s at 2 ms
    assert!(
        s.steps > 0 && s.steps < total,
        "expected a run stopped part way, got {} of {total} steps",
        s.steps
    );
    let rows = read_final_csv(dir.join("final.csv")).unwrap();
    assert_eq!(rows.len(), s.bodies, "final.csv rows vs summary.bodies");
    assert!(rows.iter().flatten().all(|x| x.is_finite()));
    assert!(dir.join("final.png").exists(), "final.png is written");
    let frames = assert_valid_frame_series(&dir);
    let last = frames.last().expect("frames").0;
    assert!(
        last <= s.simulated_time + 1e-12,
        "last frame at t = {last} after the stop at {}",
        s.simulated_time
    );
}

/// SIGKILL at several moments of a run: whatever is on disk is whole —
/// `track.csv` ends on a row boundary and parses, `frames.pvd` is a complete
/// collection whose every listed frame is a complete VTU file (at most the
/// newest frame file may be missing from it). A temporary left by the kill
/// is removed by the next run into the directory.
#[test]
fn sigkill_at_any_moment_leaves_whole_files() {
    let tmp = tempfile::tempdir().unwrap();
    let text = fs::read_to_string(scene_path("repose_small.ron")).unwrap();
    let from = "output: (frame_interval: 0.1),";
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} in repose_small.ron"
    );
    let scene = tmp.path().join("tracked.ron");
    fs::write(
        &scene,
        text.replace(
            from,
            "output: (frame_interval: 0.004, track: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),",
        ),
    )
    .unwrap();
    for (k, delay_ms) in [150u64, 600, 1500].into_iter().enumerate() {
        let dir = tmp.path().join(format!("out{k}"));
        let mut child = spawn_stepping_run(
            &[
                scene.as_os_str(),
                OsStr::new("--backend"),
                OsStr::new("cpu"),
                OsStr::new("--no-picture"),
            ],
            &dir,
            false,
        );
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        child.kill().expect("SIGKILL");
        child.wait().expect("wait");
        let track = read_track_csv(dir.join("track.csv"))
            .unwrap_or_else(|e| panic!("killed after {delay_ms} ms: track.csv: {e}"));
        assert!(track.iter().flatten().all(|x| x.is_finite()));
        let listed = pvd_entries(&dir.join("frames.pvd"));
        for (_, f) in &listed {
            let t = fs::read_to_string(dir.join(f))
                .unwrap_or_else(|e| panic!("frames.pvd lists {f}: {e}"));
            assert!(t.trim_end().ends_with("</VTKFile>"), "{f} is incomplete");
        }
        let on_disk = fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with("frame_") && n.ends_with(".vtu")
            })
            .count();
        assert!(
            on_disk == listed.len() || on_disk == listed.len() + 1,
            "killed after {delay_ms} ms: {on_disk} frame files, {} listed",
            listed.len()
        );
    }
    // A temporary as a kill leaves it, and a file of the user's. A new run
    // into that directory is refused (the two runs' files would mix) and
    // changes nothing; with --overwrite it replaces the old run's files,
    // temporaries and surplus frames included, and keeps the user's.
    let dir = tmp.path().join("out2");
    fs::write(dir.join("frame_00007.vtu.tmp"), "half a frame").unwrap();
    fs::write(
        dir.join("frame_00042.vtu"),
        "a frame past the new run's last",
    )
    .unwrap();
    fs::write(dir.join("notes.txt"), "mine").unwrap();
    let before = fs::read_dir(&dir).unwrap().count();
    let out = run_sphere_on_plane(&dir, &["--set", "duration=0.01"]);
    assert_one_error(
        &out,
        &[
            dir.to_str().unwrap(),
            "holds the outputs of another run",
            "--overwrite",
        ],
    );
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        before,
        "a refused run changes nothing"
    );
    let out = run_sphere_on_plane(&dir, &["--set", "duration=0.01", "--overwrite"]);
    assert_success(&out, "a run with --overwrite into a killed run's directory");
    assert!(
        !dir.join("frame_00007.vtu.tmp").exists(),
        "the stray temporary must be removed"
    );
    assert_eq!(fs::read_to_string(dir.join("notes.txt")).unwrap(), "mine");
    // 10 steps of 1 ms, a frame after each and one at t = 0; the series
    // check also finds any old frame left beside them (frame_00042.vtu).
    let frames = assert_valid_frame_series(&dir);
    assert_eq!(frames.len(), 11, "the new run's frames only: {frames:?}");
}

#[test]
fn validate_cpu_passes_every_case() {
    let out = repose(["validate", "--backend", "cpu"]);
    assert_success(&out, "repose validate --backend cpu");
    let text = stdout(&out);
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let (passed, rest) = last.split_once(" passed, ").unwrap_or_else(|| {
        panic!("expected \"N passed, 0 failed\" as the last line, got {last:?}")
    });
    let n: usize = passed
        .parse()
        .unwrap_or_else(|_| panic!("expected a count before \"passed\" in {last:?}"));
    assert!(n > 0, "no validation case ran: {last:?}");
    assert_eq!(rest, "0 failed", "last line: {last:?}");
    assert!(!text.contains("FAIL"), "a case failed:\n{text}");
}

#[test]
fn info_prints_the_version() {
    let out = repose(["info"]);
    assert_success(&out, "repose info");
    let want = format!("repose {}", env!("CARGO_PKG_VERSION"));
    assert!(
        stdout(&out).lines().any(|l| l == want),
        "expected a line {want:?} in:\n{}",
        stdout(&out)
    );
}

#[test]
fn version_flag_prints_the_version() {
    let out = repose(["--version"]);
    assert_success(&out, "repose --version");
    let want = format!("repose {}", env!("CARGO_PKG_VERSION"));
    assert_eq!(stdout(&out).trim(), want);
}

#[test]
fn run_gpu_records_a_gpu_backend_in_the_summary() {
    let Some(ctx) =
        repose::gpu::context_for_tests("cli::run_gpu_records_a_gpu_backend_in_the_summary")
    else {
        return;
    };
    drop(ctx);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let out = repose([
        OsStr::new("run"),
        OsStr::new("scenes/sphere_on_plane.ron"),
        OsStr::new("--backend"),
        OsStr::new("gpu"),
        OsStr::new("--set"),
        OsStr::new("duration=0.05"),
        OsStr::new("--out"),
        dir.as_os_str(),
    ]);
    assert_success(&out, "repose run --backend gpu");
    let s = summary_of(&dir);
    assert!(
        s.backend.starts_with("gpu"),
        "backend: expected \"gpu (…)\", got {:?}",
        s.backend
    );
    assert_eq!(s.steps, 50);
    let rows = read_final_csv(dir.join("final.csv")).unwrap();
    assert!(
        (rows[0][3] - 0.05).abs() < 1e-4,
        "final z on the GPU: expected 0.05 (resting), got {}",
        rows[0][3]
    );
    assert_valid_frame_series(&dir);
}

/// A directory holding a synthetic 30° cone (apex 0.2 m, floor at
/// z = 0.5) as `final.csv` and a `summary.json` that records the floor and
/// one field of its own, as a run would leave them.
fn saved_cone_run(dir: &Path) {
    let (p, _) = common::cone(30.0, 0.2, DVec2::ZERO);
    let r = common::R;
    let inits: Vec<SphereInit> = p
        .iter()
        .map(|q| SphereInit {
            pos: *q + glam::DVec3::Z * 0.5,
            radius: r,
            mass: 1e-3,
            inertia: 4e-8,
            vel: glam::DVec3::ZERO,
            omega: glam::DVec3::ZERO,
            material: 0,
        })
        .collect();
    fs::create_dir_all(dir).unwrap();
    write_final_csv(dir.join("final.csv"), &Bodies::from_inits(&inits)).unwrap();
    let mut s = Summary::new("cone", "cone.ron", "cpu");
    s.extra.insert("floor_z".into(), 0.5.into());
    s.extra.insert("note".into(), "kept".into());
    write_json(dir.join("summary.json"), &s).unwrap();
}

#[test]
fn measure_finds_the_angle_of_a_saved_cone_and_records_it_in_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cone");
    saved_cone_run(&dir);
    let out = repose([OsStr::new("measure"), dir.as_os_str(), OsStr::new("--json")]);
    assert_success(&out, "repose measure --json");
    let printed: serde_json::Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", show(&out)));
    let angle = printed["angle_deg"].as_f64().unwrap();
    assert!(
        (angle - 30.0).abs() <= 1.0,
        "measured {angle}°, true 30°\n{}",
        show(&out)
    );
    assert_eq!(
        printed["floor_z"].as_f64(),
        Some(0.5),
        "floor from summary.json"
    );
    let s = summary_of(&dir);
    assert_eq!(
        s.extra["angle_of_repose"], printed,
        "summary.json records what was printed"
    );
    assert_eq!(s.extra["note"], "kept", "other summary fields are kept");
    assert_eq!(s.scene, "cone");
    assert!(
        !dir.join("summary.json.tmp").exists(),
        "no temporary file left"
    );

    // The readable report, and --method overriding the recorded method.
    let out = repose([
        OsStr::new("measure"),
        dir.as_os_str(),
        OsStr::new("--method"),
        OsStr::new("x"),
    ]);
    assert_success(&out, "repose measure --method x");
    let text = stdout(&out);
    for p in [
        "angle of repose:",
        "(planar-x method)",
        "left",
        "right",
        "base radius:",
        "floor z = 0.5",
    ] {
        assert!(text.contains(p), "expected {p:?} in the report:\n{text}");
    }
    let s = summary_of(&dir);
    assert_eq!(s.extra["angle_of_repose"]["method"]["Planar"]["axis"], "X");
}

#[test]
fn measure_without_or_with_a_malformed_input_file_is_one_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cone");
    saved_cone_run(&dir);

    fs::write(dir.join("summary.json"), "{ \"scene\": ").unwrap();
    let out = repose([OsStr::new("measure"), dir.as_os_str()]);
    assert_one_error(&out, &["summary.json", "not valid JSON"]);

    fs::remove_file(dir.join("summary.json")).unwrap();
    let out = repose([OsStr::new("measure"), dir.as_os_str()]);
    assert_one_error(&out, &["summary.json", "cannot read"]);

    fs::write(
        dir.join("final.csv"),
        "id,x,y,z,vx,vy,vz,wx,wy,wz,radius\n0,1,2\n",
    )
    .unwrap();
    let out = repose([OsStr::new("measure"), dir.as_os_str()]);
    assert_one_error(&out, &["final.csv:2", "expected 11"]);

    fs::remove_file(dir.join("final.csv")).unwrap();
    let out = repose([OsStr::new("measure"), dir.as_os_str()]);
    assert_one_error(&out, &["final.csv", "No such file"]);
}

#[test]
fn measure_of_a_single_sphere_is_one_error_saying_why() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("one");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("final.csv"),
        "id,x,y,z,vx,vy,vz,wx,wy,wz,radius\n0,0,0,0.01,0,0,0,0,0,0,0.01\n",
    )
    .unwrap();
    write_json(
        dir.join("summary.json"),
        &Summary::new("one", "one.ron", "cpu"),
    )
    .unwrap();
    let out = repose([OsStr::new("measure"), dir.as_os_str()]);
    assert_one_error(&out, &["final.csv", "too few profile bins"]);
}

/// A layer of 10 × 10 spheres resting on a floor: it is settled from the
/// start, so with `stop_when_settled` the run ends one hold time
/// (5 √(r/g) = 0.16 s) in, and its heap is flat.
#[test]
fn run_stops_when_settled_and_records_settling_and_the_heap() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("layer.ron");
    fs::write(
        &scene,
        r#"Scene(
    version: 1,
    name: "layer",
    time_step: 1e-3,
    duration: 1.0,
    materials: [(name: "glass", friction: 0.5, rolling: 0.001)],
    spheres: [Lattice(origin: (-0.1, -0.1, 0.01), count: (10, 10, 1), spacing: 0.021, radius: 0.01)],
    boundaries: [Plane(name: "floor", point: (0, 0, 0), normal: (0, 0, 1))],
    analysis: (heap: (method: Radial), stop_when_settled: true),
)
"#,
    )
    .unwrap();
    let dir = tmp.path().join("out");
    let out = repose([
        OsStr::new("run"),
        scene.as_os_str(),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--no-frames"),
        OsStr::new("--out"),
        dir.as_os_str(),
    ]);
    assert_success(&out, "repose run with analysis");
    assert!(
        stderr(&out).contains("stop_when_settled"),
        "the log says why the run stopped\n{}",
        show(&out)
    );
    let s = summary_of(&dir);
    let hold = 5.0 * (0.01f64 / 9.81).sqrt();
    let st = &s.extra["settling"];
    assert_eq!(st["settled"], true, "{st:#}");
    assert_eq!(st["stopped_when_settled"], true, "{st:#}");
    assert!(
        (st["hold_s"].as_f64().unwrap() - hold).abs() < 1e-12,
        "{st:#}"
    );
    let settled_at = st["settle_time_s"].as_f64().unwrap();
    assert!(settled_at <= 0.01, "settled at {settled_at}");
    assert!(
        s.steps < 1000 && (s.simulated_time - (settled_at + hold)).abs() <= 1.5e-3,
        "stopped after {} steps at t = {}, expected about {}",
        s.steps,
        s.simulated_time,
        settled_at + hold
    );
    assert_eq!(s.extra["floor_z"], 0.0);
    let a = &s.extra["angle_of_repose"];
    assert!(a["angle_deg"].as_f64().unwrap().abs() < 1.0, "{a:#}");
    assert!((a["height"].as_f64().unwrap() - 0.02).abs() < 1e-3, "{a:#}");
    assert!(stdout(&out).contains("angle of repose:"), "{}", show(&out));
}

#[test]
fn run_without_an_analysis_section_records_settling_but_no_heap() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let out = run_sphere_on_plane(&dir, &["--set", "duration=0.5", "--no-frames"]);
    assert_success(&out, "repose run sphere_on_plane");
    let s = summary_of(&dir);
    assert_eq!(s.steps, 500, "no early stop without stop_when_settled");
    assert_eq!(
        s.extra["settling"]["settled"], true,
        "{:#}",
        s.extra["settling"]
    );
    assert_eq!(s.extra["settling"]["stopped_when_settled"], false);
    assert!(!s.extra.contains_key("angle_of_repose"));
}

/// A scene whose spheres all come from an inlet runs end to end: the body
/// count grows during the run (VTU frames of changing size), final.csv has
/// one row per emitted sphere and summary.json reports them.
#[test]
fn run_with_an_inlet_writes_every_emitted_sphere() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("inlet.ron");
    fs::write(
        &file,
        r#"Scene(
    version: 1,
    name: "inlet",
    time_step: 1e-3,
    duration: 0.2,
    output: (frame_interval: 0.05, track: [0, 59]),
    materials: [(friction: 0.5)],
    spheres: [
        Inlet(region: Box(min: (-0.05, -0.05, 0.1), max: (0.05, 0.05, 0.12)), rate: 500,
              count: 60, radius: 0.005, velocity: (0, 0, -0.5), seed: 1),
    ],
    boundaries: [Plane(name: "floor", point: (0, 0, 0), normal: (0, 0, 1))],
)"#,
    )
    .unwrap();
    let out_dir = tmp.path().join("out");
    let out = repose([
        OsStr::new("run"),
        file.as_os_str(),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--out"),
        out_dir.as_os_str(),
    ]);
    assert!(out.status.success(), "{}", show(&out));
    let rows = read_final_csv(out_dir.join("final.csv")).unwrap();
    assert_eq!(
        rows.len(),
        60,
        "final.csv rows: {}, expected count = 60",
        rows.len()
    );
    let summary: Summary = read_summary(out_dir.join("summary.json")).unwrap();
    assert_eq!(summary.bodies, 60, "summary.bodies");
    assert!(
        summary.stage_seconds.contains_key("emit"),
        "no emit timer: {:?}",
        summary.stage_seconds.keys()
    );
    // Body 59 (the 60th) is due by t = 60 / 500 = 0.12 s: emitted at the start
    // of the step that ends then, so track.csv has rows for it from 0.12 s on.
    let track = read_track_csv(out_dir.join("track.csv")).unwrap();
    let first59 = track
        .iter()
        .find(|r| r[1] == 59.0)
        .expect("body 59 tracked");
    assert!(
        (first59[0] - 0.12).abs() < 1e-9,
        "body 59 first tracked at t = {}, expected 0.12 s",
        first59[0]
    );
    assert!(out_dir.join("frames.pvd").exists(), "no frame series");
}

/// `repose run --dump-problem` writes the chosen steps' problems, and
/// `repose solve` reads and solves them (the column's contacts carry
/// rolling and spinning friction: the d = 6 rows).
#[test]
fn dumped_step_problems_are_solved_by_repose_solve() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("col");
    let out = repose([
        OsStr::new("run"),
        OsStr::new("scenes/column.ron"),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--no-frames"),
        OsStr::new("--no-picture"),
        OsStr::new("--set"),
        OsStr::new("duration=0.05"),
        OsStr::new("--dump-problem"),
        OsStr::new("3,40"),
        OsStr::new("--out"),
        out_dir.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for step in ["000003", "000040"] {
        let file = out_dir.join(format!("problem_step{step}.dat"));
        assert!(file.exists(), "{} was not written", file.display());
        let solved = repose([
            OsStr::new("solve"),
            file.as_os_str(),
            OsStr::new("--solver"),
            OsStr::new("apgd"),
        ]);
        let text = stdout(&solved);
        assert!(solved.status.success(), "step {step}: {text}");
        let row = text.lines().nth(1).unwrap_or_default();
        assert!(
            row.contains(" 6 ") && row.contains(" 10 ") && row.ends_with("yes"),
            "step {step}: expected d = 6, 10 contacts, solved: {row:?}"
        );
    }
}

/// `repose compare` judges its input: a `final.csv` with NaN (a diverged
/// run) or a radius ≤ 0 is an error naming file, row and column, never an
/// "agree"; a NaN or negative `--tol` is refused.
#[test]
fn compare_rejects_non_finite_rows_bad_radii_and_bad_tolerances() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.csv");
    let header = "id,x,y,z,vx,vy,vz,wx,wy,wz,radius";
    let rows = "0,0,0,0.05,0,0,0,0,0,0,0.05\n1,0.1,0,0.05,0,0,0,0,0,0,0.05\n";
    fs::write(&good, format!("{header}\n{rows}")).unwrap();
    let nan = tmp.path().join("nan.csv");
    fs::write(
        &nan,
        format!("{header}\n0,0,0,0.05,0,0,0,0,0,0,0.05\n1,NaN,0,0.05,0,0,0,0,0,0,0.05\n"),
    )
    .unwrap();
    let neg = tmp.path().join("neg.csv");
    fs::write(
        &neg,
        format!("{header}\n0,0,0,0.05,0,0,0,0,0,0,-0.05\n1,0.1,0,0.05,0,0,0,0,0,0,0.05\n"),
    )
    .unwrap();
    let compare = |a: &Path, b: &Path, tol: &str| {
        let tol = format!("--tol={tol}");
        repose([
            OsStr::new("compare"),
            a.as_os_str(),
            b.as_os_str(),
            OsStr::new(&tol),
        ])
    };
    assert_success(
        &compare(&good, &good, "0.5"),
        "compare of a file with itself",
    );
    assert_one_error(
        &compare(&good, &nan, "0.5"),
        &["nan.csv", "row 3", "`x`", "NaN", "finite"],
    );
    assert_one_error(
        &compare(&neg, &good, "0.5"),
        &["neg.csv", "row 2", "radius", "must be > 0"],
    );
    for tol in ["NaN", "-1"] {
        assert_one_error(&compare(&good, &good, tol), &["--tol", "finite number ≥ 0"]);
    }
}

/// `repose solve --all` reports a file it cannot read as a row of the table
/// (with the reason) and goes on with the others; the exit code says that
/// not every problem was solved.
#[test]
fn solve_all_reports_a_bad_file_as_a_row_and_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let good = root().join("tests/data/siconos/fc3d/FrictionContact3D_1c.dat");
    fs::copy(&good, tmp.path().join("a_good.dat")).unwrap();
    fs::write(tmp.path().join("b_bad.dat"), "garbage\n").unwrap();
    fs::copy(&good, tmp.path().join("c_good.dat")).unwrap();
    let out = repose([
        OsStr::new("solve"),
        OsStr::new("--all"),
        tmp.path().as_os_str(),
        OsStr::new("--time-limit"),
        OsStr::new("5"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let text = stdout(&out);
    let bad: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("b_bad.dat"))
        .collect();
    assert_eq!(bad.len(), 1, "one row for the bad file:\n{text}");
    assert!(
        bad[0].contains("cannot read") && bad[0].contains("garbage"),
        "{}",
        bad[0]
    );
    for f in ["a_good.dat", "c_good.dat"] {
        assert!(
            text.lines().any(|l| l.starts_with(f) && l.ends_with("yes")),
            "{f} must still be solved:\n{text}"
        );
    }
    assert!(
        stderr(&out).contains("not solved to 1e-6: b_bad.dat"),
        "{}",
        show(&out)
    );
}
