//! An interior-point method on the cone complementarity problem: the
//! convex QP of Tasora & Anitescu 2013, eq. 42,
//!
//! ```text
//! min ½ γᵀNγ + rᵀγ   over γ ∈ Y = Π_i K_i,
//! K_i = {μ γ_n ≥ ‖γ_t‖} ∩ {σ γ_n ≥ |τ_n|} ∩ {ρ γ_n ≥ ‖τ_r‖}          (eq. 31)
//! ```
//!
//! solved by a primal–dual interior-point method for conic programs. Each
//! K_i is written as three second-order cones that share γ_n — (μγ_n, γ_u,
//! γ_w) ∈ SOC₃, (σγ_n, τ_n) ∈ SOC₂, (ργ_n, τ_u, τ_w) ∈ SOC₃ — a zero cone
//! for the rows of a coefficient that is 0, and γ_n ≥ 0. The KKT
//! conditions of this program are the CCP itself (y = Nγ + r ∈ −Y°, γ ⊥
//! y), so its solution is the step's impulses, to the solver's tolerance,
//! whatever the conditioning: an interior-point method needs some tens of
//! Newton steps where the first-order methods need thousands on
//! ill-conditioned piles (tall stacks, ρ ≫ R; `tests/data/hard/`).
//!
//! Scaling: the program is posed in z = B^-½ γ (B the Jacobi metric of
//! [`Metric`](super::Metric), so that P = B^½ N B^½ has eigenvalues of order
//! 1 and forces and torques are balanced) and divided by ‖B^½ r‖∞ (the
//! solution is positively homogeneous in r).
//!
//! **The De Saxcé law** is not a convex program, but it is one for a fixed
//! shift s of the normal velocities (Acary & Cadoux 2011, §2.2: the problem
//! (8) with u + E s, whose KKT conditions are (7)), and its solution is the
//! wanted one where s is a fixed point of s ↦ g(y(s)) (Acary & Cadoux 2011,
//! eqs. 9–10; here g is the shift of the 6-D cone of Acary & Bourrier 2021,
//! μ‖y_t‖ + σ|y_s| + ρ‖y_R‖,
//! [`modified_velocity`](super::modified_velocity)). s enters only the
//! linear term: q_n,i = √b_f (r_n,i + s_i).
//!
//! # The path: the shift re-evaluated at every Newton step
//!
//! The solve follows one interior-point path (`solver::conic`, our
//! own primal–dual method with Nesterov–Todd scaling and Mehrotra's
//! corrector) and, after every Newton step, projects the iterate's
//! impulses onto the cones, computes their velocities y = Nγ + r (one
//! apply), stops if the natural-map residual meets the tolerance, and
//! otherwise sets s ← g(y) in q for the next step. The fixed point on s
//! and the barrier's path are then followed together, in one sequence of
//! Newton steps; the change of q shows up in the next step's dual
//! residual, which an infeasible-start method reduces like any other (the
//! "update of s" of the interior-point solvers in Siconos' global friction
//! problems). Solving each shift's program to the end instead (the
//! fallback below) spends 20–30 Newton steps a program on shifts that are
//! about to change.
//!
//! The first shift is 0, or, with [`SolverSettings::shift_from_start`] (a
//! fallback, started from the first method's answer), g of the start's
//! velocities. Such a shift is close to the answer's while the path's
//! first iterates, near the cones' centres, are far from it; so it is held
//! until the complementarity μ has fallen to [`HOLD_START_SHIFT`] of its
//! first value, and followed from there.
//!
//! Measured (`repose solve FILE --solver interior-point --fallback none`,
//! from zero to a Siconos error of 10⁻⁶, N explicit; 2026-11-29, commit
//! 59e0283, Intel Xeon (AVX-512), 1 thread, one other one-thread run
//! beside it), against one clarabel program per shift solved to the end
//! (the fallback alone; commit bb758ef, same sitting):
//!
//! | problem (`tests/data/hard/`) | the path | a program per shift |
//! |---|---|---|
//! | `seed001_mu1_mur1_pgs_step03746` (147 contacts) | 1,027 Newton steps, 1.4 s | 9,772, 14.5 s |
//! | `seed001_mu1_mur1_step06000` (184) | 361, 0.36 s | 4,361, 4.2 s |
//! | `seed001_mu0.3_mur0.1_step12000` (735) | 39, 0.56 s | 361, 12.9 s |
//! | `seed000_rho0.01_step300` (788, associated) | 31, 0.31 s | stops at 2.3·10⁻⁶ (40, 0.64 s) |
//!
//! In a run (the lifted form below) on the pile of Acary & Bourrier 2021 at
//! μ = 1, μ_r = 1 m, 60 steps from its state at 7 s (~353 contacts; same
//! date, commit and machine, two runs side by side): the path alone met
//! 10⁻⁴ in every step in 35 Newton steps a step, 6.9 s in all, where PGS
//! (1,000 sweeps) with the programs as fallback took 31.1 s (the fallback
//! 19.1 s, 100 Newton steps a step) and with the path as fallback 14.5 s
//! (its part 4.1 s, 19 a step).
//!
//! **The fallback: one program per shift.** Where the path stalls (its
//! steps shrink to nothing near the cones' boundaries, or a factorisation
//! fails) short of the tolerance, the same program is handed to `clarabel`
//! (sparse LDLᵀ of the KKT system, homogeneous embedding), which solves it
//! to the end for the path's last shift, then again with s ← g(y) of each
//! answer, until the residual meets the tolerance, `max_iterations` Newton
//! steps in all, or [`OUTER_MAX`] programs; the better of the two answers
//! is kept. The programs differ only in q, so clarabel is set up once per
//! solve (equilibration, KKT pattern and its ordering) and later programs
//! only replace q (its data update, which needs its presolve off; these
//! programs have no redundant rows for it to drop).

