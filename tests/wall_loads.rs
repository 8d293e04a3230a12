//! Boundary loads (`walls.csv`, `repose::wall_loads`): the loads on the
//! walls are what the bodies' momentum balance says they are, step by
//! step, and a settled column's floor carries its weight.

mod common;

use std::path::Path;
use std::process::Command;

use glam::DVec3;
use repose::step::Stepper;
use repose::world::World;

/// Σ over bodies of m Δv and of I Δω + (x − o) × m Δv, and of the gravity
/// impulse m g h and its moment (x − o) × m g h, for a step from `before`
/// to `after` (spheres: scalar inertia), about `o`.
struct Balance {
    dp: DVec3,
    dl: DVec3,
    gravity: DVec3,
    gravity_moment: DVec3,
    /// Σ of the terms' magnitudes: the scale rounding is relative to.
    scale: f64,
}

fn balance(before: &World, after: &World, o: DVec3) -> Balance {
    let (a, b) = (&before.state.bodies, &after.state.bodies);
    let h = before.model.time_step;
    let mut out = Balance {
        dp: DVec3::ZERO,
        dl: DVec3::ZERO,
        gravity: DVec3::ZERO,
        gravity_moment: DVec3::ZERO,
        scale: 0.0,
    };
    for i in 0..a.len() {
        let m = 1.0 / a.inv_mass[i];
        let inertia = 1.0 / a.inv_inertia[i];
        let arm = a.pos[i] - o;
        let dmv = m * (b.vel[i] - a.vel[i]);
        let mg = m * before.model.gravity * h;
        out.dp += dmv;
        out.dl += inertia * (b.omega[i] - a.omega[i]) + arm.cross(dmv);
        out.gravity += mg;
        out.gravity_moment += arm.cross(mg);
        out.scale += dmv.length() + mg.length() + arm.length() * (dmv.length() + mg.length());
    }
    out
}

/// Every step of a pile forming in an open box (one boundary): the
/// bodies' change of momentum is gravity's impulse minus the wall's load
/// times h, and their change of angular momentum about the box's origin is
/// gravity's moment minus the wall's torque times h — to rounding
/// (10⁻¹² of the terms' sum), whatever the solver's tolerance, since the
/// velocities are updated with the same impulses the loads sum.
#[test]
fn the_walls_loads_close_the_bodies_momentum_balance_every_step() {
    let mut world = common::pile_world(200, 0.001, 0.001);
    assert_eq!(world.model.boundaries.len(), 1, "one box");
    let o = world.model.boundaries[0].origin;
    let h = world.model.time_step;
    let mut stepper = Stepper::new();
    let mut touching = 0;
    for step in 1..=60 {
        let before = world.clone();
        stepper.step(&mut world).expect("step");
        let load = stepper.last_wall_loads[0];
        touching += usize::from(load.contacts > 0);
        let b = balance(&before, &world, o);
        let tol = 1e-12 * b.scale.max(1e-300);
        let force_gap = b.dp - (b.gravity - load.force * h);
        let torque_gap = b.dl - (b.gravity_moment - load.torque * h);
        assert!(
            force_gap.length() <= tol,
            "step {step}: Σ m Δv = {:?}, gravity − F h = {:?} (F = {:?} N, {} contacts): differ by {:.3e} > {tol:.3e}",
            b.dp,
            b.gravity - load.force * h,
            load.force,
            load.contacts,
            force_gap.length()
        );
        assert!(
            torque_gap.length() <= tol,
            "step {step}: Σ (I Δω + r × m Δv) = {:?}, gravity's moment − T h = {:?} (T = {:?} N m): differ by {:.3e} > {tol:.3e}",
            b.dl,
            b.gravity_moment - load.torque * h,
            load.torque,
            torque_gap.length()
        );
        assert_eq!(load.power, 0.0, "a box at rest takes no power");
    }
    assert!(
        touching >= 50,
        "the pile touched its box in {touching} of 60 steps"
    );
}

