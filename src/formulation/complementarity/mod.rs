//! The complementarity formulation's stages (Tasora & Anitescu 2013, §3–4):
//! rigid contact as a cone complementarity problem, one solve per step.
//!
//! ```text
//! forces ─► collide ─► assemble ─► warm_start ─► solve ─► store_warm ─► integrate
//! └──────────── pose ─────────────┘                       └──────── finish ────────┘
//! ```
//!
//! With impulses γ = h·γ̂ the step is `M v⁺ = M v + h f + D γ` (eq. 44),
//! and γ solves the cone complementarity problem
//! `γ ∈ Y, Nγ + r ∈ −Y°, γ ⊥ Nγ + r`, `N = Dᵀ M⁻¹ D`, `r = Dᵀ M⁻¹ k̃ + b`
//! (eqs. 38–40), Y the product of the 6-D cones
//! `{μγ_n ≥ ‖γ_t‖, ρ γ_n ≥ ‖τ_r‖, σ γ_n ≥ |τ_n|}` (eq. 31).
//!
//! | stage | what | where |
//! |---|---|---|
//! | `forces` | v_free = v + h M⁻¹ f (k̃ = M v + h f, eq. 37); gyroscopic step of shapes | [`crate::integrate`] |
//! | `collide` | contact geometry (grid broadphase, narrowphase) | [`crate::collision`] |
//! | `assemble` | the [`ContactProblem`]: frames, arms, cones, bias, CSR | [`crate::problem`] |
//! | `warm_start` | γ₀: the previous step's impulses of persistent pairs in the new frames | [`warm_start`] |
//! | `solve` | γ on the f64 CPU, its f32 mirror or the GPU (alone or in a batch of worlds) | [`crate::solver`], [`crate::gpu`] |
//! | `store_warm` | this step's impulses in world coordinates, for the next | [`finish`] |
//! | `integrate` | v⁺ = v_free + M⁻¹ D γ in f64 from the final γ (on every backend), then positions and orientations | [`finish`] |
//!
//! The step runs as prepare → solve → finish ([`RigidStep`], in `step.rs`):
//! the stages before and after the solve are each world's own, and the
//! solve is the world's alone on its [`Backend`] (in `backend.rs`) or, for
//! a batch of worlds on one GPU ([`crate::run::batch`]), the batch's one
//! solve between the same prepare and finish — so a batched world's step
//! is the world's step.

mod backend;
mod step;

pub use backend::{Backend, GpuState};
pub use step::RigidStep;

use glam::DVec3;

use crate::boundary::Boundary;
use crate::collision;
use crate::formulation::stage::{NonFiniteError, Stage, StageTimers, StepError, StepReport};
use crate::integrate;
use crate::model::Model;
use crate::problem::{ContactProblem, Vec6};
use crate::solver::packed::{pack, PackedProblem};
use crate::solver::{SolveStats, SolverMethod};
use crate::state::{State, WarmImpulse};

/// The first stages of a rigid formulation's step: free velocities,
/// contacts (with the boundaries `walls`, posed where `state` has them),
/// and the contact problem.
pub fn pose(
    model: &Model,
    state: &State,
    walls: &[Boundary],
    timers: &mut StageTimers,
) -> Result<ContactProblem, StepError> {
    let h = model.time_step;
    let (v_free, w_free) = timers.time(Stage::Forces, || {
        integrate::free_velocities(&state.bodies, model.gravity, h)
    });
    let envelope = model.envelope(&state.bodies);
    let contacts = timers
        .time(Stage::Collide, || {
            collision::detect(&state.bodies, walls, envelope, state.time)
        })
        .map_err(|error| StepError::Crowded {
            step: state.step_index + 1,
            error,
        })?;
    Ok(timers.time(Stage::Assemble, || {
        let mut p = ContactProblem::assemble(
            &state.bodies,
            &contacts,
            &model.materials,
            v_free,
            w_free,
            h,
            model.contact.max_recovery_speed,
        );
        p.law = model.contact.friction_law;
        p
    }))
}

