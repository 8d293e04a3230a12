//! What a solve is asked and what it reports: the method, the residual
//! measure, the settings a scene's `solver:` section gives, and the
//! statistics of a solve.

use serde::{Deserialize, Serialize};

/// The depth of the Anderson acceleration: `solver.anderson`'s default and
/// the depth the measurements in [`super::pgs`]'s module docs used.
pub const ANDERSON_DEPTH: usize = 5;

/// Which iteration solves the contact problem (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    /// (each `check_every` sweeps; [`super::pgs`] module docs); default
    /// [`ANDERSON_DEPTH`] = 5; 0 = plain PGS.
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
    /// answer with the smaller residual is kept ([`solve`](super::solve)). `None`, the
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
    /// ([`interior::HOLD_START_SHIFT`](super::interior::HOLD_START_SHIFT)). Set by [`solve`](super::solve) for a fallback,
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
            anderson: ANDERSON_DEPTH,
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
