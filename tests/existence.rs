//! Acary & Cadoux 2011's existence criterion (`repose::existence`) on its
//! Painlevé-like example (§4.2–4.3): the checker's s ≥ 0 against the closed
//! form (36), and against an independent solution of the incremental
//! problem (32) by its three cases (take-off, stick, slide), which Lemma 7
//! sums up as "a solution exists iff u₀ ≤ 0 or tan θ > μ".

use repose::existence::{check, painleve, IncrementalProblem};

/// Whether problem (32) (M = 1, f = sin θ; r = (r_N, r_T); v = cos θ r_T +
/// sin θ r_N − sin θ; u = (sin θ v, cos θ v + u₀)) has a solution, by
/// trying each case of Acary & Cadoux 2011, eq. 4.
fn solvable_by_cases(u0: f64, theta: f64, mu: f64) -> bool {
    let (s, c) = theta.sin_cos();
    // Take off: r = 0, u_N ≥ 0.
    let v = -s;
    if s * v >= 0.0 {
        return true;
    }
    // Stick: u = 0 (v = 0 and u₀ = 0), r in K_{e, μ} with cos θ r_T +
    // sin θ r_N = sin θ: r = (1, 0) does it.
    if u0 == 0.0 {
        return true;
    }
    // Slide: u_N = 0 ⇒ v = 0, u_T = u₀ ≠ 0, r_T = −sign(u₀) μ r_N with
    // r_N ≥ 0 and cos θ r_T + sin θ r_N = sin θ.
    let k = s - u0.signum() * mu * c;
    if k == 0.0 {
        return false;
    }
    s / k >= 0.0
}

/// Over u₀ ∈ {−1, −0.3, 0, 0.3, 1}, θ from 1° to 89° and μ ∈ {0.1, 0.5,
/// 1, 3} (away from the border tan θ = μ): the checker guarantees a
/// solution exactly where (36) and the case-by-case solution say one
/// exists, and calls it robust where u₀ < 0 or tan θ > μ.
#[test]
fn painleve_existence_matches_lemma_7_and_the_three_cases() {
    let (mut cases, mut skipped) = (0, 0);
    for &u0 in &[-1.0, -0.3, 0.0, 0.3, 1.0] {
        for deg in (1..=89).step_by(4) {
            let theta = (deg as f64).to_radians();
            for &mu in &[0.1, 0.5, 1.0, 3.0] {
                if (theta.tan() - mu).abs() < 0.02 * mu.max(theta.tan()) {
                    skipped += 1;
                    continue;
                }
                let lemma = u0 <= 0.0 || theta.tan() > mu;
                let cases_say = solvable_by_cases(u0, theta, mu);
                let r = check(&painleve(u0, theta, mu));
                assert_eq!(
                    cases_say, lemma,
                    "u0 {u0}, θ {deg}°, μ {mu}: the three cases say {cases_say}, Lemma 7 {lemma}"
                );
                assert_eq!(
                    r.guaranteed, lemma,
                    "u0 {u0}, θ {deg}°, μ {mu}: s = {} ({}), Lemma 7 {lemma}",
                    r.s, r.status
                );
                let robust = u0 < 0.0 || theta.tan() > mu;
                assert_eq!(
                    r.robust, robust,
                    "u0 {u0}, θ {deg}°, μ {mu}: s = {}, robust expected {robust}",
                    r.s
                );
                cases += 1;
            }
        }
    }
    eprintln!("OBSERVED {cases} cases agree ({skipped} within 2 % of tan θ = μ left out)");
    assert!(cases > 400);
}

