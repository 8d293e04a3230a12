//! One contact's loads under the penalty formulation: the normal force
//! ([`super::normal`]), the sliding friction ([`super::slide`]) and the
//! rolling and spinning torques ([`super::roll_spin`]) from the contact's
//! geometry, the two bodies' motion and the contact's history, which is
//! updated in place. Both drivers of [`super`] (the general one, with a
//! history map, and the neighbour list's, with a history per listed pair)
//! call this one function, so they give the same bits.

use glam::DVec3;

use super::{normal, roll_spin, slide, ContactHistory, PenaltySettings, RollingModel, SpinModel};
use crate::bodies::{Bodies, SPHERE};
use crate::collision::{ContactGeom, NO_BODY};
use crate::material::Material;

/// The forces and torques of one contact on its two ends (B's are ignored
/// for a wall). A's force is −`force_b`, exactly: a sum adds it by
/// subtracting `force_b`, the same bits as adding its negation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Loads {
    /// Force on B (N); A takes its opposite.
    pub force_b: DVec3,
    /// Torque on A about its centre (N m).
    pub torque_a: DVec3,
    /// Torque on B about its centre (N m).
    pub torque_b: DVec3,
}

/// What every contact of a sub-step reads.
pub struct Context<'a> {
    /// The bodies at the start of the sub-step.
    pub bodies: &'a Bodies,
    /// The scene's materials.
    pub materials: &'a [Material],
    /// The coefficients of every pair of materials (row-major).
    pub pairs: &'a [super::PairCoefficients],
    /// The formulation's settings.
    pub settings: &'a PenaltySettings,
    /// The sub-step Δt (s).
    pub dt: f64,
}

/// Body `i`'s curvature at the world point `point` (see `contact_loads`).
#[inline]
fn curvature(b: &Bodies, i: usize, point: DVec3) -> f64 {
    if b.shape[i] == SPHERE {
        return 1.0 / b.radius[i];
    }
    b.shape_of(i)
        .and_then(|s| {
            s.shape
                .mean_curvature(b.rot[i].inverse() * (point - b.pos[i]))
        })
        .unwrap_or(1.0 / b.radius[i])
}

/// The loads of contact `c`, advancing its history `hist` (the default for
/// a contact that has just begun) over the sub-step.
pub fn contact_loads(cx: &Context, c: &ContactGeom, hist: &mut ContactHistory) -> Loads {
    let (b, mats, settings, dt) = (cx.bodies, cx.materials, cx.settings, cx.dt);
    let a = c.a as usize;
    let pc = &cx.pairs[b.material[a] as usize * mats.len() + c.material_b as usize];
    let ra = c.point - b.pos[a];
    let ua = b.vel[a] + b.omega[a].cross(ra);
    let (ub, rb, inv_mb, radius_b, omega_b, inv_ib) = if c.b == NO_BODY {
        (
            c.wall_velocity,
            DVec3::ZERO,
            0.0,
            f64::INFINITY,
            c.wall_omega,
            0.0,
        )
    } else {
        let j = c.b as usize;
        let r = c.point - b.pos[j];
        (
            b.vel[j] + b.omega[j].cross(r),
            r,
            b.inv_mass[j],
            b.radius[j],
            b.omega[j],
            b.inv_inertia[j],
        )
    };
    let rel = ub - ua;
    let n = c.normal;
    let delta = -c.gap;
    let m_star = 1.0 / (b.inv_mass[a] + inv_mb);
    // Curvatures at the contact point (a sphere 1/r, a wall 0, an
    // ellipsoid its mean curvature there, other shapes 1/(bounding
    // radius): `Shape::mean_curvature`) and R* = 1/(κ_A + κ_B).
    let kappa_a = curvature(b, a, c.point);
    let kappa_b = if c.b == NO_BODY {
        1.0 / radius_b
    } else {
        curvature(b, c.b as usize, c.point)
    };
    let kappa = kappa_a + kappa_b;
    let params = normal::NormalParams {
        e_star: pc.e_star,
        r_star: 1.0 / kappa,
        m_star,
        zeta: pc.zeta,
    };
    let nf = normal::normal_force(settings.normal, &params, delta, -rel.dot(n));
    let k_e = pc
        .slide_stiffness
        .unwrap_or_else(|| 2.0 / 7.0 * nf.stiffness);
    let (mu_s, mu_k) = (pc.mu_s, pc.mu_k);
    let friction = if k_e > 0.0 {
        slide::slide(
            &mut hist.slide,
            &slide::SlideParams {
                mu_s,
                mu_k,
                stiffness: k_e,
                m_star,
            },
            n,
            rel,
            nf.force,
            dt,
        )
    } else {
        DVec3::ZERO
    };
    // Rolling and spinning resistance (roll_spin.rs): the contact point's
    // travel over each body since the last sub-step (none at onset: the
    // paper's loads start from no history).
    let tangential = |x: DVec3| x - n * x.dot(n);
    let (travel_a, travel_b) = match hist.point {
        Some(c0) => {
            let dc = c.point - c0;
            (tangential(dc - ua * dt), tangential(dc - ub * dt))
        }
        None => (DVec3::ZERO, DVec3::ZERO),
    };
    hist.point = Some(c.point);
    let rp = roll_spin::ResistanceParams {
        mu_s,
        mu_k,
        k_e,
        eta_r: pc.eta_r,
        eta_psi: pc.eta_psi,
        i_star: 1.0 / (b.inv_inertia[a] + inv_ib),
    };
    let (roll_a, roll_b) = match settings.rolling {
        RollingModel::ConstantTorque { coefficient } => {
            let w = b.omega[a] - omega_b;
            let len = w.length();
            let m = if len > 0.0 {
                w * (-coefficient * nf.force / (kappa * len))
            } else {
                DVec3::ZERO
            };
            (m, -m)
        }
        RollingModel::Tracked => {
            let springs = roll_spin::RollSprings::new(&rp, kappa, nf.force, dt);
            (
                roll_spin::roll(&mut hist.roll[0], springs.as_ref(), n, travel_a, kappa_a),
                roll_spin::roll(&mut hist.roll[1], springs.as_ref(), -n, travel_b, kappa_b),
            )
        }
    };
    let turn = dt * (omega_b - b.omega[a]).dot(n);
    let (spin_rp, spin_curvature) = match settings.spinning {
        SpinModel::Heuristic => (rp, kappa),
        SpinModel::Hertz => (
            roll_spin::ResistanceParams { eta_psi: 0.5, ..rp },
            1.0 / (delta / kappa).sqrt(),
        ),
    };
    let spin_b = n * roll_spin::spin(&mut hist.spin, &spin_rp, turn, spin_curvature, nf.force, dt);
    let on_b = n * nf.force + friction;
    Loads {
        torque_a: ra.cross(-on_b) + roll_a - spin_b,
        force_b: on_b,
        torque_b: rb.cross(on_b) + roll_b + spin_b,
    }
}
