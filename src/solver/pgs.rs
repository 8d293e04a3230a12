//! Projected block Gauss–Seidel (Acary & Bourrier 2021, §5.2, eqs. 66–67),
//! CPU only.
//!
//! Contacts are visited one at a time in index order. Contact α sees the
//! others at their latest values, y_α = W_αα p_α + q̄_α with
//! q̄_α = q_α + Σ_{β≠α} W_αβ p_β (eq. 66), and solves its own one-contact
//! problem (eq. 67) before the next contact is visited. Where neither closed
//! form below answers it, the one-contact problem is solved by semismooth
//! Newton on its natural map in the metric B_α of W_αα's own Gershgorin
//! bound (force rows and torque rows separately),
//!
//! ```text
//! F(p) = p − Π_α(p − B_α ŷ(W_αα p + q̄_α)) = 0,    J = I − DΠ_α (I − B_α Dŷ W_αα),
//! ```
//!
//! DΠ from the projection's closed form ([`crate::cone::project_jacobian`]),
//! each step halved until ‖F‖ falls (`newton_local`; Qi & Sun, Math.
//! Program. 58 (1993), for semismooth Newton; Siconos' Gauss–Seidel solves
//! its one-contact problems by Newton too, on the Alart–Curnier map, which
//! does not take the 6-D cone); where a step cannot
//! lower ‖F‖, by the projected fixed point
//!
//! ```text
//! p ← Π_α(z − ω B_α ŷ(W_αα z + q̄_α)),    z = p + β (p − p_prev)
//! ```
//!
//! each step taken from Nesterov's extrapolated point z
//! (β from the sequence t⁺ = (1 + √(1 + 4t²))/2, β = (t − 1)/t⁺: Beck &
//! Teboulle, SIAM J. Imaging Sci. 2 (2009)) and the momentum dropped (t = 1,
//! z = p) whenever the step and the last move point the same way (the
//! gradient restart of O'Donoghue & Candès, Found. Comput. Math. 15 (2015)),
//! until the step changes z by at most 1e-12 relative or for at most 100
//! local iterations; then p_α ← λ p + (1 − λ) p_α. Works for both
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
//! welded frame (the piles of Acary & Bourrier 2021 at μ_r ≫ R, tall stacks)
//! the sweeps creep: the error decays along a few slow directions at a rate
//! near 1. Seen from the residual checks, `check_every` sweeps are one step
//! of a fixed-point map x ↦ G(x), nearly linear there, and Anderson mixing
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
//! check, over all contacts). On the problems from the piles of
//! Acary & Bourrier 2021 (docs/solvers.md, "Hard problems") it turns stalls
//! into convergence: the step whose 20,000 plain sweeps stop at 4·10⁻⁴ reaches
//! 10⁻⁴ in 340; `seed001_mu1_mur1_step06000`, which no method solved, reaches
//! 10⁻⁶.
//!
//! **On by default** (`solver.anderson` = [`ANDERSON_DEPTH`] = 5; 0 gives plain
//! sweeps). Measured on the same problems: the first 4,000 steps of the pile of
//! Acary & Bourrier 2021 at μ = 1, μ_r = 1 m run with plain PGS (cap 1,000
//! sweeps, 10⁻⁴ weighted, warm-started), each step's problem also solved by the
//! mixed method from the same warm start: 3,487 steps met the tolerance with
//! mixing against 3,394 plain, in 15.6 % fewer sweeps (944,940 against
//! 1,120,230). Two runs side by side do not measure this: a different answer at
//! one step changes every later step, so the two piles pose different problems
//! (session 15 read 4,028 against 4,818 steps met from such a pair, and took it
//! for a loss).

