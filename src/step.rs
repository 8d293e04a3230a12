//! One time step as a sequence of named stages, each timed. The inlets
//! emit, then the world's formulation takes the step ([`crate::formulation`],
//! one `match` in [`Stepper::step`]): the complementarity formulation's
//! stages are below; the penalty formulation's sub-steps (collide ─► forces
//! ─► integrate) are in [`crate::formulation::penalty`]; the pyramid LCP
//! shares the complementarity formulation's first and last stages and puts
//! its own in the middle ([`crate::formulation::pyramid`]):
//!
//! ```text
//! emit ─► forces ─► collide ─► assemble ─► lcp (pose, Lemke) ─► wall_loads ─► store_warm ─► integrate
//! ```
//!
//! The complementarity formulation:
//!
//! ```text
//! emit ─► forces ─► collide ─► assemble ─► warm_start ─► solve ─► wall_loads ─► store_warm ─► integrate
//! ```
//!
//! * `emit`: particle inlets append the spheres due by the end of this step
//!   to the bodies ([`crate::inlet`]); the rest of the step sees them like
//!   any other body. Existing ids never change, so warm-start keys stay valid.
//! * `forces`: free velocities v + h g (Tasora & Anitescu 2013, eq. 37,
//!   k̃ = M v + h f), and for bodies that are not spheres the implicit
//!   gyroscopic step ([`crate::integrate`]).
//! * `collide`: grid broadphase and narrowphase → contact geometry (other
//!   shapes: manifolds from parry, [`crate::shape`]).
//! * `assemble`: the [`ContactProblem`] (frames, arms, cones, bias, CSR).
//! * `warm_start`: the previous step's impulses of persistent pairs, turned
//!   into the new contact frames.
//! * `solve`: the cone complementarity problem (projected Jacobi,
//!   Tasora & Anitescu 2013, eq. 46).
//! * `wall_loads`: each boundary's mean force, torque and power over the
//!   step from the impulses ([`crate::wall_loads`]; `walls.csv`).
//! * `store_warm`: this step's impulses, kept in world coordinates.
//! * `integrate`: v⁺ = v_free + M⁻¹ D γ (eq. 44), in f64 from the final
//!   impulses on every backend, then positions and orientations.
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

use std::time::Duration;

use crate::contact_forces::ContactForces;
use crate::formulation::complementarity::{self as rigid, FinishBuffers};
use crate::formulation::penalty::{self, PenaltyWorkspace};
use crate::formulation::pyramid::{self, PyramidSettings};
use crate::formulation::Formulation;
use crate::gpu::jacobi::{BatchEntry, GpuJacobi};
use crate::gpu::{GpuContext, GpuError};
use crate::problem::{BodyDelassus, ContactProblem, Vec6};
use crate::solver::jacobi_f32::{self, JacobiF32Workspace};
use crate::solver::packed::PackedProblem;
use crate::solver::SolveStats;
use crate::solver::{self, Workspace};
use crate::wall_loads::{wall_loads, WallLoad};
use crate::world::World;

pub use crate::formulation::stage::{NonFiniteError, StageTimers, StepError, StepReport};

/// Which solver runs the `solve` stage.
pub enum Backend {
    /// The f64 CPU reference (projected Jacobi, matrix-free, rayon).
    Cpu,
    /// The f32 CPU mirror of the GPU solver (same records, same operations).
    CpuF32,
    /// The WGSL solver on a GPU adapter (hardware or lavapipe).
    Gpu(Box<GpuState>),
    /// A world of a batch on one GPU ([`crate::run::batch`]): its solve is
    /// the batch's ([`Stepper::begin_batched`], [`Stepper::end_batched`]);
    /// the description names the GPU.
    Batched(String),
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
            Backend::Batched(gpu) => gpu.clone(),
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
    finish_bufs: FinishBuffers,
    /// A batched step between [`Self::begin_batched`] and
    /// [`Self::end_batched`]: its problem and its packed records.
    pending: Option<(ContactProblem, PackedProblem)>,
    /// The last step's contact problem (for analysis and tests).
    pub last_problem: ContactProblem,
    /// Whether `gamma` holds the impulses of `last_problem` (at first both
    /// empty): false from the moment a rigid step starts writing `gamma`
    /// until it has finished, so
    /// that after a failed step (rolled back, or stopped in its solve) the
    /// records are not made of one step's problem and another's impulses.
    records_valid: bool,
    /// The last step's load on every boundary ([`crate::wall_loads`]; the
    /// penalty formulation's from its sub-steps,
    /// [`penalty::wall_loads`]), in scene order.
    pub last_wall_loads: Vec<WallLoad>,
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
/// 9 % faster (2026-11-22, 2 cores).
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
            finish_bufs: FinishBuffers::default(),
            pending: None,
            last_problem: ContactProblem::default(),
            records_valid: true,
            last_wall_loads: Vec::new(),
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

