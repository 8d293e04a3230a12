//! Tests of the Siconos problem reader (`repose::siconos`) on the problems
//! shipped in `tests/data/siconos/` (README there): every file reads, the same
//! problem stored two ways reads the same, the 6-D embedding reproduces
//! u = W r + q and Siconos' error, and malformed input gives an error naming
//! the file and the right line, never a panic.

use std::path::{Path, PathBuf};

use repose::cone::natural_map_residual_sq;
use repose::material::FrictionLaw;
use repose::problem::Delassus;
use repose::siconos::{SiconosError, SiconosProblem, Storage};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/siconos")
}

/// Every `.dat` file under fc3d/ and rfc3d/, sorted, with its expected d.
fn all_files() -> Vec<(PathBuf, usize)> {
    let mut out = Vec::new();
    for (sub, dim) in [("fc3d", 3), ("rfc3d", 5)] {
        let dir = data_dir().join(sub);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "dat"))
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|p| (p, dim)));
    }
    out
}

fn read(rel: &str) -> SiconosProblem {
    let path = data_dir().join(rel);
    SiconosProblem::read(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn text(rel: &str) -> String {
    let path = data_dir().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A deterministic pseudo-random sequence in [-1, 1) (64-bit LCG, top bits).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
    fn below(&mut self, n: usize) -> usize {
        (((self.next() + 1.0) / 2.0) * n as f64) as usize % n.max(1)
    }
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// Candidate solutions of several kinds: random, zero, and random with
/// positive normal components (mostly inside the cones).
fn trial_vectors(p: &SiconosProblem, seed: u64) -> Vec<Vec<f64>> {
    let n = p.dim * p.n_contacts;
    let mut rng = Lcg(seed);
    let random: Vec<f64> = (0..n).map(|_| rng.next()).collect();
    let mut inside = random.clone();
    for c in inside.chunks_exact_mut(p.dim) {
        c[0] = c[0].abs() + 2.0;
        for v in &mut c[1..] {
            *v *= 0.01;
        }
    }
    vec![random, vec![0.0; n], inside]
}

// ---------------------------------------------------------------------------
// Every file
// ---------------------------------------------------------------------------

#[test]
fn every_data_file_reads_with_header_sizes_and_finite_data() {
    let files = all_files();
    let mut read_ok = 0;
    for (path, dim) in &files {
        let name = path.display();
        let p = SiconosProblem::read(path).unwrap_or_else(|e| panic!("{e}"));
        // The header: the first two tokens are d and nc.
        let t = std::fs::read_to_string(path).unwrap();
        let mut tokens = t.split_whitespace();
        let d: usize = tokens.next().unwrap().parse().unwrap();
        let nc: usize = tokens.next().unwrap().parse().unwrap();
        assert_eq!((p.dim, p.n_contacts), (d, nc), "{name}");
        assert_eq!(p.dim, *dim, "{name}: dimension of a file in this folder");
        let n = d * nc;
        assert_eq!(p.q.len(), n, "{name}: q length");
        assert_eq!(p.mu.len(), nc, "{name}: μ length");
        assert_eq!(
            p.mu_r.len(),
            if d == 5 { nc } else { 0 },
            "{name}: μ_r length"
        );
        assert!(p.q.iter().all(|v| v.is_finite()), "{name}: q not finite");
        assert!(
            p.mu.iter()
                .chain(&p.mu_r)
                .all(|v| v.is_finite() && *v >= 0.0),
            "{name}: μ / μ_r not finite and ≥ 0"
        );
        let w = &p.w;
        assert_eq!(w.dim, d, "{name}");
        assert_eq!(w.n_block_rows(), nc, "{name}");
        assert_eq!(w.blocks.len(), w.n_blocks() * d * d, "{name}");
        assert!(
            w.blocks.iter().all(|v| v.is_finite()),
            "{name}: W not finite"
        );
        for i in 0..nc {
            let cols = &w.cols[w.row_offsets[i]..w.row_offsets[i + 1]];
            assert!(
                cols.windows(2).all(|c| c[0] < c[1]),
                "{name}: row {i} unsorted"
            );
            assert!(w.get(i, i).is_some(), "{name}: diagonal block {i} missing");
        }
        println!(
            "{name}: d = {d}, nc = {nc}, {} storage, {} blocks",
            p.storage,
            w.n_blocks()
        );
        read_ok += 1;
    }
    assert_eq!(read_ok, 21, "expected 21 data files (14 fc3d + 7 rfc3d)");
}

#[test]
fn storage_types_are_the_ones_the_files_use() {
    assert_eq!(read("fc3d/FC3D_Example1.dat").storage, Storage::Dense);
    assert_eq!(
        read("fc3d/FC3D_Example1_SBM.dat").storage,
        Storage::SparseBlock
    );
    assert_eq!(
        read("fc3d/FrictionContact3D_1c.dat").storage,
        Storage::Dense
    );
    assert_eq!(
        read("rfc3d/rfc3d_sphere_from_grfc3d.dat").storage,
        Storage::Sparse
    );
}

#[test]
fn dense_matrix_is_read_column_major() {
    // FrictionContact3D_1c.dat (old blank-line layout): W printed as
    // 15 -1 -2 / -1 14 1 / -2 1 16, symmetric; Rover4396.dat is not
    // symmetric, so check it against the column-major reading directly.
    let p = read("fc3d/FrictionContact3D_1c.dat");
    assert_eq!(
        p.w.to_dense(),
        vec![15., -1., -2., -1., 14., 1., -2., 1., 16.]
    );
    assert_eq!(p.q, vec![-1.0, 2.0, 3.0]);
    assert_eq!(p.mu, vec![0.1]);

    let p = read("fc3d/Rover4396.dat");
    let t = text("fc3d/Rover4396.dat");
    let vals: Vec<f64> = t
        .split_whitespace()
        .skip(7)
        .take(36)
        .map(|s| s.parse().unwrap())
        .collect();
    let w = p.w.to_dense();
    for (k, v) in vals.iter().enumerate() {
        let (row, col) = (k % 6, k / 6);
        assert_eq!(w[row * 6 + col], *v, "value {k} is W({row}, {col})");
    }
}

// ---------------------------------------------------------------------------
// The same problem in two storages
// ---------------------------------------------------------------------------

/// |a − b| ≤ rel·max(|a|, |b|) + abs, entrywise.
fn assert_close_entrywise(what: &str, a: &[f64], b: &[f64], rel: f64, abs: f64) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        let tol = rel * x.abs().max(y.abs()) + abs;
        assert!(
            (x - y).abs() <= tol,
            "{what}[{k}]: {x:e} vs {y:e}, difference {:e} > tolerance {tol:e}",
            (x - y).abs()
        );
    }
}

fn assert_same_problem(a: &str, b: &str, rel: f64) {
    let (pa, pb) = (read(a), read(b));
    assert_ne!(
        pa.storage, pb.storage,
        "{a} and {b} should use different storages"
    );
    assert_eq!(
        (pa.dim, pa.n_contacts),
        (pb.dim, pb.n_contacts),
        "{a} vs {b}"
    );
    let (wa, wb) = (pa.w.to_dense(), pb.w.to_dense());
    let wmax = wa.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    // An entry printed with 6 significant digits is within 5e-6 relative;
    // the absolute floor covers entries that are zero in one file and a
    // rounding-level value (≤ 1e-12 of the largest entry) in the other.
    assert_close_entrywise(&format!("W of {a} vs {b}"), &wa, &wb, rel, 1e-12 * wmax);
    assert_close_entrywise(&format!("q of {a} vs {b}"), &pa.q, &pb.q, rel, 0.0);
    assert_close_entrywise(&format!("μ of {a} vs {b}"), &pa.mu, &pb.mu, rel, 0.0);
    assert_close_entrywise(&format!("μ_r of {a} vs {b}"), &pa.mu_r, &pb.mu_r, rel, 0.0);
}

#[test]
fn dense_and_sparse_block_files_of_example1_agree() {
    // Both printed with at least 7 significant digits of exact values.
    assert_same_problem(
        "fc3d/FC3D_Example1.dat",
        "fc3d/FC3D_Example1_SBM.dat",
        1e-15,
    );
}

#[test]
fn csparse_and_dense_files_of_the_rolling_sphere_agree() {
    assert_same_problem(
        "rfc3d/rfc3d_sphere_from_grfc3d.dat",
        "rfc3d/rfc3d_sphere_from_grfc3d_dense.dat",
        5e-6,
    );
}

// ---------------------------------------------------------------------------
// The 6-D embedding
// ---------------------------------------------------------------------------

#[test]
fn delassus_apply_of_embedded_r_is_w_r_plus_q_on_every_file() {
    for (path, _) in all_files() {
        let name = path.display();
        let p = SiconosProblem::read(&path).unwrap();
        let mut op = p.to_delassus();
        assert_eq!(op.n_contacts(), p.n_contacts, "{name}");
        assert_eq!(op.law(), FrictionLaw::DeSaxce, "{name}");
        for i in 0..p.n_contacts {
            let c = op.cone(i);
            assert_eq!(c.mu, p.mu[i], "{name}: μ of contact {i}");
            assert_eq!(c.rho, p.mu_r.get(i).copied().unwrap_or(0.0), "{name}");
            assert_eq!(c.sigma, 0.0, "{name}");
        }
        let missing: &[usize] = if p.dim == 3 { &[3, 4, 5] } else { &[3] };
        for (t, r) in trial_vectors(&p, 7).into_iter().enumerate() {
            assert_eq!(p.extract(&p.embed(&r)), r, "{name}: extract ∘ embed");
            let mut y = vec![[0.0; 6]; p.n_contacts];
            op.apply(&p.embed(&r), &mut y);
            let mut want = vec![0.0; r.len()];
            p.w_times(&r, &mut want);
            for (w, q) in want.iter_mut().zip(&p.q) {
                *w += q;
            }
            let got = p.extract(&y);
            let scale = norm(&want) + norm(&p.q) + 1e-300;
            let err = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(
                err <= 1e-13 * scale,
                "{name}, trial {t}: 6-D apply vs W r + q differ by {err:e} (scale {scale:e})"
            );
            for (i, yi) in y.iter().enumerate() {
                for &c in missing {
                    assert_eq!(yi[c], 0.0, "{name}: contact {i} component {c} must be 0");
                }
            }
        }
    }
}

#[test]
fn six_d_natural_map_residual_equals_siconos_error_on_every_file() {
    for (path, _) in all_files() {
        let name = path.display();
        let p = SiconosProblem::read(&path).unwrap();
        let mut op = p.to_delassus();
        for (t, r) in trial_vectors(&p, 11).into_iter().enumerate() {
            let gamma = p.embed(&r);
            let mut y = vec![[0.0; 6]; p.n_contacts];
            op.apply(&gamma, &mut y);
            let mut sum = 0.0;
            for i in 0..p.n_contacts {
                let c = op.cone(i);
                let mut yh = y[i];
                // De Saxcé: ŷ = y + (μ‖y_T‖ + ρ‖ω_R‖ + σ|ω_n|, 0, …)
                // (Acary & Bourrier 2021, eq. 63).
                yh[0] += c.mu * y[i][1].hypot(y[i][2])
                    + c.rho * y[i][4].hypot(y[i][5])
                    + c.sigma * y[i][3].abs();
                sum += natural_map_residual_sq(&gamma[i], &yh, &c);
            }
            let six_d = sum.sqrt();
            let e = p.error(&r);
            let tol = 1e-12 * e.abs.max(1e-300) + 1e-14 * (norm(&r) + norm(&p.q));
            assert!(
                (six_d - e.abs).abs() <= tol,
                "{name}, trial {t}: 6-D residual {six_d:e} vs Siconos error {:e} \
                 (difference {:e} > {tol:e})",
                e.abs,
                (six_d - e.abs).abs()
            );
            assert!(e.rel.is_finite() && e.rel >= 0.0, "{name}: rel = {}", e.rel);
        }
    }
}

#[test]
fn siconos_error_relative_measure_divides_by_largest_norm() {
    let p = read("fc3d/FC3D_Example1.dat");
    // r = 0: u = q, so rel = abs / ‖q‖.
    let e = p.error(&[0.0; 9]);
    let nq = norm(&p.q);
    assert!(e.abs > 0.0);
    assert!(
        (e.rel - e.abs / nq).abs() <= 1e-15 * e.rel,
        "{e:?}, ‖q‖ = {nq}"
    );
}

// ---------------------------------------------------------------------------
// Malformed input
// ---------------------------------------------------------------------------

/// Replaces line `line` (1-based) of `text` by `new`.
fn with_line(text: &str, line: usize, new: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines[line - 1] = new;
    lines.join("\n") + "\n"
}

fn parse_err(text: &str, file: &str) -> SiconosError {
    match SiconosProblem::parse(text, file) {
        Ok(_) => panic!("{file}: malformed input was accepted"),
        Err(e) => e,
    }
}

/// The error names `file`, line `line`, and contains `reason`.
fn assert_error_at(text: &str, file: &str, line: usize, reason: &str) {
    let e = parse_err(text, file);
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("{file}:{line}: ")),
        "expected an error at {file}:{line}, got: {msg}"
    );
    assert_eq!(e.line(), Some(line), "{msg}");
    assert!(msg.contains(reason), "expected {reason:?} in: {msg}");
}

