//! The changing part of a simulation, as one value: what a step may change
//! and what a run needs to go on where it was.
//!
//! A [`World`](crate::world::World) is a constant [`Model`] (materials,
//! boundary geometry and motion, gravity, time step, settings) and a
//! [`State`]: the bodies' motion and the spheres inlets emitted, the
//! boundaries' poses, the simulated time and step counter, the warm-start
//! impulses, the penalty formulation's contact histories and each inlet's
//! progress (its count and random-number stream). A step reads the model
//! and writes the state, so the one value serves every use that must put a
//! world back exactly where it was — the undo of a step that made the
//! bodies non-finite (a copy of the state) and the checkpoint a run
//! resumes from (the state written out) — as MuJoCo gets and sets its
//! `mjData` by named parts. Nothing that changes is outside it, so the
//! state a diverged run ends in and the state a checkpoint holds cannot
//! disagree.
//!
//! Every part is written in an order that does not depend on hashing (warm
//! starts and contact histories sorted by contact key, boundaries and inlets
//! in scene order), so equal states are equal values and give equal files.
//! The warm starts are held as a map and sorted only when written: the
//! step loop copies the state before every step.

use std::collections::HashMap;

use glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};

use crate::bodies::Bodies;
use crate::boundary::Boundary;
use crate::formulation::penalty::ContactHistory;
use crate::inlet::InletProgress;
use crate::model::Model;

/// Warm-start memory: the last impulse of each persistent contact pair, in
/// world coordinates so it survives the contact frame turning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WarmImpulse {
    /// Force impulse F = γ_n n + γ_u u + γ_w w (N s).
    pub force: DVec3,
    /// Torque impulse T = τ_n n + τ_u u + τ_w w (N m s).
    pub torque: DVec3,
}

/// The part of a simulation that changes during a run (module docs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// All bodies, those emitted by inlets included.
    pub bodies: Bodies,
    /// Simulated time (s).
    pub time: f64,
    /// Steps taken.
    pub step_index: u64,
    /// Each boundary's origin (m), in scene order: moving walls advance.
    pub boundary_origins: Vec<DVec3>,
    /// Each boundary's orientation, in scene order: turning meshes turn
    /// (the identity for every other boundary).
    pub boundary_rotations: Vec<DQuat>,
    /// Warm-start impulses by contact key (a map: the step loop copies it
    /// every step to undo one, without sorting); written to files as a
    /// list sorted by key (`sorted_by_key`).
    #[serde(with = "sorted_by_key")]
    pub warm: HashMap<u64, WarmImpulse>,
    /// The penalty formulation's per-contact history (friction
    /// micro-deflections and modes) by contact key, sorted by key (keys
    /// unique); empty otherwise. A sorted vector, not a map: the neighbour
    /// list writes it at the end of every step in key order without
    /// hashing, and checkpoints store it as it is.
    pub contact_history: Vec<(u64, ContactHistory)>,
    /// Each inlet's progress, in scene order.
    pub inlets: Vec<InletProgress>,
}

impl State {
    /// The state at the start of a run of `model` with `bodies`: time 0,
    /// the boundaries where the model placed them, no warm starts or
    /// contact histories, every inlet at its start.
    pub fn new(bodies: Bodies, model: &Model) -> Self {
        State {
            bodies,
            time: 0.0,
            step_index: 0,
            boundary_origins: model.boundaries.iter().map(|b| b.origin).collect(),
            boundary_rotations: model.boundaries.iter().map(|b| b.rotation()).collect(),
            warm: HashMap::new(),
            contact_history: Vec::new(),
            inlets: model.inlets.iter().map(InletProgress::new).collect(),
        }
    }

    /// Checks that this state fits `model` (the model of the scene it was
    /// captured from): contact histories with each key once, as many inlets
    /// and boundaries, bodies whose arrays agree and whose materials exist.
    /// The reason where not (a state read from a file can be anything).
    pub fn check_fits(&self, model: &Model) -> Result<(), String> {
        let mut keys: Vec<u64> = self.contact_history.iter().map(|&(k, _)| k).collect();
        keys.sort_unstable();
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("the contact histories hold key {:#x} twice", w[0]));
        }
        if self.inlets.len() != model.inlets.len() {
            return Err(format!(
                "there are {} inlets but the scene has {}",
                self.inlets.len(),
                model.inlets.len()
            ));
        }
        self.bodies
            .check_arrays()
            .map_err(|e| format!("the bodies: {e}"))?;
        if !self
            .bodies
            .material
            .iter()
            .all(|&m| (m as usize) < model.materials.len())
        {
            return Err("the bodies use materials the scene does not have".into());
        }
        if self.boundary_origins.len() != model.boundaries.len() {
            return Err(format!(
                "there are {} boundaries but the scene has {}",
                self.boundary_origins.len(),
                model.boundaries.len()
            ));
        }
        if self.boundary_rotations.len() != model.boundaries.len() {
            return Err(format!(
                "there are {} boundary orientations but the scene has {} boundaries",
                self.boundary_rotations.len(),
                model.boundaries.len()
            ));
        }
        Ok(())
    }

    /// The model's boundaries where this state has them, into `posed`:
    /// each at its origin and, for a mesh, orientation. `clone_from` reuses
    /// `posed`'s allocations (names; meshes are shared).
    pub fn pose_boundaries(&self, model: &Model, posed: &mut Vec<Boundary>) {
        posed.clone_from(&model.boundaries);
        self.place_boundaries(posed);
    }

    /// Moves `posed` (this state's model's boundaries, posed before) to
    /// where this state has them now: a step's sub-steps, after each
    /// moves the poses.
    pub fn place_boundaries(&self, posed: &mut [Boundary]) {
        let poses = self.boundary_origins.iter().zip(&self.boundary_rotations);
        for (b, (&o, &q)) in posed.iter_mut().zip(poses) {
            b.origin = o;
            b.set_rotation(q);
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
}

/// A map by contact key written as the list of its (key, value) pairs
/// sorted by key, so that equal maps give equal files whatever the order
/// of hashing (the bytes of a `Vec<(u64, V)>` of the same pairs).
mod sorted_by_key {
    use std::collections::HashMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, V: Serialize>(
        map: &HashMap<u64, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut pairs: Vec<(&u64, &V)> = map.iter().collect();
        pairs.sort_unstable_by_key(|&(k, _)| *k);
        s.collect_seq(pairs)
    }

    pub fn deserialize<'de, D: Deserializer<'de>, V: Deserialize<'de>>(
        d: D,
    ) -> Result<HashMap<u64, V>, D::Error> {
        Ok(Vec::<(u64, V)>::deserialize(d)?.into_iter().collect())
    }
}
