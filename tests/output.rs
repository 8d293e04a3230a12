//! Tests of the output files: VTK `.vtu`/`.pvd`, CSV, `summary.json`.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use glam::{DQuat, DVec3};
use repose::bodies::{Bodies, SphereInit};
use repose::output::csv::{
    read_final_csv, read_final_csv_full, read_track_csv, write_final_csv, TrackWriter,
    FINAL_CSV_HEADER, FINAL_CSV_HEADER_V1, FINAL_CSV_HEADER_V2, TRACK_CSV_HEADER,
};
use repose::output::summary::{read_summary, write_json, ContactStats, SolverStats, Summary};
use repose::output::vtk::{write_surfaces_vtu, write_vtu, PvdSeries};
use repose::output::ReadError;

/// A few bodies with awkward numbers (non-terminating binary fractions,
/// tiny, huge, negative zero, subnormal) and non-trivial orientations.
fn sample_bodies(n: usize) -> Bodies {
    let awkward = [
        0.1 + 0.2,
        -1e-300,
        1.0 / 3.0,
        -0.0,
        1e300,
        f64::MIN_POSITIVE / 8.0,
        std::f64::consts::PI,
        -123456.789,
    ];
    let a = |k: usize| awkward[k % awkward.len()] * (1.0 + k as f64 * 1e-3);
    let mut b = Bodies::default();
    for i in 0..n {
        let k = 11 * i;
        b.push(&SphereInit {
            pos: DVec3::new(a(k), a(k + 1), a(k + 2)),
            radius: 0.01 + i as f64 * 1e-4 / 3.0,
            mass: 1.0 + i as f64,
            inertia: 0.1,
            vel: DVec3::new(a(k + 3), a(k + 4), a(k + 5)),
            omega: DVec3::new(a(k + 6), a(k + 7), a(k + 8)),
            material: (i % 3) as u32,
        });
        b.rot[i] = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 0.3 * i as f64);
    }
    b
}

// ---------------------------------------------------------------- XML helpers

/// Checks that `text` is well-formed XML as far as these files need: one
/// declaration, properly nested and closed elements with quoted attributes,
/// no stray `<`/`&` in text, a single root. Returns the root's name.
fn check_well_formed(text: &str) -> String {
    let mut stack: Vec<String> = Vec::new();
    let mut root = None;
    let mut rest = text.trim_start();
    assert!(rest.starts_with("<?xml"), "missing XML declaration");
    rest = &rest[rest.find("?>").expect("unterminated declaration") + 2..];
    while let Some(lt) = rest.find('<') {
        let text_part = &rest[..lt];
        assert!(!text_part.contains('&'), "stray & in text");
        if stack.is_empty() {
            assert!(text_part.trim().is_empty(), "text outside the root element");
        }
        let gt = rest[lt..].find('>').expect("unterminated tag") + lt;
        let tag = &rest[lt + 1..gt];
        assert!(!tag.contains('<'), "'<' inside tag {tag:?}");
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().expect("closing tag without opening");
            assert_eq!(open, name.trim(), "mismatched closing tag");
        } else {
            let self_closing = tag.ends_with('/');
            let body = tag.trim_end_matches('/');
            let name = body
                .split_whitespace()
                .next()
                .expect("empty tag")
                .to_owned();
            check_attributes(body[name.len()..].trim());
            if stack.is_empty() {
                assert!(root.is_none(), "second root element {name}");
                root = Some(name.clone());
            }
            if !self_closing {
                stack.push(name);
            }
        }
        rest = &rest[gt + 1..];
    }
    assert!(rest.trim().is_empty(), "text after the root element");
    assert!(stack.is_empty(), "unclosed elements {stack:?}");
    root.expect("no root element")
}

/// Checks `name="value"` pairs, each name once.
fn check_attributes(mut s: &str) {
    let mut seen = Vec::new();
    while !s.is_empty() {
        let eq = s
            .find('=')
            .unwrap_or_else(|| panic!("attribute without value: {s:?}"));
        let name = s[..eq].trim();
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "bad attribute name {name:?}"
        );
        assert!(!seen.contains(&name), "attribute {name} twice");
        seen.push(name);
        let after = &s[eq + 1..];
        assert!(after.starts_with('"'), "unquoted attribute {name}");
        let close = after[1..].find('"').expect("unterminated attribute") + 1;
        s = after[close + 1..].trim_start();
    }
}

