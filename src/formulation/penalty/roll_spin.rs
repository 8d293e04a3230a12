//! The rolling and spinning resistance of Fang & Negrut 2020:
//! micro-deflection springs on the contact point's travel over each body
//! (roll, §3.2, eqs. 2, 2a–2c, Table 1) and on the bodies' relative turn
//! about the normal (spin, §3.3, eqs. 3, 3a–3d), each with a static and a
//! kinetic cap.
//!
//! **Roll.** Over a step the contact point travels p_k over body k's
//! surface: p_k = P(Δc − Δt u_k), with Δc the geometric contact point's
//! displacement (from the history), u_k body k's material velocity at the
//! contact and P the projection onto the tangent plane (first order, as for
//! [`super::slide`]: a sphere rolling without slip has p_A = p_B, a locked
//! sphere dragged has p_sphere = 0). Body k rocks by θ_k = κ_k p_k (eq. 2),
//! κ_k its curvature at the contact (1/r for a sphere, 0 for a wall, an
//! ellipsoid's mean curvature there as Fang & Negrut 2020 (App. C) take it,
//! [`crate::shape::Shape::mean_curvature`]; shapes with faces and edges:
//! 1/their bounding radius, a stand-in), and
//! its history Θ_k += θ_k. With κ = κ_A + κ_B:
//!
//! | quantity | formula | ref |
//! |---|---|---|
//! | stiffness | K_R = 4 η_r K_E / κ² | eq. 2b |
//! | static / kinetic cap | Θ^s = μ_s N κ / (2 K_E), Θ^k = μ_k N κ / (2 K_E) | eq. 2c |
//! | torque cap | K_R Θ^s = 2 η_r μ_s N / κ (a sphere on a plane: 2 η_r R μ_s N) | Table 1 |
//! | damping | D_R = 2 √(I* K_R), in stick only | §3.2 |
//!
//! The torque on body k is K_R n_k × Θ_k + D_R n_k × θ_k/Δt, with n_k body
//! k's outward normal at the contact: it opposes the rocking (a sphere
//! rolling in +x on a floor is torqued about −y). The two bodies' torques
//! are computed apart and need not be equal and opposite (the paper says
//! so: each rocks on its own surface).
//!
//! **Spin.** The relative turn of B about n over a step, φ = Δt (ω_B − ω_A)·n,
//! accumulates in Φ (eq. 3, with the paper's ψ = −φ). With 𝒦 = 1/R*:
//! K_ψ = η_ψ K_E / 𝒦² (eq. 3c), caps 𝒦 μ_{s,k} N / K_E (so the torque caps
//! are η_ψ μ_{s,k} N R*), D_ψ = 2 √(I* K_ψ) (eq. 3d). The torque on B is
//! −(K_ψ Φ + D_ψ φ/Δt) n and its opposite on A.
//!
//! As for sliding: the modes switch as in the paper (stick → slip past the
//! static cap, slip → stick once within the kinetic one), damping acts in
//! stick only, and in stick spring and damper together stay within the
//! static torque cap. I* is the reduced moment of inertia (a wall: the
//! body's own).

use glam::DVec3;
use serde::{Deserialize, Serialize};

use super::slide::{cap, carry};

/// One body's rolling history at a contact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RollHistory {
    /// The rocking micro-deflection Θ (rad, a vector in the tangent plane
    /// along the contact point's travel).
    pub deflection: DVec3,
    /// Whether it rolls (kinetic mode).
    pub slipping: bool,
}

/// A contact's spinning history.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SpinHistory {
    /// The relative turn Φ (rad) of B about the normal, capped.
    pub deflection: f64,
    /// Whether it spins (kinetic mode).
    pub slipping: bool,
}

