//! Time integration after the contact solve: semi-implicit Euler.
//!
//! Velocities v⁺ come from the solve (M v⁺ = M v + h f + D γ, seed 000
//! eq. 18); positions advance with v⁺ (x⁺ = x + h v⁺) and orientations by the
//! exponential map q⁺ = exp(h ω⁺ / 2) ⊗ q (seed 000 eq. 18, Λ), renormalised.
//! Kinematic boundaries move with their prescribed velocity.
//!
//! **The gyroscopic term** of a body with anisotropic inertia, I_b ω̇ =
//! (I_b ω) × ω in the body frame, is integrated *implicitly* by the midpoint
//! rule: ω⁺ solves I_b (ω⁺ − ω) = h (I_b ω̄) × ω̄ with ω̄ = (ω + ω⁺)/2,
//! by Newton's method (Jacobian I_b + (h/2)(ω̄~ I_b − (I_b ω̄)~), a few
//! iterations to round-off). The midpoint rule keeps the quadratic
//! invariants of torque-free motion — |L| and the rotational energy — to
//! round-off, and it is unconditionally stable: the explicit ω × Iω gains
//! energy every step and blows up at large ω. (Backward Euler, the one
//! Newton step of Catto's "Numerical Methods", GDC 2015, and Bullet, is as
//! stable but loses |L| by O(h²ω²) a step: 0.5 % over 10 s at h = 1 ms.)
//! Spheres have no gyroscopic term and skip it.

use glam::{DMat3, DQuat, DVec3};
use rayon::prelude::*;

use crate::bodies::{Bodies, SPHERE};
use crate::boundary::{Boundary, Shape};

fn skew(a: DVec3) -> DMat3 {
    DMat3::from_cols(
        DVec3::new(0.0, a.z, -a.y),
        DVec3::new(-a.z, 0.0, a.x),
        DVec3::new(a.y, -a.x, 0.0),
    )
}

/// The angular velocity after a step of torque-free motion by the implicit
/// midpoint rule (module docs): `omega` in the world frame, body
/// orientation `q`, principal inverse moments `inv_body`.
pub fn gyroscopic(omega: DVec3, q: DQuat, inv_body: DVec3, h: f64) -> DVec3 {
    let ib = DMat3::from_diagonal(inv_body.recip());
    let w0 = q.inverse() * omega;
    let mut w = w0;
    for _ in 0..20 {
        let m = 0.5 * (w0 + w);
        let f = ib * (w - w0) - h * (ib * m).cross(m);
        let j = ib + 0.5 * h * (skew(m) * ib - skew(ib * m));
        let dw = j.inverse() * f;
        w -= dw;
        if dw.length() <= 1e-15 * w.length() {
            break;
        }
    }
    q * w
}

/// Free velocities: v + h g (gravity is the only body force); ω after the
/// implicit gyroscopic step for bodies that are not spheres (module docs),
/// unchanged for spheres.
pub fn free_velocities(bodies: &Bodies, gravity: DVec3, h: f64) -> (Vec<DVec3>, Vec<DVec3>) {
    let v = bodies.vel.par_iter().map(|v| *v + gravity * h).collect();
    let w = if bodies.has_shapes() {
        (0..bodies.len())
            .into_par_iter()
            .map(|i| match bodies.shape[i] {
                SPHERE => bodies.omega[i],
                _ => gyroscopic(
                    bodies.omega[i],
                    bodies.rot[i],
                    bodies.inv_inertia_body[i],
                    h,
                ),
            })
            .collect()
    } else {
        bodies.omega.clone()
    };
    (v, w)
}

/// Advances positions and orientations with the new velocities.
pub fn positions(bodies: &mut Bodies, h: f64) {
    motion(bodies).for_each(|((x, q), (v, w))| advance(x, q, *v, *w, h));
}

/// As [`positions`], and whether some body ended at least √`reach2` from
/// its place in `anchor` (one per body): the penalty formulation's
/// neighbour list asks that after every sub-step, and reading the
/// positions it has just written costs nothing more than this pass.
pub fn positions_watched(bodies: &mut Bodies, h: f64, anchor: &[DVec3], reach2: f64) -> bool {
    assert_eq!(anchor.len(), bodies.len(), "one anchor per body");
    motion(bodies)
        .zip(anchor.par_iter())
        .map(|(((x, q), (v, w)), a)| {
            advance(x, q, *v, *w, h);
            (*x - *a).length_squared() >= reach2
        })
        .reduce(|| false, |p, q| p | q)
}

