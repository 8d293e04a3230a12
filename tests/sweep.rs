//! Parameter sweeps (`repose sweep`, `repose merge`): the grid of runs, the
//! validation of every run before any starts, shards merged back into the
//! unsharded sweep, `sweep.csv` / `sweep.png` / `contact_sheet.png`, failing
//! runs as rows, and the command line end to end.
//!
//! All runs use a tiny scene (54 spheres of a jittered 3 × 3 × 6 column
//! collapsing on a floor, 125 steps), a fraction of a second each.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use repose::output::csv::read_final_csv;
use repose::render::read_png;
use repose::render::sheet::{sheet_size, thumbnail_size};
use repose::run::{run_scene, BackendChoice, RunOptions};
use repose::scene::{Scene, SphereSource};
use repose::sweep::{
    apply_seed, merge, prepare, read_sweep_csv, run_sweep, write_sweep_csv, Manifest, Shard,
    SweepOptions, SweepRow, SweepSpec, SWEEP_CSV_COLUMNS,
};

const BIN: &str = env!("CARGO_BIN_EXE_repose");

const TINY: &str = r#"Scene(
    version: 1,
    name: "tiny",
    time_step: 2e-3,
    duration: 0.25,
    materials: [(name: "glass", friction: 0.3, rolling: 0.0)],
    spheres: [Lattice(origin: (-0.024, -0.024, 0.012), count: (3, 3, 6), spacing: 0.024, radius: 0.01, jitter: 0.05, seed: 1)],
    boundaries: [Plane(name: "floor", point: (0, 0, 0), normal: (0, 0, 1))],
    analysis: (heap: (method: Radial, bin_width: 0.006, min_bins: 3)),
    output: (picture: (width: 400, height: 200)),
)
"#;

/// Writes the tiny scene (with `replace` substitutions) into `dir`.
fn tiny_scene(dir: &Path, name: &str, replace: &[(&str, &str)]) -> PathBuf {
    let mut text = TINY.to_string();
    for (a, b) in replace {
        assert!(text.contains(a), "the test scene has no {a:?}");
        text = text.replace(a, b);
    }
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p
}

fn spec(vary: &[&str], seeds: u64) -> SweepSpec {
    let v: Vec<String> = vary.iter().map(|s| s.to_string()).collect();
    SweepSpec::parse(&v, seeds).unwrap()
}

fn opts(out: PathBuf, shard: Shard) -> SweepOptions {
    SweepOptions {
        out_dir: out,
        jobs: 1,
        shard,
        frames: false,
        backend: BackendChoice::Cpu,
        progress: false,
        rerun: false,
        reference: None,
        batch: Some(1),
    }
}

fn repose<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(BIN)
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap_or_else(|e| panic!("cannot start {BIN}: {e}"))
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_test_scene_runs_deterministically() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = Scene::load(&tiny_scene(tmp.path(), "t.ron", &[]), &[]).unwrap();
    let mut finals = Vec::new();
    let mut angles = Vec::new();
    for k in 0..2 {
        let dir = tmp.path().join(format!("r{k}"));
        let s = run_scene(
            &scene,
            &RunOptions {
                out_dir: Some(dir.clone()),
                no_frames: true,
                backend: BackendChoice::Cpu,
                ..RunOptions::default()
            },
        )
        .unwrap();
        finals.push(fs::read(dir.join("final.csv")).unwrap());
        angles.push(s.extra["angle_of_repose"]["angle_deg"].clone());
    }
    assert_eq!(finals[0], finals[1], "final.csv of two equal runs differ");
    assert!(angles[0].is_f64(), "the test scene's heap is measured");
    assert_eq!(angles[0], angles[1]);
}

#[test]
fn grid_expands_ranges_lists_and_seeds_first_parameter_slowest() {
    let s = spec(&["materials.0.friction=0.1:0.5:5"], 1);
    assert_eq!(s.vary[0].values, ["0.1", "0.2", "0.3", "0.4", "0.5"]);
    assert_eq!(s.total_runs(), 5);
    let s = spec(&["materials.0.friction=0.5:0.1:3"], 1);
    assert_eq!(s.vary[0].values, ["0.5", "0.3", "0.1"], "descending ranges");
    let s = spec(&["solver.omega=0.7:2:1"], 1);
    assert_eq!(s.vary[0].values, ["0.7"], "n = 1 gives a");
    let s = spec(&["materials.0.rolling=0, 0.001,2e-3"], 1);
    assert_eq!(s.vary[0].values, ["0", "0.001", "2e-3"], "lists as given");
    let s = spec(&["solver.omega=0.9"], 1);
    assert_eq!(s.vary[0].values, ["0.9"], "a single value");

    let s = spec(
        &[
            "materials.0.friction=0.1,0.2",
            "materials.0.rolling=0:0.002:3",
        ],
        2,
    );
    assert_eq!(s.total_runs(), 12);
    let pts = s.points();
    let got: Vec<(String, String, u64)> = pts
        .iter()
        .map(|p| (p.values[0].clone(), p.values[1].clone(), p.seed))
        .collect();
    let mut want = Vec::new();
    for f in ["0.1", "0.2"] {
        for r in ["0", "0.001", "0.002"] {
            for seed in 0..2 {
                want.push((f.to_string(), r.to_string(), seed));
            }
        }
    }
    assert_eq!(got, want, "first parameter slowest, seed fastest");
    assert!(pts.iter().enumerate().all(|(i, p)| p.index == i));
    assert_eq!(
        s.run_dir_name(&pts[7]),
        "07_materials.0.friction=0.2_materials.0.rolling=0_seed1"
    );
    let weird = spec(&["materials[0].name=a/b c"], 1);
    assert_eq!(
        weird.run_dir_name(&weird.point(0)),
        "0_materials_0_.name=a_b_c_seed0",
        "file-system-safe names"
    );
}

