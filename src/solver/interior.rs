//! An interior-point method on the cone complementarity problem: the
//! convex QP of seed 000 eq. 42,
//!
//! ```text
//! min ½ γᵀNγ + rᵀγ   over γ ∈ Y = Π_i K_i,
//! K_i = {μ γ_n ≥ ‖γ_t‖} ∩ {σ γ_n ≥ |τ_n|} ∩ {ρ γ_n ≥ ‖τ_r‖}          (eq. 31)
//! ```
//!
//! handed to a primal–dual interior-point solver for conic programs
//! (`clarabel`, sparse LDLᵀ of the KKT system). Each K_i is written as
//! three second-order cones that share γ_n — (μγ_n, γ_u, γ_w) ∈ SOC₃,
//! (σγ_n, τ_n) ∈ SOC₂, (ργ_n, τ_u, τ_w) ∈ SOC₃ — a zero cone for the rows of
//! a coefficient that is 0, and γ_n ≥ 0. The KKT conditions of this program
//! are the CCP itself (y = Nγ + r ∈ −Y°, γ ⊥ y), so its solution is the
//! step's impulses, to the solver's tolerance, whatever the conditioning:
//! an interior-point method needs some tens of Newton steps where the
//! first-order methods need thousands on ill-conditioned piles (tall
//! stacks, ρ ≫ R; `tests/data/hard/`).
//!
//! Scaling: the program is posed in z = B^-½ γ (B the Jacobi metric of
//! [`Metric`](super::Metric), so that P = B^½ N B^½ has eigenvalues of order
//! 1 and forces and torques are balanced) and divided by ‖B^½ r‖∞ (the
//! solution is positively homogeneous in r).
//!
//! **Associated law only** ([`SolverMethod::supports`](super::SolverMethod::supports)):
//! the De Saxcé problem is not a convex program. Run on one, the solve
//! returns unconverged at once, with the residual of the start.
//!
//! `N` is assembled explicitly ([`Delassus::explicit`]) and factorised once
//! per Newton step, and that cost grows faster than the contacts (measured
//! on `repose_small`: 48 ms a solve at 220 contacts, 1.3 s at 1,300): the
//! method is for hard problems of up to about a thousand contacts.
//! `iterations` counts Newton steps.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};

use super::{begin, check_stop, SolveStats, SolverSettings, Workspace};
use crate::material::FrictionLaw;
use crate::problem::{Delassus, Vec6};

/// Solves by the interior-point method from scratch (the warm start in
/// `gamma` is not used: interior-point methods start from the cone's
/// centre), overwriting `gamma` with the result.
pub fn solve<D: Delassus + Sync>(
    op: &mut D,
    gamma: &mut [Vec6],
    s: &SolverSettings,
    ws: &mut Workspace,
) -> SolveStats {
    if let Err(done) = begin(op, gamma, s, ws) {
        return done;
    }
    let mut y = std::mem::take(&mut ws.y);
    let mut stats = SolveStats::default();
    let mut newton = 0;
    if ws.metric.law == FrictionLaw::Associated {
        let explicit = op.explicit();
        let program = Program::new(&explicit, &ws.metric.scales, &ws.metric.cones);
        if let Some((g, its)) = program.solve(&explicit.r, s.tolerance) {
            // Onto the cones exactly (the interior-point answer may sit a
            // tolerance outside).
            for (i, (gi, g)) in gamma.iter_mut().zip(&g).enumerate() {
                *gi = ws.metric.project(i, g);
            }
            newton = its;
        }
    }
    op.apply(gamma, &mut y);
    // check_stop's "last iteration" test counts iterations, which are
    // Newton steps here: pass one that is never the last.
    check_stop(op, s, ws, usize::MAX, gamma, &y, &mut stats);
    stats.iterations = newton;
    ws.y = y;
    stats
}

/// The conic program of one problem, in the scaled variables z = B^-½ γ.
struct Program {
    /// P = B^½ N B^½, upper triangle.
    p: CscMatrix<f64>,
    /// The constraint rows A (A z + s = 0, s in the cones).
    a: CscMatrix<f64>,
    cones: Vec<SupportedConeT<f64>>,
    /// √b per unknown (6 per contact).
    root_b: Vec<f64>,
}

