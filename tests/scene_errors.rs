//! Bad scene input gives an error naming the file, the field and the reason;
//! overrides change what gets built; every shipped scene builds.

#[path = "common/shipped.rs"]
mod shipped;

use std::path::Path;

use repose::scene::{parse_set, Scene, SceneError};

const FILE: &str = "scenes/bad.ron";

/// A valid scene; tests replace one piece of it.
const BASE: &str = r#"Scene(
    version: 1,
    name: "base",
    time_step: 1e-3,
    duration: 0.5,
    gravity: (0.0, 0.0, -9.81),
    solver: (max_iterations: 50),
    contact: (envelope: Some(0.001)),
    output: (frame_interval: 0.05, track: [0, 3]),
    materials: [
        (name: "glass", friction: 0.5, rolling: 0.001, spinning: 0.0005, density: 2500.0),
    ],
    spheres: [
        Sphere(pos: (0.0, 0.0, 0.1), radius: 0.01, material: 0),
        Lattice(origin: (-0.05, -0.05, 0.05), count: (3, 3, 2), spacing: 0.021, radius: 0.01, material: 0),
        RandomBox(min: (-0.1, -0.1, 0.2), max: (0.1, 0.1, 0.4), count: 20, radius: 0.01, seed: 7),
    ],
    boundaries: [
        Plane(name: "floor", point: (0.0, 0.0, 0.0), normal: (0.0, 0.0, 1.0), material: 0),
        Box(name: "bin", center: (0.0, 0.0, 0.5), half_extents: (0.2, 0.2, 0.5), open_top: true),
    ],
)"#;

/// BASE with `from` replaced by `to` (which must occur exactly once).
fn edited(from: &str, to: &str) -> String {
    assert_eq!(
        BASE.matches(from).count(),
        1,
        "{from:?} must occur once in BASE"
    );
    BASE.replace(from, to)
}

fn error_of(text: &str) -> String {
    match Scene::from_str(text, FILE, &[]) {
        Ok(_) => panic!("scene was accepted"),
        Err(e) => e.to_string(),
    }
}

/// Asserts the message has a line `scenes/bad.ron: <path>: <reason…>`.
fn assert_names(msg: &str, path: &str, reason: &str) {
    let prefix = format!("{FILE}: {path}: ");
    assert!(
        msg.lines()
            .any(|l| l.starts_with(&prefix) && l.contains(reason)),
        "expected a line starting {prefix:?} containing {reason:?} in:\n{msg}"
    );
}

fn set(path: &str, value: &str) -> (String, String) {
    (path.to_string(), value.to_string())
}

#[test]
fn base_scene_is_valid() {
    let s = Scene::from_str(BASE, FILE, &[]).unwrap();
    assert_eq!(s.build().unwrap().state.bodies.len(), 1 + 18 + 20);
}

#[test]
fn malformed_ron_reports_file_line_and_column() {
    let msg = error_of(&edited("duration: 0.5,", "duration: 0.5,,"));
    assert!(msg.starts_with("scenes/bad.ron:5:"), "{msg}");
}

/// `Some((…))` around a struct-valued optional field fails in RON with
/// implicit_some as a bare "Expected identifier"; the message says what to
/// write instead. Other syntax errors get no such hint.
#[test]
fn some_around_an_optional_struct_gets_a_hint() {
    let msg = error_of(&edited(
        "solver: (max_iterations: 50),",
        "solver: (max_iterations: 50),\n    analysis: (heap: Some((method: Radial))),",
    ));
    assert!(msg.starts_with("scenes/bad.ron:8:"), "{msg}");
    assert!(msg.contains("not `heap: Some((…))`"), "{msg}");
    let plain = error_of(&edited("duration: 0.5,", "duration: 0.5,,"));
    assert!(!plain.contains("Some("), "{plain}");
}

