//! How `repose run` stops when it cannot go on: a diverging solve, a
//! non-finite state, a sphere that tunnels out of its closed container —
//! each named with its step, exit code 1, whole outputs of the last good
//! step — and SIGINT (complete outputs, exit 130) or SIGKILL (every file
//! whole) at any moment. Resuming from the checkpoint these leave is in
//! `tests/checkpoint.rs`.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::process::Command;

#[path = "common/cli.rs"]
mod cli;

use cli::*;
use repose::output::csv::{read_final_csv, read_track_csv};
use repose::output::summary::StopReason;

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
        OsStr::new("--solver"),
        OsStr::new("jacobi"),
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
    assert_series_ends_at(&assert_valid_frame_series(&dir), s.simulated_time);
}

/// A diverged run that keeps its checkpoint (`output.checkpoint.keep`)
/// while an inlet pours: the step that makes the state non-finite is
/// undone whole — bodies, warm starts and the inlet's progress — so the
/// state the run ends in is one state (the inlet has emitted exactly the
/// spheres `final.csv` holds); no final checkpoint is written of it; the
/// checkpoint kept, and named in the resume hint, is the last one of the
/// clock; and `--resume` from it goes to the same end, bit for bit.
#[test]
fn a_diverged_run_keeps_its_last_whole_checkpoint_and_resumes_to_the_same_end() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("runaway_pour.ron");
    // x grows by h · v = 1e307 m a step: past f64::MAX ≈ 1.8e308 at step 18.
    fs::write(
        &scene,
        r#"Scene(
    version: 1,
    name: "runaway_pour",
    time_step: 0.1,
    duration: 3.0,
    materials: [(name: "plain", friction: 0.5, rolling: 0.0, spinning: 0.0, density: 1000.0)],
    spheres: [
        Sphere(pos: (0.0, 0.0, 1.0), radius: 0.05, material: 0, velocity: (1e308, 0.0, 0.0)),
        Inlet(region: Disk(center: (5.0, 0.0, 1.0), normal: (0.0, 0.0, 1.0), radius: 0.5),
              rate: 20, count: 1000, radius: 0.02, material: 0,
              velocity: (0.0, 0.0, -1.0), seed: 1),
    ],
    boundaries: [],
    output: (frame_interval: 0.5, checkpoint: (every_steps: Some(5), keep: true)),
)"#,
    )
    .unwrap();
    let dir = tmp.path().join("out");
    let err = run_failing_cpu(&scene, &dir);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "expected one error line in:\n{err}");
    for p in [
        "diverged",
        "step 18 ",
        "the checkpoint of step 15 is kept",
        "--resume",
    ] {
        assert!(errors[0].contains(p), "expected {p:?} in:\n{}", errors[0]);
    }
    let ck = repose::run::checkpoint::read_checkpoint(&dir.join("checkpoint.bin"))
        .unwrap_or_else(|e| panic!("the kept checkpoint: {e:#}"));
    assert_eq!(
        ck.world.step_index, 15,
        "the kept checkpoint is the clock's last (step 15), not the undone state's"
    );
    let whole = |what: &str| {
        let s = summary_of(&dir);
        assert_eq!(s.stopped, StopReason::Diverged, "{what}: summary.stopped");
        assert_eq!(s.steps, 17, "{what}: summary.steps, the last finite step");
        let rows = read_final_csv(dir.join("final.csv")).unwrap();
        let emitted = s.extra["inlet_emitted"].as_u64().unwrap_or(u64::MAX);
        assert_eq!(
            emitted + 1,
            rows.len() as u64,
            "{what}: the inlet says it emitted {emitted} spheres; final.csv holds {} bodies (the runaway sphere and the emitted ones)",
            rows.len()
        );
        fs::read(dir.join("final.csv")).unwrap()
    };
    let first = whole("the run");
    let out = repose([OsStr::new("run"), OsStr::new("--resume"), dir.as_os_str()]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the resumed run diverges again\n{}",
        show(&out)
    );
    assert!(
        !stderr(&out).contains("panicked"),
        "a panic:\n{}",
        show(&out)
    );
    assert!(
        first == whole("the resumed run"),
        "the resumed run's final.csv differs from the first run's"
    );
}