impl Program {
    fn new(
        op: &crate::problem::explicit::ExplicitDelassus,
        scales: &[(f64, f64)],
        cone: &[crate::material::ConeCoeffs],
    ) -> Self {
        let n = op.r.len();
        let root_b: Vec<f64> = (0..6 * n)
            .map(|k| {
                let (bf, bt) = scales[k / 6];
                if k % 6 < 3 {
                    bf.sqrt()
                } else {
                    bt.sqrt()
                }
            })
            .collect();
        // P column by column: column 6J + c, rows 6I + r ≤ 6J + c, from the
        // blocks of row J (N is symmetric: N_IJ = N_JIᵀ).
        let mut colptr = vec![0];
        let (mut rowval, mut nzval) = (Vec::new(), Vec::new());
        for jb in 0..n {
            for c in 0..6 {
                let col = 6 * jb + c;
                for k in op.row_offsets[jb]..op.row_offsets[jb + 1] {
                    let ib = op.cols[k];
                    for r in 0..6 {
                        let row = 6 * ib + r;
                        let v = op.blocks[k][c][r];
                        if row <= col && v != 0.0 {
                            rowval.push(row);
                            nzval.push(v * root_b[row] * root_b[col]);
                        }
                    }
                }
                colptr.push(rowval.len());
            }
        }
        let p = CscMatrix::new(6 * n, 6 * n, colptr, rowval, nzval);
        // A: per contact γ_n ≥ 0, then each friction cone (or zero rows).
        let (mut ri, mut ci, mut vi) = (Vec::new(), Vec::new(), Vec::new());
        let mut cones = Vec::new();
        let mut row = 0;
        let mut put = |col: usize, v: f64| {
            ri.push(row);
            ci.push(col);
            vi.push(v);
            row += 1;
        };
        for (i, c) in cone.iter().enumerate() {
            let (bf, bt) = scales[i];
            let ratio = (bf / bt).sqrt();
            let base = 6 * i;
            put(base, -1.0);
            cones.push(SupportedConeT::NonnegativeConeT(1));
            for (coef, comps) in [
                (c.mu, &[1usize, 2][..]),
                (c.sigma * ratio, &[3][..]),
                (c.rho * ratio, &[4, 5][..]),
            ] {
                if coef > 0.0 {
                    // (coef z_n, z_comps) ∈ SOC, rows scaled to unit size.
                    let scale = coef.max(1.0);
                    put(base, -coef / scale);
                    for &j in comps {
                        put(base + j, -1.0 / scale);
                    }
                    cones.push(SupportedConeT::SecondOrderConeT(comps.len() + 1));
                } else {
                    for &j in comps {
                        put(base + j, -1.0);
                    }
                    cones.push(SupportedConeT::ZeroConeT(comps.len()));
                }
            }
        }
        let a = CscMatrix::new_from_triplets(row, 6 * n, ri, ci, vi);
        Program {
            p,
            a,
            cones,
            root_b,
        }
    }

    /// Solves the program of r; the impulses and the Newton steps taken,
    /// or `None` when the conic solver gives no usable answer.
    fn solve(&self, r: &[Vec6], tolerance: f64) -> Option<(Vec<Vec6>, usize)> {
        let n = r.len();
        let mut q: Vec<f64> = (0..6 * n)
            .map(|k| r[k / 6][k % 6] * self.root_b[k])
            .collect();
        let scale = q.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if scale == 0.0 {
            return Some((vec![[0.0; 6]; n], 0));
        }
        for v in &mut q {
            *v /= scale;
        }
        let b = vec![0.0; self.a.m];
        // The natural-map residual of an interior-point answer is some
        // hundred times its duality gap on stiff piles (measured on
        // tests/data/hard/): ask for 10⁻³ of the tolerance.
        let tol = (1e-3 * tolerance).clamp(1e-12, 1e-8);
        let settings = DefaultSettings {
            verbose: false,
            max_iter: 200,
            tol_gap_abs: tol,
            tol_gap_rel: tol,
            tol_feas: tol,
            tol_ktratio: tol.sqrt(),
            ..DefaultSettings::default()
        };
        let mut solver =
            DefaultSolver::new(&self.p, &q, &self.a, &b, &self.cones, settings).ok()?;
        solver.solve();
        let sol = &solver.solution;
        if !matches!(
            sol.status,
            SolverStatus::Solved
                | SolverStatus::AlmostSolved
                | SolverStatus::MaxIterations
                | SolverStatus::InsufficientProgress
        ) || sol.x.iter().any(|v| !v.is_finite())
        {
            return None;
        }
        let g = (0..n)
            .map(|i| std::array::from_fn(|c| sol.x[6 * i + c] * self.root_b[6 * i + c] * scale))
            .collect();
        Some((g, sol.iterations as usize))
    }
}