/// A body's or a mesh's `rot` takes its parts named; a bare tuple is
/// ambiguous (scene files read (x, y, z, w), final.csv and Python give
/// (w, x, y, z)) and is refused at its line, with the named form the old
/// reading meant.
#[test]
fn a_quaternion_as_a_bare_tuple_is_refused_with_the_order_it_meant() {
    let body = "Body(shape: Box(half_extents: (0.01, 0.01, 0.01)), pos: (0.0, 0.0, 0.3)";
    let bare = edited(
        "Sphere(pos: (0.0, 0.0, 0.1), radius: 0.01, material: 0),",
        &format!("{body}, rot: (0.7071068, 0, 0, 0.7071068)),"),
    );
    let msg = error_of(&bare);
    assert!(msg.starts_with("scenes/bad.ron:14:"), "{msg}");
    assert!(msg.contains(repose::scene::quaternion::BARE_TUPLE), "{msg}");
    assert!(
        msg.contains("`(w: 0.7071068, x: 0.7071068, y: 0, z: 0)`"),
        "{msg}"
    );
    let named = edited(
        "Sphere(pos: (0.0, 0.0, 0.1), radius: 0.01, material: 0),",
        &format!("{body}, rot: (w: 0.7071068, x: 0.7071068, y: 0, z: 0)),"),
    );
    let w = Scene::from_str(&named, FILE, &[]).unwrap().build().unwrap();
    let q = w.state.bodies.rot[0];
    let half = std::f64::consts::FRAC_1_SQRT_2;
    assert!(
        (q.w - half).abs() < 1e-7 && (q.x - half).abs() < 1e-7 && q.y == 0.0 && q.z == 0.0,
        "a quarter turn about x, (w, x, y, z) = ({half}, {half}, 0, 0); built {q:?}"
    );
    // The same form through --set, and in the text a run records.
    let s = Scene::from_str(&named, FILE, &[set("spheres.0.rot.z", "0.5")]).unwrap();
    let text = s.to_ron().unwrap();
    assert!(text.contains("w: 0.7071068"), "{text}");
    assert!(Scene::from_str(&text, FILE, &[]).is_ok());
    let mesh = error_of(&edited(
        "Plane(name: \"floor\", point: (0.0, 0.0, 0.0), normal: (0.0, 0.0, 1.0), material: 0),",
        "Mesh(file: \"m.stl\", rot: (0, 0, 0, 1)),",
    ));
    assert!(mesh.contains("`(w: 1, x: 0, y: 0, z: 0)`"), "{mesh}");
}

#[test]
fn unknown_top_level_field_reports_position_and_name() {
    let msg = error_of(&edited("name: \"base\",", "name: \"base\", colour: 3,"));
    assert!(msg.starts_with("scenes/bad.ron:3:"), "{msg}");
    assert!(msg.contains("Unexpected field named `colour`"), "{msg}");
}

#[test]
fn unknown_field_in_sphere_source_reports_position_and_name() {
    let msg = error_of(&edited("count: 20,", "count: 20, colour: 1,"));
    assert!(msg.starts_with("scenes/bad.ron:16:"), "{msg}");
    assert!(
        msg.contains("Unexpected field named `colour` in `RandomBox`"),
        "{msg}"
    );
}

#[test]
fn unknown_sphere_variant_is_named() {
    let msg = error_of(&edited("Sphere(pos", "Ball(pos"));
    assert!(msg.starts_with("scenes/bad.ron:14:"), "{msg}");
    assert!(msg.contains("`Ball`"), "{msg}");
}

#[test]
fn missing_required_field_is_named() {
    let msg = error_of(&edited("time_step: 1e-3,", ""));
    assert!(msg.starts_with("scenes/bad.ron:"), "{msg}");
    assert!(msg.contains("time_step"), "{msg}");
    // ron reports it at the scene's closing parenthesis, the file's end:
    // a whole file is not "cut short".
    assert!(!msg.contains("ends early"), "{msg}");
}

#[test]
fn version_mismatch_is_reported() {
    let msg = error_of(&edited("version: 1,", "version: 2,"));
    assert_eq!(
        msg,
        "scenes/bad.ron: version: unsupported version 2 (this build reads 1)"
    );
}

