//! Projected block Gauss–Seidel (seed 001 §5.2, eqs. 66–67), CPU only.
//!
//! Contacts are visited one at a time in index order. Contact α sees the
//! others at their latest values, y_α = W_αα p_α + q̄_α with
//! q̄_α = q_α + Σ_{β≠α} W_αβ p_β (eq. 66), and solves its own one-contact
//! problem (eq. 67) before the next contact is visited. The one-contact
//! problem is solved by the projected fixed point
//!
//! ```text
//! p ← Π_α(p − ω B_α ŷ(W_αα p + q̄_α))
//! ```
//!
//! in the metric B_α of W_αα's own Gershgorin bound (force rows and torque
//! rows separately), until the change is below 1e-12 relative or for at
//! most 100 local iterations; then p_α ← λ p + (1 − λ) p_α. Works for both
//! laws (ŷ = y + g(y) under De Saxcé's). Sequential, so deterministic, and
//! usually the fewest sweeps; one sweep costs about one apply of W.
//!
//! **Exact answers first.** Two cases of the one-contact problem have a
//! closed form under both laws and are tried before the fixed point:
//!
//! ```text
//! sticking:    p = −W_αα⁻¹ q̄_α   if it lies in K_α   (then y = 0, ŷ = 0)
//! separating:  p = 0              if ŷ(q̄_α) ∈ K_α*,  K* = {x_n ≥ μ‖x_t‖ + σ|x_s| + ρ‖x_r‖}
//! ```
//!
//! W_αα⁻¹ is a Cholesky factor of W_αα on the rows the cone leaves free
//! (the torque rows of a cone with ρ = 0 or σ = 0 are held at zero), made
//! once per solve. In a resting pile most contacts stick in every row, so
//! most visits cost one 6×6 solve instead of up to 100 local iterations —
//! and are exact, where the local fixed point converges slowly: W_αα
//! couples the tangential and rolling rows (condition number ≈ 12 for a
//! solid sphere on a wall), and a cone with ρ ≫ R is very anisotropic.
//!
//! **Anderson acceleration.** Where the contacts lock into a redundant,
//! welded frame (seed 001's piles at μ_r ≫ R, tall stacks) the sweeps
//! creep: the error decays along a few slow directions at a rate near 1.
//! Seen from the residual checks, `check_every` sweeps are one step of a
//! fixed-point map x ↦ G(x), nearly linear there, and Anderson mixing
//! (Walker & Ni, SIAM J. Numer. Anal. 49 (2011), "type II") removes those
//! directions from the last m = `anderson` steps: with f_j = G(x_j) − x_j,
//!
//! ```text
//! θ = argmin ‖f_k − Σ_j θ_j (f_{j+1} − f_j)‖,    x⁺ = Π(G(x_k) − Σ_j θ_j (G(x_{j+1}) − G(x_j)))
//! ```
//!
//! projected onto the cones. The mixed iterate is kept only when its residual
//! is at most that of the plain G(x_k) — both in the weighted measure, impulses
//! against impulses, whichever measure stops the solve (in Siconos' measure,
//! which adds velocities to impulses, the choice went wrong: one problem that
//! plain PGS solves to 10⁻⁴ stalled); else G(x_k) is kept and the history
//! starts again, so no check's residual is above what plain PGS would have
//! given from the same iterate. Cost: one more apply of W per check (about a
//! tenth more work at `check_every` = 10) and the mixing's dot products (m² per
//! check, over all contacts). On the seed 001 problems (README, "Hard
//! problems") it turns stalls into convergence: the step whose 20,000 plain
//! sweeps stop at 4·10⁻⁴ reaches 10⁻⁴ in 340; `seed001_mu1_mur1_step06000`,
//! which no method solved, reaches 10⁻⁶.
//!
//! **On by default** (`solver.anderson` = [`ANDERSON_DEPTH`] = 5; 0 gives plain
//! sweeps). Measured on the same problems: the first 4,000 steps of seed 001's
//! pile at μ = 1, μ_r = 1 m run with plain PGS (cap 1,000 sweeps, 10⁻⁴
//! weighted, warm-started), each step's problem also solved by the mixed method
//! from the same warm start: 3,487 steps met the tolerance with mixing against
//! 3,394 plain, in 15.6 % fewer sweeps (944,940 against 1,120,230). Two runs
//! side by side do not measure this: a different answer at one step changes
//! every later step, so the two piles pose different problems (session 15 read
//! 4,028 against 4,818 steps met from such a pair, and took it for a loss).

