//! One time step as a sequence of named stages, each timed. The inlets
//! emit, then the world's formulation takes the step with one `match` in
//! [`Stepper::step`], each formulation in its own module
//! ([`crate::formulation`]): the complementarity formulation's step is
//! prepare → solve → finish ([`crate::formulation::complementarity`]'s
//! `RigidStep`; its stages below), the penalty formulation's sub-steps
//! (collide ─► forces ─► integrate) are in [`crate::formulation::penalty`],
//! and the pyramid LCP shares the complementarity formulation's first and
//! last stages and puts its own in the middle
//! ([`crate::formulation::pyramid`]):
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

use crate::boundary::Boundary;
use crate::contact_forces::ContactForces;
use crate::formulation::complementarity::RigidStep;
use crate::formulation::penalty::{self, PenaltyWorkspace};
use crate::formulation::pyramid;
use crate::formulation::Formulation;
use crate::gpu::jacobi::BatchEntry;
use crate::gpu::GpuError;
use crate::model::Model;
use crate::problem::{ContactProblem, Vec6};
use crate::solver::SolveStats;
use crate::state::State;
use crate::wall_loads::WallLoad;
use crate::world::World;

pub use crate::formulation::complementarity::{Backend, GpuState};
pub use crate::formulation::stage::{NonFiniteError, Stage, StageTimers, StepError, StepReport};