#[test]
fn version_mismatch_wins_over_unknown_fields() {
    let msg = error_of(&edited("version: 1,", "version: 3, future_field: 1,"));
    assert_eq!(
        msg,
        "scenes/bad.ron: version: unsupported version 3 (this build reads 1)"
    );
}

#[test]
fn negative_radius_is_rejected() {
    let msg = error_of(&edited("0.1), radius: 0.01,", "0.1), radius: -0.01,"));
    assert_names(&msg, "spheres[0].radius", "must be ≥ 1e-9 m (got -0.01)");
}

#[test]
fn zero_lattice_radius_is_rejected() {
    let msg = error_of(&edited(
        "spacing: 0.021, radius: 0.01",
        "spacing: 0.021, radius: 0.0",
    ));
    assert_names(&msg, "spheres[1].radius", "must be ≥ 1e-9 m (got 0)");
}

#[test]
fn zero_random_box_radius_is_rejected() {
    let msg = error_of(&edited("count: 20, radius: 0.01", "count: 20, radius: 0"));
    assert_names(&msg, "spheres[2].radius", "must be ≥ 1e-9 m (got 0)");
}

#[test]
fn negative_mass_is_rejected() {
    let msg = error_of(&edited(
        "0.1), radius: 0.01,",
        "0.1), radius: 0.01, mass: -1.0,",
    ));
    assert_names(&msg, "spheres[0].mass", "must be > 0 (got -1)");
}

#[test]
fn zero_inertia_is_rejected() {
    let msg = error_of(&edited(
        "0.1), radius: 0.01,",
        "0.1), radius: 0.01, mass: Some(1.0), inertia: Some(0.0),",
    ));
    assert_names(&msg, "spheres[0].inertia", "must be > 0 (got 0)");
}

#[test]
fn zero_sphere_density_is_rejected() {
    let msg = error_of(&edited(
        "0.1), radius: 0.01,",
        "0.1), radius: 0.01, density: 0.0,",
    ));
    assert_names(&msg, "spheres[0].density", "must be > 0 (got 0)");
}

#[test]
fn mass_and_density_together_are_rejected() {
    let msg = error_of(&edited(
        "0.1), radius: 0.01,",
        "0.1), radius: 0.01, density: 100.0, mass: 1.0,",
    ));
    assert_names(&msg, "spheres[0].mass", "either mass or density");
}

#[test]
fn negative_material_density_is_rejected() {
    let msg = error_of(&edited("density: 2500.0", "density: -2500.0"));
    assert_names(&msg, "materials[0].density", "must be > 0 (got -2500)");
}

#[test]
fn negative_friction_coefficients_are_rejected() {
    let msg = error_of(&edited(
        "friction: 0.5, rolling: 0.001, spinning: 0.0005",
        "friction: -0.2, rolling: -0.001, spinning: -0.5",
    ));
    assert_names(&msg, "materials[0].friction", "must be ≥ 0 (got -0.2)");
    assert_names(&msg, "materials[0].rolling", "must be ≥ 0 (got -0.001)");
    assert_names(&msg, "materials[0].spinning", "must be ≥ 0 (got -0.5)");
    assert!(msg.contains("scenes/bad.ron: materials[0].friction: must be ≥ 0 (got -0.2)"));
}

#[test]
fn nan_position_is_rejected_with_its_path() {
    let msg = error_of(&edited("pos: (0.0, 0.0, 0.1)", "pos: (0.0, NaN, 0.1)"));
    assert_names(
        &msg,
        "spheres[0].pos[1]",
        "must be a finite number (got NaN)",
    );
}

#[test]
fn infinite_gravity_is_rejected_with_its_path() {
    let msg = error_of(&edited(
        "gravity: (0.0, 0.0, -9.81)",
        "gravity: (0.0, 0.0, -inf)",
    ));
    assert_names(&msg, "gravity[2]", "must be a finite number (got -inf)");
}

