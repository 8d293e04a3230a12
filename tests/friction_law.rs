//! The contact law as physics: a layer of spheres sliding on a plane.
//!
//! Under the associated law (the convex relaxation of Tasora & Anitescu 2013) a
//! sliding contact opens: complementarity gives y_n = v_n + Φ/h = μ‖v_T‖
//! (Tasora & Anitescu 2013, eq. 28 with no rotation), so each step ends with
//! the gap Φ = h μ ‖v_T‖. Under De Saxcé's law (Acary & Bourrier 2021, eq. 63)
//! ŷ_n = y_n + μ‖y_T‖ = 0 while sliding, so the gap stays closed. Both
//! decelerate the layer at μ g. Rolling friction ρ > μ r keeps the spheres from
//! rolling, so only sliding enters eq. 28.

use repose::gpu::context_for_tests;
use repose::material::FrictionLaw;
use repose::scene::Scene;
use repose::solver::SolverMethod;
use repose::step::{Backend, Stepper};

const R: f64 = 0.01;
const MU: f64 = 0.3;
const H: f64 = 1e-3;
const G: f64 = 9.81;
const V0: f64 = 1.0;

/// Runs the sliding layer for `steps` steps on `backend` (the f64 CPU
/// solver when `None`); returns the mean gap to the floor and the mean x
/// velocity.
fn slide(
    law: FrictionLaw,
    method: SolverMethod,
    steps: usize,
    backend: Option<Backend>,
) -> (f64, f64) {
    let f32 = backend.as_ref().is_some_and(|b| b.is_f32());
    // f32 backends: a tolerance f32 can reach and a shorter iteration cap
    // (a step that cannot reach it spends the whole cap); the physical
    // checks below are what the test asserts for them.
    // The interior point's answers are as accurate as its conic solver's
    // gap allows (about 1e-8 relative here): 1e-7 for it.
    let (tolerance, max_iterations) = if f32 {
        (2e-6, 200)
    } else if method == SolverMethod::InteriorPoint {
        (1e-7, 20000)
    } else {
        (1e-9, 20000)
    };
    let text = format!(
        r#"Scene(
            version: 1, name: "slide", time_step: {H}, duration: 1.0,
            solver: (method: {method:?}, tolerance: {tolerance:e}, max_iterations: {max_iterations}),
            contact: (friction_law: {law:?}),
            materials: [(name: "m", friction: {MU}, rolling: 0.01, spinning: 0.0, density: 2500.0)],
            spheres: [Lattice(origin: (0.0, 0.0, {R}), count: (3, 3, 1), spacing: {s},
                              radius: {R}, material: 0, velocity: ({V0}, 0.0, 0.0))],
            boundaries: [Plane(name: "floor", point: (0.0, 0.0, 0.0), normal: (0.0, 0.0, 1.0), material: 0)],
        )"#,
        s = 2.0 * R
    );
    let scene = Scene::from_str(&text, "slide.ron", &[]).unwrap();
    let mut world = scene.build().unwrap();
    let mut st = match backend {
        Some(b) => Stepper::with_backend(b),
        None => Stepper::new(),
    };
    for _ in 0..steps {
        let rep = st.step(&mut world).unwrap();
        assert!(
            f32 || rep.solve.converged,
            "{law:?}/{method}: solver did not converge: {:?}",
            rep.solve
        );
    }
    let n = world.state.bodies.len() as f64;
    let gap = world.state.bodies.pos.iter().map(|p| p.z - R).sum::<f64>() / n;
    let vx = world.state.bodies.vel.iter().map(|v| v.x).sum::<f64>() / n;
    (gap, vx)
}

fn check(law: FrictionLaw, method: SolverMethod) {
    check_on(law, method, None);
}

fn check_on(law: FrictionLaw, method: SolverMethod, backend: Option<Backend>) {
    let steps = 100;
    let f32 = backend.as_ref().is_some_and(|b| b.is_f32());
    let (gap, vx) = slide(law, method, steps, backend);
    let v_expected = V0 - MU * G * H * steps as f64;
    // Under the associated law the normal impulse also carries the lift-off
    // and landing of the dilated gap (O(μ² g h) per step), so μ g t holds
    // only to about 1e-3 there.
    let tol = match law {
        FrictionLaw::Associated => 1e-3,
        FrictionLaw::DeSaxce if f32 => 1e-5,
        FrictionLaw::DeSaxce => 1e-6,
    };
    assert!(
        (vx - v_expected).abs() <= tol * V0,
        "{law:?}/{method}: sliding speed {vx} m/s after {steps} steps, expected V0 − μ g t = {v_expected}"
    );
    match law {
        FrictionLaw::Associated => {
            let predicted = H * MU * vx;
            assert!(
                (gap - predicted).abs() <= 0.01 * predicted,
                "associated/{method}: gap {gap:e} m, Tasora & Anitescu 2013, eq. 28, predicts h μ ‖v_T‖ = {predicted:e} m"
            );
        }
        FrictionLaw::DeSaxce => assert!(
            gap.abs() <= if f32 { 1e-7 } else { 1e-9 },
            "De Saxcé/{method}: gap {gap:e} m, expected 0 (no dilatancy); the associated law would give {:e} m",
            H * MU * vx
        ),
    }
}

#[test]
fn sliding_opens_the_gap_by_h_mu_speed_under_the_associated_law() {
    check(FrictionLaw::Associated, SolverMethod::Jacobi);
    check(FrictionLaw::Associated, SolverMethod::Apgd);
}

#[test]
fn sliding_keeps_the_gap_closed_under_the_de_saxce_law() {
    for method in SolverMethod::ALL {
        check(FrictionLaw::DeSaxce, method);
    }
}

#[test]
fn sliding_keeps_the_gap_closed_under_the_de_saxce_law_cpu_f32() {
    check_on(
        FrictionLaw::DeSaxce,
        SolverMethod::Jacobi,
        Some(Backend::CpuF32),
    );
}

#[test]
fn sliding_keeps_the_gap_closed_under_the_de_saxce_law_gpu() {
    if let Some(ctx) = context_for_tests("sliding_keeps_the_gap_closed_under_the_de_saxce_law_gpu")
    {
        check_on(
            FrictionLaw::DeSaxce,
            SolverMethod::Jacobi,
            Some(Backend::gpu(ctx).expect("GPU pipelines")),
        );
    }
}

#[test]
fn sliding_opens_the_gap_under_the_associated_law_gpu() {
    if let Some(ctx) = context_for_tests("sliding_opens_the_gap_under_the_associated_law_gpu") {
        check_on(
            FrictionLaw::Associated,
            SolverMethod::Jacobi,
            Some(Backend::gpu(ctx).expect("GPU pipelines")),
        );
    }
}
