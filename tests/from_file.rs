//! A scene that starts from another run's state (`FromFile`): the spheres
//! are those of the run's `final.csv`, bit for bit, with their velocities,
//! spins and materials; `within`, `offset`, `keep_velocities` and
//! `material` select, move, stop and re-label them. From a run's kept
//! `checkpoint.bin`, bodies of every shape come back with their
//! orientations, masses and inertias. (Bad files: the bad-input corpus,
//! `tests/data/bad/from_file_*.ron`.)

#[path = "common/cli.rs"]
mod cli;

use std::path::Path;

use glam::DVec3;
use repose::output::csv::read_final_csv_full;
use repose::scene::Scene;

/// The second scene: two materials (the run's glass first), the pile's bin.
fn second(file: &Path, extra: &str) -> Scene {
    try_second(file, extra).unwrap_or_else(|e| panic!("{e}"))
}

fn try_second(file: &Path, extra: &str) -> Result<Scene, repose::scene::SceneError> {
    let text = format!(
        r#"Scene(version: 1, name: "second", time_step: 2e-3, duration: 0.1,
    materials: [
        (name: "glass", friction: 0.6, rolling: 0.001, spinning: 0.001, density: 2500.0),
        (name: "floor", friction: 0.6, rolling: 0.01, spinning: 0.01, density: 7800.0),
    ],
    spheres: [FromFile(file: {:?}{extra})],
    boundaries: [Box(name: "bin", center: (0.0, 0.0, 0.2), half_extents: (0.2, 0.2, 0.2), open_top: true, material: 1)],
)"#,
        file.display().to_string()
    );
    Scene::from_str(&text, "second.ron", &[])
}

/// A pile of 300 beads poured for 0.3 s (still moving): its final.csv.
fn first_run(dir: &Path) -> std::path::PathBuf {
    let out = dir.join("first");
    let extra = [
        "--set",
        "duration=0.3",
        "--set",
        "analysis.stop_when_settled=false",
        "--no-frames",
    ];
    cli::small_pile(&out, &extra, "the first run");
    out.join("final.csv")
}

#[test]
fn a_scene_from_a_runs_final_csv_starts_in_that_state_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let csv = first_run(dir.path());
    let rows = read_final_csv_full(&csv).unwrap();
    assert_eq!(rows.len(), 300);
    let world = second(&csv, "").build().unwrap();
    let b = &world.state.bodies;
    assert_eq!(b.len(), rows.len());
    let moving = rows.iter().filter(|r| r.state[6] != 0.0).count();
    assert!(
        moving > 100,
        "only {moving} beads still moving: the test wants velocities to carry"
    );
    for (i, r) in rows.iter().enumerate() {
        let s = r.state;
        assert_eq!(b.pos[i], DVec3::new(s[1], s[2], s[3]), "body {i} position");
        assert_eq!(b.vel[i], DVec3::new(s[4], s[5], s[6]), "body {i} velocity");
        assert_eq!(b.omega[i], DVec3::new(s[7], s[8], s[9]), "body {i} spin");
        assert_eq!(b.radius[i], s[10], "body {i} radius");
        assert_eq!(Some(b.material[i]), r.material, "body {i} material");
        let m = 2500.0 * 4.0 / 3.0 * std::f64::consts::PI * s[10].powi(3);
        assert!(
            (1.0 / b.inv_mass[i] - m).abs() <= 1e-12 * m,
            "body {i}: mass {} from this scene's density, expected {m}",
            1.0 / b.inv_mass[i]
        );
    }
    // The run's scene.ron stores the file absolute, so it reads from anywhere.
    let ron = second(&csv, "").to_ron().unwrap();
    assert!(
        ron.contains(&format!("{:?}", csv.display().to_string())),
        "{ron}"
    );
}

#[test]
fn within_offset_keep_velocities_and_material_select_move_stop_and_relabel() {
    let dir = tempfile::tempdir().unwrap();
    let csv = first_run(dir.path());
    let rows = read_final_csv_full(&csv).unwrap();
    let inside = |r: &&repose::output::csv::FinalRow| r.state[1] >= 0.0 && r.state[2] >= 0.0;
    let want = rows.iter().filter(inside).count();
    assert!(
        want > 20 && want < 300,
        "{want} beads in the quarter x, y ≥ 0"
    );
    let world = second(
        &csv,
        ", within: (min: (0.0, 0.0, -1.0), max: (1.0, 1.0, 1.0)), offset: (0.0, 0.0, 0.01), keep_velocities: false, material: 1",
    )
    .build()
    .unwrap();
    let b = &world.state.bodies;
    assert_eq!(b.len(), want, "the spheres within the box");
    for (i, r) in rows.iter().filter(inside).enumerate() {
        let s = r.state;
        assert_eq!(
            b.pos[i],
            DVec3::new(s[1], s[2], s[3] + 0.01),
            "body {i} moved up 1 cm"
        );
        assert_eq!(
            (b.vel[i], b.omega[i]),
            (DVec3::ZERO, DVec3::ZERO),
            "body {i} at rest"
        );
        assert_eq!(b.material[i], 1, "body {i} re-labelled");
        let m = 7800.0 * 4.0 / 3.0 * std::f64::consts::PI * s[10].powi(3);
        assert!(
            (1.0 / b.inv_mass[i] - m).abs() <= 1e-12 * m,
            "body {i}: material 1's density"
        );
    }
    let err = try_second(
        &csv,
        ", within: (min: (5.0, 5.0, 5.0), max: (6.0, 6.0, 6.0))",
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("no body of") && err.contains("lies within"),
        "{err}"
    );
}