//! **Two forms of the same program.** With N explicit ([`Delassus::explicit`],
//! for problems read from files) P = B^½ N B^½ has a dense 6×6 block for
//! every pair of contacts that share a body, and its factorisation fills in
//! fast. When the operator has a body form ([`Delassus::body_form`], every
//! simulation step) the program is *lifted*: N = LᵀL with L = M^-½ D, and
//! ½ γᵀNγ = ½‖w‖² with w = L B^½ z a second set of unknowns tied to z by
//! equality rows, so P = blockdiag(0, I) and the KKT system has the sparsity
//! of the body–contact graph (the body-form KKT system that Chrono's ADMM
//! factors, Tasora et al. 2021). Measured on `repose_small` at ρ = σ = R/2
//! (one solve from zero with clarabel, one thread each, same problem):
//!
//! | contacts | bodies | lifted | explicit |
//! |---|---|---|---|
//! | 160 | 237 | 0.028 s, 22 Newton steps | 0.021 s, 23 |
//! | 1,007 | 628 | 0.23 s, 27 | 0.93 s, 34 |
//! | 2,150 | 1,000 | 1.40 s, 33 | 10.7 s, 46 |
//!
//! Still one sparse LDLᵀ per Newton step: the method is for stiff problems
//! of up to a few thousand contacts, not for the 40,000 of
//! Tasora & Anitescu 2013.
//!
//! `iterations` counts Newton steps (the path's and the fallback's).

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};

use super::conic::{ConicIpm, Hook};
use super::{begin, check_stop, SolveStats, SolverSettings, Workspace};
use crate::material::FrictionLaw;
use glam::DVec3;

use crate::problem::{ContactProblem, Delassus, Vec6};

/// Programs solved at most under the De Saxcé law by the fallback (updates
/// of the shift plus one). The Newton-step cap (`max_iterations`) usually
/// binds before: some 20 Newton steps a program.
pub const OUTER_MAX: usize = 1000;

/// With a first shift from the start's velocities
/// ([`SolverSettings::shift_from_start`]), the path keeps that shift until
/// the complementarity μ has fallen below this fraction of its value after
/// the first Newton step, and only then follows g(y) of its iterates: the
/// early iterates, near the cones' centres, have velocities far from the
/// answer's, and their shift would throw a good start away (module docs).
pub const HOLD_START_SHIFT: f64 = 1e-4;

