//! The `repose` binary end to end: `run` writes every output file, bad input
//! is one clear error (exit code 1, no panic), `validate` and `info` work, a
//! run records settling and the heap and can stop once settled. How runs stop
//! (divergence, signals, kills) is in `tests/stops.rs`; `measure` and
//! `compare` on saved output in `tests/cli_measure.rs`; `solve` in
//! `tests/cli_solve.rs`.
//!
//! Scene validation messages themselves are covered at the library level by
//! `tests/scene_errors.rs`; here we check what reaches the terminal.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

#[path = "common/cli.rs"]
mod cli;

use cli::*;

use repose::output::csv::{read_final_csv, read_track_csv};
use repose::output::summary::{read_summary, Summary};
use repose::scene::Scene;

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
        &["spheres[0].radius", "must be ≥ 1e-9 m (got -0.05)"],
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
    // The penalty formulation's cases run on the cpu backend too.
    for (case, _) in repose::validate::penalty::cases() {
        assert!(
            text.contains(&format!("pass  {case}: ")),
            "penalty case {case} missing:\n{text}"
        );
    }
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

/// `repose run scenes/sphere_on_plane.ron ARGS --out DIR`.
fn run_sphere_on_plane(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all: Vec<&OsStr> = vec![OsStr::new("run"), OsStr::new("scenes/sphere_on_plane.ron")];
    all.extend(args.iter().map(OsStr::new));
    all.extend([OsStr::new("--out"), dir.as_os_str()]);
    repose(all)
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
    let out = run_sphere_on_plane(&dir, &["--backend", "gpu", "--set", "duration=0.05"]);
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

/// `docs/cli.md`, the book's command-line reference, is what the clap
/// definitions generate (`repose markdown-help`), so it cannot go stale.
#[test]
fn the_cli_reference_in_the_docs_is_generated_from_the_clap_definitions() {
    let out = repose(["markdown-help"]);
    assert_success(&out, "repose markdown-help");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md");
    let docs = std::fs::read_to_string(&path).expect("docs/cli.md");
    assert!(
        docs == stdout(&out),
        "docs/cli.md differs from the clap definitions: regenerate it with \
         `cargo run --release -- markdown-help > docs/cli.md`"
    );
}

/// The help says what a user needs, never the code's names: no rustdoc
/// links (`[`NAME`]`), no Rust paths (`a::b`), no seed numbers of the
/// papers (they are cited by author and year: docs/references.md); and the
/// body count `--backend auto` names is the one it uses.
#[test]
fn the_help_names_no_code_items_and_says_the_auto_gpu_threshold() {
    let out = repose(["markdown-help"]);
    assert_success(&out, "repose markdown-help");
    let text = stdout(&out);
    for (i, line) in text.lines().enumerate() {
        // Markdown's own links to the commands' sections are "[`repose …`↴]".
        let code_link = line.contains("[`") && !line.contains("[`repose");
        for (bad, what) in [
            (code_link, "a rustdoc link"),
            (line.contains("::"), "a Rust path"),
            (line.to_lowercase().contains("seed 00"), "a seed number"),
        ] {
            assert!(!bad, "help line {}: {what}:\n{line}", i + 1);
        }
    }
    let n = repose::run::AUTO_GPU_MIN_BODIES;
    let said = format!("at least {},{:03} bodies", n / 1000, n % 1000);
    assert!(
        text.contains(&said),
        "expected {said:?} in the --backend help"
    );
}

/// `repose run` with the default `--backend auto` runs on the CPU when the
/// only adapter is a software one (lavapipe: slower than the cpu backend)
/// and says so in the summary's reason; on a hardware adapter it runs on
/// the GPU.
#[test]
fn auto_prefers_the_cpu_over_a_software_adapter_and_says_why() {
    let Some(ctx) = repose::gpu::context_for_tests(
        "cli::auto_prefers_the_cpu_over_a_software_adapter_and_says_why",
    ) else {
        return;
    };
    let software = ctx.is_software();
    drop(ctx);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    // 3,375 spheres: above the size below which auto keeps to the CPU
    // anyway; one step.
    let (s, reason) = run_under_auto("bench_pile_small.ron", "duration=0.002", &dir);
    if software {
        assert_eq!(s.backend, "cpu", "auto on a software adapter: {reason}");
        assert!(
            reason.contains("only a software adapter"),
            "reason: {reason}"
        );
    } else {
        assert!(
            s.backend.starts_with("gpu"),
            "auto on hardware: {} ({reason})",
            s.backend
        );
    }
}

/// `repose run scenes/NAME --set SET` under the default `--backend auto`,
/// no frames or picture, into `dir`: its summary and the backend's reason.
fn run_under_auto(name: &str, set: &str, dir: &Path) -> (repose::output::summary::Summary, String) {
    let scene = scene_path(name);
    let out = repose([
        OsStr::new("run"),
        scene.as_os_str(),
        OsStr::new("--set"),
        OsStr::new(set),
        OsStr::new("--no-frames"),
        OsStr::new("--no-picture"),
        OsStr::new("--out"),
        dir.as_os_str(),
    ]);
    assert_success(&out, "repose run (backend auto)");
    let s = summary_of(dir);
    let reason = s
        .extra
        .get("backend_reason")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string();
    (s, reason)
}

/// A scene of fewer bodies than `AUTO_GPU_MIN_BODIES` runs on the CPU
/// under `auto` whatever adapters exist, and the summary says why.
#[test]
fn auto_runs_a_small_scene_on_the_cpu_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let (s, reason) = run_under_auto("sphere_on_plane.ron", "duration=0.01", &dir);
    assert_eq!(s.backend, "cpu", "auto on a one-sphere scene: {reason}");
    assert!(
        reason.contains(&format!(
            "fewer than {} bodies",
            repose::run::AUTO_GPU_MIN_BODIES
        )) && reason.contains("this one has 1"),
        "reason: {reason}"
    );
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

/// Mesa's drivers complain "XDG_RUNTIME_DIR is invalid or not set" when
/// probed without a session directory; repose opens no window and gives
/// them a private one, so `repose info` (which probes the GPU adapter)
/// prints no such line with the variable pointing nowhere.
#[test]
fn no_xdg_runtime_dir_complaints_without_a_session() {
    let out = repose_with_env(["info"], &[("XDG_RUNTIME_DIR", "/nonexistent/repose-test")]);
    assert_success(&out, "repose info");
    assert!(
        !show(&out).contains("XDG_RUNTIME_DIR"),
        "the driver still complains:\n{}",
        show(&out)
    );
}

/// `solver.fallback` runs on the f64 CPU only: on an f32 backend the run is
/// one error naming the setting and what to do, not a silent single solve.
#[test]
fn a_fallback_on_an_f32_backend_is_one_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = repose([
        OsStr::new("run"),
        OsStr::new("scenes/sphere_on_plane.ron"),
        OsStr::new("--backend"),
        OsStr::new("cpu-f32"),
        OsStr::new("--set"),
        OsStr::new("solver.fallback=Some(InteriorPoint)"),
        OsStr::new("--out"),
        tmp.path().join("out").as_os_str(),
    ]);
    assert_one_error(
        &out,
        &[
            "--backend cpu-f32",
            "solver.fallback (interior-point)",
            "use --backend cpu",
        ],
    );
}