#[test]
fn nan_in_optional_and_nested_settings_is_rejected() {
    let msg = error_of(&edited("envelope: Some(0.001)", "envelope: Some(NaN)"));
    assert_names(
        &msg,
        "contact.envelope",
        "must be a finite number (got NaN)",
    );
    let msg = error_of(&edited(
        "max_iterations: 50",
        "max_iterations: 50, omega: inf",
    ));
    assert_names(&msg, "solver.omega", "must be a finite number (got inf)");
    let msg = error_of(&edited(
        "max_iterations: 50",
        "max_iterations: 50, anderson: 50",
    ));
    assert_names(&msg, "solver.anderson", "must be at most 20 (got 50)");
    let msg = error_of(&edited(
        "max_iterations: 50",
        "max_iterations: 50, method: Pgs, fallback: Some(Pgs)",
    ));
    assert_names(&msg, "solver.fallback", "is solver.method itself (pgs)");
    let msg = error_of(&edited(
        "max_iterations: 50",
        "max_iterations: 50, tolerance: 0.0, fallback: Some(InteriorPoint)",
    ));
    assert_names(&msg, "solver.fallback", "needs solver.tolerance > 0");
    let msg = error_of(&edited(
        "max_iterations: 50",
        "max_iterations: 50, fallback: Some(InteriorPoint), fallback_max_iterations: Some(0)",
    ));
    assert_names(
        &msg,
        "solver.fallback_max_iterations",
        "must be ≥ 1 (got 0)",
    );
    let msg = error_of(&edited(
        "max_iterations: 50",
        "max_iterations: 50, fallback_max_iterations: Some(500)",
    ));
    assert_names(
        &msg,
        "solver.fallback_max_iterations",
        "is set but solver.fallback is not",
    );
}

#[test]
fn nan_is_caught_even_with_overrides() {
    let text = edited("0.1), radius: 0.01,", "0.1), radius: NaN,");
    let msg = Scene::from_str(&text, FILE, &[set("solver.omega", "0.5")])
        .unwrap_err()
        .to_string();
    assert_names(
        &msg,
        "spheres[0].radius",
        "must be a finite number (got NaN)",
    );
}

#[test]
fn non_positive_time_step_is_rejected() {
    let msg = error_of(&edited("time_step: 1e-3", "time_step: 0.0"));
    assert_names(&msg, "time_step", "must be > 0 (got 0)");
    let msg = error_of(&edited("time_step: 1e-3", "time_step: -1e-3"));
    assert_names(&msg, "time_step", "must be > 0 (got -0.001)");
}

#[test]
fn non_positive_duration_is_rejected() {
    let msg = error_of(&edited("duration: 0.5", "duration: 0"));
    assert_names(&msg, "duration", "must be > 0 (got 0)");
}

#[test]
fn material_index_out_of_range_is_rejected() {
    let msg = error_of(&edited("seed: 7)", "seed: 7, material: 3)"));
    assert_names(
        &msg,
        "spheres[2].material",
        "material index 3 is out of range (the only material is 0)",
    );
    let msg = error_of(&edited("open_top: true)", "open_top: true, material: 1)"));
    assert_names(
        &msg,
        "boundaries[1].material",
        "material index 1 is out of range",
    );
}

#[test]
fn sphere_below_floor_names_its_source_and_the_boundary() {
    let msg = error_of(&edited("pos: (0.0, 0.0, 0.1)", "pos: (0.0, 0.0, -0.1)"));
    assert_names(
        &msg,
        "spheres[0] (Sphere)",
        "centre (0, 0, -0.1) is outside boundary \"floor\"",
    );
}

#[test]
fn lattice_sphere_outside_box_names_the_sphere_index() {
    // Shift the lattice so its last column (i = 2) pokes through the +x wall at 0.2.
    let msg = error_of(&edited(
        "origin: (-0.05, -0.05, 0.05)",
        "origin: (0.16, -0.05, 0.05)",
    ));
    assert_names(
        &msg,
        "spheres[1] (Lattice) sphere 2",
        "is outside boundary \"bin\"",
    );
    assert!(msg.contains("(and 5 more spheres of this source)"), "{msg}");
}

