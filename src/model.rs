//! The constant description of a simulation: what a scene fixes and no
//! step changes.
//!
//! A [`Model`] holds the boundaries as the scene placed them (geometry,
//! prescribed motion and pose at t = 0), the materials, gravity, the time
//! step, the contact, solver and formulation settings and the inlets'
//! settings. What a step changes — the bodies, the boundaries' poses, time,
//! warm starts, contact histories, the inlets' progress — is the
//! [`State`](crate::state::State) beside it, as MuJoCo keeps its constant
//! `mjModel` apart from its changing `mjData`. A step reads the model and
//! writes the state ([`crate::step::Stepper::advance`]); what the model
//! holds is what a device-resident step uploads once.

use glam::DVec3;
use serde::{Deserialize, Serialize};

use crate::bodies::Bodies;
use crate::boundary::Boundary;
use crate::formulation::Formulation;
use crate::inlet::InletSettings;
use crate::material::{FrictionLaw, Material};
use crate::solver::SolverSettings;

/// Settings of contact detection and stabilisation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContactSettings {
    /// Collision envelope (m): pairs closer than this enter the problem.
    /// `None` = 0.1 × the largest sphere radius.
    pub envelope: Option<f64>,
    /// Largest speed (m/s) at which the stabilisation term b = Φ/h pushes
    /// penetrating bodies apart (the usual clamp on the recovery speed).
    pub max_recovery_speed: f64,
    /// The contact law: `Associated` (the convex relaxation of
    /// Tasora & Anitescu 2013, the default) or `DeSaxce` (the
    /// non-associated law of Acary & Bourrier 2021, no dilatancy).
    pub friction_law: FrictionLaw,
}

impl Default for ContactSettings {
    fn default() -> Self {
        ContactSettings {
            envelope: None,
            max_recovery_speed: 0.5,
            friction_law: FrictionLaw::Associated,
        }
    }
}

/// The constant part of a simulation (module docs).
#[derive(Clone, Debug)]
pub struct Model {
    /// Kinematic boundaries as the scene placed them: their poses at
    /// t = 0 (where they are now is the state's,
    /// [`State::boundary_origins`](crate::state::State::boundary_origins)).
    pub boundaries: Vec<Boundary>,
    /// Materials table (bodies and boundaries index it).
    pub materials: Vec<Material>,
    /// Gravity (m/s²).
    pub gravity: DVec3,
    /// Time step h (s).
    pub time_step: f64,
    /// Contact detection and stabilisation settings.
    pub contact: ContactSettings,
    /// Contact solver settings.
    pub solver: SolverSettings,
    /// The contact formulation the steps use.
    pub formulation: Formulation,
    /// Particle inlets' settings (their progress is the state's): they
    /// append spheres to the bodies during the run (the `emit` stage).
    pub inlets: Vec<InletSettings>,
}

impl Model {
    /// A model with the given boundaries and materials and default
    /// settings: gravity −9.81 m/s² along z, h = 1 ms, no inlets, the
    /// complementarity formulation.
    pub fn new(boundaries: Vec<Boundary>, materials: Vec<Material>) -> Self {
        Model {
            boundaries,
            materials,
            gravity: DVec3::new(0.0, 0.0, -9.81),
            time_step: 1e-3,
            contact: ContactSettings::default(),
            solver: SolverSettings::default(),
            formulation: Formulation::Complementarity,
            inlets: Vec::new(),
        }
    }

    /// The boundaries' names, in scene order (what `walls.csv` and the
    /// contact records name them by).
    pub fn boundary_names(&self) -> Vec<String> {
        self.boundaries.iter().map(|b| b.name.clone()).collect()
    }

    /// The collision envelope in effect (m): as set, or 0.1 × the largest
    /// radius of `bodies` and of the spheres the inlets will emit (so it
    /// does not change as an inlet fills the world).
    pub fn envelope(&self, bodies: &Bodies) -> f64 {
        let r_max = self
            .inlets
            .iter()
            .map(|s| s.radius_max)
            .fold(bodies.max_radius(), f64::max);
        self.contact.envelope.unwrap_or(0.1 * r_max)
    }
}
