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

use super::{
    begin, check_stop, gershgorin_scales, is_check, SolveStats, SolverSettings, Workspace,
};
use crate::cone::{is_in_dual, is_inside};
use crate::material::ConeCoeffs;
use crate::problem::{Delassus, Vec6};

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
    let mut it = 0;
    loop {
        if is_check(it, s) {
            op.apply(gamma, &mut y);
            if check_stop(op, s, ws, it, gamma, &y, &mut stats) {
                break;
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
