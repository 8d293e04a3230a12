//! Projected Jacobi iteration (Tasora & Anitescu 2013, eq. 46).
//!
//! γ ← λ Π_Y(γ − ω B (Nγ + r)) + (1 − λ) γ, all contacts at once from the same
//! iterate (hence parallel and deterministic). B is block-diagonal with two
//! positive scalars per contact, b_f on the three force rows and b_t on the
//! three torque rows; the projection is then taken in the metric B⁻¹
//! (as `cone::project_scaled` does, here with the scaled cone precomputed),
//! which makes the step a preconditioned projected
//! gradient step on the QP of Tasora & Anitescu 2013, eq. 42. The scalars
//! come from [`Delassus::jacobi_scales`]: they bound the largest eigenvalue
//! of the scaled operator B^½ N B^½ by about 1, so ω ∈ (0, 2) converges;
//! ω = 1 is the default.

use rayon::prelude::*;

pub use super::residual;
use super::{begin, check_stop, is_check, SolveStats, SolverSettings, Workspace};
use crate::material::FrictionLaw;
use crate::problem::{Delassus, Vec6};

/// Solves the CCP with the projected Jacobi iteration, starting from `gamma`
/// (warm start) and overwriting it with the result. Under the De Saxcé law
/// the step uses ŷ instead of y (the projected fixed point of
/// Acary & Bourrier 2021, eq. 64, with the Jacobi metric as step).
pub fn solve<D: Delassus + Sync>(
    op: &mut D,
    gamma: &mut [Vec6],
    s: &SolverSettings,
    ws: &mut Workspace,
) -> SolveStats {
    if let Err(done) = begin(op, gamma, s, ws) {
        return done;
    }
    let (omega, lambda) = (s.omega, s.lambda);
    let mut stats = SolveStats::default();
    let metric = std::mem::take(&mut ws.metric);
    let mut y = std::mem::take(&mut ws.y);
    // γ_i ← λ Π_B(γ_i − ω B_i ŷ_i) + (1 − λ) γ_i, with y_i = (Nγ + r)_i.
    // Under the associated law ŷ = y: skip reading the cone for g(y) (the
    // sweep is bandwidth-bound; that read cost about 5 % on bench_pile).
    let desaxce = metric.law == FrictionLaw::DeSaxce;
    let update = |i: usize, g: &Vec6, y: &Vec6| -> Vec6 {
        let yhat = if desaxce { metric.modified(i, y) } else { *y };
        let p = metric.project(i, &metric.step(i, g, &yhat, omega));
        std::array::from_fn(|k| lambda * p[k] + (1.0 - lambda) * g[k])
    };
    let mut it = 0;
    loop {
        if is_check(it, s) {
            op.apply(gamma, &mut y);
            if check_stop(op, s, ws, it, gamma, &y, &mut stats) {
                break;
            }
            gamma
                .par_iter_mut()
                .with_min_len(256)
                .zip(y.par_iter())
                .enumerate()
                .for_each(|(i, (g, y))| *g = update(i, g, y));
        } else {
            op.sweep(gamma, &update);
        }
        it += 1;
    }
    stats.iterations = it;
    ws.metric = metric;
    ws.y = y;
    stats
}
