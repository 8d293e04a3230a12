//! Checkpoints and resuming: a run stopped part way — by `stop_after_step`,
//! SIGINT or SIGKILL — and resumed from its checkpoint ends with the same
//! bits as a run that never stopped (CPU backend): `final.csv`, `track.csv`,
//! `walls.csv`,
//! every frame, and the summary's numbers. And what cannot be resumed is
//! refused with a reason.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use repose::output::summary::{read_summary, StopReason, Summary};
use repose::run::checkpoint::{read_checkpoint, write_checkpoint, CHECKPOINT_FILE};
use repose::run::{resume_run, run_scene, BackendChoice, ResumeOptions, RunOptions};
use repose::scene::Scene;

const BIN: &str = env!("CARGO_BIN_EXE_repose");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn load(scene: &str, sets: &[(&str, &str)]) -> Scene {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Scene::load(&root().join("scenes").join(scene), &sets).expect("scene loads")
}

fn cpu_opts(dir: &Path, stop_after_step: Option<u64>) -> RunOptions {
    RunOptions {
        out_dir: Some(dir.to_owned()),
        backend: BackendChoice::Cpu,
        no_picture: true,
        stop_after_step,
        ..RunOptions::default()
    }
}

fn resume(dir: &Path, stop_after_step: Option<u64>) -> Summary {
    resume_run(
        dir,
        &ResumeOptions {
            backend: None,
            progress: false,
            stop_after_step,
        },
    )
    .unwrap_or_else(|e| panic!("resume {}: {e:#}", dir.display()))
}

/// The files of a run directory that must match bit for bit, with their bytes.
fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let kept = name == "final.csv"
                || name == "track.csv"
                || name == "walls.csv"
                || name == "frames.pvd"
                || name == "bodies.pvd"
                || name == "scene.ron"
                || (name.starts_with("frame_")
                    && (name.ends_with(".vtu") || name.ends_with(".csv")))
                || (name.starts_with("bodies_") && name.ends_with(".vtu"));
            kept.then(|| (name, fs::read(e.path()).unwrap()))
        })
        .collect();
    files.sort();
    files
}

/// The summary without what differs between processes (wall times, stage
/// times, the record of resumes).
fn numbers(s: &Summary) -> Summary {
    let mut s = s.clone();
    s.wall_time_s = 0.0;
    s.stage_seconds.clear();
    s.extra.remove("resumed_at_steps");
    s.extra.remove("backend_reason");
    s
}

/// The law: a run stopped after `stops[0]` steps, resumed and stopped
/// again after `stops[1]`, …, then resumed to its end, writes the same
/// files and numbers as the run that never stopped.
fn resumed_run_is_bit_identical(scene: &Scene, stops: &[u64]) {
    let tmp = tempfile::tempdir().unwrap();
    let whole_dir = tmp.path().join("whole");
    let whole = run_scene(scene, &cpu_opts(&whole_dir, None)).expect("uninterrupted run");
    assert!(
        matches!(whole.stopped, StopReason::Completed | StopReason::Settled),
        "{:?}",
        whole.stopped
    );
    assert!(
        !whole_dir.join(CHECKPOINT_FILE).exists(),
        "a finished run removes its checkpoint"
    );

    let dir = tmp.path().join("pieces");
    let first = run_scene(scene, &cpu_opts(&dir, Some(stops[0]))).expect("first piece");
    assert_eq!(first.stopped, StopReason::Interrupted);
    assert_eq!(first.steps, stops[0]);
    let mut last = first;
    for (i, &stop) in stops.iter().enumerate().skip(1) {
        last = resume(&dir, Some(stop));
        assert_eq!(last.stopped, StopReason::Interrupted, "piece {i}");
        assert_eq!(last.steps, stop, "piece {i}");
        assert!(dir.join(CHECKPOINT_FILE).exists(), "piece {i} checkpoint");
    }
    let end = resume(&dir, None);
    assert_eq!(end.stopped, whole.stopped);
    assert!(!dir.join(CHECKPOINT_FILE).exists());
    let resumes = &end.extra["resumed_at_steps"];
    assert_eq!(
        resumes.as_array().map(Vec::len),
        Some(stops.len()),
        "{resumes}"
    );
    assert!(last.steps < end.steps);

    let (a, b) = (outputs(&whole_dir), outputs(&dir));
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b), "the same files");
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(
            x == y,
            "{name} differs after resuming at steps {stops:?} ({} vs {} bytes)",
            x.len(),
            y.len()
        );
    }
    assert_eq!(
        numbers(&whole),
        numbers(&end),
        "summary numbers after resuming at steps {stops:?}"
    );
    assert_eq!(
        numbers(&end),
        numbers(&read_summary(dir.join("summary.json")).unwrap())
    );
    println!(
        "{}: {:?} after {} steps, resumed at {stops:?}: every output identical",
        scene.name, end.stopped, end.steps
    );
}

