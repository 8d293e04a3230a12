//! The sliding friction of Fang & Negrut 2020: a micro-deflection spring S
//! in the tangent plane with a static and a kinetic cap (§3.1, eqs. 1a–1c).
//!
//! Per contact and per step of length Δt, with n the contact normal (from
//! body A toward body B) and u the velocity of B's material point at the
//! contact relative to A's:
//!
//! 1. **Carry S into the new tangent plane**: S ← |S| · P(S)/|P(S)| with
//!    P(x) = x − (x·n) n. The paper continues the contact frame (App. B)
//!    and keeps S's components in it; to first order in the frame's turn
//!    that is this projection with the length kept.
//! 2. **Increment** (eq. 1a): ΔS = p_A − p_B, the contact point's travel
//!    over A's surface minus its travel over B's. Over one step both travel
//!    from the same geometric contact point, so p_A − p_B is the
//!    displacement of B's material point relative to A's, ΔS = Δt P(u): the
//!    first-order form of the paper's geodesic arcs (its assumption 1:
//!    small relative motion per step). Rolling without slip gives ΔS = 0.
//! 3. **Cap and mode** (after eq. 1a): in stick, if |S| > μ_s N/K_E, S is
//!    scaled to that length and the contact turns kinetic; in slip, if
//!    |S| > μ_k N/K_E it is scaled to that length, else the contact sticks
//!    again.
//! 4. **Force** (eq. 1b) on B: F = −(K_E S + K_D ΔS/Δt), and +F on A, at the
//!    contact point; K_D = 2 √(m* K_E) (eq. 1c, m* the reduced mass, the
//!    body's own against a wall). The damping acts in stick only: the
//!    paper's conclusions say so, and its §4.1 sliding brick accelerates at
//!    g sin α − μ_k N/m, which a damping force on the slip rate would spoil.
//! 5. **Where repose differs**: in stick, spring and damper *together* are
//!    held to μ_s N. The paper caps the spring alone and leaves the damper
//!    out of the yield test; with one contact of constant N (its tests) the
//!    two agree, but on a body resting on several points whose loads
//!    fluctuate (a box on four corners), a point that re-sticks while the
//!    body slides brings its damper back at the full slip rate, K_D v,
//!    above μ_s N: such dampers held a box that must slide
//!    (tan α > μ_s) to a creep of 0.2 mm/s instead of g (sin α − μ_k cos α).
//!
//! History per contact (and per manifold point): S and the mode, kept
//! across steps and neighbour-list rebuilds by the contact's key, dropped
//! when the pair separates.

use glam::DVec3;
use serde::{Deserialize, Serialize};

/// The stick/slip rule of Fang & Negrut 2020 on a micro-deflection of
/// squared length `len2` (step 3 of the module docs; the rolling and
/// spinning springs use it too): in stick, past the static cap it is scaled
/// to that cap and slips; in slip, past the kinetic cap it is scaled to
/// that cap, else it sticks. Returns the scale to apply (≤ 1) and whether
/// it slips. The lengths are compared squared: a deflection within its cap
/// (most contacts of a settled bed) takes no square root.
#[inline]
pub(super) fn cap(len2: f64, slipping: bool, static_cap: f64, kinetic_cap: f64) -> (f64, bool) {
    let limit = if slipping { kinetic_cap } else { static_cap };
    if len2 > limit * limit {
        (limit / len2.sqrt(), true)
    } else {
        (1.0, false)
    }
}

/// A deflection carried into the tangent plane of unit normal `n`, its
/// length kept (step 1 of the module docs; the rolling and spinning springs
/// carry theirs the same way).
#[inline]
pub(super) fn carry(deflection: DVec3, n: DVec3) -> DVec3 {
    let len2 = deflection.length_squared();
    if len2 == 0.0 {
        return DVec3::ZERO;
    }
    let carried = deflection - n * deflection.dot(n);
    let c2 = carried.length_squared();
    if c2 > 0.0 {
        carried * (len2 / c2).sqrt()
    } else {
        DVec3::ZERO
    }
}

/// One contact's sliding history.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SlideHistory {
    /// The micro-deflection S (m), in world coordinates, in the tangent plane.
    pub deflection: DVec3,
    /// Whether the contact slips (kinetic mode); a new contact sticks.
    pub slipping: bool,
}