/// Every body's ((position, orientation), (velocity, angular velocity)),
/// the first two to advance.
fn motion(
    bodies: &mut Bodies,
) -> impl IndexedParallelIterator<Item = ((&mut DVec3, &mut DQuat), (&DVec3, &DVec3))> {
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
}

/// One body's step: x ← x + h v, q ← exp(h ω/2) ⊗ q, renormalised.
#[inline(always)]
fn advance(x: &mut DVec3, q: &mut DQuat, v: DVec3, w: DVec3, h: f64) {
    *x += v * h;
    *q = (turn(w * h) * *q).normalize();
}

/// The unit quaternion exp(θ/2) of the rotation vector θ (rad): a turn by
/// |θ| about θ. Below |θ| = 0.2 rad (every body's sub-step but the
/// fastest spinners') by the Taylor series of cos x and sin x / x in
/// x = |θ|/2 up to x⁸, whose remainders (x¹⁰/10!, x¹⁰/11!) are below
/// 3·10⁻¹⁷ there, under f64's rounding: the same quaternion as `sin_cos`
/// gives to within rounding, without the square root, division and
/// library call (both formulations' position pass; on the penalty bench
/// bed the orientation update had been 0.21 s of a 2.7 s run on one
/// thread, timed per stage).
#[inline]
pub fn turn(theta: DVec3) -> DQuat {
    let t2 = theta.length_squared();
    if t2 >= 0.04 {
        return DQuat::from_scaled_axis(theta);
    }
    let y = 0.25 * t2; // x²
    let cos = 1.0 + y * (-1.0 / 2.0 + y * (1.0 / 24.0 + y * (-1.0 / 720.0 + y / 40_320.0)));
    let sinc = 1.0 + y * (-1.0 / 6.0 + y * (1.0 / 120.0 + y * (-1.0 / 5_040.0 + y / 362_880.0)));
    let v = theta * (0.5 * sinc); // sin x · θ/|θ|
    DQuat::from_xyzw(v.x, v.y, v.z, cos)
}

/// Moves the kinematic boundaries over the step that starts at time `t` by
/// their prescribed velocity (zero before their `start_time`). Rotation about
/// a cylinder's own axis leaves its geometry unchanged, so only the origin
/// moves; a mesh turns about its origin by ω h.
pub fn boundaries(boundaries: &mut [Boundary], t: f64, h: f64) {
    for b in boundaries {
        let (v, w) = b.motion_at(t);
        b.origin += v * h;
        if let Shape::Mesh { rot, .. } = &mut b.shape {
            *rot = (DQuat::from_scaled_axis(w * h) * *rot).normalize();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The series turn is the exponential map to within rounding: against
    /// glam's `from_scaled_axis` (sin_cos) from 10⁻¹² rad to past the
    /// series' range, about tilted axes; no turn is the identity.
    #[test]
    fn the_series_turn_is_the_exponential_map_to_rounding() {
        assert_eq!(turn(DVec3::ZERO), DQuat::IDENTITY);
        let axes = [
            DVec3::X,
            DVec3::new(0.3, -0.5, 0.8).normalize(),
            DVec3::new(-1.0, 2.0, 0.5).normalize(),
        ];
        for axis in axes {
            for k in 0..=120 {
                let angle = 1e-12 * 10f64.powf(k as f64 * 0.1); // 1e-12 … 1
                let (series, exact) = (turn(axis * angle), DQuat::from_scaled_axis(axis * angle));
                // The vector part (≈ θ/2) to a few ulps of its own size, the
                // scalar part (≈ 1) to a few ulps of 1.
                let (sv, ev) = (series.xyz(), exact.xyz());
                let rel = (sv - ev).length() / ev.length();
                let dw = (series.w - exact.w).abs();
                assert!(
                    rel <= 1e-15 && dw <= 4e-16,
                    "θ = {angle:e} about {axis}: {series} vs {exact} \
                     (vector off {rel:e} relative, scalar off {dw:e})"
                );
            }
        }
    }
}