/// An inlet (its generator and deferrals), tracked bodies, frames and the
/// settling detector across two stops.
#[test]
fn resumed_pour_with_an_inlet_is_bit_identical() {
    let scene = load(
        "pour_1000.ron",
        &[
            ("duration", "0.5"),
            ("output.frame_interval", "0.05"),
            ("output.checkpoint.every_steps", "7"),
        ],
    );
    let mut scene = scene;
    scene.output.track = vec![0, 3, 250];
    scene.output.csv_frames = true;
    resumed_run_is_bit_identical(&scene, &[33, 34, 71]);
}

/// The penalty formulation: each pair's friction history (kept per listed
/// pair by the neighbour list during a run) goes into the checkpoint and
/// comes back from it, so a pour resumed twice ends with the same bits.
#[test]
fn resumed_penalty_pour_is_bit_identical() {
    let mut scene = load(
        "pour_1000.ron",
        &[
            ("duration", "0.8"),
            ("output.frame_interval", "0.1"),
            ("output.checkpoint.every_steps", "7"),
        ],
    );
    // The first grains land at about 0.45 s (step 90): the stops fall
    // where pairs of them are in contact.
    scene.formulation = repose::formulation::Formulation::Penalty(Default::default());
    scene.materials[0].roll_eta = 0.1;
    scene.materials[0].spin_eta = 0.05;
    resumed_run_is_bit_identical(&scene, &[120, 141]);
}

/// `output.csv_frames`: a `frame_NNNNN.csv` beside every VTU frame, the
/// last one (the final step) equal to `final.csv`.
#[test]
fn csv_frames_sit_beside_the_vtu_frames() {
    let tmp = tempfile::tempdir().unwrap();
    let mut scene = load(
        "sphere_on_plane.ron",
        &[("duration", "0.05"), ("output.frame_interval", "0.01")],
    );
    scene.output.csv_frames = true;
    run_scene(&scene, &cpu_opts(tmp.path(), None)).unwrap();
    let count = |ext: &str| {
        fs::read_dir(tmp.path())
            .unwrap()
            .filter(|e| {
                let n = e.as_ref().unwrap().file_name().into_string().unwrap();
                n.starts_with("frame_") && n.ends_with(ext)
            })
            .count()
    };
    assert_eq!(count(".vtu"), 6, "t = 0 and every 10 steps of 50");
    assert_eq!(count(".csv"), 6);
    assert_eq!(
        fs::read(tmp.path().join("frame_00005.csv")).unwrap(),
        fs::read(tmp.path().join("final.csv")).unwrap()
    );
}

/// Bodies of other shapes (boxes, cylinders, a capsule, an ellipsoid, a
/// polyhedron): orientations, the shape table, manifold warm starts and
/// the series of their surfaces (`bodies.pvd`) go on from the checkpoint.
#[test]
fn resumed_shapes_are_bit_identical() {
    let scene = load("shapes.ron", &[("duration", "0.6")]);
    resumed_run_is_bit_identical(&scene, &[70, 200]);
}

/// A rotating drum: the drum sampler's fits go on from the checkpoint.
#[test]
fn resumed_drum_is_bit_identical() {
    let scene = load(
        "drum.ron",
        &[
            ("duration", "0.3"),
            ("analysis.drum.from_time", "0.1"),
            ("output.frame_interval", "0.02"),
        ],
    );
    resumed_run_is_bit_identical(&scene, &[150]);
}

/// A wall that moves (its origin advances every step): it goes on from
/// where it was.
#[test]
fn resumed_lifting_cylinder_is_bit_identical() {
    let scene = load(
        "lifting_cylinder.ron",
        &[
            ("duration", "0.2"),
            ("boundaries.1.start_time", "0.05"),
            ("boundaries.1.velocity.2", "0.2"),
        ],
    );
    resumed_run_is_bit_identical(&scene, &[120]);
}

/// A pile whose heap is measured at the end: the same angle.
#[test]
fn resumed_heap_is_bit_identical() {
    let scene = load("repose_small.ron", &[("duration", "1.0")]);
    resumed_run_is_bit_identical(&scene, &[120]);
}

