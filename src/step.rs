//! One time step as a sequence of named stages, each timed. The inlets
//! emit, then the world's formulation takes the step ([`crate::formulation`],
//! one `match` in [`Stepper::step`]): the complementarity formulation's
//! stages are below; the penalty formulation's sub-steps (collide ─► forces
//! ─► integrate) are in [`crate::formulation::penalty`]; the pyramid LCP
//! shares the complementarity formulation's first and last stages and puts
//! its own in the middle ([`crate::formulation::pyramid`]):
//!
//! ```text
//! emit ─► forces ─► collide ─► assemble ─► lcp (pose, Lemke) ─► store_warm ─► integrate
//! ```
//!
//! The complementarity formulation:
//!
//! ```text
//! emit ─► forces ─► collide ─► assemble ─► warm_start ─► solve ─► store_warm ─► integrate
//! ```
//!
//! * `emit`: particle inlets append the spheres due by the end of this step
//!   to the bodies ([`crate::inlet`]); the rest of the step sees them like
//!   any other body. Existing ids never change, so warm-start keys stay valid.
//! * `forces`: free velocities v + h g (seed 000 eq. 37, k̃ = M v + h f), and
//!   for bodies that are not spheres the implicit gyroscopic step
//!   ([`crate::integrate`]).
//! * `collide`: grid broadphase and narrowphase → contact geometry (other
//!   shapes: manifolds from parry, [`crate::shape`]).
//! * `assemble`: the [`ContactProblem`] (frames, arms, cones, bias, CSR).
//! * `warm_start`: the previous step's impulses of persistent pairs, turned
//!   into the new contact frames.
//! * `solve`: the cone complementarity problem (projected Jacobi, seed 000 eq. 46).
//! * `store_warm`: this step's impulses, kept in world coordinates.
//! * `integrate`: v⁺ = v_free + M⁻¹ D γ (eq. 44), then positions and orientations.
//!
//! **Each step runs inside the stepper's own rayon pool.** A parallel pass
//! called from outside a pool hands its work to the pool's threads and
//! sleeps until they finish; a step has hundreds of passes (APGD: several
//! per iteration), and those hand-offs cost more than the work on steps of
//! a few thousand contacts (`scenes/pour_1000.ron`: 12.4 s of system time
//! for 10.4 s of user time). Inside a pool the passes split by work
//! stealing with no hand-off, so [`Stepper::step`] enters its pool once per
//! step: one thread while the previous step had fewer than
//! [`Stepper::serial_below`] contacts (the serial path: there a second
//! thread only burns CPU), else as many as the global pool. The results are
//! the same bits either way: the passes are elementwise, and reductions run
//! in fixed chunks ([`crate::solver::det_sums`]).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use glam::DVec3;

use crate::collision;
use crate::formulation::penalty::{self, PenaltyWorkspace};
use crate::formulation::pyramid::{self, PyramidError, PyramidLcp, PyramidSettings};
use crate::formulation::Formulation;
use crate::gpu::jacobi::GpuJacobi;
use crate::gpu::{GpuContext, GpuError};
use crate::integrate;
use crate::problem::{BodyDelassus, ContactProblem, Vec6};
use crate::solver::jacobi_f32::{self, JacobiF32Workspace};
use crate::solver::packed::pack;
use crate::solver::SolveStats;
use crate::solver::{self, SolverMethod, Workspace};
use crate::world::{WarmImpulse, World};

/// Which solver runs the `solve` stage.
pub enum Backend {
    /// The f64 CPU reference (projected Jacobi, matrix-free, rayon).
    Cpu,
    /// The f32 CPU mirror of the GPU solver (same records, same operations).
    CpuF32,
    /// The WGSL solver on a GPU adapter (hardware or lavapipe).
    Gpu(Box<GpuState>),
}

/// A GPU context with its solver.
pub struct GpuState {
    /// Device and queue.
    pub ctx: GpuContext,
    /// Pipelines and buffers.
    pub solver: GpuJacobi,
}

