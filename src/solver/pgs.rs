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

use super::{
    begin, check_stop, gershgorin_scales, is_check, SolveStats, SolverSettings, Workspace,
};
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
    local.scales.clear();
    local.scales.extend(diag.iter().map(block_scales));
    local.rescale();
    let (omega, lambda) = (s.omega, s.lambda);
    let mut solve_local = |i: usize, g: &Vec6, y: &Vec6| -> Vec6 {
        let w = &diag[i];
        let wg = mat_vec(w, g);
        let qbar: Vec6 = std::array::from_fn(|k| y[k] - wg[k]);
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
        std::array::from_fn(|k| lambda * p[k] + (1.0 - lambda) * g[k])
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