//!
//! **The accelerated local solve** (the momentum and restarts above; session
//! 21). Measured against the plain fixed point (the same metric, step, cap
//! and stopping test), one thread:
//!
//! * the hard suite (`tests/data/hard`, `repose solve --solver pgs
//!   --fallback none --tol 1e-4 --max-iter 3000`, weighted): the same or
//!   fewer sweeps on 11 of 12 problems (mu0.3_mur0.1_step12000 170 against
//!   270 sweeps, 0.38 s against 0.77 s; mu1_mur1_step12000 20 against 70;
//!   mu0.1_mur0.1_step06000 10 against 20), each sweep up to 2× cheaper;
//!   seed000_rho0.01_step300 stops short both ways. The twelfth,
//!   `seed001_mu1_mur1_step06000`, stalls at 1.3·10⁻⁴ after 3,000 sweeps,
//!   where the plain local solve met 10⁻⁴ in 340 — but that success is luck
//!   of its cap: with 30, 300 or 1,000 plain local iterations instead of
//!   100 it stalls too (session 20). To 10⁻⁶ in Siconos' measure both reach
//!   it within the 30,000 sweeps of `tests/hard_suite.rs` (17,160 sweeps in
//!   1.26 s against 14,530 in 1.61 s);
//! * the Siconos suite (`tests/data/siconos`, 10⁻⁶, cap 20,000): the same 19
//!   of 21 solved in the same sweeps, faster on the large ones (BoxesStack1
//!   0.034 s against 0.044 s, Capsules 0.021 against 0.034; RockPile_tob1,
//!   unsolved both ways, 6.4 s against 11.3 s);
//! * a run: the pile of Acary & Bourrier 2021 at μ = 1, μ_r = 1 m, 0–6 s, PGS
//!   capped at 200 sweeps with the interior point as fallback (the settings
//!   docs/papers.md gave then): 5,964 of 6,000 steps met 10⁻⁴ against 5,966,
//!   in 948 s against 825 s — at 8 % more contacts (131 against 121 a step:
//!   the two piles part after a few steps). No gain there: the fallback runs
//!   on 74 % of the steps both ways and takes most of the time. Where PGS
//!   does the work (cap 1,000, session 20: 10 steps from a checkpoint at
//!   7.8 s) the accelerated sweeps took 4.0 s against 8.2 s, the worst
//!   residual 1.7·10⁻³ against 2.1·10⁻³.
//!
//! The Anderson figures above were measured with the plain local solve.
//!
//! **Where a sweep's time went, and the Newton local solve** (session 21,
//! counted): the first 4 s of `scenes/repose_acary2021.ron` with `--solver
//! pgs` (μ = 0.3, ρ = 10⁻³ m, 89 contacts, 6.6 sweeps a step): of 2.98
//! million visits 0.54 million stick, 0.98 million separate, and 1.46
//! million (49 %) went to the accelerated fixed point at 57 local
//! iterations each (83 million in all: most of the time; a looser local
//! stop saved little, 1e-6: 25 a visit). With the Newton local solve in
//! front of it the same 4 s take **2.6 s against 9.0 s** (same sitting,
//! one thread; APGD 1.0 s; the plain local solve 15 s), the same sweeps a
//! step and 4,000 of 4,000 steps met both ways. The hard suite to 10⁻⁴
//! (weighted, cap 3,000): the same sweeps on every problem, 1.5–4× less
//! time (mu0.3_mur0.1_step12000 0.097 s against 0.387 s, seed000 step200
//! 0.022 against 0.059). The Siconos suite at 10⁻⁶: the same sweeps and
//! answers on all 21, up to 17 % slower (3-D Coulomb contacts, where the
//! fixed point was already quick). In a run (the pile of Acary & Bourrier 2021,
//! μ = 1, μ_r = 1 m, 0–6 s, the interior point as fallback, one thread each,
//! side by side): PGS capped at 1,000 sweeps met 10⁻⁴ in 5,989 of 6,000 steps
//! in 637 s, capped at 200 (the fallback's own cap 1,000) 5,948 in 863 s — so
//! the docs' advice turned back to the cap of 1,000.

use std::collections::VecDeque;

use super::{begin, check_stop, is_check, Metric, SolveStats, SolverSettings, Workspace};
use crate::cone::{is_in_dual, is_inside, project};
use crate::material::ConeCoeffs;
use crate::problem::explicit::gershgorin_scales;
use crate::problem::{Delassus, Vec6};

pub use super::settings::ANDERSON_DEPTH;
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

/// Newton steps at most per local solve before the fixed point takes over.
const NEWTON_MAX: usize = 12;

