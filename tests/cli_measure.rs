//! `repose measure` and `repose compare` end to end on saved output: the
//! angle of a saved heap found and recorded in its summary, and input they
//! cannot judge (a missing or malformed file, too few spheres, NaN rows,
//! bad radii or tolerances) refused as one clear error naming it.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

#[path = "common/cli.rs"]
mod cli;
mod common;

use cli::*;

use glam::DVec2;
use repose::bodies::{Bodies, SphereInit};
use repose::output::csv::write_final_csv;
use repose::output::summary::{write_json, Summary};

/// A directory holding a synthetic 30° cone (apex 0.2 m, floor at
/// z = 0.5) as `final.csv` and a `summary.json` that records the floor and
/// one field of its own, as a run would leave them.
fn saved_cone_run(dir: &Path) {
    let (p, _) = common::cone(30.0, 0.2, DVec2::ZERO);
    let r = common::R;
    let inits: Vec<SphereInit> = p
        .iter()
        .map(|q| SphereInit {
            pos: *q + glam::DVec3::Z * 0.5,
            radius: r,
            mass: 1e-3,
            inertia: 4e-8,
            vel: glam::DVec3::ZERO,
            omega: glam::DVec3::ZERO,
            material: 0,
        })
        .collect();
    fs::create_dir_all(dir).unwrap();
    write_final_csv(dir.join("final.csv"), &Bodies::from_inits(&inits)).unwrap();
    let mut s = Summary::new("cone", "cone.ron", "cpu");
    s.extra.insert("floor_z".into(), 0.5.into());
    s.extra.insert("note".into(), "kept".into());
    write_json(dir.join("summary.json"), &s).unwrap();
}

#[test]
fn measure_finds_the_angle_of_a_saved_cone_and_records_it_in_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cone");
    saved_cone_run(&dir);
    let out = repose([OsStr::new("measure"), dir.as_os_str(), OsStr::new("--json")]);
    assert_success(&out, "repose measure --json");
    let printed: serde_json::Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", show(&out)));
    let angle = printed["angle_deg"].as_f64().unwrap();
    assert!(
        (angle - 30.0).abs() <= 1.0,
        "measured {angle}°, true 30°\n{}",
        show(&out)
    );
    assert_eq!(
        printed["floor_z"].as_f64(),
        Some(0.5),
        "floor from summary.json"
    );
    let s = summary_of(&dir);
    assert_eq!(
        s.extra["angle_of_repose"], printed,
        "summary.json records what was printed"
    );
    assert_eq!(s.extra["note"], "kept", "other summary fields are kept");
    assert_eq!(s.scene, "cone");
    assert!(
        !dir.join("summary.json.tmp").exists(),
        "no temporary file left"
    );

    // The readable report, and --method overriding the recorded method.
    let out = repose([
        OsStr::new("measure"),
        dir.as_os_str(),
        OsStr::new("--method"),
        OsStr::new("x"),
    ]);
    assert_success(&out, "repose measure --method x");
    let text = stdout(&out);
    for p in [
        "angle of repose:",
        "(planar-x method)",
        "left",
        "right",
        "base radius:",
        "floor z = 0.5",
    ] {
        assert!(text.contains(p), "expected {p:?} in the report:\n{text}");
    }
    let s = summary_of(&dir);
    assert_eq!(s.extra["angle_of_repose"]["method"]["Planar"]["axis"], "X");
}

#[test]
fn measure_without_or_with_a_malformed_input_file_is_one_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cone");
    saved_cone_run(&dir);

    fs::write(dir.join("summary.json"), "{ \"scene\": ").unwrap();
    let out = repose([OsStr::new("measure"), dir.as_os_str()]);
    assert_one_error(&out, &["summary.json", "not valid JSON"]);

    fs::remove_file(dir.join("summary.json")).unwrap();
    let out = repose([OsStr::new("measure"), dir.as_os_str()]);
    assert_one_error(&out, &["summary.json", "cannot read"]);

    fs::write(
        dir.join("final.csv"),
        "id,x,y,z,vx,vy,vz,wx,wy,wz,radius\n0,1,2\n",
    )
    .unwrap();
    let out = repose([OsStr::new("measure"), dir.as_os_str()]);
    assert_one_error(&out, &["final.csv:2", "expected 11"]);

    fs::remove_file(dir.join("final.csv")).unwrap();
    let out = repose([OsStr::new("measure"), dir.as_os_str()]);
    assert_one_error(&out, &["final.csv", "No such file"]);
}

#[test]
fn measure_of_a_single_sphere_is_one_error_saying_why() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("one");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("final.csv"),
        "id,x,y,z,vx,vy,vz,wx,wy,wz,radius\n0,0,0,0.01,0,0,0,0,0,0,0.01\n",
    )
    .unwrap();
    write_json(
        dir.join("summary.json"),
        &Summary::new("one", "one.ron", "cpu"),
    )
    .unwrap();
    let out = repose([OsStr::new("measure"), dir.as_os_str()]);
    assert_one_error(&out, &["final.csv", "too few profile bins"]);
}