//!
//! **An accelerated local solve: measured, not kept.** The one-contact
//! fixed point with Nesterov momentum and O'Donoghue–Candès gradient
//! restarts (same metric, step and stopping test) takes 2.6× fewer local
//! iterations and halves a sweep's time on seed 001's μ = 1, μ_r = 1 m
//! pile (10 steps from its checkpoint at 7.8 s, cap 1,000: worst residual
//! 1.7·10⁻³ against 2.1·10⁻³, 4.0 s against 8.2 s). But it breaks the
//! Anderson mixing on `seed001_mu1_mur1_step06000`: plain local solves
//! meet 10⁻⁴ there in 340 sweeps, accelerated ones stall at 1.2·10⁻⁴
//! after 3,000 (with 100, 300 or 1,000 local iterations, with or without
//! restarts); without mixing both need 520 sweeps. That success of the
//! plain local solve is luck, though: capped at 30, 300 or 1,000 local
//! iterations instead of 100 it stalls there too. So the accelerated
//! local solve is the candidate to measure on the whole hard suite and a
//! run; the plain one stays until that is done.

use std::collections::VecDeque;

use super::{
    begin, check_stop, gershgorin_scales, is_check, SolveStats, SolverSettings, Workspace,
};
use crate::cone::{is_in_dual, is_inside, project};
use crate::material::ConeCoeffs;
use crate::problem::{Delassus, Vec6};

/// The depth of the Anderson acceleration: `solver.anderson`'s default and
/// the depth the measurements in the module docs used.
pub const ANDERSON_DEPTH: usize = 5;
/// The largest depth a scene may ask for (each step of depth keeps two
/// copies of the impulses).
pub const ANDERSON_MAX: usize = 20;

/// Checks an Anderson depth (`solver.anderson`, `repose solve --anderson`):
/// the reason it is refused, if it is.
pub fn check_depth(depth: usize) -> Result<(), String> {
    if depth > ANDERSON_MAX {
        return Err(format!("must be at most {ANDERSON_MAX} (got {depth})"));
    }
    Ok(())
}

/// Local fixed-point iterations per visit, at most.
const LOCAL_MAX: usize = 100;
/// Local stopping tolerance (relative change of the contact's reaction).
const LOCAL_TOL: f64 = 1e-12;

/// Gershgorin scales of one 6×6 block (see [`gershgorin_scales`]).
fn block_scales(w: &[[f64; 6]; 6]) -> (f64, f64) {
    gershgorin_scales(&std::array::from_fn(|r| w[r].iter().map(|v| v.abs()).sum()))
}

fn mat_vec(w: &[[f64; 6]; 6], p: &Vec6) -> Vec6 {
    std::array::from_fn(|r| (0..6).map(|c| w[r][c] * p[c]).sum())
}

/// A Cholesky factor of W_αα restricted to the rows its cone leaves free
/// (module docs), for the sticking case.
#[derive(Clone, Copy)]
struct Sticking {
    /// The free rows, `rows[..n]`.
    rows: [usize; 6],
    n: usize,
    /// Lower-triangular factor L (L Lᵀ = W on the free rows), row-major.
    l: [[f64; 6]; 6],
}

impl Sticking {
    /// The factor of `w` for cone `c`, or `None` when W is not positive
    /// definite on the free rows (then the fixed point does the work).
    fn new(w: &[[f64; 6]; 6], c: &ConeCoeffs) -> Option<Self> {
        let mut rows = [0; 6];
        let mut n = 0;
        for (r, free) in [true, true, true, c.sigma > 0.0, c.rho > 0.0, c.rho > 0.0]
            .into_iter()
            .enumerate()
        {
            if free {
                rows[n] = r;
                n += 1;
            }
        }
        let scale = (0..n).map(|i| w[rows[i]][rows[i]]).fold(0.0, f64::max);
        let mut l = [[0.0; 6]; 6];
        for i in 0..n {
            for j in 0..=i {
                let s = w[rows[i]][rows[j]] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
                if i == j {
                    if s.is_nan() || s <= 1e-12 * scale {
                        return None;
                    }
                    l[i][i] = s.sqrt();
                } else {
                    l[i][j] = s / l[j][j];
                }
            }
        }
        Some(Sticking { rows, n, l })
    }

