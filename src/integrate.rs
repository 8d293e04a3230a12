//! Time integration after the contact solve: semi-implicit Euler.
//!
//! Velocities v⁺ come from the solve (M v⁺ = M v + h f + D γ,
//! Tasora & Anitescu 2013, eq. 18); positions advance with v⁺
//! (x⁺ = x + h v⁺) and orientations by the exponential map
//! q⁺ = exp(h ω⁺ / 2) ⊗ q (Tasora & Anitescu 2013, eq. 18, Λ),
//! renormalised. Kinematic boundaries move with their prescribed velocity.
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
//!
//! **The position pass** goes four bodies at a time through SIMD lanes
//! (`wide::f64x4`), each lane doing the scalar step's operations in its
//! order, so the bits are the same either way (a unit test compares them);
//! one thread's pass over the penalty bench bed took a third less time.

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
    motion(bodies).for_each(|((x, q), (v, w))| {
        advance_chunk(Motion { x, q, v, w }, h, None);
    });
}

/// As [`positions`], and whether some body ended at least √`reach2` from
/// its place in `anchor` (one per body): the penalty formulation's
/// neighbour list asks that after every sub-step, and reading the
/// positions it has just written costs nothing more than this pass.
/// Before a chunk of bodies is stepped, `kick` updates its velocities (the
/// caller's whole velocity step, gyroscopic term included where the
/// bodies need one; fused with this pass so that each body's motion is
/// read and written once in the sub-step, in one parallel region).
pub fn positions_watched(
    bodies: &mut Bodies,
    h: f64,
    anchor: &[DVec3],
    reach2: f64,
    kick: impl Fn(Kick) + Sync,
) -> bool {
    assert_eq!(anchor.len(), bodies.len(), "one anchor per body");
    let Bodies {
        pos,
        rot,
        vel,
        omega,
        inv_mass,
        inv_inertia,
        ..
    } = bodies;
    pos.par_chunks_mut(CHUNK)
        .zip(rot.par_chunks_mut(CHUNK))
        .zip(vel.par_chunks_mut(CHUNK).zip(omega.par_chunks_mut(CHUNK)))
        .zip(
            inv_mass
                .par_chunks(CHUNK)
                .zip(inv_inertia.par_chunks(CHUNK)),
        )
        .zip(anchor.par_chunks(CHUNK))
        .enumerate()
        .map(|(c, ((((x, q), (v, w)), (inv_mass, inv_inertia)), a))| {
            kick(Kick {
                first: c * CHUNK,
                inv_mass,
                inv_inertia,
                v,
                w,
            });
            advance_chunk(Motion { x, q, v, w }, h, Some((a, reach2)))
        })
        .reduce(|| false, |p, q| p | q)
}

/// A chunk of bodies whose velocities [`positions_watched`]'s `kick`
/// updates before their step.
pub struct Kick<'a> {
    /// The index of the chunk's first body.
    pub first: usize,
    /// The bodies' inverse masses.
    pub inv_mass: &'a [f64],
    /// The bodies' inverse moments of inertia (spheres').
    pub inv_inertia: &'a [f64],
    /// The bodies' velocities, to update.
    pub v: &'a mut [DVec3],
    /// The bodies' angular velocities, to update.
    pub w: &'a mut [DVec3],
}

/// Bodies per parallel task of the position pass.
const CHUNK: usize = 512;

/// Every body's ((positions, orientations), (velocities, angular
/// velocities)) in chunks of [`CHUNK`], the first two to advance.
#[allow(clippy::type_complexity)]
fn motion(
    bodies: &mut Bodies,
) -> impl IndexedParallelIterator<Item = ((&mut [DVec3], &mut [DQuat]), (&[DVec3], &[DVec3]))> {
    let Bodies {
        pos,
        rot,
        vel,
        omega,
        ..
    } = bodies;
    pos.par_chunks_mut(CHUNK)
        .zip(rot.par_chunks_mut(CHUNK))
        .zip(vel.par_chunks(CHUNK).zip(omega.par_chunks(CHUNK)))
}