/// The one-contact problem by semismooth Newton on its natural map in the
/// metric B: F(p) = p − Π_B(p − B ŷ(W_αα p + q̄)), F(p) = 0 at the answer.
/// J = I − DΠ_B(x) (I − B Dŷ W_αα) with DΠ from the cone's closed form
/// ([`crate::cone::project_jacobian`], in the scaled variables of the
/// metric) and Dŷ = I + e_n ∇g(y)ᵀ under De Saxcé's law (g the shift,
/// μ‖y_T‖ + σ|y_s| + ρ‖y_R‖); each step halved until ‖F‖ falls. Stops as
/// [`accelerated_local`] does (‖F‖∞ ≤ `LOCAL_TOL` |Π_B(x)|∞) and returns
/// Π_B(x); `None` when a step fails to lower ‖F‖ or the steps run out.
fn newton_local(
    local: &Metric,
    i: usize,
    w: &[[f64; 6]; 6],
    qbar: &Vec6,
    g: &Vec6,
) -> Option<Vec6> {
    let (bf, bt) = local.scales[i];
    let b = [bf, bf, bf, bt, bt, bt];
    let (ref scaled_cone, r, inv_r) = local.scaled[i];
    let sc = [1.0, 1.0, 1.0, r, r, r];
    let cone = &local.cones[i];
    let desaxce = local.law == crate::material::FrictionLaw::DeSaxce;
    // (F, x, y) at p.
    let eval = |p: &Vec6| -> (Vec6, Vec6, Vec6) {
        let wp = mat_vec(w, p);
        let y: Vec6 = std::array::from_fn(|k| wp[k] + qbar[k]);
        let yh = local.modified(i, &y);
        let x: Vec6 = std::array::from_fn(|k| p[k] - b[k] * yh[k]);
        let px = local.project(i, &x);
        (std::array::from_fn(|k| p[k] - px[k]), x, y)
    };
    let norm2 = |f: &Vec6| f.iter().map(|v| v * v).sum::<f64>();
    let mut p = *g;
    let (mut f, mut x, mut y) = eval(&p);
    let mut f2 = norm2(&f);
    for _ in 0..NEWTON_MAX {
        let px: Vec6 = std::array::from_fn(|k| p[k] - f[k]);
        let size = px.iter().map(|v| v.abs()).fold(0.0, f64::max);
        let change = f.iter().map(|v| v.abs()).fold(0.0, f64::max);
        if change <= LOCAL_TOL * size {
            return Some(px);
        }
        // DΠ_B(x) = S⁻¹ DΠ(S x) S with S = diag(1, 1, 1, r, r, r).
        let xs: Vec6 = std::array::from_fn(|k| x[k] * sc[k]);
        let dpi = crate::cone::project_jacobian(&xs, scaled_cone);
        // Dŷ W: W with the shift's gradient row added to the normal row.
        let mut dyw = *w;
        if desaxce {
            let grad = super::shift_gradient(&y, cone);
            for col in 0..6 {
                dyw[0][col] += (0..6).map(|k| grad[k] * w[k][col]).sum::<f64>();
            }
        }
        // Dx = I − B Dŷ W, then J = I − DΠ_B Dx.
        let dx: [[f64; 6]; 6] = std::array::from_fn(|k| {
            std::array::from_fn(|col| (if k == col { 1.0 } else { 0.0 }) - b[k] * dyw[k][col])
        });
        let jac = nalgebra::Matrix6::<f64>::from_fn(|row, col| {
            let unscale = if row >= 3 { inv_r } else { 1.0 };
            let v: f64 = (0..6)
                .map(|k| dpi[row][k] * sc[k] * unscale * dx[k][col])
                .sum();
            (if row == col { 1.0 } else { 0.0 }) - v
        });
        let rhs = nalgebra::Vector6::<f64>::from_fn(|k, _| -f[k]);
        let d = jac.lu().solve(&rhs)?;
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..6 {
            let trial: Vec6 = std::array::from_fn(|k| p[k] + t * d[k]);
            let (ft, xt, yt) = eval(&trial);
            let ft2 = norm2(&ft);
            if ft2 < (1.0 - 1e-4 * t) * f2 {
                (p, f, x, y, f2) = (trial, ft, xt, yt, ft2);
                accepted = true;
                break;
            }
            t *= 0.5;
        }
        if !accepted {
            return None;
        }
    }
    None
}

/// The one-contact problem K_α ∋ p ⊥ ŷ(W_αα p + q̄) ∈ K_α* (module docs),
/// by the projected step p⁺ = Π(z − ω B ŷ(W_αα z + q̄)) taken
/// from Nesterov's extrapolated point z (Beck & Teboulle 2009), with
/// O'Donoghue & Candès' gradient restart (2015): momentum is dropped as soon
/// as the step and the last move point the same way, (z − p⁺)·B⁻¹(p⁺ − p) > 0.
/// Stops when the step moves z by at most `LOCAL_TOL` of |p⁺| (then z is a
/// fixed point of the projected step to that accuracy) or after `LOCAL_MAX`
/// steps, from the warm start `g`.
fn accelerated_local(
    local: &Metric,
    i: usize,
    w: &[[f64; 6]; 6],
    qbar: &Vec6,
    g: &Vec6,
    omega: f64,
) -> Vec6 {
    let (bf, bt) = local.scales[i];
    let inv_b = [1.0 / bf, 1.0 / bf, 1.0 / bf, 1.0 / bt, 1.0 / bt, 1.0 / bt];
    let (mut p, mut z, mut t) = (*g, *g, 1.0_f64);
    for _ in 0..LOCAL_MAX {
        let wz = mat_vec(w, &z);
        let yl: Vec6 = std::array::from_fn(|k| wz[k] + qbar[k]);
        let pn = local.project(i, &local.step(i, &z, &local.modified(i, &yl), omega));
        let change = (0..6).map(|k| (pn[k] - z[k]).abs()).fold(0.0, f64::max);
        let size = pn.iter().map(|v| v.abs()).fold(0.0, f64::max);
        if change <= LOCAL_TOL * size {
            return pn;
        }
        let agree: f64 = (0..6)
            .map(|k| (z[k] - pn[k]) * inv_b[k] * (pn[k] - p[k]))
            .sum();
        if agree > 0.0 {
            // Restart: the momentum points uphill.
            t = 1.0;
            z = pn;
        } else {
            let tn = 0.5 * (1.0 + (1.0 + 4.0 * t * t).sqrt());
            let beta = (t - 1.0) / tn;
            z = std::array::from_fn(|k| pn[k] + beta * (pn[k] - p[k]));
            t = tn;
        }
        p = pn;
    }
    p
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
        if let Some(p) = newton_local(&local, i, w, &qbar, g) {
            return relax(p);
        }
        relax(accelerated_local(&local, i, w, &qbar, g, omega))
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