/// The value of attribute `attr` of the first element `<elem …>`.
fn attribute(text: &str, elem: &str, attr: &str) -> String {
    let start = text
        .find(&format!("<{elem} "))
        .unwrap_or_else(|| panic!("no <{elem}>"));
    let tag = &text[start..start + text[start..].find('>').unwrap()];
    let key = format!(" {attr}=\"");
    let a = tag
        .find(&key)
        .unwrap_or_else(|| panic!("no {attr} in {tag}"))
        + key.len();
    tag[a..a + tag[a..].find('"').unwrap()].to_owned()
}

/// The opening tag and the text content of the `DataArray` named `name`.
fn data_array<'a>(text: &'a str, name: &str) -> (&'a str, &'a str) {
    let key = format!("Name=\"{name}\"");
    let at = text
        .find(&key)
        .unwrap_or_else(|| panic!("no DataArray {name}"));
    let start = text[..at].rfind('<').unwrap();
    let open_end = at + text[at..].find('>').unwrap();
    let close = open_end + text[open_end..].find("</DataArray>").unwrap();
    (&text[start..=open_end], &text[open_end + 1..close])
}

/// Base64 decoder (RFC 4648, padded), independent of the writer's encoder.
fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a') as u32 + 26,
            b'0'..=b'9' => (c - b'0') as u32 + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("bad base64 character {:?}", c as char),
        }
    };
    let s = s.trim().as_bytes();
    assert_eq!(s.len() % 4, 0, "base64 length not a multiple of 4");
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    for quad in s.chunks(4) {
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        let mut n = 0u32;
        for &c in &quad[..4 - pad] {
            n = (n << 6) | val(c);
        }
        n <<= 6 * pad as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    out
}

#[test]
fn base64_test_decoder_matches_rfc4648_vectors() {
    for (plain, coded) in [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ] {
        assert_eq!(base64_decode(coded), plain.as_bytes());
    }
}

/// Decodes an inline binary array: checks the UInt64 byte-count header and
/// returns the payload.
fn payload(text: &str, name: &str) -> Vec<u8> {
    let (tag, content) = data_array(text, name);
    assert!(tag.contains("format=\"binary\""), "{tag}");
    let raw = base64_decode(content);
    assert!(raw.len() >= 8);
    let count = u64::from_le_bytes(raw[..8].try_into().unwrap()) as usize;
    assert_eq!(count, raw.len() - 8, "byte-count header of {name}");
    raw[8..].to_vec()
}

