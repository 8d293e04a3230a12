//! Semismooth Newton on the natural map of the whole contact problem, CPU
//! only: every contact at once, one sparse LU a step, inside a proximal
//! point loop.
//!
//! # The equation
//!
//! In the variables z = T⁻¹γ, T = B^½ = diag(√b_f I₃, √b_t I₃) per contact
//! (B the [`Metric`](super::Metric) every method steps in), with y = Nγ + r
//! and ỹ = T y = Ñ z + T r, Ñ = TNT, the problem reads: find z with
//!
//! ```text
//! F(z) = z − G(z − ỹ(z)) = 0,     G = (G_1, …, G_n), one map per contact,
//! ```
//!
//! where G depends on the law. In z, Ñ has its eigenvalues in [0, 1]
//! (Gershgorin, [`Delassus::jacobi_scales`]) and forces and torques weigh
//! alike; K̃ = T⁻¹K is the cone with coefficients (μ, ρ̃, σ̃) = (μ,
//! ρ√(b_f/b_t), σ√(b_f/b_t)).
//!
//! **Associated law: the natural map**, G_i = Π_K̃ᵢ.
//! F(z) = T⁻¹(γ − Π_B(γ − B y)) is Tasora & Anitescu 2013, eq. 40, in the
//! metric B⁻¹; for any positive definite B its zeros are the solutions
//! (γ = Π_B(γ − By) ⇔ −y ∈ N_K(γ) ⇔ γ ∈ K, y ∈ K*, γ ⊥ y).
//!
//! **De Saxcé's law: Alart–Curnier's map** (Alart & Curnier, Comput. Methods
//! Appl. Mech. Eng. 92 (1991); Siconos' `fc3d_AlartCurnier`), with a
//! block per friction part:
//!
//! ```text
//! a = max(0, x_n),  G_n = a,  G_T = Π_ball(μa)(x_T),  G_s = clamp(x_s, −σ̃a, σ̃a),  G_R = Π_ball(ρ̃a)(x_R).
//! ```
//!
//! Its zeros are De Saxcé's solutions. F = 0 says z_n = max(0, z_n − ỹ_n),
//! i.e. z_n ≥ 0, ỹ_n ≥ 0, z_n ỹ_n = 0, and in each block k (coefficient
//! c_k) z_k = Π_ball(c_k z_n)(z_k − ỹ_k), i.e. ‖z_k‖ ≤ c_k z_n and z_k =
//! −c_k z_n ỹ_k/‖ỹ_k‖ where ỹ_k ≠ 0: Coulomb's law in each of the three
//! blocks, on one normal. Acary & Bourrier 2021, eq. 63 (γ ∈ K,
//! ŷ = y + e_n g(y) ∈ K*, γ ⊥ ŷ, g(y) = μ‖y_T‖ + σ|y_s| + ρ‖y_R‖), says the
//! same: ŷ ∈ K* is y_n ≥ 0, and γ·ŷ = γ_n y_n + Σ_k (c_k γ_n‖y_k‖ + γ_k·y_k)
//! is a sum of terms that are each ≥ 0 for γ ∈ K, so each vanishes. T scales
//! z_k and ỹ_k of one block by one factor, so directions, and the balls with
//! (μ, ρ̃, σ̃), are kept. Why not the natural map with De Saxcé's ŷ: its
//! normal row carries g(y), whose norms have a kink at every sticking block,
//! and where ρ̃ is large (the piles of Acary & Bourrier 2021 at μ_r = 1 m:
//! ρ̃ ≈ 10–12) a rolling velocity enters the normal row tenfold. Here a
//! sticking block is linear (G_k = x_k) whatever its coefficient, and no
//! velocity norm enters the normal row. On `tests/data/hard/`'s De Saxcé
//! problems from zero it takes fewer Newton steps (docs/solvers.md, "Hard
//! problems").
//!
//! The stopping test is not F: every method stops on the natural-map
//! residual of [`ResidualMeasure`](super::ResidualMeasure), the same
//! measure for all.
//!
//! # The generalized Jacobian
//!
//! With x = z − ỹ per contact, the chain rule gives block (i, j) of the
//! 6n × 6n matrix
//!
//! ```text
//! J_ij = δ_ij (I − P_i) + P_i Ñ_ij,     P_i = DG_i(x_i),
//! ```
//!
//! so J has the block pattern of N: one sparse matrix a step, factored by
//! faer's sparse LU (column approximate minimum degree ordering; the
//! symbolic analysis done once per solve, since the pattern does not
//! change). G is piecewise smooth and so semismooth (Qi & Sun, Math.
//! Program. 58 (1993)); where x_i sits on the border of two pieces P_i is
//! one piece's derivative, an element of Clarke's generalized Jacobian.
//! Under the associated law P_i is [`project_jacobian`]:
//!
//! | where x_i is | P_i |
//! |---|---|
//! | inside K̃ (sticking in every row) | I |
//! | in the polar cone (separating), at the apex | 0 |
//! | on the surface: sliding, rolling and/or spinning saturated | the closed form's derivative: p₀ = (x₀ + Σ_A μ_k n_k)/D, p_k = μ_k p₀ l̂_k on the saturated blocks A, identity on the others |
//! | on a piece's border (a block exactly at its breakpoint, an edge where two blocks saturate) | the derivative of the piece the projection's test picks |
//!
//! Under De Saxcé's law P_i is [`alart_curnier_jacobian`], block by block:
//!
//! | where x_i is | P_i |
//! |---|---|
//! | x_n ≤ 0 (separating) | 0 |
//! | x_n > 0, block k in its ball, ‖x_k‖ ≤ c_k x_n (sticking) | ∂G_n/∂x_n = 1; identity on block k |
//! | x_n > 0, block k outside its ball (sliding, rolling, spinning) | (c_k x_n/‖x_k‖)(I − x̂_k x̂_kᵀ) on block k (0 for the one-row spinning block), c_k x̂_k in its column n |
//! | on a border (x_n = 0; ‖x_k‖ = c_k x_n) | separating; sticking |
//!
//! # Redundant contacts: a proximal outer loop
//!
//! Under the associated law J = I − P(I − Ñ) with P symmetric, 0 ⪯ P ⪯ I,
//! and 0 ⪯ Ñ ⪯ I, so J's eigenvalues are real and in [0, 1] — but 0 is one
//! of them wherever contacts are redundant (a pile: more contact rows than
//! body freedoms; every sticking contact gives J the rows of Ñ), and the
//! solutions γ are then a set, not a point. Each Newton system is made
//! nonsingular by a proximal term (the proximal point method, Rockafellar,
//! SIAM J. Control Optim. 14 (1976); Siconos' `fc3d_proximal` wraps its
//! Newton solver the same way): at a centre z_c the subproblem
//!
//! ```text
//! F_α(z) = z − G(z − ỹ(z) − α(z − z_c)) = 0,     J_α = J + α P,
//! α = min(0.1, max(10⁻¹⁰, ‖F(z_c)‖ / ‖z_c‖))
//! ```
//!
//! is strongly monotone (associated law), so it has one solution and J_α
//! = I − P((1 − α)I − Ñ) (eigenvalues in [α, 1 + α]) is invertible. Its Newton steps run until
//! ‖F_α‖ ≤ 0.1‖F(z_c)‖ (at most 20), then the centre moves to the new
//! point. F_α(z_c) = F(z_c), and the subproblem's answer lies within
//! O(α · dist(z_c, solutions)) of the solution set, so with α proportional
//! to the residual the outer residuals fall quadratically where the active
//! pieces have settled (`tests/newton.rs` shows it on Siconos problems).
//! Under De Saxcé's law the subproblem has no such guarantee, but the term
//! acts the same way on the sticking blocks (P = I there: rows Ñ + αI).
//! A regularization of J alone, (J + εI)d = −F, does not do: with F not in
//! J's range its steps grow like ‖F‖/ε along the redundant directions.
//!
//! # Globalisation
//!
//! A projected backtracking (Armijo) line search on θ = ½‖F_α‖²: the
//! trial point is Π_B(γ + t T d), the step projected back onto the cones
//! (in the metric B⁻¹), for t = 1, ½, ¼, … until θ ≤ (1 − 2·10⁻⁴ t) θ(z),
//! at most [`MAX_HALVINGS`] halvings (each trial one apply of N). Keeping
//! the iterates admissible matters in a pile, where many contacts have γ
//! and ŷ both near zero: an unprojected step leaves some of them with a
//! negative normal impulse, on a piece of F whose linearization the next
//! step then trusts. Where no
//! t is accepted (the direction of a kink's Jacobian that does not
//! descend), the iterate
//! takes [`RESCUE_SWEEPS`] sweeps of projected Gauss–Seidel
//! ([`pgs`](super::pgs): exact one-contact solves, which settle the
//! contacts' pieces one at a time) and a new centre is taken. (A single
//! projected fixed-point step z ← z − F_α(z) in its place solved 26 of 36
//! steps of the pile of Acary & Bourrier 2021 at μ = 1, μ_r = 1 m from zero
//! to 10⁻⁶, against 32 with the sweeps, in 4.5 s against 2.9 s; 2026-11-27,
//! AMD EPYC.)
//!
//! A Newton step counts as one iteration of `max_iterations`; the residual
//! of the stopping test is checked at every centre (a step costs one sparse
//! factorization, a residual one apply), on the iterate projected onto the
//! cones, which is what the solve returns.
//!
//! # Where it stands
//!
//! From zero it solves 20 of the 21 Siconos problems of
//! `tests/data/siconos` to 10⁻⁶ in 4–38 Newton steps, and eight of the
//! twelve piles of `tests/data/hard` (a tall stack, the piles of
//! Acary & Bourrier 2021 at μ_r = 0.1 and 1 m; docs/solvers.md). Where it
//! fails, and as the fallback of PGS in the standing pile of
//! Acary & Bourrier 2021, the proximal weight α follows the residual down,
//! J_α nears singular along the redundant contacts' directions, and the
//! Newton step there is long: it crosses the pieces of many degenerate
//! contacts (γ_n and ỹ_n both near 0, blocks near their balls' rims), and
//! the line search accepts only tiny steps (t of 10⁻³ to 10⁻⁸). Its
//! directional derivative agrees with J d = −F at such points (checked by
//! differences): the step is right, the pieces are too close. So the
//! interior point stays the fallback for runs (docs/solvers.md, "Choosing a
//! solver").

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::lu::{factorize_symbolic_lu, NumericLu, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};

