//! What every formulation's step shares, below the stepper that sequences
//! them ([`crate::step`]): the stage timers, a step's report and the ways a
//! step fails. Formulations import these from here, so that no formulation
//! depends on the stepper that calls it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::collision;
use crate::formulation::pyramid::PyramidError;
use crate::gpu::GpuError;
use crate::solver::{SolveStats, SolverMethod};

/// The stages of a step, each with its timer (as Box2D's solver stages):
/// their names are the keys of `summary.json`'s `stage_seconds`
/// ([`Stage::name`]). Which stages a step runs, and in what order, is its
/// formulation's ([`crate::step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Particle inlets append the spheres due.
    Emit,
    /// Free velocities (and the gyroscopic step of shapes); the penalty
    /// formulation's contact loads.
    Forces,
    /// Broadphase and narrowphase.
    Collide,
    /// The contact problem.
    Assemble,
    /// The previous step's impulses in the new frames.
    WarmStart,
    /// The pyramid LCP posed and solved by Lemke's method.
    Lcp,
    /// The cone complementarity problem solved (with the f32 packing).
    Solve,
    /// Each boundary's load over the step.
    WallLoads,
    /// This step's impulses kept for the next.
    StoreWarm,
    /// New velocities, positions and orientations.
    Integrate,
}

impl Stage {
    /// The stage's name in reports: `emit`, `forces`, `collide`,
    /// `assemble`, `warm_start`, `lcp`, `solve`, `wall_loads`,
    /// `store_warm`, `integrate`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Emit => "emit",
            Stage::Forces => "forces",
            Stage::Collide => "collide",
            Stage::Assemble => "assemble",
            Stage::WarmStart => "warm_start",
            Stage::Lcp => "lcp",
            Stage::Solve => "solve",
            Stage::WallLoads => "wall_loads",
            Stage::StoreWarm => "store_warm",
            Stage::Integrate => "integrate",
        }
    }
}

/// Accumulated wall-clock time per stage (only stages that ran have one).
#[derive(Clone, Debug, Default)]
pub struct StageTimers {
    total: BTreeMap<Stage, Duration>,
}

impl StageTimers {
    /// Runs `f`, adding its duration to `stage`.
    pub fn time<T>(&mut self, stage: Stage, f: impl FnOnce() -> T) -> T {
        let t0 = Instant::now();
        let out = f();
        self.add(stage, t0.elapsed());
        out
    }

    /// Adds `d` to `stage` (time spent elsewhere for it: a batch's solve).
    pub fn add(&mut self, stage: Stage, d: Duration) {
        *self.total.entry(stage).or_default() += d;
    }

    /// The time of `stage` so far; `None` if it never ran.
    pub fn get(&self, stage: Stage) -> Option<Duration> {
        self.total.get(&stage).copied()
    }

    /// Seconds per stage that ran, by name, for reports.
    pub fn seconds(&self) -> BTreeMap<String, f64> {
        self.total
            .iter()
            .map(|(k, v)| (k.name().to_string(), v.as_secs_f64()))
            .collect()
    }
}

/// What one step reports.
#[derive(Clone, Copy, Debug, Default)]
pub struct StepReport {
    /// Sub-steps taken (the penalty formulation's; 1 for complementarity).
    pub substeps: u64,
    /// Contacts in the problem.
    pub contacts: usize,
    /// Solver statistics.
    pub solve: SolveStats,
}

/// Why a step failed.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The solve produced non-finite numbers.
    #[error(transparent)]
    NonFinite(#[from] NonFiniteError),
    /// The GPU solver failed.
    #[error("step {step}: {error}")]
    Gpu {
        /// Index of the failing step.
        step: u64,
        /// The GPU error (part of the message, not a `source()`, so that
        /// `{:#}` does not print it twice).
        error: GpuError,
    },
    /// The f32 backends cannot see a spinning boundary: their contact records
    /// carry only the force rows of the bias, and dropping the torque rows
    /// would silently remove the wall's spin from rolling/spinning friction.
    #[error("step {step}: the {backend} backend cannot run a scene with a rotating boundary (its contact records carry no torque bias); use --backend cpu")]
    RotatingBoundary {
        /// Index of the failing step.
        step: u64,
        /// The backend.
        backend: String,
    },
    /// The penalty and pyramid formulations run on the f64 CPU only.
    #[error("the {backend} backend runs the complementarity formulation only; the {formulation} formulation runs on the cpu backend (--backend cpu)")]
    FormulationBackend {
        /// The backend.
        backend: String,
        /// The formulation's name.
        formulation: &'static str,
    },
    /// The pyramid LCP of a step could not be posed or solved.
    #[error("step {step}: {error}")]
    Pyramid {
        /// Index of the failing step.
        step: u64,
        /// Why.
        error: PyramidError,
    },
    /// Contact detection refused: spheres inside each other en masse.
    #[error("step {step}: {error}")]
    Crowded {
        /// Index of the failing step.
        step: u64,
        /// Which sphere, and the bound.
        error: collision::Crowded,
    },
    /// The backend cannot run the asked-for method.
    #[error(
        "the {backend} backend runs only the jacobi and apgd methods, not {method}; use the cpu backend"
    )]
    Unsupported {
        /// The backend.
        backend: String,
        /// The solver method asked for.
        method: SolverMethod,
    },
    /// The backend cannot run a fallback method (`solver.fallback`).
    #[error("solver.fallback ({method}) runs on the cpu backend only, not on the {backend} backend; use --backend cpu or remove it")]
    UnsupportedFallback {
        /// The backend.
        backend: String,
        /// The fallback method asked for.
        method: SolverMethod,
    },
}

/// A step that produced non-finite numbers.
#[derive(Debug, thiserror::Error)]
#[error("step {step} (t = {time:.6} s): {what} is not finite (body {body}); the solver diverged — try a smaller time step or a lower solver.omega")]
pub struct NonFiniteError {
    /// Index of the failing step.
    pub step: u64,
    /// Simulated time at the start of that step.
    pub time: f64,
    /// Which quantity.
    pub what: &'static str,
    /// The first body where it happened.
    pub body: usize,
}
