//! Mesh boundaries end to end (`Mesh(file: …)` in a scene; the contact
//! rules are in `src/collision/mesh.rs`): a sphere rests with its weight on
//! a triangulated floor over a face, a shared edge and a vertex where eight
//! triangles meet, and on a block's convex top edge and corner; a sphere
//! rolls across the shared edges of a triangulated strip with a constant
//! normal force (no bump); a mesh box holds the same pile as the analytic
//! box; a turning mesh turns; bad mesh fields and files are named errors.

#[path = "common/cli.rs"]
mod cli;

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use cli::*;
use glam::{DQuat, DVec3};
use repose::scene::Scene;
use repose::step::Stepper;
use repose::world::World;

/// A fresh folder for this test's files.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("repose_mesh_boundary_{name}"));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// OBJ text for vertices and triangles (1-based indices).
fn obj(vertices: &[DVec3], triangles: &[[usize; 3]]) -> String {
    let mut s = String::new();
    for v in vertices {
        s += &format!("v {} {} {}\n", v.x, v.y, v.z);
    }
    for t in triangles {
        s += &format!("f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    s
}

/// An nx × ny grid of squares of side `a` on z = 0 from the origin, each
/// split along alternating diagonals (so some vertices join eight
/// triangles), normals +z.
fn grid(nx: usize, ny: usize, a: f64) -> String {
    let mut v = Vec::new();
    for j in 0..=ny {
        for i in 0..=nx {
            v.push(DVec3::new(i as f64 * a, j as f64 * a, 0.0));
        }
    }
    let id = |i: usize, j: usize| j * (nx + 1) + i;
    let mut t = Vec::new();
    for j in 0..ny {
        for i in 0..nx {
            let (p, q, r, s) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            if (i + j) % 2 == 0 {
                t.extend([[p, q, r], [p, r, s]]);
            } else {
                t.extend([[p, q, s], [q, r, s]]);
            }
        }
    }
    obj(&v, &t)
}

/// The box [lo, hi] as 12 triangles, normals outward; without its top
/// face when `open_top`.
fn block(lo: DVec3, hi: DVec3, open_top: bool) -> String {
    let v: Vec<DVec3> = (0..8)
        .map(|k| {
            DVec3::new(
                if k & 1 == 0 { lo.x } else { hi.x },
                if k & 2 == 0 { lo.y } else { hi.y },
                if k & 4 == 0 { lo.z } else { hi.z },
            )
        })
        .collect();
    let mut quads = vec![
        [0, 2, 3, 1],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ];
    if !open_top {
        quads.push([4, 5, 7, 6]);
    }
    let t: Vec<[usize; 3]> = quads
        .iter()
        .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
        .collect();
    obj(&v, &t)
}

/// A scene of the given spheres and boundaries (friction 0.5, no rolling
/// resistance, h = 1 ms), solved to 1e-12 so that what the tests see is
/// the geometry, not the solver's tolerance.
fn scene(spheres: &str, boundaries: &str) -> String {
    format!(
        r#"Scene(
    version: 1,
    time_step: 1e-3,
    duration: 1.0,
    materials: [(friction: 0.5, density: 1000.0)],
    spheres: [{spheres}],
    boundaries: [{boundaries}],
    solver: (method: Apgd, tolerance: 1e-12, max_iterations: 2000),
)"#
    )
}

fn world(text: &str, file: &Path) -> World {
    Scene::from_str(text, &file.display().to_string(), &[])
        .unwrap_or_else(|e| panic!("{e}"))
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Steps a one-sphere world and returns, for each step, the number of
/// contacts and the sum of their normal impulses.
fn run(w: &mut World, steps: usize) -> Vec<(usize, f64)> {
    let mut st = Stepper::new();
    (0..steps)
        .map(|_| {
            st.step(w).expect("step");
            let g = st.last_impulses();
            (g.len(), g.iter().map(|c| c[0]).sum())
        })
        .collect()
}

const R: f64 = 0.05;

fn weight_impulse() -> f64 {
    1000.0 * 4.0 / 3.0 * std::f64::consts::PI * R.powi(3) * 9.81 * 1e-3
}

/// Rests a sphere of radius 5 cm with its centre at `at` on the mesh of
/// `mesh_text` and checks, after 300 steps, that it stays where it was put
/// and that one contact carries its weight.
fn assert_rests(name: &str, mesh_text: &str, at: DVec3) {
    let d = dir(name);
    fs::write(d.join("m.obj"), mesh_text).unwrap();
    let text = scene(
        &format!("Sphere(pos: ({}, {}, {}), radius: {R})", at.x, at.y, at.z),
        r#"Mesh(name: "m", file: "m.obj")"#,
    );
    let mut w = world(&text, &d.join("s.ron"));
    let log = run(&mut w, 300);
    let (n, impulse) = *log.last().unwrap();
    assert_eq!(n, 1, "{name}: contacts at the end: {n}, expected 1");
    let want = weight_impulse();
    assert!(
        (impulse - want).abs() < 1e-6 * want,
        "{name}: normal impulse {impulse:e} per step vs the weight's {want:e}"
    );
    let moved = (w.state.bodies.pos[0] - at).length();
    assert!(
        moved < 1e-6,
        "{name}: the sphere moved {moved:e} m from {at}"
    );
}

#[test]
fn a_sphere_rests_with_its_weight_on_a_mesh_face_shared_edge_and_vertex() {
    let floor = grid(4, 4, 0.1);
    assert_rests("face", &floor, DVec3::new(0.13, 0.17, R));
    assert_rests("edge", &floor, DVec3::new(0.2, 0.15, R));
    assert_rests("diagonal", &floor, DVec3::new(0.15, 0.15, R));
    assert_rests("vertex8", &floor, DVec3::new(0.2, 0.2, R));
    assert_rests("vertex4", &floor, DVec3::new(0.1, 0.2, R));
}

#[test]
fn a_sphere_rests_with_its_weight_on_a_convex_mesh_edge_and_corner() {
    let b = block(DVec3::ZERO, DVec3::new(0.2, 0.2, 0.1), false);
    assert_rests("ridge", &b, DVec3::new(0.2, 0.1, 0.1 + R));
    assert_rests("corner", &b, DVec3::new(0.2, 0.2, 0.1 + R));
}

/// A sphere rolling without slip at 0.5 m/s along a strip of 12
/// triangulated squares of 5 cm crosses 23 shared edges and 12 vertex
/// rows; the normal force stays the weight at every step and the height
/// stays the radius (no bump), and the rolling speed is kept.
#[test]
fn a_sphere_rolls_across_shared_mesh_edges_without_a_bump() {
    let d = dir("rolling");
    fs::write(d.join("strip.obj"), grid(12, 2, 0.05)).unwrap();
    let v = 0.5;
    let text = scene(
        &format!(
            "Sphere(pos: (0.06, 0.05, {R}), radius: {R}, velocity: ({v}, 0, 0), angular_velocity: (0, {}, 0))",
            v / R
        ),
        r#"Mesh(name: "strip", file: "strip.obj")"#,
    );
    let mut w = world(&text, &d.join("s.ron"));
    let want = weight_impulse();
    let mut st = Stepper::new();
    let mut worst_force = 0.0f64;
    let mut worst_height = 0.0f64;
    for step in 0..900 {
        st.step(&mut w).expect("step");
        let g = st.last_impulses();
        assert_eq!(
            g.len(),
            1,
            "step {step}: {} contacts, x = {}",
            g.len(),
            w.state.bodies.pos[0].x
        );
        worst_force = worst_force.max((g[0][0] - want).abs() / want);
        worst_height = worst_height.max((w.state.bodies.pos[0].z - R).abs());
    }
    let x = w.state.bodies.pos[0].x;
    assert!(x > 0.5, "the sphere only reached x = {x}");
    assert!(
        worst_force < 1e-6,
        "normal impulse left the weight by {worst_force:e} (relative)"
    );
    assert!(
        worst_height < 1e-7,
        "height left the radius by {worst_height:e} m"
    );
    let speed = w.state.bodies.vel[0].x;
    assert!((speed - v).abs() < 1e-6, "rolling speed {speed} vs {v}");
}

/// A box body (20 × 10 × 6 cm) resting on a triangulated floor across
/// four of its squares meets it through parry's mesh manifolds — points
/// where the triangles' outlines cross the box's bottom face, all on the
/// floor — and they carry its weight; it stays put.
#[test]
fn a_box_body_rests_on_a_mesh_floor_with_its_weight() {
    let d = dir("box_body");
    fs::write(d.join("floor.obj"), grid(4, 4, 0.1)).unwrap();
    let text = scene(
        "Body(shape: Box(half_extents: (0.1, 0.05, 0.03)), pos: (0.2, 0.2, 0.03))",
        r#"Mesh(file: "floor.obj")"#,
    );
    let mut w = world(&text, &d.join("s.ron"));
    let log = run(&mut w, 200);
    let (n, impulse) = *log.last().unwrap();
    let want = 1000.0 * 0.2 * 0.1 * 0.06 * 9.81 * 1e-3;
    assert!(
        n >= 4,
        "contacts of the box with the floor: {n}, expected at least its 4 corners"
    );
    assert!(
        (impulse - want).abs() < 1e-6 * want,
        "normal impulse {impulse:e} per step vs the weight's {want:e}"
    );
    let moved = (w.state.bodies.pos[0] - DVec3::new(0.2, 0.2, 0.03)).length();
    assert!(moved < 1e-5, "the box moved {moved:e} m");
}

/// A mesh floor moving at 1 m/s under a sphere at rest: friction brings the
/// sphere to rolling without slip at 2/7 of the floor's speed (angular
/// momentum about the contact point is conserved: m v + I ω = … with
/// I = 2/5 m r², v = r ω − … gives v = 2/7 V for a solid sphere).
#[test]
fn a_sphere_on_a_moving_mesh_floor_rolls_at_two_sevenths_of_its_speed() {
    let d = dir("belt");
    fs::write(d.join("belt.obj"), grid(40, 2, 0.05)).unwrap();
    // De Saxcé's law: the associated law would launch the sliding sphere
    // at μ‖u_T‖ (docs/model.md, "The model") and the belt would throw it.
    let text = scene(
        &format!("Sphere(pos: (1.0, 0.05, {R}), radius: {R})"),
        r#"Mesh(file: "belt.obj", velocity: (1.0, 0, 0))"#,
    )
    .replace("solver:", "contact: (friction_law: DeSaxce),\n    solver:");
    let mut w = world(&text, &d.join("s.ron"));
    run(&mut w, 300);
    let v = w.state.bodies.vel[0].x;
    let want = 2.0 / 7.0;
    assert!(
        (v - want).abs() < 1e-6,
        "sphere speed {v} m/s vs 2/7 of the floor's 1 m/s = {want}"
    );
}

/// A mesh turning at 2 rad/s about z for 0.5 s has turned 1 rad, and a
/// vertex 0.1 m from the axis moves at 0.2 m/s.
#[test]
fn a_turning_mesh_turns_about_its_position() {
    let d = dir("turning");
    fs::write(d.join("plate.obj"), grid(2, 2, 0.1)).unwrap();
    let text = scene(
        "Sphere(pos: (0, 0, 1), radius: 0.01)",
        r#"Mesh(file: "plate.obj", pos: (0, 0, -1), angular_velocity: (0, 0, 2))"#,
    );
    let mut w = world(&text, &d.join("s.ron"));
    run(&mut w, 500);
    let q = w.state.boundary_rotations[0];
    let want = DQuat::from_rotation_z(1.0);
    assert!(
        q.angle_between(want) < 1e-9,
        "mesh turned to {q:?}, expected {want:?}"
    );
    let v = w.boundaries()[0].surface_velocity(DVec3::new(0.1, 0.0, -1.0), w.state.time);
    assert!((v - DVec3::new(0.0, 0.2, 0.0)).length() < 1e-12, "{v}");
}

/// An open box as a mesh (flipped: its triangles face inward) holds the
/// same poured pile as the analytic open box of the same size: the bulk
/// quantities `repose compare` reads agree within its default tolerance.
#[test]
fn a_mesh_box_holds_the_same_pile_as_the_analytic_box() {
    let d = dir("box_pile");
    fs::write(
        d.join("box.obj"),
        block(DVec3::new(-0.1, -0.1, 0.0), DVec3::new(0.1, 0.1, 0.3), true),
    )
    .unwrap();
    let pile = |walls: &str| {
        format!(
            r#"Scene(
    version: 1,
    time_step: 2e-3,
    duration: 0.8,
    materials: [(friction: 0.5, rolling: 0.002, density: 2500.0)],
    spheres: [Lattice(origin: (-0.06, -0.06, 0.03), count: (5, 5, 6), spacing: 0.03, radius: 0.012, jitter: 0.05)],
    boundaries: [{walls}],
    solver: (method: Apgd, tolerance: 1e-6, max_iterations: 300),
)"#
        )
    };
    let mesh = d.join("mesh.ron");
    let analytic = d.join("analytic.ron");
    fs::write(&mesh, pile(r#"Mesh(file: "box.obj", flip: true)"#)).unwrap();
    fs::write(
        &analytic,
        pile("Box(center: (0, 0, 0.15), half_extents: (0.1, 0.1, 0.15), open_top: true)"),
    )
    .unwrap();
    for (scene, out) in [(&mesh, "out_mesh"), (&analytic, "out_box")] {
        let o = repose([
            OsStr::new("run"),
            scene.as_os_str(),
            OsStr::new("--backend"),
            OsStr::new("cpu"),
            OsStr::new("--no-frames"),
            OsStr::new("--no-picture"),
            OsStr::new("--out"),
            d.join(out).as_os_str(),
        ]);
        assert_success(&o, "run");
    }
    let o = repose([
        OsStr::new("compare"),
        d.join("out_mesh/final.csv").as_os_str(),
        d.join("out_box/final.csv").as_os_str(),
    ]);
    assert_success(&o, "compare (mesh box vs analytic box)");
}

/// A run with a fixed mesh writes `walls.pvd` with one frame of its
/// triangles; a moving mesh gets a frame beside every frame of the
/// spheres.
#[test]
fn runs_write_the_mesh_boundaries_for_paraview() {
    let d = dir("walls_output");
    fs::write(d.join("floor.obj"), grid(2, 2, 0.1)).unwrap();
    for (velocity, frames) in [("(0, 0, 0)", 1), ("(0.1, 0, 0)", 6)] {
        let text = format!(
            r#"Scene(
    version: 1,
    time_step: 1e-3,
    duration: 0.05,
    materials: [(friction: 0.5)],
    spheres: [Sphere(pos: (0.1, 0.1, 0.01), radius: 0.01)],
    boundaries: [Mesh(file: "floor.obj", velocity: {velocity})],
    output: (frame_interval: 0.01),
)"#
        );
        let file = d.join("s.ron");
        fs::write(&file, text).unwrap();
        let out = d.join(format!("out{frames}"));
        let o = repose([
            OsStr::new("run"),
            file.as_os_str(),
            OsStr::new("--backend"),
            OsStr::new("cpu"),
            OsStr::new("--out"),
            out.as_os_str(),
        ]);
        assert_success(&o, "run");
        let pvd = fs::read_to_string(out.join("walls.pvd")).unwrap();
        let n = pvd.matches("<DataSet").count();
        assert_eq!(n, frames, "walls.pvd with velocity {velocity}: {pvd}");
        let vtu = fs::read_to_string(out.join("walls_00000.vtu")).unwrap();
        assert!(
            vtu.contains("NumberOfPoints=\"9\"") && vtu.contains("NumberOfCells=\"8\""),
            "walls_00000.vtu: {}",
            &vtu[..vtu.len().min(600)]
        );
        // The run's scene.ron names the mesh file by an absolute path.
        let recorded = fs::read_to_string(out.join("scene.ron")).unwrap();
        let abs = std::path::absolute(d.join("floor.obj")).unwrap();
        assert!(
            recorded.contains(&abs.display().to_string()),
            "scene.ron does not name {}: {recorded}",
            abs.display()
        );
    }
}

#[test]
fn bad_mesh_boundaries_are_named_errors() {
    let d = dir("bad");
    fs::write(d.join("floor.obj"), grid(1, 1, 0.1)).unwrap();
    fs::write(d.join("broken.obj"), "v 0 0 0\nv 1 0 0\nf 1 2 7\n").unwrap();
    let floor = d.join("floor.obj").display().to_string();
    let broken = d.join("broken.obj").display().to_string();
    let missing = d.join("nowhere.stl").display().to_string();
    let with = |spheres: &str, mesh: &str| scene(spheres, mesh);
    let ball = "Sphere(pos: (0.05, 0.05, 0.2), radius: 0.01)";
    assert_bad_scene(
        "missing.ron",
        &with(ball, &format!("Mesh(file: {missing:?})")),
        &["boundaries[0].file", "nowhere.stl"],
    );
    assert_bad_scene(
        "broken.ron",
        &with(ball, &format!("Mesh(file: {broken:?})")),
        &["boundaries[0].file", "broken.obj"],
    );
    assert_bad_scene(
        "scale.ron",
        &with(ball, &format!("Mesh(file: {floor:?}, scale: 0)")),
        &["boundaries[0].scale"],
    );
    assert_bad_scene(
        "rot.ron",
        &with(
            ball,
            &format!("Mesh(file: {floor:?}, rot: (w: 0, x: 0, y: 0, z: 0))"),
        ),
        &["boundaries[0].rot"],
    );
    assert_bad_scene(
        "ellipsoid.ron",
        &with(
            "Body(shape: Ellipsoid(radii: (0.02, 0.01, 0.01)), pos: (0.05, 0.05, 0.2))",
            &format!("Mesh(file: {floor:?})"),
        ),
        &["spheres[0].shape", "ellipsoid", "mesh"],
    );
}