#[test]
fn sphere_overlapping_wall_less_than_radius_is_accepted() {
    let text = edited("pos: (0.0, 0.0, 0.1)", "pos: (0.0, 0.0, 0.005)");
    Scene::from_str(&text, FILE, &[]).unwrap();
}

#[test]
fn zero_plane_normal_is_rejected() {
    let msg = error_of(&edited(
        "normal: (0.0, 0.0, 1.0)",
        "normal: (0.0, 0.0, 0.0)",
    ));
    assert_names(&msg, "boundaries[0].normal", "must not be zero");
}

#[test]
fn track_id_out_of_range_is_rejected() {
    let msg = error_of(&edited("track: [0, 3]", "track: [0, 39]"));
    assert_names(
        &msg,
        "output.track[1]",
        "body id 39 is out of range (the scene has 39 spheres",
    );
}

#[test]
fn scene_without_spheres_is_rejected() {
    let start = BASE.find("spheres: [").unwrap();
    let end = start + BASE[start..].find("],\n    boundaries").unwrap() + 3;
    let text = format!("{}spheres: [],{}", &BASE[..start], &BASE[end..])
        .replace("track: [0, 3]", "track: []");
    let msg = error_of(&text);
    assert_names(&msg, "spheres", "the scene has no spheres");
}

#[test]
fn overfull_random_box_says_how_many_fit() {
    let msg = error_of(&edited(
        "count: 20, radius: 0.01",
        "count: 5000, radius: 0.01",
    ));
    assert_names(&msg, "spheres[2] (RandomBox)", "of 5000 spheres fit");
}

#[test]
fn lattice_reaching_infinity_is_rejected() {
    let text = edited(
        "spacing: 0.021, radius: 0.01",
        "spacing: 1e308, radius: 0.01",
    )
    .replace("track: [0, 3]", "track: []");
    let msg = error_of(&text);
    assert_names(&msg, "spheres[1] (Lattice) sphere 2", "is not finite");
}

#[test]
fn overlapping_lattice_spacing_is_rejected() {
    let msg = error_of(&edited("spacing: 0.021", "spacing: 0.015"));
    assert_names(
        &msg,
        "spheres[1].spacing",
        "neighbouring spheres could overlap",
    );
}

#[test]
fn several_problems_are_reported_together() {
    let msg =
        error_of(&edited("duration: 0.5", "duration: -1").replace("friction: 0.5", "friction: -1"));
    assert_eq!(msg.lines().count(), 2, "{msg}");
    assert_names(&msg, "duration", "must be > 0");
    assert_names(&msg, "materials[0].friction", "must be ≥ 0");
}

#[test]
fn override_changes_value_in_built_world() {
    let s = Scene::from_str(BASE, FILE, &[set("materials.0.rolling", "0.02")]).unwrap();
    let w = s.build().unwrap();
    assert_eq!(w.model.materials[0].rolling, 0.02);
    let s = Scene::from_str(
        BASE,
        FILE,
        &[set("spheres.1.count.2", "4"), set("time_step", "2e-3")],
    )
    .unwrap();
    let w = s.build().unwrap();
    assert_eq!(w.state.bodies.len(), 1 + 36 + 20);
    assert_eq!(w.model.time_step, 2e-3);
}

#[test]
fn override_unknown_key_lists_available_keys() {
    let err = Scene::from_str(BASE, FILE, &[set("materials.0.rollling", "0.02")]).unwrap_err();
    assert!(matches!(err, SceneError::Override { .. }));
    let msg = err.to_string();
    assert!(
        msg.starts_with(
            "scenes/bad.ron: --set materials.0.rollling=0.02: no key `rollling` at `materials.0`"
        ),
        "{msg}"
    );
    // The keys, sorted: a material's (which grows as formulations add
    // fields), so only the start and the near miss are pinned down.
    assert!(msg.contains("available keys: density, friction, "), "{msg}");
    assert!(msg.contains(", rolling, "), "{msg}");
}

