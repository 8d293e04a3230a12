//! Bulk measures (`analysis.bulk`, `bulk.csv`): a settled column's
//! vertical stress is its weight's (Love–Weber), a sphere lattice has its
//! coordination number, and the penalty springs' stored energy is the
//! closed form of a sphere held on an incline and, with the kinetic
//! energy, constant through an elastic collision.

#[path = "common/cli.rs"]
mod cli;

use glam::DVec3;
use repose::analysis::{measure_bulk, read_bulk_csv, BulkSettings};
use repose::bodies::{Bodies, SphereInit};
use repose::material::Material;
use repose::scene::Scene;
use repose::step::Stepper;
use repose::world::World;

#[test]
fn a_settled_columns_vertical_stress_is_its_weight_times_radius_n_squared_over_the_volume() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("column");
    // The tube of scenes/column.ron: 3 cm square, 24 cm tall, floor at 0.
    let (lo, hi) = (
        DVec3::new(-0.015, -0.015, 0.0),
        DVec3::new(0.015, 0.015, 0.24),
    );
    // A whole struct cannot be --set: the scene with the region added.
    let text = std::fs::read_to_string(cli::scene_path("column.ron")).unwrap();
    let text = text.replacen(
        "duration: 1.0,",
        "duration: 1.0,\n    analysis: (bulk: Box(min: (-0.015, -0.015, 0.0), max: (0.015, 0.015, 0.24))),",
        1,
    );
    assert!(
        text.contains("bulk:"),
        "scenes/column.ron has changed: {text}"
    );
    let scene = dir.path().join("column.ron");
    std::fs::write(&scene, text).unwrap();
    let done = cli::repose([
        "run",
        scene.to_str().unwrap(),
        "--set",
        "solver.tolerance=1e-10",
        "--set",
        "solver.max_iterations=4000",
        "--no-frames",
        "--no-picture",
        "--backend",
        "cpu",
        "--out",
        out.to_str().unwrap(),
    ]);
    cli::assert_success(&done, "the column with analysis.bulk");
    let rows = read_bulk_csv(&out.join("bulk.csv")).unwrap();
    assert_eq!(
        rows.len(),
        101,
        "a row at the start and at each of the 100 frames (every 0.01 s)"
    );
    let last = rows.last().unwrap();
    let (n, r, g) = (10.0, 0.01, 9.81);
    let v = (hi - lo).x * (hi - lo).y * (hi - lo).z;
    let m = 7800.0 * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
    // Contacts k = 1..N−1 carry (N − k) W over a branch of 2r, the floor
    // N W over r: Σ f_z d_z = W r (N(N − 1) + N) = W r N².
    let want = m * g * r * n * n / v;
    let szz = last.stress[2];
    // At rest (speeds ~1e-9 m/s after 1 s) and solved to 1e-10: the
    // forces are the static ones to well below 1e-6.
    assert!(
        (szz - want).abs() <= 1e-6 * want,
        "sigma_zz {szz:.9e} Pa, expected W r N^2 / V = {want:.9e} Pa"
    );
    for (k, name) in [(0, "xx"), (1, "yy"), (3, "xy"), (4, "xz"), (5, "yz")] {
        assert!(
            last.stress[k].abs() <= 1e-9 * want,
            "sigma_{name} = {:.3e} Pa in a vertical column (sigma_zz {want:.3e})",
            last.stress[k]
        );
    }
    assert_eq!(last.bodies, 10);
    // 9 pairs count twice, the floor once: 19 ends over 10 bodies.
    assert!(
        (last.coordination - 1.9).abs() < 1e-12,
        "Z = {}",
        last.coordination
    );
    let phi = n * 4.0 / 3.0 * std::f64::consts::PI * r * r * r / v;
    assert!((last.solid_fraction - phi).abs() <= 1e-12 * phi);
    assert!(
        last.kinetic_energy < 1e-12,
        "E = {} J at rest",
        last.kinetic_energy
    );
    assert_eq!(
        last.elastic_energy, 0.0,
        "rigid contacts store no elastic energy"
    );
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(
        summary.contains("\"bulk\""),
        "summary.json records the last sample"
    );
}