use super::{begin, check_stop, SolveStats, SolverSettings, Workspace};
use crate::cone::{project, project_jacobian};
use crate::material::{ConeCoeffs, FrictionLaw};
use crate::problem::{Delassus, Vec6};

/// Sweeps of projected Gauss–Seidel where the line search fails (module docs).
pub const RESCUE_SWEEPS: usize = 50;
/// Halvings of the line search before the Gauss–Seidel sweeps are taken.
pub const MAX_HALVINGS: usize = 30;
/// Armijo's sufficient-decrease constant.
const ARMIJO: f64 = 1e-4;
/// The proximal weight α = ALPHA_GAIN · (relative residual), clamped to
/// [ALPHA_MIN, ALPHA_MAX].
const ALPHA_GAIN: f64 = 1.0;
const ALPHA_MIN: f64 = 1e-10;
const ALPHA_MAX: f64 = 1e-1;
/// Newton steps per proximal centre at most.
const INNER_MAX: usize = 20;
/// The inner solve stops when ‖F_α‖ falls below this fraction of ‖F‖ at the centre.
const INNER_REDUCTION: f64 = 0.1;

/// One Newton step as [`solve_traced`] reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonStep {
    /// The step's number (1 for the first).
    pub iteration: usize,
    /// ‖F(z)‖ of the problem's natural map before the step.
    pub merit_before: f64,
    /// ‖F(z)‖ after it.
    pub merit_after: f64,
    /// ‖F_α(z)‖ of the proximal subproblem before the step (its centre is
    /// the iterate where the subproblem was posed).
    pub proximal_before: f64,
    /// ‖F_α(z)‖ after it.
    pub proximal_after: f64,
    /// The step length the line search accepted (0 when the fixed-point
    /// step was taken instead).
    pub step: f64,
    /// The proximal weight α of the subproblem.
    pub alpha: f64,
}

