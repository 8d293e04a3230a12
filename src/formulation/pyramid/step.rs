//! The pyramid LCP's stage of a step (`lcp` in [`crate::step`]): each
//! contact's history from the world's state (its previous impulse, kept
//! with the warm starts, and its slip), then the reduced LCP posed and
//! solved by Lemke's method ([`super::PyramidLcp`]).

use std::collections::HashMap;

use super::{ContactHistory, PyramidError, PyramidLcp, PyramidSettings};
use crate::bodies::Bodies;
use crate::problem::ContactProblem;
use crate::world::{WarmImpulse, World};

/// Each contact's history at the start of a step: its previous impulse
/// (kept in `warm` by pair key, as warm starts are) seen in this step's
/// frame, and its slip at the bodies' current velocities.
pub fn histories(
    problem: &ContactProblem,
    warm: &HashMap<u64, WarmImpulse>,
    bodies: &Bodies,
) -> Vec<ContactHistory> {
    (0..problem.n_contacts())
        .map(|i| {
            let [n, u, w] = problem.frame[i];
            let impulse = warm.get(&problem.key[i]).map_or([0.0; 3], |p| {
                [p.force.dot(n), p.force.dot(u), p.force.dot(w)]
            });
            let t = problem.twist(i, &bodies.vel, &bodies.omega);
            ContactHistory {
                impulse,
                slip: [t[1], t[2]],
            }
        })
        .collect()
}

/// The `lcp` stage of a step of `world` whose contacts `problem` poses:
/// the histories, the reduced LCP of Peiret et al. 2017 and its solution
/// by Lemke's method. Returns each contact's impulse (p_n, p_u, p_w), the
/// LCP's size and the pivots taken.
pub fn solve_step(
    problem: &ContactProblem,
    world: &World,
    settings: &PyramidSettings,
) -> Result<(Vec<[f64; 3]>, usize, usize), PyramidError> {
    let history = histories(problem, &world.warm, &world.bodies);
    let lcp = PyramidLcp::build(
        problem,
        &history,
        settings,
        world.time_step,
        world.contact.max_recovery_speed,
    )?;
    let (p, pivots) = lcp.solve()?;
    Ok((p, lcp.size(), pivots))
}
