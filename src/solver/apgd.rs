//! Accelerated projected gradient descent (APGD): Nesterov's method with a
//! backtracking step and gradient restart, on the QP of
//! Tasora & Anitescu 2013, eq. 42,
//!
//! ```text
//! min f(γ) = ½ γᵀNγ + rᵀγ   over γ ∈ Y,     ∇f(γ) = Nγ + r = y.
//! ```
//!
//! Iteration k (variables scaled by the [`Metric`] B, so the
//! gradient step is γ − t B y and the projection is taken in the metric B⁻¹):
//!
//! ```text
//! x_{k+1} = Π(v_k − t_k B ∇f(v_k))                       (projected gradient step at v)
//!   with t_k = 1/L_k, L_k doubled until the curvature test
//!   dᵀ(∇f(x_{k+1}) − ∇f(v_k)) ≤ L_k ‖d‖²_{B⁻¹},  d = x_{k+1} − v_k,  holds;
//! θ_{k+1} = θ_k (√(θ_k² + 4) − θ_k) / 2,   β = θ_k (1 − θ_k) / (θ_k² + θ_{k+1}),
//! v_{k+1} = x_{k+1} + β (x_{k+1} − x_k),
//! restart (v_{k+1} = x_{k+1}, θ = 1) when ∇f(v_k)ᵀ(x_{k+1} − x_k) > 0,
//! L_{k+1} = 0.9 L_k (let the step grow back).
//! ```
//!
//! The curvature test is the sufficient-decrease condition of the backtracking
//! line search written for a quadratic, f(x) − f(v) − ∇f(v)ᵀ(x − v) =
//! ½ (x − v)ᵀN(x − v), which needs no value of f (so no cancellation between
//! large values near convergence). Two applies of N per iteration (at v and
//! at x, the latter giving the residual for free).
//!
//! **De Saxcé law.** The non-associated problem is not an optimisation
//! problem, but for a fixed shift s (s_i = g(y_i), the De Saxcé term of
//! contact i) it is the convex problem with r replaced by r + s e_n, whose
//! solution with s = g(Nγ + r) is the wanted one. APGD runs on the shifted
//! QP and updates s from the current iterate at every residual check (a
//! fixed point on s, solved inexactly), keeping its momentum. Measured on
//! the Siconos problems (`repose solve`), keeping the momentum is what makes
//! this work: restarting at each update of s left BoxesStack1 at 6e-6 and
//! RockPile_tob1 at 4e-6 after 100,000 iterations; keeping it solves them
//! to 1e-6 in about 3,800 and 24,000; updating s at every iteration instead
//! does not converge on RockPile_tob1.

use rayon::prelude::*;

use super::{begin, check_stop, det_sums, is_check, Metric, SolveStats, SolverSettings, Workspace};
use crate::material::FrictionLaw;
use crate::problem::{Delassus, Vec6};

const MIN_LEN: usize = 512;

fn dot6(a: &Vec6, b: &Vec6) -> f64 {
    (0..6).map(|k| a[k] * b[k]).sum()
}

/// Adds the shift s_i to the normal row of every y_i.
fn add_shift(y: &mut [Vec6], shift: &[f64]) {
    y.par_iter_mut()
        .with_min_len(MIN_LEN)
        .zip(shift.par_iter())
        .for_each(|(y, s)| y[0] += s);
}

/// s_i = g(y_i) of the De Saxcé law (zero for the associated law).
fn update_shift(m: &Metric, y: &[Vec6], shift: &mut [f64]) {
    shift
        .par_iter_mut()
        .with_min_len(MIN_LEN)
        .enumerate()
        .for_each(|(i, s)| *s = m.shift(i, &y[i]));
}

/// Solves with APGD from `gamma` (warm start), overwriting it with the result.
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
    let m = std::mem::take(&mut ws.metric);
    let mut nx = std::mem::take(&mut ws.y);
    let [mut x, mut v, mut gv, mut xn, mut nxn, spare] = std::mem::take(&mut ws.v);
    let desaxce = m.law == FrictionLaw::DeSaxce;
    let mut shift = vec![0.0; n];

    // x₀ = Π(γ): the warm start made feasible.
    x.par_iter_mut()
        .with_min_len(MIN_LEN)
        .zip(gamma.par_iter())
        .enumerate()
        .for_each(|(i, (x, g))| *x = m.project(i, g));
    op.apply(&x, &mut nx);
    if desaxce {
        update_shift(&m, &nx, &mut shift);
    }
    v.copy_from_slice(&x);
    let mut v_is_x = true;
    let mut theta = 1.0f64;
    let mut lip = 1.0 / s.omega;
    let mut stats = SolveStats::default();
    let mut it = 0;
    loop {
        if is_check(it, s) {
            if check_stop(op, s, ws, it, &x, &nx, &mut stats) {
                break;
            }
            if desaxce && it > 0 {
                update_shift(&m, &nx, &mut shift);
            }
        }
        // ∇f(v) = Nv + r + s e_n (reusing Nx + r when v = x).
        if v_is_x {
            gv.copy_from_slice(&nx);
        } else {
            op.apply(&v, &mut gv);
        }
        add_shift(&mut gv, &shift);
        // Backtracking on the curvature test.
        for _ in 0..40 {
            let t = 1.0 / lip;
            xn.par_iter_mut()
                .with_min_len(MIN_LEN)
                .enumerate()
                .for_each(|(i, xn)| *xn = m.project(i, &m.step(i, &v[i], &gv[i], t)));
            op.apply(&xn, &mut nxn);
            let [curv, dist] = det_sums(n, |i| {
                let d: Vec6 = std::array::from_fn(|k| xn[i][k] - v[i][k]);
                let mut dg: Vec6 = std::array::from_fn(|k| nxn[i][k] - gv[i][k]);
                dg[0] += shift[i];
                [dot6(&d, &dg), m.norm_sq_inv(i, &d)]
            });
            if curv <= lip * dist * (1.0 + 1e-12) {
                break;
            }
            lip *= 2.0;
        }
        let theta_next = 0.5 * theta * ((theta * theta + 4.0).sqrt() - theta);
        let beta = theta * (1.0 - theta) / (theta * theta + theta_next);
        let [ascent] = det_sums(n, |i| {
            let d: Vec6 = std::array::from_fn(|k| xn[i][k] - x[i][k]);
            [dot6(&gv[i], &d)]
        });
        if ascent > 0.0 {
            v.copy_from_slice(&xn);
            v_is_x = true;
            theta = 1.0;
        } else {
            v.par_iter_mut()
                .with_min_len(MIN_LEN)
                .enumerate()
                .for_each(|(i, v)| {
                    *v = std::array::from_fn(|k| xn[i][k] + beta * (xn[i][k] - x[i][k]))
                });
            v_is_x = false;
            theta = theta_next;
        }
        std::mem::swap(&mut x, &mut xn);
        std::mem::swap(&mut nx, &mut nxn);
        lip *= 0.9;
        it += 1;
    }
    gamma.copy_from_slice(&x);
    stats.iterations = it;
    ws.metric = m;
    ws.y = nx;
    ws.v = [x, v, gv, xn, nxn, spare];
    stats
}