/// A contact's resistance coefficients.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResistanceParams {
    /// Static friction μ_s.
    pub mu_s: f64,
    /// Kinetic friction μ_k.
    pub mu_k: f64,
    /// The slide stiffness K_E (N/m).
    pub k_e: f64,
    /// 1/K_E (m/N).
    pub inv_k_e: f64,
    /// √(I* K_E) (kg^{1/2} m N^{1/2}), I* the reduced moment of inertia:
    /// the dampers are 2 √(I* K) with K a multiple of K_E.
    pub root_inertia_k_e: f64,
    /// Rolling resistance η_r.
    pub eta_r: f64,
    /// √η_r.
    pub root_eta_r: f64,
    /// Spinning resistance η_ψ.
    pub eta_psi: f64,
    /// √η_ψ.
    pub root_eta_psi: f64,
    /// 1/Δt (1/s).
    pub inv_dt: f64,
}

#[cfg(test)]
impl ResistanceParams {
    /// The coefficients for μ_s, μ_k, K_E, η_r, η_ψ, the reduced moment of
    /// inertia `i_star` (kg m²) and the step `dt` (what the contact law
    /// computes from its pair's constants instead).
    pub fn new(
        mu_s: f64,
        mu_k: f64,
        k_e: f64,
        eta_r: f64,
        eta_psi: f64,
        i_star: f64,
        dt: f64,
    ) -> Self {
        ResistanceParams {
            mu_s,
            mu_k,
            k_e,
            inv_k_e: 1.0 / k_e,
            root_inertia_k_e: (i_star * k_e).sqrt(),
            eta_r,
            root_eta_r: eta_r.sqrt(),
            eta_psi,
            root_eta_psi: eta_psi.sqrt(),
            inv_dt: 1.0 / dt,
        }
    }
}

/// A contact's rolling springs (module docs' table), the same for both of
/// its bodies: computed once per contact and sub-step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RollSprings {
    /// K_R (N m/rad).
    stiffness: f64,
    /// D_R / Δt (N m/rad).
    damping: f64,
    /// Θ^s and Θ^k (rad).
    caps: (f64, f64),
    /// The static torque cap K_R Θ^s (N m).
    limit: f64,
}

impl RollSprings {
    /// The springs of a contact of total curvature κ = `total` (and
    /// `inv_total` = 1/κ) under the normal force `load`; `None` where it
    /// has no rolling resistance (η_r = 0, K_E = 0 or κ = 0).
    #[inline]
    pub fn new(p: &ResistanceParams, total: f64, inv_total: f64, load: f64) -> Option<Self> {
        if p.eta_r <= 0.0 || total <= 0.0 || p.k_e <= 0.0 {
            return None;
        }
        let scale = 0.5 * total * load * p.inv_k_e;
        // D_R = 2 √(I* K_R) = 4 √η_r √(I* K_E) / κ.
        Some(RollSprings {
            stiffness: 4.0 * p.eta_r * p.k_e * inv_total * inv_total,
            damping: 4.0 * p.root_eta_r * p.root_inertia_k_e * inv_total * p.inv_dt,
            caps: (p.mu_s * scale, p.mu_k * scale),
            limit: 2.0 * p.eta_r * p.mu_s * load * inv_total,
        })
    }
}

/// Advances one body's roll history over a step (module docs): `travel` is
/// the contact point's travel p over the body, `curvature` κ_k, `outward`
/// the body's outward normal, `springs` the contact's (`None`: no rolling
/// resistance, the history cleared); returns the torque on the body.
///
/// Always inlined: a contact calls it for both bodies, and each call is one
/// chain of square roots and divisions; inlined, the two chains overlap
/// (`repose bench --formulation penalty`, one thread: 1.7·10⁶ → 2.0·10⁶
/// particle-steps/s, where it had been 29 % of the time).
#[inline(always)]
pub fn roll(
    h: &mut RollHistory,
    springs: Option<&RollSprings>,
    outward: DVec3,
    travel: DVec3,
    curvature: f64,
) -> DVec3 {
    let Some(sp) = springs else {
        *h = RollHistory::default();
        return DVec3::ZERO;
    };
    let n = outward;
    let rock = travel * curvature;
    let mut theta = carry(h.deflection, n) + rock;
    let (f, slipping) = cap(theta.length_squared(), h.slipping, sp.caps.0, sp.caps.1);
    theta *= f;
    h.deflection = theta;
    h.slipping = slipping;
    let mut torque = n.cross(theta) * sp.stiffness;
    if !slipping {
        torque += n.cross(rock) * sp.damping;
        let t2 = torque.length_squared();
        if t2 > sp.limit * sp.limit {
            torque *= sp.limit / t2.sqrt();
        }
    }
    torque
}