/// Frictionless contacts (μ = 0): (A) is the necessary condition that
/// penetration can be avoided (Acary & Cadoux 2011, §4.1): two contacts pushing
/// one unknown from both sides with w = (−1, −1) cannot both open (s < 0); with
/// w = (1, −1) they can (s ≥ 0). Bad data are named.
#[test]
fn frictionless_and_malformed_problems() {
    let squeeze = |w1: f64| IncrementalProblem {
        dim: 2,
        dofs: 1,
        h: vec![1.0, 0.0, -1.0, 0.0],
        w: vec![w1, 0.0, -1.0, 0.0],
        mu: vec![0.0, 0.0],
    };
    let closed = check(&squeeze(-1.0));
    assert!(!closed.guaranteed && closed.s < 0.0, "{closed:?}");
    let open = check(&squeeze(1.0));
    assert!(open.guaranteed, "{open:?}");
    let bad = IncrementalProblem {
        dim: 4,
        dofs: 1,
        h: vec![1.0],
        w: vec![0.0],
        mu: vec![-1.0],
    };
    let problems = bad.problems().join("; ");
    for what in ["dim", "H:", "w:", "mu[0]"] {
        assert!(problems.contains(what), "{problems}");
    }
}

/// s of every `every`-th step's problem of `scene` (with `sets`) over
/// `steps` steps, from the contact problem repose solves
/// (`from_contact_problem`: its bias, stabilisation included).
fn scene_s(
    scene: &str,
    sets: &[(&str, &str)],
    steps: usize,
    every: usize,
) -> Vec<(usize, usize, f64)> {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenes")
        .join(scene);
    let mut w = repose::scene::Scene::load(&path, &sets)
        .and_then(|s| s.build())
        .expect("scene");
    let mut st = repose::step::Stepper::new();
    let mut out = Vec::new();
    for k in 1..=steps {
        st.step(&mut w).expect("step");
        if k % every == 0 && st.last_problem().n_contacts() > 0 {
            let p = repose::existence::from_contact_problem(st.last_problem());
            let r = check(&p);
            out.push((k, p.n_contacts(), r.s));
        }
    }
    out
}

/// Acary & Cadoux 2011, §4.4: spheres at rest in a fixed box, on a plate
/// moving sideways and up (`repose_acary2021.ron`'s plate given a velocity of
/// (0.2, 0, 0.05) m/s, its pile poured), and in a turning drum (one external
/// object in rigid motion each): the step problems that repose solves
/// satisfy (A) at every checked step.
#[test]
fn spheres_in_a_box_on_a_moving_plate_and_in_a_drum_always_have_a_solution() {
    for (scene, sets, steps, every) in [
        ("column.ron", vec![], 200, 20),
        (
            "repose_acary2021.ron",
            vec![
                ("boundaries.0.velocity.x", "0.2"),
                ("boundaries.0.velocity.z", "0.05"),
            ],
            3000,
            300,
        ),
        ("drum.ron", vec![("duration", "0.2")], 100, 20),
    ] {
        let got = scene_s(scene, &sets, steps, every);
        eprintln!("OBSERVED {scene}: (step, contacts, s) {got:?}");
        assert!(!got.is_empty());
        for (k, n, s) in got {
            assert!(s >= -1e-7, "{scene} step {k} ({n} contacts): s = {s}");
        }
    }
}

