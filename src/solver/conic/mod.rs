//! A primal–dual interior-point method for the contact problem's conic
//! program, written for one thing clarabel cannot do: change the linear
//! term q between two Newton steps. Under De Saxcé's law the program's q
//! carries the shift s = g(y) of the velocities of its own answer
//! (Acary & Cadoux 2011, §2.2; [`interior`](super::interior)); here s is
//! re-evaluated at every iterate, so the fixed point on s and the barrier
//! path are followed in one sequence of Newton steps instead of one program
//! per shift (the "update of s" of the interior-point method in Siconos'
//! global friction solvers).
//!
//! # The program
//!
//! ```text
//! min ½ xᵀPx + qᵀx   subject to   A x + s = b,   s ∈ K = K_1 × … × K_p,
//! ```
//!
//! each K_j a zero cone (equality rows), a non-negative orthant or a
//! second-order cone {(u₀, u₁) : u₀ ≥ ‖u₁‖}. Its KKT conditions, with the
//! dual z ∈ K* = K (free on the zero rows):
//!
//! ```text
//! r_x = Px + q + Aᵀz = 0,   r_p = Ax + s − b = 0,   s ∘ z = 0,   s, z ∈ K,
//! ```
//!
//! ∘ the Jordan product of each cone (u ∘ v = (uᵀv, u₀v₁ + v₀u₁) on a
//! second-order cone, componentwise on the orthant).
//!
//! # One Newton step (Nesterov–Todd scaling, Mehrotra's corrector)
//!
//! The scaling W of each cone block maps z to λ = Wz = W⁻¹s (the orthant:
//! W = diag(√(s/z)); a second-order cone: W = η W̄ with
//!
//! ```text
//! s̄ = s/√det s,  z̄ = z/√det z,  γ = √((1 + s̄ᵀz̄)/2),  w̄ = (s̄ + J z̄)/(2γ),
//! η = (det s / det z)^¼,  W̄ = [w̄₀ w̄₁ᵀ; w̄₁ I + w̄₁w̄₁ᵀ/(1 + w̄₀)],  W² = η²(2w̄w̄ᵀ − J),
//! ```
//!
//! det u = u₀² − ‖u₁‖², J = diag(1, −I)). The linearised conditions
//! λ ∘ (W⁻¹Δs + WΔz) = d, with Δs eliminated (Δs = W(λ \ d) − W²Δz), give
//! one quasi-definite system,
//!
//! ```text
//! [ P   Aᵀ  ] [Δx]   [ −r_x              ]
//! [ A  −W²  ] [Δz] = [ −r_p − W(λ \ d)   ]     (W² = 0 on the zero rows),
//! ```
//!
//! factored once per step (faer's sparse LDLᵀ, approximate minimum degree
//! ordering, the symbolic analysis once per solve; a static regularisation
//! ±δ on the diagonal, faer's dynamic one for tiny pivots, and up to three
//! rounds of iterative refinement against the unregularised matrix, a
//! round followed by another only where it cut the residual fivefold) and
//! solved twice:
//! the affine direction (d = −λ∘λ), then the combined one (d = −λ∘λ −
//! (W⁻¹Δs_a)∘(WΔz_a) + σμe with σ = (1 − α_a)³, α_a the affine step's
//! length and μ = sᵀz/ν, ν the cones' degree). Step lengths are computed in
//! the scaled space (λ + α W⁻¹Δs ∈ K, λ + α WΔz ∈ K: λ is well centred, so
//! the quadratic for the boundary keeps its digits when s and z are near
//! theirs) and cut to 0.99 of the boundary.
//!
//! The start is the point of the system with W = I (x and z of
//! [P Aᵀ; A −I], s = −z on the cone rows), each of s and z moved into its
//! cone along e by one common amount where it lies outside.
//!
//! # After each step
//!
//! A caller's hook sees the new x and may stop the solve (its own stopping
//! test: the contact problem's natural-map residual) or change q (the next
//! step's r_x carries the change: an infeasible-start method recovers it
//! like any other residual). Without a stop the method ends when
//! ‖r_x‖∞, ‖r_p‖∞ and μ are all below the tolerance, or after
//! `max_iterations` steps.