impl Backend {
    /// The GPU backend on a new context, or why not.
    pub fn gpu(ctx: GpuContext) -> Result<Self, GpuError> {
        let solver = GpuJacobi::new(&ctx)?;
        Ok(Backend::Gpu(Box::new(GpuState { ctx, solver })))
    }

    /// "cpu", "cpu-f32" or "gpu (adapter name, backend, type)".
    pub fn describe(&self) -> String {
        match self {
            Backend::Cpu => "cpu".into(),
            Backend::CpuF32 => "cpu-f32".into(),
            Backend::Gpu(g) => format!("gpu ({})", g.ctx.describe()),
        }
    }

    /// What the GPU solver has done so far (counts, bytes, host times);
    /// `None` on the CPU backends.
    pub fn gpu_counters(&self) -> Option<crate::gpu::profile::GpuCounters> {
        match self {
            Backend::Gpu(g) => Some(g.solver.counters()),
            _ => None,
        }
    }

    /// Whether the solver computes in f32.
    pub fn is_f32(&self) -> bool {
        !matches!(self, Backend::Cpu)
    }
}

/// Accumulated wall-clock time per stage.
#[derive(Clone, Debug, Default)]
pub struct StageTimers {
    /// Stage name → total time.
    pub total: BTreeMap<&'static str, Duration>,
}

impl StageTimers {
    /// Runs `f`, adding its duration to `stage`.
    pub fn time<T>(&mut self, stage: &'static str, f: impl FnOnce() -> T) -> T {
        let t0 = Instant::now();
        let out = f();
        *self.total.entry(stage).or_default() += t0.elapsed();
        out
    }

    /// Seconds per stage, for reports.
    pub fn seconds(&self) -> BTreeMap<String, f64> {
        self.total
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_secs_f64()))
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

/// Advances worlds one step at a time, keeping buffers and timers between steps.
pub struct Stepper {
    /// Time per stage, summed over all steps.
    pub timers: StageTimers,
    /// The solver backend.
    pub backend: Backend,
    ws: Workspace,
    ws32: JacobiF32Workspace,
    gamma: Vec<Vec6>,
    gamma32: Vec<[f32; 6]>,
    /// The new velocities of a step, checked before they replace the bodies'.
    new_vel: Vec<DVec3>,
    new_omega: Vec<DVec3>,
    /// The last step's contact problem (for analysis and tests).
    pub last_problem: ContactProblem,
    /// Steps whose previous step had fewer contacts than this run on one
    /// thread (module docs); 0 = never, `usize::MAX` = always. Default
    /// [`SERIAL_BELOW`].
    pub serial_below: usize,
    /// The pools the steps run in: one thread (serial path) and as many as
    /// the global pool has; each made on first use.
    pools: [Option<rayon::ThreadPool>; 2],
    /// Contacts of the last step.
    last_contacts: usize,
    /// The penalty formulation's derived data.
    penalty: PenaltyWorkspace,
}

/// Default of [`Stepper::serial_below`]: below it a second thread gave the
/// same wall time for twice the CPU (`repose_small`'s first 0.5 s, 130
/// contacts a step); at 1,260 contacts (`pour_1000.ron`) two threads are
/// 9 % faster (README, Performance).
pub const SERIAL_BELOW: usize = 512;

impl Default for Stepper {
    fn default() -> Self {
        Self::with_backend(Backend::Cpu)
    }
}

impl Stepper {
    /// A stepper on the f64 CPU backend.
    pub fn new() -> Self {
        Self::default()
    }

    /// A stepper on the given backend.
    pub fn with_backend(backend: Backend) -> Self {
        Stepper {
            timers: StageTimers::default(),
            backend,
            ws: Workspace::default(),
            ws32: JacobiF32Workspace::default(),
            gamma: Vec::new(),
            gamma32: Vec::new(),
            new_vel: Vec::new(),
            new_omega: Vec::new(),
            last_problem: ContactProblem::default(),
            serial_below: SERIAL_BELOW,
            pools: [None, None],
            last_contacts: 0,
            penalty: PenaltyWorkspace::default(),
        }
    }