#[test]
fn a_simple_cubic_lattice_has_six_loaded_contacts_per_interior_sphere() {
    // 5 x 5 x 5 spheres 2r(1 - 1e-3) apart: every neighbour overlaps by
    // 2e-5 m and is pushed apart in the first step, so every contact of the
    // lattice is loaded; no gravity, no walls. The region holds the 27
    // interior centres, each with its 6 neighbours: Z = 6.
    let r = 0.01;
    let a = 2.0 * r * (1.0 - 1e-3);
    let mass = SphereInit::solid_mass(r, 2500.0);
    let mut inits = Vec::new();
    for k in 0..125 {
        let (i, j, l) = (k % 5, (k / 5) % 5, k / 25);
        inits.push(SphereInit {
            pos: DVec3::new(i as f64, j as f64, l as f64) * a,
            radius: r,
            mass,
            inertia: SphereInit::solid_inertia(mass, r),
            vel: DVec3::ZERO,
            omega: DVec3::ZERO,
            material: 0,
        });
    }
    let mut world = World::new(
        Bodies::from_inits(&inits),
        Vec::new(),
        vec![Material {
            name: "m".into(),
            friction: 0.5,
            density: 2500.0,
            ..Default::default()
        }],
    );
    world.model.gravity = DVec3::ZERO;
    let mut st = Stepper::new();
    st.step(&mut world).unwrap();
    let c = st
        .contact_forces(&world)
        .expect("a rigid step keeps its contacts");
    assert_eq!(c.len(), 3 * 5 * 5 * 4, "the lattice's 300 neighbour pairs");
    let interior = BulkSettings::Box {
        min: DVec3::splat(0.5 * a),
        max: DVec3::splat(3.5 * a),
    };
    let s = measure_bulk(&interior, &world.state.bodies, &c, world.state.time);
    assert_eq!(s.bodies, 27);
    assert_eq!(s.coordination, 6.0, "simple cubic: 6 contacts per sphere");
    // Pushed apart along the axes only: an isotropic, diagonal stress.
    let [xx, yy, zz, xy, xz, yz] = s.stress;
    assert!(
        xx > 0.0 && (xx - yy).abs() <= 1e-9 * xx && (xx - zz).abs() <= 1e-9 * xx,
        "{:?}",
        s.stress
    );
    assert!(
        xy.abs().max(xz.abs()).max(yz.abs()) <= 1e-9 * xx,
        "{:?}",
        s.stress
    );
    // A cylinder around the lattice's middle vertical line holds its three
    // interior centres there: Z = 6 again, and their solid fraction.
    let line = BulkSettings::Cylinder {
        center: DVec3::splat(2.0 * a),
        axis: DVec3::Z,
        radius: 0.5 * a,
        half_length: 1.5 * a,
    };
    let s = measure_bulk(&line, &world.state.bodies, &c, world.state.time);
    assert_eq!(s.bodies, 3);
    assert_eq!(s.coordination, 6.0);
    let phi = 3.0 * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3)
        / (std::f64::consts::PI * (0.5 * a).powi(2) * 3.0 * a);
    assert!(
        (s.solid_fraction - phi).abs() <= 1e-12 * phi,
        "{} vs {phi}",
        s.solid_fraction
    );
}

