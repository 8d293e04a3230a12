//! Writes the funnel, silo and lifter meshes into `scenes/meshes/` as
//! Wavefront OBJ files (`v x y z`, then `f i j k` with 1-based indices;
//! triangles only, shared vertices). Coordinates are in metres. The files
//! listed below are this program's output, so they can be regenerated with
//!
//! ```text
//! cargo run --release --example make_meshes
//! ```
//!
//! * `funnel.obj` — a fixed funnel for the angle of repose: a cone sheet
//!   from r = 0.05 at z = 0.06 to r = 0.007 at z = 0, then a spout of
//!   r = 0.007 down to z = −0.02; 48 segments, open at both ends, normals
//!   toward the inside (the axis; upward on the cone).
//! * `silo_D25.obj`, `silo_D30.obj`, `silo_D35.obj` — flat-bottomed silos
//!   for discharge (Beverloo): a wall of r = 0.04 from z = 0 to 0.14, open
//!   at the top, and a floor at z = 0 from the orifice (r = D/2) to the
//!   wall; 64 segments, one connected surface, normals into the silo.
//! * `lifters.obj` — six closed lifter boxes (outward normals) for a drum
//!   about the y axis of inner radius 0.1 and length 0.08: r from 0.082 to
//!   0.102, 0.01 wide, y from −0.04 to 0.04, at 0°, 60°, …, 300° (0° along
//!   −z, the bottom).
//!
//! After writing, each file is read back with [`repose::mesh::read_mesh`]
//! and its counts, open edges, volume and orientation are printed and
//! checked (the program panics if an orientation is wrong).

use std::f64::consts::TAU;
use std::fmt::Write as _;
use std::path::Path;

use glam::DVec3;
use repose::mesh::{read_mesh, TriMesh};

/// (cos, sin) of `angle` (rad), the rounding noise of an exact zero
/// (cos 90°, sin 180°) set to 0.
fn cos_sin(angle: f64) -> (f64, f64) {
    let clean = |x: f64| if x.abs() < 1e-15 { 0.0 } else { x };
    (clean(angle.cos()), clean(angle.sin()))
}

/// `n + 1` points (r, z) evenly from `a` to `b`, both ends exact.
fn line(a: (f64, f64), b: (f64, f64), n: usize) -> Vec<(f64, f64)> {
    (0..=n)
        .map(|k| {
            let t = k as f64 / n as f64;
            (a.0 * (1.0 - t) + b.0 * t, a.1 * (1.0 - t) + b.1 * t)
        })
        .collect()
}

/// The polyline through `pieces` joined end to start (the shared point once).
fn join(pieces: &[Vec<(f64, f64)>]) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for p in pieces {
        let skip = usize::from(!out.is_empty());
        out.extend_from_slice(&p[skip..]);
    }
    out
}

/// The surface swept by the profile (r, z) about the z axis, `segments`
/// around, one ring of vertices per profile point. The normal is φ̂ × t
/// for the profile direction t: walking down a wall it points to the axis,
/// walking inward along a floor it points up.
fn revolution(profile: &[(f64, f64)], segments: usize) -> TriMesh {
    let mut vertices = Vec::with_capacity(profile.len() * segments);
    for &(r, z) in profile {
        for j in 0..segments {
            let (c, s) = cos_sin(TAU * j as f64 / segments as f64);
            vertices.push(DVec3::new(r * c, r * s, z));
        }
    }
    let id = |i: usize, j: usize| (i * segments + j % segments) as u32;
    let mut triangles = Vec::with_capacity(2 * (profile.len() - 1) * segments);
    for i in 0..profile.len() - 1 {
        for j in 0..segments {
            let (a, b) = (id(i, j), id(i, j + 1));
            let (c, d) = (id(i + 1, j), id(i + 1, j + 1));
            triangles.push([a, b, c]);
            triangles.push([b, d, c]);
        }
    }
    TriMesh {
        vertices,
        triangles,
    }
}