#[test]
fn seeds_offset_every_seeded_source_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tiny_scene(
        tmp.path(),
        "t.ron",
        &[(
            "seed: 1)]",
            "seed: 1), RandomBox(min: (0.1, 0.1, 0.0), max: (0.2, 0.2, 0.1), count: 3, radius: 0.01, seed: 7), Sphere(pos: (-0.2, 0, 0.01), radius: 0.01)]",
        )],
    );
    let base = Scene::load(&path, &[]).unwrap();
    let s2 = apply_seed(&base, 2);
    let seeds: Vec<u64> = s2
        .spheres
        .iter()
        .filter_map(|s| match s {
            SphereSource::Lattice(l) => Some(l.seed),
            SphereSource::RandomBox(r) => Some(r.seed),
            SphereSource::Inlet(i) => Some(i.seed),
            SphereSource::Sphere(_) | SphereSource::Body(_) | SphereSource::FromFile(_) => None,
        })
        .collect();
    assert_eq!(seeds, [3, 9]);
    let mut back = s2.clone();
    for s in &mut back.spheres {
        match s {
            SphereSource::Lattice(l) => l.seed -= 2,
            SphereSource::RandomBox(r) => r.seed -= 2,
            SphereSource::Inlet(i) => i.seed -= 2,
            SphereSource::Sphere(_) | SphereSource::Body(_) | SphereSource::FromFile(_) => {}
        }
    }
    assert_eq!(back, base, "only the seeds change");
    assert_eq!(apply_seed(&base, 0), base, "offset 0 is the scene itself");

    let p = prepare(&path, spec(&["solver.omega=1"], 3)).unwrap();
    assert_eq!(p.runs.len(), 3);
    assert_ne!(
        p.runs[0].1.spheres().unwrap()[0].init.pos,
        p.runs[1].1.spheres().unwrap()[0].init.pos,
        "another seed moves the jittered spheres"
    );
}

#[test]
fn bad_specs_are_clear_errors() {
    let bad = |vary: &[&str], seeds: u64| {
        let v: Vec<String> = vary.iter().map(|s| s.to_string()).collect();
        SweepSpec::parse(&v, seeds).unwrap_err().to_string()
    };
    let e = bad(&["materials.0.friction=0.1:0.5"], 1);
    assert!(
        e.contains("start:end:count") && e.contains("2 parts"),
        "{e}"
    );
    let e = bad(&["materials.0.friction=x:1:3"], 1);
    assert!(e.contains("start \"x\" is not a finite number"), "{e}");
    let e = bad(&["materials.0.friction=0:1:0"], 1);
    assert!(e.contains("count must be at least 1"), "{e}");
    let e = bad(&["materials.0.friction=0:1:2.5"], 1);
    assert!(e.contains("not a whole number"), "{e}");
    let e = bad(&["materials.0.friction"], 1);
    assert!(e.contains("expected path=value"), "{e}");
    let e = bad(&["solver.omega=1,,2"], 1);
    assert!(e.contains("list entry 2 is empty"), "{e}");
    let e = bad(&["solver.omega=1", "solver.omega=2"], 1);
    assert!(e.contains("varied twice"), "{e}");
    // One path in two spellings, or inside a linked pair, is one path.
    let e = bad(&["materials.0.friction=1", "materials[0].friction=2"], 1);
    assert!(e.contains("varied twice"), "{e}");
    let e = bad(
        &[
            "materials.0.rolling+materials.0.spinning=1",
            "materials[0].spinning=2",
        ],
        1,
    );
    assert!(e.contains("varied twice"), "{e}");
    let e = bad(&["solver.omega=1"], 0);
    assert!(e.contains("--seeds must be at least 1"), "{e}");
    let e = bad(&["a=0:1:1000", "b=0:1:1000", "c=0:1:1000"], 1);
    assert!(e.contains("at most"), "{e}");

    for s in ["0/3", "4/3", "1/0", "1-3", "a/3"] {
        assert!(Shard::parse(s).is_err(), "--shard {s} accepted");
    }
    assert_eq!(Shard::parse("2/3").unwrap(), Shard { index: 2, count: 3 });

    // Paths and values are checked against the scene for every grid point.
    let tmp = tempfile::tempdir().unwrap();
    let path = tiny_scene(tmp.path(), "t.ron", &[]);
    let e = format!(
        "{:#}",
        prepare(&path, spec(&["materials.0.frction=0.1,0.2"], 1)).unwrap_err()
    );
    assert!(
        e.contains("t.ron") && e.contains("frction") && e.contains("no key"),
        "{e}"
    );
    let e = format!(
        "{:#}",
        prepare(&path, spec(&["materials.0.friction=0.5,-1"], 1)).unwrap_err()
    );
    assert!(
        e.contains("sweep run 1 (materials.0.friction = -1, seed 0)")
            && e.contains("t.ron: materials[0].friction: must be ≥ 0 (got -1)"),
        "{e}"
    );
}