#[test]
fn malformed_number_in_q_is_reported_at_its_line() {
    let t = text("rfc3d/RFC3D_sphere_1.dat");
    let bad = with_line(&t, 12, "-8.9 0.19 0 abc 0");
    assert_error_at(
        &bad,
        "rfc3d/x.dat",
        12,
        "expected a number for q[3], found \"abc\"",
    );
}

#[test]
fn end_of_file_inside_mu_names_how_many_values_were_read() {
    let t = text("fc3d/FC3D_Example1.dat");
    // Line 17 holds the 3 values of μ; keep 2 and drop the trailing flag.
    let lines: Vec<&str> = t.lines().take(16).collect();
    let bad = lines.join("\n") + "\n0.1 0.1\n";
    assert_error_at(
        &bad,
        "ex.dat",
        17,
        "unexpected end of file while reading μ (got 2 of 3 values)",
    );
}

#[test]
fn unsupported_storage_type_and_dimension_are_rejected() {
    let t = text("fc3d/FC3D_Example1.dat");
    assert_error_at(
        &with_line(&t, 3, "7"),
        "a.dat",
        3,
        "unsupported storage type 7",
    );
    assert_error_at(
        &with_line(&t, 1, "4"),
        "a.dat",
        1,
        "unsupported dimension 4",
    );
    assert_error_at(&with_line(&t, 4, "10"), "a.dat", 4, "W has 10 rows");
}

