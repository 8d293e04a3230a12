//! A stale warm start must not pass for a converged solve. The warm start
//! of a contact is its impulse from the last step; a sphere that has just
//! been stopped by a floor carries the stopping impulse into the next step,
//! where the right impulse is about zero. If the solver's stopping test
//! accepts that start, the sphere is kicked up by its own impact speed
//! (restitution 0 turned into 1). The test is the case that exposed it in
//! repose_acary2021: spheres rolling fast elsewhere (relative spins of
//! hundreds of rad/s in their rolling rows) while one sphere lands.

use repose::gpu::context_for_tests;
use repose::scene::Scene;
use repose::step::{Backend, Stepper};

const SCENE: &str = r#"Scene(
    version: 1,
    name: "landing",
    time_step: 1e-3,
    duration: 0.01,
    solver: (method: METHOD, max_iterations: 500, tolerance: 1e-4),
    contact: (friction_law: DeSaxce),
    materials: [(name: "s", friction: 0.3, rolling: 0.00001, spinning: 0.0, density: 1300.0)],
    spheres: [
        // Lands: 0.5 mm above the floor at 2 m/s.
        Sphere(pos: (0.0, 0.0, 0.0105), radius: 0.01, velocity: (0.0, 0.0, -2.0)),
        ROLLING
    ],
    boundaries: [Plane(point: (0.0, 0.0, 0.0), normal: (0.0, 0.0, 1.0))],
)"#;

fn landing_sphere_stays_down(method: &str) {
    landing_sphere_stays_down_on(method, None);
}

/// The test body on `backend` (the f64 CPU solver when `None`).
fn landing_sphere_stays_down_on(method: &str, backend: Option<Backend>) {
    // Twenty spheres rolling at 3 m/s (spin v/r = 300 rad/s), far apart.
    let rolling: String = (0..20)
        .map(|k| {
            format!(
                "Sphere(pos: (1.0, {}, 0.01), radius: 0.01, velocity: (3.0, 0.0, 0.0), angular_velocity: (0.0, 300.0, 0.0)),\n",
                -1.0 + 0.1 * k as f64
            )
        })
        .collect();
    let text = SCENE.replace("METHOD", method).replace("ROLLING", &rolling);
    let mut w = Scene::from_str(&text, "landing.ron", &[])
        .unwrap_or_else(|e| panic!("{e}"))
        .build()
        .unwrap();
    let mut st = match backend {
        Some(b) => Stepper::with_backend(b),
        None => Stepper::new(),
    };
    let mut worst: f64 = 0.0;
    for _ in 0..10 {
        st.step(&mut w).expect("step");
        worst = worst.max(w.state.bodies.vel[0].z);
    }
    // Plastic impact (restitution 0): after the landing step the sphere
    // rests, up to what the 1e-4 tolerance leaves (measured 0.02–0.09 m/s).
    // A stale impulse returned as converged sent it up at 1.0 (APGD) to
    // 2.4 m/s (Jacobi, PGS): half to all of the 2 m/s impact speed back.
    assert!(
        worst < 0.2,
        "{method}: the landed sphere rose at {worst} m/s (expected < 0.2 m/s, a tenth of its 2 m/s impact: it should stay on the floor)"
    );
    let z = w.state.bodies.pos[0].z;
    assert!(
        (z - 0.01).abs() < 1e-3,
        "{method}: landed sphere at z = {z}, expected r = 0.01 within a tenth of r (a stale impulse lifts it by several mm)"
    );
}

#[test]
fn landing_sphere_is_not_kicked_by_a_stale_warm_start_apgd() {
    landing_sphere_stays_down("Apgd");
}

#[test]
fn landing_sphere_is_not_kicked_by_a_stale_warm_start_pgs() {
    landing_sphere_stays_down("Pgs");
}

#[test]
fn landing_sphere_is_not_kicked_by_a_stale_warm_start_jacobi() {
    landing_sphere_stays_down("Jacobi");
}

/// The f32 mirror stops on the weighted residual too (with the unweighted
/// `ResidualMeasure::Contact` this scene passed with the stale impulse in,
/// and the sphere rose at 2.4 m/s).
#[test]
fn landing_sphere_is_not_kicked_by_a_stale_warm_start_cpu_f32() {
    landing_sphere_stays_down_on("Jacobi", Some(Backend::CpuF32));
}

/// The GPU's residual pass weights as the f32 mirror does.
#[test]
fn landing_sphere_is_not_kicked_by_a_stale_warm_start_gpu() {
    if let Some(ctx) = context_for_tests("landing_sphere_is_not_kicked_by_a_stale_warm_start_gpu") {
        landing_sphere_stays_down_on("Jacobi", Some(Backend::gpu(ctx).expect("GPU pipelines")));
    }
}
