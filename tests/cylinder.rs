//! Cylinder boundaries end to end: a drum spinning about its axis carries a
//! sphere at the wall speed, the f32/GPU backends refuse a spinning wall
//! rather than dropping its torque bias, a lifting tube moves with its
//! velocity from its start time, and the scene syntax parses and validates.
//! (Sphere–cylinder contact geometry against hand values: `collision::tests`;
//! a sphere resting on a cylinder's bottom cap: `tests/physics.rs`.)

use glam::DVec3;
use repose::bodies::{Bodies, SphereInit};
use repose::boundary::{Boundary, Caps, Shape};
use repose::collision::sphere_boundary;
use repose::material::Material;
use repose::run::{open_backend_for, BackendChoice, AUTO_GPU_MIN_BODIES};
use repose::scene::Scene;
use repose::solver::SolverSettings;
use repose::step::{Backend, StepError, Stepper};
use repose::world::World;

fn ball(pos: DVec3, r: f64) -> SphereInit {
    let mass = SphereInit::solid_mass(r, 1000.0);
    SphereInit {
        pos,
        radius: r,
        mass,
        inertia: SphereInit::solid_inertia(mass, r),
        vel: DVec3::ZERO,
        omega: DVec3::ZERO,
        material: 0,
    }
}

fn cylinder(origin: DVec3, axis: DVec3, radius: f64, half_length: f64, caps: Caps) -> Boundary {
    let shape = Shape::Cylinder {
        axis,
        radius,
        half_length,
        caps,
    };
    Boundary::fixed("drum", shape, origin, 0)
}

fn material(mu: f64, rho: f64, sigma: f64) -> Material {
    Material {
        name: "m".into(),
        friction: mu,
        rolling: rho,
        spinning: sigma,
        density: 1000.0,
        ..Default::default()
    }
}

const DRUM_R: f64 = 0.1;
const BALL_R: f64 = 0.01;
const SPIN: f64 = 0.5;

/// A sphere resting at the bottom of the curved wall of a drum with a
/// horizontal axis (x), spinning at `SPIN` rad/s; friction μ = 1 and rolling
/// resistance ρ = r lock the sphere to the wall.
fn drum_world() -> World {
    let mut drum = cylinder(DVec3::ZERO, DVec3::X, DRUM_R, 0.05, Caps::Both);
    drum.angular_velocity = DVec3::X * SPIN;
    let s = ball(DVec3::new(0.0, 0.0, -(DRUM_R - BALL_R)), BALL_R);
    let mut w = World::new(
        Bodies::from_inits(&[s]),
        vec![drum],
        vec![material(1.0, BALL_R, BALL_R)],
    );
    w.model.time_step = 1e-3;
    w.model.solver.tolerance = 1e-10;
    w.model.solver.max_iterations = 500;
    w
}

/// A body locked to a wall spinning at ω about x moves at |ω|·(R − r) along
/// the wall and spins at ω itself. It starts at rest; sliding friction
/// (μ g ≈ 10 m/s²) brings it to the wall speed (0.045 m/s) in a few ms, and
/// after 0.3 s (0.15 rad of drum rotation, well below the slip angle
/// atan μ = 45°) it co-rotates. The spin check needs the wall's angular
/// velocity in the torque rows of the bias: without it, rolling resistance
/// would hold the sphere's spin near zero and it would roll instead.
#[test]
fn spinning_drum_carries_a_sphere_at_the_wall_speed_with_high_friction() {
    let mut w = drum_world();
    let mut st = Stepper::new();
    for _ in 0..300 {
        st.step(&mut w).expect("step");
    }
    let x = w.state.bodies.pos[0];
    let v = w.state.bodies.vel[0];
    let spin = w.state.bodies.omega[0];
    let omega = DVec3::X * SPIN;
    // Rigid co-rotation about the axis: v = ω × (x − axis point).
    let want_v = omega.cross(DVec3::new(0.0, x.y, x.z));
    let speed_want = SPIN * (DRUM_R - BALL_R);
    assert!(
        (v.length() - speed_want).abs() < 0.02 * speed_want,
        "speed {} m/s, expected the wall speed ω (R − r) = {speed_want} m/s",
        v.length()
    );
    assert!(
        (v - want_v).length() < 0.02 * speed_want,
        "velocity {v}, expected ω × (x − axis) = {want_v}"
    );
    assert!(
        (spin - omega).length() < 0.02 * SPIN,
        "sphere spin {spin} rad/s, expected the drum's {omega} rad/s"
    );
    let angle = x.y.atan2(-x.z);
    assert!(
        angle > 0.1 && angle < 0.2,
        "carried through {angle} rad, expected about ω t = 0.15 rad (minus the start-up)"
    );
}