#[test]
fn negative_or_non_finite_values_are_rejected_at_their_line() {
    let t = text("fc3d/FC3D_Example1.dat");
    assert_error_at(
        &with_line(&t, 17, "0.1 -0.2 0.1"),
        "a.dat",
        17,
        "μ[1] = -0.2 is negative",
    );
    let row = "1 0 0 0 NaN 0 0 0 0";
    assert_error_at(&with_line(&t, 8, row), "a.dat", 8, "W(4, 1) is not finite");
    assert_error_at(
        &with_line(&t, 16, "-1 1 3 -1 1 inf -1 1 3"),
        "a.dat",
        16,
        "q[5] is not finite",
    );
    // Rolling coefficient (rfc3d), line 14.
    let t = text("rfc3d/RFC3D_sphere_1.dat");
    assert_error_at(
        &with_line(&t, 14, "-0.5"),
        "r.dat",
        14,
        "μ_r[0] = -0.5 is negative",
    );
    // Old blank-line layout: line numbers count the blank lines.
    let t = text("fc3d/FrictionContact3D_1c.dat");
    assert_error_at(
        &with_line(&t, 26, "-0.1"),
        "old.dat",
        26,
        "μ[0] = -0.1 is negative",
    );
}

#[test]
fn trailing_garbage_is_rejected_but_the_legacy_flag_is_accepted() {
    let t = text("fc3d/FC3D_Example1.dat");
    assert!(SiconosProblem::parse(&t, "ok.dat").is_ok());
    assert_error_at(&(t.clone() + "xyz\n"), "a.dat", 19, "trailing garbage");
    assert_error_at(&with_line(&t, 18, "2"), "a.dat", 18, "trailing garbage");
    assert_error_at(&with_line(&t, 18, "0 0"), "a.dat", 18, "trailing garbage");
}

