//! The penalty formulation's normal force: Hertz or Hooke elasticity with a
//! viscous term set from a coefficient of restitution.
//!
//! | model | elastic force | damping | stiffness dF/dδ |
//! |---|---|---|---|
//! | Hertz (Fang & Negrut 2020, App. C eq. 15) | k δ^{3/2}, k = (4/3) E* √R* | ζ √(k m*) δ^{1/4} δ̇ | (3/2) k √δ |
//! | Hooke (Fang & Negrut 2020, §4.5.1) | k δ | ζ √(k m*) δ̇ | k |
//!
//! with the overlap δ > 0, its rate δ̇, 1/E* = (1 − ν_a²)/E_a + (1 − ν_b²)/E_b,
//! 1/R* = 1/R_a + 1/R_b (a wall: R_b = ∞) and the reduced mass m* (a wall:
//! the body's mass). The force never pulls: F_n = max(0, elastic + damping).
//!
//! **Damping from restitution.** With x = δ/X and τ = t/T, T² = m*/(k X^{1/2})
//! (Hertz; T² = m*/k for Hooke), both models become x'' = −x^{p} − ζ x^{q} x'
//! (Hertz p = 3/2, q = 1/4; Hooke p = 1, q = 0) with ζ = c/√(k m*): the
//! coefficient of restitution depends on ζ alone, not on the impact speed
//! (Tsuji et al. 1992 chose the δ^{1/4} factor for that). [`damping_ratio`]
//! finds the ζ that gives a wanted e by integrating that equation, with the
//! no-pull clamp, and bisecting on ζ: the restitution is the set one for
//! either model (the closed forms of the literature, e.g. ζ = −2 ln e /
//! √(π² + ln² e) for Hooke, ignore the clamp or, for Hertz, approximate).

use serde::{Deserialize, Serialize};

/// The normal force law of the penalty formulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum NormalModel {
    /// Hertz: stiffness from the materials' Young's moduli and Poisson
    /// ratios and the bodies' radii (the default).
    #[default]
    Hertz,
    /// Hooke: a linear spring of the given stiffness (N/m) for every contact.
    Hooke {
        /// Normal stiffness k_n (N/m, > 0).
        stiffness: f64,
    },
}

impl NormalModel {
    /// The exponents (p, q) of the dimensionless equation (module docs).
    fn exponents(self) -> (f64, f64) {
        match self {
            NormalModel::Hertz => (1.5, 0.25),
            NormalModel::Hooke { .. } => (1.0, 0.0),
        }
    }
}

/// One contact's normal force and what the friction model needs of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormalForce {
    /// F_n ≥ 0 (N), pushing the bodies apart.
    pub force: f64,
    /// dF_n/dδ of the elastic part (N/m), for the default slide stiffness.
    pub stiffness: f64,
    /// δ^{1/4} for Hertz (the damping's shape factor), 1 for Hooke: the
    /// stiffness's square root varies with δ as this does, and so do the
    /// friction springs' dampers, √(m K_E), where K_E is 2/7 of it.
    pub quarter: f64,
}

/// What a contact's normal law needs, for a pair whose E*, R*, m* and ζ
/// stay the same: the spring coefficient k and the damping coefficient
/// ζ √(k m*) (module docs' table).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormalParams {
    /// k: (4/3) E* √R* for Hertz, the set stiffness for Hooke.
    pub k: f64,
    /// ζ √(k m*).
    pub damping: f64,
}

impl NormalParams {
    /// The coefficients of `model` for effective modulus `e_star` (Pa;
    /// unused by Hooke), effective radius `r_star` (m; unused by Hooke),
    /// reduced mass `m_star` (kg) and damping ratio `zeta`.
    pub fn new(model: NormalModel, e_star: f64, r_star: f64, m_star: f64, zeta: f64) -> Self {
        let k = match model {
            NormalModel::Hertz => 4.0 / 3.0 * e_star * r_star.sqrt(),
            NormalModel::Hooke { stiffness } => stiffness,
        };
        NormalParams {
            k,
            damping: zeta * (k * m_star).sqrt(),
        }
    }
}

