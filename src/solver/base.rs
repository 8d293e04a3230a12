//! What every method of [`super`] shares: the velocity the law pairs with
//! γ, the residuals, the metric B and its projection, the workspace, the
//! start and stop of an iteration, and sums that give the same bits on any
//! number of threads.

use crate::cone::{natural_map_residual_sq, project};
use crate::material::{ConeCoeffs, FrictionLaw};
use crate::problem::{norm, Delassus, Vec6};

use super::settings::{ResidualMeasure, SolveStats, SolverSettings};

/// The velocity the contact law pairs with γ: ŷ = y for the associated law;
/// for De Saxcé's, ŷ = y + (μ‖y_T‖ + σ|y_s| + ρ‖y_R‖, 0, …, 0)
/// (Acary & Bourrier 2021, eqs. 32–33 and 63, extended by the spinning term
/// σ|ω_n|).
#[inline]
pub fn modified_velocity(y: &Vec6, c: &ConeCoeffs, law: FrictionLaw) -> Vec6 {
    match law {
        FrictionLaw::Associated => *y,
        FrictionLaw::DeSaxce => {
            let mut out = *y;
            out[0] += c.mu * y[1].hypot(y[2]) + c.sigma * y[3].abs() + c.rho * y[4].hypot(y[5]);
            out
        }
    }
}

/// The gradient ∇g(y) of De Saxcé's shift g(y) = μ‖y_T‖ + σ|y_s| + ρ‖y_R‖
/// ([`modified_velocity`]: Dŷ = I + e_n ∇gᵀ), 0 in a block whose part of y
/// is zero (where g has a kink).
#[inline]
pub fn shift_gradient(y: &Vec6, c: &ConeCoeffs) -> Vec6 {
    let (t, r) = (y[1].hypot(y[2]), y[4].hypot(y[5]));
    let mut grad = [0.0; 6];
    if t > 0.0 {
        grad[1] = c.mu * y[1] / t;
        grad[2] = c.mu * y[2] / t;
    }
    if y[3] != 0.0 {
        grad[3] = c.sigma * y[3].signum();
    }
    if r > 0.0 {
        grad[4] = c.rho * y[4] / r;
        grad[5] = c.rho * y[5] / r;
    }
    grad
}

/// Natural-map residual ‖γ − Π_Y(γ − ŷ)‖ over all contacts, with y = Nγ + r
/// and ŷ the velocity of the operator's law ([`modified_velocity`]).
pub fn residual<D: Delassus + Sync + ?Sized>(op: &D, gamma: &[Vec6], y: &[Vec6]) -> f64 {
    let law = op.law();
    let [sum] = det_sums(gamma.len(), |i| {
        let c = op.cone(i);
        [natural_map_residual_sq(
            &gamma[i],
            &modified_velocity(&y[i], &c, law),
            &c,
        )]
    });
    sum.sqrt()
}