/// Some bodies' positions and orientations, to advance, and their
/// velocities and angular velocities (slices of one length).
struct Motion<'a> {
    x: &'a mut [DVec3],
    q: &'a mut [DQuat],
    v: &'a [DVec3],
    w: &'a [DVec3],
}

/// One chunk of bodies' step, four at a time in SIMD lanes
/// ([`advance_four`]) and the rest one by one ([`advance`]): the same bits
/// either way. With `watch` (anchors, reach²), whether some body ended at
/// least the reach from its anchor.
fn advance_chunk(m: Motion, h: f64, watch: Option<(&[DVec3], f64)>) -> bool {
    let Motion { x, q, v, w } = m;
    let n = x.len();
    let four = n - n % 4;
    let mut moved = false;
    for k in (0..four).step_by(4) {
        let r = k..k + 4;
        let lanes = Motion {
            x: &mut x[r.clone()],
            q: &mut q[r.clone()],
            v: &v[r.clone()],
            w: &w[r.clone()],
        };
        moved |= advance_four(lanes, h, watch.map(|(a, reach2)| (&a[r], reach2)));
    }
    for i in four..n {
        advance(&mut x[i], &mut q[i], v[i], w[i], h);
        if let Some((a, reach2)) = watch {
            moved |= (x[i] - a[i]).length_squared() >= reach2;
        }
    }
    moved
}