/// The unsharded sweep, and the same sweep as 3 shards merged: equal rows
/// (all numbers but the wall time), equal plot input, every file present.
#[test]
fn three_shards_merged_equal_the_unsharded_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tiny_scene(tmp.path(), "t.ron", &[]);
    let sp = spec(&["materials.0.friction=0.1:0.3:3"], 2);
    let sweep = prepare(&path, sp).unwrap();
    let whole = run_sweep(&sweep, &opts(tmp.path().join("whole"), Shard::ALL)).unwrap();
    assert_eq!(whole.rows.len(), 6);
    assert_eq!(whole.failed, 0, "{:#?}", whole.rows);
    assert!(whole.rows.iter().all(|r| r.angle_deg.is_some()));

    let mut shard_dirs = Vec::new();
    for i in 1..=3 {
        let d = tmp.path().join(format!("shard{i}"));
        let r = run_sweep(&sweep, &opts(d.clone(), Shard { index: i, count: 3 })).unwrap();
        let runs: Vec<usize> = r.rows.iter().map(|r| r.run).collect();
        assert_eq!(runs, [i - 1, i + 2], "shard {i}/3 runs");
        assert!(!d.join("sweep.png").exists(), "a shard draws no plot");
        let m = Manifest::read(&d).unwrap();
        assert_eq!(m.shard, Shard { index: i, count: 3 });
        assert_eq!(m.total_runs, 6);
        shard_dirs.push(d);
    }
    let merged_dir = tmp.path().join("merged");
    let merged = merge(&shard_dirs, &merged_dir).unwrap();
    let strip = |rows: &[SweepRow]| -> Vec<SweepRow> {
        rows.iter().map(SweepRow::without_wall_time).collect()
    };
    assert_eq!(strip(&merged.rows), strip(&whole.rows));
    // The files say the same.
    let (pw, rw) = read_sweep_csv(&tmp.path().join("whole/sweep.csv")).unwrap();
    let (pm, rm) = read_sweep_csv(&merged_dir.join("sweep.csv")).unwrap();
    assert_eq!(pw, pm);
    assert_eq!(strip(&rw), strip(&rm));
    assert_eq!(rw, whole.rows, "sweep.csv reads back bit for bit");
    for f in ["sweep.csv", "sweep.json", "sweep.png", "contact_sheet.png"] {
        assert!(merged_dir.join(f).is_file(), "merged {f}");
    }
    let sheet = read_png(merged_dir.join("contact_sheet.png")).unwrap();
    let whole_sheet = read_png(tmp.path().join("whole/contact_sheet.png")).unwrap();
    assert_eq!(
        sheet.as_rgb(),
        whole_sheet.as_rgb(),
        "the merged contact sheet finds every run's picture in the shards"
    );

    // A missing shard: the runs and the shard are named.
    let e = format!(
        "{:#}",
        merge(&shard_dirs[..2], &tmp.path().join("m2")).unwrap_err()
    );
    assert!(
        e.contains("2 of 6 runs missing: 2, 5") && e.contains("shard 3/3"),
        "{e}"
    );
    // A shard twice.
    let twice = vec![
        shard_dirs[0].clone(),
        shard_dirs[1].clone(),
        shard_dirs[2].clone(),
        shard_dirs[1].clone(),
    ];
    let e = format!("{:#}", merge(&twice, &tmp.path().join("m3")).unwrap_err());
    assert!(e.contains("found twice") && e.contains("run 1 (in"), "{e}");
    // A shard of another sweep (same spec, the scene file changed).
    let other_path = tiny_scene(tmp.path(), "t2.ron", &[("duration: 0.25", "duration: 0.2")]);
    let other = prepare(&other_path, spec(&["materials.0.friction=0.1:0.3:3"], 2)).unwrap();
    let od = tmp.path().join("other3");
    run_sweep(&other, &opts(od.clone(), Shard { index: 3, count: 3 })).unwrap();
    let mixed = vec![shard_dirs[0].clone(), shard_dirs[1].clone(), od.clone()];
    let e = format!("{:#}", merge(&mixed, &tmp.path().join("m4")).unwrap_err());
    assert!(
        e.contains(&od.display().to_string()) && e.contains("scene file contents"),
        "{e}"
    );
    // Another spec.
    let spec_other = prepare(&path, spec(&["materials.0.friction=0.1:0.3:3"], 1)).unwrap();
    let os = tmp.path().join("otherspec");
    run_sweep(&spec_other, &opts(os.clone(), Shard { index: 3, count: 3 })).unwrap();
    let mixed = vec![shard_dirs[0].clone(), os.clone()];
    let e = format!("{:#}", merge(&mixed, &tmp.path().join("m5")).unwrap_err());
    assert!(
        e.contains(&os.display().to_string()) && e.contains("varied parameters or seeds"),
        "{e}"
    );
    // Not a sweep directory.
    let e = format!(
        "{:#}",
        merge(&[tmp.path().join("nope")], &tmp.path().join("m6")).unwrap_err()
    );
    assert!(e.contains("nope") && e.contains("sweep.json"), "{e}");
    // A merge that fails creates nothing.
    for m in ["m2", "m3", "m4", "m5", "m6"] {
        assert!(
            !tmp.path().join(m).exists(),
            "a failed merge created its --out directory {m}"
        );
    }
}