/// The f32 backends' contact records have no torque bias: a step with a
/// spinning wall in contact is an error, never a silent drop.
#[test]
fn f32_backend_refuses_a_spinning_wall() {
    let mut w = drum_world();
    let mut st = Stepper::with_backend(Backend::CpuF32);
    match st.step(&mut w) {
        Err(e @ StepError::RotatingBoundary { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("rotating boundary") && msg.contains("--backend cpu"),
                "message: {msg}"
            );
        }
        Err(e) => panic!("expected RotatingBoundary, got {e}"),
        Ok(_) => panic!("the cpu-f32 backend stepped a spinning drum"),
    }
}

/// `auto` routes a scene with a rotating boundary to the CPU and says why;
/// `--backend cpu-f32` and `--backend gpu` are errors that say what to do.
#[test]
fn backend_choice_routes_rotating_boundaries_to_the_cpu() {
    let s = SolverSettings::default();
    let (b, why) = open_backend_for(
        BackendChoice::Auto,
        &s,
        AUTO_GPU_MIN_BODIES,
        Some("the rotating boundary \"drum\""),
    )
    .expect("auto opens the cpu");
    assert!(matches!(b, Backend::Cpu), "auto chose {}", b.describe());
    assert!(why.contains("rotating boundary \"drum\""), "reason: {why}");
    for choice in [BackendChoice::CpuF32, BackendChoice::Gpu] {
        let err = match open_backend_for(
            choice,
            &s,
            AUTO_GPU_MIN_BODIES,
            Some("the rotating boundary \"drum\""),
        ) {
            Ok((b, _)) => panic!("{choice:?} opened {}", b.describe()),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains("rotating boundary \"drum\"") && err.contains("use --backend cpu"),
            "{choice:?}: {err}"
        );
    }
    // Without a rotating boundary cpu-f32 opens as asked.
    let (b, _) = open_backend_for(BackendChoice::CpuF32, &s, 1, None).expect("cpu-f32");
    assert!(matches!(b, Backend::CpuF32));
}

/// A tube lifted at 0.1 m/s from t = 0.05 s: its origin is still at t =
/// 0.04 s, has risen 0.1 × (0.1 − 0.05) = 5 mm at t = 0.1 s, and its wall
/// moves at the lift velocity at the contact point once lifting.
#[test]
fn lifting_tube_moves_with_its_velocity_from_its_start_time() {
    let lift = DVec3::new(0.0, 0.0, 0.1);
    let mut tube = cylinder(DVec3::new(0.0, 0.0, 0.1), DVec3::Z, 0.05, 0.1, Caps::Open);
    tube.velocity = lift;
    tube.start_time = 0.05;
    let floor = Boundary {
        name: "floor".into(),
        shape: Shape::Plane { normal: DVec3::Z },
        origin: DVec3::ZERO,
        velocity: DVec3::ZERO,
        angular_velocity: DVec3::ZERO,
        start_time: 0.0,
        material: 0,
    };
    // A sphere touching the wall, resting on the floor.
    let s = ball(DVec3::new(0.04, 0.0, 0.01), 0.01);
    let mut w = World::new(
        Bodies::from_inits(&[s]),
        vec![tube, floor],
        vec![material(0.5, 0.0, 0.0)],
    );
    let z0 = w.model.boundaries[0].origin.z;
    let mut st = Stepper::new();
    for _ in 0..40 {
        st.step(&mut w).expect("step");
    }
    assert_eq!(
        w.state.boundary_origins[0].z, z0,
        "tube moved before its start time (t = {})",
        w.state.time
    );
    for _ in 40..100 {
        st.step(&mut w).expect("step");
    }
    let risen = w.state.boundary_origins[0].z - z0;
    let want = 0.1 * (0.1 - 0.05);
    assert!(
        (risen - want).abs() < 1e-9,
        "tube rose {risen} m by t = {}, expected {want} m",
        w.state.time
    );
    let c = sphere_boundary(&w.state.bodies, &w.boundaries()[..1], 0.02, w.state.time);
    assert_eq!(c.len(), 1, "sphere–wall contacts: {c:?}");
    assert!(
        (c[0].wall_velocity - lift).length() < 1e-15,
        "wall velocity {} at the contact, expected {lift}",
        c[0].wall_velocity
    );
}