fn f64s(bytes: &[u8]) -> Vec<f64> {
    assert_eq!(bytes.len() % 8, 0);
    bytes
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn i64s(bytes: &[u8]) -> Vec<i64> {
    bytes
        .chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

// ----------------------------------------------------------------------- VTU

#[test]
fn vtu_is_well_formed_xml_with_one_point_and_one_vertex_cell_per_body() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.vtu");
    let bodies = sample_bodies(7);
    write_vtu(&path, &bodies, 0.25).unwrap();
    let text = read(&path);
    assert_eq!(check_well_formed(&text), "VTKFile");
    assert_eq!(attribute(&text, "VTKFile", "type"), "UnstructuredGrid");
    assert_eq!(attribute(&text, "VTKFile", "header_type"), "UInt64");
    assert_eq!(attribute(&text, "VTKFile", "byte_order"), "LittleEndian");
    assert_eq!(attribute(&text, "Piece", "NumberOfPoints"), "7");
    assert_eq!(attribute(&text, "Piece", "NumberOfCells"), "7");
    assert_eq!(
        i64s(&payload(&text, "connectivity")),
        (0..7).collect::<Vec<_>>()
    );
    assert_eq!(
        i64s(&payload(&text, "offsets")),
        (1..=7).collect::<Vec<_>>()
    );
    assert_eq!(payload(&text, "types"), vec![1u8; 7], "VTK_VERTEX = 1");
    assert_eq!(data_array(&text, "TimeValue").1, "0.25");
    assert!(!dir.path().join("f.vtu.tmp").exists());
}

/// The surfaces of bodies that are not spheres: a box turned and placed
/// gives its 8 corners at pos + q·corner and 12 triangles, each cell
/// carrying the box's id and velocity; the sphere beside it gives nothing
/// (it is a point of the frames).
#[test]
fn surfaces_vtu_places_each_shapes_triangles_where_the_body_is() {
    use repose::bodies::BodyInit;
    use repose::shape::Shape;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.vtu");
    let mut bodies = Bodies::default();
    bodies.push(&SphereInit {
        pos: DVec3::ZERO,
        radius: 0.1,
        mass: 1.0,
        inertia: 0.004,
        vel: DVec3::ZERO,
        omega: DVec3::ZERO,
        material: 0,
    });
    let (pos, q, e) = (
        DVec3::new(1.0, 2.0, 3.0),
        DQuat::from_rotation_z(0.3) * DQuat::from_rotation_x(0.2),
        DVec3::new(0.5, 0.25, 0.125),
    );
    bodies.push_body(&BodyInit {
        shape: Shape::Box { half_extents: e },
        pos,
        rot: q,
        vel: DVec3::new(0.0, 0.0, -2.0),
        omega: DVec3::ZERO,
        mass: 1.0,
        principal: DVec3::ONE,
        material: 3,
    });
    write_surfaces_vtu(&path, &bodies, 0.5).unwrap();
    let text = read(&path);
    assert_eq!(check_well_formed(&text), "VTKFile");
    assert_eq!(attribute(&text, "Piece", "NumberOfPoints"), "8");
    assert_eq!(attribute(&text, "Piece", "NumberOfCells"), "12");
    let points = f64s(&payload(&text, "position"));
    for c in points.chunks(3) {
        let local = q.inverse() * (DVec3::new(c[0], c[1], c[2]) - pos);
        assert!(
            (local.abs() - e).abs().max_element() < 1e-12,
            "vertex {c:?} is not a corner of the box (body frame {local})"
        );
    }
    let conn = i64s(&payload(&text, "connectivity"));
    assert_eq!(conn.len(), 36);
    assert!(conn.iter().all(|&k| (0..8).contains(&k)), "{conn:?}");
    assert_eq!(
        i64s(&payload(&text, "offsets")),
        (1..=12).map(|c| 3 * c).collect::<Vec<_>>()
    );
    assert_eq!(payload(&text, "types"), vec![5u8; 12], "VTK_TRIANGLE = 5");
    assert_eq!(i32s(&payload(&text, "id")), vec![1; 12]);
    assert_eq!(i32s(&payload(&text, "material")), vec![3; 12]);
    assert_eq!(f64s(&payload(&text, "speed")), vec![2.0; 12]);
    assert_eq!(data_array(&text, "TimeValue").1, "0.5");
}

#[test]
fn vtu_positions_decode_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.vtu");
    let bodies = sample_bodies(1001); // payload spans several encoder blocks
    write_vtu(&path, &bodies, 1.0).unwrap();
    let text = read(&path);
    let (tag, _) = data_array(&text, "position");
    assert!(tag.contains("type=\"Float64\"") && tag.contains("NumberOfComponents=\"3\""));
    let want: Vec<f64> = bodies.pos.iter().flat_map(|p| p.to_array()).collect();
    assert_eq!(bits(&f64s(&payload(&text, "position"))), bits(&want));
}