    /// How many times the penalty formulation's neighbour list was built.
    pub fn penalty_rebuilds(&self) -> u64 {
        self.penalty.neighbours.rebuilds
    }

    /// The impulses of the last step's contacts, in their contact frames.
    pub fn last_impulses(&self) -> &[Vec6] {
        &self.gamma
    }

    /// Advances the world by one time step. On a [`NonFiniteError`] the
    /// bodies keep the positions and velocities of the last completed step
    /// (the non-finite velocities are not stored). Small steps run on one
    /// thread (module docs).
    pub fn step(&mut self, world: &mut World) -> Result<StepReport, StepError> {
        if rayon::current_thread_index().is_some() {
            // Already on a pool's thread (a sweep's job, a test's pool):
            // its passes run there without hand-offs.
            return self.step_here(world);
        }
        let serial = self.last_contacts < self.serial_below;
        let slot = usize::from(!serial);
        let pool = match self.pools[slot].take() {
            Some(p) => p,
            None => {
                let threads = if serial {
                    1
                } else {
                    rayon::current_num_threads()
                };
                match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                    Ok(p) => p,
                    // No thread to be had: the global pool still works.
                    Err(_) => return self.step_here(world),
                }
            }
        };
        let out = pool.install(|| self.step_here(world));
        self.pools[slot] = Some(pool);
        if let Ok(r) = &out {
            self.last_contacts = r.contacts;
        }
        out
    }

    /// One step on the calling thread's rayon pool: the inlets emit, then
    /// the world goes to its formulation ([`crate::formulation`]).
    fn step_here(&mut self, world: &mut World) -> Result<StepReport, StepError> {
        let h = world.time_step;
        if !world.inlets.is_empty() {
            let envelope = world.envelope();
            let t_end = world.time + h;
            self.timers.time("emit", || {
                crate::inlet::emit_all(
                    &mut world.inlets,
                    &mut world.bodies,
                    &world.boundaries,
                    t_end,
                    envelope,
                )
            });
        }
        // Only the f64 CPU runs the formulations other than complementarity.
        if !matches!(world.formulation, Formulation::Complementarity)
            && !matches!(self.backend, Backend::Cpu)
        {
            return Err(StepError::FormulationBackend {
                backend: self.backend.describe(),
                formulation: world.formulation.name(),
            });
        }
        match &world.formulation {
            Formulation::Complementarity => self.complementarity(world),
            Formulation::Penalty(settings) => {
                let settings = settings.clone();
                penalty::step(world, &settings, &mut self.penalty, &mut self.timers)
            }
            Formulation::PyramidLcp(settings) => {
                let settings = settings.clone();
                self.pyramid(world, &settings)
            }
        }
    }

    /// One step of the complementarity formulation (module docs).
    fn complementarity(&mut self, world: &mut World) -> Result<StepReport, StepError> {
        let problem = pose(world, &mut self.timers)?;
        let timers = &mut self.timers;
        let gamma = &mut self.gamma;
        timers.time("warm_start", || {
            gamma.clear();
            gamma.extend((0..problem.n_contacts()).map(|i| {
                if !world.solver.warm_start {
                    return [0.0; 6];
                }
                match world.warm.get(&problem.key[i]) {
                    None => [0.0; 6],
                    Some(wi) => {
                        let [n, u, w] = problem.frame[i];
                        [
                            wi.force.dot(n),
                            wi.force.dot(u),
                            wi.force.dot(w),
                            wi.torque.dot(n),
                            wi.torque.dot(u),
                            wi.torque.dot(w),
                        ]
                    }
                }
            }));
        });
        let (ws, ws32, gamma32) = (&mut self.ws, &mut self.ws32, &mut self.gamma32);
        let backend = &mut self.backend;
        let settings = &world.solver;
        let step_index = world.step_index;
        // The f32 backends return the body velocities with the impulses.
        let (stats, velocities) = timers.time("solve", || -> Result<_, StepError> {
            if let Backend::Cpu = backend {
                let mut op = BodyDelassus::new(&problem);
                return Ok((solver::solve(&mut op, gamma, settings, ws), None));
            }
            if !matches!(settings.method, SolverMethod::Jacobi | SolverMethod::Apgd) {
                return Err(StepError::Unsupported {
                    backend: backend.describe(),
                    method: settings.method,
                });
            }
            if let Some(method) = settings.fallback {
                return Err(StepError::UnsupportedFallback {
                    backend: backend.describe(),
                    method,
                });
            }
            // `pack` keeps only the force rows of the bias: refuse rather
            // than drop a spinning wall's torque rows.
            if problem.has_torque_bias() {
                return Err(StepError::RotatingBoundary {
                    step: step_index,
                    backend: backend.describe(),
                });
            }
            let mut packed = pack(&problem, gamma);
            gamma32.clear();
            gamma32.extend(gamma.iter().map(|g| g.map(|x| x as f32)));
            let stats = match backend {
                Backend::Gpu(g) => g
                    .solver
                    .solve(&g.ctx, &mut packed, gamma32, settings)
                    .map_err(|error| StepError::Gpu {
                        step: step_index,
                        error,
                    })?,
                _ => jacobi_f32::solve(&mut packed, &problem.csr_slots, gamma32, settings, ws32),
            };
            for (g, g32) in gamma.iter_mut().zip(gamma32.iter()) {
                *g = g32.map(|x| x as f64);
            }
            let v = packed
                .bodies
                .iter()
                .map(|b| DVec3::new(b.v[0] as f64, b.v[1] as f64, b.v[2] as f64));
            let w = packed
                .bodies
                .iter()
                .map(|b| DVec3::new(b.w[0] as f64, b.w[1] as f64, b.w[2] as f64));
            Ok((stats, Some((v.collect::<Vec<_>>(), w.collect::<Vec<_>>()))))
        })?;
        self.finish(world, problem, stats, velocities)
    }

    /// One step of seed 002's pyramid LCP ([`crate::formulation::pyramid`]):
    /// the same contacts and problem as the complementarity formulation,
    /// then its `lcp` stage (pose the reduced LCP from the problem and each
    /// contact's previous impulse and slip, solve it by Lemke's method) in
    /// place of warm_start and solve.
    fn pyramid(
        &mut self,
        world: &mut World,
        settings: &PyramidSettings,
    ) -> Result<StepReport, StepError> {
        let problem = pose(world, &mut self.timers)?;
        let h = world.time_step;
        let step = world.step_index + 1;
        let bodies = &world.bodies;
        let warm = &world.warm;
        let vrec = world.contact.max_recovery_speed;
        let (impulses, lcp_size, pivots) = self
            .timers
            .time("lcp", || -> Result<_, PyramidError> {
                let history = pyramid::histories(&problem, warm, bodies);
                let lcp = PyramidLcp::build(&problem, &history, settings, h, vrec)?;
                let (p, pivots) = lcp.solve()?;
                Ok((p, lcp.size(), pivots))
            })
            .map_err(|error| StepError::Pyramid { step, error })?;
        self.gamma.clear();
        self.gamma
            .extend(impulses.iter().map(|p| [p[0], p[1], p[2], 0.0, 0.0, 0.0]));
        // Lemke's answer is exact up to rounding: the step meets any
        // tolerance; its "iterations" are the pivots.
        let stats = SolveStats {
            iterations: pivots,
            residual_abs: 0.0,
            residual_rel: 0.0,
            converged: true,
            fallback_iterations: None,
            timed_out: false,
        };
        log::trace!("step {step}: pyramid LCP of {lcp_size} unknowns, {pivots} pivots");
        self.finish(world, problem, stats, None)
    }

    /// The end of a step of a rigid formulation: keep this step's impulses
    /// for the next (warm starts, histories), then integrate with the new
    /// velocities (`velocities`, or v_free + M⁻¹ D γ).
    fn finish(
        &mut self,
        world: &mut World,
        problem: ContactProblem,
        stats: SolveStats,
        velocities: Option<(Vec<DVec3>, Vec<DVec3>)>,
    ) -> Result<StepReport, StepError> {
        let h = world.time_step;
        let timers = &mut self.timers;
        let gamma = &self.gamma;
        timers.time("store_warm", || {
            world.warm.clear();
            for (i, g) in gamma.iter().enumerate() {
                let [n, u, w] = problem.frame[i];
                world.warm.insert(
                    problem.key[i],
                    WarmImpulse {
                        force: n * g[0] + u * g[1] + w * g[2],
                        torque: n * g[3] + u * g[4] + w * g[5],
                    },
                );
            }
        });
        let step = world.step_index;
        let time = world.time;
        let (new_vel, new_omega) = (&mut self.new_vel, &mut self.new_omega);
        timers.time("integrate", || -> Result<(), NonFiniteError> {
            let b = &mut world.bodies;
            // Compute and check the new velocities aside, so that a failing
            // step leaves the bodies at the last good state.
            match velocities {
                Some((v, w)) if problem.n_bodies() == b.len() => {
                    *new_vel = v;
                    *new_omega = w;
                }
                _ => {
                    // velocities_into writes every entry.
                    new_vel.resize(b.len(), DVec3::ZERO);
                    new_omega.resize(b.len(), DVec3::ZERO);
                    problem.velocities_into(gamma, new_vel, new_omega);
                }
            }
            let bad = |x: &[DVec3]| x.iter().position(|v| !v.is_finite());
            // Impulses so large that their squares overflow (the residual
            // is then not a number) are a diverged solve even while every
            // velocity is still finite.
            if stats.residual_rel.is_nan() {
                let body = (0..new_vel.len())
                    .max_by(|&i, &j| new_vel[i].length().total_cmp(&new_vel[j].length()))
                    .unwrap_or(0);
                return Err(NonFiniteError {
                    step,
                    time,
                    what: "solver residual (the impulses overflow)",
                    body,
                });
            }
            if let Some(body) = bad(new_vel) {
                return Err(NonFiniteError {
                    step,
                    time,
                    what: "velocity",
                    body,
                });
            }
            if let Some(body) = bad(new_omega) {
                return Err(NonFiniteError {
                    step,
                    time,
                    what: "angular velocity",
                    body,
                });
            }
            std::mem::swap(&mut b.vel, new_vel);
            std::mem::swap(&mut b.omega, new_omega);
            integrate::positions(b, h);
            integrate::boundaries(&mut world.boundaries, time, h);
            Ok(())
        })?;
        world.time += h;
        world.step_index += 1;
        let report = StepReport {
            contacts: problem.n_contacts(),
            solve: stats,
            substeps: 1,
        };
        self.last_problem = problem;
        Ok(report)
    }
}

/// The first stages of a rigid formulation's step: free velocities,
/// contacts, and the contact problem.
fn pose(world: &World, timers: &mut StageTimers) -> Result<ContactProblem, StepError> {
    let h = world.time_step;
    let (v_free, w_free) = timers.time("forces", || {
        integrate::free_velocities(&world.bodies, world.gravity, h)
    });
    let envelope = world.envelope();
    let contacts = timers
        .time("collide", || {
            collision::detect(&world.bodies, &world.boundaries, envelope, world.time)
        })
        .map_err(|error| StepError::Crowded {
            step: world.step_index + 1,
            error,
        })?;
    Ok(timers.time("assemble", || {
        let mut p = ContactProblem::assemble(
            &world.bodies,
            &contacts,
            &world.materials,
            v_free,
            w_free,
            h,
            world.contact.max_recovery_speed,
        );
        p.law = world.contact.friction_law;
        p
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_step_error_says_its_cause_once_in_an_error_chain() {
        let e = StepError::Gpu {
            step: 7,
            error: GpuError::Wgpu("device lost".into()),
        };
        let msg = format!("{:#}", anyhow::Error::new(e).context("simulation stopped"));
        assert_eq!(msg, "simulation stopped: step 7: GPU error: device lost");
    }
}
