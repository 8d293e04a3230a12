//! Contact formulations: which model of contact a scene's steps use, the
//! one seam between them. A scene picks one with
//! `formulation: …`; every formulation shares the scene, bodies, boundaries,
//! inlets, collision, outputs and analysis, and [`crate::step::Stepper`]
//! hands the world to the chosen one's own module with one `match`.
//!
//! | formulation | contact | a step | module |
//! |---|---|---|---|
//! | `Complementarity` (default) | rigid, nonsmooth: the 6-D cone complementarity problem of Tasora & Anitescu 2013 and Acary & Bourrier 2021 (sliding, rolling and spinning friction) | one solve per step | [`complementarity`], [`crate::problem`], [`crate::solver`] |
//! | `PyramidLcp(…)` | rigid with relaxation: the faceted Coulomb cone of Peiret et al. 2017 with phantom inertia, sliding friction only; small systems | one dense LCP per step, solved by Lemke's method | [`pyramid`] |
//! | `Penalty(…)` | smooth: bodies overlap; Hertz or Hooke normal force damped to a restitution; the micro-deflection friction of Fang & Negrut 2020 with static and kinetic coefficients | explicit sub-steps | [`penalty`] |

pub mod complementarity;
pub mod penalty;
pub mod pyramid;
pub mod stage;

use serde::{Deserialize, Serialize};

/// The contact formulation of a scene (module docs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Formulation {
    /// Rigid contact as a cone complementarity problem (today's default).
    #[default]
    Complementarity,
    /// Penalty (smooth) DEM ([`penalty::PenaltySettings`]).
    Penalty(penalty::PenaltySettings),
    /// The pyramid LCP of Peiret et al. 2017, solved by Lemke's method
    /// ([`pyramid::PyramidSettings`]).
    PyramidLcp(pyramid::PyramidSettings),
}

impl Formulation {
    /// A short name: `complementarity`, `penalty` or `pyramid-lcp`.
    pub fn name(&self) -> &'static str {
        match self {
            Formulation::Complementarity => "complementarity",
            Formulation::Penalty(_) => "penalty",
            Formulation::PyramidLcp(_) => "pyramid-lcp",
        }
    }
}