/// `repose compare` judges its input: a `final.csv` with NaN (a diverged
/// run) or a radius ≤ 0 is an error naming file, row and column, never an
/// "agree"; a NaN or negative `--tol` is refused.
#[test]
fn compare_rejects_non_finite_rows_bad_radii_and_bad_tolerances() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.csv");
    let header = "id,x,y,z,vx,vy,vz,wx,wy,wz,radius";
    let rows = "0,0,0,0.05,0,0,0,0,0,0,0.05\n1,0.1,0,0.05,0,0,0,0,0,0,0.05\n";
    fs::write(&good, format!("{header}\n{rows}")).unwrap();
    let nan = tmp.path().join("nan.csv");
    fs::write(
        &nan,
        format!("{header}\n0,0,0,0.05,0,0,0,0,0,0,0.05\n1,NaN,0,0.05,0,0,0,0,0,0,0.05\n"),
    )
    .unwrap();
    let neg = tmp.path().join("neg.csv");
    fs::write(
        &neg,
        format!("{header}\n0,0,0,0.05,0,0,0,0,0,0,-0.05\n1,0.1,0,0.05,0,0,0,0,0,0,0.05\n"),
    )
    .unwrap();
    // `--tol VALUE` as two arguments, as a user types it: a negative value
    // must reach the check, not be taken for an option.
    let compare = |a: &Path, b: &Path, tol: &str| {
        repose([
            OsStr::new("compare"),
            a.as_os_str(),
            b.as_os_str(),
            OsStr::new("--tol"),
            OsStr::new(tol),
        ])
    };
    assert_success(
        &compare(&good, &good, "0.5"),
        "compare of a file with itself",
    );
    assert_one_error(
        &compare(&good, &nan, "0.5"),
        &["nan.csv", "row 3", "`x`", "NaN", "finite"],
    );
    assert_one_error(
        &compare(&neg, &good, "0.5"),
        &["neg.csv", "row 2", "radius", "must be > 0"],
    );
    for tol in ["NaN", "-1"] {
        assert_one_error(&compare(&good, &good, tol), &["--tol", "finite number ≥ 0"]);
    }
}

/// A drum reports like a drum: its closing lines give the dynamic angle
/// as mean ± sd over its samples and say nothing of settling (a turning
/// bed never settles), `summary.json` has no settling record, and
/// `final.png`, looking along the drum's axis, draws its wall — a circle
/// of outline pixels around the bed.
#[test]
fn a_drum_run_ends_with_its_dynamic_angle_and_its_picture_draws_the_drum() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drum");
    let out = repose([
        OsStr::new("run"),
        cli::scene_path("drum.ron").as_os_str(),
        OsStr::new("--set"),
        OsStr::new("duration=0.1"),
        OsStr::new("--set"),
        OsStr::new("output.frame_interval=0.02"),
        OsStr::new("--no-frames"),
        OsStr::new("--out"),
        dir.as_os_str(),
    ]);
    assert_success(&out, "a short drum run");
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("dynamic angle of drum \"drum\": "))
        .unwrap_or_else(|| panic!("no dynamic-angle line in:\n{text}"));
    let s = summary_of(&dir);
    let a = &s.extra["dynamic_angle"];
    let said = format!(
        "{:.2}° ± {:.2}° (mean ± sd over {} samples",
        a["angle_deg"].as_f64().unwrap(),
        a["angle_sd_deg"].as_f64().unwrap(),
        a["samples"]
    );
    assert!(line.contains(&said), "expected {said:?} in {line:?}");
    let all = format!("{text}{}", stderr(&out));
    assert!(
        !all.contains("settled"),
        "a drum says nothing of settling:\n{all}"
    );
    assert!(
        s.extra.get("settling").is_none_or(|v| v.is_null()),
        "{:?}",
        s.extra.get("settling")
    );

    let img = repose::render::png_io::read_png(dir.join("final.png")).unwrap();
    let outline = repose::render::particles::OUTLINE;
    // The side view is the left panel (x < 500 px of 1200).
    let px: Vec<(f64, f64)> = (0..img.height() as i64)
        .flat_map(|y| (0..500).map(move |x| (x, y)))
        .filter(|&(x, y)| img.get(x, y) == Some(outline))
        .map(|(x, y)| (x as f64, y as f64))
        .collect();
    assert!(
        px.len() > 1000,
        "{} outline pixels in the side view",
        px.len()
    );
    let n = px.len() as f64;
    let (cx, cy) = px
        .iter()
        .fold((0.0, 0.0), |a, p| (a.0 + p.0 / n, a.1 + p.1 / n));
    let d: Vec<f64> = px
        .iter()
        .map(|p| ((p.0 - cx).powi(2) + (p.1 - cy).powi(2)).sqrt())
        .collect();
    let mean = d.iter().sum::<f64>() / n;
    let sd = (d.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n).sqrt();
    // A 2-pixel line drawn round a circle of ~200 px: its pixels lie within
    // about a pixel of the mean radius.
    assert!(
        mean > 100.0 && sd < 2.0,
        "outline pixels: mean radius {mean:.1} px, sd {sd:.2} px (a circle?)"
    );
}
