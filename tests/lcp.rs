//! Lemke's method (`repose::lcp`) against independent answers: random
//! P-matrix LCPs against the enumeration of every complementary basis (a
//! P-matrix LCP has exactly one solution), and frictionless contact
//! problems of a real pile against the iterative solvers.

use repose::lcp::{lemke, LemkeOutcome};
use repose::problem::{BodyDelassus, Delassus};
use repose::scene::Scene;
use repose::solver::{self, SolverMethod, SolverSettings, Workspace};
use repose::step::Stepper;

/// A deterministic stream of numbers in [−1, 1) (splitmix64).
struct Stream(u64);

impl Stream {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
        (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// M = AᵀA + 0.1 I + (B − Bᵀ): positive definite, not symmetric, so a
/// P-matrix.
fn p_matrix(n: usize, s: &mut Stream) -> Vec<f64> {
    let a: Vec<f64> = (0..n * n).map(|_| s.next()).collect();
    let b: Vec<f64> = (0..n * n).map(|_| s.next()).collect();
    let mut m = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let ata: f64 = (0..n).map(|k| a[k * n + i] * a[k * n + j]).sum();
            m[i * n + j] = ata + b[i * n + j] - b[j * n + i] + if i == j { 0.1 } else { 0.0 };
        }
    }
    m
}

/// Solves the square system A x = b (Gaussian elimination with partial
/// pivoting); `None` when singular.
fn solve_dense(mut a: Vec<f64>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|&x, &y| a[x * n + c].abs().total_cmp(&a[y * n + c].abs()))?;
        if a[p * n + c].abs() < 1e-14 {
            return None;
        }
        for k in 0..n {
            a.swap(c * n + k, p * n + k);
        }
        b.swap(c, p);
        for r in c + 1..n {
            let f = a[r * n + c] / a[c * n + c];
            for k in c..n {
                a[r * n + k] -= f * a[c * n + k];
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|k| a[r * n + k] * x[k]).sum();
        x[r] = (b[r] - s) / a[r * n + r];
    }
    Some(x)
}

/// The solution by enumerating the 2ⁿ complementary bases (z_i free for i
/// in the set, w_i free otherwise).
fn enumerate(m: &[f64], q: &[f64]) -> Vec<Vec<f64>> {
    let n = q.len();
    let mut found = Vec::new();
    for set in 0u32..(1 << n) {
        let idx: Vec<usize> = (0..n).filter(|i| set >> i & 1 == 1).collect();
        let k = idx.len();
        let a: Vec<f64> = idx
            .iter()
            .flat_map(|&i| idx.iter().map(move |&j| m[i * n + j]))
            .collect();
        let b: Vec<f64> = idx.iter().map(|&i| -q[i]).collect();
        let Some(zs) = (if k == 0 {
            Some(Vec::new())
        } else {
            solve_dense(a, b)
        }) else {
            continue;
        };
        let mut z = vec![0.0; n];
        for (&i, &v) in idx.iter().zip(&zs) {
            z[i] = v;
        }
        let ok = (0..n).all(|i| {
            let w = q[i] + (0..n).map(|j| m[i * n + j] * z[j]).sum::<f64>();
            z[i] >= -1e-10 && w >= -1e-10
        });
        if ok {
            found.push(z);
        }
    }
    found
}

/// 200 random P-matrix LCPs of 2 to 8 unknowns: Lemke's solution is the
/// one the enumeration of all bases finds (to 1e-9), and larger ones
/// (n = 40) satisfy the complementarity conditions to 1e-9.
#[test]
fn p_matrix_lcps_are_solved_as_enumeration_says() {
    let mut s = Stream(7);
    let mut worst: f64 = 0.0;
    for case in 0..200 {
        let n = 2 + case % 7;
        let m = p_matrix(n, &mut s);
        let q: Vec<f64> = (0..n).map(|_| 2.0 * s.next()).collect();
        let out = lemke(&m, &q, 50 * n);
        let z = out
            .solution()
            .unwrap_or_else(|| panic!("case {case} (n = {n}): {out:?}"));
        let all = enumerate(&m, &q);
        assert_eq!(all.len(), 1, "case {case}: a P-matrix LCP has one solution");
        let d = z
            .iter()
            .zip(&all[0])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        worst = worst.max(d);
        assert!(d <= 1e-9, "case {case} (n = {n}): z {z:?} vs {:?}", all[0]);
    }
    for case in 0..5 {
        let n = 40;
        let m = p_matrix(n, &mut s);
        let q: Vec<f64> = (0..n).map(|_| 2.0 * s.next()).collect();
        let LemkeOutcome::Solved { z, w, pivots } = lemke(&m, &q, 50 * n) else {
            panic!("n = 40, case {case}: not solved");
        };
        for i in 0..n {
            assert!(z[i] >= 0.0 && w[i] >= -1e-9 && (z[i] * w[i]).abs() <= 1e-9);
        }
        eprintln!("OBSERVED n = 40, case {case}: {pivots} pivots");
    }
    eprintln!("OBSERVED worst difference from enumeration over 200 LCPs: {worst:.2e}");
}