#[test]
fn outputs_parse_back_with_the_documented_columns_and_pictures_decode() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tiny_scene(tmp.path(), "t.ron", &[]);
    let sp = spec(
        &["materials.0.friction=0.1,0.3", "materials.0.rolling=0,1e-4"],
        1,
    );
    let out = tmp.path().join("s");
    let r = run_sweep(&prepare(&path, sp).unwrap(), &opts(out.clone(), Shard::ALL)).unwrap();
    assert_eq!(r.rows.len(), 4);

    let text = fs::read_to_string(out.join("sweep.csv")).unwrap();
    let header = text.lines().next().unwrap();
    assert_eq!(
        header,
        "run,materials.0.friction,materials.0.rolling,seed,angle_deg,angle_stderr_deg,height,base_radius,height_base_angle_deg,height_over_diameter,bottom_mean_radius,bottom_mean_radius_over_diameter,settle_time_s,settled,steps,steps_not_converged,wall_time_s,backend,error"
    );
    assert_eq!(
        header.split(',').skip(3).collect::<Vec<_>>(),
        SWEEP_CSV_COLUMNS
    );
    let (paths, rows) = read_sweep_csv(&out.join("sweep.csv")).unwrap();
    assert_eq!(paths, ["materials.0.friction", "materials.0.rolling"]);
    assert_eq!(rows, r.rows);
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(row.run, k);
        assert_eq!(row.backend, "cpu");
        let run_dir = &Manifest::read(&out).unwrap().run_dirs[&k];
        let s =
            repose::output::summary::read_summary(out.join(run_dir).join("summary.json")).unwrap();
        assert_eq!(
            (row.steps, row.steps_not_converged),
            (Some(s.steps), Some(s.solver.steps_not_converged)),
            "run {k}: the step counts are the run's summary's"
        );
        assert!(row.error.is_empty(), "{row:?}");
        assert!(row.height.unwrap() > 0.0 && row.base_radius.unwrap() > 0.0);
        // The row is the run's summary.json.
        let dir = out.join("runs").join(format!(
            "{k}_materials.0.friction={}_materials.0.rolling={}_seed0",
            row.values[0], row.values[1]
        ));
        let s = repose::output::summary::read_summary(dir.join("summary.json")).unwrap();
        assert_eq!(
            s.extra["angle_of_repose"]["angle_deg"].as_f64(),
            row.angle_deg
        );
        assert_eq!(read_final_csv(dir.join("final.csv")).unwrap().len(), 54);
        assert!(
            !dir.join("frames.pvd").exists(),
            "no frames in sweeps by default"
        );
    }

    let plot = read_png(out.join("sweep.png")).unwrap();
    assert_eq!((plot.width(), plot.height()), (900, 600));
    let sheet = read_png(out.join("contact_sheet.png")).unwrap();
    let (_, th) = thumbnail_size(400, 200);
    let (w, h) = sheet_size(4, 2, th);
    assert_eq!(
        (u64::from(sheet.width()), u64::from(sheet.height())),
        (w, h)
    );

    // Quoting: commas, quotes and line breaks in text fields survive.
    let mut odd = rows[0].clone();
    odd.values[0] = "a,b".into();
    odd.error = "line one, \"quoted\"\nline two".into();
    odd.angle_deg = None;
    odd.settled = None;
    let p = tmp.path().join("odd.csv");
    write_sweep_csv(&p, &paths, &[odd.clone(), rows[1].clone()]).unwrap();
    let (_, back) = read_sweep_csv(&p).unwrap();
    assert_eq!(back, [odd, rows[1].clone()]);
    // A malformed file is an error naming the file and line.
    fs::write(&p, format!("{header}\n1,2\n")).unwrap();
    let e = read_sweep_csv(&p).unwrap_err().to_string();
    assert!(
        e.contains("odd.csv:2") && e.contains("2 fields, expected 19"),
        "{e}"
    );
}

/// `--vary formulation=Complementarity,Penalty`: one sweep runs the same
/// scene under both formulations (the penalty one with default settings
/// and the materials' default E, ν, e), and each run's summary says which.
#[test]
fn a_sweep_varies_the_formulation() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tiny_scene(tmp.path(), "t.ron", &[]);
    let sp = spec(&["formulation=Complementarity,Penalty"], 1);
    let prepared = prepare(&path, sp).unwrap();
    let names: Vec<&str> = prepared
        .runs
        .iter()
        .map(|(_, sc)| sc.formulation.name())
        .collect();
    assert_eq!(names, ["complementarity", "penalty"]);
    let out = tmp.path().join("s");
    let r = run_sweep(&prepared, &opts(out.clone(), Shard::ALL)).unwrap();
    assert_eq!(r.rows.len(), 2);
    for (k, row) in r.rows.iter().enumerate() {
        assert!(row.error.is_empty(), "{row:?}");
        assert!(row.angle_deg.is_some(), "{row:?}");
        let dir = out
            .join("runs")
            .join(format!("{k}_formulation={}_seed0", row.values[0]));
        let s = repose::output::summary::read_summary(dir.join("summary.json")).unwrap();
        assert_eq!(s.formulation, names[k]);
        assert_eq!(row.values[0], ["Complementarity", "Penalty"][k]);
        assert!(
            (s.substeps > s.steps) == (k == 1),
            "{} sub-steps in {} steps",
            s.substeps,
            s.steps
        );
    }
}