use clarabel::algebra::CscMatrix;
use clarabel::solver::SupportedConeT;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::LdltRegularization;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, SymbolicCholesky, SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};

mod cones;
use cones::{inverse_product, jordan_corrector, norm, soc_step, Block, Scaling};

/// Static regularisation of the KKT diagonal (relative to its unit-scaled
/// blocks).
const STATIC_REG: f64 = 1e-9;
/// Rounds of iterative refinement per solve, at most.
const REFINE: usize = 3;
/// A round of refinement is followed by another only where it cut the
/// largest residual to this fraction of the one before.
const REFINE_GAIN: f64 = 0.2;
/// Fraction of the way to the cone's boundary a step goes.
const STEP_FRACTION: f64 = 0.99;
/// Steps shorter than this, three in a row, end a solve as stalled.
const MIN_STEP: f64 = 1e-8;

/// A Newton direction and the buffers that compute it.
struct Direction {
    /// (Δx, Δz), solved in place from the right-hand side.
    kkt: Vec<f64>,
    /// Δs.
    ds: Vec<f64>,
    /// W⁻¹Δs and WΔz (the step lengths and Mehrotra's corrector use them).
    ds_scaled: Vec<f64>,
    dz_scaled: Vec<f64>,
    /// Scratch for Δs = W(t − WΔz).
    wdz: Vec<f64>,
    /// Iterative refinement's buffers.
    refine: Refinement,
}

/// Iterative refinement's buffers: the right-hand side, the residual and
/// the last correction.
struct Refinement {
    b: Vec<f64>,
    res: Vec<f64>,
    step: Vec<f64>,
}

impl Direction {
    fn new(dim: usize, m: usize) -> Self {
        Direction {
            kkt: vec![0.0; dim],
            ds: vec![0.0; m],
            ds_scaled: vec![0.0; m],
            dz_scaled: vec![0.0; m],
            wdz: vec![0.0; m],
            refine: Refinement {
                b: vec![0.0; dim],
                res: vec![0.0; dim],
                step: vec![0.0; dim],
            },
        }
    }
}

/// The caller's hook, called after every Newton step with the primal
/// iterate x, the linear term q (which it may change) and μ = sᵀz/ν.
pub(crate) type StepHook<'a> = dyn FnMut(&[f64], &mut [f64], f64) -> Hook + 'a;

/// What the caller's hook says after a step.
pub(crate) enum Hook {
    /// Go on (q may have changed).
    Continue,
    /// Stop now: the caller's own test is met.
    Stop,
}

/// How a solve ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Status {
    /// The hook stopped it.
    Stopped,
    /// ‖r_x‖, ‖r_p‖ and μ below the tolerance.
    Solved,
    /// `max_iterations` steps taken.
    MaxIterations,
    /// Steps too short to make progress (the iterate is as close as the
    /// arithmetic allows).
    Stalled,
    /// A factorisation failed or a step was not finite.
    Failed,
}

/// How a solve went (the iterates themselves go to the hook).
pub(crate) struct Outcome {
    /// Newton steps taken.
    pub iterations: usize,
    /// How it ended.
    pub status: Status,
}

/// A conic program's fixed data (P, A, the cones) with its KKT pattern and
/// symbolic factorisation, reused by every solve.
pub(crate) struct ConicIpm {
    n: usize,
    m: usize,
    p: CscMatrix<f64>,
    /// P's diagonal (the KKT diagonal of the x rows, before δ).
    p_diagonal: Vec<f64>,
    a: CscMatrix<f64>,
    blocks: Vec<Block>,
    /// The cones' degree ν (1 per orthant row, 1 per second-order cone).
    degree: usize,
    /// Upper triangle of the KKT matrix, column-compressed.
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    values: Vec<f64>,
    /// Position in `values` of each column's diagonal.
    diag: Vec<usize>,
    /// Per cone row r (≥ 0 entries of the block above and at the diagonal
    /// of column n + r): the first position of its block's entries in
    /// column n + r; entries for rows off..=r follow in order.
    h_start: Vec<usize>,
    /// +1 on the x rows, −1 on the constraint rows.
    signs: Vec<i8>,
    symbolic: SymbolicCholesky<usize>,
    l_values: Vec<f64>,
    mem: MemBuffer,
}