/// Alart–Curnier's map of one contact in z (module docs): the normal row
/// a = max(0, x_n), and each friction block (sliding, spinning, rolling)
/// projected onto its ball of radius (coefficient) · a.
pub fn alart_curnier(x: &Vec6, c: &ConeCoeffs) -> Vec6 {
    let a = x[0].max(0.0);
    let mut out = [a, x[1], x[2], x[3], x[4], x[5]];
    for (k, coeff) in [(1, c.mu), (4, c.rho)] {
        let s = crate::cone::shrink(coeff * a, x[k].hypot(x[k + 1]));
        out[k] *= s;
        out[k + 1] *= s;
    }
    let r = c.sigma * a;
    out[3] = x[3].clamp(-r, r);
    out
}

/// The derivative of [`alart_curnier`] (row r, column c: ∂G_r/∂x_c): one
/// element of its generalized Jacobian, the piece on the side of each
/// breakpoint given in the module docs' table.
pub fn alart_curnier_jacobian(x: &Vec6, c: &ConeCoeffs) -> [[f64; 6]; 6] {
    let mut d = [[0.0; 6]; 6];
    let active = x[0] > 0.0;
    let a = x[0].max(0.0);
    if active {
        d[0][0] = 1.0;
    }
    for (k, coeff) in [(1, c.mu), (4, c.rho)] {
        let (r, n) = (coeff * a, x[k].hypot(x[k + 1]));
        if r <= 0.0 {
            continue; // the ball is the point 0 near x: G = 0
        }
        if n <= r {
            d[k][k] = 1.0;
            d[k + 1][k + 1] = 1.0;
        } else {
            let u = [x[k] / n, x[k + 1] / n];
            let s = r / n;
            for p in 0..2 {
                for q in 0..2 {
                    d[k + p][k + q] = s * (f64::from(u8::from(p == q)) - u[p] * u[q]);
                }
                d[k + p][0] = coeff * u[p];
            }
        }
    }
    let r = c.sigma * a;
    if r > 0.0 {
        if x[3].abs() <= r {
            d[3][3] = 1.0;
        } else {
            d[3][0] = c.sigma * x[3].signum();
        }
    }
    d
}

