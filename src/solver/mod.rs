//! Contact solvers for the cone complementarity problem
//! (Tasora & Anitescu 2013, eqs. 38–42) and its non-associated variant
//! (Acary & Bourrier 2021, eq. 63).
//!
//! Solvers are written against the [`Delassus`] operator, so the same code
//! solves the matrix-free body form of a simulation step and explicit
//! matrices read from files (`crate::siconos`). Each reads the contact law
//! from the operator ([`Delassus::law`]).
//!
//! # The family, and when to use which
//!
//! | method | iteration | per iteration | law |
//! |---|---|---|---|
//! | [`Jacobi`](SolverMethod::Jacobi) | γ ← λ Π(γ − ω B ŷ) + (1−λ)γ, all contacts at once (Tasora & Anitescu 2013, eq. 46) | 1 apply | both |
//! | [`Apgd`](SolverMethod::Apgd) | Nesterov-accelerated projected gradient, backtracking step, restart | 2 applies | associated; De Saxcé by a fixed point on the shift s |
//! | [`Pgs`](SolverMethod::Pgs) | block Gauss–Seidel: one contact at a time with the latest values (Acary & Bourrier 2021, §5.2); Anderson mixing at the residual checks (on by default, depth 5; `solver.anderson`) | 1 apply, sequential (+1 per check when mixing) | both |
//! | [`FixedPoint`](SolverMethod::FixedPoint) | p ← Π(p − ρ_k F(p)), self-adaptive ρ_k (Acary & Bourrier 2021, eq. 64) | 1–2 applies | both |
//! | [`ExtraGradient`](SolverMethod::ExtraGradient) | predictor–corrector of Acary & Bourrier 2021, eq. 65, self-adaptive ρ_k | 2 applies | both |
//! | [`Newton`](SolverMethod::Newton) | semismooth Newton on all contacts: the natural map (associated law) or Alart–Curnier's (De Saxcé), J = I − P + PN in the metric, proximally regularized, Armijo line search ([`newton`]) | one sparse LU + 1–31 applies per step | both |
//! | [`InteriorPoint`](SolverMethod::InteriorPoint) | primal–dual interior point on the conic QP (`conic`; clarabel where it stalls), lifted to body form when there is one | one sparse LDLᵀ per Newton step; De Saxcé: the shift of Acary & Cadoux 2011, eqs. 8–10, re-evaluated after every Newton step | both |
//!
//! Here ŷ = F(γ) is the velocity the law pairs with γ: y = Nγ + r for the
//! associated law, y + g(y) for De Saxcé ([`modified_velocity`]).
//!
//! # One metric for all
//!
//! Every method steps in the diagonal metric B = diag(b_f I₃, b_t I₃) per
//! contact given by [`Delassus::jacobi_scales`] (a bound that makes the
//! largest eigenvalue of B^½ N B^½ about 1): a step is γ − t B ŷ, and the
//! projection is taken in the metric B⁻¹ — the Euclidean projection of
//! z = (γ_f/√b_f, γ_t/√b_t) onto the cone (μ, ρ√(b_f/b_t), σ√(b_f/b_t)),
//! mapped back ([`Metric`]). In the variables z the problem is well scaled,
//! so unit steps are safe starting points for every method, and forces and
//! torques are balanced.
//!
//! # Stopping
//!
//! All methods stop on the natural-map residual ‖γ − Π_Y(γ − ŷ)‖
//! (Tasora & Anitescu 2013, eq. 40; Acary & Bourrier 2021, eq. 61 with unit
//! step), divided by a scale chosen by [`ResidualMeasure`].

use serde::{Deserialize, Serialize};

use crate::cone::{natural_map_residual_sq, project};
use crate::material::{ConeCoeffs, FrictionLaw};
use crate::problem::{norm, Delassus, Vec6};

pub mod apgd;
pub(crate) mod conic;
pub mod fixed_point;
pub mod interior;
pub mod jacobi;
pub mod jacobi_f32;
pub mod newton;
pub mod packed;
pub mod pgs;

