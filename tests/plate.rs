//! Plate boundaries end to end: a sphere rests on a plate at the height of
//! its radius, a sphere rolling toward the edge goes over it and falls to
//! the catch floor below (the plate holds nothing beyond its edges), and
//! the scene syntax parses and validates. (Sphere–plate contact geometry
//! against hand values: `collision::tests`.)

use glam::{DVec2, DVec3};
use repose::boundary::Shape;
use repose::scene::Scene;
use repose::step::Stepper;

const SCENE: &str = r#"Scene(
    version: 1,
    name: "plate",
    time_step: 1e-3,
    duration: 1.0,
    materials: [(friction: 0.5)],
    spheres: [
        Sphere(pos: (-0.05, 0.0, 0.01), radius: 0.01),
        Sphere(pos: (0.05, 0.03, 0.01), radius: 0.01, velocity: (1.0, 0.0, 0.0)),
    ],
    boundaries: [
        Plate(name: "plate", center: (0.0, 0.0, 0.0), half_extents: (0.1, 0.05), material: 0),
        Plane(name: "catch", point: (0.0, 0.0, -0.2), normal: (0.0, 0.0, 1.0)),
    ],
)"#;

/// The documented syntax builds a plate.
#[test]
fn plate_scene_syntax_builds_a_plate() {
    let scene = Scene::from_str(SCENE, "plate.ron", &[]).expect("valid scene");
    let w = scene.build().expect("build");
    assert_eq!(
        w.model.boundaries[0].shape,
        Shape::Plate {
            half_x: 0.1,
            half_y: 0.05
        }
    );
    assert_eq!(w.model.boundaries[0].origin, DVec3::ZERO);
    let again = Scene::from_str(&scene.to_ron().unwrap(), "plate.ron", &[]).unwrap();
    assert_eq!(again.boundaries, scene.boundaries);
}

/// A sphere at rest stays on the plate at z = r; one launched at 1 m/s
/// toward the +x edge 0.05 m away rolls over it, falls 0.2 m and rests on
/// the catch floor at z = −0.2 + r, beyond the edge.
#[test]
fn sphere_rests_on_the_plate_and_one_rolling_off_its_edge_falls_to_the_floor_below() {
    let mut w = Scene::from_str(SCENE, "plate.ron", &[])
        .unwrap()
        .build()
        .unwrap();
    let mut st = Stepper::new();
    for _ in 0..1000 {
        st.step(&mut w).expect("step");
    }
    let rest = w.state.bodies.pos[0];
    assert!(
        (rest.z - 0.01).abs() < 1e-5,
        "resting sphere at z = {}, expected r = 0.01 (±1e-5)",
        rest.z
    );
    assert!(
        (rest.truncate() - DVec2::new(-0.05, 0.0)).length() < 1e-6,
        "resting sphere moved to {rest}"
    );
    let fell = w.state.bodies.pos[1];
    assert!(
        (fell.z - (-0.19)).abs() < 1e-4,
        "rolling sphere at z = {}, expected on the catch floor at −0.2 + r = −0.19",
        fell.z
    );
    assert!(
        fell.x > 0.1 + 0.01,
        "rolling sphere at x = {}, expected beyond the plate's edge x = 0.1 + r",
        fell.x
    );
}

fn error_of(text: &str) -> String {
    match Scene::from_str(text, "plate.ron", &[]) {
        Ok(_) => panic!("scene was accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// Bad plates are errors naming the file, the field and the reason; a
/// sphere starting under the plate is outside it.
#[test]
fn bad_plates_are_named_errors() {
    let e = error_of(&SCENE.replace("half_extents: (0.1, 0.05)", "half_extents: (0.1, 0.0)"));
    assert!(
        e.lines()
            .any(|l| l.starts_with("plate.ron: boundaries[0].half_extents: ")
                && l.contains("must be finite and > 0 (got (0.1, 0))")),
        "{e}"
    );
    let e = error_of(&SCENE.replace("pos: (-0.05, 0.0, 0.01)", "pos: (-0.05, 0.0, -0.05)"));
    assert!(
        e.lines()
            .any(|l| l.starts_with("plate.ron: spheres[0] (Sphere): ")
                && l.contains("outside boundary \"plate\"")),
        "{e}"
    );
}