/// T = B^½ per contact and the cone in z (module docs).
struct Scaling {
    /// (√b_f, √b_t) per contact.
    t: Vec<(f64, f64)>,
    /// The cone K̃ = T⁻¹K per contact.
    cone: Vec<ConeCoeffs>,
    /// The map: Alart–Curnier's (De Saxcé's law) or the natural map
    /// (associated law).
    law: FrictionLaw,
}

impl Scaling {
    /// From the solve's metric (its scales, and its cones in the scaled
    /// variables, which are K̃: T⁻¹ scales the torque rows by √(b_f/b_t)
    /// relative to the force rows, and the cone is homogeneous).
    fn new(m: &super::Metric) -> Self {
        Scaling {
            t: m.scales
                .iter()
                .map(|&(f, t)| (f.sqrt(), t.sqrt()))
                .collect(),
            cone: (0..m.cones.len()).map(|i| m.scaled_cone(i)).collect(),
            law: m.law,
        }
    }

    #[inline]
    fn diag(&self, i: usize) -> [f64; 6] {
        let (f, t) = self.t[i];
        [f, f, f, t, t, t]
    }

    /// x = z − ỹ − α(z − z_c) of contact i (γ, y and the centre γ_c in
    /// the original variables).
    #[inline]
    fn x(&self, i: usize, gamma: &Vec6, y: &Vec6, center: &Vec6, alpha: f64) -> Vec6 {
        let d = self.diag(i);
        std::array::from_fn(|k| {
            gamma[k] / d[k] - d[k] * y[k] - alpha * (gamma[k] - center[k]) / d[k]
        })
    }