/// Which iteration solves the contact problem (see the module docs).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
pub enum SolverMethod {
    /// Projected Jacobi (Tasora & Anitescu 2013, eq. 46); runs on every
    /// backend.
    Jacobi,
    /// Accelerated projected gradient descent with adaptive step and restart
    /// (on the gpu and cpu-f32 backends with a fixed step and a restart when
    /// the residual grew between two checks: docs/gpu-design.md). The
    /// default: what docs/solvers.md recommends for a new scene.
    #[default]
    Apgd,
    /// Projected block Gauss–Seidel (Acary & Bourrier 2021, §5.2), CPU only.
    Pgs,
    /// Projected fixed point with self-adaptive step (Acary & Bourrier
    /// 2021, eq. 64), CPU only.
    FixedPoint,
    /// Extra-gradient with self-adaptive step (Acary & Bourrier 2021,
    /// eq. 65), CPU only.
    ExtraGradient,
    /// Primal–dual interior point on the conic QP (De Saxcé: the shift
    /// updated at every Newton step; clarabel as its fallback), CPU only.
    InteriorPoint,
    /// Semismooth Newton on all contacts at once (the natural map, or
    /// Alart–Curnier's under De Saxcé's law; one sparse LU a step), CPU
    /// only.
    Newton,
}

impl SolverMethod {
    /// Every method, in table order.
    pub const ALL: [SolverMethod; 7] = [
        SolverMethod::Jacobi,
        SolverMethod::Apgd,
        SolverMethod::Pgs,
        SolverMethod::FixedPoint,
        SolverMethod::ExtraGradient,
        SolverMethod::InteriorPoint,
        SolverMethod::Newton,
    ];

    /// The name used on the command line and in tables.
    pub fn name(self) -> &'static str {
        match self {
            SolverMethod::Jacobi => "jacobi",
            SolverMethod::Apgd => "apgd",
            SolverMethod::Pgs => "pgs",
            SolverMethod::FixedPoint => "fixed-point",
            SolverMethod::ExtraGradient => "extra-gradient",
            SolverMethod::InteriorPoint => "interior-point",
            SolverMethod::Newton => "newton",
        }
    }

    /// Parses a command-line name (as printed by [`SolverMethod::name`]).
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == s)
    }
}

impl std::fmt::Display for SolverMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the residual is measured: the natural map, weighted or not, and
/// what the absolute residual is divided by to give the relative one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum ResidualMeasure {
    /// ‖γ − Π(γ − C ŷ)‖ / max(‖γ‖, ‖C ŷ‖) with C the contacts' effective
    /// masses: impulses against impulses, so one
    /// contact left holding a stale impulse is not hidden by fast contacts
    /// elsewhere. A run's default, on every backend (the GPU's residual pass
    /// and the cpu-f32 mirror weight by the same b_f).
    #[default]
    Weighted,
    /// ‖γ − Π(γ − ŷ)‖ / max(‖γ‖, ‖Nγ + r‖), unweighted. It adds impulses
    /// to velocities, so a scene with fast contacts can pass it with a
    /// stale impulse left in.
    Contact,
    /// max(‖r‖, ‖γ‖, ‖Nγ + r‖), the measure of Siconos' test suite
    /// (`tests/data/siconos/README.md`), so that figures compare. The GPU
    /// and cpu-f32 backends, whose records do not hold ‖r‖, use
    /// the unweighted `contact` measure when asked for this one.
    Siconos,
}

