//! Projected Jacobi iteration (seed 000 eq. 46).
//!
//! γ ← λ Π_Y(γ − ω B (Nγ + r)) + (1 − λ) γ, all contacts at once from the same
//! iterate (hence parallel and deterministic). B is block-diagonal with two
//! positive scalars per contact, b_f on the three force rows and b_t on the
//! three torque rows; the projection is then taken in the metric B⁻¹
//! (as `cone::project_scaled` does, here with the scaled cone precomputed),
//! which makes the step a preconditioned projected
//! gradient step on the QP of seed 000 eq. 42. The scalars come from
//! [`Delassus::jacobi_scales`]: they bound the largest eigenvalue of the
//! scaled operator B^½ N B^½ by about 1, so ω ∈ (0, 2) converges; ω = 1 is
//! the default.

use rayon::prelude::*;

use super::{SolveStats, SolverSettings};
use crate::cone::{natural_map_residual_sq, project};
use crate::material::ConeCoeffs;
use crate::problem::{norm, Delassus, Vec6};

/// Reusable buffers of the Jacobi solver (no allocation inside the iteration).
#[derive(Default)]
pub struct JacobiWorkspace {
    y: Vec<Vec6>,
    scales: Vec<(f64, f64)>,
    cones: Vec<(ConeCoeffs, f64, f64)>,
}

/// Natural-map residual ‖γ − Π_Y(γ − y)‖ over all contacts, with y = Nγ + r.
pub fn residual<D: Delassus + Sync + ?Sized>(op: &D, gamma: &[Vec6], y: &[Vec6]) -> f64 {
    gamma
        .par_iter()
        .zip(y.par_iter())
        .enumerate()
        .map(|(i, (g, yi))| natural_map_residual_sq(g, yi, &op.cone(i)))
        .sum::<f64>()
        .sqrt()
}

/// Solves the CCP with the projected Jacobi iteration, starting from `gamma`
/// (warm start) and overwriting it with the result.
pub fn solve<D: Delassus + Sync>(
    op: &mut D,
    gamma: &mut [Vec6],
    s: &SolverSettings,
    ws: &mut JacobiWorkspace,
) -> SolveStats {
    let n = op.n_contacts();
    assert_eq!(
        gamma.len(),
        n,
        "gamma has {} entries for {} contacts",
        gamma.len(),
        n
    );
    if n == 0 {
        return SolveStats {
            converged: true,
            ..Default::default()
        };
    }
    ws.y.resize(n, [0.0; 6]);
    op.jacobi_scales(&mut ws.scales);
    let check_every = s.check_every.max(1);
    let (omega, lambda) = (s.omega, s.lambda);
    let mut stats = SolveStats::default();
    let scales = std::mem::take(&mut ws.scales);
    let mut cones = std::mem::take(&mut ws.cones);
    cones.clear();
    // The B⁻¹-metric projection (see `cone::project_scaled`) as a Euclidean
    // one: z = (x_f, r x_t), r = √(b_f/b_t), onto the cone (μ, ρ r, σ r), then
    // p_t / r. Precomputed once per solve: the scaled cone, r and 1/r.
    cones.extend((0..n).map(|i| {
        let c = op.cone(i);
        let (bf, bt) = scales[i];
        let r = (bf / bt).sqrt();
        (
            ConeCoeffs {
                mu: c.mu,
                rho: c.rho * r,
                sigma: c.sigma * r,
            },
            r,
            1.0 / r,
        )
    }));
    // γ_i ← λ Π_B(γ_i − ω B_i y_i) + (1 − λ) γ_i, with y_i = (Nγ + r)_i.
    let update = |i: usize, g: &Vec6, y: &Vec6| -> Vec6 {
        let (bf, bt) = scales[i];
        let (sf, st) = (omega * bf, omega * bt);
        let x = [
            g[0] - sf * y[0],
            g[1] - sf * y[1],
            g[2] - sf * y[2],
            g[3] - st * y[3],
            g[4] - st * y[4],
            g[5] - st * y[5],
        ];
        let (ref c, r, inv_r) = cones[i];
        let z = [x[0], x[1], x[2], x[3] * r, x[4] * r, x[5] * r];
        let mut p = project(&z, c);
        for v in &mut p[3..] {
            *v *= inv_r;
        }
        std::array::from_fn(|k| lambda * p[k] + (1.0 - lambda) * g[k])
    };
    let mut it = 0;
    loop {
        let last = it == s.max_iterations;
        let check = last || (s.tolerance > 0.0 && it % check_every == 0);
        if check {
            op.apply(gamma, &mut ws.y);
            let abs = residual(op, gamma, &ws.y);
            let scale = norm(gamma).max(norm(&ws.y));
            let rel = if scale > f64::EPSILON {
                abs / scale
            } else {
                abs
            };
            stats.residual_abs = abs;
            stats.residual_rel = rel;
            if rel <= s.tolerance {
                stats.converged = true;
                break;
            }
            if last {
                break;
            }
            gamma
                .par_iter_mut()
                .with_min_len(256)
                .zip(ws.y.par_iter())
                .enumerate()
                .for_each(|(i, (g, y))| *g = update(i, g, y));
        } else {
            op.sweep(gamma, &update);
        }
        it += 1;
    }
    stats.iterations = it;
    ws.scales = scales;
    ws.cones = cones;
    stats
}