/// `scenes/shapes.ron` run for `duration` seconds on the CPU with
/// `output.checkpoint.keep` into `dir/shapes`, which it returns.
fn kept_checkpoint_run(dir: &Path, duration: &str) -> std::path::PathBuf {
    let out = dir.join("shapes");
    let duration = format!("duration={duration}");
    let done = cli::repose([
        "run",
        cli::scene_path("shapes.ron").to_str().unwrap(),
        "--set",
        duration.as_str(),
        "--set",
        "output.checkpoint.keep=true",
        "--no-frames",
        "--no-picture",
        "--backend",
        "cpu",
        "--out",
        out.to_str().unwrap(),
    ]);
    cli::assert_success(&done, "shapes.ron with output.checkpoint.keep");
    out
}

/// `scenes/shapes.ron` (a body of every shape, a sphere, an inlet of boxes)
/// run for 0.3 s with `output.checkpoint.keep`: the run keeps
/// `checkpoint.bin`, which holds the state its `final.csv` shows, and a
/// scene reading it starts with the same bodies bit for bit: shapes,
/// positions, orientations (normalised; spheres start unturned), velocities, spins,
/// masses and principal moments, materials.
#[test]
fn a_scene_from_a_kept_checkpoint_starts_with_its_bodies_of_every_shape_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let out = kept_checkpoint_run(dir.path(), "0.3");
    let ck_path = out.join("checkpoint.bin");
    assert!(
        ck_path.exists(),
        "a finished run with keep keeps checkpoint.bin"
    );
    let ck = repose::run::checkpoint::read_checkpoint(&ck_path).unwrap();
    let want = &ck.world.bodies;
    let rows = read_final_csv_full(out.join("final.csv")).unwrap();
    assert_eq!(want.len(), rows.len());
    for (i, r) in rows.iter().enumerate() {
        let s = r.state;
        assert_eq!(
            want.pos[i],
            DVec3::new(s[1], s[2], s[3]),
            "body {i}: the checkpoint is the final state"
        );
    }
    let shapes = (0..want.len())
        .filter(|&i| want.shape[i] != repose::bodies::SPHERE)
        .count();
    assert!(
        shapes >= 7 && shapes < want.len(),
        "{shapes} of {} bodies are not spheres: the test wants both kinds",
        want.len()
    );
    let text = format!(
        r#"Scene(version: 1, name: "from_checkpoint", time_step: 2e-3, duration: 0.02,
    solver: (method: Apgd, max_iterations: 200, tolerance: 1e-6),
    materials: [(name: "wood", friction: 0.5, rolling: 0.001, spinning: 0.001, density: 700.0)],
    spheres: [FromFile(file: {:?})],
    boundaries: [Box(name: "bin", center: (0.0, 0.0, 0.5), half_extents: (0.4, 0.4, 0.5), open_top: true)],
)"#,
        ck_path.display().to_string()
    );
    let scene =
        Scene::from_str(&text, "from_checkpoint.ron", &[]).unwrap_or_else(|e| panic!("{e}"));
    let mut world = scene.build().unwrap_or_else(|e| panic!("{e}"));
    let b = &world.state.bodies;
    assert_eq!(b.len(), want.len());
    for i in 0..b.len() {
        assert_eq!(b.pos[i], want.pos[i], "body {i} position");
        assert_eq!(b.vel[i], want.vel[i], "body {i} velocity");
        assert_eq!(b.omega[i], want.omega[i], "body {i} spin");
        assert_eq!(b.radius[i], want.radius[i], "body {i} (bounding) radius");
        assert_eq!(b.inv_mass[i], want.inv_mass[i], "body {i} mass");
        assert_eq!(
            b.inv_inertia_body[i], want.inv_inertia_body[i],
            "body {i} moments"
        );
        assert_eq!(b.material[i], want.material[i], "body {i} material");
        if want.shape[i] == repose::bodies::SPHERE {
            assert_eq!(b.shape[i], repose::bodies::SPHERE, "body {i} is a sphere");
        } else {
            // Every source's orientation is normalised as the body is
            // made; the run's drifts from unit length by rounding.
            assert_eq!(b.rot[i], want.rot[i].normalize(), "body {i} orientation");
            assert_eq!(
                b.shapes[b.shape[i] as usize].shape, want.shapes[want.shape[i] as usize].shape,
                "body {i} shape"
            );
        }
    }
    // And it runs on from there.
    let mut st = repose::step::Stepper::new();
    for k in 0..10 {
        st.step(&mut world)
            .unwrap_or_else(|e| panic!("step {k} from the checkpoint: {e:#}"));
    }
}