/// `scenes/penalty_incline.ron` (a 5 kg sphere of radius 0.2 m, Hooke
/// k = 10⁶ N/m, K_E = 10⁵ N/m, μ_s = 0.25, η_r = 0.3) on a plane tilted
/// by `alpha`, built and run for `steps` steps of 1 ms.
fn sphere_on_incline(alpha: f64, steps: usize) -> (World, Stepper) {
    let n = DVec3::new(-alpha.sin(), 0.0, alpha.cos());
    let pos = n * (0.2 - 5.0 * 9.8 * alpha.cos() / 1e6);
    let set = |k: &str, v: f64| (k.to_string(), format!("{v:e}"));
    let scene = Scene::load(
        &cli::scene_path("penalty_incline.ron"),
        &[
            set("spheres.0.pos.0", pos.x),
            set("spheres.0.pos.2", pos.z),
            set("boundaries.0.normal.0", n.x),
            set("boundaries.0.normal.2", n.z),
        ],
    )
    .unwrap_or_else(|e| panic!("scenes/penalty_incline.ron: {e:#}"));
    let mut world = scene.build_quietly().unwrap();
    let mut st = Stepper::new();
    for k in 0..steps {
        st.step(&mut world)
            .unwrap_or_else(|e| panic!("step {k}: {e:#}"));
    }
    (world, st)
}

/// A sphere at rest on a 5° incline (tan α = 0.087, within both μ_s =
/// 0.25 and the rolling cap 2 η_r μ_s = 0.15: it sticks, App. D) holds its
/// weight's components N = m g cos α and F = m g sin α in three springs:
/// the normal one, N²/(2k); the sliding one, F²/(2 K_E); and its rocking
/// spring, which holds the torque F s of the friction at the lever arm s
/// = R − δ/2 (the contact point is mid-overlap, δ = N/k) with
/// K_R = 4 η_r K_E R² (Fang & Negrut 2020, eq. 2b, the plane's curvature 0):
/// (F s)²/(2 K_R).
#[test]
fn a_sphere_held_on_an_incline_stores_its_normal_sliding_and_rolling_springs_energy() {
    let alpha = 5f64.to_radians();
    let (world, st) = sphere_on_incline(alpha, 1000);
    let c = st.contact_forces(&world).expect("penalty records");
    assert_eq!(c.len(), 1, "one contact with the incline");
    let everything = BulkSettings::Box {
        min: DVec3::splat(-1.0),
        max: DVec3::splat(1.0),
    };
    let s = measure_bulk(&everything, &world.state.bodies, &c, world.state.time);
    // The scene's density gives 5 kg to 3e-10: its mass as built.
    let m = 1.0 / world.state.bodies.inv_mass[0];
    let (g, k, k_e, eta) = (9.8, 1e6, 1e5, 0.3);
    let (n, f, r) = (m * g * alpha.cos(), m * g * alpha.sin(), 0.2);
    let arm = r - 0.5 * n / k;
    let parts = [
        ("normal", n * n / (2.0 * k)),
        ("sliding", f * f / (2.0 * k_e)),
        (
            "rolling",
            (f * arm).powi(2) / (2.0 * 4.0 * eta * k_e * r * r),
        ),
    ];
    let want: f64 = parts.iter().map(|p| p.1).sum();
    // At rest after 1 s (checked: speed below `v_max`), every spring
    // holds its load; a spring of angular frequency ω is then within v/ω
    // of its rest deflection x, and its energy within 2 v/(ω x) of the
    // closed form. The slowest relative to its deflection is the sliding
    // one: ω = √(K_E/m), x = F/K_E.
    let v_max = 1e-12;
    let speed = world.state.bodies.vel[0].length();
    let spin = world.state.bodies.omega[0].length() * r;
    assert!(
        speed.max(spin) < v_max,
        "the sphere still moves: {speed:e} m/s, spins at {spin:e} m/s at its rim"
    );
    let tol = 2.0 * v_max / ((k_e / m).sqrt() * f / k_e) * want;
    assert!(
        (s.elastic_energy - want).abs() <= tol,
        "stored energy {:.15e} J, expected {want:.15e} J (tolerance {tol:.2e} J; {parts:?})",
        s.elastic_energy
    );
    assert_eq!(
        c.energy(0),
        s.elastic_energy,
        "a boundary contact's energy is its body's"
    );
}