/// One run diverges (projected Jacobi at ω = 80): it is a row with
/// `error`, the other runs still run, and the exit code is 2 with the
/// count in the summary line.
#[test]
fn a_failing_run_is_a_row_with_its_error_and_a_nonzero_exit_code() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tiny_scene(
        tmp.path(),
        "t.ron",
        &[(
            "duration: 0.25,",
            "duration: 0.25, solver: (method: Jacobi),",
        )],
    );
    let out = tmp.path().join("s");
    let o = repose([
        OsStr::new("sweep"),
        path.as_os_str(),
        OsStr::new("--vary"),
        OsStr::new("materials.0.friction=0.5"),
        OsStr::new("--vary"),
        OsStr::new("solver.omega=80,1"),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("2 runs, 1 failed"),
        "{}",
        show(&o)
    );
    let (_, rows) = read_sweep_csv(&out.join("sweep.csv")).unwrap();
    assert_eq!(rows.len(), 2);
    assert!(
        rows[0].error.contains("diverged") && rows[0].error.contains("step"),
        "{:?}",
        rows[0]
    );
    assert!(rows[0].angle_deg.is_none());
    assert_eq!(rows[0].backend, "cpu", "the failed run's summary is kept");
    assert!(rows[1].error.is_empty(), "{:?}", rows[1]);
    assert!(rows[1].angle_deg.is_some(), "the run after the failure ran");
    assert!(out.join("sweep.png").is_file() && out.join("contact_sheet.png").is_file());
}