/// A checkpoint used as a scene's source is checked as a scene's bodies
/// are: a shape that is not finite or not positive (a NaN polyhedron
/// vertex, an infinite ellipsoid radius, negative half extents, a capsule
/// of radius 0), an orientation of no direction, a velocity that is not
/// finite — each is one error naming the file, the body and the reason,
/// never a panic in the narrowphase or a first step that blames the solver.
#[test]
fn a_checkpoint_source_with_bodies_no_scene_would_accept_is_refused_naming_the_body() {
    use repose::run::checkpoint::{read_checkpoint, write_checkpoint};
    use repose::shape::Shape;
    let dir = tempfile::tempdir().unwrap();
    let out = kept_checkpoint_run(dir.path(), "0.004");
    let good = read_checkpoint(&out.join("checkpoint.bin")).unwrap();
    let body_of = |want: fn(&Shape) -> bool| {
        let b = &good.world.bodies;
        (0..b.len())
            .find(|&i| {
                b.shape[i] != repose::bodies::SPHERE && want(&b.shapes[b.shape[i] as usize].shape)
            })
            .expect("shapes.ron has a body of each kind")
    };
    type Damage = Box<dyn Fn(&mut repose::bodies::Bodies)>;
    let shape_at = |i: usize| move |b: &mut repose::bodies::Bodies| b.shape[i] as usize;
    let poly = body_of(|s| matches!(s, Shape::ConvexPolyhedron { .. }));
    let ell = body_of(|s| matches!(s, Shape::Ellipsoid { .. }));
    let bx = body_of(|s| matches!(s, Shape::Box { .. }));
    let cases: Vec<(&str, usize, Damage, &str)> = vec![
        (
            "nan_vertex",
            poly,
            Box::new(move |b| {
                let k = shape_at(poly)(b);
                if let Shape::ConvexPolyhedron { vertices } = &mut b.shapes[k].shape {
                    vertices[0].x = f64::NAN;
                }
            }),
            "convex_polyhedron: vertices[0] is not finite",
        ),
        (
            "inf_radius",
            ell,
            Box::new(move |b| {
                let k = shape_at(ell)(b);
                if let Shape::Ellipsoid { radii } = &mut b.shapes[k].shape {
                    radii.y = f64::INFINITY;
                }
            }),
            "ellipsoid",
        ),
        (
            "negative_box",
            bx,
            Box::new(move |b| {
                let k = shape_at(bx)(b);
                if let Shape::Box { half_extents } = &mut b.shapes[k].shape {
                    half_extents.z = -half_extents.z;
                }
            }),
            "box",
        ),
        (
            "zero_rotation",
            bx,
            Box::new(move |b| b.rot[bx] = glam::DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0)),
            "orientation",
        ),
        (
            "inf_velocity",
            0,
            Box::new(|b| b.vel[0].x = f64::INFINITY),
            "velocity that is not finite",
        ),
    ];
    for (name, body, damage, reason) in cases {
        let mut ck = good.clone();
        damage(&mut ck.world.bodies);
        let path = dir.path().join(format!("{name}.bin"));
        write_checkpoint(&path, &ck).unwrap();
        let e =
            std::panic::catch_unwind(|| try_second(&path, "").and_then(|s| s.build().map(drop)))
                .unwrap_or_else(|_| panic!("{name}: a panic"))
                .expect_err(name)
                .to_string();
        for part in [
            path.display().to_string(),
            format!("body {body}"),
            reason.to_string(),
        ] {
            assert!(e.contains(&part), "{name}: expected {part:?} in: {e}");
        }
    }
}

/// A file that is not a table is refused from its first line, and the
/// message quotes the start of that line only: a gigabyte of NUL bytes
/// with no line break (sparse on disk) is refused once one line passes
/// the reader's bound, not read whole into memory; a wrong header of
/// 60,000 characters is quoted by its first 80.
#[test]
fn a_file_with_no_line_break_or_a_huge_header_is_refused_in_a_short_message() {
    let dir = tempfile::tempdir().unwrap();
    let nul = dir.path().join("nul.csv");
    std::fs::File::create(&nul)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let long = dir.path().join("long_header.csv");
    std::fs::write(&long, format!("{}\n1,2\n", "x".repeat(60_000))).unwrap();
    for (path, reason) in [(&nul, "longer than"), (&long, "header is")] {
        let e = try_second(path, "")
            .and_then(|s| s.build().map(drop))
            .expect_err("not a table")
            .to_string();
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(
            e.contains(name) && e.contains(reason),
            "{name}: expected {reason:?} in: {}",
            &e[..e.len().min(400)]
        );
        assert!(
            e.len() < 1_000,
            "{name}: the message has {} bytes; it should quote a line's start only",
            e.len()
        );
    }
}