/// A frictionless pile (27 jittered spheres settled 0.3 s in a box,
/// μ = ρ = σ = 0): the
/// normal rows of its step problem are the LCP w = N_nn γ_n + r_n. Lemke's
/// γ_n and the post-step normal velocities agree with the interior-point
/// and APGD solutions of the same problem (6-D cone with zero friction)
/// to 1e-8 relative.
#[test]
fn frictionless_contact_problems_agree_with_the_iterative_solvers() {
    let text = "Scene(version: 1, time_step: 1e-3, duration: 1.0,
        materials: [(name: \"m\", friction: 0.0, rolling: 0.0, spinning: 0.0, density: 2500.0)],
        spheres: [Lattice(origin: (-0.021, -0.021, 0.0101), count: (3, 3, 3), spacing: 0.021,
                          radius: 0.01, jitter: 0.02, seed: 3)],
        boundaries: [Box(center: (0, 0, 0.1), half_extents: (0.0315, 0.0315, 0.1), open_top: true)])";
    let mut w = Scene::from_str(text, "frictionless pile", &[])
        .and_then(|s| s.build())
        .expect("scene");
    let mut st = Stepper::new();
    // Settled for 0.3 s: the spheres rest on each other, most contacts
    // carry load (active in the LCP).
    for _ in 0..300 {
        st.step(&mut w).expect("a step");
    }
    let problem = st.last_problem().clone();
    let n = problem.n_contacts();
    assert!(n > 20, "only {n} contacts");
    let op = BodyDelassus::new(&problem);
    let ex = op.explicit();
    // N_nn from the blocks' (0, 0) entries, r_n.
    let mut m = vec![0.0; n * n];
    for i in 0..n {
        for k in ex.row_offsets[i]..ex.row_offsets[i + 1] {
            m[i * n + ex.cols[k]] = ex.blocks[k][0][0];
        }
    }
    let q: Vec<f64> = ex.r.iter().map(|r| r[0]).collect();
    let out = lemke(&m, &q, 50 * n);
    let LemkeOutcome::Solved { z, w: wn, pivots } = out else {
        panic!("frictionless problem: {out:?}");
    };
    let active = z.iter().filter(|&&v| v > 0.0).count();
    assert!(active > 20, "only {active} of {n} contacts carry load");
    let scale = z.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let vscale = q.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for method in [SolverMethod::InteriorPoint, SolverMethod::Apgd] {
        let mut op = BodyDelassus::new(&problem);
        let mut gamma = vec![[0.0; 6]; n];
        let s = SolverSettings {
            method,
            max_iterations: 200_000,
            tolerance: 1e-12,
            ..Default::default()
        };
        let stats = solver::solve(&mut op, &mut gamma, &s, &mut Workspace::default());
        let mut y = vec![[0.0; 6]; n];
        op.apply(&gamma, &mut y);
        let dz = (0..n)
            .map(|i| (gamma[i][0] - z[i]).abs())
            .fold(0.0, f64::max);
        let dy = (0..n).map(|i| (y[i][0] - wn[i]).abs()).fold(0.0, f64::max);
        eprintln!(
            "OBSERVED {n} contacts, Lemke {pivots} pivots; {method}: {} iterations, residual {:.1e}; max |Δγ_n| {dz:.2e} of {scale:.2e}, max |Δy_n| {dy:.2e} of {vscale:.2e}",
            stats.iterations, stats.residual_rel
        );
        assert!(
            dz <= 1e-8 * scale,
            "{method}: impulses differ by {dz:e} (scale {scale:e})"
        );
        assert!(
            dy <= 1e-8 * vscale,
            "{method}: normal velocities differ by {dy:e} (scale {vscale:e})"
        );
    }
}

/// The small 3-D Siconos problems (Coulomb friction, De Saxcé's law)
/// faceted into the pyramid LCP and solved by Lemke's method: the
/// impulses solve the original cone problem up to the faceting: the
/// Siconos error measure of the faceted solution on the true cone problem
/// is below 0.02 at k = 32 directions, never grows as the polygon refines
/// (k = 4, 8, 16, 32), and falls with it on the problems that slide off
/// the polygon's vertices (1c: 1.1e-3 → 9.5e-6; Example1: 9.7e-3 → 2.1e-3;
/// Confeti stays at 9.0e-4 for every k). (NESpheres_10_1 ends on a ray at
/// k = 8 and is left out: for this faceted matrix, which is not
/// positive semidefinite, a ray does not prove the problem infeasible;
/// not investigated further.)
#[test]
fn faceted_siconos_problems_approach_the_cone_solution_as_k_grows() {
    use repose::siconos::SiconosProblem;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/siconos/fc3d");
    for name in [
        "FrictionContact3D_1c.dat",
        "FC3D_Example1.dat",
        "Confeti-ex13-4contact-Fc3D-SBM.dat",
        "Rover4144.dat",
    ] {
        let p = SiconosProblem::read(&dir.join(name)).expect("problem");
        let n = p.n_contacts;
        let w = p.w.to_dense();
        let mut errors = Vec::new();
        for k in [4, 8, 16, 32] {
            let (m, q) = repose::lcp::pyramid_lcp(&w, &p.q, &p.mu, k);
            let out = lemke(&m, &q, 100 * q.len());
            let z = out
                .solution()
                .unwrap_or_else(|| panic!("{name}, k = {k}: {out:?}"));
            let r = repose::lcp::pyramid_impulses(z, n, k);
            errors.push((k, p.error(&r).rel));
        }
        eprintln!(
            "OBSERVED {name} ({n} contacts): Siconos error of the faceted solution {errors:?}"
        );
        let e32 = errors[3].1;
        assert!(e32 <= 0.02, "{name}: error {e32} at k = 32");
        for pair in errors.windows(2) {
            assert!(
                pair[1].1 <= pair[0].1 * (1.0 + 1e-9) + 1e-12,
                "{name}: the error grew from k = {} to k = {}: {errors:?}",
                pair[0].0,
                pair[1].0
            );
        }
    }
}
