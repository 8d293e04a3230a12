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
use wide::{f64x2, f64x4};

use super::{normal, roll_spin, slide, ContactHistory, PenaltySettings, RollingModel, SpinModel};
use crate::bodies::{Bodies, SPHERE};
use crate::collision::{ContactGeom, NO_BODY};
use crate::material::Material;

/// The forces and torques of one contact on its two ends (B's are ignored
/// for a wall). A's force is −`force_b`, exactly: a sum adds it by
/// subtracting `force_b`, the same bits as adding its negation.
///
/// Laid out (`repr(C)`) so that each end's six numbers are contiguous: A's
/// are `torque_a` then `force_b` (negated), B's `force_b` then `torque_b`;
/// [`EndSum`] adds an end with one four-wide and one two-wide addition.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct Loads {
    /// Torque on A about its centre (N m).
    pub torque_a: DVec3,
    /// Force on B (N); A takes its opposite.
    pub force_b: DVec3,
    /// Torque on B about its centre (N m).
    pub torque_b: DVec3,
}

/// One body's sum of the loads of its contact ends, in SIMD lanes: the
/// force and torque as six numbers in one four-wide and one two-wide
/// register, in the order the ends of [`Loads`] lie in memory. Each
/// component is added in the order the ends come, as a sum of `DVec3`s
/// would, so the bits are the same; only the instructions are fewer (two
/// additions an end, not six). A body's B ends (`add_b`) come before its A
/// ends (`add_a`), as the canonical order has them ([`super::forces`]):
/// the first `add_a` reorders the lanes from (force, torque) to (torque,
/// force).
#[derive(Clone, Copy)]
pub struct EndSum {
    /// (f_x, f_y, f_z, t_x) while adding B ends, then (t_x, t_y, t_z, f_x).
    wide: f64x4,
    /// (t_y, t_z), then (f_y, f_z).
    narrow: f64x2,
    /// Whether the lanes are in the A ends' order.
    as_a: bool,
}

impl Default for EndSum {
    fn default() -> Self {
        EndSum {
            wide: f64x4::ZERO,
            narrow: f64x2::ZERO,
            as_a: false,
        }
    }
}

impl EndSum {
    /// Adds B's end of `l`: `force_b` to the force, `torque_b` to the
    /// torque. Must come before any A end.
    #[inline(always)]
    pub fn add_b(&mut self, l: &Loads) {
        debug_assert!(!self.as_a, "B ends come before A ends");
        let (f, t) = (l.force_b, l.torque_b);
        self.wide += f64x4::new([f.x, f.y, f.z, t.x]);
        self.narrow += f64x2::new([t.y, t.z]);
    }

    /// Adds A's end of `l`: −`force_b` to the force (exactly: x + (−y) is
    /// x − y), `torque_a` to the torque.
    #[inline(always)]
    pub fn add_a(&mut self, l: &Loads) {
        if !self.as_a {
            let [fx, fy, fz, tx] = self.wide.to_array();
            let [ty, tz] = self.narrow.to_array();
            self.wide = f64x4::new([tx, ty, tz, fx]);
            self.narrow = f64x2::new([fy, fz]);
            self.as_a = true;
        }
        let (t, f) = (l.torque_a, l.force_b);
        self.wide += f64x4::new([t.x, t.y, t.z, f.x]) ^ f64x4::new([0.0, 0.0, 0.0, -0.0]);
        self.narrow += f64x2::new([f.y, f.z]) ^ f64x2::splat(-0.0);
    }

    /// The summed force and torque.
    #[inline(always)]
    pub fn force_torque(&self) -> (DVec3, DVec3) {
        let w = self.wide.to_array();
        let [p, q] = self.narrow.to_array();
        if self.as_a {
            (DVec3::new(w[3], p, q), DVec3::new(w[0], w[1], w[2]))
        } else {
            (DVec3::new(w[0], w[1], w[2]), DVec3::new(w[3], p, q))
        }
    }
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

    /// The constants of sphere `i`'s contacts with a boundary of material
    /// `material_b` (curvature 1/r wherever it touches): what
    /// [`PairConstants::of_contact`] gives such a contact, without the
    /// contact (the listed faces make them once per rebuild).
    pub fn of_sphere_wall(cx: &Context, i: usize, material_b: u32) -> Self {
        let b = cx.bodies;
        debug_assert_eq!(b.shape[i], SPHERE);
        Self::new(
            cx.pair_of(b.material[i], material_b),
            cx.settings.normal,
            [1.0 / b.radius[i], 0.0],
            1.0 / (b.inv_mass[i] + 0.0),
            1.0 / (b.inv_inertia[i] + 0.0),
        )
    }

    /// The constants of contact `c` in `cx` (at its contact point, for
    /// shapes whose curvature varies).
    pub fn of_contact(cx: &Context, c: &ContactGeom) -> Self {
        let b = cx.bodies;
        let a = c.a as usize;
        if c.b == NO_BODY && b.shape[a] == SPHERE {
            return Self::of_sphere_wall(cx, a, c.material_b);
        }
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

impl<'a> Context<'a> {
    /// The context of a sub-step of length `dt` over `bodies` and the
    /// model's materials, with the pair table `pairs`.
    #[inline]
    pub fn of(
        model: &'a crate::model::Model,
        bodies: &'a crate::bodies::Bodies,
        pairs: &'a [super::PairCoefficients],
        settings: &'a PenaltySettings,
        dt: f64,
    ) -> Self {
        Context {
            bodies,
            materials: &model.materials,
            pairs,
            settings,
            dt,
            inv_dt: 1.0 / dt,
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A number of any size and sign, zeros of both signs among them.
    fn number() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            (-1e3f64..1e3),
            (-30i32..30, -1.0f64..1.0).prop_map(|(e, m)| m * 10f64.powi(e)),
        ]
    }

    fn loads() -> impl Strategy<Value = Loads> {
        proptest::array::uniform9(number()).prop_map(|x| Loads {
            torque_a: DVec3::new(x[0], x[1], x[2]),
            force_b: DVec3::new(x[3], x[4], x[5]),
            torque_b: DVec3::new(x[6], x[7], x[8]),
        })
    }

    proptest! {
        /// The lanes' sum of a body's ends has the bits of the `DVec3`
        /// sums in the same order (B ends adding `force_b` and
        /// `torque_b`, then A ends subtracting `force_b` and adding
        /// `torque_a`), with no ends of either kind too.
        #[test]
        fn end_sums_have_the_bits_of_vector_sums(
            as_b in proptest::collection::vec(loads(), 0..6),
            as_a in proptest::collection::vec(loads(), 0..9),
        ) {
            let (mut f, mut t) = (DVec3::ZERO, DVec3::ZERO);
            let mut sum = EndSum::default();
            for l in &as_b {
                f += l.force_b;
                t += l.torque_b;
                sum.add_b(l);
            }
            for l in &as_a {
                f -= l.force_b;
                t += l.torque_a;
                sum.add_a(l);
            }
            let (fs, ts) = sum.force_torque();
            let bits = |v: DVec3| v.to_array().map(f64::to_bits);
            prop_assert_eq!(
                (bits(fs), bits(ts)),
                (bits(f), bits(t)),
                "lanes {:?} {:?}, vectors {:?} {:?}",
                fs,
                ts,
                f,
                t
            );
        }
    }
}
