//! A step of a rigid formulation as three parts — prepare, solve, finish —
//! and what it keeps between them and after ([`RigidStep`]).
//!
//! ```text
//! prepare: forces ─► collide ─► assemble ─► warm_start (─► pack, f32)
//! solve:   the world alone on its backend, or its batch's one solve
//! finish:  (unpack, f32 ─►) wall_loads ─► store_warm ─► integrate
//! ```
//!
//! A world alone runs the three in a row ([`RigidStep::step`]); a world of
//! a batch on one GPU ([`crate::run::batch`]) runs the same prepare and
//! finish around the batch's solve, and on the GPU a world alone is itself
//! a batch of one ([`crate::gpu::jacobi::GpuJacobi::solve`]): there is one
//! copy of each half. The pyramid LCP ([`crate::formulation::pyramid`])
//! shares the first stages ([`super::pose`]) and the finish
//! ([`RigidStep::finish_with`]).

use super::backend::Backend;
use super::{check_f32, finish, pack_f32, pose, unpack_f32, warm_start, FinishBuffers};
use crate::boundary::Boundary;
use crate::contact_forces::ContactForces;
use crate::formulation::stage::{Stage, StageTimers, StepError, StepReport};
use crate::gpu::jacobi::BatchEntry;
use crate::gpu::GpuError;
use crate::model::Model;
use crate::problem::{BodyDelassus, ContactProblem, Vec6};
use crate::solver::jacobi_f32::{self, JacobiF32Workspace};
use crate::solver::packed::PackedProblem;
use crate::solver::{self, SolveStats, Workspace};
use crate::state::State;
use crate::wall_loads::{wall_loads, WallLoad};

/// A prepared step waiting for its solve: the contact problem and, for the
/// f32 solvers, its packed records.
struct Posed {
    problem: ContactProblem,
    packed: Option<PackedProblem>,
}

/// What a rigid formulation's steps keep: the impulses (f64, and the f32
/// solvers' own), the solvers' workspaces, the prepared step waiting for
/// its solve, and the last finished step's problem.
pub struct RigidStep {
    gamma: Vec<Vec6>,
    gamma32: Vec<[f32; 6]>,
    ws: Workspace,
    ws32: JacobiF32Workspace,
    /// The new velocities of a step, checked before they replace the bodies'.
    finish_bufs: FinishBuffers,
    /// Between [`Self::prepare`] and [`Self::finish`].
    posed: Option<Posed>,
    /// The last finished step's contact problem (for analysis and tests).
    pub last_problem: ContactProblem,
    /// Whether `gamma` holds the impulses of `last_problem` (at first both
    /// empty): false from the moment a step starts until it has finished,
    /// so that after a failed step (rolled back, or stopped in its solve)
    /// the records are not made of one step's problem and another's
    /// impulses.
    records_valid: bool,
}

impl Default for RigidStep {
    fn default() -> Self {
        RigidStep {
            gamma: Vec::new(),
            gamma32: Vec::new(),
            ws: Workspace::default(),
            ws32: JacobiF32Workspace::default(),
            finish_bufs: FinishBuffers::default(),
            posed: None,
            last_problem: ContactProblem::default(),
            // No step yet: no impulses of no problem.
            records_valid: true,
        }
    }
}

/// The error of a finish with no prepared step.
fn not_prepared(step: u64) -> StepError {
    StepError::Gpu {
        step,
        error: GpuError::Batch("end_batched without begin_batched".into()),
    }
}

impl RigidStep {
    /// The impulses of the last step's contacts, in their contact frames.
    pub fn impulses(&self) -> &[Vec6] {
        &self.gamma
    }

    /// A step starts: until it finishes, the impulses are not the last
    /// problem's.
    pub fn begin(&mut self) {
        self.records_valid = false;
    }

    /// The loads of the last step's contacts ([`ContactForces`]) for
    /// `state` as that step left it; `None` after a step that failed.
    pub fn contact_forces(&self, model: &Model, state: &State) -> Option<ContactForces> {
        let p = &self.last_problem;
        (self.records_valid && self.gamma.len() == p.n_contacts())
            .then(|| ContactForces::from_impulses(p, &self.gamma, &state.bodies, model.time_step))
    }

    /// One step of `state` alone on `backend`: prepare, solve, finish.
    /// `walls` are the boundaries posed where `state` has them; `loads`
    /// gets each boundary's load over the step.
    pub fn step(
        &mut self,
        model: &Model,
        state: &mut State,
        walls: &[Boundary],
        backend: &mut Backend,
        loads: &mut Vec<WallLoad>,
        timers: &mut StageTimers,
    ) -> Result<StepReport, StepError> {
        self.prepare(model, state, walls, backend, timers)?;
        let solved = self.solve(model, state, backend, timers);
        self.finish(model, state, walls, solved, loads, timers)
    }