/// A contact's sliding coefficients.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlideParams {
    /// Static friction μ_s.
    pub mu_s: f64,
    /// Kinetic friction μ_k.
    pub mu_k: f64,
    /// Spring stiffness K_E (N/m).
    pub stiffness: f64,
    /// 1/K_E (m/N).
    pub inv_stiffness: f64,
    /// The damper K_D = 2 √(m* K_E) (N s/m), m* the reduced mass.
    pub damping: f64,
}

#[cfg(test)]
impl SlideParams {
    /// The coefficients for μ_s, μ_k, K_E = `stiffness` and the reduced
    /// mass `m_star` (what the contact law computes from its pair's
    /// constants instead).
    pub fn new(mu_s: f64, mu_k: f64, stiffness: f64, m_star: f64) -> Self {
        SlideParams {
            mu_s,
            mu_k,
            stiffness,
            inv_stiffness: 1.0 / stiffness,
            damping: 2.0 * (m_star * stiffness).sqrt(),
        }
    }
}

/// Advances one contact's history over a step of length `dt` (module docs,
/// steps 1–3) and returns the friction force on body B (step 4).
/// `normal` is the unit normal, `rel` the relative velocity u, `load` the
/// normal force N ≥ 0.
#[inline]
pub fn slide(
    h: &mut SlideHistory,
    p: &SlideParams,
    normal: DVec3,
    rel: DVec3,
    load: f64,
    dt: f64,
) -> DVec3 {
    // P(u): ΔS/Δt, the damper's rate.
    let rate = rel - normal * rel.dot(normal);
    let step = rate * dt;
    let s = carry(h.deflection, normal) + step;
    let k = p.stiffness;
    let reach = load * p.inv_stiffness;
    let (scale, slipping) = cap(
        s.length_squared(),
        h.slipping,
        p.mu_s * reach,
        p.mu_k * reach,
    );
    h.slipping = slipping;
    h.deflection = s * scale;
    let s = h.deflection;
    let mut force = s * k;
    if !h.slipping {
        force += rate * p.damping;
        // Spring and damper together stay within μ_s N (module docs, 5).
        let limit = p.mu_s * load;
        let f2 = force.length_squared();
        if f2 > limit * limit {
            force *= limit / f2.sqrt();
        }
    }
    -force
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> SlideParams {
        SlideParams::new(0.25, 0.2, 1e5, 1.0)
    }

    /// A contact dragged steadily sticks until the spring reaches μ_s N,
    /// then slips at μ_k N (its elastic part), and sticks again once the
    /// drag stops; the force always opposes B's motion and stays in the
    /// tangent plane.
    #[test]
    fn the_spring_sticks_up_to_the_static_cap_then_slips_at_the_kinetic_one() {
        let p = params();
        let n = DVec3::Z;
        let (load, dt) = (10.0, 1e-4);
        let mut h = SlideHistory::default();
        let u = DVec3::new(1e-3, 0.0, 0.0);
        let mut peak: f64 = 0.0;
        let mut steps_to_slip = 0;
        for k in 0..1000 {
            let f = slide(&mut h, &p, n, u, load, dt);
            assert!(f.x < 0.0 && f.z == 0.0, "step {k}: {f}");
            peak = peak.max(h.deflection.length() * p.stiffness);
            if h.slipping && steps_to_slip == 0 {
                steps_to_slip = k + 1;
            }
        }
        // μ_s N / K_E = 2.5e-5 m at 1e-7 m a step: the 250th step reaches
        // the cap (the 251st, if rounding leaves the 250th a hair below it);
        // the damper, K_D u = 0.63 N, stays within μ_s N all along.
        assert!(
            (250..=251).contains(&steps_to_slip),
            "steps to slip: {steps_to_slip}"
        );
        assert!(
            (peak - p.mu_s * load).abs() < 1e-9,
            "peak elastic force {peak}"
        );
        let elastic = h.deflection.length() * p.stiffness;
        assert!(
            (elastic - p.mu_k * load).abs() < 1e-9,
            "kinetic elastic force {elastic}"
        );
        // The drag stops: the spring is within the kinetic cap, it sticks.
        slide(&mut h, &p, n, DVec3::ZERO, load, dt);
        assert!(!h.slipping, "still slipping at rest");
    }
}
