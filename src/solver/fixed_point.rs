//! Projected fixed point and extra-gradient iterations with a self-adaptive
//! step (Acary & Bourrier 2021, eqs. 64–65), for either law. With
//! F(p) = ŷ(Wp + q), the velocity the law pairs with p
//! ([`modified_velocity`](super::modified_velocity)):
//!
//! ```text
//! fixed point (eq. 64):     p_{k+1} = Π(p_k − ρ_k B F(p_k))
//! extra-gradient (eq. 65):  p̃ = Π(p_k − ρ_k B F(p_k)),   p_{k+1} = Π(p_k − ρ_k B F(p̃))
//! ```
//!
//! (B the [`Metric`], Π in the metric B⁻¹.) The step ρ_k adapts
//! to a local estimate of the Lipschitz constant of F, as in the self-adaptive
//! rules the paper refers to: with p̄ the predictor (p_{k+1} for the fixed
//! point, p̃ for the extra-gradient),
//!
//! ```text
//! ratio = ρ_k ‖F(p_k) − F(p̄)‖_B / ‖p_k − p̄‖_{B⁻¹};
//! ratio > 0.9 → reject, ρ_k ← ρ_k · ⅔ · min(1, 0.9 / ratio), recompute p̄;
//! ratio < 0.3 → accept and grow ρ_{k+1} = ρ_k · 3/2.
//! ```
//!
//! The fixed point costs one apply per accepted trial, the extra-gradient two.

use rayon::prelude::*;

use super::{begin, check_stop, is_check, Metric, SolveStats, SolverSettings, Workspace};
use crate::problem::{Delassus, Vec6};

const MIN_LEN: usize = 512;
/// Largest accepted ratio ρ‖ΔF‖/‖Δp‖.
const RATIO_MAX: f64 = 0.9;
/// Below this ratio the step grows.
const RATIO_MIN: f64 = 0.3;
/// Step shrink factor (its inverse is the growth factor).
const SHRINK: f64 = 2.0 / 3.0;
/// Rejected trials allowed per iteration before the step is taken anyway.
const MAX_TRIALS: usize = 60;

/// out_i = Π_i(p_i − ρ B_i f_i) for every contact.
fn projected_step(m: &Metric, p: &[Vec6], f: &[Vec6], rho: f64, out: &mut [Vec6]) {
    out.par_iter_mut()
        .with_min_len(MIN_LEN)
        .enumerate()
        .for_each(|(i, o)| *o = m.project(i, &m.step(i, &p[i], &f[i], rho)));
}

/// f_i = ŷ(y_i) for every contact.
fn law_velocity(m: &Metric, y: &[Vec6], f: &mut [Vec6]) {
    f.par_iter_mut()
        .with_min_len(MIN_LEN)
        .enumerate()
        .for_each(|(i, f)| *f = m.modified(i, &y[i]));
}

/// ρ‖F(p) − F(p̄)‖_B / ‖p − p̄‖_{B⁻¹} (0 when p̄ = p).
fn ratio(m: &Metric, rho: f64, p: &[Vec6], pb: &[Vec6], f: &[Vec6], fb: &[Vec6]) -> f64 {
    let [df, dp] = super::det_sums(p.len(), |i| {
        let df: Vec6 = std::array::from_fn(|k| f[i][k] - fb[i][k]);
        let dp: Vec6 = std::array::from_fn(|k| p[i][k] - pb[i][k]);
        [m.norm_sq(i, &df), m.norm_sq_inv(i, &dp)]
    });
    if dp > 0.0 {
        rho * (df / dp).sqrt()
    } else {
        0.0
    }
}

/// Solves with the projected fixed point (`extra_gradient` false) or the
/// extra-gradient iteration (true) from `gamma`, overwriting it with the result.
pub fn solve<D: Delassus + Sync>(
    op: &mut D,
    gamma: &mut [Vec6],
    s: &SolverSettings,
    ws: &mut Workspace,
    extra_gradient: bool,
) -> SolveStats {
    if let Err(done) = begin(op, gamma, s, ws) {
        return done;
    }
    let m = std::mem::take(&mut ws.metric);
    let mut y = std::mem::take(&mut ws.y);
    let [mut f, mut pb, mut yb, mut fb, v4, v5] = std::mem::take(&mut ws.v);

    // p₀ = Π(γ), F₀ = F(p₀).
    gamma
        .par_iter_mut()
        .with_min_len(MIN_LEN)
        .enumerate()
        .for_each(|(i, g)| *g = m.project(i, g));
    op.apply(gamma, &mut y);
    law_velocity(&m, &y, &mut f);
    let mut rho = s.omega;
    let mut stats = SolveStats::default();
    let mut it = 0;
    loop {
        if is_check(it, s) && check_stop(op, s, ws, it, gamma, &y, &mut stats) {
            break;
        }
        // Predictor p̄ with an accepted step.
        let mut r = 0.0;
        for _ in 0..MAX_TRIALS {
            projected_step(&m, gamma, &f, rho, &mut pb);
            op.apply(&pb, &mut yb);
            law_velocity(&m, &yb, &mut fb);
            r = ratio(&m, rho, gamma, &pb, &f, &fb);
            if r <= RATIO_MAX {
                break;
            }
            rho *= SHRINK * (RATIO_MAX / r).min(1.0);
        }
        if extra_gradient {
            // Corrector: p_{k+1} = Π(p_k − ρ B F(p̄)), into pb (p̄ is no longer needed).
            let fbar = std::mem::take(&mut fb);
            projected_step(&m, gamma, &fbar, rho, &mut pb);
            fb = fbar;
            op.apply(&pb, &mut yb);
            law_velocity(&m, &yb, &mut fb);
        }
        gamma.copy_from_slice(&pb);
        std::mem::swap(&mut y, &mut yb);
        std::mem::swap(&mut f, &mut fb);
        if r < RATIO_MIN {
            rho /= SHRINK;
        }
        it += 1;
    }
    stats.iterations = it;
    ws.metric = m;
    ws.y = y;
    ws.v = [f, pb, yb, fb, v4, v5];
    stats
}