#[test]
fn vtu_point_data_arrays_decode_to_the_body_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.vtu");
    let bodies = sample_bodies(10);
    write_vtu(&path, &bodies, 1.0).unwrap();
    let text = read(&path);
    let n = bodies.len();

    assert_eq!(
        i32s(&payload(&text, "id")),
        (0..n as i32).collect::<Vec<_>>()
    );
    assert_eq!(bits(&f64s(&payload(&text, "radius"))), bits(&bodies.radius));
    let vel: Vec<f64> = bodies.vel.iter().flat_map(|v| v.to_array()).collect();
    assert_eq!(bits(&f64s(&payload(&text, "velocity"))), bits(&vel));
    let omega: Vec<f64> = bodies.omega.iter().flat_map(|v| v.to_array()).collect();
    assert_eq!(
        bits(&f64s(&payload(&text, "angular_velocity"))),
        bits(&omega)
    );
    let speed: Vec<f64> = bodies.vel.iter().map(|v| v.length()).collect();
    assert_eq!(bits(&f64s(&payload(&text, "speed"))), bits(&speed));
    let mat: Vec<i32> = bodies.material.iter().map(|&m| m as i32).collect();
    assert_eq!(i32s(&payload(&text, "material")), mat);
    let quat: Vec<f64> = bodies
        .rot
        .iter()
        .flat_map(|q| [q.w, q.x, q.y, q.z])
        .collect();
    assert_eq!(bits(&f64s(&payload(&text, "orientation"))), bits(&quat));

    for (name, ty, comps) in [
        ("id", "Int32", 1),
        ("radius", "Float64", 1),
        ("velocity", "Float64", 3),
        ("angular_velocity", "Float64", 3),
        ("speed", "Float64", 1),
        ("material", "Int32", 1),
        ("orientation", "Float64", 4),
    ] {
        let (tag, _) = data_array(&text, name);
        assert!(tag.contains(&format!("type=\"{ty}\"")), "{tag}");
        if comps > 1 {
            assert!(
                tag.contains(&format!("NumberOfComponents=\"{comps}\"")),
                "{tag}"
            );
        } else {
            assert!(!tag.contains("NumberOfComponents"), "{tag}");
        }
    }
    let (otag, _) = data_array(&text, "orientation");
    assert!(otag.contains("ComponentName0=\"w\"") && otag.contains("ComponentName3=\"z\""));
}

#[test]
fn vtu_with_no_bodies_is_still_valid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.vtu");
    write_vtu(&path, &Bodies::default(), 0.0).unwrap();
    let text = read(&path);
    check_well_formed(&text);
    assert_eq!(attribute(&text, "Piece", "NumberOfPoints"), "0");
    assert!(payload(&text, "position").is_empty());
}

#[test]
fn vtu_rejects_inconsistent_bodies_and_nan_time_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.vtu");
    let mut bodies = sample_bodies(3);
    let err = write_vtu(&path, &bodies, f64::NAN).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    bodies.radius.pop();
    let err = write_vtu(&path, &bodies, 0.0).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("radius"), "{err}");
    assert!(!path.exists());
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0, "no tmp left");
}

// ----------------------------------------------------------------------- PVD

/// (timestep, file) of every DataSet of a `.pvd`, in file order.
fn pvd_entries(text: &str) -> Vec<(f64, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(p) = rest.find("<DataSet ") {
        let end = p + rest[p..].find("/>").unwrap();
        let tag = &rest[p..end + 2];
        out.push((
            attribute(tag, "DataSet", "timestep").parse().unwrap(),
            attribute(tag, "DataSet", "file"),
        ));
        rest = &rest[end..];
    }
    out
}

#[test]
fn pvd_is_valid_before_the_first_frame() {
    let dir = tempfile::tempdir().unwrap();
    let series = PvdSeries::new(dir.path().join("out/frames"), "pile").unwrap();
    assert_eq!(series.pvd_path(), dir.path().join("out/frames/pile.pvd"));
    let text = read(&series.pvd_path());
    assert_eq!(check_well_formed(&text), "VTKFile");
    assert_eq!(attribute(&text, "VTKFile", "type"), "Collection");
    assert!(pvd_entries(&text).is_empty());
    assert!(series.is_empty());
}

