//! The penalty (smooth) DEM formulation: bodies overlap a little, and the
//! overlap pushes them apart with a normal force (Hertz or Hooke, damped to
//! a coefficient of restitution, [`normal`]); friction is the
//! micro-deflection springs of Fang & Negrut 2020 with static and kinetic
//! coefficients, for sliding ([`slide`]) and for rolling and spinning
//! ([`roll_spin`]). Small explicit sub-steps integrate it.
//!
//! One step of the scene (`time_step`, which keeps setting output intervals
//! and inlets) is n sub-steps of Δt = h/n, each:
//!
//! ```text
//! collide (overlaps only) ─► forces (normal, then friction with history) ─► integrate
//! ```
//!
//! * **collide**: the same broadphase and narrowphase as the
//!   complementarity formulation ([`crate::collision::detect`]) with a zero
//!   envelope: a contact is an overlap δ = −Φ > 0; bodies of other shapes
//!   give one contact per manifold point. Scenes of spheres keep a Verlet
//!   neighbour list ([`neighbours`]) instead: this stage then only rebuilds
//!   it when stale; `forces` tests the listed pairs and, beside them in the
//!   same parallel region, the boundary contacts: the listed faces where
//!   every boundary is planar and still (`faces`), else those of the
//!   spheres the list has near a boundary (all spheres if a boundary
//!   moves) — the same contacts as a full detection.
//! * **forces**: per contact, the normal force from δ and its rate, then the
//!   friction force and the rolling and spinning torques from the
//!   contact's history (keyed as warm starts are: pair and manifold point;
//!   dropped when the pair separates), both applied at the contact point
//!   (`loads.rs`; with the list, its touching sphere pairs and the
//!   boundary contacts four at a time in SIMD lanes, `lanes.rs`, with the
//!   same bits). Contacts are computed in parallel; each body's loads are
//!   added in the canonical contact order (serially from the world's histories in
//!   general; with the list, per body in parallel from its per-pair loads,
//!   in the integration's pass over the bodies): the same bits for any
//!   number of threads, and the list gives the bits of a full detection.
//! * **integrate**: half-implicit (symplectic) Euler, as Fang & Negrut 2020
//!   use (§4): v ← v + Δt (F/m + g), ω ← ω + Δt I⁻¹ T, then x ← x + Δt v
//!   and the orientation by exp(Δt ω); bodies that are not spheres also
//!   take the implicit torque-free gyroscopic step of [`crate::integrate`].
//!   With the neighbour list, one pass over the spheres sums each one's
//!   loads, advances its velocities and then its position (each sphere's
//!   motion read and written once), and tells whether some sphere has moved
//!   half the skin since the list was built, which the next sub-step's
//!   `collide` reads instead of passing over the spheres again.
//!
//! **The sub-step.** Unless the scene sets `time_step`, Δt is a fifth of the
//! smallest Rayleigh time T_R = π r √(ρ/G) / (0.1631 ν + 0.8766) (G the
//! shear modulus; Hertz) or a twentieth of the smallest contact half-period
//! π √(m*/k) (Hooke), the usual stability margins of explicit DEM; a set
//! `time_step` above that bound is kept and warned about once, with the
//! Rayleigh time.
//!
//! **Material combination.** E* and R* as Hertz's theory has them
//! ([`normal`]); μ_s, μ_k and e the minimum of the two materials' (as for
//! the complementarity cone); K_E the smaller of the two materials' set
//! values, else 2/7 of the contact's normal stiffness.

//!
//! **The files.** This one holds the formulation's settings and the types
//! its parts share (a contact's history, a material pair's coefficients);
//! `step` is the scene step and its sub-steps, `workspace` what a stepper
//! keeps between steps, `neighbours` and `faces` the neighbour list's pairs
//! and boundary faces, `loads` and `lanes` one contact's law (scalar and
//! four at a time), `normal`, `slide` and `roll_spin` the laws' parts,
//! `held` the packed histories the list keeps, `wall_sums` the loads on the
//! boundaries and `records` the contact table of a state.

mod faces;
mod held;
mod lanes;
mod loads;
pub mod neighbours;
pub mod normal;
pub mod records;
pub mod roll_spin;
pub mod slide;
mod step;
mod wall_sums;
mod workspace;

use glam::DVec3;
use serde::{Deserialize, Serialize};

pub use normal::NormalModel;
pub use roll_spin::{RollHistory, SpinHistory};
pub use slide::SlideHistory;
pub use step::{stable_time_step, step};
pub use wall_sums::wall_loads;
pub use workspace::PenaltyWorkspace;