/// The funnel: 48 segments; cone sheet in 8 bands, spout in 2.
fn funnel() -> TriMesh {
    let (top, throat, tip) = ((0.05, 0.06), (0.007, 0.0), (0.007, -0.02));
    let profile = join(&[line(top, throat, 8), line(throat, tip, 2)]);
    revolution(&profile, 48)
}

/// A silo with an orifice of diameter `d` (m): 64 segments; wall in 14
/// bands, floor (annulus) in 6.
fn silo(d: f64) -> TriMesh {
    let (rim, corner, hole) = ((0.04, 0.14), (0.04, 0.0), (d / 2.0, 0.0));
    let profile = join(&[line(rim, corner, 14), line(corner, hole, 6)]);
    revolution(&profile, 64)
}

/// The radial unit vector in the x–z plane at `angle` (rad; 0 is −z).
fn radial(angle: f64) -> DVec3 {
    let (c, s) = cos_sin(angle);
    DVec3::new(s, 0.0, -c)
}

/// The six lifter boxes, 8 vertices and 12 outward triangles each, in the
/// right-handed frame (radial, tangential = ŷ × radial, ŷ) of each bar.
fn lifters() -> TriMesh {
    // Corner bit 0: radial, bit 1: tangential, bit 2: axial; two triangles
    // per face, counter-clockwise seen from outside.
    const FACES: [u32; 36] = [
        0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5, 0, 1, 5, 0, 5, 4, 2, 6, 7, 2, 7, 3, 0, 2, 3, 0, 3, 1,
        4, 5, 7, 4, 7, 6,
    ];
    let mut mesh = TriMesh {
        vertices: Vec::new(),
        triangles: Vec::new(),
    };
    for k in 0..6 {
        let er = radial(TAU * k as f64 / 6.0);
        let et = DVec3::Y.cross(er);
        let base = mesh.vertices.len() as u32;
        for corner in 0..8 {
            let r = [0.082, 0.102][corner & 1];
            let t = [-0.005, 0.005][(corner >> 1) & 1];
            let y = [-0.04, 0.04][corner >> 2];
            mesh.vertices.push(er * r + et * t + DVec3::Y * y);
        }
        let faces = FACES.chunks_exact(3);
        mesh.triangles
            .extend(faces.map(|f| [f[0], f[1], f[2]].map(|i| base + i)));
    }
    mesh
}