#[test]
fn inconsistent_sparse_block_sizes_are_rejected() {
    let t = text("fc3d/FC3D_Example1_SBM.dat");
    assert_error_at(
        &with_line(&t, 10, "3 6 10"),
        "s.dat",
        10,
        "inconsistent block sizes",
    );
    assert_error_at(
        &with_line(&t, 9, "2 4 9"),
        "s.dat",
        9,
        "inconsistent block sizes",
    );
    assert_error_at(&with_line(&t, 14, "0 1 7"), "s.dat", 14, "block column 7");
    assert_error_at(
        &with_line(&t, 15, "5"),
        "s.dat",
        15,
        "expected the number of block 0",
    );
}

#[test]
fn malformed_csparse_dump_is_rejected_at_its_line() {
    let t = text("rfc3d/rfc3d_sphere_from_grfc3d.dat");
    assert_error_at(
        &with_line(&t, 42, "    col 4 : locations 30 to 39"),
        "c.dat",
        42,
        "expected column 3, found column 4",
    );
    assert_error_at(
        &with_line(&t, 42, "    col 3 : locations 31 to 39"),
        "c.dat",
        42,
        "column 3 has locations 31 to 39",
    );
    assert_error_at(
        &with_line(&t, 43, "      12 : 1.0"),
        "c.dat",
        43,
        "row index 12",
    );
    assert_error_at(
        &with_line(&t, 7, "Not a banner"),
        "c.dat",
        7,
        "CSparse banner",
    );
    assert_error_at(
        &with_line(&t, 8, "12-by-10, nzmax: 100"),
        "c.dat",
        8,
        "12-by-10",
    );
}