/// Solves by the interior-point method from scratch (the warm start in
/// `gamma` is not used: interior-point methods start from the cone's
/// centre; but under De Saxcé's law with
/// [`SolverSettings::shift_from_start`] its velocities give the first
/// shift), overwriting `gamma` with the result: the path-following method
/// first, and where it stalls short of the tolerance the programs of the
/// fallback from its answer's shift (module docs).
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
    let (mut program, r): (Program, Vec<Vec6>) = match op.body_form() {
        Some(p) => (
            Program::lifted(p, &ws.metric.scales, &ws.metric.cones),
            (0..p.n_contacts())
                .map(|i| p.twist(i, &p.v_free, &p.w_free))
                .collect(),
        ),
        None => {
            let explicit = op.explicit();
            (
                Program::explicit(&explicit, &ws.metric.scales, &ws.metric.cones),
                explicit.r,
            )
        }
    };
    // De Saxcé: the normal rows r_n + s_i, s_i = g(y_i) (module docs);
    // the first shift 0, or from the start's velocities (a fallback's
    // start: the first method's answer to this problem).
    let mut shifted = r.clone();
    let hold = ws.metric.law == FrictionLaw::DeSaxce && s.shift_from_start;
    if hold {
        op.apply(gamma, &mut y);
        shift_normal_rows(&ws.metric, &r, &y, &mut shifted);
    }
    let cx = Context { s, ws, r: &r };
    let path = follow_path(op, gamma, &cx, &program, &shifted, hold, &mut y);
    if path.converged || path.timed_out || path.iterations >= s.max_iterations {
        ws.y = y;
        return path;
    }
    // The path stalled: the programs, from the shift of its answer, and
    // whichever answer is the better.
    let best = gamma.to_vec();
    if ws.metric.law == FrictionLaw::DeSaxce {
        shift_normal_rows(&ws.metric, &r, &y, &mut shifted);
    }
    let mut stats = solve_programs(
        op,
        gamma,
        &cx,
        &mut program,
        &mut shifted,
        &mut y,
        path.iterations,
    );
    if !super::is_better(&stats, &path) {
        gamma.copy_from_slice(&best);
        op.apply(gamma, &mut y);
        stats = SolveStats {
            iterations: stats.iterations,
            ..path
        };
    }
    ws.y = y;
    stats
}

/// The path-following method (`solver::conic`) on the program of
/// `shifted`, the shift (De Saxcé) re-evaluated after every Newton step
/// from g(y) of the iterate's impulses projected onto the cones — at once,
/// or after [`HOLD_START_SHIFT`] when `hold`. Stops on the solve's own
/// residual test; leaves the last iterate in `gamma` and its velocities in
/// `y`.
fn follow_path<D: Delassus + Sync>(
    op: &mut D,
    gamma: &mut [Vec6],
    cx: &Context<'_>,
    program: &Program,
    shifted: &[Vec6],
    hold: bool,
    y: &mut [Vec6],
) -> SolveStats {
    let Context { s, ws, r } = *cx;
    let mut stats = SolveStats::default();
    let (mut q, scale) = program.linear_term(shifted);
    let path = (scale > 0.0)
        .then(|| ConicIpm::new(&program.p, &program.a, &program.cones))
        .flatten();
    let Some(mut ipm) = path else {
        // q = 0 (the answer is γ = 0), or a pattern faer cannot analyse.
        if scale == 0.0 {
            gamma.fill([0.0; 6]);
        }
        cx.apply_and_test(op, gamma, y, &mut stats);
        return stats;
    };
    let desaxce = ws.metric.law == FrictionLaw::DeSaxce;
    let root_b = &program.root_b;
    let mut mu_first = None;
    let mut hook = |x: &[f64], q: &mut [f64], mu: f64| {
        let mu_first = *mu_first.get_or_insert(mu);
        for (i, gi) in gamma.iter_mut().enumerate() {
            let g: Vec6 = std::array::from_fn(|c| x[6 * i + c] * root_b[6 * i + c] * scale);
            *gi = ws.metric.project(i, &g);
        }
        if cx.apply_and_test(op, gamma, y, &mut stats) {
            return Hook::Stop;
        }
        if desaxce && (!hold || mu < HOLD_START_SHIFT * mu_first) {
            for (i, yi) in y.iter().enumerate() {
                q[6 * i] = (r[i][0] + ws.metric.shift(i, yi)) * root_b[6 * i] / scale;
            }
        }
        Hook::Continue
    };
    // No tolerance of its own: the hook's residual test ends the path (or
    // a stall, or the cap).
    let out = ipm.solve(&mut q, 0.0, s.max_iterations, &mut hook);
    log::debug!(
        "interior point: the path ended {:?} after {} Newton steps",
        out.status,
        out.iterations
    );
    if out.iterations == 0 {
        cx.apply_and_test(op, gamma, y, &mut stats);
    }
    stats.iterations = out.iterations;
    stats
}