/// The frame series of a run that stopped early ends with the state it
/// stopped in (the state of `final.csv`), not at the last frame interval.
fn assert_series_ends_at(frames: &[(f64, String)], time: f64) {
    let last = frames.last().map(|f| f.0);
    assert!(
        last.is_some_and(|t| (t - time).abs() <= 1e-9 * time.max(1.0)),
        "the last frame is at t = {last:?} s, the run stopped at t = {time} s"
    );
}

/// A sphere at 1.3 km/s in a box with h = 0.1 s: it crosses the side wall
/// between two contact detections (tunnelling). The run is warned about
/// before it starts, and stops as diverged at the step where the sphere is
/// outside the box, naming the body, the box and the cause; the outputs
/// are whole and hold that step.
#[test]
fn a_body_that_leaves_its_closed_container_stops_the_run_as_diverged() {
    assert_tunnelling_through_a_box_wall_stops_the_run(false);
}

/// The same through an open box's side wall: the walls of an open box rise
/// without end, so a sphere beyond one has passed through it, not over a
/// rim.
#[test]
fn a_body_that_leaves_an_open_box_through_a_side_wall_stops_the_run_as_diverged() {
    assert_tunnelling_through_a_box_wall_stops_the_run(true);
}

fn assert_tunnelling_through_a_box_wall_stops_the_run(open_top: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("tunnel.ron");
    fs::write(
        &scene,
        format!(
            r#"Scene(
    version: 1,
    name: "tunnel",
    time_step: 0.1,
    duration: 1.0,
    materials: [(name: "plain", friction: 0.5, rolling: 0.0, spinning: 0.0, density: 1000.0)],
    spheres: [Sphere(pos: (0.0, 0.0, 0.5), radius: 0.05, material: 0, velocity: (1300.0, 0.0, 0.0))],
    boundaries: [Box(name: "crate", center: (0.0, 0.0, 0.5), half_extents: (0.5, 0.5, 0.5), open_top: {open_top}, material: 0)],
    output: (track: [0]),
)"#
        ),
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
        "left the container crate",
        "tunnelling",
    ] {
        assert!(errors[0].contains(p), "expected {p:?} in:\n{}", errors[0]);
    }
    let s = summary_of(&dir);
    assert_eq!(s.stopped, StopReason::Diverged);
    assert!(s
        .stop_message
        .as_deref()
        .is_some_and(|m| m.contains("left the container crate")));
    assert_eq!(s.steps, 1, "the outputs hold the step where it left");
    let rows = read_final_csv(dir.join("final.csv")).unwrap();
    assert_eq!(rows.len(), 1);
    assert!(
        rows[0][1] > 0.5,
        "final.csv holds the sphere outside the box: x = {}",
        rows[0][1]
    );
    read_track_csv(dir.join("track.csv")).unwrap();
    assert_series_ends_at(&assert_valid_frame_series(&dir), s.simulated_time);
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

/// A run stopped by `signals` (a shell command; `{pid}` stands for the
/// run's process id) half a second in: it stops after the step in
/// progress, writes complete outputs for that step, says `"stopped":
/// "interrupted"` and exits with 130 (the shell's code for Ctrl-C), never
/// "interrupted twice".
fn a_signal_stops_the_run_after_a_step_with_complete_outputs(signals: &str) {
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
    let kill = Command::new("sh")
        .args(["-c", &signals.replace("{pid}", &child.id().to_string())])
        .status()
        .expect("run kill");
    assert!(kill.success(), "{signals} failed");
    let out = child.wait_with_output().expect("wait for repose");
    assert!(
        !stderr(&out).contains("interrupted twice"),
        "{signals}: one delivery read as two\n{}",
        show(&out)
    );
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

/// SIGINT, as Ctrl-C sends it.
#[test]
fn sigint_stops_after_a_step_with_complete_outputs() {
    a_signal_stops_the_run_after_a_step_with_complete_outputs("kill -INT {pid}");
}

/// SIGTERM twice in a row, as coreutils `timeout` sends it (to the child,
/// then to its process group): one delivery.
#[test]
fn a_term_delivered_twice_at_once_stops_cleanly_as_one() {
    a_signal_stops_the_run_after_a_step_with_complete_outputs("kill -TERM {pid}; kill -TERM {pid}");
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