#[test]
fn override_unknown_key_inside_variant_lists_variant_keys() {
    let msg = Scene::from_str(BASE, FILE, &[set("spheres.1.size", "3")])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("no key `size`"), "{msg}");
    assert!(
        msg.contains("count") && msg.contains("spacing") && msg.contains("jitter"),
        "{msg}"
    );
}

#[test]
fn override_index_out_of_range_is_rejected() {
    let msg = Scene::from_str(BASE, FILE, &[set("materials.4.rolling", "0.1")])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("--set materials.4.rolling=0.1: index 4 is out of range at `materials` (it has 1 entries)"), "{msg}");
}

#[test]
fn override_of_a_struct_is_rejected() {
    let msg = Scene::from_str(BASE, FILE, &[set("solver", "3")])
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("--set solver=3: `solver` is a struct, not a single value"),
        "{msg}"
    );
    let msg = Scene::from_str(BASE, FILE, &[set("gravity", "1")])
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("`gravity` is a list, not a single value"),
        "{msg}"
    );
}

#[test]
fn override_with_wrong_type_is_rejected() {
    let msg = Scene::from_str(BASE, FILE, &[set("solver.omega", "fast")])
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("--set solver.omega=fast: expects a finite number (got `fast`)"),
        "{msg}"
    );
    let msg = Scene::from_str(BASE, FILE, &[set("solver.max_iterations", "2.5")])
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("--set solver.max_iterations=2.5: invalid type"),
        "{msg}"
    );
    let msg = Scene::from_str(BASE, FILE, &[set("solver.warm_start", "1")])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("expects true or false"), "{msg}");
}

#[test]
fn parse_set_rejects_missing_equals() {
    let msg = parse_set("materials.0.rolling").unwrap_err().to_string();
    assert!(msg.contains("expected path=value"), "{msg}");
}

#[test]
fn missing_file_reports_io_error() {
    let msg = Scene::load(Path::new("scenes/no_such_scene.ron"), &[])
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("scenes/no_such_scene.ron: cannot read the scene file"),
        "{msg}"
    );
}

#[test]
fn every_scene_file_parses_validates_and_builds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "ron") {
            let scene = shipped::load_shipped(&path).unwrap_or_else(|e| panic!("{e}"));
            let world = scene.build().unwrap_or_else(|e| panic!("{e}"));
            assert!(
                !world.state.bodies.is_empty() || scene.inlet_count() > 0,
                "{}: no spheres and no inlet",
                path.display()
            );
            assert_eq!(
                scene.name,
                path.file_stem().unwrap().to_string_lossy(),
                "scene name should match its file name"
            );
            if let Some(w) = repose::run::tunnelling_risk(&world) {
                panic!("{}: {w}", path.display());
            }
            n += 1;
        }
    }
    assert!(n >= 3, "found only {n} scenes");
}

#[test]
fn pour_scene_has_about_three_thousand_spheres_in_the_bin() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/pour.ron");
    let w = Scene::load(&path, &[]).unwrap().build().unwrap();
    assert!(
        (2500..=4000).contains(&w.state.bodies.len()),
        "{}",
        w.state.bodies.len()
    );
    assert_eq!(w.model.time_step, 2e-3);
}

#[test]
fn dump_problem_step_zero_is_rejected() {
    let msg = error_of(&edited(
        "output: (frame_interval: 0.05, track: [0, 3]),",
        "output: (frame_interval: 0.05, track: [0, 3], dump_problems: [4, 0]),",
    ));
    assert_names(&msg, "output.dump_problems[1]", "steps count from 1");
}

// ---------------------------------------------------------------------------
// Files that are not scenes, or not whole ones.

