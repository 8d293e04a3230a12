//! Module tests: generators, mass rules, building, overrides.

use glam::DVec3;

use super::*;
use crate::bodies::SphereInit;

/// A minimal valid scene with the given sphere sources and boundaries (RON
/// fragments).
fn scene_text(spheres: &str, boundaries: &str) -> String {
    format!(
        "Scene(version: 1, name: \"t\", time_step: 1e-3, duration: 0.1,
         materials: [(name: \"m\", friction: 0.5, rolling: 0.001, spinning: 0.0005, density: 2000.0),
                     (name: \"wall\", friction: 0.3, density: 7000.0)],
         spheres: [{spheres}], boundaries: [{boundaries}])"
    )
}

fn scene(spheres: &str, boundaries: &str) -> Scene {
    Scene::from_str(&scene_text(spheres, boundaries), "test.ron", &[])
        .unwrap_or_else(|e| panic!("{e}"))
}

fn inits(s: &Scene) -> Vec<SphereInit> {
    s.spheres().unwrap().into_iter().map(|p| p.init).collect()
}

fn assert_no_overlap(spheres: &[SphereInit]) {
    for i in 0..spheres.len() {
        for j in 0..i {
            let d = spheres[i].pos.distance(spheres[j].pos);
            assert!(
                d >= spheres[i].radius + spheres[j].radius - 1e-12,
                "spheres {i} and {j} overlap: distance {d}"
            );
        }
    }
}

#[test]
fn lattice_generates_product_of_counts_x_fastest() {
    let s = scene(
        "Lattice(origin: (1, 2, 3), count: (4, 3, 2), spacing: 0.1, radius: 0.04)",
        "",
    );
    let v = inits(&s);
    assert_eq!(v.len(), 24);
    assert_eq!(v[0].pos, DVec3::new(1.0, 2.0, 3.0));
    assert!((v[1].pos - DVec3::new(1.1, 2.0, 3.0)).length() < 1e-12);
    assert!((v[4].pos - DVec3::new(1.0, 2.1, 3.0)).length() < 1e-12);
    assert!((v[12].pos - DVec3::new(1.0, 2.0, 3.1)).length() < 1e-12);
    assert!((v[23].pos - DVec3::new(1.3, 2.2, 3.1)).length() < 1e-12);
    let placed = s.spheres().unwrap();
    assert!(placed
        .iter()
        .enumerate()
        .all(|(i, p)| p.source == 0 && p.index == i));
}

#[test]
fn lattice_jitter_is_bounded_seeded_and_overlap_free() {
    let text = |seed: u64| {
        format!(
            "Lattice(origin: (0, 0, 0), count: (6, 5, 4), spacing: 0.1, radius: 0.03, jitter: 0.2, seed: {seed})"
        )
    };
    let a = inits(&scene(&text(3), ""));
    let b = inits(&scene(&text(3), ""));
    let c = inits(&scene(&text(4), ""));
    assert_eq!(a, b);
    assert_ne!(a, c);
    let plain = inits(&scene(
        "Lattice(origin: (0, 0, 0), count: (6, 5, 4), spacing: 0.1, radius: 0.03)",
        "",
    ));
    let mut moved = 0;
    for (j, p) in a.iter().zip(&plain) {
        let d = j.pos - p.pos;
        assert!(d.abs().max_element() <= 0.2 * 0.1 + 1e-15);
        if d.length() > 0.0 {
            moved += 1;
        }
    }
    assert_eq!(moved, a.len());
    assert_no_overlap(&a);
}

#[test]
fn random_box_places_count_spheres_inside_without_overlap() {
    let s = scene(
        "RandomBox(min: (0, 0, 0), max: (0.2, 0.2, 0.2), count: 800, radius: 0.006, seed: 7)",
        "",
    );
    let v = inits(&s);
    assert_eq!(v.len(), 800);
    for p in &v {
        assert!(p.pos.cmpge(DVec3::splat(0.006)).all() && p.pos.cmple(DVec3::splat(0.194)).all());
    }
    assert_no_overlap(&v);
}

#[test]
fn random_box_is_deterministic_per_seed() {
    let text = |seed: u64| {
        format!("RandomBox(min: (0, 0, 0), max: (0.1, 0.1, 0.1), count: 100, radius: 0.005, seed: {seed})")
    };
    let a = inits(&scene(&text(1), ""));
    let b = inits(&scene(&text(1), ""));
    let c = inits(&scene(&text(2), ""));
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn random_box_polydisperse_radii_span_range_without_overlap() {
    let s = scene(
        "RandomBox(min: (-0.1, -0.1, 0), max: (0.1, 0.1, 0.1), count: 400, radius: 0.004, radius_max: Some(0.008), seed: 3)",
        "",
    );
    let v = inits(&s);
    assert!(v.iter().all(|p| (0.004..=0.008).contains(&p.radius)));
    let (lo, hi) = v.iter().fold((1.0f64, 0.0f64), |(lo, hi), p| {
        (lo.min(p.radius), hi.max(p.radius))
    });
    assert!(lo < 0.0045 && hi > 0.0075, "radii {lo}..{hi}");
    for p in &v {
        assert!((p.pos - DVec3::new(-0.1, -0.1, 0.0)).min_element() >= p.radius - 1e-15);
        assert!((DVec3::new(0.1, 0.1, 0.1) - p.pos).min_element() >= p.radius - 1e-15);
        // Mass follows each sphere's own radius.
        assert!((p.mass - SphereInit::solid_mass(p.radius, 2000.0)).abs() < 1e-15);
    }
    assert_no_overlap(&v);
}

#[test]
fn random_box_that_cannot_fit_reports_how_many_fit() {
    let text = scene_text(
        "RandomBox(min: (0, 0, 0), max: (0.1, 0.1, 0.1), count: 2000, radius: 0.005, seed: 1)",
        "",
    );
    let err = Scene::from_str(&text, "full.ron", &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("full.ron: spheres[0] (RandomBox): only "),
        "{err}"
    );
    assert!(err.contains("of 2000 spheres fit"), "{err}");
}

#[test]
fn mass_from_explicit_mass_then_density_then_material() {
    let s = scene(
        "Sphere(pos: (0, 0, 0), radius: 0.1, mass: Some(3.0)),
         Sphere(pos: (1, 0, 0), radius: 0.1, density: 500.0),
         Sphere(pos: (2, 0, 0), radius: 0.1),
         Sphere(pos: (3, 0, 0), radius: 0.1, material: 1),
         Sphere(pos: (4, 0, 0), radius: 0.1, mass: 2.0, inertia: 0.5)",
        "",
    );
    let v = inits(&s);
    assert_eq!(v[0].mass, 3.0);
    assert!((v[0].inertia - 0.4 * 3.0 * 0.01).abs() < 1e-15);
    assert!((v[1].mass - SphereInit::solid_mass(0.1, 500.0)).abs() < 1e-15);
    assert!((v[2].mass - SphereInit::solid_mass(0.1, 2000.0)).abs() < 1e-15);
    assert!((v[3].mass - SphereInit::solid_mass(0.1, 7000.0)).abs() < 1e-12);
    assert!((v[2].inertia - SphereInit::solid_inertia(v[2].mass, 0.1)).abs() < 1e-15);
    assert_eq!((v[4].mass, v[4].inertia), (2.0, 0.5));
}

#[test]
fn build_fills_world_bodies_boundaries_and_settings() {
    let text = "Scene(version: 1, time_step: 2e-3, duration: 0.5, gravity: (0, -1, -9),
        solver: (max_iterations: 33, omega: 0.7), contact: (envelope: 0.002, max_recovery_speed: 0.2),
        materials: [(name: \"a\", friction: 0.4, rolling: 0.01)],
        spheres: [Sphere(pos: (0, 0, 1), radius: 0.1, velocity: (1, 0, 0), angular_velocity: (0, 2, 0))],
        boundaries: [Plane(point: (0, 0, 0), normal: (0, 0, 2)),
                     Box(name: \"bin\", center: (0, 0, 1), half_extents: (1, 1, 1), open_top: true, velocity: (0, 0.5, 0))])";
    let s = Scene::from_str(text, "dir/world.ron", &[]).unwrap();
    assert_eq!(s.name, "world");
    let w = s.build().unwrap();
    assert_eq!(w.state.bodies.len(), 1);
    assert_eq!(w.state.bodies.vel[0], DVec3::new(1.0, 0.0, 0.0));
    assert_eq!(w.state.bodies.omega[0], DVec3::new(0.0, 2.0, 0.0));
    assert_eq!(w.model.gravity, DVec3::new(0.0, -1.0, -9.0));
    assert_eq!(w.model.time_step, 2e-3);
    assert_eq!(w.model.solver.max_iterations, 33);
    assert_eq!(w.model.solver.omega, 0.7);
    assert_eq!(w.model.solver.check_every, 10);
    assert_eq!(w.model.contact.envelope, Some(0.002));
    assert_eq!(w.model.materials[0].rolling, 0.01);
    assert_eq!(w.model.boundaries.len(), 2);
    assert_eq!(w.model.boundaries[0].name, "plane0");
    assert_eq!(
        w.model.boundaries[0].shape,
        crate::boundary::Shape::Plane {
            normal: DVec3::new(0.0, 0.0, 1.0)
        }
    );
    assert_eq!(w.model.boundaries[1].name, "bin");
    assert_eq!(w.model.boundaries[1].velocity, DVec3::new(0.0, 0.5, 0.0));
}

#[test]
fn to_ron_round_trips_to_an_equal_scene() {
    let s = scene(
        "Sphere(pos: (0, 0, 0.5), radius: 0.1, mass: Some(2.0)),
         Lattice(origin: (0, 0, 0.2), count: (2, 2, 2), spacing: 0.05, radius: 0.02, jitter: 0.1, seed: 9)",
        "Plane(name: \"floor\", point: (0, 0, 0), normal: (0, 0, 1), material: 1)",
    );
    let text = s.to_ron().unwrap();
    let back = Scene::from_str(&text, "test.ron", &[]).unwrap();
    assert_eq!(back, s);
}

#[test]
fn steps_and_frame_interval_defaults() {
    let mut s = scene("Sphere(pos: (0, 0, 0), radius: 0.1)", "");
    s.time_step = 1e-3;
    s.duration = 1.0;
    assert_eq!(s.steps(), 1000);
    assert_eq!(s.frame_interval(), 0.02);
    assert_eq!(s.frame_every(), 20);
    s.output.frame_interval = Some(1e-5);
    assert_eq!(s.frame_every(), 1);
    assert_eq!(s.output_dir(), std::path::Path::new("out/t"));
}

fn set(s: &Scene, path: &str, value: &str) -> Result<Scene, SceneError> {
    s.with_overrides(&[(path.to_string(), value.to_string())])
}

#[test]
fn overrides_reach_fields_through_lists_vectors_and_variants() {
    let s = scene(
        "Sphere(pos: (0, 0, 0.5), radius: 0.1),
         Lattice(origin: (0, 0, 0.2), count: (2, 2, 2), spacing: 0.05, radius: 0.02)",
        "Plane(name: \"floor\", point: (0, 0, -1), normal: (0, 0, 1))",
    );
    assert_eq!(
        set(&s, "materials.0.rolling", "0.02").unwrap().materials[0].rolling,
        0.02
    );
    assert_eq!(
        set(&s, "materials[1].friction", "1").unwrap().materials[1].friction,
        1.0
    );
    assert_eq!(set(&s, "solver.omega", "0.5").unwrap().solver.omega, 0.5);
    assert!(
        !set(&s, "solver.warm_start", "false")
            .unwrap()
            .solver
            .warm_start
    );
    assert_eq!(set(&s, "gravity.2", "-1").unwrap().gravity.z, -1.0);
    assert_eq!(set(&s, "gravity.x", "0.5").unwrap().gravity.x, 0.5);
    assert_eq!(set(&s, "name", "other").unwrap().name, "other");
    assert_eq!(set(&s, "name", "123").unwrap().name, "123");
    assert_eq!(
        set(&s, "contact.envelope", "0.003")
            .unwrap()
            .contact
            .envelope,
        Some(0.003)
    );
    assert_eq!(
        set(&s, "contact.envelope", "Some(0.004)")
            .unwrap()
            .contact
            .envelope,
        Some(0.004)
    );
    let got = set(&s, "spheres.0.mass", "2.5").unwrap();
    let SphereSource::Sphere(sp) = &got.spheres[0] else {
        panic!()
    };
    assert_eq!(sp.mass, Some(2.5));
    let got = set(&s, "spheres.1.count.2", "5").unwrap();
    assert_eq!(got.spheres().unwrap().len(), 21);
    let got = set(&s, "spheres.1.Lattice.radius", "0.01").unwrap();
    let SphereSource::Lattice(l) = &got.spheres[1] else {
        panic!()
    };
    assert_eq!(l.radius, Some(0.01));
    let got = set(&s, "boundaries.0.normal.2", "2").unwrap();
    assert_eq!(
        got.built_boundaries().unwrap()[0].shape,
        crate::boundary::Shape::Plane { normal: DVec3::Z }
    );
    // The file label survives.
    assert_eq!(got.file, "test.ron");
}

/// An enum is switched to another variant by its name, with that variant's
/// fields at their defaults; naming the current variant keeps its fields;
/// an unknown name or a variant whose fields have no defaults is an error.
#[test]
fn overrides_switch_an_enum_to_a_named_variant() {
    use crate::formulation::penalty::{NormalModel, PenaltySettings};
    use crate::formulation::Formulation;
    let s = scene("Sphere(pos: (0, 0, 0.5), radius: 0.1)", "");
    let p = set(&s, "formulation", "Penalty").unwrap();
    assert_eq!(
        p.formulation,
        Formulation::Penalty(PenaltySettings::default())
    );
    let mut hooke = s.clone();
    hooke.formulation = Formulation::Penalty(PenaltySettings {
        normal: NormalModel::Hooke { stiffness: 1e4 },
        ..Default::default()
    });
    assert_eq!(
        set(&hooke, "formulation", "Penalty").unwrap().formulation,
        hooke.formulation,
        "naming the current variant keeps its fields"
    );
    assert_eq!(
        set(&hooke, "formulation", "Complementarity")
            .unwrap()
            .formulation,
        Formulation::Complementarity
    );
    assert_eq!(
        set(&s, "solver.method", "Apgd").unwrap().solver.method,
        crate::solver::SolverMethod::Apgd
    );
    let err = set(&s, "formulation", "Bogus").unwrap_err().to_string();
    assert!(
        err.contains("unknown variant `Bogus`") && !err.contains("with its fields"),
        "{err}"
    );
    let err = set(&p, "formulation.normal", "Hooke")
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing field `stiffness`"), "{err}");
}

/// A variant written with fields, as a scene file writes it, is the variant
/// with its fields' defaults (whatever it held before), then each field set
/// as an override of its own, nested variants with fields included; a
/// part that is not `name: value`, or a field's bad value, is an error that
/// names it; text that only looks like a variant stays text.
#[test]
fn overrides_set_a_variant_with_fields_as_a_scene_file_writes_it() {
    use crate::formulation::penalty::{NormalModel, PenaltySettings};
    use crate::formulation::Formulation;
    let s = scene("Sphere(pos: (0, 0, 0.5), radius: 0.1)", "");
    let got = set(
        &s,
        "formulation",
        "Penalty(normal: Hooke(stiffness: 1e4), skin: Some(0.002),)",
    )
    .unwrap();
    let hooke = PenaltySettings {
        normal: NormalModel::Hooke { stiffness: 1e4 },
        skin: Some(0.002),
        ..Default::default()
    };
    assert_eq!(got.formulation, Formulation::Penalty(hooke));
    let again = set(&got, "formulation", "Penalty(skin: Some(0.003))").unwrap();
    let skin_only = PenaltySettings {
        skin: Some(0.003),
        ..Default::default()
    };
    assert_eq!(again.formulation, Formulation::Penalty(skin_only));
    let err = set(&s, "formulation", "Penalty(normal: Bogus)")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("formulation.normal") && err.contains("unknown variant `Bogus`"),
        "{err}"
    );
    let err = set(&s, "formulation", "Penalty(Hertz)")
        .unwrap_err()
        .to_string();
    assert!(err.contains("`Hertz` is not a field"), "{err}");
    let named = set(&s, "name", "Pile(2)").unwrap();
    assert_eq!(named.name, "Pile(2)");
}

#[test]
fn override_none_clears_an_optional_field() {
    let s = scene("Sphere(pos: (0, 0, 0), radius: 0.1, mass: 1.0)", "");
    let got = set(&s, "spheres.0.mass", "None").unwrap();
    let SphereSource::Sphere(sp) = &got.spheres[0] else {
        panic!()
    };
    assert_eq!(sp.mass, None);
    // An optional enum holding a unit variant (serialised as a string).
    let with = set(&s, "solver.fallback", "Some(Pgs)").unwrap();
    assert_eq!(with.solver.fallback, Some(crate::solver::SolverMethod::Pgs));
    assert_eq!(
        set(&with, "solver.fallback", "None")
            .unwrap()
            .solver
            .fallback,
        None
    );
    // A required one refuses None with serde's reason.
    let err = set(&s, "solver.method", "None").unwrap_err().to_string();
    assert!(
        err.contains("solver.method") && err.contains("null"),
        "{err}"
    );
}

#[test]
fn override_results_are_validated() {
    let s = scene("Sphere(pos: (0, 0, 0), radius: 0.1)", "");
    let err = set(&s, "materials.0.friction", "-1")
        .unwrap_err()
        .to_string();
    assert_eq!(err, "test.ron: materials[0].friction: must be ≥ 0 (got -1)");
}

#[test]
fn parse_set_splits_at_the_first_equals_sign() {
    assert_eq!(
        parse_set("name=a=b").unwrap(),
        ("name".to_string(), "a=b".to_string())
    );
    assert_eq!(
        parse_set(" solver.omega = 0.5 ").unwrap(),
        ("solver.omega".to_string(), "0.5".to_string())
    );
    for bad in ["solver.omega", "=1", "solver.omega="] {
        let e = parse_set(bad).unwrap_err().to_string();
        assert!(e.starts_with(&format!("--set {bad:?}: ")), "{e}");
    }
}