/// [`advance`] for four bodies over `wide::f64x4` lanes: each lane does
/// the scalar step's IEEE operations in its order (glam's products and
/// sums associate as written here; no fused multiply–add), so the bits
/// are the scalar step's; a lane whose turn is past the series' range is
/// stepped by [`advance`] itself. With `watch` (four anchors, reach²),
/// whether some body ended at least the reach from its anchor.
#[inline(always)]
fn advance_four(m: Motion, h: f64, watch: Option<(&[DVec3], f64)>) -> bool {
    use wide::{f64x4 as F, CmpGe};
    let Motion { x, q, v, w } = m;
    let lanes = |f: &dyn Fn(usize) -> f64| F::new([f(0), f(1), f(2), f(3)]);
    let hh = F::splat(h);
    // x ← x + h v.
    let xn = [
        lanes(&|l| x[l].x) + lanes(&|l| v[l].x) * hh,
        lanes(&|l| x[l].y) + lanes(&|l| v[l].y) * hh,
        lanes(&|l| x[l].z) + lanes(&|l| v[l].z) * hh,
    ];
    // turn(ω h): the series (module `turn`).
    let t = [
        lanes(&|l| w[l].x) * hh,
        lanes(&|l| w[l].y) * hh,
        lanes(&|l| w[l].z) * hh,
    ];
    let t2 = t[0] * t[0] + t[1] * t[1] + t[2] * t[2];
    let c = F::splat;
    let one = F::ONE;
    let (cos, sinc) = series(c(0.25) * t2, c);
    let half = c(0.5) * sinc;
    let (x0, y0, z0, w0) = (t[0] * half, t[1] * half, t[2] * half, cos);
    // ⊗ q (glam's `mul_quat`), then normalised (q · 1/√(q·q)).
    let (x1, y1, z1, w1) = (
        lanes(&|l| q[l].x),
        lanes(&|l| q[l].y),
        lanes(&|l| q[l].z),
        lanes(&|l| q[l].w),
    );
    let nx = w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1;
    let ny = w0 * y1 - x0 * z1 + y0 * w1 + z0 * x1;
    let nz = w0 * z1 + x0 * y1 - y0 * x1 + z0 * w1;
    let nw = w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1;
    let recip = one / (nx * nx + ny * ny + nz * nz + nw * nw).sqrt();
    let (nx, ny, nz, nw) = (
        (nx * recip).to_array(),
        (ny * recip).to_array(),
        (nz * recip).to_array(),
        (nw * recip).to_array(),
    );
    let past = t2.cmp_ge(c(0.04)).move_mask();
    let xs = xn.map(F::to_array);
    for l in 0..4 {
        if past >> l & 1 == 1 {
            advance(&mut x[l], &mut q[l], v[l], w[l], h);
        } else {
            x[l] = DVec3::new(xs[0][l], xs[1][l], xs[2][l]);
            q[l] = DQuat::from_xyzw(nx[l], ny[l], nz[l], nw[l]);
        }
    }
    watch.is_some_and(|(a, reach2)| {
        let d = [
            xn[0] - lanes(&|l| a[l].x),
            xn[1] - lanes(&|l| a[l].y),
            xn[2] - lanes(&|l| a[l].z),
        ];
        (d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
            .cmp_ge(F::splat(reach2))
            .move_mask()
            != 0
    })
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
    let (cos, sinc) = series(0.25 * t2, |k| k); // in x² = |θ|²/4
    let v = theta * (0.5 * sinc); // sin x · θ/|θ|
    DQuat::from_xyzw(v.x, v.y, v.z, cos)
}

/// cos x and sin x / x by their Taylor series to x⁸, in y = x² (the
/// constants made by `k`): one body's turn ([`turn`], f64) and four's
/// ([`advance_four`], lanes) by the same operations, so the same bits.
#[inline(always)]
fn series<T>(y: T, k: impl Fn(f64) -> T) -> (T, T)
where
    T: Copy + std::ops::Add<Output = T> + std::ops::Mul<Output = T> + std::ops::Div<Output = T>,
{
    let one = k(1.0);
    let cos =
        one + y * (k(-1.0 / 2.0) + y * (k(1.0 / 24.0) + y * (k(-1.0 / 720.0) + y / k(40_320.0))));
    let sinc = one
        + y * (k(-1.0 / 6.0) + y * (k(1.0 / 120.0) + y * (k(-1.0 / 5_040.0) + y / k(362_880.0))));
    (cos, sinc)
}

/// Moves the kinematic boundaries (`boundaries`, a model's: their
/// prescribed motion) over the step that starts at time `t` by their
/// prescribed velocity (zero before their `start_time`): `origins` and
/// `rotations` are their poses (a state's). Rotation about a cylinder's
/// own axis leaves its geometry unchanged, so only the origin moves; a mesh
/// turns about its origin by ω h.
pub fn boundaries(
    boundaries: &[Boundary],
    origins: &mut [DVec3],
    rotations: &mut [DQuat],
    t: f64,
    h: f64,
) {
    for ((b, o), q) in boundaries.iter().zip(origins).zip(rotations) {
        let (v, w) = b.motion_at(t);
        *o += v * h;
        if let Shape::Mesh { .. } = b.shape {
            *q = (DQuat::from_scaled_axis(w * h) * *q).normalize();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::SphereInit;

    /// The position pass (four bodies at a time in lanes, the rest one by
    /// one) gives each body the bits of the scalar step `advance`, and its
    /// watch sees every body: 1,031 bodies (chunks of 512, 512 and 7: the
    /// last one lanes of four and three by the scalar step) with random
    /// velocities, angular velocities from rest to past the turn series'
    /// range (those lanes take the scalar step), and random orientations.
    /// The watch is probed body by body: anchors at the new positions but
    /// one, which lies beyond the reach, in each lane and the remainder.
    #[test]
    fn the_position_pass_gives_the_scalar_steps_bits() {
        let mut seed = 11u64;
        let mut draw = move || {
            seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let mut vec = |s: f64| DVec3::new(draw(), draw(), draw()) * s;
        let h = 1e-3;
        let mut bodies = Bodies::default();
        let mut past = 0;
        for k in 0..1031 {
            let spin = [0.0, 1e-3, 1.0, 100.0, 500.0][k % 5];
            let omega = vec(spin);
            past += usize::from((omega * h).length_squared() >= 0.04);
            let i = bodies.push(&SphereInit {
                pos: vec(1.0),
                radius: 1e-3,
                mass: 1.0,
                inertia: 1.0,
                vel: vec(2.0),
                omega,
                material: 0,
            });
            bodies.rot[i] = DQuat::from_scaled_axis(vec(3.0));
        }
        assert!(past >= 100, "{past} bodies past the series' range");
        let mut expected = bodies.clone();
        for i in 0..bodies.len() {
            let (v, w) = (expected.vel[i], expected.omega[i]);
            advance(&mut expected.pos[i], &mut expected.rot[i], v, w, h);
        }
        let bits = |x: DVec3, q: DQuat| [x.x, x.y, x.z, q.x, q.y, q.z, q.w].map(f64::to_bits);
        let mut plain = bodies.clone();
        positions(&mut plain, h);
        for i in 0..bodies.len() {
            let want = bits(expected.pos[i], expected.rot[i]);
            assert_eq!(bits(plain.pos[i], plain.rot[i]), want, "body {i}");
        }
        // Anchors at the new positions: no body is at the reach; then one
        // body's anchor moved just past it (lanes 0–3 of groups in the
        // first and last chunk, and the last chunk's scalar remainder).
        let reach2 = 1e-6;
        let probes = [
            None,
            Some(0),
            Some(1),
            Some(514),
            Some(1027),
            Some(1026),
            Some(1030),
        ];
        // The kick: each chunk's velocities changed by their bodies' ids
        // before its step (1,031 bodies: three chunks), as a velocity pass
        // over all bodies and then the position pass would.
        let kick = |c: Kick| {
            for (o, (v, w)) in c.v.iter_mut().zip(c.w.iter_mut()).enumerate() {
                let k = (c.first + o) as f64;
                *v += DVec3::new(k, -k, 0.5 * k) * (1e-3 * c.inv_mass[o]);
                *w += DVec3::splat(1e-2 * k * c.inv_inertia[o]);
            }
        };
        let mut want = bodies.clone();
        for i in 0..want.len() {
            let k = i as f64;
            want.vel[i] += DVec3::new(k, -k, 0.5 * k) * (1e-3 * want.inv_mass[i]);
            want.omega[i] += DVec3::splat(1e-2 * k * want.inv_inertia[i]);
            let (v, w) = (want.vel[i], want.omega[i]);
            advance(&mut want.pos[i], &mut want.rot[i], v, w, h);
        }
        let mut got = bodies.clone();
        let far = vec![DVec3::splat(1e9); bodies.len()];
        assert!(
            positions_watched(&mut got, h, &far, 1e18, kick),
            "every body is far from its anchor"
        );
        let motion = |b: &Bodies, i: usize| {
            let (v, w) = (b.vel[i], b.omega[i]);
            [v.x, v.y, v.z, w.x, w.y, w.z].map(f64::to_bits)
        };
        for i in 0..bodies.len() {
            assert_eq!(
                bits(got.pos[i], got.rot[i]),
                bits(want.pos[i], want.rot[i]),
                "kicked body {i}"
            );
            assert_eq!(
                motion(&got, i),
                motion(&want, i),
                "kicked body {i}'s velocities"
            );
        }
        for probe in probes {
            let mut anchor = expected.pos.clone();
            if let Some(i) = probe {
                anchor[i] += DVec3::new(0.0, 1.0001e-3, 0.0);
            }
            let mut got = bodies.clone();
            assert_eq!(
                positions_watched(&mut got, h, &anchor, reach2, |_| ()),
                probe.is_some(),
                "probe {probe:?}"
            );
            for i in 0..bodies.len() {
                let want = bits(expected.pos[i], expected.rot[i]);
                assert_eq!(
                    bits(got.pos[i], got.rot[i]),
                    want,
                    "body {i}, probe {probe:?}"
                );
            }
        }
    }

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