#[test]
fn pvd_lists_every_frame_with_its_time_in_order_after_each_frame() {
    let dir = tempfile::tempdir().unwrap();
    let mut series = PvdSeries::new(dir.path(), "run").unwrap();
    let times = [0.0, 0.001, 0.1 + 0.2, 1.5, 2.0];
    let mut bodies = sample_bodies(4);
    for (k, &t) in times.iter().enumerate() {
        bodies.pos[0].x = t;
        let frame = series.add_frame(&bodies, t).unwrap();
        assert_eq!(frame, dir.path().join(format!("frame_{k:05}.vtu")));
        // The frame itself is complete and carries its time.
        let ftext = read(&frame);
        check_well_formed(&ftext);
        assert_eq!(f64s(&payload(&ftext, "position"))[0], t);
        assert_eq!(data_array(&ftext, "TimeValue").1.parse::<f64>().unwrap(), t);
        // The collection is valid now and lists exactly the frames so far.
        let text = read(&series.pvd_path());
        check_well_formed(&text);
        let entries = pvd_entries(&text);
        assert_eq!(entries.len(), k + 1);
        for (j, (tj, file)) in entries.iter().enumerate() {
            assert_eq!(tj.to_bits(), times[j].to_bits(), "time of frame {j}");
            assert_eq!(file, &format!("frame_{j:05}.vtu"));
            assert!(dir.path().join(file).exists());
        }
        assert_eq!(series.len(), k + 1);
        assert_eq!(series.frames().len(), k + 1);
    }
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn pvd_rejects_a_time_not_after_the_last_and_keeps_the_series() {
    let dir = tempfile::tempdir().unwrap();
    let mut series = PvdSeries::new(dir.path(), "run").unwrap();
    let bodies = sample_bodies(2);
    series.add_frame(&bodies, 1.0).unwrap();
    let before = read(&series.pvd_path());
    for bad in [1.0, 0.5, f64::NAN, f64::INFINITY] {
        let err = series.add_frame(&bodies, bad).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{bad}");
    }
    assert_eq!(read(&series.pvd_path()), before);
    assert!(!dir.path().join("frame_00001.vtu").exists());
    series.add_frame(&bodies, 2.0).unwrap();
    assert_eq!(pvd_entries(&read(&series.pvd_path())).len(), 2);
}

#[test]
fn pvd_keeps_listing_written_frames_when_a_frame_fails() {
    let dir = tempfile::tempdir().unwrap();
    let mut series = PvdSeries::new(dir.path(), "run").unwrap();
    let good = sample_bodies(3);
    series.add_frame(&good, 0.0).unwrap();
    let mut bad = good.clone();
    bad.vel.pop();
    assert!(series.add_frame(&bad, 1.0).is_err());
    let entries = pvd_entries(&read(&series.pvd_path()));
    assert_eq!(entries, vec![(0.0, "frame_00000.vtu".to_owned())]);
    // The next good frame takes the next free number.
    let p = series.add_frame(&good, 1.0).unwrap();
    assert!(p.ends_with("frame_00001.vtu"));
}

#[test]
fn pvd_series_rejects_a_basename_with_a_path_separator() {
    let dir = tempfile::tempdir().unwrap();
    assert!(PvdSeries::new(dir.path(), "a/b").is_err());
    assert!(PvdSeries::new(dir.path(), "").is_err());
}

// ----------------------------------------------------------------------- CSV

#[test]
fn final_csv_round_trips_bit_exactly_through_read_final_csv() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("final.csv");
    let bodies = sample_bodies(20);
    write_final_csv(&path, &bodies).unwrap();
    let rows = read_final_csv(&path).unwrap();
    assert_eq!(rows.len(), bodies.len());
    for (i, row) in rows.iter().enumerate() {
        let (p, v, w) = (bodies.pos[i], bodies.vel[i], bodies.omega[i]);
        let want = [
            i as f64,
            p.x,
            p.y,
            p.z,
            v.x,
            v.y,
            v.z,
            w.x,
            w.y,
            w.z,
            bodies.radius[i],
        ];
        assert_eq!(bits(row), bits(&want), "row {i}");
    }
    // The orientation and the shape, bit-exact too.
    for (i, row) in read_final_csv_full(&path).unwrap().iter().enumerate() {
        let q = bodies.rot[i];
        assert_eq!(
            bits(&row.orientation),
            bits(&[q.w, q.x, q.y, q.z]),
            "row {i}"
        );
        assert_eq!(row.shape, "sphere");
    }
}

/// Tiny and huge numbers are written with an exponent, short, and still
/// read back bit for bit: a sphere at rest keeps velocities like 10⁻²¹⁰ m/s,
/// which plain decimals would spell with two hundred zeros.
#[test]
fn final_csv_writes_tiny_and_huge_numbers_short_and_exact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("final.csv");
    let mut bodies = sample_bodies(1);
    let values = [7.413743062228425e-210, -3.0e-6, 2.5e17, 1.0e-5, 0.0];
    bodies.vel[0] = DVec3::new(values[0], values[1], values[2]);
    bodies.omega[0] = DVec3::new(values[3], values[4], -values[0]);
    write_final_csv(&path, &bodies).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let longest = text.lines().flat_map(|l| l.split(',')).map(str::len).max();
    assert!(
        longest.is_some_and(|n| n <= 25),
        "a field of {longest:?} characters in:\n{text}"
    );
    assert!(text.contains(",7.413743062228425e-210,"), "{text}");
    let row = read_final_csv(&path).unwrap()[0];
    assert_eq!(
        bits(&row[4..10]),
        bits(&[values[0], values[1], values[2], values[3], values[4], -values[0]])
    );
}