impl ConicIpm {
    /// Sets up the KKT pattern and its symbolic factorisation for
    /// min ½xᵀPx + qᵀx, Ax + s = b, s ∈ `cones` (P: upper triangle).
    /// `None` for a cone type this method does not handle.
    pub fn new(
        p: &CscMatrix<f64>,
        a: &CscMatrix<f64>,
        cones: &[SupportedConeT<f64>],
    ) -> Option<Self> {
        let (n, m) = (p.n, a.m);
        let mut blocks = Vec::with_capacity(cones.len());
        let mut off = 0;
        let mut degree = 0;
        for c in cones {
            let b = match *c {
                SupportedConeT::ZeroConeT(dim) => Block::Zero { off, dim },
                SupportedConeT::NonnegativeConeT(dim) => {
                    degree += dim;
                    Block::Nonneg { off, dim }
                }
                SupportedConeT::SecondOrderConeT(dim) => {
                    degree += 1;
                    Block::Soc { off, dim }
                }
                _ => return None,
            };
            off += match b {
                Block::Zero { dim, .. } | Block::Nonneg { dim, .. } | Block::Soc { dim, .. } => dim,
            };
            blocks.push(b);
        }
        if off != m {
            return None;
        }
        // A by rows (the upper triangle's columns n + r hold Aᵀ's column r).
        let mut a_rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); m];
        for j in 0..a.n {
            for k in a.colptr[j]..a.colptr[j + 1] {
                a_rows[a.rowval[k]].push((j, a.nzval[k]));
            }
        }
        let mut col_ptr = vec![0usize];
        let mut row_idx = Vec::new();
        let mut values = Vec::new();
        let mut diag = Vec::with_capacity(n + m);
        for j in 0..n {
            let mut has_diag = false;
            for k in p.colptr[j]..p.colptr[j + 1] {
                let r = p.rowval[k];
                if r > j {
                    continue;
                }
                if r == j {
                    has_diag = true;
                    diag.push(row_idx.len());
                }
                row_idx.push(r);
                values.push(p.nzval[k]);
            }
            if !has_diag {
                diag.push(row_idx.len());
                row_idx.push(j);
                values.push(0.0);
            }
            col_ptr.push(row_idx.len());
        }
        let mut h_start = vec![usize::MAX; m];
        for b in &blocks {
            let (off, dim, dense) = match *b {
                Block::Zero { off, dim } | Block::Nonneg { off, dim } => (off, dim, false),
                Block::Soc { off, dim } => (off, dim, true),
            };
            for r in off..off + dim {
                for &(c, v) in &a_rows[r] {
                    row_idx.push(c);
                    values.push(v);
                }
                let lo = if dense { off } else { r };
                h_start[r] = row_idx.len();
                for rr in lo..=r {
                    row_idx.push(n + rr);
                    values.push(0.0);
                }
                diag.push(row_idx.len() - 1);
                col_ptr.push(row_idx.len());
            }
        }
        let dim = n + m;
        let pattern = SymbolicSparseColMatRef::new_checked(dim, dim, &col_ptr, None, &row_idx);
        let symbolic = factorize_symbolic_cholesky(
            pattern,
            Side::Upper,
            SymmetricOrdering::Amd,
            Default::default(),
        )
        .ok()?;
        let req = StackReq::any_of(&[
            symbolic.factorize_numeric_ldlt_scratch::<f64>(Par::Seq, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(1, Par::Seq),
        ]);
        let mem = MemBuffer::try_new(req).ok()?;
        let l_values = vec![0.0; symbolic.len_val()];
        let signs = (0..dim).map(|k| if k < n { 1 } else { -1 }).collect();
        Some(ConicIpm {
            n,
            m,
            p_diagonal: (0..n).map(|j| p_diag(p, j)).collect(),
            p: p.clone(),
            a: a.clone(),
            blocks,
            degree,
            col_ptr,
            row_idx,
            values,
            diag,
            h_start,
            signs,
            symbolic,
            l_values,
            mem,
        })
    }

    /// Writes −W² (−H) into the constraint columns and ±δ on the diagonal,
    /// then factors. `h` per cone row: the orthant's s/z, or for a
    /// second-order cone block its dense W² (row-major, dim × dim, stored
    /// from the block's first row).
    fn factor(&mut self, scalings: &[Scaling]) -> bool {
        for j in 0..self.n {
            // P's diagonal plus δ.
            self.values[self.diag[j]] = self.p_diagonal[j] + STATIC_REG;
        }
        for (b, sc) in self.blocks.iter().zip(scalings) {
            match (*b, sc) {
                (Block::Zero { off, dim }, _) => {
                    for r in off..off + dim {
                        self.values[self.diag[self.n + r]] = -STATIC_REG;
                    }
                }
                (Block::Nonneg { off, dim }, Scaling::Nonneg(w)) => {
                    for (r, wr) in w.iter().enumerate().take(dim) {
                        self.values[self.diag[self.n + off + r]] = -wr * wr - STATIC_REG;
                    }
                }
                (Block::Soc { off, dim }, Scaling::Soc { eta, w }) => {
                    let e2 = eta * eta;
                    for r in 0..dim {
                        let start = self.h_start[off + r];
                        for rr in 0..=r {
                            let j = |k: usize| if k == 0 { 1.0 } else { -1.0 };
                            let mut h = e2 * 2.0 * w[rr] * w[r];
                            if rr == r {
                                h -= e2 * j(r);
                            }
                            self.values[start + rr] = -h;
                        }
                        self.values[self.diag[self.n + off + r]] -= STATIC_REG;
                    }
                }
                _ => unreachable!("scaling of another block type"),
            }
        }
        let dim = self.n + self.m;
        let mat = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(dim, dim, &self.col_ptr, None, &self.row_idx),
            &self.values,
        );
        let reg = LdltRegularization {
            dynamic_regularization_signs: Some(&self.signs),
            dynamic_regularization_delta: 1e-7,
            dynamic_regularization_epsilon: 1e-13,
        };
        let stack = MemStack::new(&mut self.mem);
        self.symbolic
            .factorize_numeric_ldlt(
                &mut self.l_values,
                mat,
                Side::Upper,
                reg,
                Par::Seq,
                stack,
                Default::default(),
            )
            .is_ok()
            && self.l_values.iter().all(|v| v.is_finite())
    }

    /// K v with the unregularised matrix (the stored upper triangle, less
    /// the static δ), into `out`.
    fn kkt_mul(&self, v: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for j in 0..self.n + self.m {
            let (lo, hi) = (self.col_ptr[j], self.col_ptr[j + 1]);
            let vj = v[j];
            // Column j scatters into the rows above it, and its transpose
            // (row j) gathers from them; the diagonal is in both, once too
            // many.
            let mut row_j = 0.0;
            for (&r, &a) in self.row_idx[lo..hi].iter().zip(&self.values[lo..hi]) {
                out[r] += a * vj;
                row_j += a * v[r];
            }
            let reg = if j < self.n { STATIC_REG } else { -STATIC_REG };
            out[j] += row_j - (self.values[self.diag[j]] + reg) * vj;
        }
    }

    /// v ← K⁻¹ v with the last factorisation (regularised K).
    fn back_solve(&mut self, v: &mut [f64]) {
        let dim = self.n + self.m;
        let ldlt = faer::sparse::linalg::cholesky::LdltRef::new(&self.symbolic, &self.l_values);
        let stack = MemStack::new(&mut self.mem);
        ldlt.solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(v, dim, 1),
            Par::Seq,
            stack,
        );
    }

    /// Solves K d = rhs in place with the last factorisation, refined
    /// against the unregularised K: at most [`REFINE`] rounds; a round is
    /// taken back where it made the largest residual larger, and followed
    /// by another only where it cut it to [`REFINE_GAIN`] of the one
    /// before (near the path's end K is so ill-conditioned that a round can
    /// gain nothing, or lose, and another would only cost a back-solve).
    fn solve_kkt(&mut self, rhs: &mut [f64], work: &mut Refinement) -> bool {
        let dim = self.n + self.m;
        let Refinement { b, res, step } = work;
        b[..dim].copy_from_slice(rhs);
        let limit = 1e-14 * (1.0 + b.iter().fold(0.0f64, |m, v| m.max(v.abs())));
        self.back_solve(rhs);
        let mut last = f64::INFINITY;
        for round in 0..=REFINE {
            self.kkt_mul(rhs, res);
            let mut worst = 0.0f64;
            for k in 0..dim {
                res[k] = b[k] - res[k];
                worst = worst.max(res[k].abs());
            }
            if worst > last {
                // The last round made it worse: take it back.
                for k in 0..dim {
                    rhs[k] -= step[k];
                }
                break;
            }
            if worst <= limit || worst > REFINE_GAIN * last || round == REFINE {
                break;
            }
            last = worst;
            step.copy_from_slice(res);
            self.back_solve(step);
            for k in 0..dim {
                rhs[k] += step[k];
            }
        }
        rhs.iter().all(|v| v.is_finite())
    }

    /// Solves the program for `q` (b = 0) from the standard start; after
    /// every step `hook(x, q, μ)` may stop the solve or change q.
    pub fn solve(
        &mut self,
        q: &mut [f64],
        tolerance: f64,
        max_iterations: usize,
        hook: &mut StepHook<'_>,
    ) -> Outcome {
        let (n, m) = (self.n, self.m);
        let dim = n + m;
        let mut x = vec![0.0; n];
        let mut s = vec![0.0; m];
        let mut z = vec![0.0; m];
        let mut dir = Direction::new(dim, m);
        let fail = |it| Outcome {
            iterations: it,
            status: Status::Failed,
        };
        // The start: W = I.
        let unit: Vec<Scaling> = self.blocks.iter().map(Scaling::unit).collect();
        if !self.factor(&unit) {
            return fail(0);
        }
        let rhs = &mut dir.kkt;
        for k in 0..n {
            rhs[k] = -q[k];
        }
        rhs[n..].fill(0.0);
        if !self.solve_kkt(rhs, &mut dir.refine) {
            return fail(0);
        }
        x.copy_from_slice(&rhs[..n]);
        z.copy_from_slice(&rhs[n..]);
        for b in &self.blocks {
            if let Block::Zero { off, dim } = *b {
                s[off..off + dim].fill(0.0);
            } else {
                let (off, dim) = b.range();
                for r in off..off + dim {
                    s[r] = -z[r];
                }
            }
        }
        self.centre(&mut s);
        self.centre(&mut z);

        let mut scalings = unit;
        let mut lambda = vec![0.0; m];
        let (mut rx, mut rp) = (vec![0.0; n], vec![0.0; m]);
        let mut d = vec![0.0; m];
        let mut t = vec![0.0; m];
        let mut short_steps = 0;
        for it in 0..max_iterations {
            // Residuals.
            self.residuals(&x, &s, &z, q, &mut rx, &mut rp);
            let mu = self.gap(&s, &z) / self.degree.max(1) as f64;
            let rx_max = rx.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            let rp_max = rp.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            if rx_max <= tolerance && rp_max <= tolerance && mu <= tolerance {
                return Outcome {
                    iterations: it,
                    status: Status::Solved,
                };
            }
            // Scaling at (s, z), λ = W z.
            for (k, b) in self.blocks.iter().enumerate() {
                scalings[k].update(b, &s, &z);
                scalings[k].apply(b, &z, &mut lambda, false);
            }
            if !self.factor(&scalings) {
                return fail(it);
            }
            // Affine direction: d = −λ∘λ, t = λ \ d = −λ.
            for r in 0..m {
                t[r] = -lambda[r];
            }
            let Some(alpha_a) = self.direction(&scalings, &rx, &rp, &t, &lambda, &mut dir) else {
                return fail(it);
            };
            let sigma = (1.0 - alpha_a.min(1.0)).clamp(0.0, 1.0).powi(3);
            // Combined: d = −λ∘λ − (W⁻¹Δs_a)∘(WΔz_a) + σμe.
            for b in &self.blocks {
                jordan_corrector(
                    b,
                    &lambda,
                    &dir.ds_scaled,
                    &dir.dz_scaled,
                    sigma * mu,
                    &mut d,
                );
                inverse_product(b, &lambda, &d, &mut t);
            }
            let Some(longest) = self.direction(&scalings, &rx, &rp, &t, &lambda, &mut dir) else {
                return fail(it);
            };
            let alpha = (STEP_FRACTION * longest).min(1.0);
            let (dx, dz, ds) = (&dir.kkt[..n], &dir.kkt[n..], &dir.ds);
            for k in 0..n {
                x[k] += alpha * dx[k];
            }
            for r in 0..m {
                s[r] += alpha * ds[r];
                z[r] += alpha * dz[r];
            }
            for b in &self.blocks {
                if let Block::Zero { off, dim } = *b {
                    s[off..off + dim].fill(0.0);
                }
            }
            if !x.iter().all(|v| v.is_finite()) {
                return fail(it + 1);
            }
            let mu = self.gap(&s, &z) / self.degree.max(1) as f64;
            if let Hook::Stop = hook(&x, q, mu) {
                return Outcome {
                    iterations: it + 1,
                    status: Status::Stopped,
                };
            }
            short_steps = if alpha < MIN_STEP { short_steps + 1 } else { 0 };
            if short_steps >= 3 {
                return Outcome {
                    iterations: it + 1,
                    status: Status::Stalled,
                };
            }
        }
        Outcome {
            iterations: max_iterations,
            status: Status::MaxIterations,
        }
    }

    /// The direction for the right-hand side [−r_x; −r_p − W t]: (Δx, Δz)
    /// in `dir.kkt`, Δs = W(t − WΔz), the scaled W⁻¹Δs and WΔz, and the
    /// longest α with λ + α W⁻¹Δs and λ + α WΔz in the cones (∞ where
    /// nothing limits it); `None` when the solve fails.
    fn direction(
        &mut self,
        scalings: &[Scaling],
        rx: &[f64],
        rp: &[f64],
        t: &[f64],
        lambda: &[f64],
        dir: &mut Direction,
    ) -> Option<f64> {
        let n = self.n;
        let rhs = &mut dir.kkt;
        for k in 0..n {
            rhs[k] = -rx[k];
        }
        let wt = &mut rhs[n..];
        for (k, b) in self.blocks.iter().enumerate() {
            if let Block::Zero { off, dim } = *b {
                wt[off..off + dim].fill(0.0);
            } else {
                scalings[k].apply(b, t, wt, false);
            }
        }
        for r in 0..self.m {
            wt[r] = -rp[r] - wt[r];
        }
        if !self.solve_kkt(&mut dir.kkt, &mut dir.refine) {
            return None;
        }
        let dz = &dir.kkt[n..];
        self.ds_from(scalings, t, dz, &mut dir.ds, &mut dir.wdz);
        for (k, b) in self.blocks.iter().enumerate() {
            scalings[k].apply(b, &dir.ds, &mut dir.ds_scaled, true);
            scalings[k].apply(b, dz, &mut dir.dz_scaled, false);
        }
        Some(
            self.max_step(lambda, &dir.ds_scaled)
                .min(self.max_step(lambda, &dir.dz_scaled)),
        )
    }

    /// Δs = W(t − WΔz) on the cone rows, 0 on the zero rows.
    /// `wdz` is scratch of the rows' length.
    fn ds_from(
        &self,
        scalings: &[Scaling],
        t: &[f64],
        dz: &[f64],
        ds: &mut [f64],
        wdz: &mut [f64],
    ) {
        for (k, b) in self.blocks.iter().enumerate() {
            if let Block::Zero { off, dim } = *b {
                ds[off..off + dim].fill(0.0);
                continue;
            }
            scalings[k].apply(b, dz, wdz, false);
            let (off, dim) = b.range();
            for r in off..off + dim {
                wdz[r] = t[r] - wdz[r];
            }
            scalings[k].apply(b, wdz, ds, false);
        }
    }

    /// r_x = Px + q + Aᵀz, r_p = Ax + s (b = 0).
    fn residuals(
        &self,
        x: &[f64],
        s: &[f64],
        z: &[f64],
        q: &[f64],
        rx: &mut [f64],
        rp: &mut [f64],
    ) {
        rx.copy_from_slice(q);
        let p = &self.p;
        for j in 0..self.n {
            for k in p.colptr[j]..p.colptr[j + 1] {
                let r = p.rowval[k];
                if r > j {
                    continue;
                }
                rx[r] += p.nzval[k] * x[j];
                if r != j {
                    rx[j] += p.nzval[k] * x[r];
                }
            }
        }
        rp.copy_from_slice(s);
        let a = &self.a;
        for j in 0..self.n {
            for k in a.colptr[j]..a.colptr[j + 1] {
                let r = a.rowval[k];
                rp[r] += a.nzval[k] * x[j];
                rx[j] += a.nzval[k] * z[r];
            }
        }
    }

    /// sᵀz over the cone rows.
    fn gap(&self, s: &[f64], z: &[f64]) -> f64 {
        let mut g = 0.0;
        for b in &self.blocks {
            if !matches!(b, Block::Zero { .. }) {
                let (off, dim) = b.range();
                for r in off..off + dim {
                    g += s[r] * z[r];
                }
            }
        }
        g
    }

    /// Moves u into the interior of its cones along e by one common amount
    /// where some block lies outside (the standard start).
    fn centre(&self, u: &mut [f64]) {
        let mut worst = f64::INFINITY;
        for b in &self.blocks {
            match *b {
                Block::Zero { .. } => {}
                Block::Nonneg { off, dim } => {
                    for &v in &u[off..off + dim] {
                        worst = worst.min(v);
                    }
                }
                Block::Soc { off, dim } => {
                    let n1 = norm(&u[off + 1..off + dim]);
                    worst = worst.min(u[off] - n1);
                }
            }
        }
        let shift = if worst > 0.0 { 0.0 } else { 1.0 - worst };
        for b in &self.blocks {
            match *b {
                Block::Zero { .. } => {}
                Block::Nonneg { off, dim } => {
                    for v in &mut u[off..off + dim] {
                        *v += shift;
                    }
                }
                Block::Soc { off, .. } => u[off] += shift,
            }
        }
    }

    /// The largest α ≤ +∞ with λ + α d in every cone (∞ where no block
    /// limits it).
    fn max_step(&self, lambda: &[f64], d: &[f64]) -> f64 {
        let mut alpha = f64::INFINITY;
        for b in &self.blocks {
            match *b {
                Block::Zero { .. } => {}
                Block::Nonneg { off, dim } => {
                    for r in off..off + dim {
                        if d[r] < 0.0 {
                            alpha = alpha.min(-lambda[r] / d[r]);
                        }
                    }
                }
                Block::Soc { off, dim } => {
                    let (l, dd) = (&lambda[off..off + dim], &d[off..off + dim]);
                    alpha = alpha.min(soc_step(l, dd));
                }
            }
        }
        alpha
    }
}

/// P's diagonal entry of column j (0 when absent).
fn p_diag(p: &CscMatrix<f64>, j: usize) -> f64 {
    (p.colptr[j]..p.colptr[j + 1])
        .find(|&k| p.rowval[k] == j)
        .map_or(0.0, |k| p.nzval[k])
}

#[cfg(test)]
mod tests;