/// The weighted natural-map residual of [`ResidualMeasure::Weighted`]:
/// (‖γ − Π(γ − C ŷ)‖, max(‖γ‖, ‖C ŷ‖)) with C = diag(c_i), c_i > 0 the
/// contact's effective mass (b_f of the Jacobi metric).
///
/// Why weighted: γ is an impulse and ŷ a velocity, so the plain
/// ‖γ − Π(γ − ŷ)‖ / max(‖γ‖, ‖ŷ‖) adds numbers of different units, and in
/// a scene where some spheres move fast (ŷ of order m/s) and impulses are
/// small (mass × velocity change, of order 1e-3 N·s for centimetre beads)
/// the velocities set the scale: a contact left holding a stale warm-start
/// impulse that kicks its sphere away at 1 m/s then passes a 1e-4 relative
/// test, and the solver returns at iteration 0. Seen in repose_acary2021:
/// spheres landing on the plate bounced off at their impact speed two
/// steps running. With c_i, C ŷ is an impulse too (the one that would stop
/// the contact's relative motion), and since γ = Π(γ − c ŷ) holds for any
/// c > 0 exactly at the solutions, the zeros are unchanged.
pub fn weighted_residual<D: Delassus + Sync + ?Sized>(
    op: &D,
    gamma: &[Vec6],
    y: &[Vec6],
    weights: &[f64],
) -> (f64, f64) {
    let law = op.law();
    let [r2, g2, y2] = det_sums(gamma.len(), |i| {
        let (g, c) = (&gamma[i], op.cone(i));
        let w = weights.get(i).copied().unwrap_or(1.0);
        let yh = modified_velocity(&y[i], &c, law);
        let cy: Vec6 = std::array::from_fn(|k| w * yh[k]);
        [
            natural_map_residual_sq(g, &cy, &c),
            g.iter().map(|v| v * v).sum::<f64>(),
            cy.iter().map(|v| v * v).sum::<f64>(),
        ]
    });
    (r2.sqrt(), g2.sqrt().max(y2.sqrt()))
}

/// The per-contact metric B = diag(b_f I₃, b_t I₃) of every method (module docs).
#[derive(Default)]
pub struct Metric {
    /// (b_f, b_t) per contact.
    pub scales: Vec<(f64, f64)>,
    /// The cone of each contact.
    pub cones: Vec<ConeCoeffs>,
    /// The cone in the scaled variables, r = √(b_f/b_t) and 1/r.
    pub(super) scaled: Vec<(ConeCoeffs, f64, f64)>,
    /// The contact law.
    pub law: FrictionLaw,
}

impl Metric {
    /// Computes the metric of `op`.
    pub fn build<D: Delassus + ?Sized>(&mut self, op: &D) {
        let n = op.n_contacts();
        op.jacobi_scales(&mut self.scales);
        self.law = op.law();
        self.cones.clear();
        self.cones.extend((0..n).map(|i| op.cone(i)));
        self.rescale();
    }