    /// p = −W⁻¹ q̄ on the free rows, zero on the others.
    fn solve(&self, qbar: &Vec6) -> Vec6 {
        let (n, l) = (self.n, &self.l);
        let mut z = [0.0; 6];
        for i in 0..n {
            let s = -qbar[self.rows[i]] - (0..i).map(|k| l[i][k] * z[k]).sum::<f64>();
            z[i] = s / l[i][i];
        }
        for i in (0..n).rev() {
            let s = z[i] - (i + 1..n).map(|k| l[k][i] * z[k]).sum::<f64>();
            z[i] = s / l[i][i];
        }
        let mut p = [0.0; 6];
        for i in 0..n {
            p[self.rows[i]] = z[i];
        }
        p
    }
}

/// Solves with projected Gauss–Seidel from `gamma` (warm start), overwriting
/// it with the result. An iteration is one sweep over all contacts.
pub fn solve<D: Delassus + Sync>(
    op: &mut D,
    gamma: &mut [Vec6],
    s: &SolverSettings,
    ws: &mut Workspace,
) -> SolveStats {
    let n = match begin(op, gamma, s, ws) {
        Ok(n) => n,
        Err(done) => return done,
    };
    let mut y = std::mem::take(&mut ws.y);
    // The local metric: the same cones, scales from each diagonal block.
    let mut local = std::mem::take(&mut ws.metric);
    let diag: Vec<[[f64; 6]; 6]> = (0..n).map(|i| op.diag_block(i)).collect();
    let sticking: Vec<Option<Sticking>> = (0..n)
        .map(|i| Sticking::new(&diag[i], &local.cones[i]))
        .collect();
    local.scales.clear();
    local.scales.extend(diag.iter().map(block_scales));
    local.rescale();
    let (omega, lambda) = (s.omega, s.lambda);
    let mut solve_local = |i: usize, g: &Vec6, y: &Vec6| -> Vec6 {
        let w = &diag[i];
        let wg = mat_vec(w, g);
        let qbar: Vec6 = std::array::from_fn(|k| y[k] - wg[k]);
        let relax =
            |p: Vec6| -> Vec6 { std::array::from_fn(|k| lambda * p[k] + (1.0 - lambda) * g[k]) };
        let c = &local.cones[i];
        if let Some(st) = &sticking[i] {
            let p = st.solve(&qbar);
            if is_inside(&p, c, 0.0) {
                return relax(p);
            }
        }
        if is_in_dual(&local.modified(i, &qbar), c) {
            return relax([0.0; 6]);
        }
        let mut p = *g;
        for _ in 0..LOCAL_MAX {
            let wp = mat_vec(w, &p);
            let yl: Vec6 = std::array::from_fn(|k| wp[k] + qbar[k]);
            let pn = local.project(i, &local.step(i, &p, &local.modified(i, &yl), omega));
            let change = (0..6).map(|k| (pn[k] - p[k]).abs()).fold(0.0, f64::max);
            let size = pn.iter().map(|v| v.abs()).fold(0.0, f64::max);
            p = pn;
            if change <= LOCAL_TOL * size {
                break;
            }
        }
        relax(p)
    };
    let mut stats = SolveStats::default();
    // Anderson mixing needs the residual checks (a tolerance).
    let depth = if s.tolerance > 0.0 { s.anderson } else { 0 };
    let mut mixing = Anderson::new(depth);
    let (mut mixed, mut y_mixed) = (Vec::new(), vec![[0.0; 6]; if depth > 0 { n } else { 0 }]);
    let mut it = 0;
    loop {
        if is_check(it, s) {
            op.apply(gamma, &mut y);
            if depth > 0 && it > 0 {
                // γ is G(x) of the last check's x: keep the mixed iterate
                // where its residual is below G(x)'s.
                mixing.record(gamma);
                if mixing.mixed(&mut mixed) {
                    for (g, c) in mixed.iter_mut().zip(&local.cones) {
                        *g = project(g, c);
                    }
                    op.apply(&mixed, &mut y_mixed);
                    if ws.merit(op, &mixed, &y_mixed) <= ws.merit(op, gamma, &y) {
                        gamma.copy_from_slice(&mixed);
                        std::mem::swap(&mut y, &mut y_mixed);
                    } else {
                        mixing.restart();
                    }
                }
            }
            if check_stop(op, s, ws, it, gamma, &y, &mut stats) {
                break;
            }
            if depth > 0 {
                mixing.set_base(gamma);
            }
        }
        op.gauss_seidel_sweep(gamma, &mut solve_local);
        it += 1;
    }
    stats.iterations = it;
    ws.metric = local;
    ws.y = y;
    stats
}