/// Settings of the iterative contact solver.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SolverSettings {
    /// The iteration (default APGD).
    pub method: SolverMethod,
    /// Maximum number of iterations per solve (default 4,000: room for
    /// APGD to meet 10⁻⁴ on every step of a settling pile with rolling and
    /// spinning friction up to half the radius, docs/solvers.md).
    pub max_iterations: usize,
    /// Stop when the relative natural-map residual falls below this (0 =
    /// run all iterations; default 10⁻⁴).
    pub tolerance: f64,
    /// Step scale ω of Tasora & Anitescu 2013, eq. 46 (> 0); the initial step
    /// of the other methods.
    pub omega: f64,
    /// Relaxation λ of Tasora & Anitescu 2013, eq. 46, in (0, 1] (Jacobi and
    /// Gauss–Seidel).
    pub lambda: f64,
    /// Compute the residual every this many iterations (≥ 1).
    pub check_every: usize,
    /// Start from the previous step's impulses of persistent contact pairs.
    pub warm_start: bool,
    /// How the residual is measured (default [`ResidualMeasure::Weighted`]).
    pub residual: ResidualMeasure,
    /// PGS only: Anderson acceleration over this many past residual checks
    /// (each `check_every` sweeps; [`pgs`] module docs); default
    /// [`pgs::ANDERSON_DEPTH`] = 5; 0 = plain PGS.
    pub anderson: usize,
    /// The wall-clock time at which a solve stops, at its next residual
    /// check, unconverged: what `repose solve --time-limit` sets, so that
    /// one call runs to the limit without restarting the method's state.
    /// Not a scene field (a time step's solve has no clock limit); `None`,
    /// the default, sets no limit.
    #[serde(skip)]
    pub deadline: Option<std::time::Instant>,
    /// A second method for the steps the first leaves unconverged: the
    /// step is solved again with it (same tolerance; its cap
    /// [`fallback_max_iterations`](Self::fallback_max_iterations)) and the
    /// answer with the smaller residual is kept ([`solve`]). `None`, the
    /// default, solves once. CPU backend only.
    pub fallback: Option<SolverMethod>,
    /// The fallback's cap (the interior point's counts Newton steps);
    /// `None`, the default, takes `max_iterations`. A first method that
    /// will not converge on a pile's hard steps is best stopped early,
    /// and the fallback given room: on the pile of Acary & Bourrier 2021 at
    /// μ = 1, μ_r = 1 m (200 steps from 7.8 s) PGS failed every step at
    /// 1,000 sweeps; at 200 sweeps with the interior point capped at 1,000
    /// Newton steps the same steps took 341 s instead of 456 s (199 of 200
    /// met 1e-4 instead of 200; docs/solvers.md, "Choosing a solver").
    pub fallback_max_iterations: Option<usize>,
    /// Interior point under De Saxcé's law: take the first shift s = g(y)
    /// from the velocities of the starting impulses instead of s = 0, and
    /// hold it for the path's first Newton steps
    /// ([`interior::HOLD_START_SHIFT`]). Set by [`solve`] for a fallback,
    /// whose start is the first method's answer to the same problem (on
    /// the step where a PGS run stalled, 200 plain sweeps' answer: 1e-4 met
    /// in 10 Newton steps instead of 169); a run's warm start, the previous
    /// step's impulses, is a poorer one (on the pile of Acary & Bourrier 2021
    /// at μ = 1, μ_r = 1 m: 46 Newton steps a step instead of 35 from s = 0,
    /// measured). Not a scene field.
    #[serde(skip)]
    pub shift_from_start: bool,
    /// The fallback's own wall-clock limit, counted from its start (what
    /// `repose solve --time-limit` gives each of its two methods); `None`,
    /// the default, keeps [`deadline`](Self::deadline) for it. Not a scene
    /// field.
    #[serde(skip)]
    pub fallback_time_limit: Option<std::time::Duration>,
}

impl Default for SolverSettings {
    fn default() -> Self {
        SolverSettings {
            method: SolverMethod::Apgd,
            max_iterations: 4000,
            tolerance: 1e-4,
            omega: 1.0,
            lambda: 1.0,
            check_every: 10,
            warm_start: true,
            residual: ResidualMeasure::Weighted,
            anderson: pgs::ANDERSON_DEPTH,
            deadline: None,
            fallback: None,
            fallback_max_iterations: None,
            shift_from_start: false,
            fallback_time_limit: None,
        }
    }
}