    /// The loads of the last step's contacts ([`ContactForces`]), for
    /// `world` as that step left it: under the rigid formulations from the
    /// step's impulses; under the penalty formulation, whose contacts
    /// change within a step's sub-steps, the loads at the world's state
    /// ([`penalty::records`]). `None` after a rigid step that failed (the
    /// impulses it had written belong to its own problem, not to the last
    /// finished step's, and the bodies are back at that step's end), or
    /// when the penalty detection finds a grid
    /// cell overfull (which the step itself would have stopped at).
    pub fn contact_forces(&self, world: &World) -> Option<ContactForces> {
        if let Formulation::Penalty(settings) = &world.formulation {
            return penalty::records::contact_forces(world, settings).ok();
        }
        let p = &self.last_problem;
        (self.records_valid && self.gamma.len() == p.n_contacts())
            .then(|| ContactForces::from_impulses(p, &self.gamma, &world.bodies, world.time_step))
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
        self.emit(world)?;
        self.records_valid = false;
        match &world.formulation {
            Formulation::Complementarity => self.complementarity(world),
            Formulation::Penalty(settings) => {
                let settings = settings.clone();
                let (h, t0) = (world.time_step, world.time);
                let report = penalty::step(world, &settings, &mut self.penalty, &mut self.timers)?;
                self.last_wall_loads = penalty::wall_loads(&self.penalty, &world.boundaries, h, t0);
                Ok(report)
            }
            Formulation::PyramidLcp(settings) => {
                let settings = settings.clone();
                self.pyramid(world, &settings)
            }
        }
    }

    /// The `emit` stage (inlets), and the check that the backend runs the
    /// world's formulation (only the f64 CPU runs those other than
    /// complementarity).
    fn emit(&mut self, world: &mut World) -> Result<(), StepError> {
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
        if !matches!(world.formulation, Formulation::Complementarity)
            && !matches!(self.backend, Backend::Cpu)
        {
            return Err(StepError::FormulationBackend {
                backend: self.backend.describe(),
                formulation: world.formulation.name(),
            });
        }
        Ok(())
    }

    /// One step of the complementarity formulation
    /// ([`crate::formulation::complementarity`]).
    fn complementarity(&mut self, world: &mut World) -> Result<StepReport, StepError> {
        let problem = rigid::pose(world, &mut self.timers)?;
        rigid::warm_start(world, &problem, &mut self.gamma, &mut self.timers);
        let timers = &mut self.timers;
        let (gamma, gamma32) = (&mut self.gamma, &mut self.gamma32);
        let (ws, ws32) = (&mut self.ws, &mut self.ws32);
        let backend = &mut self.backend;
        let settings = &world.solver;
        let step_index = world.step_index;
        let stats = timers.time("solve", || -> Result<_, StepError> {
            if let Backend::Cpu = backend {
                let mut op = BodyDelassus::new(&problem);
                return Ok(solver::solve(&mut op, gamma, settings, ws));
            }
            rigid::check_f32(world, &problem, &backend.describe())?;
            let mut packed = rigid::pack_f32(&problem, gamma, gamma32);
            let stats = match backend {
                Backend::Gpu(g) => g
                    .solver
                    .solve(&g.ctx, &mut packed, gamma32, settings)
                    .map_err(|error| StepError::Gpu {
                        step: step_index,
                        error,
                    })?,
                Backend::Batched(_) => {
                    return Err(StepError::Gpu {
                        step: step_index,
                        error: GpuError::Batch(
                            "a batched world is stepped by its batch, not alone".into(),
                        ),
                    })
                }
                _ => jacobi_f32::solve(&mut packed, &problem.csr_slots, gamma32, settings, ws32),
            };
            rigid::unpack_f32(gamma32, gamma);
            Ok(stats)
        })?;
        self.finish(world, problem, stats)
    }

