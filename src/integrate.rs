//! Time integration after the contact solve: semi-implicit Euler.
//!
//! Velocities v⁺ come from the solve (M v⁺ = M v + h f + D γ, seed 000
//! eq. 18); positions advance with v⁺ (x⁺ = x + h v⁺) and orientations by the
//! exponential map q⁺ = exp(h ω⁺ / 2) ⊗ q (seed 000 eq. 18, Λ), renormalised.
//! Kinematic boundaries move with their prescribed velocity.

use glam::{DQuat, DVec3};
use rayon::prelude::*;

use crate::bodies::Bodies;
use crate::boundary::Boundary;

/// Free velocities: v + h g (gravity is the only body force); ω unchanged
/// (isotropic spheres have no gyroscopic torque).
pub fn free_velocities(bodies: &Bodies, gravity: DVec3, h: f64) -> (Vec<DVec3>, Vec<DVec3>) {
    let v = bodies.vel.par_iter().map(|v| *v + gravity * h).collect();
    (v, bodies.omega.clone())
}

/// Advances positions and orientations with the new velocities.
pub fn positions(bodies: &mut Bodies, h: f64) {
    let Bodies {
        pos,
        rot,
        vel,
        omega,
        ..
    } = bodies;
    pos.par_iter_mut()
        .zip(rot.par_iter_mut())
        .zip(vel.par_iter().zip(omega.par_iter()))
        .for_each(|((x, q), (v, w))| {
            *x += *v * h;
            let dq = DQuat::from_scaled_axis(*w * h);
            *q = (dq * *q).normalize();
        });
}

/// Moves the kinematic boundaries over the step that starts at time `t` by
/// their prescribed velocity (zero before their `start_time`). Rotation about
/// a cylinder's own axis leaves its geometry unchanged, so only the origin moves.
pub fn boundaries(boundaries: &mut [Boundary], t: f64, h: f64) {
    for b in boundaries {
        b.origin += b.motion_at(t).0 * h;
    }
}
