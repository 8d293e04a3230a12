//! Mesh files (`src/mesh.rs`): one unit cube written by hand as ASCII STL,
//! binary STL and OBJ (quads) reads back as the same closed surface —
//! 8 shared vertices, 12 triangles, area 6, volume 1, no open edge — and
//! is placed by scale, rotation and translation; zero-area triangles are
//! dropped and counted; malformed files are errors naming the file and
//! the reason, never a panic.

use std::fs;
use std::path::{Path, PathBuf};

use glam::{DQuat, DVec3};
use repose::mesh::{read_mesh, TriMesh};

/// The cube's corners and its 12 triangles, counter-clockwise from outside.
fn cube() -> (Vec<[f32; 3]>, Vec<[usize; 3]>) {
    let v = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 0.0, 1.0],
        [1.0, 1.0, 1.0],
        [0.0, 1.0, 1.0],
    ];
    let quads = [
        [0, 3, 2, 1], // bottom (−z)
        [4, 5, 6, 7], // top (+z)
        [0, 1, 5, 4], // −y
        [2, 3, 7, 6], // +y
        [1, 2, 6, 5], // +x
        [3, 0, 4, 7], // −x
    ];
    let t = quads
        .iter()
        .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
        .collect();
    (v, t)
}

fn normal(v: &[[f32; 3]], t: [usize; 3]) -> [f32; 3] {
    let p = |i: usize| DVec3::new(v[i][0] as f64, v[i][1] as f64, v[i][2] as f64);
    let n = (p(t[1]) - p(t[0])).cross(p(t[2]) - p(t[0])).normalize();
    [n.x as f32, n.y as f32, n.z as f32]
}

fn ascii_stl(extra: &str) -> String {
    let (v, ts) = cube();
    let mut s = String::from("solid cube\n");
    for t in ts {
        let n = normal(&v, t);
        s += &format!(
            "  facet normal {} {} {}\n    outer loop\n",
            n[0], n[1], n[2]
        );
        for i in t {
            s += &format!("      vertex {} {} {}\n", v[i][0], v[i][1], v[i][2]);
        }
        s += "    endloop\n  endfacet\n";
    }
    s += extra;
    s + "endsolid cube\n"
}

fn binary_stl(count_override: Option<u32>, drop_bytes: usize) -> Vec<u8> {
    let (v, ts) = cube();
    let mut b = vec![0u8; 80];
    b[..11].copy_from_slice(b"binary cube");
    b.extend(count_override.unwrap_or(ts.len() as u32).to_le_bytes());
    for t in ts {
        for x in normal(&v, t) {
            b.extend(x.to_le_bytes());
        }
        for i in t {
            for x in v[i] {
                b.extend(x.to_le_bytes());
            }
        }
        b.extend(0u16.to_le_bytes());
    }
    b.truncate(b.len() - drop_bytes);
    b
}

fn obj(extra: &str) -> String {
    let (v, _) = cube();
    let mut s = String::from("# a unit cube\no cube\n");
    for p in &v {
        s += &format!("v {} {} {}\n", p[0], p[1], p[2]);
    }
    // Quads, 1-based, triangulated by the reader.
    for q in [
        "1 4 3 2", "5 6 7 8", "1 2 6 5", "3 4 8 7", "2 3 7 6", "4 1 5 8",
    ] {
        s += &format!("f {q}\n");
    }
    s + extra
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, bytes).unwrap();
    p
}

fn check_unit_cube(m: &TriMesh, what: &str) {
    assert_eq!(m.vertices.len(), 8, "{what}: vertices");
    assert_eq!(m.triangles.len(), 12, "{what}: triangles");
    assert!(
        (m.area() - 6.0).abs() < 1e-12,
        "{what}: area {} vs 6",
        m.area()
    );
    assert!(
        (m.signed_volume() - 1.0).abs() < 1e-12,
        "{what}: volume {} vs 1 (outward winding)",
        m.signed_volume()
    );
    assert_eq!(m.open_edges(), (0, 0), "{what}: a closed manifold surface");
    assert_eq!(m.bounds(), (DVec3::ZERO, DVec3::ONE), "{what}: bounds");
}

