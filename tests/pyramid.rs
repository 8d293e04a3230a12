//! Peiret et al. 2017's pyramid LCP formulation
//! (`formulation: PyramidLcp(…)`), tested as physics: Table 1's cube stops,
//! on a path close to the one the complementarity formulation's 6-D cone
//! gives the same cube; faceted friction approaches the cone as the
//! directions grow; the lead matrix has full rank with phantom inertia and
//! loses it without (Peiret et al. 2017, §"LCP"), and the anchor
//! (Anitescu–Potra) form of the same step is rank-deficient yet solved by
//! Lemke's method; bad settings and systems too large for a dense solve are
//! refused by name.

use glam::DVec3;
use repose::formulation::pyramid::{histories, rank, PyramidLcp, PyramidSettings};
use repose::formulation::Formulation;
use repose::lcp::{lemke, pyramid_impulses, pyramid_lcp, LemkeOutcome};
use repose::problem::explicit::ExplicitDelassus;
use repose::scene::Scene;
use repose::step::{Backend, Stepper};
use repose::world::World;

const G: f64 = 9.81;

fn scene_text(name: &str) -> String {
    let path = format!("{}/scenes/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Table 1's cube (`scenes/spinning_cube.ron`) at step h under the pyramid
/// formulation with `settings`, or (None) under the scene's own: the
/// complementarity formulation, De Saxcé's law, APGD to 1e-9.
fn cube(h: f64, settings: Option<PyramidSettings>) -> World {
    let text =
        scene_text("spinning_cube.ron").replace("time_step: 1e-3,", &format!("time_step: {h},"));
    let mut scene = Scene::from_str(&text, "spinning_cube.ron", &[]).expect("scene");
    if let Some(s) = settings {
        scene.formulation = Formulation::PyramidLcp(s);
    }
    scene.build().expect("build")
}

/// The centre's positions, every step, and when sliding and spinning
/// stopped (speeds below 1e-3).
struct Path {
    points: Vec<DVec3>,
    t_slide: f64,
    t_spin: f64,
    end_speed: f64,
}

fn run(mut w: World, duration: f64) -> Path {
    let mut stepper = Stepper::new();
    let steps = (duration / w.model.time_step).round() as usize;
    let mut points = vec![w.state.bodies.pos[0]];
    let (mut t_slide, mut t_spin) = (f64::NAN, f64::NAN);
    for _ in 0..steps {
        stepper.step(&mut w).unwrap_or_else(|e| panic!("step: {e}"));
        points.push(w.state.bodies.pos[0]);
        let v = DVec3::new(w.state.bodies.vel[0].x, w.state.bodies.vel[0].y, 0.0).length();
        if t_slide.is_nan() && v < 1e-3 {
            t_slide = w.state.time;
        }
        if t_spin.is_nan() && w.state.bodies.omega[0].z.abs() < 1e-3 {
            t_spin = w.state.time;
        }
    }
    Path {
        points,
        t_slide,
        t_spin,
        end_speed: w.state.bodies.vel[0].length() + w.state.bodies.omega[0].length(),
    }
}

/// The largest distance between two paths at equal times.
fn deviation(a: &Path, b: &Path) -> f64 {
    a.points
        .iter()
        .zip(&b.points)
        .map(|(p, q)| (*p - *q).length())
        .fold(0.0, f64::max)
}

/// Peiret et al. 2017, Table 1 (1 kg, 1 m side, 5 m/s, ω_z = 2π s⁻¹, μ = 1,
/// k_n = 1e10, b_n = 1e8, k_t = 1e8, b_t = 1e5, v_th = 1 mm/s; four vertex
/// contacts) at h = 10 ms and 1 ms with two and four directions: the cube
/// stops, sliding and spinning together, when the 6-D cone's cube does
/// (within 2 steps), and its centre never strays more than 3 cm from the
/// cone's path of about 1.6 m (measured: 2.5 cm at k = 2, h = 10 ms;
/// 0.3 cm and less otherwise).
#[test]
fn table1_cube_stops_on_the_path_of_the_cone_solution() {
    for h in [1e-2, 1e-3] {
        let cone = run(cube(h, None), 1.5);
        for k in [2, 4] {
            let p = run(
                cube(
                    h,
                    Some(PyramidSettings {
                        directions: k,
                        ..Default::default()
                    }),
                ),
                1.5,
            );
            let dev = deviation(&p, &cone);
            println!(
                "h = {h} s, k = {k}: slide stops at {:.3} s, spin at {:.3} s (cone: {:.3}, {:.3}); largest distance from the cone's path {:.4} m",
                p.t_slide, p.t_spin, cone.t_slide, cone.t_spin, dev
            );
            assert!(
                p.t_slide.is_finite() && p.t_spin.is_finite() && p.end_speed < 1e-3,
                "h = {h}, k = {k}: did not stop (slide {} s, spin {} s, speed at 1.5 s {})",
                p.t_slide,
                p.t_spin,
                p.end_speed
            );
            for (what, t, t_cone) in [
                ("slide", p.t_slide, cone.t_slide),
                ("spin", p.t_spin, cone.t_spin),
            ] {
                assert!(
                    (t - t_cone).abs() <= 2.0 * h + 1e-9,
                    "h = {h}, k = {k}: {what} stops at {t} s, the cone's at {t_cone} s (tolerance 2 h)"
                );
            }
            assert!(
                dev <= 0.03,
                "h = {h}, k = {k}: the path strays {dev} m from the cone's (tolerance 0.03 m)"
            );
        }
    }
}

/// Without the sliding frame (v_th = ∞, every contact faceted by its k
/// directions) the friction force does not oppose the slip but points at a
/// facet's corner: the path bends away from the cone's, the less so the more
/// directions (measured at h = 10 ms: 0.43 m at k = 2, 0.10 m at 4, 0.037 m
/// at 8).
#[test]
fn faceted_friction_approaches_the_cone_as_directions_grow() {
    let h = 1e-2;
    let cone = run(cube(h, None), 1.5);
    let devs: Vec<f64> = [2, 4, 8]
        .iter()
        .map(|&k| {
            let p = run(
                cube(
                    h,
                    Some(PyramidSettings {
                        directions: k,
                        velocity_threshold: f64::MAX,
                        ..Default::default()
                    }),
                ),
                1.5,
            );
            assert!(
                p.end_speed < 1e-3,
                "k = {k}: did not stop ({})",
                p.end_speed
            );
            deviation(&p, &cone)
        })
        .collect();
    println!("largest distance from the cone's path at k = 2, 4, 8: {devs:?} m");
    assert!(
        devs[0] > devs[1] && devs[1] > devs[2],
        "the distance should fall with k: {devs:?}"
    );
    assert!(
        devs[2] < 0.05,
        "k = 8 strays {} m (tolerance 0.05 m)",
        devs[2]
    );
}

/// The cube's step problem after `steps` steps of the pyramid formulation
/// (the contacts sliding), with its histories.
fn sliding_cube_step(
    settings: &PyramidSettings,
    steps: usize,
) -> (World, repose::problem::ContactProblem) {
    let mut w = cube(1e-2, Some(settings.clone()));
    let mut stepper = Stepper::new();
    for _ in 0..steps {
        stepper.step(&mut w).expect("step");
    }
    // One more step poses the problem the next LCP is built from.
    let before = w.clone();
    stepper.step(&mut w).expect("step");
    (before, stepper.last_problem().clone())
}

/// Peiret et al. 2017: without phantom inertia "the LCP becomes rank-deficient".
/// On Table 1's cube at h = 10 ms, k = 2 (four contacts, K = 8 directions:
/// 4 + 2·8 = 20 unknowns), before, while and after sliding, the reduced
/// lead matrix has full numerical rank (tolerance size · ε · σ_max) for
/// ρ ≥ 1e-3 kg; at ρ = 0 the columns of w_up and w_lo of each direction are
/// opposite and it loses K. Measured in between: rank 19 from 1e-4 down to
/// 1e-8 kg (one singular value ≈ ρ ε_n / 2, ε_n = 5e-7: the box's four
/// normal rows are dependent in its three free directions and held apart
/// only by the normal relaxation), 16 at 1e-10 kg. The same step in the
/// anchor (Anitescu–Potra) form, unrelaxed, is rank-deficient too, and
/// Lemke's method solves it: the normal impulses carry the weight, m g h.
#[test]
fn lead_matrix_has_full_rank_with_phantom_inertia_only() {
    let settings = PyramidSettings::default();
    let mut last = None;
    for steps in [0, 10, 40, 140] {
        let (w, problem) = sliding_cube_step(&settings, steps);
        let hist = histories(&problem, &w.state.warm, &w.state.bodies);
        let (h, vrec) = (w.model.time_step, w.model.contact.max_recovery_speed);
        let mut line = String::new();
        for rho in [1e-1, 1e-2, 1e-3, 1e-4, 1e-6, 1e-8, 1e-10, 0.0] {
            let s = PyramidSettings {
                phantom_inertia: rho,
                ..settings.clone()
            };
            let lcp = PyramidLcp::build(&problem, &hist, &s, h, vrec).expect("posed");
            let r = lcp.rank();
            line += &format!(" | ρ = {rho:e}: {} of {}", r.rank, r.size);
            if rho >= 1e-3 {
                assert_eq!(
                    r.rank, r.size,
                    "step {steps}, ρ = {rho} kg: rank {} of {} (σ_min {:e}, tolerance {:e})",
                    r.rank, r.size, r.sigma_min, r.tolerance
                );
            }
            if rho == 0.0 {
                let k = lcp.dirs.len();
                assert_eq!(
                    r.rank,
                    r.size - k,
                    "step {steps}, ρ = 0: rank {} of {}, expected {} directions lost",
                    r.rank,
                    r.size,
                    k
                );
            }
        }
        println!("after {steps} steps (sliding contacts {:?}){line}", {
            let lcp = PyramidLcp::build(&problem, &hist, &settings, h, vrec).expect("posed");
            lcp.sliding
        });
        if steps == 10 {
            last = Some((w, problem));
        }
    }
    let (w, problem) = last.expect("ran");
    let h = w.model.time_step;

    // The anchor form: W of the (normal, t1, t2) rows, unrelaxed.
    let n = problem.n_contacts();
    let explicit = ExplicitDelassus::from_problem(&problem);
    let mut wd = vec![0.0; 9 * n * n];
    let mut q = vec![0.0; 3 * n];
    for i in 0..n {
        for b in explicit.row_offsets[i]..explicit.row_offsets[i + 1] {
            let j = explicit.cols[b];
            for r in 0..3 {
                for c in 0..3 {
                    wd[(3 * i + r) * 3 * n + 3 * j + c] = explicit.blocks[b][r][c];
                }
            }
        }
        q[3 * i..3 * i + 3].copy_from_slice(&explicit.r[i][..3]);
    }
    let mu: Vec<f64> = problem.cone.iter().map(|c| c.mu).collect();
    let k = 8;
    let (m, qq) = pyramid_lcp(&wd, &q, &mu, k);
    let r = rank(&m, qq.len());
    println!("anchor form, k = {k}: rank {} of {}", r.rank, r.size);
    assert!(
        r.rank < r.size,
        "the anchor form should be rank-deficient: {r:?}"
    );
    match lemke(&m, &qq, 100 * qq.len()) {
        LemkeOutcome::Solved { z, pivots, .. } => {
            let p = pyramid_impulses(&z, n, k);
            let normal: f64 = (0..n).map(|i| p[3 * i]).sum();
            println!("anchor form solved in {pivots} pivots: Σ p_n = {normal} N s");
            // The cube rests on the floor: its normal impulses carry its
            // weight over the step (and stop no vertical motion).
            assert!(
                (normal - G * h).abs() < 1e-6 * G * h + 1e-9,
                "Σ p_n = {normal}, m g h = {}",
                G * h
            );
        }
        other => panic!("Lemke did not solve the anchor form: {other:?}"),
    }
}

/// Scenes with rolling or spinning friction, bad settings, GPU or f32
/// backends and systems too large for a dense solve are refused by name.
#[test]
fn refusals_name_the_field_or_the_limit() {
    let text = scene_text("spinning_cube.ron");
    let bad = |set: &[(&str, &str)]| {
        let o: Vec<(String, String)> = set
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        Scene::from_str(&text, "spinning_cube.ron", &o)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let e = bad(&[
        ("formulation", "PyramidLcp"),
        ("materials.0.rolling", "0.01"),
    ]);
    assert!(
        e.contains("materials[0].rolling") && e.contains("sliding friction only"),
        "{e}"
    );
    for (setting, field) in [
        ("directions: 1", "directions"),
        ("phantom_inertia: -1", "phantom_inertia"),
        ("velocity_threshold: 0", "velocity_threshold"),
    ] {
        let t = text.replace(
            "time_step: 1e-3,",
            &format!("time_step: 1e-3, formulation: PyramidLcp({setting}),"),
        );
        let e = Scene::from_str(&t, "cube.ron", &[])
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("formulation.PyramidLcp.{field}")),
            "{e}"
        );
    }

    let mut w = cube(1e-3, Some(PyramidSettings::default()));
    let e = Stepper::with_backend(Backend::CpuF32)
        .step(&mut w)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("pyramid-lcp formulation runs on the cpu backend"),
        "{e}"
    );

    // 12 × 12 spheres resting on a floor: 144 contacts, 720 unknowns at k = 2.
    let many = "Scene(version: 1, time_step: 1e-3, duration: 0.01,
        formulation: PyramidLcp(),
        materials: [(name: \"m\", friction: 0.5, density: 1000.0)],
        spheres: [Lattice(origin: (0.01, 0.01, 0.01), count: (12, 12, 1), spacing: 0.03, radius: 0.01)],
        boundaries: [Plane(point: (0, 0, 0), normal: (0, 0, 1))])";
    let mut w = Scene::from_str(many, "many.ron", &[])
        .expect("scene")
        .build()
        .expect("build");
    let e = Stepper::new().step(&mut w).unwrap_err().to_string();
    assert!(
        e.contains("144 contacts") && e.contains("720 unknowns") && e.contains("600"),
        "{e}"
    );
}