    /// F_i = z_i − G_i(x_i).
    #[inline]
    fn f(&self, i: usize, gamma: &Vec6, y: &Vec6, center: &Vec6, alpha: f64) -> Vec6 {
        let d = self.diag(i);
        let x = self.x(i, gamma, y, center, alpha);
        let g = match self.law {
            FrictionLaw::Associated => project(&x, &self.cone[i]),
            FrictionLaw::DeSaxce => alart_curnier(&x, &self.cone[i]),
        };
        std::array::from_fn(|k| gamma[k] / d[k] - g[k])
    }

    /// ‖F‖² over all contacts.
    fn merit_sq(&self, gamma: &[Vec6], y: &[Vec6], center: &[Vec6], alpha: f64) -> f64 {
        let [s] = super::det_sums(gamma.len(), |i| {
            [self
                .f(i, &gamma[i], &y[i], &center[i], alpha)
                .iter()
                .map(|v| v * v)
                .sum()]
        });
        s
    }

    /// P_i = DG_i(x_i) (module docs).
    fn derivative(
        &self,
        i: usize,
        gamma: &Vec6,
        y: &Vec6,
        center: &Vec6,
        alpha: f64,
    ) -> [[f64; 6]; 6] {
        let x = self.x(i, gamma, y, center, alpha);
        match self.law {
            FrictionLaw::Associated => project_jacobian(&x, &self.cone[i]),
            FrictionLaw::DeSaxce => alart_curnier_jacobian(&x, &self.cone[i]),
        }
    }
}

/// J_α in 6×6 blocks on N's block pattern (every diagonal block stored)
/// and in compressed columns for the sparse LU (module docs).
struct System {
    sc: Scaling,
    /// Block-CSR of Ñ = TNT and of J: row offsets, block columns.
    row_offsets: Vec<usize>,
    cols: Vec<usize>,
    ntilde: Vec<[[f64; 6]; 6]>,
    /// J's blocks, in the same order.
    jb: Vec<[[f64; 6]; 6]>,
    /// The stored block of each diagonal (block-CSR index).
    diag: Vec<usize>,
    /// J_α in compressed columns, and each entry's source: the index
    /// 36 k + 6 r + c into `jb`.
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    source: Vec<u32>,
    values: Vec<f64>,
}

impl System {
    fn new<D: Delassus + ?Sized>(op: &D, metric: &super::Metric) -> Self {
        let sc = Scaling::new(metric);
        let n_mat = op.explicit();
        let n = n_mat.r.len();
        // Ñ by rows, a zero diagonal block added where N stores none.
        let mut row_offsets = Vec::with_capacity(n + 1);
        let mut cols = Vec::with_capacity(n_mat.cols.len() + n);
        let mut ntilde = Vec::with_capacity(n_mat.cols.len() + n);
        let mut diag = vec![usize::MAX; n];
        row_offsets.push(0);
        for (i, &(pf, pt)) in sc.t.iter().enumerate() {
            let di = [pf, pf, pf, pt, pt, pt];
            let mut row: Vec<(usize, [[f64; 6]; 6])> = (n_mat.row_offsets[i]
                ..n_mat.row_offsets[i + 1])
                .map(|k| {
                    let j = n_mat.cols[k];
                    let dj = sc.diag(j);
                    let b = &n_mat.blocks[k];
                    (
                        j,
                        std::array::from_fn(|r| std::array::from_fn(|c| di[r] * b[r][c] * dj[c])),
                    )
                })
                .collect();
            if !row.iter().any(|&(j, _)| j == i) {
                row.push((i, [[0.0; 6]; 6]));
            }
            row.sort_by_key(|&(j, _)| j);
            // Blocks stored twice for one (i, j) are summed.
            row.dedup_by(|b, a| {
                if a.0 == b.0 {
                    for r in 0..6 {
                        for c in 0..6 {
                            a.1[r][c] += b.1[r][c];
                        }
                    }
                    true
                } else {
                    false
                }
            });
            for (j, b) in row {
                if j == i {
                    diag[i] = cols.len();
                }
                cols.push(j);
                ntilde.push(b);
            }
            row_offsets.push(cols.len());
        }
        // J's blocks per block column, in block-row order.
        let mut per_col: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
        for i in 0..n {
            for k in row_offsets[i]..row_offsets[i + 1] {
                per_col[cols[k]].push((i, k));
            }
        }
        let nnz = 36 * cols.len();
        let mut col_ptr = Vec::with_capacity(6 * n + 1);
        let mut row_idx = Vec::with_capacity(nnz);
        let mut source = Vec::with_capacity(nnz);
        col_ptr.push(0);
        for blocks in &per_col {
            for cc in 0..6 {
                for &(i, k) in blocks {
                    for r in 0..6 {
                        row_idx.push(6 * i + r);
                        source.push((36 * k + 6 * r + cc) as u32);
                    }
                }
                col_ptr.push(row_idx.len());
            }
        }
        let values = vec![0.0; row_idx.len()];
        let jb = vec![[[0.0; 6]; 6]; cols.len()];
        System {
            sc,
            row_offsets,
            cols,
            ntilde,
            jb,
            diag,
            col_ptr,
            row_idx,
            source,
            values,
        }
    }