/// Two equal spheres (r = 1 cm, E = 10⁷ Pa, restitution 1: no damping,
/// no friction) meeting head on at 0.2 m/s: kinetic plus elastic energy,
/// sampled at every step, stays the kinetic energy they came with, and at
/// the deepest overlap nearly all of it is in the Hertz spring.
///
/// Tolerance: the sub-steps are symplectic Euler, which for x'' = −ω² x
/// conserves H̃ = H − ω² Δt x v/2 (per unit mass, H = (v² + ω² x²)/2)
/// exactly; |H̃ − H| ≤ ω Δt H/2, so H stays within ω Δt H of where it
/// began. The Hertz spring is stiffest at the deepest overlap δ_max:
/// ω_max² = (3/2) k √δ_max / m*, δ_max = (15 m* v_rel² / (16 E* √R*))^{2/5}.
#[test]
fn kinetic_plus_elastic_energy_is_conserved_through_an_elastic_hertz_collision() {
    let (r, rho, e, nu, v) = (0.01, 2500.0, 1e7, 0.3, 0.1);
    let dt = 1e-6;
    let text = format!(
        "Scene(version: 1, time_step: 1e-4, duration: 1.0, gravity: (0, 0, 0),
           formulation: Penalty(normal: Hertz, time_step: {dt:e}),
           materials: [(name: \"m\", friction: 0.0, static_friction: 0.0, kinetic_friction: 0.0,
                        density: {rho:e}, young_modulus: {e:e}, poisson_ratio: {nu}, restitution: 1.0)],
           spheres: [Sphere(pos: (-{r:e}, 0, 0), radius: {r:e}, velocity: ({v:e}, 0, 0)),
                     Sphere(pos: ({r:e}, 0, 0), radius: {r:e}, velocity: (-{v:e}, 0, 0))])"
    );
    let scene = Scene::from_str(&text, "collision", &[]).unwrap_or_else(|e| panic!("{e:#}"));
    let mut world = scene.build_quietly().unwrap();
    let everything = BulkSettings::Box {
        min: DVec3::splat(-1.0),
        max: DVec3::splat(1.0),
    };
    let m = SphereInit::solid_mass(r, rho);
    let e0 = 2.0 * 0.5 * m * v * v;
    let m_star = m / 2.0;
    let r_star = r / 2.0;
    let e_star = e / (2.0 * (1.0 - nu * nu));
    let k = 4.0 / 3.0 * e_star * r_star.sqrt();
    let delta_max = (15.0 * m_star * (2.0 * v).powi(2) / (16.0 * e_star * r_star.sqrt())).powf(0.4);
    let omega_max = (1.5 * k * delta_max.sqrt() / m_star).sqrt();
    let tol = omega_max * dt * e0;
    let mut st = Stepper::new();
    let (mut worst, mut peak, mut steps_in_contact) = (0.0f64, 0.0f64, 0);
    for step in 0..60 {
        st.step(&mut world).unwrap();
        let c = st.contact_forces(&world).expect("penalty records");
        let s = measure_bulk(&everything, &world.state.bodies, &c, world.state.time);
        let total = s.kinetic_energy + s.elastic_energy;
        worst = worst.max((total - e0).abs());
        peak = peak.max(s.elastic_energy);
        steps_in_contact += usize::from(s.elastic_energy > 0.0);
        assert!(
            (total - e0).abs() <= tol,
            "step {step}: kinetic {:.9e} + elastic {:.9e} = {total:.9e} J vs {e0:.9e} J \
             (tolerance omega_max dt E0 = {tol:.3e} J)",
            s.kinetic_energy,
            s.elastic_energy
        );
    }
    let rebound = world.state.bodies.vel[1].x;
    assert!(rebound > 0.0, "the spheres parted: {rebound} m/s");
    // Sampled every 0.1 ms over a contact of about 3 ms: the sample
    // nearest the deepest overlap is within (π 0.1/3)² ≈ 1 % of it.
    assert!(
        peak >= 0.95 * e0,
        "the Hertz spring held at most {peak:.6e} J of {e0:.6e} J ({steps_in_contact} steps in contact; worst misfit {worst:.3e} J)"
    );
}