/// Anderson mixing of a fixed-point map x ↦ G(x) on the impulses (module
/// docs): the last `depth` + 1 values G(x_j) and residuals f_j = G(x_j) − x_j.
/// The buffers of dropped steps are kept and reused, so a solve allocates
/// its history once.
struct Anderson {
    depth: usize,
    /// x of the step being taken.
    base: Vec<Vec6>,
    /// G(x_j), oldest first.
    g: VecDeque<Vec<Vec6>>,
    /// f_j, oldest first.
    f: VecDeque<Vec<Vec6>>,
    /// Buffers of dropped steps, for reuse.
    spare: Vec<Vec<Vec6>>,
}

impl Anderson {
    fn new(depth: usize) -> Self {
        Anderson {
            depth,
            base: Vec::new(),
            g: VecDeque::new(),
            f: VecDeque::new(),
            spare: Vec::new(),
        }
    }

    /// The x the next step starts from.
    fn set_base(&mut self, x: &[Vec6]) {
        self.base.clear();
        self.base.extend_from_slice(x);
    }

    /// Records G(base) = `gx`.
    fn record(&mut self, gx: &[Vec6]) {
        if self.g.len() > self.depth {
            self.spare.extend(self.g.pop_front());
            self.spare.extend(self.f.pop_front());
        }
        let mut f = self.spare.pop().unwrap_or_default();
        f.clear();
        f.extend(
            gx.iter()
                .zip(&self.base)
                .map(|(a, b)| -> Vec6 { std::array::from_fn(|k| a[k] - b[k]) }),
        );
        let mut g = self.spare.pop().unwrap_or_default();
        g.clear();
        g.extend_from_slice(gx);
        self.g.push_back(g);
        self.f.push_back(f);
    }

    /// Forgets the history (after a refused mixed iterate).
    fn restart(&mut self) {
        self.spare.extend(self.g.drain(..));
        self.spare.extend(self.f.drain(..));
    }

    /// Writes the mixed iterate (not projected) into `out` once two steps
    /// are recorded; false when there are fewer or the least-squares
    /// problem is singular.
    fn mixed(&self, out: &mut Vec<Vec6>) -> bool {
        let (f, k) = (&self.f, self.f.len());
        if k < 2 {
            return false;
        }
        let cols = k - 1;
        // Normal equations of the least-squares problem min ‖f_k − Σ θ_j Δf_j‖
        // with Δf_j = f_{j+1} − f_j, lightly regularised (the differences can
        // be nearly dependent). A ≤ ANDERSON_MAX-square system per check:
        // its allocation is nothing beside the sweeps between checks.
        let mut m = nalgebra::DMatrix::<f64>::zeros(cols, cols);
        let mut rhs = nalgebra::DVector::<f64>::zeros(cols);
        for a in 0..cols {
            for b in 0..=a {
                let v = diff_dot_diff(f, a, b);
                m[(a, b)] = v;
                m[(b, a)] = v;
            }
            rhs[a] = diff_dot(f, a, &f[k - 1]);
        }
        let trace = m.trace();
        if !(trace > 0.0 && trace.is_finite()) {
            return false;
        }
        for a in 0..cols {
            m[(a, a)] += 1e-12 * trace;
        }
        let Some(chol) = m.cholesky() else {
            return false;
        };
        let theta = chol.solve(&rhs);
        out.clear();
        out.extend_from_slice(&self.g[k - 1]);
        for j in 0..cols {
            let t = theta[j];
            for ((o, g1), g0) in out.iter_mut().zip(&self.g[j + 1]).zip(&self.g[j]) {
                for r in 0..6 {
                    o[r] -= t * (g1[r] - g0[r]);
                }
            }
        }
        out.iter().all(|g| g.iter().all(|v| v.is_finite()))
    }
}

/// Δf_a · v with Δf_a = f_{a+1} − f_a, the difference taken inside the sum.
fn diff_dot(f: &VecDeque<Vec<Vec6>>, a: usize, v: &[Vec6]) -> f64 {
    let mut s = 0.0;
    for ((x1, x0), w) in f[a + 1].iter().zip(&f[a]).zip(v) {
        s += (0..6).map(|r| (x1[r] - x0[r]) * w[r]).sum::<f64>();
    }
    s
}

/// Δf_a · Δf_b, both differences taken inside the sum.
fn diff_dot_diff(f: &VecDeque<Vec<Vec6>>, a: usize, b: usize) -> f64 {
    let mut s = 0.0;
    for (((x1, x0), y1), y0) in f[a + 1].iter().zip(&f[a]).zip(&f[b + 1]).zip(&f[b]) {
        s += (0..6)
            .map(|r| (x1[r] - x0[r]) * (y1[r] - y0[r]))
            .sum::<f64>();
    }
    s
}