/// `repose run SCENE --backend cpu` with `--set` of each of `sets`, no
/// frames or picture, into `dir/out`: the rows of its `walls.csv`.
fn run_for_walls(scene: &str, sets: &[&str], dir: &Path) -> Vec<(u64, String, [f64; 7])> {
    let out = dir.join("out");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_repose"));
    cmd.args([
        "run",
        scene,
        "--backend",
        "cpu",
        "--no-frames",
        "--no-picture",
    ]);
    for s in sets {
        cmd.args(["--set", s]);
    }
    let o = cmd
        .arg("--out")
        .arg(&out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    read_walls(&out.join("walls.csv"))
}

/// `walls.csv` rows as (step, boundary, [fx, fy, fz, tx, ty, tz, power]).
fn read_walls(path: &Path) -> Vec<(u64, String, [f64; 7])> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(repose::output::walls_csv::WALLS_CSV_HEADER)
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 11, "row {l:?}");
            let mut v = [0.0; 7];
            for (k, x) in v.iter_mut().enumerate() {
                *x = f[3 + k].parse().unwrap_or_else(|e| panic!("{l:?}: {e}"));
            }
            (f[0].parse().unwrap(), f[2].to_string(), v)
        })
        .collect()
}

/// `scenes/column.ron` (ten steel spheres of 1 cm stacked on the floor of
/// a closed box) solved to 10⁻⁸: over its last 100 steps the box carries
/// the column's weight, fz = −M g. The tolerance bounds each impulse's
/// relative error by about 10⁻⁸; ten contacts in series, 10⁻⁷; 10⁻⁶
/// leaves a factor of ten for what the settled column still moves.
#[test]
fn a_settled_columns_floor_carries_its_weight() {
    let tmp = tempfile::tempdir().unwrap();
    let rows = run_for_walls(
        "scenes/column.ron",
        &[
            "duration=0.3",
            "solver.tolerance=1e-8",
            "solver.max_iterations=20000",
        ],
        tmp.path(),
    );
    assert_eq!(rows.len(), 300, "one row per step for the one boundary");
    assert!(rows.iter().all(|r| r.1 == "tube"));
    let last: Vec<f64> = rows[200..].iter().map(|r| r.2[2]).collect();
    let mean = last.iter().sum::<f64>() / last.len() as f64;
    let m = 7800.0 * 4.0 / 3.0 * std::f64::consts::PI * 0.01f64.powi(3);
    let weight = 10.0 * m * 9.81;
    let rel = (-mean - weight).abs() / weight;
    assert!(
        rel <= 1e-6,
        "floor load {:.9} N against the weight {weight:.9} N: relative difference {rel:.2e} > 1e-6",
        -mean
    );
}

/// `scenes/drum.ron`'s drum, turning at 1 rad/s about +x, lifts its bed:
/// over the second half of a 1 s run the grains' torque on it opposes the
/// turning (tx < 0) and its drive takes power (−T·ω > 0).
#[test]
fn a_turning_drum_takes_torque_and_power() {
    let tmp = tempfile::tempdir().unwrap();
    let rows = run_for_walls("scenes/drum.ron", &["duration=1.0"], tmp.path());
    let scene =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/drum.ron"))
            .unwrap();
    assert!(
        scene.contains("angular_velocity"),
        "drum.ron turns its drum"
    );
    let late: Vec<&[f64; 7]> = rows
        .iter()
        .filter(|r| r.0 > rows.last().unwrap().0 / 2)
        .map(|r| &r.2)
        .collect();
    assert!(!late.is_empty());
    let mean_tx = late.iter().map(|v| v[3]).sum::<f64>() / late.len() as f64;
    let mean_power = late.iter().map(|v| v[6]).sum::<f64>() / late.len() as f64;
    assert!(
        mean_tx < 0.0 && mean_power > 0.0,
        "drum over its second half-second: mean torque tx {mean_tx:.4e} N m (expected < 0), mean power {mean_power:.4e} W (expected > 0)"
    );
}

