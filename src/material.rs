//! Materials and the rule that combines two materials into one contact's
//! friction coefficients.
//!
//! Combination rule: each coefficient of a contact is the **minimum** of the
//! two surfaces' coefficients (the weaker surface governs): μ = min(μ_a, μ_b),
//! ρ = min(ρ_a, ρ_b), σ = min(σ_a, σ_b). A sphere touching a wall combines its
//! material with the wall's.

use serde::{Deserialize, Serialize};

/// Surface and bulk properties of a material.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Material {
    /// Name, for logs and error messages.
    #[serde(default)]
    pub name: String,
    /// Sliding friction coefficient μ (dimensionless, ≥ 0).
    pub friction: f64,
    /// Rolling friction ρ: the lever arm of the rolling-resistance torque (m, ≥ 0);
    /// Tasora & Anitescu 2013, eq. 31, ρ γ_n ≥ ‖(τ_u, τ_w)‖.
    #[serde(default)]
    pub rolling: f64,
    /// Spinning friction σ (m, ≥ 0); Tasora & Anitescu 2013, eq. 31,
    /// σ γ_n ≥ |τ_n|.
    #[serde(default)]
    pub spinning: f64,
    /// Density (kg/m³) used by spheres that give no explicit mass.
    #[serde(default = "default_density")]
    pub density: f64,
    /// Young's modulus E (Pa, > 0) of the penalty formulation's normal
    /// force ([`crate::formulation::penalty`]); complementarity scenes ignore
    /// it. Default 10⁷ Pa: soft, as DEM codes usually take it, so that the
    /// contact time (and with it the step) stays large.
    #[serde(default = "default_young_modulus")]
    pub young_modulus: f64,
    /// Poisson's ratio ν (in [0, 0.5)) of the penalty normal force; default 0.3.
    #[serde(default = "default_poisson_ratio")]
    pub poisson_ratio: f64,
    /// Coefficient of normal restitution e (in (0, 1]) that sets the penalty
    /// normal damping; default 0.5.
    #[serde(default = "default_restitution")]
    pub restitution: f64,
    /// Static sliding friction μ_s of the penalty formulation
    /// (Fang & Negrut 2020, §3.1; ≥ the kinetic one); default: `friction`.
    #[serde(default)]
    pub static_friction: Option<f64>,
    /// Kinetic sliding friction μ_k of the penalty formulation (> 0 where
    /// μ_s > 0); default: `friction`.
    #[serde(default)]
    pub kinetic_friction: Option<f64>,
    /// Stiffness K_E (N/m, > 0) of the slide micro-deflection spring
    /// (Fang & Negrut 2020, eq. 1b); default: 2/7 of the contact's normal
    /// stiffness dF_n/dδ (the tangential-to-normal stiffness ratio of an
    /// elastic sphere with ν ≈ 0.3), evaluated as the contact is loaded.
    #[serde(default)]
    pub slide_stiffness: Option<f64>,
    /// Rolling resistance η_r (≥ 0) of the penalty formulation
    /// (Fang & Negrut 2020, §3.2): the rolling torque is capped at
    /// 2 η_r μ N / (κ_A + κ_B), a sphere on a plane 2 η_r R μ N; default 0
    /// (none).
    #[serde(default)]
    pub roll_eta: f64,
    /// Spinning resistance η_ψ (≥ 0) of the penalty formulation
    /// (Fang & Negrut 2020, §3.3): the spin torque is capped at η_ψ μ N R*;
    /// default 0 (none).
    #[serde(default)]
    pub spin_eta: f64,
}

impl Default for Material {
    fn default() -> Self {
        Material {
            name: String::new(),
            friction: 0.5,
            rolling: 0.0,
            spinning: 0.0,
            density: default_density(),
            young_modulus: default_young_modulus(),
            poisson_ratio: default_poisson_ratio(),
            restitution: default_restitution(),
            static_friction: None,
            kinetic_friction: None,
            slide_stiffness: None,
            roll_eta: 0.0,
            spin_eta: 0.0,
        }
    }
}

impl Material {
    /// μ_s: `static_friction`, else `friction`.
    pub fn mu_static(&self) -> f64 {
        self.static_friction.unwrap_or(self.friction)
    }

    /// μ_k: `kinetic_friction`, else `friction`.
    pub fn mu_kinetic(&self) -> f64 {
        self.kinetic_friction.unwrap_or(self.friction)
    }
}

fn default_young_modulus() -> f64 {
    1e7
}

fn default_poisson_ratio() -> f64 {
    0.3
}

fn default_restitution() -> f64 {
    0.5
}

/// The contact law: which complementarity problem a contact's cone defines.
///
/// * `Associated` — the convex relaxation of Tasora & Anitescu 2013
///   (eqs. 38–42): the relative velocity y must lie in the dual cone,
///   γ ∈ C, y ∈ C*, γ ⊥ y. It is a convex QP, but a sliding contact
///   separates at the speed μ‖u_T‖ + ρ‖ω_R‖ + σ|ω_n| (the dilatancy of
///   Tasora & Anitescu 2013, eq. 28).
/// * `DeSaxce` — the non-associated law of Acary & Bourrier 2021
///   (eqs. 32–33, 63), extended by the spinning term: the *modified* velocity
///   ŷ = y + (μ‖u_T‖ + ρ‖ω_R‖ + σ|ω_n|, 0, 0, 0, 0, 0) must lie in C*, with
///   γ ⊥ ŷ. Sliding contacts keep their gap (no dilatancy); the problem is no
///   longer a QP and is solved by fixed-point type iterations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FrictionLaw {
    /// Convex relaxation of Tasora & Anitescu 2013 (default).
    #[default]
    Associated,
    /// Non-associated De Saxcé law of Acary & Bourrier 2021.
    DeSaxce,
}

fn default_density() -> f64 {
    2500.0
}

/// The friction coefficients of one contact: the cone of
/// Tasora & Anitescu 2013, eq. 31.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct ConeCoeffs {
    /// Sliding friction μ.
    pub mu: f64,
    /// Rolling friction ρ (m).
    pub rho: f64,
    /// Spinning friction σ (m).
    pub sigma: f64,
}

impl ConeCoeffs {
    /// Combines two materials by the minimum rule stated in the module docs.
    pub fn combine(a: &Material, b: &Material) -> Self {
        ConeCoeffs {
            mu: a.friction.min(b.friction),
            rho: a.rolling.min(b.rolling),
            sigma: a.spinning.min(b.spinning),
        }
    }
}