/// What a solve reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SolveStats {
    /// Iterations performed.
    pub iterations: usize,
    /// Absolute natural-map residual ‖γ − Π_Y(γ − ŷ)‖ at the end.
    pub residual_abs: f64,
    /// Relative residual: absolute ÷ the scale of [`ResidualMeasure`] (not
    /// divided when that is below f64 ε).
    pub residual_rel: f64,
    /// Whether the tolerance was reached.
    pub converged: bool,
    /// Iterations of the fallback method when it ran
    /// ([`SolverSettings::fallback`]; `iterations` are the first method's).
    pub fallback_iterations: Option<usize>,
    /// Wall-clock seconds the fallback took (0 when it did not run).
    pub fallback_seconds: f64,
    /// Whether the solve that gave the answer stopped at its wall-clock
    /// limit ([`SolverSettings::deadline`]) unconverged.
    pub timed_out: bool,
}

/// Solves the problem of `op` with the method of `s`, starting from `gamma`
/// (warm start) and overwriting it with the result. Where that stops
/// unconverged and `s.fallback` names another method, the problem is solved
/// again by it, starting from the first method's answer, and the answer
/// with the smaller residual is kept: one that met the tolerance, or the
/// first method's on a tie (so a fallback never makes a step worse; a
/// finite residual counts as smaller than NaN).
pub fn solve<D: Delassus + Sync>(
    op: &mut D,
    gamma: &mut [Vec6],
    s: &SolverSettings,
    ws: &mut Workspace,
) -> SolveStats {
    let first = solve_with(s.method, op, gamma, s, ws);
    let Some(method) = s.fallback.filter(|&f| f != s.method && !first.converged) else {
        return first;
    };
    let mut start = std::mem::take(&mut ws.fallback_start);
    start.clear();
    start.extend_from_slice(gamma);
    let fallback = SolverSettings {
        shift_from_start: true,
        max_iterations: s.fallback_max_iterations.unwrap_or(s.max_iterations),
        deadline: match s.fallback_time_limit {
            Some(limit) => std::time::Instant::now().checked_add(limit),
            None => s.deadline,
        },
        ..s.clone()
    };
    let started = std::time::Instant::now();
    let second = solve_with(method, op, gamma, &fallback, ws);
    let fallback_seconds = started.elapsed().as_secs_f64();
    let better = is_better(&second, &first);
    let stats = if better {
        SolveStats {
            iterations: first.iterations,
            fallback_iterations: Some(second.iterations),
            fallback_seconds,
            ..second
        }
    } else {
        gamma.copy_from_slice(&start);
        SolveStats {
            fallback_iterations: Some(second.iterations),
            fallback_seconds,
            ..first
        }
    };
    ws.fallback_start = start;
    stats
}

/// Whether the answer of `candidate` is to be kept over that of `than`:
/// it met the tolerance, or its residual is smaller (a finite residual
/// counts as smaller than NaN); on a tie, `than`'s is kept.
pub(crate) fn is_better(candidate: &SolveStats, than: &SolveStats) -> bool {
    candidate.converged
        || candidate.residual_rel < than.residual_rel
        || (than.residual_rel.is_nan() && !candidate.residual_rel.is_nan())
}

/// One method's solve (the dispatch of [`solve`]).
fn solve_with<D: Delassus + Sync>(
    method: SolverMethod,
    op: &mut D,
    gamma: &mut [Vec6],
    s: &SolverSettings,
    ws: &mut Workspace,
) -> SolveStats {
    match method {
        SolverMethod::Jacobi => jacobi::solve(op, gamma, s, ws),
        SolverMethod::Apgd => apgd::solve(op, gamma, s, ws),
        SolverMethod::Pgs => pgs::solve(op, gamma, s, ws),
        SolverMethod::FixedPoint => fixed_point::solve(op, gamma, s, ws, false),
        SolverMethod::ExtraGradient => fixed_point::solve(op, gamma, s, ws, true),
        SolverMethod::InteriorPoint => interior::solve(op, gamma, s, ws),
        SolverMethod::Newton => newton::solve(op, gamma, s, ws),
    }
}

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
/// test, and the solver returns at iteration 0. Seen in repose_seed001:
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
    scaled: Vec<(ConeCoeffs, f64, f64)>,
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
    fallback_start: Vec<Vec6>,
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