#[test]
fn io_error_names_the_file() {
    let e = SiconosProblem::read(Path::new("no/such/file.dat")).unwrap_err();
    assert!(e.to_string().starts_with("no/such/file.dat: "), "{e}");
    assert_eq!(e.line(), None);
}

/// Byte offset of the start of the last token that the problem needs (the
/// last μ or μ_r value; a trailing legacy flag 0/1 is optional).
fn last_required_token_start(t: &str) -> usize {
    let mut starts: Vec<(usize, &str)> = Vec::new();
    let mut in_tok = false;
    for (i, ch) in t.char_indices() {
        if ch.is_whitespace() {
            in_tok = false;
        } else if !in_tok {
            in_tok = true;
            let end = t[i..].find(char::is_whitespace).map_or(t.len(), |e| i + e);
            starts.push((i, &t[i..end]));
        }
    }
    let (last, tok) = starts[starts.len() - 1];
    if tok == "0" || tok == "1" {
        starts[starts.len() - 2].0
    } else {
        last
    }
}

/// Cuts `t` at `cut` (a char boundary) and checks: an error before the last
/// required token, and never a panic (a panic fails the test by itself).
fn check_truncation(name: &str, t: &str, cut: usize, last: usize) {
    match SiconosProblem::parse(&t[..cut], name) {
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.starts_with(&format!("{name}:")), "{msg}");
        }
        Ok(p) => assert!(
            cut > last,
            "{name} cut at byte {cut} (of {}) was accepted as a problem with {} contacts",
            t.len(),
            p.n_contacts
        ),
    }
}

#[test]
fn truncated_files_give_errors_and_never_panic() {
    // Every byte of the small files, every line end of the medium ones.
    for rel in [
        "fc3d/FrictionContact3D_1c.dat",
        "fc3d/FC3D_Example1_SBM.dat",
        "fc3d/Rover11035.dat",
        "rfc3d/RFC3D_sphere_1.dat",
        "rfc3d/rfc3d_sphere_from_grfc3d.dat",
    ] {
        let t = text(rel);
        let last = last_required_token_start(&t);
        for cut in (0..=t.len()).filter(|&c| t.is_char_boundary(c)) {
            check_truncation(rel, &t, cut, last);
        }
    }
    for rel in [
        "fc3d/Confeti-ex13-4contact-Fc3D-SBM.dat",
        "fc3d/OneObject-i1028-138.hdf5.dat",
        "fc3d/Rover1040.dat",
        "rfc3d/RFC3D_cube_1.dat",
        "rfc3d/rockfall_14_25792.dat",
    ] {
        let t = text(rel);
        let last = last_required_token_start(&t);
        let mut cuts: Vec<usize> = t.match_indices('\n').map(|(i, _)| i).collect();
        cuts.extend(t.match_indices('\n').map(|(i, _)| i + 1));
        cuts.push(0);
        for cut in cuts {
            check_truncation(rel, &t, cut.min(t.len()), last);
        }
    }
}

#[test]
fn corrupted_tokens_give_errors_or_valid_problems_never_panics() {
    let junk = [
        "abc",
        "-1",
        "1e400",
        "nan",
        "-inf",
        "",
        "0",
        "99999999999999999999",
        "3.5",
        ":",
        "col",
        "-0",
        "1e+06",
        "to",
    ];
    let mut rng = Lcg(2024);
    for rel in [
        "fc3d/FC3D_Example1_SBM.dat",
        "fc3d/FrictionContact3D_1c.dat",
        "rfc3d/rfc3d_sphere_from_grfc3d.dat",
        "rfc3d/RFC3D_sphere_2.dat",
    ] {
        let t = text(rel);
        let tokens: Vec<&str> = t.split_whitespace().collect();
        for _ in 0..400 {
            let k = rng.below(tokens.len());
            let j = junk[rng.below(junk.len())];
            let mut mutated: Vec<&str> = tokens.clone();
            mutated[k] = j;
            let s = mutated.join("\n");
            if let Err(e) = SiconosProblem::parse(&s, rel) {
                assert!(e.to_string().starts_with(&format!("{rel}:")), "{e}");
            }
        }
    }
}
