//! Helpers for the tests that run the `repose` binary (`tests/cli*.rs`,
//! `tests/stops.rs`): running it, reading what it printed and wrote, and
//! asserting the shape of its errors. Included with
//! `#[path = "common/cli.rs"] mod cli;`, so each crate gets its own copy.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use repose::output::summary::{read_summary, Summary};

pub const BIN: &str = env!("CARGO_BIN_EXE_repose");

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn scene_path(name: &str) -> PathBuf {
    root().join("scenes").join(name)
}

/// Runs the binary in the repository root, with the default log level.
pub fn repose<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    repose_with_env(args, &[])
}

pub fn repose_with_env<I, S>(args: I, env: &[(&str, &str)]) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(root()).env_remove("RUST_LOG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot start {BIN}: {e}"))
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn show(out: &Output) -> String {
    format!(
        "exit status: {}\n--- stdout ---\n{}--- stderr ---\n{}",
        out.status,
        stdout(out),
        stderr(out)
    )
}

pub fn assert_success(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: expected exit code 0\n{}",
        show(out)
    );
    assert!(
        !stderr(out).contains("panicked"),
        "{what}: a panic was reported\n{}",
        show(out)
    );
}

/// Asserts a failed run with exit code 1 whose stderr is exactly one line
/// `error: …` containing every one of `parts`, and no panic; returns that line.
pub fn assert_one_error(out: &Output, parts: &[&str]) -> String {
    let err = stderr(out);
    assert!(
        !err.contains("panicked"),
        "expected an error message, got a panic\n{}",
        show(out)
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected exit code 1\n{}",
        show(out)
    );
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "expected exactly one line on stderr, got {}:\n{err}",
        lines.len()
    );
    let line = lines[0];
    assert!(
        line.starts_with("error: "),
        "expected the line to start with \"error: \", got:\n{line}"
    );
    for p in parts {
        assert!(
            line.contains(p),
            "expected the error to contain {p:?}, got:\n{line}"
        );
    }
    line.to_string()
}

/// The text of scenes/sphere_on_plane.ron with `from` (which must occur
/// exactly once) replaced by `to`.
pub fn sphere_on_plane_with(from: &str, to: &str) -> String {
    let text = fs::read_to_string(scene_path("sphere_on_plane.ron")).unwrap();
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} must occur exactly once in sphere_on_plane.ron"
    );
    text.replace(from, to)
}

/// The 1-based line of `needle` in `text`.
pub fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in the scene text"))
        + 1
}

/// Writes `text` as `<tmp>/<name>`, runs `repose run` on it on the CPU, and
/// asserts it fails with one error line naming the file and `parts`; also
/// asserts that nothing was written (the output directory was not created).
pub fn assert_bad_scene(name: &str, text: &str, parts: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    fs::write(&file, text).unwrap();
    let out_dir = dir.path().join("out");
    let out = repose([
        OsStr::new("run"),
        file.as_os_str(),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--out"),
        out_dir.as_os_str(),
    ]);
    let file_s = file.display().to_string();
    let mut all = vec![file_s.as_str()];
    all.extend_from_slice(parts);
    let line = assert_one_error(&out, &all);
    assert!(
        !out_dir.exists(),
        "a rejected scene must write nothing, but {} exists",
        out_dir.display()
    );
    line
}

/// `repose run scenes/sphere_on_plane.ron --backend cpu --out DIR <extra>`.
pub fn run_sphere_on_plane(out_dir: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<&OsStr> = vec![
        OsStr::new("run"),
        OsStr::new("scenes/sphere_on_plane.ron"),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--out"),
        out_dir.as_os_str(),
    ];
    args.extend(extra.iter().map(OsStr::new));
    repose(args)
}

/// The (time, file) entries of a .pvd collection, in order.
pub fn pvd_entries(path: &Path) -> Vec<(f64, String)> {
    let text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        text.contains("<Collection>") && text.trim_end().ends_with("</VTKFile>"),
        "{} is not a complete PVD collection:\n{text}",
        path.display()
    );
    let attr = |line: &str, name: &str| -> String {
        let key = format!("{name}=\"");
        let start = line
            .find(&key)
            .unwrap_or_else(|| panic!("no {name}= in {line:?}"))
            + key.len();
        let len = line[start..].find('"').expect("closing quote");
        line[start..start + len].to_string()
    };
    text.lines()
        .filter(|l| l.contains("<DataSet"))
        .map(|l| {
            let t = attr(l, "timestep");
            let t: f64 = t
                .parse()
                .unwrap_or_else(|e| panic!("timestep {t:?} in {l:?}: {e}"));
            (t, attr(l, "file"))
        })
        .collect()
}

/// Asserts the frame series in `dir` is consistent: frames.pvd lists exactly
/// the frame_*.vtu files present, each a complete VTU file, with strictly
/// increasing times, and no temporary file is left; returns the entries.
pub fn assert_valid_frame_series(dir: &Path) -> Vec<(f64, String)> {
    let entries = pvd_entries(&dir.join("frames.pvd"));
    for w in entries.windows(2) {
        assert!(
            w[1].0 > w[0].0,
            "frame times must increase: {:?} then {:?}",
            w[0],
            w[1]
        );
    }
    let mut listed: Vec<String> = entries.iter().map(|(_, f)| f.clone()).collect();
    for f in &listed {
        let p = dir.join(f);
        let text = fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("frames.pvd lists {f}, which cannot be read: {e}"));
        assert!(
            text.starts_with("<?xml") && text.trim_end().ends_with("</VTKFile>"),
            "{f} is not a complete VTU file"
        );
    }
    let mut present: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("frame_") && n.ends_with(".vtu"))
        .collect();
    listed.sort();
    present.sort();
    assert_eq!(
        listed, present,
        "frames.pvd (left) must list exactly the frame files present (right)"
    );
    let tmp: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(tmp.is_empty(), "temporary files left behind: {tmp:?}");
    entries
}

pub fn summary_of(dir: &Path) -> Summary {
    read_summary(dir.join("summary.json"))
        .unwrap_or_else(|e| panic!("summary.json does not parse: {e}"))
}

/// Runs `scenes/pile.ron` poured with 300 beads into `out` (no picture),
/// with `extra` arguments; asserts it succeeded (`what` names it).
pub fn small_pile(out: &Path, extra: &[&str], what: &str) {
    let mut args = vec![
        "run".to_string(),
        scene_path("pile.ron").display().to_string(),
        "--set".into(),
        "spheres.0.count=300".into(),
        "--no-picture".into(),
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    assert_success(&repose(&args), what);
}