/// The penalty formulation's loads, summed over its sub-steps: the column
/// of `scenes/penalty_column.ron` moved to x = 5 mm in its box (one
/// boundary). Every step the bodies' change of momentum is gravity's
/// impulse minus the box's load times h (to rounding, 10⁻¹² of the terms'
/// sum: the velocities are updated with the same forces), and the box's
/// torque about its centre o is the floor force's moment at the column,
/// T = (x − o) × F, so t_y = −x f_z with x = 5 mm (the floor force acts on
/// the line of the column; no side wall presses it: to 10⁻⁹).
#[test]
fn penalty_loads_close_the_momentum_balance_and_act_where_the_column_stands() {
    // With the neighbour list and its listed faces (the default), and with
    // a full detection every sub-step (skin 0).
    for skin in [None, Some("0.0")] {
        penalty_column_balance(skin);
    }
}

fn penalty_column_balance(skin: Option<&str>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/penalty_column.ron");
    let mut over = vec![("spheres.0.origin.x".to_string(), "0.005".to_string())];
    if let Some(s) = skin {
        over.push(("formulation.skin".to_string(), s.to_string()));
    }
    let mut world = repose::scene::Scene::load(&path, &over)
        .expect("penalty_column.ron")
        .build()
        .expect("world");
    let h = world.model.time_step;
    let o = world.model.boundaries[0].origin;
    let mut stepper = Stepper::new();
    for step in 1..=300 {
        let before = world.clone();
        stepper.step(&mut world).expect("step");
        let load = stepper.last_wall_loads[0];
        let b = balance(&before, &world, o);
        let gap = b.dp - (b.gravity - load.force * h);
        let tol = 1e-12 * (b.scale + load.force.length() * h);
        assert!(
            gap.length() <= tol,
            "skin {skin:?}, step {step}: Σ m Δv = {:?}, gravity − F h = {:?}: differ by {:.3e} > {tol:.3e}",
            b.dp,
            b.gravity - load.force * h,
            gap.length()
        );
        if load.contacts > 0 {
            let want = -0.005 * load.force.z;
            assert!(
                (load.torque.y - want).abs() <= 1e-9 * want.abs()
                    && load.torque.x.abs() <= 1e-9 * want.abs(),
                "skin {skin:?}, step {step}: torque {:?} N m about the box centre, expected (0, {want:.6e}, ·) from the floor force {:?} N at x = 5 mm",
                load.torque,
                load.force
            );
        }
    }
}

/// `contacts` in walls.csv counts the contacts that carried a load, under
/// the rigid formulations as under the penalty one: a sphere resting on
/// the floor counts; one hovering 1 mm above it, inside the 2 mm collision
/// envelope, is posed as a contact (the rigid solve sees it) but carries
/// no impulse and does not.
#[test]
fn the_walls_contact_count_is_of_loaded_contacts_under_every_formulation() {
    let r = 0.01;
    let text = format!(
        "Scene(version: 1, time_step: 1e-3, duration: 0.01, contact: (envelope: Some(0.002)),
           materials: [(name: \"m\", friction: 0.5, density: 1000.0,
                        young_modulus: 1e7, restitution: 0.5)],
           spheres: [Sphere(pos: (0, 0, {r}), radius: {r}), Sphere(pos: (0.1, 0, {}), radius: {r})],
           boundaries: [Plane(name: \"floor\", point: (0, 0, 0), normal: (0, 0, 1))])",
        r + 0.001
    );
    for formulation in ["Complementarity", "Penalty"] {
        let scene = repose::scene::Scene::from_str(
            &text,
            "hover.ron",
            &[("formulation".to_string(), formulation.to_string())],
        )
        .unwrap();
        let mut world = scene.build().unwrap();
        let mut stepper = Stepper::new();
        stepper.step(&mut world).unwrap();
        if formulation == "Complementarity" {
            let posed = stepper.last_problem().n_contacts();
            assert_eq!(
                posed, 2,
                "both spheres are within the envelope of the floor"
            );
        }
        let load = stepper.last_wall_loads[0];
        assert_eq!(
            load.contacts, 1,
            "{formulation}: the loaded contacts with the floor (F = {:?} N)",
            load.force
        );
    }
}