    /// The stages before the solve: pose the problem, warm-start it, and
    /// for the f32 solvers (`backend` computes in f32) check what they
    /// cannot run and pack the records. The prepared step waits for its
    /// solve.
    pub fn prepare(
        &mut self,
        model: &Model,
        state: &State,
        walls: &[Boundary],
        backend: &Backend,
        timers: &mut StageTimers,
    ) -> Result<(), StepError> {
        self.posed = None;
        let problem = pose(model, state, walls, timers)?;
        warm_start(model, state, &problem, &mut self.gamma, timers);
        let packed = if backend.is_f32() {
            let (gamma, gamma32) = (&self.gamma, &mut self.gamma32);
            Some(timers.time(Stage::Solve, || {
                check_f32(model, state, &problem, &backend.describe())?;
                Ok::<_, StepError>(pack_f32(&problem, gamma, gamma32))
            })?)
        } else {
            None
        };
        self.posed = Some(Posed { problem, packed });
        Ok(())
    }

    /// The `solve` stage of the prepared step of `state` alone on
    /// `backend` (a world of a batch is solved by its batch instead).
    pub fn solve(
        &mut self,
        model: &Model,
        state: &State,
        backend: &mut Backend,
        timers: &mut StageTimers,
    ) -> Result<SolveStats, StepError> {
        let step = state.step_index;
        let posed = self.posed.as_mut().ok_or_else(|| not_prepared(step))?;
        let settings = &model.solver;
        let (gamma, gamma32) = (&mut self.gamma, &mut self.gamma32);
        let (ws, ws32) = (&mut self.ws, &mut self.ws32);
        timers.time(Stage::Solve, || match (backend, &mut posed.packed) {
            (Backend::Cpu, _) => {
                let mut op = BodyDelassus::new(&posed.problem);
                Ok(solver::solve(&mut op, gamma, settings, ws))
            }
            (Backend::CpuF32, Some(packed)) => Ok(jacobi_f32::solve(
                packed,
                &posed.problem.csr_slots,
                gamma32,
                settings,
                ws32,
            )),
            (Backend::Gpu(g), Some(packed)) => g
                .solver
                .solve(&g.ctx, packed, gamma32, settings)
                .map_err(|error| StepError::Gpu { step, error }),
            (Backend::Batched(_), _) => Err(StepError::Gpu {
                step,
                error: GpuError::Batch("a batched world is stepped by its batch, not alone".into()),
            }),
            (_, None) => Err(not_prepared(step)),
        })
    }

    /// This world's part of its batch's solve, after [`Self::prepare`].
    pub fn batch_entry<'a>(&'a mut self, model: &'a Model) -> Option<BatchEntry<'a>> {
        let packed = self.posed.as_mut()?.packed.as_mut()?;
        Some(BatchEntry {
            problem: packed,
            gamma: &mut self.gamma32,
            settings: &model.solver,
        })
    }

    /// The stages after the solve of the prepared step (`solved`: the
    /// solve's result, its own or its batch's): the f32 impulses widened,
    /// then as [`Self::finish_with`].
    pub fn finish(
        &mut self,
        model: &Model,
        state: &mut State,
        walls: &[Boundary],
        solved: Result<SolveStats, StepError>,
        loads: &mut Vec<WallLoad>,
        timers: &mut StageTimers,
    ) -> Result<StepReport, StepError> {
        let Posed { problem, packed } = self
            .posed
            .take()
            .ok_or_else(|| not_prepared(state.step_index))?;
        let stats = solved?;
        if packed.is_some() {
            let (gamma, gamma32) = (&mut self.gamma, &self.gamma32);
            timers.time(Stage::Solve, || unpack_f32(gamma32, gamma));
        }
        self.end(model, state, walls, problem, stats, loads, timers)
    }

    /// The end of a step whose impulses another stage found (the pyramid
    /// LCP's `lcp`): `impulses` in `problem`'s contact frames, then as
    /// [`Self::finish`].
    #[allow(clippy::too_many_arguments)]
    pub fn finish_with(
        &mut self,
        model: &Model,
        state: &mut State,
        walls: &[Boundary],
        problem: ContactProblem,
        impulses: impl Iterator<Item = Vec6>,
        stats: SolveStats,
        loads: &mut Vec<WallLoad>,
        timers: &mut StageTimers,
    ) -> Result<StepReport, StepError> {
        self.posed = None;
        self.gamma.clear();
        self.gamma.extend(impulses);
        self.end(model, state, walls, problem, stats, loads, timers)
    }

    /// `wall_loads`, then store the impulses and integrate
    /// ([`super::finish`]); the problem is kept as the last one.
    #[allow(clippy::too_many_arguments)]
    fn end(
        &mut self,
        model: &Model,
        state: &mut State,
        walls: &[Boundary],
        problem: ContactProblem,
        stats: SolveStats,
        loads: &mut Vec<WallLoad>,
        timers: &mut StageTimers,
    ) -> Result<StepReport, StepError> {
        let gamma = &self.gamma;
        *loads = timers.time(Stage::WallLoads, || {
            wall_loads(
                &problem,
                gamma,
                &state.bodies,
                walls,
                model.time_step,
                state.time,
            )
        });
        let report = finish(
            model,
            state,
            &problem,
            &self.gamma,
            stats,
            &mut self.finish_bufs,
            timers,
        )?;
        self.last_problem = problem;
        self.records_valid = true;
        Ok(report)
    }
}