    fn n(&self) -> usize {
        self.diag.len()
    }

    fn symbolic(&self) -> SymbolicSparseColMatRef<'_, usize> {
        let dim = 6 * self.n();
        SymbolicSparseColMatRef::new_checked(dim, dim, &self.col_ptr, None, &self.row_idx)
    }

    /// Writes J_α = J + α P at (γ, y = Nγ + r) into `jb` (module docs).
    fn assemble(&mut self, gamma: &[Vec6], y: &[Vec6], center: &[Vec6], alpha: f64) {
        for i in 0..self.n() {
            let p = self.sc.derivative(i, &gamma[i], &y[i], &center[i], alpha);
            for k in self.row_offsets[i]..self.row_offsets[i + 1] {
                let nb = &self.ntilde[k];
                let out = &mut self.jb[k];
                for r in 0..6 {
                    for c in 0..6 {
                        let mut v = 0.0;
                        for q in 0..6 {
                            v += p[r][q] * nb[q][c];
                        }
                        if k == self.diag[i] {
                            v += if r == c { 1.0 } else { 0.0 } - p[r][c] + alpha * p[r][c];
                        }
                        out[r][c] = v;
                    }
                }
            }
        }
    }

    /// The compressed columns' values, from `jb`.
    fn fill(&mut self) {
        for (v, &src) in self.values.iter_mut().zip(&self.source) {
            let s = src as usize;
            *v = self.jb[s / 36][(s % 36) / 6][s % 6];
        }
    }
}

/// The map F(z) of the module docs at γ (z = T⁻¹γ), 6 entries a contact,
/// with T from `op`'s Jacobi scales: the natural map under the associated
/// law, Alart–Curnier's under De Saxcé's. For tests and diagnostics.
pub fn equation<D: Delassus + ?Sized>(op: &mut D, gamma: &[Vec6]) -> Vec<f64> {
    let mut m = super::Metric::default();
    m.build(op);
    let sc = Scaling::new(&m);
    let mut y = vec![[0.0; 6]; gamma.len()];
    op.apply(gamma, &mut y);
    (0..gamma.len())
        .flat_map(|i| sc.f(i, &gamma[i], &y[i], &gamma[i], 0.0))
        .collect()
}

/// The generalized Jacobian ∂F/∂z at γ as a dense matrix (row-major, 6n ×
/// 6n), the one a Newton step factors (without its regularization): for
/// tests against finite differences of [`equation`].
pub fn jacobian_dense<D: Delassus + ?Sized>(op: &mut D, gamma: &[Vec6]) -> Vec<Vec<f64>> {
    let mut m = super::Metric::default();
    m.build(op);
    let mut sys = System::new(op, &m);
    let mut y = vec![[0.0; 6]; gamma.len()];
    op.apply(gamma, &mut y);
    sys.assemble(gamma, &y, gamma, 0.0);
    let dim = 6 * gamma.len();
    let mut out = vec![vec![0.0; dim]; dim];
    for i in 0..sys.n() {
        for k in sys.row_offsets[i]..sys.row_offsets[i + 1] {
            for r in 0..6 {
                for c in 0..6 {
                    out[6 * i + r][6 * sys.cols[k] + c] = sys.jb[k][r][c];
                }
            }
        }
    }
    out
}