/// The fallback: one conic program (clarabel) per shift, s ← g(y) of the
/// last answer after each (module docs), from `shifted`; `newton` Newton
/// steps already spent.
fn solve_programs<D: Delassus + Sync>(
    op: &mut D,
    gamma: &mut [Vec6],
    cx: &Context<'_>,
    program: &mut Program,
    shifted: &mut [Vec6],
    y: &mut [Vec6],
    mut newton: usize,
) -> SolveStats {
    let Context { s, ws, r } = *cx;
    let mut stats = SolveStats::default();
    let outer_max = if ws.metric.law == FrictionLaw::Associated {
        1
    } else {
        OUTER_MAX
    };
    for outer in 0..outer_max {
        let Some((g, its)) = program.solve(shifted, s.tolerance) else {
            if outer == 0 {
                cx.apply_and_test(op, gamma, y, &mut stats);
            }
            break;
        };
        // Onto the cones exactly (the interior-point answer may sit a
        // tolerance outside).
        for (i, (gi, g)) in gamma.iter_mut().zip(&g).enumerate() {
            *gi = ws.metric.project(i, g);
        }
        newton += its;
        if cx.apply_and_test(op, gamma, y, &mut stats) || newton >= s.max_iterations {
            break;
        }
        if !shift_normal_rows(&ws.metric, r, y, shifted) {
            // The same program again (no friction, or an exact fixed
            // point): nothing more to gain.
            break;
        }
    }
    stats.iterations = newton;
    stats
}

/// What the path and the programs share: the settings, the workspace (its
/// metric and cones) and the problem's free velocities r.
#[derive(Clone, Copy)]
struct Context<'a> {
    s: &'a SolverSettings,
    ws: &'a Workspace,
    r: &'a [Vec6],
}

impl Context<'_> {
    /// y ← Nγ + r and the solve's stopping test on (γ, y); true when it is
    /// met. The test's "last iteration" counts iterations, which are Newton
    /// steps here, so it is passed one that is never the last.
    fn apply_and_test<D: Delassus + Sync>(
        &self,
        op: &mut D,
        gamma: &[Vec6],
        y: &mut [Vec6],
        stats: &mut SolveStats,
    ) -> bool {
        op.apply(gamma, y);
        check_stop(op, self.s, self.ws, usize::MAX, gamma, y, stats)
    }
}

/// Sets the normal rows of `shifted` to r_n + s_i with s_i = g(y_i), the
/// De Saxcé shift of the velocities `y`
/// ([`Metric::shift`](super::Metric::shift)); true when any row moved.
fn shift_normal_rows(m: &super::Metric, r: &[Vec6], y: &[Vec6], shifted: &mut [Vec6]) -> bool {
    let mut moved = false;
    for (i, (sh, yi)) in shifted.iter_mut().zip(y).enumerate() {
        let next = r[i][0] + m.shift(i, yi);
        moved |= next != sh[0];
        sh[0] = next;
    }
    moved
}

