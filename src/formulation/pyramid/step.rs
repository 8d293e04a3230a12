//! A step of the pyramid LCP of Peiret et al. 2017: the same contacts and
//! problem as the complementarity formulation ([`pose`]), then its `lcp`
//! stage in place of warm_start and solve — each contact's history from
//! the world's state (its previous impulse, kept with the warm starts, and
//! its slip), the reduced LCP posed and solved by Lemke's method
//! ([`super::PyramidLcp`]) — then the complementarity formulation's finish
//! ([`RigidStep::finish_with`]).
//!
//! ```text
//! forces ─► collide ─► assemble ─► lcp (pose, Lemke) ─► wall_loads ─► store_warm ─► integrate
//! ```

use std::collections::HashMap;

use super::{LcpHistory, PyramidError, PyramidLcp, PyramidSettings};
use crate::bodies::Bodies;
use crate::boundary::Boundary;
use crate::formulation::complementarity::{pose, RigidStep};
use crate::formulation::stage::{Stage, StageTimers, StepError, StepReport};
use crate::model::Model;
use crate::problem::ContactProblem;
use crate::solver::SolveStats;
use crate::state::{State, WarmImpulse};
use crate::wall_loads::WallLoad;

/// Each contact's history at the start of a step: its previous impulse
/// (kept in `warm` by pair key, as warm starts are) seen in this step's
/// frame, and its slip at the bodies' current velocities.
pub fn histories(
    problem: &ContactProblem,
    warm: &HashMap<u64, WarmImpulse>,
    bodies: &Bodies,
) -> Vec<LcpHistory> {
    (0..problem.n_contacts())
        .map(|i| {
            let [n, u, w] = problem.frame[i];
            let impulse = warm.get(&problem.key[i]).map_or([0.0; 3], |p| {
                [p.force.dot(n), p.force.dot(u), p.force.dot(w)]
            });
            let t = problem.twist(i, &bodies.vel, &bodies.omega);
            LcpHistory {
                impulse,
                slip: [t[1], t[2]],
            }
        })
        .collect()
}

/// The `lcp` stage of a step of `state` whose contacts `problem` poses:
/// the histories, the reduced LCP of Peiret et al. 2017 and its solution
/// by Lemke's method. Returns each contact's impulse (p_n, p_u, p_w), the
/// LCP's size and the pivots taken.
fn solve_step(
    problem: &ContactProblem,
    model: &Model,
    state: &State,
    settings: &PyramidSettings,
) -> Result<(Vec<[f64; 3]>, usize, usize), PyramidError> {
    let history = histories(problem, &state.warm, &state.bodies);
    let lcp = PyramidLcp::build(
        problem,
        &history,
        settings,
        model.time_step,
        model.contact.max_recovery_speed,
    )?;
    let (p, pivots) = lcp.solve()?;
    Ok((p, lcp.size(), pivots))
}

/// One step of `state` under the pyramid LCP (module docs), `walls` the
/// boundaries posed where `state` has them; `loads` gets each boundary's
/// load over the step.
pub fn step(
    model: &Model,
    state: &mut State,
    walls: &[Boundary],
    settings: &PyramidSettings,
    rigid: &mut RigidStep,
    loads: &mut Vec<WallLoad>,
    timers: &mut StageTimers,
) -> Result<StepReport, StepError> {
    let problem = pose(model, state, walls, timers)?;
    let step = state.step_index + 1;
    let (impulses, lcp_size, pivots) = timers
        .time(Stage::Lcp, || solve_step(&problem, model, state, settings))
        .map_err(|error| StepError::Pyramid { step, error })?;
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
    let sliding = impulses.iter().map(|p| [p[0], p[1], p[2], 0.0, 0.0, 0.0]);
    rigid.finish_with(model, state, walls, problem, sliding, stats, loads, timers)
}