    /// Recomputes the scaled cones after `scales` changed.
    pub fn rescale(&mut self) {
        let n = self.cones.len();
        self.scaled.clear();
        // z = (x_f, r x_t), r = √(b_f/b_t), lies in the cone (μ, ρ r, σ r).
        self.scaled.extend((0..n).map(|i| {
            let c = self.cones[i];
            let (bf, bt) = self.scales[i];
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
    }

    /// Contact i's cone in the scaled variables z = (x_f, √(b_f/b_t) x_t):
    /// (μ, ρ√(b_f/b_t), σ√(b_f/b_t)).
    #[inline]
    pub fn scaled_cone(&self, i: usize) -> ConeCoeffs {
        self.scaled[i].0
    }

    /// ŷ of contact i for y = (Nγ + r)_i.
    #[inline]
    pub fn modified(&self, i: usize, y: &Vec6) -> Vec6 {
        modified_velocity(y, &self.cones[i], self.law)
    }

    /// The De Saxcé shift of contact i's normal velocity, ŷ_n − y_n =
    /// μ‖y_T‖ + σ|y_s| + ρ‖y_R‖ (0 under the associated law): the s that
    /// APGD's and the interior point's fixed points on the shift update.
    #[inline]
    pub fn shift(&self, i: usize, y: &Vec6) -> f64 {
        self.modified(i, y)[0] - y[0]
    }

    /// γ − t B ŷ for contact i.
    #[inline]
    pub fn step(&self, i: usize, g: &Vec6, yhat: &Vec6, t: f64) -> Vec6 {
        let (bf, bt) = self.scales[i];
        let (sf, st) = (t * bf, t * bt);
        [
            g[0] - sf * yhat[0],
            g[1] - sf * yhat[1],
            g[2] - sf * yhat[2],
            g[3] - st * yhat[3],
            g[4] - st * yhat[4],
            g[5] - st * yhat[5],
        ]
    }

    /// Projection of x onto contact i's cone in the metric B⁻¹.
    #[inline]
    pub fn project(&self, i: usize, x: &Vec6) -> Vec6 {
        let (ref c, r, inv_r) = self.scaled[i];
        let z = [x[0], x[1], x[2], x[3] * r, x[4] * r, x[5] * r];
        let mut p = project(&z, c);
        for v in &mut p[3..] {
            *v *= inv_r;
        }
        p
    }

    /// ‖d‖²_{B⁻¹} = ‖d_f‖²/b_f + ‖d_t‖²/b_t (a length² in the scaled variables).
    #[inline]
    pub fn norm_sq_inv(&self, i: usize, d: &Vec6) -> f64 {
        let (bf, bt) = self.scales[i];
        (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) / bf
            + (d[3] * d[3] + d[4] * d[4] + d[5] * d[5]) / bt
    }

    /// ‖d‖²_B = b_f ‖d_f‖² + b_t ‖d_t‖² (the dual of [`Metric::norm_sq_inv`]).
    #[inline]
    pub fn norm_sq(&self, i: usize, d: &Vec6) -> f64 {
        let (bf, bt) = self.scales[i];
        bf * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
            + bt * (d[3] * d[3] + d[4] * d[4] + d[5] * d[5])
    }
}

/// Reusable buffers of the solvers (no allocation inside an iteration).
#[derive(Default)]
pub struct Workspace {
    /// The metric of the current solve.
    pub metric: Metric,
    /// y = Nγ + r at the current iterate.
    pub y: Vec<Vec6>,
    /// Further vectors, used by the methods that need them.
    pub(crate) v: [Vec<Vec6>; 6],
    /// ‖r‖ of the current problem (for [`ResidualMeasure::Siconos`]).
    r_norm: f64,
    /// Per-contact scalar c_i = b_f of the Jacobi metric, kept from
    /// [`Workspace::prepare`] (the methods may take or rescale `metric`):
    /// the weights of the [`ResidualMeasure::Weighted`] natural map.
    res_scale: Vec<f64>,
    /// The first method's answer, kept while a fallback runs.
    pub(super) fallback_start: Vec<Vec6>,
}

impl Workspace {
    /// Sizes the buffers for `op`, computes the metric and, when the measure
    /// needs it, ‖r‖ (one apply at γ = 0).
    pub(crate) fn prepare<D: Delassus + ?Sized>(&mut self, op: &mut D, s: &SolverSettings) {
        let n = op.n_contacts();
        self.metric.build(op);
        self.res_scale.clear();
        self.res_scale
            .extend(self.metric.scales.iter().map(|&(bf, _)| bf));
        self.y.resize(n, [0.0; 6]);
        for v in &mut self.v {
            v.resize(n, [0.0; 6]);
        }
        self.r_norm = 0.0;
        if s.residual == ResidualMeasure::Siconos {
            let zero = &mut self.v[5];
            zero.fill([0.0; 6]);
            op.apply(zero, &mut self.y);
            self.r_norm = norm(&self.y);
        }
    }

    /// The weighted natural-map residual of γ given y = Nγ + r (absolute),
    /// whatever measure stops the solve: a merit function in one unit, for
    /// methods that compare iterates (PGS's Anderson mixing).
    pub(crate) fn merit<D: Delassus + Sync + ?Sized>(
        &self,
        op: &D,
        gamma: &[Vec6],
        y: &[Vec6],
    ) -> f64 {
        weighted_residual(op, gamma, y, &self.res_scale).0
    }

    /// Residual of γ given y = Nγ + r: (absolute, relative).
    pub(crate) fn measure<D: Delassus + Sync + ?Sized>(
        &self,
        op: &D,
        s: &SolverSettings,
        gamma: &[Vec6],
        y: &[Vec6],
    ) -> (f64, f64) {
        let (abs, scale) = match s.residual {
            ResidualMeasure::Siconos => {
                let abs = residual(op, gamma, y);
                (abs, norm(gamma).max(norm(y)).max(self.r_norm))
            }
            ResidualMeasure::Contact => (residual(op, gamma, y), norm(gamma).max(norm(y))),
            ResidualMeasure::Weighted => weighted_residual(op, gamma, y, &self.res_scale),
        };
        // An overflowed scale (a diverging solve: impulses of 1e160 square
        // to inf) would make any residual look small: not a number, never
        // converged.
        if !(abs.is_finite() && scale.is_finite()) {
            return (abs, f64::NAN);
        }
        let rel = if scale > f64::EPSILON {
            abs / scale
        } else {
            abs
        };
        (abs, rel)
    }
}

/// The start of every solve: checks that `gamma` has one entry per contact
/// and prepares the workspace; `Err` carries the answer for an empty
/// problem (nothing to solve: converged).
pub(crate) fn begin<D: Delassus + ?Sized>(
    op: &mut D,
    gamma: &[Vec6],
    s: &SolverSettings,
    ws: &mut Workspace,
) -> Result<usize, SolveStats> {
    let n = op.n_contacts();
    assert_eq!(
        gamma.len(),
        n,
        "gamma has {} entries for {n} contacts",
        gamma.len()
    );
    if n == 0 {
        return Err(SolveStats {
            converged: true,
            ..Default::default()
        });
    }
    ws.prepare(op, s);
    Ok(n)
}

/// Records the residual of γ (given y = Nγ + r) in `stats`; true when the
/// solve should stop (tolerance met, or `it` is the last iteration).
pub(crate) fn check_stop<D: Delassus + Sync + ?Sized>(
    op: &D,
    s: &SolverSettings,
    ws: &Workspace,
    it: usize,
    gamma: &[Vec6],
    y: &[Vec6],
    stats: &mut SolveStats,
) -> bool {
    let (abs, rel) = ws.measure(op, s, gamma, y);
    stats.residual_abs = abs;
    stats.residual_rel = rel;
    if rel <= s.tolerance {
        stats.converged = true;
        return true;
    }
    stats.timed_out = s.deadline.is_some_and(|d| std::time::Instant::now() >= d);
    it == s.max_iterations || stats.timed_out
}

/// Elements per chunk of [`det_sums`].
pub const REDUCE_CHUNK: usize = 1024;

/// Σ_i f(i) over 0..n, K sums at once, in fixed chunks of [`REDUCE_CHUNK`]
/// whose partial sums are added in chunk order: the same bits whatever the
/// number of threads (a rayon `reduce` splits where work stealing happens
/// to, so its rounding depends on the schedule, and a solver whose step
/// sizes and restarts read such sums would not be reproducible).
pub fn det_sums<const K: usize>(n: usize, f: impl Fn(usize) -> [f64; K] + Sync) -> [f64; K] {
    use rayon::prelude::*;
    let chunk = |c: usize| {
        let mut acc = [0.0; K];
        for i in c * REDUCE_CHUNK..((c + 1) * REDUCE_CHUNK).min(n) {
            let v = f(i);
            for k in 0..K {
                acc[k] += v[k];
            }
        }
        acc
    };
    let chunks = n.div_ceil(REDUCE_CHUNK);
    let partial: Vec<[f64; K]> = if chunks <= 1 {
        (0..chunks).map(chunk).collect()
    } else {
        (0..chunks).into_par_iter().map(chunk).collect()
    };
    partial.into_iter().fold([0.0; K], |mut a, b| {
        for k in 0..K {
            a[k] += b[k];
        }
        a
    })
}

/// Whether iteration `it` (of at most `max`) computes the residual.
#[inline]
pub(crate) fn is_check(it: usize, s: &SolverSettings) -> bool {
    it == s.max_iterations || (s.tolerance > 0.0 && it.is_multiple_of(s.check_every.max(1)))
}
