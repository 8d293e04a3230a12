//! The contact problem and the projected Jacobi solver, checked as maths:
//! the matrix-free Delassus operator is the symmetric positive semidefinite
//! N = Dᵀ M⁻¹ D, and converged impulses satisfy the cone complementarity
//! conditions of Tasora & Anitescu 2013, eq. 40.

mod common;

use common::pile_problem;
use repose::cone;
use repose::problem::{BodyDelassus, Delassus, Vec6};
use repose::solver::SolverSettings;
use repose::solver::{jacobi, Workspace};

fn random_gamma(n: usize, seed: u64) -> Vec<Vec6> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            let mut g = [0.0; 6];
            for x in &mut g {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                *x = (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            }
            g
        })
        .collect()
}

fn dot(a: &[Vec6], b: &[Vec6]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (0..6).map(|k| x[k] * y[k]).sum::<f64>())
        .sum()
}

#[test]
fn delassus_operator_is_symmetric_positive_semidefinite() {
    let p = pile_problem(200, 0.001, 0.001);
    let n = p.n_contacts();
    let mut op = BodyDelassus::new(&p);
    let zero = vec![[0.0; 6]; n];
    let mut r = zero.clone();
    op.apply(&zero, &mut r);
    let lin = |op: &mut BodyDelassus, x: &[Vec6]| {
        let mut y = zero.clone();
        op.apply(x, &mut y);
        y.iter_mut()
            .zip(&r)
            .for_each(|(a, b)| (0..6).for_each(|k| a[k] -= b[k]));
        y
    };
    for seed in 1..6 {
        let x = random_gamma(n, seed);
        let z = random_gamma(n, seed + 100);
        let (nx, nz) = (lin(&mut op, &x), lin(&mut op, &z));
        let (a, b) = (dot(&nx, &z), dot(&x, &nz));
        assert!(
            (a - b).abs() <= 1e-9 * a.abs().max(b.abs()),
            "(Nx)·z = {a} but x·(Nz) = {b}"
        );
        let q = dot(&x, &nx);
        assert!(q >= -1e-12 * dot(&x, &x), "xᵀNx = {q} < 0");
    }
}

#[test]
fn diagonal_blocks_equal_the_operator_restricted_to_one_contact() {
    let p = pile_problem(100, 0.001, 0.001);
    let n = p.n_contacts();
    let mut op = BodyDelassus::new(&p);
    let zero = vec![[0.0; 6]; n];
    let mut r = zero.clone();
    op.apply(&zero, &mut r);
    for i in [0, n / 3, n - 1] {
        let blk = op.diag_block(i);
        for c in 0..6 {
            let mut e = zero.clone();
            e[i][c] = 1.0;
            let mut y = zero.clone();
            op.apply(&e, &mut y);
            for row in 0..6 {
                let want = y[i][row] - r[i][row];
                assert!(
                    (blk[row][c] - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "contact {i}: N_ii[{row}][{c}] = {} but the operator gives {want}",
                    blk[row][c]
                );
            }
        }
    }
}

/// Converged impulses satisfy γ ∈ C, u = Nγ + r ∈ C* (the dual cone) and
/// γ·u = 0 per contact, to a tolerance scaled by the problem's size.
fn assert_ccp_solution(rho: f64, sigma: f64) {
    let p = pile_problem(64, rho, sigma);
    let n = p.n_contacts();
    let mut op = BodyDelassus::new(&p);
    let mut gamma = vec![[0.0; 6]; n];
    let s = SolverSettings {
        max_iterations: 100_000,
        tolerance: 1e-10,
        ..Default::default()
    };
    let stats = jacobi::solve(&mut op, &mut gamma, &s, &mut Workspace::default());
    assert!(stats.converged, "Jacobi did not converge: {stats:?}");
    let mut u = vec![[0.0; 6]; n];
    op.apply(&gamma, &mut u);
    let gscale = gamma.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    let uscale = u.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    for i in 0..n {
        let c = p.cone[i];
        assert!(
            cone::is_inside(&gamma[i], &c, 1e-9),
            "contact {i}: γ = {:?} outside the cone {c:?}",
            gamma[i]
        );
        // u ∈ C* ⇔ Π_C(−u) = 0 (−u lies in the polar cone).
        let neg: Vec6 = u[i].map(|x| -x);
        let pr = cone::project(&neg, &c);
        let pn = pr.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!(
            pn <= 1e-6 * uscale,
            "contact {i}: u = {:?} is not in the dual cone (|Π_C(−u)| = {pn:e})",
            u[i]
        );
        let comp: f64 = (0..6).map(|k| gamma[i][k] * u[i][k]).sum();
        assert!(
            comp.abs() <= 1e-6 * gscale * uscale,
            "contact {i}: complementarity γ·u = {comp:e} (scale {:e})",
            gscale * uscale
        );
    }
}

#[test]
fn jacobi_solution_satisfies_cone_complementarity_sliding_only() {
    assert_ccp_solution(0.0, 0.0);
}

#[test]
fn jacobi_solution_satisfies_cone_complementarity_with_rolling_and_spinning() {
    assert_ccp_solution(0.002, 0.001);
}

#[test]
fn jacobi_residual_decreases_with_iterations() {
    let p = pile_problem(300, 0.001, 0.001);
    let n = p.n_contacts();
    let mut res = Vec::new();
    for iters in [10, 100, 1000] {
        let mut op = BodyDelassus::new(&p);
        let mut gamma = vec![[0.0; 6]; n];
        let s = SolverSettings {
            max_iterations: iters,
            tolerance: 0.0,
            ..Default::default()
        };
        let st = jacobi::solve(&mut op, &mut gamma, &s, &mut Workspace::default());
        assert_eq!(st.iterations, iters);
        res.push(st.residual_rel);
    }
    assert!(
        res[1] < res[0] && res[2] < 0.1 * res[1],
        "relative residuals after 10/100/1000 iterations: {res:?}"
    );
}
