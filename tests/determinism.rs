//! Runs are reproducible: the same scene run twice gives a byte-identical
//! `final.csv` on every backend, and the CPU result does not depend on the
//! number of rayon threads.
//!
//! The scene is `scenes/pour.ron` cut to 20 steps and 512 beads packed
//! closely (gaps below the contact envelope) on the floor, falling at
//! 0.5 m/s: several hundred contacts per step from the first step on, about
//! 140 solver iterations per step, and more contacts than one parallel chunk
//! of the solver (256), so thread scheduling could show if it leaked into
//! the result.

mod common;

use std::path::Path;

use repose::output::summary::Summary;
use repose::run::{run_scene, BackendChoice, RunOptions};
use repose::scene::Scene;

fn small_pour() -> Scene {
    small_pour_with(&[])
}

/// [`small_pour`] with further `--set` overrides (path, value).
fn small_pour_with(more: &[(&str, &str)]) -> Scene {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/pour.ron");
    let set = |p: &str, v: &str| (p.to_string(), v.to_string());
    let mut overrides = vec![
        set("duration", "0.04"), // 20 steps of 2 ms
        set("spheres.0.count.0", "8"),
        set("spheres.0.count.1", "8"),
        set("spheres.0.count.2", "8"),
        set("spheres.0.spacing", "0.0095"), // 0.5 mm gaps at radius 4.5 mm
        set("spheres.0.jitter", "0.02"),
        set("spheres.0.origin.2", "0.0047"), // lowest layer on the floor
        set("output.track.1", "511"),
    ];
    overrides.extend(more.iter().map(|&(p, v)| set(p, v)));
    let scene = Scene::load(&path, &overrides).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.steps(), 20);
    scene
}

/// Runs `scene` on `backend` into a fresh temporary directory; returns the
/// summary and the bytes of final.csv.
fn run_once(scene: &Scene, backend: BackendChoice) -> (Summary, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        out_dir: Some(dir.path().to_path_buf()),
        progress: false,
        no_frames: true,
        backend,
        no_picture: true,
        ..Default::default()
    };
    let summary =
        run_scene(scene, &opts).unwrap_or_else(|e| panic!("run on {backend:?} failed: {e:#}"));
    let csv = std::fs::read(dir.path().join("final.csv")).unwrap();
    (summary, csv)
}

/// Asserts the two final.csv files are byte-identical, showing the first
/// differing line of each otherwise.
fn assert_same_bytes(first: &[u8], second: &[u8], what: &str) {
    if first == second {
        return;
    }
    let (a, b) = (
        String::from_utf8_lossy(first),
        String::from_utf8_lossy(second),
    );
    let diff = a
        .lines()
        .zip(b.lines())
        .enumerate()
        .find(|(_, (x, y))| x != y)
        .map(|(i, (x, y))| format!("line {}:\n  first:  {x}\n  second: {y}", i + 1))
        .unwrap_or_else(|| format!("{} lines vs {} lines", a.lines().count(), b.lines().count()));
    panic!("{what}: final.csv differs between the two runs; {diff}");
}

/// The run exercises the solver: contacts on every step and iterations.
fn assert_nontrivial(s: &Summary) {
    assert_eq!(s.steps, 20, "steps");
    assert!(
        s.contacts.min > 256,
        "expected more than 256 contacts on every step, got min {}",
        s.contacts.min
    );
    assert!(
        s.solver.iterations_mean > 10.0,
        "expected the solver to iterate, got {} iterations per step",
        s.solver.iterations_mean
    );
}

fn assert_reproducible(backend: BackendChoice) {
    let scene = small_pour();
    let (s1, a) = run_once(&scene, backend);
    let (s2, b) = run_once(&scene, backend);
    assert_nontrivial(&s1);
    assert_eq!(s1.backend, s2.backend);
    assert_same_bytes(&a, &b, &format!("{backend:?}"));
}

#[test]
fn cpu_runs_give_byte_identical_final_csv() {
    assert_reproducible(BackendChoice::Cpu);
}