const SCENE: &str = r#"Scene(
    version: 1,
    name: "cyl",
    time_step: 1e-3,
    duration: 0.01,
    materials: [(friction: 0.5)],
    spheres: [Sphere(pos: (0.0, 0.0, 0.02), radius: 0.01)],
    boundaries: [
        Cylinder(name: "drum", center: (0.0, 0.0, 0.05), axis: (0.0, 0.0, 2.0), radius: 0.04,
                 half_length: 0.05, caps: Both, material: 0, velocity: (0.0, 0.0, 0.0),
                 angular_velocity: 3.0, start_time: 0.5),
    ],
)"#;

/// The documented syntax builds a cylinder with a unit axis and spin ω â.
#[test]
fn cylinder_scene_syntax_builds_a_normalised_spinning_drum() {
    let scene = Scene::from_str(SCENE, "cyl.ron", &[]).expect("valid scene");
    let w = scene.build().expect("build");
    let b = &w.model.boundaries[0];
    assert_eq!(
        b.shape,
        Shape::Cylinder {
            axis: DVec3::Z,
            radius: 0.04,
            half_length: 0.05,
            caps: Caps::Both
        }
    );
    assert_eq!(b.angular_velocity, DVec3::new(0.0, 0.0, 3.0));
    assert_eq!(b.start_time, 0.5);
    assert_eq!(b.origin, DVec3::new(0.0, 0.0, 0.05));
    // Round trip through the writer.
    let again = Scene::from_str(&scene.to_ron().unwrap(), "cyl.ron", &[]).unwrap();
    assert_eq!(again.boundaries, scene.boundaries);
    // Optional fields default: an open, fixed tube.
    let minimal = SCENE.replace(
        "caps: Both, material: 0, velocity: (0.0, 0.0, 0.0),\n                 angular_velocity: 3.0, start_time: 0.5",
        "",
    );
    let w = Scene::from_str(&minimal, "cyl.ron", &[])
        .expect("minimal cylinder")
        .build()
        .unwrap();
    assert!(matches!(
        w.model.boundaries[0].shape,
        Shape::Cylinder {
            caps: Caps::Open,
            ..
        }
    ));
    assert_eq!(w.model.boundaries[0].angular_velocity, DVec3::ZERO);
}