/// A body that is not a sphere is named by its shape's kind.
#[test]
fn final_csv_names_each_bodys_shape() {
    use repose::bodies::BodyInit;
    use repose::shape::Shape;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("final.csv");
    let mut bodies = sample_bodies(2);
    bodies.push_body(&BodyInit {
        shape: Shape::Ellipsoid {
            radii: DVec3::new(0.3, 0.2, 0.1),
        },
        pos: DVec3::ONE,
        rot: DQuat::from_rotation_y(0.5),
        vel: DVec3::ZERO,
        omega: DVec3::ZERO,
        mass: 1.0,
        principal: DVec3::new(0.1, 0.2, 0.3),
        material: 0,
    });
    write_final_csv(&path, &bodies).unwrap();
    let rows = read_final_csv_full(&path).unwrap();
    let shapes: Vec<&str> = rows.iter().map(|r| r.shape.as_str()).collect();
    assert_eq!(shapes, ["sphere", "sphere", "ellipsoid"]);
    let q = bodies.rot[2];
    assert_eq!(bits(&rows[2].orientation), bits(&[q.w, q.x, q.y, q.z]));
    assert_eq!(rows[2].state[10], 0.3, "the bounding radius");
}

/// Files of the earlier format (eleven columns) are still read: spheres,
/// identity orientations.
#[test]
fn final_csv_of_the_earlier_format_is_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.csv");
    fs::write(
        &path,
        format!("{FINAL_CSV_HEADER_V1}\n0,1,2,3,4,5,6,7,8,9,10\n1,1,2,3,4,5,6,7,8,9,0.5\n"),
    )
    .unwrap();
    let rows = read_final_csv_full(&path).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].state[10], 0.5);
    assert_eq!(rows[1].orientation, [1.0, 0.0, 0.0, 0.0]);
    assert_eq!(rows[1].shape, "sphere");
}

#[test]
fn final_csv_has_the_header_and_one_row_per_body() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("final.csv");
    write_final_csv(&path, &sample_bodies(5)).unwrap();
    let text = read(&path);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "id,x,y,z,vx,vy,vz,wx,wy,wz,radius,qw,qx,qy,qz,shape,material"
    );
    assert_eq!(lines[0], FINAL_CSV_HEADER);
    assert_eq!(lines.len(), 6);
    assert!(lines[1].starts_with("0,"));
    assert!(lines[5].starts_with("4,"));
    assert!(lines[1..].iter().all(|l| l.split(',').count() == 17));
    for (i, l) in lines[1..].iter().enumerate() {
        assert!(l.ends_with(&format!(",sphere,{}", i % 3)), "row {i}: {l}");
    }
    let back = repose::output::csv::read_final_csv_full(&path).unwrap();
    assert!(back
        .iter()
        .enumerate()
        .all(|(i, r)| r.material == Some((i % 3) as u32)));
    assert!(text.ends_with('\n'));
}

#[test]
fn final_csv_is_byte_identical_for_identical_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    write_final_csv(&a, &sample_bodies(9)).unwrap();
    write_final_csv(&b, &sample_bodies(9)).unwrap();
    assert_eq!(fs::read(&a).unwrap(), fs::read(&b).unwrap());
}

