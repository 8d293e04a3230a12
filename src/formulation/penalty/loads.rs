//! One contact's loads under the penalty formulation: the normal force
//! ([`super::normal`]), the sliding friction ([`super::slide`]) and the
//! rolling and spinning torques ([`super::roll_spin`]) from the contact's
//! geometry, the two bodies' motion and the contact's history, which is
//! updated in place. Both drivers of [`super`] (the general one, with the
//! world's sorted histories, and the neighbour list's, with a history per
//! listed pair) call this one function, so they give the same bits.
//!
//! What depends only on the two ends (curvatures, reduced mass and
//! inertia, the normal law's coefficients: every division and square root
//! of them) is a [`PairConstants`], made by one function: once per listed
//! pair by the neighbour list, per contact by the general driver. The law
//! itself then takes per contact the square roots of the overlap (δ^{1/2},
//! δ^{1/4}), one reciprocal of K_E, and the carries and lengths of the
//! three deflections.

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
    /// 1/Δt (1/s).
    pub inv_dt: f64,
}

/// Body `i`'s curvature at the world point `point` (a sphere 1/r, an
/// ellipsoid its mean curvature there, other shapes 1/(bounding radius):
/// `Shape::mean_curvature`).
#[inline]
pub fn curvature(b: &Bodies, i: usize, point: DVec3) -> f64 {
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

/// What a contact's law takes from its two ends that does not change while
/// they stay in touch at the same place on their surfaces: for two spheres,
/// over the pair's whole life, so the neighbour list keeps one per listed
/// pair; the general driver makes one per contact. Every division and
/// square root the law needs of masses, inertias and curvatures is here.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairConstants {
    /// κ_A and κ_B, the ends' curvatures at the contact (a wall 0).
    pub kappa: [f64; 2],
    /// 1/(κ_A + κ_B) = R*.
    pub inv_kappa: f64,
    /// The normal law's k and damping ζ √(k m*) ([`normal::NormalParams`]).
    pub normal: normal::NormalParams,
    /// √(m* K₀) and √(I* K₀), K₀ = K_E where set, else K_E's coefficient
    /// (K_E = K₀ for Hooke, K₀ √δ for Hertz, so √K_E = √K₀ δ^{1/4}).
    pub root_k: [f64; 2],
}

impl PairConstants {
    /// The constants of a contact between ends of curvatures `kappa`,
    /// reduced mass `m_star` and reduced moment of inertia `i_star`, with
    /// the pair coefficients `pc`, under the normal law `model`.
    pub fn new(
        pc: &super::PairCoefficients,
        model: normal::NormalModel,
        kappa: [f64; 2],
        m_star: f64,
        i_star: f64,
    ) -> Self {
        let inv_kappa = 1.0 / (kappa[0] + kappa[1]);
        let normal = normal::NormalParams::new(model, pc.e_star, inv_kappa, m_star, pc.zeta);
        let k0 = pc.slide_stiffness.unwrap_or(
            2.0 / 7.0
                * match model {
                    normal::NormalModel::Hertz => 1.5 * normal.k,
                    normal::NormalModel::Hooke { .. } => normal.k,
                },
        );
        PairConstants {
            kappa,
            inv_kappa,
            normal,
            root_k: [(m_star * k0).sqrt(), (i_star * k0).sqrt()],
        }
    }

    /// The constants of a contact between spheres `i` and `j` of
    /// `cx.bodies` (curvatures 1/r: the same wherever they touch).
    pub fn of_spheres(cx: &Context, i: usize, j: usize) -> Self {
        let b = cx.bodies;
        Self::new(
            cx.pair_of(b.material[i], b.material[j]),
            cx.settings.normal,
            [1.0 / b.radius[i], 1.0 / b.radius[j]],
            1.0 / (b.inv_mass[i] + b.inv_mass[j]),
            1.0 / (b.inv_inertia[i] + b.inv_inertia[j]),
        )
    }

    /// The constants of contact `c` in `cx` (at its contact point, for
    /// shapes whose curvature varies).
    pub fn of_contact(cx: &Context, c: &ContactGeom) -> Self {
        let b = cx.bodies;
        let a = c.a as usize;
        let (kappa_b, inv_mb, inv_ib) = if c.b == NO_BODY {
            (0.0, 0.0, 0.0)
        } else {
            let j = c.b as usize;
            (curvature(b, j, c.point), b.inv_mass[j], b.inv_inertia[j])
        };
        Self::new(
            cx.pair_of(b.material[a], c.material_b),
            cx.settings.normal,
            [curvature(b, a, c.point), kappa_b],
            1.0 / (b.inv_mass[a] + inv_mb),
            1.0 / (b.inv_inertia[a] + inv_ib),
        )
    }
}