#[test]
fn cpu_f32_runs_give_byte_identical_final_csv() {
    assert_reproducible(BackendChoice::CpuF32);
}

#[test]
fn gpu_runs_give_byte_identical_final_csv() {
    if repose::gpu::context_for_tests("determinism::gpu_runs_give_byte_identical_final_csv")
        .is_none()
    {
        return;
    }
    assert_reproducible(BackendChoice::Gpu);
}

/// Runs `scene` on the CPU in a pool of `threads` rayon threads.
fn run_on_threads(scene: &Scene, threads: usize) -> (Summary, Vec<u8>) {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| {
            assert_eq!(rayon::current_num_threads(), threads);
            run_once(scene, BackendChoice::Cpu)
        })
}

#[test]
fn cpu_final_csv_does_not_depend_on_the_number_of_threads() {
    let scene = small_pour();
    let (s1, one) = run_on_threads(&scene, 1);
    let (_, two) = run_on_threads(&scene, 2);
    assert_nontrivial(&s1);
    assert_same_bytes(&one, &two, "1 thread (first) vs 2 threads (second)");
}

/// The same for the penalty formulation (its neighbour-list driver: pairs
/// in parallel chunks of 256, four at a time in SIMD lanes, boundary
/// contacts in runs of 64, per-body sums fused with the position pass):
/// the pour's 512 beads list more pairs than one chunk and touch on every
/// step, so a chunking or a sum order that followed the threads would
/// show.
#[test]
fn penalty_final_csv_does_not_depend_on_the_number_of_threads() {
    let scene = small_pour_with(&[("formulation", "Penalty")]);
    let (s1, one) = run_on_threads(&scene, 1);
    let (s2, two) = run_on_threads(&scene, 2);
    assert_eq!(s1.steps, 20, "steps");
    assert!(
        s1.contacts.min > 0 && s1.contacts.max > 256,
        "expected contacts on every step and more than 256 on some, got {:?}",
        s1.contacts
    );
    assert_eq!(s1.contacts.max, s2.contacts.max, "contacts");
    assert_same_bytes(
        &one,
        &two,
        "penalty: 1 thread (first) vs 2 threads (second)",
    );
}

/// The stepper's serial path (a one-thread pool for small steps) and its
/// parallel path give the same bits: APGD on a pile of 3,000-odd contacts,
/// more than one chunk of the fixed-order reductions, 15 steps.
#[test]
fn serial_and_parallel_steps_give_bit_identical_states() {
    let run = |serial: bool| {
        let mut world = common::loose_pile_world(1000, 0.002, 0.001);
        world.model.solver.method = repose::solver::SolverMethod::Apgd;
        world.model.solver.max_iterations = 60;
        world.model.solver.tolerance = 1e-9;
        let mut st = repose::step::Stepper::new();
        let mut step_all = |st: &mut repose::step::Stepper| {
            let mut contacts = 0;
            for _ in 0..15 {
                contacts = st.step(&mut world).unwrap().contacts;
            }
            contacts
        };
        let contacts = if serial {
            st.serial_below = usize::MAX;
            step_all(&mut st)
        } else {
            // On a two-thread pool's thread the stepper runs there.
            rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap()
                .install(|| {
                    assert_eq!(rayon::current_num_threads(), 2);
                    step_all(&mut st)
                })
        };
        assert!(
            contacts > 2 * repose::solver::REDUCE_CHUNK,
            "{contacts} contacts"
        );
        let b = &world.state.bodies;
        let bits = |v: &[glam::DVec3]| -> Vec<u64> {
            v.iter()
                .flat_map(|x| x.to_array().map(f64::to_bits))
                .collect()
        };
        (bits(&b.pos), bits(&b.vel), bits(&b.omega))
    };
    let (serial, parallel) = (run(true), run(false));
    assert!(serial.0 == parallel.0, "positions differ");
    assert!(serial.1 == parallel.1, "velocities differ");
    assert!(serial.2 == parallel.2, "spins differ");
}
