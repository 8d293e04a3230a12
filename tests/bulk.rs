//! Bulk measures (`analysis.bulk`, `bulk.csv`): a settled column's
//! vertical stress is its weight's (Love–Weber), and a sphere lattice has
//! its coordination number.

#[path = "common/cli.rs"]
mod cli;

use glam::DVec3;
use repose::analysis::{measure_bulk, read_bulk_csv, BulkSettings};
use repose::bodies::{Bodies, SphereInit};
use repose::material::Material;
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
    world.gravity = DVec3::ZERO;
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
    let s = measure_bulk(&interior, &world.bodies, &c, world.time);
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
    let s = measure_bulk(&line, &world.bodies, &c, world.time);
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