/// The normal force at overlap `delta` (> 0) closing at `rate` = δ̇.
#[inline]
pub fn normal_force(model: NormalModel, p: &NormalParams, delta: f64, rate: f64) -> NormalForce {
    let (elastic, stiffness, quarter) = match model {
        NormalModel::Hertz => {
            let root = delta.sqrt();
            (p.k * delta * root, 1.5 * p.k * root, root.sqrt())
        }
        NormalModel::Hooke { .. } => (p.k * delta, p.k, 1.0),
    };
    let damping = p.damping * quarter * rate;
    NormalForce {
        // Not `max(0.0)`, whose sign of a zero is unspecified: the lanes'
        // law (`lanes.rs`) selects the same +0.
        force: if elastic + damping > 0.0 {
            elastic + damping
        } else {
            0.0
        },
        stiffness,
        quarter,
    }
}

/// 1/E* of two materials (module docs).
pub fn effective_modulus(e_a: f64, nu_a: f64, e_b: f64, nu_b: f64) -> f64 {
    1.0 / ((1.0 - nu_a * nu_a) / e_a + (1.0 - nu_b * nu_b) / e_b)
}

/// The restitution of the dimensionless impact x'' = −x^p − ζ x^q x' from
/// x = 0, x' = 1, with the no-pull clamp: the rebound speed when the
/// bodies part (x back to 0) or the force has vanished for good.
fn restitution_of(model: NormalModel, zeta: f64) -> f64 {
    let (p, q) = model.exponents();
    // The undamped contact lasts about 3 time units (Hertz 3.22, Hooke π):
    // 20,000 steps of velocity Verlet resolve it to far below 1e-6.
    let dt = 2e-4;
    let accel = |x: f64, v: f64| -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        (-(x.powf(p)) - zeta * x.powf(q) * v).min(0.0)
    };
    let (mut x, mut v) = (0.0f64, 1.0f64);
    let mut a = accel(x, v);
    for _ in 0..1_000_000 {
        // Semi-implicit in v for the damping: a at the predicted velocity.
        let vh = v + 0.5 * dt * a;
        x += dt * vh;
        let a_new = accel(x, vh + 0.5 * dt * a);
        v = vh + 0.5 * dt * a_new;
        a = a_new;
        if x <= 0.0 {
            return -v;
        }
        // Clamped at zero force while still overlapping and moving apart:
        // it leaves at this speed.
        if v < 0.0 && a == 0.0 {
            return -v;
        }
    }
    -v
}

/// The damping ratio ζ (module docs) that makes `model`'s impacts rebound
/// with restitution `e` ∈ (0, 1]: 0 for e = 1, else by bisection on the
/// dimensionless impact to 1e-10 in e.
pub fn damping_ratio(model: NormalModel, e: f64) -> f64 {
    if e >= 1.0 {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while restitution_of(model, hi) > e {
        hi *= 2.0;
        if hi > 1e6 {
            return hi;
        }
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if restitution_of(model, mid) > e {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hooke's closed form without the clamp, ζ = −2 ln e / √(π² + ln² e),
    /// is a lower bound: the clamp cuts the pulling end of the contact,
    /// so the same e needs a little more damping. Undamped, e = 1.
    #[test]
    fn damping_ratio_gives_the_asked_restitution() {
        for model in [NormalModel::Hertz, NormalModel::Hooke { stiffness: 1.0 }] {
            assert_eq!(damping_ratio(model, 1.0), 0.0);
            let e1 = restitution_of(model, 0.0);
            assert!((e1 - 1.0).abs() < 1e-6, "{model:?}: undamped e = {e1}");
            for e in [0.1, 0.4, 0.5, 0.9] {
                let z = damping_ratio(model, e);
                let got = restitution_of(model, z);
                assert!((got - e).abs() < 1e-8, "{model:?}: e {e} → ζ {z} → {got}");
            }
        }
        let e: f64 = 0.5;
        let closed = -2.0 * e.ln() / (std::f64::consts::PI.powi(2) + e.ln().powi(2)).sqrt();
        let z = damping_ratio(NormalModel::Hooke { stiffness: 1.0 }, e);
        assert!(
            z >= closed && z < 1.2 * closed,
            "Hooke ζ {z} vs closed form {closed}"
        );
    }
}