/// A run that ends when it settles (`stop_when_settled`): the settling
/// detector goes on from the checkpoint, so the resumed run stops at the
/// same step.
#[test]
fn resumed_run_settles_at_the_same_step() {
    let scene = load(
        "sphere_on_plane.ron",
        &[("analysis.stop_when_settled", "true")],
    );
    resumed_run_is_bit_identical(&scene, &[100, 200]);
}

/// What cannot be continued is refused, with the reason and what to do:
/// a finished run, a directory that is not a run's, an edited `scene.ron`,
/// a damaged checkpoint, one from another version of repose.
#[test]
fn resume_refuses_what_it_cannot_continue() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = load("sphere_on_plane.ron", &[("duration", "0.05")]);
    let err = |dir: &Path| {
        format!(
            "{:#}",
            resume_run(dir, &ResumeOptions::default()).expect_err("must be refused")
        )
    };
    let done = tmp.path().join("done");
    run_scene(&scene, &cpu_opts(&done, None)).unwrap();
    let e = err(&done);
    assert!(
        e.contains("the run finished (completed") && e.contains("nothing to resume"),
        "{e}"
    );
    let e = err(tmp.path());
    assert!(e.contains("not the output directory of a run"), "{e}");

    let dir = tmp.path().join("stopped");
    let s = run_scene(&scene, &cpu_opts(&dir, Some(10))).unwrap();
    assert_eq!(s.stopped, StopReason::Interrupted);
    let again = format!(
        "{:#}",
        run_scene(&scene, &cpu_opts(&dir, None)).unwrap_err()
    );
    assert!(
        again.contains("holds the outputs of another run")
            && again.contains(&format!("repose run --resume {}", dir.display())),
        "a new run into a stopped run's directory points to --resume: {again}"
    );
    let ck_path = dir.join(CHECKPOINT_FILE);
    let good_ck = fs::read(&ck_path).unwrap();
    let ron = fs::read_to_string(dir.join("scene.ron")).unwrap();

    fs::write(
        dir.join("scene.ron"),
        ron.replace("duration: 0.05", "duration: 0.06"),
    )
    .unwrap();
    let e = err(&dir);
    assert!(
        e.contains("scene.ron was changed since the checkpoint"),
        "{e}"
    );
    fs::write(dir.join("scene.ron"), &ron).unwrap();

    fs::write(&ck_path, &good_ck[..good_ck.len() / 2]).unwrap();
    let e = err(&dir);
    assert!(
        e.contains("damaged or cut short") && e.contains(CHECKPOINT_FILE),
        "{e}"
    );

    fs::write(&ck_path, &good_ck).unwrap();
    let mut ck = read_checkpoint(&ck_path).unwrap();
    ck.repose_version = "0.0.1".into();
    write_checkpoint(&ck_path, &ck).unwrap();
    let e = err(&dir);
    assert!(e.contains("written by repose 0.0.1"), "{e}");

    // Put back, it resumes.
    fs::write(&ck_path, &good_ck).unwrap();
    let s = resume(&dir, None);
    assert_eq!(s.stopped, StopReason::Completed);
    assert_eq!(s.steps, scene.steps());
}

