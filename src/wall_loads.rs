//! Boundary loads: the force and torque the bodies exert on each boundary
//! in a step, and the power its motion takes, from the contact impulses of
//! a rigid formulation (complementarity or the pyramid LCP; the penalty
//! formulation sums its sub-steps' forces the same way,
//! `formulation::penalty::wall_loads`). What `walls.csv` holds: a floor's
//! load, a hopper wall's, a drum's torque and power draw.
//!
//! Contact i between body A and boundary B carries the impulse
//! (F_i, T_i) = (γ_n n + γ_u u + γ_w w, τ_n n + τ_u u + τ_w w) in world
//! coordinates ([`ContactProblem::world_impulse`]); end A receives
//! −(F_i, s_A × F_i + T_i) and end B +(F_i, s_B × F_i + T_i)
//! (Tasora & Anitescu 2013, eq. 44, the sign of
//! [`ContactProblem::velocities_from_world`]). Over a step of length h a
//! boundary b therefore takes the mean force and the mean torque about its
//! origin o_b ([`Boundary::origin`]: a plane's `point`, the centre of a
//! box, plate or cylinder, a mesh's placement)
//!
//! ```text
//! F_b = (1/h) Σ_{i ∈ b} F_i,
//! T_b = (1/h) Σ_{i ∈ b} ((p_i − o_b) × F_i + T_i),     p_i = x_A + s_A,
//! ```
//!
//! impulses over the step's length: a complementarity step's impulses are
//! the step's integrals of the contact forces, so these are the mean loads
//! over the step, not the loads at an instant. A boundary moving at
//! velocity v_b and turning at ω_b about o_b must be driven against them
//! with the power
//!
//! ```text
//! P_b = −(F_b · v_b + T_b · ω_b)
//! ```
//!
//! (positive when the drive does work on the bodies: a drum lifting its
//! bed). The loads are as exact as the impulses: a solve that met the
//! relative tolerance ε leaves a settled pile's floor load within about ε
//! of its weight (`tests/wall_loads.rs`).

use glam::DVec3;

use crate::bodies::Bodies;
use crate::boundary::Boundary;
use crate::collision::NO_WALL;
use crate::problem::{ContactProblem, Vec6};

/// The mean load of one boundary over a step (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WallLoad {
    /// Mean force of the bodies on the boundary (N).
    pub force: DVec3,
    /// Mean torque of the bodies on the boundary about its origin (N m).
    pub torque: DVec3,
    /// Power the boundary's motion takes, −(F·v + T·ω) (W); 0 at rest.
    pub power: f64,
    /// Contacts with the boundary that carried a load in the step: under
    /// the rigid formulations those with a positive normal impulse (a
    /// contact posed within the envelope that the solve left at zero is not
    /// counted); under the penalty formulation those with a load at the
    /// step's last sub-step.
    pub contacts: usize,
}

impl WallLoad {
    /// The mean load over a step of length `h` starting at `time` from the
    /// sums of the step's impulse on `boundary` and its moment about the
    /// boundary's origin, with the power its motion then takes.
    pub fn over_step(
        impulse: DVec3,
        moment: DVec3,
        contacts: usize,
        boundary: &Boundary,
        h: f64,
        time: f64,
    ) -> Self {
        let (force, torque) = (impulse / h, moment / h);
        let (v, w) = boundary.motion_at(time);
        WallLoad {
            force,
            torque,
            power: -(force.dot(v) + torque.dot(w)),
            contacts,
        }
    }
}

/// The loads on every boundary from one step's `problem` and impulses
/// `gamma`, with the bodies where the step found them (`bodies`, before
/// integration: the lever arms are theirs), the step's length `h` and
/// start `time` (which boundaries move). One entry per boundary, in scene
/// order; a problem without boundary indices (read from a file) gives
/// zero loads.
pub fn wall_loads(
    problem: &ContactProblem,
    gamma: &[Vec6],
    bodies: &Bodies,
    boundaries: &[Boundary],
    h: f64,
    time: f64,
) -> Vec<WallLoad> {
    // Per boundary: Σ F_i, Σ ((p_i − o) × F_i + T_i), contacts.
    let mut sums = vec![(DVec3::ZERO, DVec3::ZERO, 0usize); boundaries.len()];
    if !boundaries.is_empty() && problem.wall.len() == problem.n_contacts() && h > 0.0 {
        for (i, g) in gamma.iter().enumerate().take(problem.n_contacts()) {
            let wall = problem.wall[i];
            if wall == NO_WALL {
                continue;
            }
            let (Some(sum), Some(b)) = (sums.get_mut(wall as usize), boundaries.get(wall as usize))
            else {
                continue;
            };
            let (f, t) = problem.world_impulse(i, g);
            let p = bodies.pos[problem.body_a[i] as usize] + problem.arm_a[i];
            sum.0 += f;
            sum.1 += (p - b.origin).cross(f) + t;
            // In the cone a nonzero impulse has γ_n > 0.
            sum.2 += usize::from(g[0] > 0.0);
        }
    }
    sums.iter()
        .zip(boundaries)
        .map(|(&(j, l, n), b)| WallLoad::over_step(j, l, n, b, h, time))
        .collect()
}