/// The `warm_start` stage: γ₀ for each contact of `problem`, the previous
/// step's impulse of the same pair and point turned into the new frame
/// (zero for new contacts, or when the scene turns warm starts off).
pub fn warm_start(
    model: &Model,
    state: &State,
    problem: &ContactProblem,
    gamma: &mut Vec<Vec6>,
    timers: &mut StageTimers,
) {
    timers.time(Stage::WarmStart, || {
        gamma.clear();
        gamma.extend((0..problem.n_contacts()).map(|i| {
            if !model.solver.warm_start {
                return [0.0; 6];
            }
            match state.warm.get(&problem.key[i]) {
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
}

/// What the f32 solvers (the GPU's and its CPU mirror) cannot run, checked
/// before packing: other methods, a fallback, or a spinning boundary's
/// torque bias (which the packed records do not carry; dropping it would
/// silently remove the wall's spin from rolling and spinning friction).
pub fn check_f32(
    model: &Model,
    state: &State,
    problem: &ContactProblem,
    backend: &str,
) -> Result<(), StepError> {
    let settings = &model.solver;
    if !matches!(settings.method, SolverMethod::Jacobi | SolverMethod::Apgd) {
        return Err(StepError::Unsupported {
            backend: backend.to_string(),
            method: settings.method,
        });
    }
    if let Some(method) = settings.fallback {
        return Err(StepError::UnsupportedFallback {
            backend: backend.to_string(),
            method,
        });
    }
    if problem.has_torque_bias() {
        return Err(StepError::RotatingBoundary {
            step: state.step_index,
            backend: backend.to_string(),
        });
    }
    Ok(())
}

/// Packs the problem and its warm start for the f32 solvers (the body
/// records get v_free + M⁻¹Dγ₀, the impulses f32).
pub fn pack_f32(
    problem: &ContactProblem,
    gamma: &[Vec6],
    gamma32: &mut Vec<[f32; 6]>,
) -> PackedProblem {
    gamma32.clear();
    gamma32.extend(gamma.iter().map(|g| g.map(|x| x as f32)));
    pack(problem, gamma)
}

/// The f32 solve's impulses widened (exactly) into `gamma`. The body
/// velocities the f32 solver left in its records are not used: they were
/// built up one f32 increment at a time, and every increment below half an
/// ulp of |v| was lost on the way (the loss grows with the iteration
/// count), so they would not be the motion the impulses cause. [`finish`]
/// integrates from v_free + M⁻¹ D γ evaluated once, in f64, from these
/// impulses, so that the contact loads a run reports balance its motion to
/// f64 rounding on every backend.
pub fn unpack_f32(gamma32: &[[f32; 6]], gamma: &mut [Vec6]) {
    for (g, g32) in gamma.iter_mut().zip(gamma32) {
        *g = g32.map(|x| x as f64);
    }
}

/// Buffers of [`finish`]: the new velocities, checked before they replace
/// the bodies'.
#[derive(Debug, Default)]
pub struct FinishBuffers {
    new_vel: Vec<DVec3>,
    new_omega: Vec<DVec3>,
}

/// The end of a step of a rigid formulation: keep this step's impulses
/// for the next (warm starts, histories), then integrate with the new
/// velocities v⁺ = v_free + M⁻¹ D γ, evaluated in f64 from `gamma` whatever
/// backend solved for it. On a [`NonFiniteError`] the bodies keep the last
/// good state.
pub fn finish(
    model: &Model,
    state: &mut State,
    problem: &ContactProblem,
    gamma: &[Vec6],
    stats: SolveStats,
    buffers: &mut FinishBuffers,
    timers: &mut StageTimers,
) -> Result<StepReport, StepError> {
    let h = model.time_step;
    timers.time(Stage::StoreWarm, || {
        state.warm.clear();
        for (i, g) in gamma.iter().enumerate() {
            let [n, u, w] = problem.frame[i];
            state.warm.insert(
                problem.key[i],
                WarmImpulse {
                    force: n * g[0] + u * g[1] + w * g[2],
                    torque: n * g[3] + u * g[4] + w * g[5],
                },
            );
        }
    });
    let step = state.step_index;
    let time = state.time;
    let FinishBuffers { new_vel, new_omega } = buffers;
    timers.time(Stage::Integrate, || -> Result<(), NonFiniteError> {
        let b = &mut state.bodies;
        // Compute and check the new velocities aside, so that a failing
        // step leaves the bodies at the last good state.
        // velocities_into writes every entry.
        new_vel.resize(b.len(), DVec3::ZERO);
        new_omega.resize(b.len(), DVec3::ZERO);
        problem.velocities_into(gamma, new_vel, new_omega);
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
        integrate::boundaries(
            &model.boundaries,
            &mut state.boundary_origins,
            &mut state.boundary_rotations,
            time,
            h,
        );
        Ok(())
    })?;
    state.time += h;
    state.step_index += 1;
    Ok(StepReport {
        contacts: problem.n_contacts(),
        solve: stats,
        substeps: 1,
    })
}