#[test]
fn read_final_csv_errors_name_the_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.csv");
    for header in [FINAL_CSV_HEADER_V1, FINAL_CSV_HEADER_V2, FINAL_CSV_HEADER] {
        let tail = match header {
            FINAL_CSV_HEADER => ",1,0,0,0,box,0",
            FINAL_CSV_HEADER_V2 => ",1,0,0,0,box",
            _ => "",
        };
        fs::write(
            &path,
            format!("{header}\n0,1,2,3,4,5,6,7,8,9,10{tail}\n1,1,x,3,4,5,6,7,8,9,10{tail}\n"),
        )
        .unwrap();
        let err = read_final_csv(&path).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("broken.csv:3") && msg.contains("`y`"), "{msg}");
        assert!(matches!(err, ReadError::Format { line: 3, .. }));
    }
    // The current format's own columns: a quaternion component that is not
    // a number, a shape nobody knows.
    fs::write(
        &path,
        format!("{FINAL_CSV_HEADER}\n0,1,2,3,4,5,6,7,8,9,10,1,0,zero,0,box,0\n"),
    )
    .unwrap();
    let msg = read_final_csv(&path).unwrap_err().to_string();
    assert!(
        msg.contains("broken.csv:2") && msg.contains("`qy`"),
        "{msg}"
    );
    fs::write(
        &path,
        format!("{FINAL_CSV_HEADER}\n0,1,2,3,4,5,6,7,8,9,10,1,0,0,0,blob,0\n"),
    )
    .unwrap();
    let msg = read_final_csv(&path).unwrap_err().to_string();
    assert!(msg.contains("`shape`") && msg.contains("\"blob\""), "{msg}");

    fs::write(&path, format!("{FINAL_CSV_HEADER}\n0,1,2\n")).unwrap();
    assert!(matches!(
        read_final_csv(&path),
        Err(ReadError::Format { line: 2, .. })
    ));
    fs::write(
        &path,
        format!("{FINAL_CSV_HEADER}\n0,1,2,3,4,5,6,7,8,9,10,11,1,0,0,0,box\n"),
    )
    .unwrap();
    assert!(matches!(
        read_final_csv(&path),
        Err(ReadError::Format { line: 2, .. })
    ));
    fs::write(&path, "a,b\n").unwrap();
    assert!(matches!(
        read_final_csv(&path),
        Err(ReadError::Format { line: 1, .. })
    ));
    assert!(matches!(
        read_final_csv(dir.path().join("missing.csv")),
        Err(ReadError::Io { .. })
    ));
}

#[test]
fn track_csv_has_one_row_per_tracked_body_per_recorded_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("track.csv");
    let mut bodies = sample_bodies(6);
    let ids = [4usize, 1];
    let times = [0.0, 0.5, 1.0 / 3.0 + 1.0];
    let mut w = TrackWriter::create(&path, &ids).unwrap();
    assert_eq!(w.ids(), &ids);
    let mut want = Vec::new();
    for &t in &times {
        for &id in &ids {
            let (p, v, o) = (bodies.pos[id], bodies.vel[id], bodies.omega[id]);
            want.push([t, id as f64, p.x, p.y, p.z, v.x, v.y, v.z, o.x, o.y, o.z]);
        }
        w.record(t, &bodies).unwrap();
        for p in &mut bodies.pos {
            *p += DVec3::new(0.1, 0.0, -0.2);
        }
    }
    w.finish().unwrap();
    let text = read(&path);
    assert_eq!(text.lines().next().unwrap(), TRACK_CSV_HEADER);
    assert_eq!(TRACK_CSV_HEADER, "time,id,x,y,z,vx,vy,vz,wx,wy,wz");
    let rows = read_track_csv(&path).unwrap();
    assert_eq!(rows.len(), times.len() * ids.len());
    for (row, want) in rows.iter().zip(&want) {
        assert_eq!(bits(row), bits(want));
    }
}

#[test]
fn track_csv_skips_ids_that_do_not_exist_yet() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("track.csv");
    let mut w = TrackWriter::create(&path, &[0, 5]).unwrap();
    w.record(0.0, &sample_bodies(2)).unwrap();
    w.record(1.0, &sample_bodies(6)).unwrap();
    w.finish().unwrap();
    let ids: Vec<(f64, f64)> = read_track_csv(&path)
        .unwrap()
        .iter()
        .map(|r| (r[0], r[1]))
        .collect();
    assert_eq!(ids, vec![(0.0, 0.0), (1.0, 0.0), (1.0, 5.0)]);
}

#[test]
fn track_writer_flushes_its_rows_on_drop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("track.csv");
    {
        let mut w = TrackWriter::create(&path, &[0]).unwrap();
        w.record(0.0, &sample_bodies(1)).unwrap();
        w.record(1.0, &sample_bodies(1)).unwrap();
    }
    assert_eq!(read_track_csv(&path).unwrap().len(), 2);
}

// ------------------------------------------------------------------- summary

