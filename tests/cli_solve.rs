//! `repose solve` end to end: the problems a run dumps are read and
//! solved, `--all` reports a bad file as a row and goes on, Lemke's rows
//! carry the faceting error, and the fallback runs by default and only
//! where it is allowed.

use std::ffi::OsStr;
use std::fs;

#[path = "common/cli.rs"]
mod cli;

use cli::*;

/// `repose run --dump-problem` writes the chosen steps' problems, and
/// `repose solve` reads and solves them (the column's contacts carry
/// rolling and spinning friction: the d = 6 rows).
#[test]
fn dumped_step_problems_are_solved_by_repose_solve() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("col");
    let out = repose([
        OsStr::new("run"),
        OsStr::new("scenes/column.ron"),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--no-frames"),
        OsStr::new("--no-picture"),
        OsStr::new("--set"),
        OsStr::new("duration=0.05"),
        OsStr::new("--dump-problem"),
        OsStr::new("3,40"),
        OsStr::new("--out"),
        out_dir.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for step in ["000003", "000040"] {
        let file = out_dir.join(format!("problem_step{step}.dat"));
        assert!(file.exists(), "{} was not written", file.display());
        let solved = repose([
            OsStr::new("solve"),
            file.as_os_str(),
            OsStr::new("--solver"),
            OsStr::new("apgd"),
        ]);
        let text = stdout(&solved);
        assert!(solved.status.success(), "step {step}: {text}");
        let row = text.lines().nth(1).unwrap_or_default();
        assert!(
            row.contains(" 6 ") && row.contains(" 10 ") && row.ends_with("yes"),
            "step {step}: expected d = 6, 10 contacts, solved: {row:?}"
        );
    }
}
/// `repose solve --all` reports a file it cannot read as a row of the table
/// (with the reason) and goes on with the others; the exit code says that
/// not every problem was solved.
#[test]
fn solve_all_reports_a_bad_file_as_a_row_and_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let good = root().join("tests/data/siconos/fc3d/FrictionContact3D_1c.dat");
    fs::copy(&good, tmp.path().join("a_good.dat")).unwrap();
    fs::write(tmp.path().join("b_bad.dat"), "garbage\n").unwrap();
    fs::copy(&good, tmp.path().join("c_good.dat")).unwrap();
    let out = repose([
        OsStr::new("solve"),
        OsStr::new("--all"),
        tmp.path().as_os_str(),
        OsStr::new("--time-limit"),
        OsStr::new("5"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let text = stdout(&out);
    let bad: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("b_bad.dat"))
        .collect();
    assert_eq!(bad.len(), 1, "one row for the bad file:\n{text}");
    assert!(
        bad[0].contains("cannot read") && bad[0].contains("garbage"),
        "{}",
        bad[0]
    );
    for f in ["a_good.dat", "c_good.dat"] {
        assert!(
            text.lines().any(|l| l.starts_with(f) && l.ends_with("yes")),
            "{f} must still be solved:\n{text}"
        );
    }
    assert!(
        stderr(&out).contains("not solved to 1e-6: b_bad.dat"),
        "{}",
        show(&out)
    );
}

/// `repose solve --solver lemke`: the direct method on the faceted LCP of a
/// 3-D Coulomb problem prints the same table row as the iterative methods,
/// with the pivots as iterations and the faceting error as the error (one
/// contact sliding off a 32-gon: 9.5e-6, not below 1e-6, so exit code 1);
/// a problem with rolling friction (d = 6) is refused by name.
#[test]
fn solve_with_lemke_reports_the_faceting_error() {
    let one = root().join("tests/data/siconos/fc3d/FrictionContact3D_1c.dat");
    let out = repose([
        OsStr::new("solve"),
        one.as_os_str(),
        OsStr::new("--solver"),
        OsStr::new("lemke"),
        OsStr::new("--directions"),
        OsStr::new("32"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let text = stdout(&out);
    let row = text
        .lines()
        .find(|l| l.contains("lemke (k=32)"))
        .unwrap_or_else(|| panic!("no lemke row:\n{text}"));
    let rel: f64 = row.split_whitespace().nth_back(1).unwrap().parse().unwrap();
    assert!(
        (5e-6..2e-5).contains(&rel),
        "relative error {rel}, expected ≈ 9.5e-6 (the 32-gon's faceting error): {row}"
    );
    let hard = root().join("tests/data/hard/tall_column_step100.dat");
    let out = repose([
        OsStr::new("solve"),
        hard.as_os_str(),
        OsStr::new("--solver"),
        OsStr::new("lemke"),
    ]);
    assert_one_error(&out, &["tall_column_step100.dat", "d = 3", "d = 6"]);
}

/// `repose solve`'s fallback: by default APGD then the interior point (the
/// row says `apgd+interior-point`; on a problem APGD solves the fallback
/// does not run, and the iterations are APGD's alone); `--fallback none`
/// solves once; an unknown name, or a fallback for Lemke's direct method,
/// is one error naming the option.
#[test]
fn solve_falls_back_to_the_interior_point_by_default_and_checks_the_option() {
    let one = root().join("tests/data/siconos/fc3d/FrictionContact3D_1c.dat");
    let solve = |extra: &[&str]| {
        let mut args = vec![OsStr::new("solve"), one.as_os_str()];
        args.extend(extra.iter().map(OsStr::new));
        repose(args)
    };
    let row = |out: &std::process::Output| {
        assert_success(out, "repose solve");
        stdout(out).lines().nth(1).unwrap_or_default().to_string()
    };
    let default = row(&solve(&[]));
    assert!(
        default.contains(" apgd+interior-point ") && default.ends_with("yes"),
        "{default}"
    );
    let iter = default.split_whitespace().nth(4).unwrap_or_default();
    assert!(
        !iter.contains('+'),
        "APGD solves this one: no fallback iterations expected: {default}"
    );
    let once = row(&solve(&["--fallback", "none"]));
    assert!(once.contains(" apgd ") && once.ends_with("yes"), "{once}");
    assert_one_error(
        &solve(&["--fallback", "simplex"]),
        &["--fallback", "\"simplex\""],
    );
    assert_one_error(
        &solve(&["--solver", "lemke", "--fallback", "pgs"]),
        &["--fallback", "lemke"],
    );
    // --all too: the fallback would otherwise be dropped without a word.
    let dir = one.parent().unwrap();
    assert_one_error(
        &repose([
            OsStr::new("solve"),
            OsStr::new("--all"),
            dir.as_os_str(),
            OsStr::new("--solver"),
            OsStr::new("lemke"),
            OsStr::new("--fallback"),
            OsStr::new("pgs"),
        ]),
        &["--fallback", "lemke"],
    );
    // A method is not its own fallback: one row, labelled by the method.
    let ip = row(&solve(&["--solver", "interior-point"]));
    assert!(ip.contains(" interior-point ") && !ip.contains('+'), "{ip}");
}