/// `repose bench` on a scene it cannot time says why and exits 1 (a
/// penalty scene: its steps pose no complementarity problem), instead of
/// timing an empty problem and printing NaN.
#[test]
fn bench_refuses_a_penalty_scene_for_the_solver_bench() {
    let scene = scene_path("penalty_column.ron");
    let out = repose([
        OsStr::new("bench"),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--scene"),
        scene.as_os_str(),
    ]);
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{}", show(&out));
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        err.contains("formulation is penalty") && err.contains("--formulation penalty"),
        "{}",
        show(&out)
    );
    assert!(!stdout(&out).contains("NaN"), "{}", show(&out));
}

/// `repose run --fallback METHOD` sets the scene's `solver.fallback` (the
/// run's scene.ron records it), `none` clears one, and an unknown name is
/// one error listing the names.
#[test]
fn run_fallback_option_sets_the_scenes_fallback() {
    use repose::solver::SolverMethod;
    let tmp = tempfile::tempdir().unwrap();
    let ran = |name: &str, args: &[&str]| {
        let dir = tmp.path().join(name);
        let mut all = vec!["--set", "duration=0.01", "--no-frames"];
        all.extend(args);
        let out = run_sphere_on_plane(&dir, &all);
        assert_success(&out, &format!("repose run {all:?}"));
        Scene::load(&dir.join("scene.ron"), &[])
            .unwrap()
            .solver
            .fallback
    };
    assert_eq!(
        ran("pgs", &["--solver", "interior-point", "--fallback", "pgs"]),
        Some(SolverMethod::Pgs),
        "--fallback pgs"
    );
    assert_eq!(
        ran(
            "none",
            &["--set", "solver.fallback=Some(Pgs)", "--fallback", "none"]
        ),
        None,
        "--fallback none after a --set that gave one"
    );
    let out = run_sphere_on_plane(&tmp.path().join("bad"), &["--fallback", "pgz"]);
    assert_one_error(&out, &["--fallback", "\"pgz\"", "interior-point", "none"]);
}