/// Writes `bytes` to a temporary file and loads it; the error's text.
fn load_error_of(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.ron");
    std::fs::write(&path, bytes).unwrap();
    match Scene::load(&path, &[]) {
        Ok(_) => panic!("{} bytes were accepted as a scene", bytes.len()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn empty_file_says_it_is_empty() {
    for text in ["", "  \n\t\n"] {
        let msg = load_error_of(text.as_bytes());
        assert!(
            msg.contains("scene.ron") && msg.contains("the file is empty"),
            "{msg}"
        );
    }
}

#[test]
fn utf8_byte_order_mark_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bom.ron");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(BASE.as_bytes());
    std::fs::write(&path, bytes).unwrap();
    let s = Scene::load(&path, &[]).expect("a scene with a byte-order mark loads");
    assert_eq!(s.name, "base");
}

#[test]
fn truncated_file_says_it_ends_early() {
    // Cut inside the materials list, and right after the opening bracket.
    for cut in [BASE.find("density").unwrap(), BASE.find('(').unwrap() + 1] {
        let msg = load_error_of(&BASE.as_bytes()[..cut]);
        assert!(msg.contains("ends early"), "cut at {cut}: {msg}");
    }
}

#[test]
fn non_utf8_byte_is_named_with_its_position() {
    let text = BASE.replacen("glass", "gl\u{1}ss", 1).into_bytes();
    let at = text.iter().position(|&b| b == 1).unwrap();
    let mut bytes = text.clone();
    bytes[at] = 0xFF;
    let line = BASE[..at].lines().count();
    let col = at - BASE[..at].rfind('\n').map_or(0, |p| p + 1) + 1;
    let msg = load_error_of(&bytes);
    for part in [
        "not UTF-8".to_string(),
        "0xFF".to_string(),
        format!("line {line}, column {col}"),
    ] {
        assert!(msg.contains(&part), "expected {part:?} in: {msg}");
    }
}

#[cfg(unix)]
#[test]
fn a_device_is_refused_before_it_is_read() {
    let msg = match Scene::load(Path::new("/dev/zero"), &[]) {
        Ok(_) => panic!("/dev/zero was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(
        msg.contains("/dev/zero") && msg.contains("not a regular file"),
        "{msg}"
    );
}

#[test]
fn a_file_past_the_size_limit_is_refused() {
    let big = vec![b' '; (repose::scene::MAX_SCENE_BYTES + 1) as usize];
    let msg = load_error_of(&big);
    assert!(msg.contains("larger than 16 MiB"), "{msg}");
}

#[test]
fn a_step_count_past_the_limit_is_refused_naming_duration() {
    for (from, to) in [
        ("duration: 0.5", "duration: 1e300"),
        ("time_step: 1e-3", "time_step: 1e-300"),
    ] {
        let msg = error_of(&edited(from, to));
        assert_names(&msg, "duration", "more than the 1e9 a run may take");
    }
}

#[test]
fn envelope_past_the_largest_radius_is_refused_before_anything_is_built() {
    let msg = error_of(&edited("envelope: Some(0.001)", "envelope: Some(0.05)"));
    assert_names(
        &msg,
        "contact.envelope",
        "larger than the largest sphere radius (0.01 m)",
    );
    // Up to the radius is accepted.
    Scene::from_str(
        &edited("envelope: Some(0.001)", "envelope: Some(0.01)"),
        FILE,
        &[],
    )
    .expect("an envelope of one radius is accepted");
}

/// A sphere crossing more than its radius in one step is warned about
/// before the run (tunnelling), naming it and the numbers; the shipped
/// scenes are not (checked above).
#[test]
fn a_sphere_faster_than_its_radius_per_step_is_a_tunnelling_risk() {
    let fast = edited(
        "Sphere(pos: (0.0, 0.0, 0.1), radius: 0.01, material: 0)",
        "Sphere(pos: (0.0, 0.0, 0.1), radius: 0.01, material: 0, velocity: (0.0, 0.0, -20.0))",
    );
    let world = Scene::from_str(&fast, FILE, &[]).unwrap().build().unwrap();
    let w = repose::run::tunnelling_risk(&world).expect("a warning");
    assert!(w.contains("sphere 0") && w.contains("2.000e1 m/s"), "{w}");
    // 20 m/s × 1 ms = 2 cm > 1 cm; at 5 m/s (5 mm a step) there is none.
    let slow = fast.replace("-20.0", "-5.0");
    let world = Scene::from_str(&slow, FILE, &[]).unwrap().build().unwrap();
    assert_eq!(repose::run::tunnelling_risk(&world), None);
}