#[test]
fn ascii_stl_binary_stl_and_obj_read_the_same_closed_cube() {
    let tmp = tempfile::tempdir().unwrap();
    let files = [
        write(tmp.path(), "cube.stl", ascii_stl("")),
        write(tmp.path(), "cube_binary.STL", binary_stl(None, 0)),
        write(tmp.path(), "cube.obj", obj("")),
    ];
    let mut meshes = Vec::new();
    for f in &files {
        let (m, report) = read_mesh(f).unwrap_or_else(|e| panic!("{e}"));
        check_unit_cube(&m, &f.display().to_string());
        assert_eq!(report.degenerate_dropped, 0);
        meshes.push(m);
    }
    // The same triangles, whatever the vertex order of each file.
    let key = |m: &TriMesh| {
        let mut tris: Vec<[[i64; 3]; 3]> = (0..m.triangles.len())
            .map(|t| {
                let mut c = m
                    .corners(t)
                    .map(|p| [p.x, p.y, p.z].map(|x| x.round() as i64));
                // Rotate so the smallest corner comes first (keeps winding).
                let k = (0..3).min_by_key(|&i| c[i]).unwrap();
                c.rotate_left(k);
                c
            })
            .collect();
        tris.sort();
        tris
    };
    assert_eq!(key(&meshes[0]), key(&meshes[1]), "ASCII and binary STL");
    assert_eq!(key(&meshes[0]), key(&meshes[2]), "STL and OBJ");
}

#[test]
fn a_mesh_is_placed_by_scale_then_rotation_then_translation() {
    let tmp = tempfile::tempdir().unwrap();
    let (m, _) = read_mesh(&write(tmp.path(), "cube.obj", obj(""))).unwrap();
    let rot = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2);
    let p = m.placed(2.0, rot, DVec3::new(1.0, 2.0, 3.0));
    assert!(
        (p.signed_volume() - 8.0).abs() < 1e-9,
        "volume {}",
        p.signed_volume()
    );
    assert!((p.area() - 24.0).abs() < 1e-9);
    let (lo, hi) = p.bounds();
    // x ∈ [−2, 0] after the quarter turn, then +1; y ∈ [0, 2] + 2; z + 3.
    for (got, want) in [
        (lo, DVec3::new(-1.0, 2.0, 3.0)),
        (hi, DVec3::new(1.0, 4.0, 5.0)),
    ] {
        assert!((got - want).length() < 1e-12, "bounds {lo} … {hi}");
    }
}

#[test]
fn zero_area_triangles_are_dropped_and_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let f = write(tmp.path(), "cube.obj", obj("f 1 2 1\nf 1 2 3\n"));
    let (m, report) = read_mesh(&f).unwrap();
    assert_eq!(report.degenerate_dropped, 1);
    assert_eq!(m.triangles.len(), 13);
    let sliver = "  facet normal 0 0 1\n    outer loop\n      vertex 0 0 0\n      vertex 0.5 0 0\n      vertex 1 0 0\n    endloop\n  endfacet\n";
    let (m, report) = read_mesh(&write(tmp.path(), "cube.stl", ascii_stl(sliver))).unwrap();
    assert_eq!((report.degenerate_dropped, m.triangles.len()), (1, 12));
}

#[test]
fn malformed_mesh_files_are_named_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            write(dir, "empty.stl", ""),
            "not a valid STL file: the file is empty",
        ),
        (
            write(dir, "empty.obj", ""),
            "not a valid OBJ file: the file is empty",
        ),
        (
            write(dir, "short.stl", binary_stl(None, 30)),
            "not a valid STL file",
        ),
        (
            write(dir, "count.stl", binary_stl(Some(40), 0)),
            "not a valid STL file",
        ),
        (
            write(
                dir,
                "word.stl",
                ascii_stl("").replace("vertex 1 1 1", "vertex 1 1 abc"),
            ),
            "not a valid STL file",
        ),
        (
            // The cube's text is 16 lines; the bad face is the 17th.
            write(dir, "index.obj", obj("f 1 2 99\n")),
            "not a valid OBJ file: line 17 (`f 1 2 99`): face vertex index out of bounds",
        ),
        (
            write(dir, "word.obj", "v 0 0 0\nv 1 x 0\nv 0 1 0\nf 1 2 3\n"),
            "not a valid OBJ file: line 2 (`v 1 x 0`): position parse error",
        ),
        (
            write(dir, "nofaces.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n"),
            "no faces",
        ),
        (
            write(dir, "nan.obj", obj("").replace("v 1 1 1", "v 1 NaN 1")),
            "non-finite coordinate",
        ),
        (
            write(dir, "flat.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n"),
            "no triangle of non-zero area",
        ),
        (
            write(dir, "cube.ply", "ply\n"),
            "unknown mesh format \"ply\"",
        ),
        (dir.join("missing.stl"), "cannot read the mesh file"),
    ];
    for (path, want) in cases {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let e = match read_mesh(&path) {
            Ok((m, _)) => panic!(
                "{name}: read {} triangles, expected an error ({want})",
                m.triangles.len()
            ),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(&name) && e.contains(want), "{name}: {e}");
    }
}
