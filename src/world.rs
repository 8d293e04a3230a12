//! The simulation state and its fixed description: bodies, boundaries,
//! materials, gravity, time step and the contact and solver settings.
//!
//! A [`World`] is what a scene file builds (see `scene`), what
//! [`World::step`](crate::step) advances, and what outputs read.

use std::collections::HashMap;

use glam::DVec3;
use serde::{Deserialize, Serialize};

use crate::bodies::Bodies;
use crate::boundary::Boundary;
use crate::formulation::penalty::ContactHistory;
use crate::formulation::Formulation;
use crate::inlet::Inlet;
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

/// Warm-start memory: the last impulse of each persistent contact pair, in
/// world coordinates so it survives the contact frame turning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WarmImpulse {
    /// Force impulse F = γ_n n + γ_u u + γ_w w (N s).
    pub force: DVec3,
    /// Torque impulse T = τ_n n + τ_u u + τ_w w (N m s).
    pub torque: DVec3,
}

/// The state of a simulation.
#[derive(Clone, Debug)]
pub struct World {
    /// Dynamic spheres.
    pub bodies: Bodies,
    /// Kinematic boundaries.
    pub boundaries: Vec<Boundary>,
    /// Materials table (bodies and boundaries index it).
    pub materials: Vec<Material>,
    /// Gravity (m/s²).
    pub gravity: DVec3,
    /// Time step h (s).
    pub time_step: f64,
    /// Simulated time (s).
    pub time: f64,
    /// Steps taken.
    pub step_index: u64,
    /// Contact detection and stabilisation settings.
    pub contact: ContactSettings,
    /// Contact solver settings.
    pub solver: SolverSettings,
    /// Warm-start impulses keyed by contact pair.
    pub warm: HashMap<u64, WarmImpulse>,
    /// Particle inlets: they append spheres to `bodies` during the run
    /// (the `emit` stage of a step).
    pub inlets: Vec<Inlet>,
    /// The contact formulation the steps use.
    pub formulation: Formulation,
    /// The penalty formulation's per-contact history (friction
    /// micro-deflections and modes) by contact key, sorted by key (keys
    /// unique); empty otherwise. A sorted vector, not a map: the neighbour
    /// list writes it at the end of every step in key order without
    /// hashing, and checkpoints store it as it is.
    pub contact_history: Vec<(u64, ContactHistory)>,
}

impl World {
    /// A world with the given bodies, boundaries and materials, default settings.
    pub fn new(bodies: Bodies, boundaries: Vec<Boundary>, materials: Vec<Material>) -> Self {
        World {
            bodies,
            boundaries,
            materials,
            gravity: DVec3::new(0.0, 0.0, -9.81),
            time_step: 1e-3,
            time: 0.0,
            step_index: 0,
            contact: ContactSettings::default(),
            solver: SolverSettings::default(),
            warm: HashMap::new(),
            inlets: Vec::new(),
            formulation: Formulation::Complementarity,
            contact_history: Vec::new(),
        }
    }

    /// Removes the bodies `ids` (each < the number of bodies; repeats
    /// allowed): the others keep their order and take ids 0, 1, … again.
    /// The warm-start impulses and the penalty contact history are keyed by
    /// ids, so both are dropped: the next step starts cold, as after a
    /// restart. An id out of range is an error that names it, and nothing
    /// is removed.
    pub fn remove_bodies(&mut self, ids: &[usize]) -> Result<(), String> {
        let n = self.bodies.len();
        if let Some(&bad) = ids.iter().find(|&&i| i >= n) {
            return Err(format!(
                "body id {bad} is out of range: the world has {n} bodies (ids 0 to {})",
                n as i64 - 1
            ));
        }
        if ids.is_empty() {
            return Ok(());
        }
        let mut keep = vec![true; n];
        for &i in ids {
            keep[i] = false;
        }
        self.bodies.retain(&keep);
        self.warm.clear();
        self.contact_history.clear();
        Ok(())
    }

    /// The collision envelope in effect (m): as set, or 0.1 × the largest
    /// radius of the bodies and of the spheres the inlets will emit (so it
    /// does not change as an inlet fills the world).
    pub fn envelope(&self) -> f64 {
        let r_max = self
            .inlets
            .iter()
            .map(|i| i.settings.radius_max)
            .fold(self.bodies.max_radius(), f64::max);
        self.contact.envelope.unwrap_or(0.1 * r_max)
    }
}

#[cfg(test)]
mod tests {
    use crate::scene::Scene;
    use crate::step::Stepper;

    #[test]
    fn removing_bodies_keeps_the_others_in_order_and_forgets_keyed_state() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/column.ron");
        let mut w = Scene::load(&path, &[]).unwrap().build().unwrap();
        let mut st = Stepper::new();
        for _ in 0..5 {
            st.step(&mut w).unwrap();
        }
        assert!(!w.warm.is_empty(), "a column in contact has warm starts");
        let before = w.bodies.clone();
        w.remove_bodies(&[0, 9, 0]).unwrap();
        assert_eq!(w.bodies.len(), 8);
        assert_eq!(w.bodies.pos[..], before.pos[1..9]);
        assert_eq!(w.bodies.vel[..], before.vel[1..9]);
        assert_eq!(w.bodies.material[..], before.material[1..9]);
        assert!(w.warm.is_empty() && w.contact_history.is_empty());
        let e = w.remove_bodies(&[3, 8]).unwrap_err();
        assert!(e.contains("body id 8 is out of range"), "{e}");
        assert_eq!(w.bodies.len(), 8, "nothing removed on an error");
    }
}