/// T = B^½ of `op`'s metric per contact, (√b_f, √b_t): to map a step in z
/// to one in γ (tests).
pub fn scaling<D: Delassus + ?Sized>(op: &D) -> Vec<(f64, f64)> {
    let mut m = super::Metric::default();
    m.build(op);
    m.scales
        .iter()
        .map(|&(f, t)| (f.sqrt(), t.sqrt()))
        .collect()
}

/// J_α's sparse LU: the symbolic analysis (column ordering, supernodes)
/// once per solve, and the numeric factors and scratch kept from one Newton
/// step to the next instead of allocated anew at each.
struct Factors {
    symbolic: SymbolicLu<usize>,
    numeric: NumericLu<usize, f64>,
    mem: MemBuffer,
}

impl Factors {
    /// The analysis of J_α's pattern; `None` where faer cannot do it.
    fn new(pattern: SymbolicSparseColMatRef<'_, usize>) -> Option<Self> {
        let symbolic = factorize_symbolic_lu(pattern, Default::default()).ok()?;
        let req = StackReq::any_of(&[
            symbolic.factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(1, Par::Seq),
        ]);
        Some(Factors {
            symbolic,
            numeric: NumericLu::new(),
            mem: MemBuffer::try_new(req).ok()?,
        })
    }

    /// Factors `mat` and solves mat · x = rhs in place; false where the
    /// factorisation fails or the answer is not finite.
    fn solve(&mut self, mat: SparseColMatRef<'_, usize, f64>, rhs: &mut [f64]) -> bool {
        let stack = MemStack::new(&mut self.mem);
        let Ok(lu) = self.symbolic.factorize_numeric_lu(
            &mut self.numeric,
            mat,
            Par::Seq,
            stack,
            Default::default(),
        ) else {
            return false;
        };
        let dim = rhs.len();
        lu.solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(rhs, dim, 1),
            Par::Seq,
            MemStack::new(&mut self.mem),
        );
        rhs.iter().all(|v| v.is_finite())
    }
}

/// Solves from `gamma` (overwritten with the answer) by semismooth Newton.
pub fn solve<D: Delassus + Sync>(
    op: &mut D,
    gamma: &mut [Vec6],
    s: &SolverSettings,
    ws: &mut Workspace,
) -> SolveStats {
    solve_traced(op, gamma, s, ws, &mut |_| {})
}