/// `repose run ARGS --out DIR` to its end; panics with the output on failure.
fn run_cli(args: &[&OsStr], dir: &Path) {
    let out = Command::new(BIN)
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(dir)
        .current_dir(root())
        .output()
        .expect("start repose");
    assert!(
        out.status.success(),
        "repose run failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Starts `repose run` in the background and returns once it has written
/// a checkpoint after step 0 (the one of the start is skipped: its
/// `checkpoint.bin` appears before the first step).
fn spawn_until_checkpointed(args: &[&OsStr], dir: &Path) -> std::process::Child {
    let mut child = Command::new(BIN)
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(dir)
        .current_dir(root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start repose");
    let start = std::time::Instant::now();
    let ck = dir.join(CHECKPOINT_FILE);
    let past_start = || read_checkpoint(&ck).is_ok_and(|c| c.world.step_index > 0);
    while !past_start() {
        if start.elapsed().as_secs() >= 120 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no checkpoint after step 0 within 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child
}

/// SIGKILL at several moments, then `repose run --resume`: the same
/// `final.csv` and `track.csv` as the uninterrupted run.
#[test]
fn sigkill_then_resume_gives_the_uninterrupted_result() {
    let tmp = tempfile::tempdir().unwrap();
    let text = fs::read_to_string(root().join("scenes/repose_small.ron")).unwrap();
    let from = "output: (frame_interval: 0.1),";
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} in repose_small.ron"
    );
    let scene = tmp.path().join("tracked.ron");
    fs::write(
        &scene,
        text.replace(from, "output: (frame_interval: 0.02, track: [0, 1, 2]),"),
    )
    .unwrap();
    let args = [
        scene.as_os_str(),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--no-picture"),
        OsStr::new("--set"),
        OsStr::new("duration=2.0"),
        OsStr::new("--checkpoint-every"),
        OsStr::new("10"),
    ];
    let whole = tmp.path().join("whole");
    run_cli(&args, &whole);
    for (k, delay_ms) in [0u64, 250, 700].into_iter().enumerate() {
        let dir = tmp.path().join(format!("killed{k}"));
        let mut child = spawn_until_checkpointed(&args, &dir);
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        assert!(
            child.try_wait().expect("poll").is_none(),
            "the run ended before the kill at +{delay_ms} ms: the test needs a longer run"
        );
        child.kill().expect("SIGKILL");
        child.wait().expect("wait");
        let out = Command::new(BIN)
            .args([OsStr::new("run"), OsStr::new("--resume"), dir.as_os_str()])
            .current_dir(root())
            .output()
            .expect("resume");
        assert!(
            out.status.success(),
            "resume after a kill at +{delay_ms} ms failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (a, b) = (outputs(&whole), outputs(&dir));
        assert_eq!(
            a.len(),
            b.len(),
            "file count after a kill at +{delay_ms} ms"
        );
        for ((name, x), (other, y)) in a.iter().zip(&b) {
            assert_eq!(name, other);
            assert!(
                x == y,
                "{name} differs after a kill at +{delay_ms} ms and a resume"
            );
        }
    }
}

/// SIGINT: the run stops after a step with a checkpoint; `--resume`
/// finishes it with the uninterrupted run's `final.csv`.
#[test]
fn sigint_then_resume_gives_the_uninterrupted_result() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        OsStr::new("scenes/repose_small.ron"),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--no-picture"),
        OsStr::new("--set"),
        OsStr::new("duration=0.6"),
        OsStr::new("--checkpoint-every"),
        OsStr::new("25"),
    ];
    let whole = tmp.path().join("whole");
    run_cli(&args, &whole);
    let dir = tmp.path().join("stopped");
    let child = spawn_until_checkpointed(&args, &dir);
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(kill.success());
    let out = child.wait_with_output().expect("wait");
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = read_summary(dir.join("summary.json")).unwrap();
    assert_eq!(s.stopped, StopReason::Interrupted);
    let ck = read_checkpoint(&dir.join(CHECKPOINT_FILE)).expect("a checkpoint of the stop");
    assert_eq!(
        ck.world.step_index, s.steps,
        "the checkpoint holds the state the outputs hold"
    );
    let out = Command::new(BIN)
        .args([OsStr::new("run"), OsStr::new("--resume"), dir.as_os_str()])
        .current_dir(root())
        .output()
        .expect("resume");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(fs::read(whole.join("final.csv")).unwrap() == fs::read(dir.join("final.csv")).unwrap());
    let s = read_summary(dir.join("summary.json")).unwrap();
    assert_eq!(s.stopped, StopReason::Completed);
}

/// The bytes of a real checkpoint (a sphere on a plane stopped at step 10),
/// made once.
fn checkpoint_bytes() -> &'static [u8] {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let scene = load("sphere_on_plane.ron", &[("duration", "0.05")]);
        run_scene(&scene, &cpu_opts(tmp.path(), Some(10))).unwrap();
        fs::read(tmp.path().join(CHECKPOINT_FILE)).unwrap()
    })
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: 128,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0xc4ec_4901),
        ..proptest::test_runner::Config::default()
    })]

    /// A checkpoint cut short or with a byte changed is read or refused
    /// with the file named, never a panic (a length prefix turned huge must
    /// not allocate it).
    #[test]
    fn damaged_checkpoints_are_refused_never_a_panic(
        at in 0.0..1.0f64,
        byte in proptest::prelude::any::<u8>(),
        cut in proptest::prelude::any::<bool>(),
    ) {
        let mut bytes = checkpoint_bytes().to_vec();
        let i = ((at * bytes.len() as f64) as usize).min(bytes.len() - 1);
        if cut {
            bytes.truncate(i);
        } else {
            bytes[i] = byte;
        }
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(CHECKPOINT_FILE);
        fs::write(&path, &bytes).unwrap();
        let outcome = std::panic::catch_unwind(|| read_checkpoint(&path).map(drop));
        proptest::prop_assert!(outcome.is_ok(), "reading panicked (byte {i}, cut {cut})");
        if let Ok(Err(e)) = outcome {
            let msg = format!("{e:#}");
            proptest::prop_assert!(msg.contains(CHECKPOINT_FILE), "{msg}");
        }
    }
}