fn error_of(text: &str) -> String {
    match Scene::from_str(text, "cyl.ron", &[]) {
        Ok(_) => panic!("scene was accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn assert_line(msg: &str, start: &str, reason: &str) {
    assert!(
        msg.lines()
            .any(|l| l.starts_with(start) && l.contains(reason)),
        "expected a line starting {start:?} containing {reason:?} in:\n{msg}"
    );
}

/// Bad cylinders are errors naming the file, the field and the reason.
#[test]
fn bad_cylinders_are_named_errors() {
    let e = error_of(&SCENE.replace("radius: 0.04", "radius: -0.04"));
    assert_line(
        &e,
        "cyl.ron: boundaries[0].radius: ",
        "must be > 0 (got -0.04)",
    );
    let e = error_of(&SCENE.replace("axis: (0.0, 0.0, 2.0)", "axis: (0, 0, 0)"));
    assert_line(&e, "cyl.ron: boundaries[0].axis: ", "must not be zero");
    let e = error_of(&SCENE.replace("half_length: 0.05", "half_length: 0"));
    assert_line(&e, "cyl.ron: boundaries[0].half_length: ", "must be > 0");
    let e = error_of(&SCENE.replace("start_time: 0.5", "start_time: -1"));
    assert_line(&e, "cyl.ron: boundaries[0].start_time: ", "must be ≥ 0");
    // A sphere outside the tube (ϱ = 0.05 > R = 0.04).
    let e = error_of(&SCENE.replace("pos: (0.0, 0.0, 0.02)", "pos: (0.05, 0.0, 0.02)"));
    assert_line(
        &e,
        "cyl.ron: spheres[0] (Sphere): ",
        "is outside boundary \"drum\"",
    );
    // Below the closed bottom.
    let e = error_of(&SCENE.replace("pos: (0.0, 0.0, 0.02)", "pos: (0.0, 0.0, -0.02)"));
    assert_line(&e, "cyl.ron: spheres[0] (Sphere): ", "is outside boundary");
    // A sphere too big for the cylinder.
    let e = error_of(&SCENE.replace("radius: 0.01", "radius: 0.05"));
    assert_line(
        &e,
        "cyl.ron: boundaries[0].radius: ",
        "cannot hold spheres[0] (Sphere) of radius 0.05",
    );
    // Unknown fields are syntax errors.
    let e = error_of(&SCENE.replace("caps: Both", "caps: Both, lenght: 1"));
    assert!(e.contains("lenght"), "{e}");
}

/// A small drum (radius 4 cm, beads of 4 mm) about x, half filled.
const SMALL_DRUM: &str = r#"Scene(
    version: 1,
    name: "small_drum",
    time_step: 2e-3,
    duration: 2.0,
    output: (frame_interval: 0.05, picture: (enabled: false)),
    analysis: (drum: (from_time: 1.0)),
    materials: [
        (name: "glass", friction: 0.5, rolling: 0.0004, spinning: 0.0002, density: 2500.0),
        (name: "wall", friction: 0.8, rolling: 0.0004, spinning: 0.0002, density: 7800.0),
    ],
    spheres: [
        Lattice(origin: (-0.0082, -0.0246, 0.025), count: (3, 7, 4), spacing: 0.0082,
                radius: 0.004, jitter: 0.01, seed: 5),
    ],
    boundaries: [
        Cylinder(name: "drum", center: (0.0, 0.0, 0.05), axis: (1.0, 0.0, 0.0), radius: 0.04,
                 half_length: 0.0125, caps: Both, material: 1, angular_velocity: OMEGA),
    ],
)"#;

/// Runs the small drum at `omega` rad/s and returns its dynamic angle.
fn drum_angle(omega: f64) -> repose::analysis::DynamicAngle {
    let text = SMALL_DRUM.replace("OMEGA", &format!("{omega:?}"));
    let scene = Scene::from_str(&text, "small_drum.ron", &[]).expect("valid scene");
    let dir = tempfile::tempdir().unwrap();
    let opts = repose::run::RunOptions {
        out_dir: Some(dir.path().to_path_buf()),
        progress: false,
        no_frames: true,
        backend: BackendChoice::Cpu,
        no_picture: true,
        ..Default::default()
    };
    let summary = repose::run::run_scene(&scene, &opts).expect("run");
    let v = summary
        .extra
        .get("dynamic_angle")
        .unwrap_or_else(|| panic!("no dynamic angle at ω = {omega}: {:?}", summary.extra));
    serde_json::from_value(v.clone()).unwrap()
}

/// A turning drum lifts its bed on the side where its wall rises and the
/// surface stands at a steep angle; the same drum at rest leaves the bed
/// (the lattice it starts from, settled) at a lower one: the two mean
/// angles differ by more than three standard errors (each sample's sd over
/// the root of its count, summed).
#[test]
fn turning_drum_tilts_its_bed_up_on_the_rising_wall_side_and_a_drum_at_rest_does_not() {
    let turning = drum_angle(3.0);
    assert!(
        turning.angle_deg > 15.0,
        "turning drum: dynamic angle {:.2}° (sd {:.2}°), expected a steep surface > 15°",
        turning.angle_deg,
        turning.angle_sd_deg
    );
    assert!(
        turning.samples_rising_with_the_wall * 10 >= turning.samples * 9,
        "turning drum: only {} of {} samples rise toward the wall's rising side",
        turning.samples_rising_with_the_wall,
        turning.samples
    );
    let resting = drum_angle(0.0);
    let se = |a: &repose::analysis::DynamicAngle| a.angle_sd_deg / (a.samples.max(1) as f64).sqrt();
    let margin = 3.0 * (se(&resting) + se(&turning));
    assert!(
        resting.angle_deg + margin < turning.angle_deg,
        "drum at rest: angle {:.2}° (sd {:.2}°, {} samples), expected more than {margin:.2}° below the turning drum's {:.2}° (sd {:.2}°, {} samples)",
        resting.angle_deg,
        resting.angle_sd_deg,
        resting.samples,
        turning.angle_deg,
        turning.angle_sd_deg,
        turning.samples
    );
}