    /// The first half of a step of a world in a GPU batch
    /// ([`crate::run::batch`]): emit, pose, warm start and pack, as the
    /// world alone would; the packed problem waits in the stepper for the
    /// batch's solve ([`Self::batch_entry`]) and [`Self::end_batched`].
    pub fn begin_batched(&mut self, world: &mut World) -> Result<(), StepError> {
        self.pending = None;
        // `emit` refuses other formulations on any backend but the f64 CPU.
        self.emit(world)?;
        self.records_valid = false;
        let problem = rigid::pose(world, &mut self.timers)?;
        rigid::warm_start(world, &problem, &mut self.gamma, &mut self.timers);
        let (gamma, gamma32) = (&self.gamma, &mut self.gamma32);
        let packed = self.timers.time("solve", || {
            rigid::check_f32(world, &problem, &self.backend.describe())?;
            Ok::<_, StepError>(rigid::pack_f32(&problem, gamma, gamma32))
        })?;
        self.pending = Some((problem, packed));
        Ok(())
    }

    /// This world's part of the batch's solve, after [`Self::begin_batched`].
    pub fn batch_entry<'a>(&'a mut self, world: &'a World) -> Option<BatchEntry<'a>> {
        let (_, packed) = self.pending.as_mut()?;
        Some(BatchEntry {
            problem: packed,
            gamma: &mut self.gamma32,
            settings: &world.solver,
        })
    }

    /// The second half of a batched step: the batch's result for this
    /// world (or its error), `seconds` of the batch's solve added to this
    /// world's `solve` stage; then unpack, keep the impulses and integrate,
    /// as the world alone would.
    pub fn end_batched(
        &mut self,
        world: &mut World,
        result: Result<SolveStats, GpuError>,
        seconds: f64,
    ) -> Result<StepReport, StepError> {
        let Some((problem, _packed)) = self.pending.take() else {
            return Err(StepError::Gpu {
                step: world.step_index,
                error: GpuError::Batch("end_batched without begin_batched".into()),
            });
        };
        *self.timers.total.entry("solve").or_default() += Duration::from_secs_f64(seconds);
        let stats = result.map_err(|error| StepError::Gpu {
            step: world.step_index,
            error,
        })?;
        let (gamma, gamma32) = (&mut self.gamma, &self.gamma32);
        self.timers
            .time("solve", || rigid::unpack_f32(gamma32, gamma));
        let report = self.finish(world, problem, stats)?;
        self.last_contacts = report.contacts;
        Ok(report)
    }

    /// One step of the pyramid LCP of Peiret et al. 2017
    /// ([`crate::formulation::pyramid`]): the same contacts and problem as
    /// the complementarity formulation, then its `lcp` stage (pose the
    /// reduced LCP from the problem and each contact's previous impulse and
    /// slip, solve it by Lemke's method) in place of warm_start and solve.
    fn pyramid(
        &mut self,
        world: &mut World,
        settings: &PyramidSettings,
    ) -> Result<StepReport, StepError> {
        let problem = rigid::pose(world, &mut self.timers)?;
        let step = world.step_index + 1;
        let (impulses, lcp_size, pivots) = self
            .timers
            .time("lcp", || pyramid::solve_step(&problem, world, settings))
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
            fallback_seconds: 0.0,
            timed_out: false,
        };
        log::trace!("step {step}: pyramid LCP of {lcp_size} unknowns, {pivots} pivots");
        self.finish(world, problem, stats)
    }

    /// The end of a step of a rigid formulation
    /// ([`rigid::finish`]); the problem is kept as the last one.
    fn finish(
        &mut self,
        world: &mut World,
        problem: ContactProblem,
        stats: SolveStats,
    ) -> Result<StepReport, StepError> {
        let gamma = &self.gamma;
        self.last_wall_loads = self.timers.time("wall_loads", || {
            wall_loads(
                &problem,
                gamma,
                &world.bodies,
                &world.boundaries,
                world.time_step,
                world.time,
            )
        });
        let report = rigid::finish(
            world,
            &problem,
            &self.gamma,
            stats,
            &mut self.finish_bufs,
            &mut self.timers,
        )?;
        self.last_problem = problem;
        self.records_valid = true;
        Ok(report)
    }
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