/// Advances worlds one step at a time, keeping buffers and timers between steps.
pub struct Stepper {
    /// Time per stage, summed over all steps.
    pub timers: StageTimers,
    /// The solver backend.
    pub backend: Backend,
    /// The rigid formulations' steps (complementarity, pyramid LCP).
    rigid: RigidStep,
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
    /// The model's boundaries at the state's poses, as the stages see them:
    /// posed again at the start of every step and wherever a stage moves
    /// them ([`State::pose_boundaries`]).
    walls: Vec<Boundary>,
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
            rigid: RigidStep::default(),
            last_wall_loads: Vec::new(),
            serial_below: SERIAL_BELOW,
            pools: [None, None],
            last_contacts: 0,
            penalty: PenaltyWorkspace::default(),
            walls: Vec::new(),
        }
    }

    /// How many times the penalty formulation's neighbour list was built.
    pub fn penalty_rebuilds(&self) -> u64 {
        self.penalty.neighbours.rebuilds
    }

    /// The impulses of the last step's contacts, in their contact frames.
    pub fn last_impulses(&self) -> &[Vec6] {
        self.rigid.impulses()
    }

    /// The last step's contact problem (empty after a penalty step).
    pub fn last_problem(&self) -> &ContactProblem {
        &self.rigid.last_problem
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
        if let Formulation::Penalty(settings) = &world.model.formulation {
            return penalty::records::contact_forces(&world.model, &world.state, settings).ok();
        }
        self.rigid.contact_forces(&world.model, &world.state)
    }

    /// Advances the world by one time step ([`Self::advance`]).
    pub fn step(&mut self, world: &mut World) -> Result<StepReport, StepError> {
        self.advance(&world.model, &mut world.state)
    }

    /// Advances `state` by one time step of `model`: the step reads the
    /// model and writes the state. On a [`NonFiniteError`] the bodies keep
    /// the positions and velocities of the last completed step (the
    /// non-finite velocities are not stored). Small steps run on one thread
    /// (module docs).
    pub fn advance(&mut self, model: &Model, state: &mut State) -> Result<StepReport, StepError> {
        if rayon::current_thread_index().is_some() {
            // Already on a pool's thread (a sweep's job, a test's pool):
            // its passes run there without hand-offs.
            return self.step_here(model, state);
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
                    Err(_) => return self.step_here(model, state),
                }
            }
        };
        let out = pool.install(|| self.step_here(model, state));
        self.pools[slot] = Some(pool);
        if let Ok(r) = &out {
            self.last_contacts = r.contacts;
        }
        out
    }

    /// One step on the calling thread's rayon pool: the boundaries posed
    /// where the state has them, the inlets emit, then the step goes to
    /// the model's formulation ([`crate::formulation`]).
    fn step_here(&mut self, model: &Model, state: &mut State) -> Result<StepReport, StepError> {
        self.emit(model, state)?;
        self.rigid.begin();
        let walls = &mut self.walls;
        match &model.formulation {
            Formulation::Complementarity => self.rigid.step(
                model,
                state,
                walls,
                &mut self.backend,
                &mut self.last_wall_loads,
                &mut self.timers,
            ),
            Formulation::Penalty(settings) => {
                let (h, t0) = (model.time_step, state.time);
                let report = penalty::step(
                    model,
                    state,
                    walls,
                    settings,
                    &mut self.penalty,
                    &mut self.timers,
                )?;
                self.last_wall_loads = penalty::wall_loads(&self.penalty, walls, h, t0);
                Ok(report)
            }
            Formulation::PyramidLcp(settings) => pyramid::step(
                model,
                state,
                walls,
                settings,
                &mut self.rigid,
                &mut self.last_wall_loads,
                &mut self.timers,
            ),
        }
    }

    /// The boundaries posed where `state` has them, the `emit` stage
    /// (inlets), and the check that the backend runs the model's
    /// formulation (only the f64 CPU runs those other than
    /// complementarity).
    fn emit(&mut self, model: &Model, state: &mut State) -> Result<(), StepError> {
        state.pose_boundaries(model, &mut self.walls);
        let h = model.time_step;
        if !model.inlets.is_empty() {
            let envelope = model.envelope(&state.bodies);
            let t_end = state.time + h;
            let walls = &self.walls;
            self.timers.time(Stage::Emit, || {
                crate::inlet::emit_all(
                    &model.inlets,
                    &mut state.inlets,
                    &mut state.bodies,
                    walls,
                    t_end,
                    envelope,
                )
            });
        }
        if !matches!(model.formulation, Formulation::Complementarity)
            && !matches!(self.backend, Backend::Cpu)
        {
            return Err(StepError::FormulationBackend {
                backend: self.backend.describe(),
                formulation: model.formulation.name(),
            });
        }
        Ok(())
    }

    /// The first half of a step of a world in a GPU batch
    /// ([`crate::run::batch`]): emit, then the complementarity step's
    /// prepare, as the world alone would; the prepared step waits in the
    /// stepper for the batch's solve ([`Self::batch_entry`]) and
    /// [`Self::end_batched`].
    pub fn begin_batched(&mut self, world: &mut World) -> Result<(), StepError> {
        let (model, state) = (&world.model, &mut world.state);
        // `emit` refuses other formulations on any backend but the f64 CPU.
        self.emit(model, state)?;
        self.rigid.begin();
        self.rigid
            .prepare(model, state, &self.walls, &self.backend, &mut self.timers)
    }

    /// This world's part of the batch's solve, after [`Self::begin_batched`].
    pub fn batch_entry<'a>(&'a mut self, world: &'a World) -> Option<BatchEntry<'a>> {
        self.rigid.batch_entry(&world.model)
    }

    /// The second half of a batched step: the batch's result for this
    /// world (or its error), `seconds` of the batch's solve added to this
    /// world's `solve` stage; then the complementarity step's finish, as
    /// the world alone would.
    pub fn end_batched(
        &mut self,
        world: &mut World,
        result: Result<SolveStats, GpuError>,
        seconds: f64,
    ) -> Result<StepReport, StepError> {
        self.timers
            .add(Stage::Solve, Duration::from_secs_f64(seconds));
        let (model, state) = (&world.model, &mut world.state);
        let step = state.step_index;
        let solved = result.map_err(|error| StepError::Gpu { step, error });
        let report = self.rigid.finish(
            model,
            state,
            &self.walls,
            solved,
            &mut self.last_wall_loads,
            &mut self.timers,
        )?;
        self.last_contacts = report.contacts;
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