/// The penalty formulation's settings (`formulation: Penalty(…)` in a scene).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PenaltySettings {
    /// The normal force law: `Hertz` (default) or `Hooke(stiffness: k)`.
    pub normal: NormalModel,
    /// The sub-step Δt (s); `None`: from the stiffness (module docs).
    pub time_step: Option<f64>,
    /// The rolling resistance: the tracked micro-deflection of
    /// Fang & Negrut 2020 (`Tracked`, the default, from the materials'
    /// `roll_eta`) or the legacy constant torque
    /// (`ConstantTorque(coefficient: μ_r)`).
    pub rolling: RollingModel,
    /// The neighbour list's skin (m): sphere pairs closer than this are
    /// listed and checked every sub-step, the list rebuilt once a sphere
    /// has moved half of it ([`neighbours`]). `None`: adapted at each
    /// rebuild to how fast the spheres move ([`neighbours`], "The adapted
    /// skin"); `Some(0.0)`: no list, a full detection every sub-step. The
    /// skin changes the speed only, never the results.
    pub skin: Option<f64>,
    /// The spin stiffness: `Heuristic` (the default, Fang & Negrut 2020,
    /// eq. 3c, K_ψ = η_ψ K_E R*², from the materials' `spin_eta`) or
    /// `Hertz` (App. C eqs. 12–14: the slide spring spread over the Hertz
    /// contact disk of radius a = √(R* δ), K_ψ = a² K_E / 2, caps
    /// μ N / (K_E a), so the spin torque peaks at a μ_s N / 2; every
    /// contact, whatever `spin_eta`).
    pub spinning: SpinModel,
}

/// How spinning is resisted in the penalty formulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum SpinModel {
    /// Fang & Negrut 2020, §3.3 eq. 3c, with 𝒦 = 1/R* and the materials' η_ψ.
    #[default]
    Heuristic,
    /// Fang & Negrut 2020, App. C: 𝒦 = 1/a, η_ψ = 1/2.
    Hertz,
}

/// How rolling is resisted in the penalty formulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum RollingModel {
    /// The rocking springs of Fang & Negrut 2020, §3.2 ([`roll_spin`]), from
    /// `roll_eta`.
    #[default]
    Tracked,
    /// The legacy model of Fang & Negrut 2020, App. A.2 eq. 8: a torque of
    /// constant size μ_r R* N against the relative angular velocity,
    /// M = −μ_r R* N (ω_A − ω_B)/‖ω_A − ω_B‖ on A and −M on B. Near rest
    /// ω cannot reach zero and the torque flips sign every step (the
    /// chatter the paper shows); kept to show it.
    ConstantTorque {
        /// The rolling coefficient μ_r (dimensionless, ≥ 0).
        coefficient: f64,
    },
}

impl PenaltySettings {
    /// Named problems with the settings: (field, reason).
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let NormalModel::Hooke { stiffness } = self.normal {
            if !(stiffness > 0.0 && stiffness.is_finite()) {
                out.push((
                    "normal.stiffness",
                    format!("must be finite and > 0 (got {stiffness})"),
                ));
            }
        }
        if let RollingModel::ConstantTorque { coefficient } = self.rolling {
            if !(coefficient >= 0.0 && coefficient.is_finite()) {
                out.push((
                    "rolling.coefficient",
                    format!("must be finite and ≥ 0 (got {coefficient})"),
                ));
            }
        }
        if let Some(skin) = self.skin {
            if !(skin >= 0.0 && skin.is_finite()) {
                out.push(("skin", format!("must be finite and ≥ 0 (got {skin})")));
            }
        }
        if let Some(dt) = self.time_step {
            if !(dt > 0.0 && dt.is_finite()) {
                out.push(("time_step", format!("must be finite and > 0 (got {dt})")));
            }
        }
        out
    }
}

/// One contact's history across sub-steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ContactHistory {
    /// Sliding micro-deflection and mode (Fang & Negrut 2020, §3.1).
    pub slide: SlideHistory,
    /// Rocking micro-deflection and mode of body A, then B (§3.2).
    pub roll: [RollHistory; 2],
    /// Relative spin micro-deflection and mode (§3.3).
    pub spin: SpinHistory,
    /// The contact point at the last sub-step (m); `None` at onset.
    pub point: Option<DVec3>,
}

/// What a contact takes from its two materials (module docs, "Material
/// combination").
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PairCoefficients {
    /// ζ of the normal model for the smaller restitution.
    pub zeta: f64,
    /// E* (Pa).
    pub e_star: f64,
    /// μ_s, the smaller of the two.
    pub mu_s: f64,
    /// μ_k, the smaller of the two.
    pub mu_k: f64,
    /// K_E: the smaller of the set values, `None` where neither sets it.
    pub slide_stiffness: Option<f64>,
    /// η_r, the smaller.
    pub eta_r: f64,
    /// √η_r.
    pub root_eta_r: f64,
    /// η_ψ, the smaller.
    pub eta_psi: f64,
    /// √η_ψ.
    pub root_eta_psi: f64,
}
