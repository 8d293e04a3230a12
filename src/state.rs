//! The changing part of a simulation, as one value: what a step may change
//! and what a run needs to go on where it was.
//!
//! A [`World`] holds its constant description (materials, boundary
//! geometry, gravity, time step, settings) beside the parts that change as
//! it steps. [`State`] names those parts — the bodies' motion and the
//! spheres inlets emitted, the boundaries' poses, the simulated time and
//! step counter, the warm-start impulses, the penalty formulation's contact
//! histories and each inlet's progress (its count and random-number stream)
//! — so that one [`State::capture`] and one [`State::restore`] serve every
//! use that must put a world back exactly where it was: the undo of a step
//! that made the bodies non-finite, and the checkpoint a run resumes from
//! (as MuJoCo gets and sets its `mjData` by named parts). Nothing of the
//! world's state is left out of either, so the state a diverged run ends in
//! and the state a checkpoint holds cannot disagree.
//!
//! Every part is written in an order that does not depend on hashing (warm
//! starts and contact histories sorted by contact key, boundaries and inlets
//! in scene order), so equal states are equal values and give equal files.
//! The warm starts are held as the world holds them, a map, and sorted only
//! when written: the step loop copies the state before every step.

use std::collections::HashMap;

use glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};

use crate::bodies::Bodies;
use crate::formulation::penalty::ContactHistory;
use crate::inlet::InletProgress;
use crate::world::{WarmImpulse, World};

/// The part of a [`World`] that changes during a run (module docs).
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
    /// Warm-start impulses by contact key, as the world keeps them (a map:
    /// the step loop copies it every step to undo one, without sorting);
    /// written to files as a list sorted by key (`sorted_by_key`).
    #[serde(with = "sorted_by_key")]
    pub warm: HashMap<u64, WarmImpulse>,
    /// The penalty formulation's contact histories by key, sorted by key.
    pub contact_history: Vec<(u64, ContactHistory)>,
    /// Each inlet's progress, in scene order.
    pub inlets: Vec<InletProgress>,
}

impl State {
    /// The changing state of `world`.
    pub fn capture(world: &World) -> Self {
        let mut s = State::default();
        s.capture_from(world);
        s
    }

    /// Overwrites `self` with the changing state of `world`, reusing this
    /// value's allocations (the step loop keeps one to undo a step).
    pub fn capture_from(&mut self, world: &World) {
        self.bodies.clone_from(&world.bodies);
        self.time = world.time;
        self.step_index = world.step_index;
        self.boundary_origins.clear();
        self.boundary_origins
            .extend(world.boundaries.iter().map(|b| b.origin));
        self.boundary_rotations.clear();
        self.boundary_rotations
            .extend(world.boundaries.iter().map(|b| b.rotation()));
        self.warm.clone_from(&world.warm);
        self.contact_history.clone_from(&world.contact_history);
        self.inlets.clear();
        self.inlets
            .extend(world.inlets.iter().map(|i| i.progress()));
    }

    /// Checks that this state fits `world` (a world built from the same
    /// scene): contact histories with each key once, as many inlets and
    /// boundaries, bodies whose arrays agree and whose materials exist.
    /// The reason where not (a state read from a file can be anything).
    pub fn check_fits(&self, world: &World) -> Result<(), String> {
        let mut keys: Vec<u64> = self.contact_history.iter().map(|&(k, _)| k).collect();
        keys.sort_unstable();
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("the contact histories hold key {:#x} twice", w[0]));
        }
        if self.inlets.len() != world.inlets.len() {
            return Err(format!(
                "there are {} inlets but the scene has {}",
                self.inlets.len(),
                world.inlets.len()
            ));
        }
        self.bodies
            .check_arrays()
            .map_err(|e| format!("the bodies: {e}"))?;
        if !self
            .bodies
            .material
            .iter()
            .all(|&m| (m as usize) < world.materials.len())
        {
            return Err("the bodies use materials the scene does not have".into());
        }
        if self.boundary_origins.len() != world.boundaries.len() {
            return Err(format!(
                "there are {} boundaries but the scene has {}",
                self.boundary_origins.len(),
                world.boundaries.len()
            ));
        }
        if self.boundary_rotations.len() != world.boundaries.len() {
            return Err(format!(
                "there are {} boundary orientations but the scene has {} boundaries",
                self.boundary_rotations.len(),
                world.boundaries.len()
            ));
        }
        Ok(())
    }

    /// Puts this state into `world`, a world built from the same scene (or
    /// the world it was captured from), after [`Self::check_fits`]: the
    /// world then steps on exactly as it would have from here.
    pub fn restore(&self, world: &mut World) -> Result<(), String> {
        self.check_fits(world)?;
        for ((b, &o), &q) in world
            .boundaries
            .iter_mut()
            .zip(&self.boundary_origins)
            .zip(&self.boundary_rotations)
        {
            b.origin = o;
            b.set_rotation(q);
        }
        for (inlet, p) in world.inlets.iter_mut().zip(&self.inlets) {
            inlet.restore(p.clone());
        }
        world.bodies.clone_from(&self.bodies);
        world.time = self.time;
        world.step_index = self.step_index;
        world.warm.clone_from(&self.warm);
        world.contact_history.clone_from(&self.contact_history);
        // Sorted as the world keeps it (a state read from a file may not be).
        world.contact_history.sort_by_key(|&(k, _)| k);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::Scene;
    use crate::step::Stepper;

    fn world(name: &str) -> World {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenes")
            .join(name);
        Scene::load(&path, &[]).unwrap().build().unwrap()
    }

    /// A world restored to a state captured earlier steps on to the same
    /// bits as one that never left it: nothing that changes is missing
    /// from the state (inlets' streams, warm starts and moving walls
    /// included: the small pile's inlet is still pouring, the drum turns).
    #[test]
    fn a_restored_state_steps_on_as_the_captured_one() {
        for (scene, before, after) in [("repose_small.ron", 40, 20), ("drum.ron", 20, 10)] {
            let mut w = world(scene);
            let mut st = Stepper::new();
            for _ in 0..before {
                st.step(&mut w).unwrap();
            }
            let kept = State::capture(&w);
            for _ in 0..after {
                st.step(&mut w).unwrap();
            }
            let straight = State::capture(&w);
            kept.restore(&mut w).unwrap();
            assert_eq!(
                State::capture(&w),
                kept,
                "{scene}: restore gives the captured state"
            );
            for _ in 0..after {
                st.step(&mut w).unwrap();
            }
            assert_eq!(
                State::capture(&w),
                straight,
                "{scene}: the steps after a restore differ from the same steps taken straight"
            );
        }
    }

    #[test]
    fn a_state_of_another_scene_is_refused_by_name() {
        let small = State::capture(&world("repose_small.ron"));
        let mut column = world("column.ron");
        let e = small.restore(&mut column).unwrap_err();
        assert!(e.contains("inlets"), "{e}");
    }
}