/// Writes `mesh` as OBJ text to `path`.
fn write_obj(mesh: &TriMesh, path: &Path, title: &str) {
    let mut s = format!("# {title}\n# metres; written by examples/make_meshes.rs\n");
    for v in &mesh.vertices {
        // `+ 0.0` writes −0 as 0.
        writeln!(s, "v {} {} {}", v.x + 0.0, v.y + 0.0, v.z + 0.0).unwrap();
    }
    for t in &mesh.triangles {
        writeln!(s, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1).unwrap();
    }
    std::fs::write(path, s).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// Reads `path` back and prints its counts, open edges and volume; returns
/// the mesh and the unit normal of every triangle.
fn check(path: &Path) -> (TriMesh, Vec<DVec3>) {
    let (mesh, report) = read_mesh(path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.degenerate_dropped, 0, "{}", path.display());
    let (open, over) = mesh.open_edges();
    println!(
        "{}: {} vertices, {} triangles, open edges {open} (> 2 uses: {over}), volume {:.6e} m³",
        path.display(),
        mesh.vertices.len(),
        mesh.triangles.len(),
        mesh.signed_volume()
    );
    let normals = (0..mesh.triangles.len())
        .map(|t| {
            let [a, b, c] = mesh.corners(t);
            (b - a).cross(c - a).normalize()
        })
        .collect();
    (mesh, normals)
}

/// Centroid of triangle `t` and the horizontal unit vector from the z axis to it.
fn centroid_radial(mesh: &TriMesh, t: usize) -> (DVec3, DVec3) {
    let [a, b, c] = mesh.corners(t);
    let g = (a + b + c) / 3.0;
    (g, DVec3::new(g.x, g.y, 0.0).normalize())
}

/// Prints and checks the orientation of the funnel: toward the axis
/// everywhere, upward on the cone (z > 0).
fn check_funnel(path: &Path) {
    let (mesh, n) = check(path);
    let (mut max_radial, mut min_cone_z) = (f64::MIN, f64::MAX);
    for (t, n) in n.iter().enumerate() {
        let (g, er) = centroid_radial(&mesh, t);
        max_radial = max_radial.max(n.dot(er));
        if g.z > 0.0 {
            min_cone_z = min_cone_z.min(n.z);
        }
    }
    println!(
        "  max n·r̂ {max_radial:.4} (< 0: toward the axis), min n_z on the cone {min_cone_z:.4}"
    );
    assert!(max_radial < 0.0 && min_cone_z > 0.0);
}

/// Prints and checks the orientation of a silo: floor up, wall to the axis.
fn check_silo(path: &Path) {
    let (mesh, n) = check(path);
    let (mut floor, mut min_floor_z, mut max_wall_r) = (0, f64::MAX, f64::MIN);
    for (t, n) in n.iter().enumerate() {
        let (g, er) = centroid_radial(&mesh, t);
        if g.z.abs() < 1e-12 {
            floor += 1;
            min_floor_z = min_floor_z.min(n.z);
        } else {
            max_wall_r = max_wall_r.max(n.dot(er));
        }
    }
    let wall = mesh.triangles.len() - floor;
    println!("  floor {floor} triangles, min n_z {min_floor_z:.6}");
    println!("  wall {wall} triangles, max n·r̂ {max_wall_r:.6}");
    assert!(min_floor_z > 0.99 && max_wall_r < -0.99);
}

/// Prints and checks the lifters: closed, 9.6e-5 m³, every face outward
/// and aligned with its bar's radial, tangential or axial direction.
fn check_lifters(path: &Path) {
    let (mesh, n) = check(path);
    let (mut min_out, mut min_align) = (f64::MAX, f64::MAX);
    for (t, n) in n.iter().enumerate() {
        let (g, _) = centroid_radial(&mesh, t);
        let k = (g.x.atan2(-g.z) / (TAU / 6.0)).round();
        let er = radial(k * TAU / 6.0);
        let centre = er * 0.092;
        let axes = [er, DVec3::Y.cross(er), DVec3::Y];
        min_align = min_align.min(axes.iter().map(|a| n.dot(*a).abs()).fold(0.0, f64::max));
        min_out = min_out.min(n.dot(g - centre));
    }
    let err = (mesh.signed_volume() - 6.0 * 0.02 * 0.01 * 0.08).abs();
    println!("  volume error {err:.1e} m³, min |n·axis| {min_align:.15}");
    println!("  min n·(centroid − box centre) {min_out:.4} m (> 0: outward)");
    assert!(mesh.open_edges() == (0, 0) && err < 1e-12 && min_out > 0.0 && min_align > 1.0 - 1e-12);
}

fn main() {
    let dir = Path::new("scenes/meshes");
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));

    let path = dir.join("funnel.obj");
    write_obj(
        &funnel(),
        &path,
        "fixed funnel (cone and spout); normals inward",
    );
    check_funnel(&path);

    for d in [0.025, 0.030, 0.035] {
        let path = dir.join(format!("silo_D{:.0}.obj", d * 1000.0));
        let title = format!("flat-bottomed silo, orifice D = {d}; normals inward");
        write_obj(&silo(d), &path, &title);
        check_silo(&path);
    }

    let path = dir.join("lifters.obj");
    write_obj(&lifters(), &path, "six drum lifter boxes; normals outward");
    check_lifters(&path);
}