/// The conic program of one problem, in the scaled variables z = B^-½ γ
/// (the first 6 n_c unknowns; the lifted form appends w).
struct Program {
    /// P, upper triangle: B^½ N B^½ (explicit form) or blockdiag(0, I)
    /// (lifted form).
    p: CscMatrix<f64>,
    /// The constraint rows A (A x + s = 0, s in the cones).
    a: CscMatrix<f64>,
    cones: Vec<SupportedConeT<f64>>,
    /// √b per unknown z (6 per contact).
    root_b: Vec<f64>,
    /// The conic solver, once set up by the first program (module docs).
    solver: Option<DefaultSolver<f64>>,
}

/// √b per unknown (6 per contact) from the per-contact (b_f, b_t).
fn root_scales(scales: &[(f64, f64)]) -> Vec<f64> {
    (0..6 * scales.len())
        .map(|k| {
            let (bf, bt) = scales[k / 6];
            if k % 6 < 3 {
                bf.sqrt()
            } else {
                bt.sqrt()
            }
        })
        .collect()
}

/// Constraint rows in triplet form (row, column, value), rows counted from 0.
#[derive(Default)]
struct Rows {
    ri: Vec<usize>,
    ci: Vec<usize>,
    vi: Vec<f64>,
    m: usize,
    cones: Vec<SupportedConeT<f64>>,
}

impl Rows {
    /// One entry in the current row.
    fn entry(&mut self, col: usize, v: f64) {
        self.ri.push(self.m);
        self.ci.push(col);
        self.vi.push(v);
    }

    /// A row of one entry, closed at once.
    fn single(&mut self, col: usize, v: f64) {
        self.entry(col, v);
        self.m += 1;
    }

    /// Per contact γ_n ≥ 0, then each friction cone (or zero rows for a
    /// coefficient of 0), on the unknowns z (columns 6i..6i+6).
    fn cones(&mut self, scales: &[(f64, f64)], cone: &[crate::material::ConeCoeffs]) {
        for (i, c) in cone.iter().enumerate() {
            let (bf, bt) = scales[i];
            let ratio = (bf / bt).sqrt();
            let base = 6 * i;
            self.single(base, -1.0);
            self.cones.push(SupportedConeT::NonnegativeConeT(1));
            for (coef, comps) in [
                (c.mu, &[1usize, 2][..]),
                (c.sigma * ratio, &[3][..]),
                (c.rho * ratio, &[4, 5][..]),
            ] {
                if coef > 0.0 {
                    // (coef z_n, z_comps) ∈ SOC, rows scaled to unit size.
                    let scale = coef.max(1.0);
                    self.single(base, -coef / scale);
                    for &j in comps {
                        self.single(base + j, -1.0 / scale);
                    }
                    self.cones
                        .push(SupportedConeT::SecondOrderConeT(comps.len() + 1));
                } else {
                    for &j in comps {
                        self.single(base + j, -1.0);
                    }
                    self.cones.push(SupportedConeT::ZeroConeT(comps.len()));
                }
            }
        }
    }

    fn matrix(self, n: usize) -> (CscMatrix<f64>, Vec<SupportedConeT<f64>>) {
        (
            CscMatrix::new_from_triplets(self.m, n, self.ri, self.ci, self.vi),
            self.cones,
        )
    }
}

impl Program {
    /// The program with N explicit: P = B^½ N B^½. N's pattern is the contact
    /// graph with a dense 6×6 block for every pair of contacts that share a
    /// body, so the factorisation fills in fast.
    fn explicit(
        op: &crate::problem::explicit::ExplicitDelassus,
        scales: &[(f64, f64)],
        cone: &[crate::material::ConeCoeffs],
    ) -> Self {
        let n = op.r.len();
        let root_b = root_scales(scales);
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
        let mut rows = Rows::default();
        rows.cones(scales, cone);
        let (a, cones) = rows.matrix(6 * n);
        Program {
            p,
            a,
            cones,
            root_b,
            solver: None,
        }
    }