/// [`solve`], calling `trace` after every Newton step.
pub fn solve_traced<D: Delassus + Sync>(
    op: &mut D,
    gamma: &mut [Vec6],
    s: &SolverSettings,
    ws: &mut Workspace,
    trace: &mut dyn FnMut(&NewtonStep),
) -> SolveStats {
    let n = match begin(op, gamma, s, ws) {
        Ok(n) => n,
        Err(done) => return done,
    };
    let mut sys = System::new(op, &ws.metric);
    let Some(mut lu) = Factors::new(sys.symbolic()) else {
        return SolveStats {
            residual_abs: f64::NAN,
            residual_rel: f64::NAN,
            ..Default::default()
        };
    };
    let dim = 6 * n;
    let mut y = std::mem::take(&mut ws.y);
    let [mut trial, mut yt, mut fz, mut center, v4, v5] = std::mem::take(&mut ws.v);
    let mut rhs = vec![0.0; dim];
    let mut stats = SolveStats::default();
    let mut it = 0;
    op.apply(gamma, &mut y);
    let z_norm = |gamma: &[Vec6], sc: &Scaling| {
        gamma
            .iter()
            .enumerate()
            .flat_map(|(i, g)| {
                let d = sc.diag(i);
                (0..6).map(move |k| g[k] / d[k])
            })
            .map(|v| v * v)
            .sum::<f64>()
            .sqrt()
    };
    let mut pgs_ws = Workspace::default();
    'outer: loop {
        // The stopping test on the iterate projected onto the cones (the
        // answer returned, see below).
        for (i, g) in gamma.iter().enumerate() {
            trial[i] = ws.metric.project(i, g);
        }
        op.apply(&trial, &mut yt);
        if check_stop(op, s, ws, it, &trial, &yt, &mut stats) {
            break;
        }
        // The proximal centre and its α.
        center.copy_from_slice(gamma);
        let outer_sq = sys.sc.merit_sq(gamma, &y, &center, 0.0);
        let mut true_sq = outer_sq;
        let rel = outer_sq.sqrt() / z_norm(gamma, &sys.sc).max(f64::MIN_POSITIVE);
        let alpha = (ALPHA_GAIN * rel).clamp(ALPHA_MIN, ALPHA_MAX);
        for _ in 0..INNER_MAX {
            if it >= s.max_iterations {
                continue 'outer; // the stopping test ends it
            }
            for i in 0..n {
                fz[i] = sys.sc.f(i, &gamma[i], &y[i], &center[i], alpha);
            }
            let merit_sq: f64 = fz.iter().flatten().map(|v| v * v).sum();
            // (At the centre F_α = F, so the first pass never stops here.)
            if merit_sq <= INNER_REDUCTION * INNER_REDUCTION * outer_sq {
                break;
            }
            it += 1;
            sys.assemble(gamma, &y, &center, alpha);
            sys.fill();
            for (i, f) in fz.iter().enumerate() {
                for k in 0..6 {
                    rhs[6 * i + k] = -f[k];
                }
            }
            let solved = lu.solve(SparseColMatRef::new(sys.symbolic(), &sys.values), &mut rhs);
            let step = &rhs;
            // Line search on θ along Δγ = T d.
            let mut accepted = 0.0;
            let mut merit_after_sq = f64::NAN;
            if solved {
                let mut t = 1.0;
                for _ in 0..=MAX_HALVINGS {
                    for i in 0..n {
                        let d = sys.sc.diag(i);
                        trial[i] =
                            std::array::from_fn(|k| gamma[i][k] + t * d[k] * step[6 * i + k]);
                        trial[i] = ws.metric.project(i, &trial[i]);
                    }
                    op.apply(&trial, &mut yt);
                    let m2 = sys.sc.merit_sq(&trial, &yt, &center, alpha);
                    if m2 <= (1.0 - 2.0 * ARMIJO * t) * merit_sq {
                        accepted = t;
                        merit_after_sq = m2;
                        break;
                    }
                    t *= 0.5;
                }
            }
            if accepted > 0.0 {
                gamma.copy_from_slice(&trial);
                std::mem::swap(&mut y, &mut yt);
            } else {
                // No step length lowers θ: RESCUE_SWEEPS sweeps of projected
                // Gauss–Seidel from here (exact one-contact solves), then a
                // new centre.
                let sweeps = SolverSettings {
                    method: super::SolverMethod::Pgs,
                    max_iterations: RESCUE_SWEEPS,
                    tolerance: 0.0,
                    deadline: None,
                    fallback: None,
                    ..s.clone()
                };
                super::pgs::solve(op, gamma, &sweeps, &mut pgs_ws);
                op.apply(gamma, &mut y);
                merit_after_sq = sys.sc.merit_sq(gamma, &y, &center, alpha);
            }
            let true_after_sq = sys.sc.merit_sq(gamma, &y, gamma, 0.0);
            trace(&NewtonStep {
                iteration: it,
                merit_before: true_sq.sqrt(),
                merit_after: true_after_sq.sqrt(),
                proximal_before: merit_sq.sqrt(),
                proximal_after: merit_after_sq.sqrt(),
                step: accepted,
                alpha,
            });
            true_sq = true_after_sq;
            if accepted == 0.0 {
                break;
            }
        }
    }
    // Newton's iterates need not lie in the cones (only their limit does):
    // the answer is the last iterate projected onto them (in the metric
    // B⁻¹: the nearest admissible impulses), whose residual the stopping
    // test measured.
    gamma.copy_from_slice(&trial);
    std::mem::swap(&mut y, &mut yt);
    stats.iterations = it;
    ws.y = y;
    ws.v = [trial, yt, fz, center, v4, v5];
    stats
}