/// `repose check-existence` on its three inputs: a RON incremental problem
/// (Painlevé's bar, robust at θ = 60°, μ = 0.5; not guaranteed at μ = 3),
/// a Siconos problem, and a scene at a step; a malformed file is one error
/// naming the file and the field.
#[test]
fn check_existence_reads_ron_siconos_and_scenes() {
    let bin = env!("CARGO_BIN_EXE_repose");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let run = |args: &[&std::ffi::OsStr]| {
        let out = std::process::Command::new(bin)
            .arg("check-existence")
            .args(args)
            .output()
            .expect("repose runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let file = |name: &str, mu: &str| {
        let p = tmp.path().join(name);
        let (s, c) = 60f64.to_radians().sin_cos();
        std::fs::write(
            &p,
            format!(
                "IncrementalProblem(dim: 2, dofs: 1, h: [{s}, {c}], w: [0.0, 1.0], mu: [{mu}])"
            ),
        )
        .unwrap();
        p
    };
    let robust = file("robust.ron", "0.5");
    let (code, out, _) = run(&[robust.as_os_str()]);
    assert_eq!(code, Some(0));
    assert!(out.contains("a solution exists, robustly"), "{out}");
    let fails = file("fails.ron", "3.0");
    let (_, out, _) = run(&[fails.as_os_str()]);
    assert!(out.contains("condition (A) fails"), "{out}");
    let bad = file("bad.ron", "-1.0");
    let (code, _, err) = run(&[bad.as_os_str()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("bad.ron") && err.contains("mu[0]"), "{err}");
    let dat = root.join("tests/data/siconos/fc3d/Capsules-i101-404.dat");
    let (code, out, err) = run(&[dat.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("225 contacts") && out.contains("a solution exists"),
        "{out}"
    );
    let scene = root.join("scenes/column.ron");
    let (code, out, err) = run(&[
        scene.as_os_str(),
        "--at-step".as_ref(),
        "10".as_ref(),
        "--json".as_ref(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("\"guaranteed\": true"), "{out}");
}

/// `analysis.existence_every`: a run checks the criterion every N steps
/// and sums it up in `summary.json` (`extra.existence`): a turning drum,
/// checked every 10 steps over 50, is guaranteed a solution each time.
#[test]
fn runs_check_the_criterion_every_n_steps_into_the_summary() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let sets = [
        ("duration".to_string(), "0.1".to_string()),
        ("analysis.existence_every".to_string(), "10".to_string()),
    ];
    let scene = repose::scene::Scene::load(&root.join("scenes/drum.ron"), &sets).expect("scene");
    let tmp = tempfile::tempdir().unwrap();
    let s = repose::run::run_scene(
        &scene,
        &repose::run::RunOptions {
            out_dir: Some(tmp.path().join("drum")),
            no_frames: true,
            no_picture: true,
            backend: repose::run::BackendChoice::Cpu,
            ..Default::default()
        },
    )
    .expect("run");
    let e = &s.extra["existence"];
    let steps = s.steps;
    eprintln!("OBSERVED {steps} steps: {e}");
    assert_eq!(e["every"], 10);
    assert_eq!(e["checked"].as_u64(), Some(steps / 10), "{e}");
    assert_eq!(e["guaranteed"], e["checked"], "{e}");
    assert!(e["min_s"].as_f64().is_some_and(|m| m >= 0.0), "{e}");
    let bad = repose::scene::Scene::load(
        &root.join("scenes/drum.ron"),
        &[("analysis.existence_every".to_string(), "0".to_string())],
    )
    .unwrap_err()
    .to_string();
    assert!(bad.contains("existence_every"), "{bad}");
}

/// Counts read from a problem file multiply without wrapping: with
/// dofs = 2⁶³ + 1, one contact × 2 rows × dofs wraps to 2 in a release
/// build, the length of the H given, and the check would then index far
/// past it. Such a file, and one with no contacts or no degrees of
/// freedom, is refused naming the field.
#[test]
fn sizes_that_overflow_or_are_empty_are_refused_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            "wraps.ron",
            format!(
                "IncrementalProblem(dim: 2, dofs: {}, h: [0.5, 0.8], w: [0.0, 1.0], mu: [0.5])",
                (1u64 << 63) + 1
            ),
            "dofs:",
        ),
        (
            "no_contacts.ron",
            "IncrementalProblem(dim: 2, dofs: 1000000000000, h: [], w: [], mu: [])".to_string(),
            "mu: no contacts",
        ),
        (
            "no_dofs.ron",
            "IncrementalProblem(dim: 2, dofs: 0, h: [], w: [0.0, 1.0], mu: [0.5])".to_string(),
            "dofs: must be at least 1",
        ),
    ];
    for (name, text, want) in cases {
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        let e = std::panic::catch_unwind(|| repose::existence::read_ron(&path))
            .unwrap_or_else(|_| panic!("{name}: a panic"))
            .expect_err(name);
        assert!(
            e.contains(name) && e.contains(want),
            "{name}: expected {want:?} in: {e}"
        );
    }
}