fn sample_summary() -> Summary {
    let mut s = Summary::new("pile", "scenes/pile.ron", "cpu");
    s.steps = 3;
    s.simulated_time = 0.003;
    s.wall_time_s = 1.25;
    s.add_stage_seconds("broadphase", 0.1);
    s.add_stage_seconds("solve", 0.5);
    s.add_stage_seconds("broadphase", 0.2);
    for (c, it, ra, rr, conv) in [
        (10, 50, 1e-3, 1e-2, true),
        (20, 80, 2e-4, 5e-2, false),
        (15, 20, 1e-5, 1e-4, true),
    ] {
        s.contacts.record(c);
        s.solver.record(it, ra, rr, conv);
    }
    s.kinetic_energy_final = 0.125;
    s.bodies = 42;
    s.extra
        .insert("angle_of_repose_deg".into(), serde_json::json!(27.5));
    s
}

#[test]
fn summary_json_parses_back_with_serde_json_and_holds_the_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("summary.json");
    let s = sample_summary();
    write_json(&path, &s).unwrap();
    let text = read(&path);
    assert!(
        text.contains("\n  \"scene\": \"pile\""),
        "pretty-printed:\n{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["scene"], "pile");
    assert_eq!(v["scene_file"], "scenes/pile.ron");
    assert_eq!(v["backend"], "cpu");
    assert_eq!(v["steps"], 3);
    assert_eq!(v["simulated_time"], 0.003);
    assert_eq!(v["wall_time_s"], 1.25);
    assert_eq!(
        v["stage_seconds"]["broadphase"].as_f64().unwrap(),
        0.1 + 0.2
    );
    assert_eq!(v["stage_seconds"]["solve"], 0.5);
    assert_eq!(v["contacts"]["min"], 10);
    assert_eq!(v["contacts"]["mean"], 15.0);
    assert_eq!(v["contacts"]["max"], 20);
    assert_eq!(v["solver"]["iterations_total"], 150);
    assert_eq!(v["solver"]["iterations_mean"], 50.0);
    assert_eq!(v["solver"]["residual_abs_final"], 1e-5);
    assert_eq!(v["solver"]["residual_rel_final"], 1e-4);
    assert_eq!(v["solver"]["residual_rel_max"], 5e-2);
    assert_eq!(v["solver"]["steps_not_converged"], 1);
    assert_eq!(v["kinetic_energy_final"], 0.125);
    assert_eq!(v["bodies"], 42);
    assert_eq!(v["repose_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["extra"]["angle_of_repose_deg"], 27.5);

    let back = read_summary(&path).unwrap();
    assert_eq!(back, s);
    let expected: BTreeMap<String, f64> = [
        ("broadphase".to_owned(), 0.1 + 0.2),
        ("solve".to_owned(), 0.5),
    ]
    .into();
    assert_eq!(back.stage_seconds, expected);
}

#[test]
fn summary_json_writes_undefined_numbers_as_null_and_reads_them_as_nan() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("summary.json");
    let mut s = Summary::new("empty", "e.ron", "gpu");
    s.kinetic_energy_final = f64::INFINITY;
    write_json(&path, &s).unwrap();
    let v: serde_json::Value = serde_json::from_str(&read(&path)).unwrap();
    assert!(v["solver"]["residual_abs_final"].is_null());
    assert!(v["solver"]["residual_rel_max"].is_null());
    assert!(v["kinetic_energy_final"].is_null());
    let back = read_summary(&path).unwrap();
    assert!(back.solver.residual_rel_final.is_nan());
    assert!(back.kinetic_energy_final.is_nan());
    assert_eq!(back.contacts, ContactStats::default());
}

#[test]
fn solver_stats_max_residual_propagates_nan() {
    let mut st = SolverStats::default();
    st.record(5, 1.0, 0.1, true);
    st.record(5, f64::NAN, f64::NAN, false);
    st.record(5, 1.0, 0.5, true);
    assert!(st.residual_rel_max.is_nan());
    assert_eq!(st.residual_rel_final, 0.5);
    assert_eq!(st.steps_not_converged, 1);
}

#[test]
fn read_summary_reports_the_file_and_line_of_bad_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("summary.json");
    fs::write(&path, "{\n  \"scene\": 3\n}\n").unwrap();
    let err = read_summary(&path).unwrap_err();
    assert!(matches!(err, ReadError::Format { line: 2, .. }), "{err}");
    assert!(err.to_string().contains("summary.json:2"), "{err}");
}