    /// The lifted program of a problem in body form: with L = M^-½ D (one
    /// 6-row block per body, one 6-column block per contact) N = LᵀL, so
    /// ½ γᵀNγ = ½ ‖w‖² with w = L B^½ z a second set of unknowns tied to z by
    /// equality rows. P = blockdiag(0, I) and A holds L's 54 entries per
    /// contact: the KKT system has the sparsity of the body–contact graph
    /// instead of N's contact–contact blocks (the body-form KKT system that
    /// Chrono's ADMM factors, Tasora et al. 2021), and its factorisation stays
    /// sparse as the pile grows.
    fn lifted(
        p: &ContactProblem,
        scales: &[(f64, f64)],
        cone: &[crate::material::ConeCoeffs],
    ) -> Self {
        let nc = p.n_contacts();
        let nb = p.n_bodies();
        let root_b = root_scales(scales);
        let nz = 6 * nc;
        let n = nz + 6 * nb;
        // P = blockdiag(0, I).
        let colptr: Vec<usize> = (0..=n).map(|c| c.saturating_sub(nz)).collect();
        let p_mat = CscMatrix::new(n, n, colptr, (nz..n).collect(), vec![1.0; 6 * nb]);
        // Equality rows, body k's six: w_k − Σ_ends M_k^-½ D_e B^½ z_i = 0.
        let mut rows = Rows::default();
        // Body k's contact ends with their rows, reused from body to body.
        let mut ends: Vec<(usize, [(DVec3, DVec3); 6])> = Vec::new();
        for k in 0..nb {
            let (rm, rj) = (p.inv_mass[k].sqrt(), p.inv_inertia_root(k));
            let lo = p.csr_offsets[k] as usize;
            let hi = p.csr_offsets[k + 1] as usize;
            ends.clear();
            ends.extend(
                p.csr_slots[lo..hi]
                    .iter()
                    .map(|&slot| ((slot >> 1) as usize, p.end_rows(slot))),
            );
            for d in 0..6 {
                rows.entry(nz + 6 * k + d, 1.0);
                for (i, er) in &ends {
                    for (c, (lin, ang)) in er.iter().enumerate() {
                        let v = if d < 3 {
                            rm * lin[d]
                        } else {
                            (rj * *ang)[d - 3]
                        };
                        if v != 0.0 {
                            rows.entry(6 * i + c, -v * root_b[6 * i + c]);
                        }
                    }
                }
                rows.m += 1;
            }
        }
        rows.cones.push(SupportedConeT::ZeroConeT(6 * nb));
        rows.cones(scales, cone);
        let (a, cones) = rows.matrix(n);
        Program {
            p: p_mat,
            a,
            cones,
            root_b,
            solver: None,
        }
    }

    /// q = B^½ r / scale over the z unknowns (0 over w), scale = ‖B^½ r‖∞
    /// (0 when r = 0): the program's linear term, of unit size.
    fn linear_term(&self, r: &[Vec6]) -> (Vec<f64>, f64) {
        let n = r.len();
        let mut q: Vec<f64> = (0..self.p.n)
            .map(|k| {
                if k < 6 * n {
                    r[k / 6][k % 6] * self.root_b[k]
                } else {
                    0.0
                }
            })
            .collect();
        let scale = q.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if scale > 0.0 {
            for v in &mut q {
                *v /= scale;
            }
        }
        (q, scale)
    }

    /// Solves the program of r; the impulses and the Newton steps taken,
    /// or `None` when the conic solver gives no usable answer. The first
    /// call sets the conic solver up; later calls (the same P, A and cones:
    /// another shift) only give it the new q.
    fn solve(&mut self, r: &[Vec6], tolerance: f64) -> Option<(Vec<Vec6>, usize)> {
        let n = r.len();
        let (q, scale) = self.linear_term(r);
        if scale == 0.0 {
            return Some((vec![[0.0; 6]; n], 0));
        }
        let updated = self
            .solver
            .as_mut()
            .is_some_and(|solver| solver.update_q(&q).is_ok());
        if !updated {
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
                // Data updates (a new q per program) need the presolve off.
                presolve_enable: false,
                ..DefaultSettings::default()
            };
            self.solver =
                Some(DefaultSolver::new(&self.p, &q, &self.a, &b, &self.cones, settings).ok()?);
        }
        let solver = self.solver.as_mut()?;
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