/// Advances a contact's spin history over a step of length `dt` (module
/// docs): `rate` is (ω_B − ω_A)·n, so the turn is φ = Δt · rate;
/// `curvature` 𝒦 = 1/R* and `inv_curvature` = R*. Returns the torque on B
/// about n (A gets its opposite).
#[inline]
pub fn spin(
    h: &mut SpinHistory,
    p: &ResistanceParams,
    rate: f64,
    curvature: f64,
    inv_curvature: f64,
    load: f64,
    dt: f64,
) -> f64 {
    if p.eta_psi <= 0.0 || curvature <= 0.0 || p.k_e <= 0.0 {
        *h = SpinHistory::default();
        return 0.0;
    }
    let turn = dt * rate;
    let mut phi = h.deflection + turn;
    let k_psi = p.eta_psi * p.k_e * inv_curvature * inv_curvature;
    let scale = curvature * load * p.inv_k_e;
    let (f, slipping) = cap(phi * phi, h.slipping, p.mu_s * scale, p.mu_k * scale);
    phi *= f;
    h.deflection = phi;
    h.slipping = slipping;
    let mut torque = -k_psi * phi;
    if !slipping {
        // D_ψ = 2 √(I* K_ψ) = 2 √η_ψ √(I* K_E) / 𝒦, on the rate φ/Δt.
        let d_psi = 2.0 * p.root_eta_psi * p.root_inertia_k_e * inv_curvature;
        torque -= d_psi * rate;
        let limit = p.eta_psi * p.mu_s * load * inv_curvature;
        torque = torque.clamp(-limit, limit);
    }
    torque
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> ResistanceParams {
        ResistanceParams::new(0.25, 0.2, 1e5, 0.3, 0.006, 0.08, 1e-4)
    }

    /// A sphere (R = 0.2 m) rolling on a floor at 0.5 m/s: its rocking
    /// spring saturates, then rolls on at the kinetic torque 2 η_r R μ_k N,
    /// about −y for a roll in +x (opposing ω = +y).
    #[test]
    fn a_rolling_sphere_feels_the_kinetic_roll_torque_against_its_spin() {
        let p = params();
        let (load, dt, r) = (49.0, 1e-4, 0.2);
        let mut h = RollHistory::default();
        let outward = -DVec3::Z; // the sphere is above the floor
        let travel = DVec3::new(0.5 * dt, 0.0, 0.0);
        let mut t = DVec3::ZERO;
        let springs = RollSprings::new(&p, 1.0 / r, r, load);
        for _ in 0..2000 {
            t = roll(&mut h, springs.as_ref(), outward, travel, 1.0 / r);
        }
        assert!(h.slipping, "still sticking");
        let expected = 2.0 * p.eta_r * r * p.mu_k * load;
        assert!(
            (t.y + expected).abs() < 1e-9 * expected,
            "torque {t} vs −{expected} ŷ"
        );
        assert!(t.x.abs() < 1e-12 && t.z.abs() < 1e-12, "torque {t}");
    }

    /// Fang & Negrut 2020, §4.4: a sphere (R = 0.2 m, N = 49 N, μ_k = 0.2,
    /// η_ψ = 0.006) spinning on a floor feels the kinetic spin torque
    /// μ_k N η_ψ R = 0.01176 N m against its spin.
    #[test]
    fn a_spinning_sphere_feels_mu_k_n_eta_psi_r() {
        let p = params();
        let (load, dt, r) = (49.0, 1e-4, 0.2);
        let mut h = SpinHistory::default();
        let mut t = 0.0;
        for _ in 0..5000 {
            t = spin(&mut h, &p, 1.0, 1.0 / r, r, load, dt);
        }
        assert!(h.slipping);
        assert!((t + 0.01176).abs() < 1e-9, "spin torque {t}");
    }
}