impl Context<'_> {
    /// The coefficients of materials `a` and `b`.
    #[inline]
    pub fn pair_of(&self, a: u32, b: u32) -> &super::PairCoefficients {
        &self.pairs[a as usize * self.materials.len() + b as usize]
    }
}

/// The loads of contact `c` with constants `k`, advancing its history
/// `hist` (the default for a contact that has just begun) over the
/// sub-step.
pub fn contact_loads(
    cx: &Context,
    c: &ContactGeom,
    k: &PairConstants,
    hist: &mut ContactHistory,
) -> Loads {
    let (b, settings, dt) = (cx.bodies, cx.settings, cx.dt);
    let a = c.a as usize;
    let pc = cx.pair_of(b.material[a], c.material_b);
    let ra = c.point - b.pos[a];
    let ua = b.vel[a] + b.omega[a].cross(ra);
    let (ub, rb, omega_b) = if c.b == NO_BODY {
        (c.wall_velocity, DVec3::ZERO, c.wall_omega)
    } else {
        let j = c.b as usize;
        let r = c.point - b.pos[j];
        (b.vel[j] + b.omega[j].cross(r), r, b.omega[j])
    };
    let rel = ub - ua;
    let n = c.normal;
    // The overlap, never negative: a pair counts as touching by its squared
    // distance, and its gap, from the square root, can round to just above
    // zero; a negative δ would give Hertz's √δ as NaN.
    let delta = if -c.gap > 0.0 { -c.gap } else { 0.0 };
    let [kappa_a, kappa_b] = k.kappa;
    let kappa = kappa_a + kappa_b;
    let nf = normal::normal_force(settings.normal, &k.normal, delta, -rel.dot(n));
    // K_E (the materials' where set, else 2/7 of the normal stiffness) and
    // the factor its square root carries (PairConstants::root_k).
    let (k_e, root) = match pc.slide_stiffness {
        Some(k_e) => (k_e, 1.0),
        None => (2.0 / 7.0 * nf.stiffness, nf.quarter),
    };
    let inv_k_e = 1.0 / k_e;
    let (mu_s, mu_k) = (pc.mu_s, pc.mu_k);
    let friction = if k_e > 0.0 {
        slide::slide(
            &mut hist.slide,
            &slide::SlideParams {
                mu_s,
                mu_k,
                stiffness: k_e,
                inv_stiffness: inv_k_e,
                damping: 2.0 * k.root_k[0] * root,
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
        inv_k_e,
        root_inertia_k_e: k.root_k[1] * root,
        eta_r: pc.eta_r,
        root_eta_r: pc.root_eta_r,
        eta_psi: pc.eta_psi,
        root_eta_psi: pc.root_eta_psi,
        inv_dt: cx.inv_dt,
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
            let springs = roll_spin::RollSprings::new(&rp, kappa, k.inv_kappa, nf.force);
            (
                roll_spin::roll(&mut hist.roll[0], springs.as_ref(), n, travel_a, kappa_a),
                roll_spin::roll(&mut hist.roll[1], springs.as_ref(), -n, travel_b, kappa_b),
            )
        }
    };
    let rate = (omega_b - b.omega[a]).dot(n);
    let spin = match settings.spinning {
        SpinModel::Heuristic => {
            roll_spin::spin(&mut hist.spin, &rp, rate, kappa, k.inv_kappa, nf.force, dt)
        }
        SpinModel::Hertz => {
            // 𝒦 = 1/a, a = √(δ R*) the contact disk's radius; η_ψ = 1/2.
            let radius = (delta * k.inv_kappa).sqrt();
            let hertz = roll_spin::ResistanceParams {
                eta_psi: 0.5,
                root_eta_psi: std::f64::consts::FRAC_1_SQRT_2,
                ..rp
            };
            roll_spin::spin(
                &mut hist.spin,
                &hertz,
                rate,
                1.0 / radius,
                radius,
                nf.force,
                dt,
            )
        }
    };
    let spin_b = n * spin;
    let on_b = n * nf.force + friction;
    Loads {
        force_b: on_b,
        torque_a: ra.cross(-on_b) + roll_a - spin_b,
        torque_b: rb.cross(on_b) + roll_b + spin_b,
    }
}