#[test]
fn cli_sweeps_shards_and_merges_and_rejects_bad_specs_before_running() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tiny_scene(tmp.path(), "t.ron", &[]);
    let sweep = |extra: &[&OsStr], out: &Path| {
        let mut args: Vec<&OsStr> = vec![
            OsStr::new("sweep"),
            path.as_os_str(),
            OsStr::new("--vary"),
            OsStr::new("materials.0.friction=0.1:0.3:2"),
            OsStr::new("--seeds"),
            OsStr::new("2"),
            OsStr::new("--backend"),
            OsStr::new("cpu"),
            OsStr::new("--out"),
            out.as_os_str(),
        ];
        args.extend_from_slice(extra);
        repose(args)
    };
    let whole = tmp.path().join("whole");
    let o = sweep(&[OsStr::new("--jobs"), OsStr::new("2")], &whole);
    assert!(o.status.success(), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("4 runs, 0 failed"), "{}", show(&o));
    let err = stderr(&o);
    assert_eq!(
        err.matches("repose::sweep] [").count(),
        4,
        "a log line per run\n{err}"
    );
    for f in ["sweep.csv", "sweep.json", "sweep.png", "contact_sheet.png"] {
        assert!(whole.join(f).is_file(), "{f}\n{}", show(&o));
    }
    let shards: Vec<PathBuf> = (1..=2).map(|i| tmp.path().join(format!("sh{i}"))).collect();
    for (i, d) in shards.iter().enumerate() {
        let s = format!("{}/2", i + 1);
        let o = sweep(&[OsStr::new("--shard"), OsStr::new(&s)], d);
        assert!(o.status.success(), "{}", show(&o));
    }
    let merged = tmp.path().join("merged");
    let mut args = vec![OsStr::new("merge")];
    args.extend(shards.iter().map(|d| d.as_os_str()));
    args.extend([OsStr::new("--out"), merged.as_os_str()]);
    let o = repose(&args);
    assert!(o.status.success(), "{}", show(&o));
    let (_, a) = read_sweep_csv(&whole.join("sweep.csv")).unwrap();
    let (_, b) = read_sweep_csv(&merged.join("sweep.csv")).unwrap();
    let strip = |r: &[SweepRow]| {
        r.iter()
            .map(SweepRow::without_wall_time)
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&a), strip(&b), "--jobs 2 whole vs merged shards");
    // merge with one shard missing: exit 1, one error naming the gap.
    let o = repose([
        OsStr::new("merge"),
        shards[0].as_os_str(),
        OsStr::new("--out"),
        tmp.path().join("m").as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(stderr(&o).contains("shard 2/2 not given"), "{}", show(&o));

    // Bad specifications: exit 1, one error line, nothing run.
    for (vary, want) in [
        ("materials.0.friction=0:1", "start:end:count"),
        ("materials.0.friction=x:1:3", "not a finite number"),
        ("materials.0.friction=0:1:0", "at least 1"),
        ("materials.0.nope=0:1:3", "no key `nope`"),
        (
            "materials.0.friction=0.1,-2",
            "materials[0].friction: must be ≥ 0",
        ),
    ] {
        let out = tmp.path().join("bad");
        let o = repose([
            OsStr::new("sweep"),
            path.as_os_str(),
            OsStr::new("--vary"),
            OsStr::new(vary),
            OsStr::new("--out"),
            out.as_os_str(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{vary}\n{}", show(&o));
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{}", show(&o));
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
        assert_eq!(errors.len(), 1, "{vary}\n{err}");
        assert!(
            errors[0].contains(want),
            "{vary}: expected {want:?} in {}",
            errors[0]
        );
        assert!(!out.exists(), "{vary}: nothing may run or be written");
    }
    let o = repose([
        OsStr::new("sweep"),
        path.as_os_str(),
        OsStr::new("--vary"),
        OsStr::new("solver.omega=1"),
        OsStr::new("--shard"),
        OsStr::new("3/2"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(stderr(&o).contains("--shard 3/2"), "{}", show(&o));
}

/// `a+b=…` varies two paths together: every run's scene has both set to the
/// run's value (the ρ = σ sweeps of Tasora & Anitescu 2013).
#[test]
fn linked_paths_take_the_same_value() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tiny_scene(tmp.path(), "t.ron", &[]);
    let sp = spec(&["materials.0.rolling+materials.0.spinning=0:0.002:3"], 1);
    let prepared = prepare(&path, sp).unwrap();
    let got: Vec<(f64, f64)> = prepared
        .runs
        .iter()
        .map(|(_, sc)| (sc.materials[0].rolling, sc.materials[0].spinning))
        .collect();
    assert_eq!(got, [(0.0, 0.0), (0.001, 0.001), (0.002, 0.002)]);
    assert!(
        SweepSpec::parse(&["materials.0.rolling+nonsense.path=0:1:2".to_string()], 1)
            .and_then(|sp| prepare(&path, sp))
            .is_err()
    );
}

/// Acary & Bourrier 2021's rolling coefficients (1e-5 … 1) are drawn on a
/// log₁₀ axis; a linear range (0 … 0.01) or non-numbers are not. The height
/// and mean radius plots group the rows' pile sizes like the angle plot.
#[test]
fn values_spanning_decades_go_on_a_log_axis_and_pile_sizes_are_plotted() {
    use repose::sweep::{sweep_log_x, sweep_series_of, SweepMetric};
    let decades = spec(&["materials.0.rolling=0.00001,0.001,0.1,1"], 1);
    assert!(sweep_log_x(&decades));
    assert!(!sweep_log_x(&spec(&["materials.0.rolling=0:0.01:6"], 1)));
    assert!(!sweep_log_x(&spec(&["materials.0.rolling=0.001,0.01"], 1)));
    assert!(!sweep_log_x(&spec(&["solver.method=Jacobi,Apgd"], 1)));
    let rows: Vec<SweepRow> = decades
        .points()
        .iter()
        .enumerate()
        .map(|(k, p)| SweepRow {
            run: p.index,
            values: p.values.clone(),
            seed: p.seed,
            height_over_diameter: Some(1.0 + k as f64),
            bottom_mean_radius_over_diameter: Some(10.0 - k as f64),
            ..SweepRow::default()
        })
        .collect();
    let h = sweep_series_of(&decades, &rows, &SweepMetric::HeightOverDiameter);
    let xy: Vec<(f64, f64)> = h[0].points.iter().map(|p| (p.x, p.y)).collect();
    let want = [(-5.0, 1.0), (-3.0, 2.0), (-1.0, 3.0), (0.0, 4.0)];
    for ((x, y), (wx, wy)) in xy.iter().zip(want) {
        assert!(
            (x - wx).abs() < 1e-12 && (y - wy).abs() < 1e-12,
            "height series {xy:?}, expected {want:?}"
        );
    }
    let r = sweep_series_of(&decades, &rows, &SweepMetric::MeanRadiusOverDiameter);
    assert_eq!(r[0].points[3].y, 7.0);
    let a = sweep_series_of(&decades, &rows, &SweepMetric::Angle);
    assert!(a[0].points.iter().all(|p| p.y.is_nan()), "no angles: gaps");
}

/// A run whose heap could not be measured (a single layer, a pile that
/// rolled off its plate) is a result, not a failed run: its pile size still
/// goes into the plots and the sweep does not count it as failed.
#[test]
fn unmeasurable_heap_is_a_note_not_a_failure() {
    use repose::sweep::{sweep_series_of, SweepMetric, MEASURE_NOTE};
    let s = spec(&["materials.0.rolling=0.1,0.2,0.3"], 1);
    let mut rows: Vec<SweepRow> = s
        .points()
        .iter()
        .map(|p| SweepRow {
            run: p.index,
            values: p.values.clone(),
            seed: p.seed,
            height_over_diameter: Some(1.0),
            ..SweepRow::default()
        })
        .collect();
    rows[1].error = format!("{MEASURE_NOTE} the heap: too few profile bins");
    rows[2].error = "step 3 (t = 0.003 s): velocity is not finite".into();
    rows[2].height_over_diameter = None;
    assert!(!rows[0].run_failed() && !rows[1].run_failed() && rows[2].run_failed());
    let h = sweep_series_of(&s, &rows, &SweepMetric::HeightOverDiameter);
    let ys: Vec<f64> = h[0].points.iter().map(|p| p.y).collect();
    assert_eq!(ys[..2], [1.0, 1.0], "{ys:?}");
    assert!(ys[2].is_nan(), "the failed run is a gap: {ys:?}");
}

/// A sweep run again after a stop: a run stopped part way (it has a
/// checkpoint) is resumed from it and gives the row of a run that never
/// stopped; a run that failed stays recorded with its error and is not run
/// again (the same scene on the same version fails the same way).
#[test]
fn a_sweep_run_again_resumes_stopped_runs_and_keeps_failed_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tiny_scene(tmp.path(), "t.ron", &[]);
    let sweep = prepare(&path, spec(&["materials.0.friction=0.2,0.4"], 1)).unwrap();
    let out = tmp.path().join("sw");
    let o = opts(out.clone(), Shard::ALL);
    let first = run_sweep(&sweep, &o).unwrap();
    assert_eq!(first.failed, 0, "{:#?}", first.rows);
    let dir = |i: usize| {
        out.join("runs")
            .join(sweep.spec.run_dir_name(&sweep.runs[i].0))
    };
    // Run 1 stopped at step 40 of 125, as a signal would stop it.
    let stopped = run_scene(
        &sweep.runs[1].1,
        &RunOptions {
            out_dir: Some(dir(1)),
            no_frames: !o.frames,
            backend: o.backend,
            overwrite: true,
            stop_after_step: Some(40),
            ..RunOptions::default()
        },
    )
    .unwrap();
    assert_eq!(stopped.steps, 40);
    assert!(dir(1).join("checkpoint.bin").exists());
    // Run 0 failed.
    let summary = dir(0).join("summary.json");
    let text = fs::read_to_string(&summary).unwrap();
    assert!(text.contains("\"stopped\": \"completed\""), "{text}");
    fs::write(
        &summary,
        text.replace(
            "\"stopped\": \"completed\"",
            "\"stopped\": \"failed\", \"stop_message\": \"step 3: the solver diverged\"",
        ),
    )
    .unwrap();

    let again = run_sweep(&sweep, &o).unwrap();
    assert_eq!(again.failed, 1, "{:#?}", again.rows);
    let failed = &again.rows[0];
    assert!(failed.run_failed());
    assert_eq!(
        failed.error,
        "failed (recorded by an earlier sweep): step 3: the solver diverged"
    );
    assert_eq!(
        again.rows[1].without_wall_time(),
        first.rows[1].without_wall_time(),
        "the resumed run's row"
    );
    let s = repose::output::summary::read_summary(dir(1).join("summary.json")).unwrap();
    assert_eq!(s.extra["resumed_at_steps"], serde_json::json!([40]));
    assert!(!dir(1).join("checkpoint.bin").exists());
}

/// A sweep run again into the same directory resumes: runs that finished
/// are reused as they are (their files untouched), a run without a
/// `summary.json` (killed) or one that did not finish is run again, and
/// `rerun` runs them all; the rows are the same either way.
#[test]
fn a_sweep_run_again_reuses_finished_runs_and_redoes_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tiny_scene(tmp.path(), "t.ron", &[]);
    let sweep = prepare(&path, spec(&["materials.0.friction=0.2,0.4"], 1)).unwrap();
    let out = tmp.path().join("sw");
    let first = run_sweep(&sweep, &opts(out.clone(), Shard::ALL)).unwrap();
    assert_eq!(first.failed, 0, "{:#?}", first.rows);
    let run_dirs: Vec<PathBuf> = {
        let mut d: Vec<PathBuf> = fs::read_dir(out.join("runs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        d.sort();
        d
    };
    assert_eq!(run_dirs.len(), 2);
    let stamp = |d: &Path| {
        fs::metadata(d.join("final.csv"))
            .unwrap()
            .modified()
            .unwrap()
    };
    let before: Vec<_> = run_dirs.iter().map(|d| stamp(d)).collect();
    let strip = |rows: &[SweepRow]| -> Vec<SweepRow> {
        rows.iter().map(SweepRow::without_wall_time).collect()
    };

    // Run 1 killed (no summary), run 0 finished.
    fs::remove_file(run_dirs[1].join("summary.json")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let again = run_sweep(&sweep, &opts(out.clone(), Shard::ALL)).unwrap();
    assert_eq!(strip(&again.rows), strip(&first.rows));
    assert_eq!(
        stamp(&run_dirs[0]),
        before[0],
        "the finished run must be reused untouched"
    );
    assert_ne!(
        stamp(&run_dirs[1]),
        before[1],
        "the killed run must be run again"
    );

    // --rerun runs everything.
    let mid: Vec<_> = run_dirs.iter().map(|d| stamp(d)).collect();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let all = run_sweep(
        &sweep,
        &SweepOptions {
            rerun: true,
            ..opts(out.clone(), Shard::ALL)
        },
    )
    .unwrap();
    assert_eq!(strip(&all.rows), strip(&first.rows));
    for (d, m) in run_dirs.iter().zip(&mid) {
        assert_ne!(&stamp(d), m, "{}: --rerun must run it again", d.display());
    }
}

/// The sweep tables in `docs/figures/` (written before sweep.csv had its
/// step counts) still read, with the counts missing, and rewrite in the
/// current layout losing nothing: the same rows read back, and every line
/// is the old one with two empty cells after `settled`.
#[test]
fn committed_sweep_tables_of_the_older_layout_read_and_rewrite_whole() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    for name in ["tasora2013_sweep.csv", "acary2021_sweep.csv"] {
        let path = root.join("docs/figures").join(name);
        let (paths, rows) = read_sweep_csv(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(rows
            .iter()
            .all(|r| r.steps.is_none() && r.steps_not_converged.is_none()));
        let out = tmp.path().join(name);
        write_sweep_csv(&out, &paths, &rows).unwrap();
        let (paths2, rows2) = read_sweep_csv(&out).unwrap();
        assert_eq!(
            (paths2, rows2),
            (paths.clone(), rows),
            "{name}: rows differ after a rewrite"
        );
        let old = fs::read_to_string(&path).unwrap();
        let new = fs::read_to_string(&out).unwrap();
        // `settled` is the 14th column after the varied paths' (run, paths, seed, …).
        let at = 1 + paths.len() + 11;
        for (k, (a, b)) in old.lines().zip(new.lines()).enumerate().skip(1) {
            let mut cells: Vec<&str> = a.splitn(at + 1, ',').collect();
            let rest = cells.pop().unwrap_or("");
            let want = format!("{},,,{rest}", cells.join(","));
            assert_eq!(b, want, "{name} line {}", k + 1);
        }
    }
}

#[test]
fn reference_curves_are_drawn_over_the_sweep_plots_and_bad_files_are_named() {
    use repose::render::colormap::series_colour;
    use repose::sweep::{sweep_plot_with, sweep_series_of, Reference, SweepMetric};
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("paper.csv");
    fs::write(
        &good,
        "rolling,angle_deg,angle_deg_err,height_over_diameter,label\n\
         0.00001,5,1,1.0,mu 0.3\n0.001,30,2,4.0,mu 0.3\n0.1,35,,,mu 0.3\n\
         0.001,25,,,mu 0.1\n",
    )
    .unwrap();
    let r = Reference::read(&good).unwrap();
    let s = r.series(SweepMetric::Angle, true);
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(s[0].label, "mu 0.3 (reference)");
    let xy: Vec<(f64, f64, Option<f64>)> = s[0].points.iter().map(|p| (p.x, p.y, p.err)).collect();
    assert_eq!(
        xy,
        vec![
            (-5.0, 5.0, Some(1.0)),
            (-3.0, 30.0, Some(2.0)),
            (-1.0, 35.0, None)
        ]
    );
    assert_eq!(
        r.series(SweepMetric::HeightOverDiameter, false)[0]
            .points
            .len(),
        2
    );
    assert!(r
        .series(SweepMetric::MeanRadiusOverDiameter, false)
        .is_empty());

    // Drawn in the colour after the sweep's own series.
    let decades = spec(&["materials.0.rolling=0.00001,0.001,0.1"], 1);
    let rows: Vec<SweepRow> = decades
        .points()
        .iter()
        .map(|p| SweepRow {
            run: p.index,
            values: p.values.clone(),
            seed: p.seed,
            angle_deg: Some(10.0 + p.index as f64),
            ..SweepRow::default()
        })
        .collect();
    let own = sweep_series_of(&decades, &rows, &SweepMetric::Angle).len();
    let img = sweep_plot_with(&decades, "t", &rows, SweepMetric::Angle, Some(&r)).unwrap();
    let c = series_colour(own);
    let hits = (0..img.height() as i64)
        .flat_map(|y| (0..img.width() as i64).map(move |x| (x, y)))
        .filter(|&(x, y)| img.get(x, y) == Some(c))
        .count();
    assert!(
        hits > 100,
        "the reference curve's colour covers {hits} pixels"
    );

    for (text, want) in [
        ("rolling,angle\n1,2\n", "names no column to compare"),
        (
            "rolling,angle_deg\n1,abc\n",
            "line 2: column angle_deg: \"abc\" is not a finite number",
        ),
        (
            "rolling,angle_deg\n,3\n",
            "line 2: the first column (rolling) is empty",
        ),
    ] {
        let bad = tmp.path().join("bad.csv");
        fs::write(&bad, text).unwrap();
        let e = format!("{:#}", Reference::read(&bad).unwrap_err());
        assert!(e.contains("bad.csv") && e.contains(want), "{text:?}: {e}");
    }
    // The command line reads it before any run starts.
    let scene = tiny_scene(tmp.path(), "t.ron", &[]);
    let bad = tmp.path().join("bad.csv");
    let out = repose([
        OsStr::new("sweep"),
        scene.as_os_str(),
        OsStr::new("--vary"),
        OsStr::new("materials.0.friction=0.3"),
        OsStr::new("--reference"),
        bad.as_os_str(),
        OsStr::new("--out"),
        tmp.path().join("sw").as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(stderr(&out).contains("bad.csv"), "{}", show(&out));
    assert!(
        !tmp.path().join("sw").exists(),
        "nothing runs before the reference is read"
    );
}
