//! A simulation: its constant [`Model`] and its changing [`State`].
//!
//! A [`World`] is what a scene file builds (see `scene`), what
//! [`Stepper::step`](crate::step::Stepper::step) advances (reading the
//! model, writing the state) and what outputs read. Putting a world back
//! where it was — the undo of a diverged step, a checkpoint resumed — is
//! assigning its state ([`World::restore`]).

use crate::bodies::Bodies;
use crate::boundary::Boundary;
use crate::inlet::{InletProgress, InletSettings};
use crate::material::Material;
use crate::model::Model;
use crate::state::State;

/// A simulation: the model and the state (module docs).
#[derive(Clone, Debug)]
pub struct World {
    /// What no step changes.
    pub model: Model,
    /// What the steps change.
    pub state: State,
}

impl World {
    /// A world with the given bodies, boundaries and materials, default
    /// settings ([`Model::new`]), at the start of its run ([`State::new`]).
    pub fn new(bodies: Bodies, boundaries: Vec<Boundary>, materials: Vec<Material>) -> Self {
        World::from_model(Model::new(boundaries, materials), bodies)
    }

    /// `model` with `bodies` at the start of its run ([`State::new`]).
    pub fn from_model(model: Model, bodies: Bodies) -> Self {
        let state = State::new(bodies, &model);
        World { model, state }
    }

    /// Puts `state` in place of the world's, after
    /// [`State::check_fits`]: the world then steps on exactly as it would
    /// have from there. The contact histories are sorted by key as the
    /// steps keep them (a state read from a file may not be).
    pub fn restore(&mut self, state: &State) -> Result<(), String> {
        state.check_fits(&self.model)?;
        self.state.clone_from(state);
        self.state.contact_history.sort_by_key(|&(k, _)| k);
        Ok(())
    }

    /// The boundaries where the state has them now: the model's, each at
    /// its current origin and orientation (for outputs; a step keeps its
    /// own posed copy).
    pub fn boundaries(&self) -> Vec<Boundary> {
        let mut posed = Vec::new();
        self.state.pose_boundaries(&self.model, &mut posed);
        posed
    }

    /// The collision envelope in effect (m): [`Model::envelope`] for the
    /// state's bodies.
    pub fn envelope(&self) -> f64 {
        self.model.envelope(&self.state.bodies)
    }

    /// Each inlet's settings (the model's) and progress (the state's), in
    /// scene order.
    pub fn inlets(&self) -> impl Iterator<Item = (&InletSettings, &InletProgress)> {
        self.model.inlets.iter().zip(&self.state.inlets)
    }

    /// Whether every inlet has emitted all its spheres (true without
    /// inlets).
    pub fn inlets_finished(&self) -> bool {
        self.inlets().all(|(s, p)| p.finished(s))
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

    #[test]
    fn removing_bodies_keeps_the_others_in_order_and_forgets_keyed_state() {
        let mut w = world("column.ron");
        let mut st = Stepper::new();
        for _ in 0..5 {
            st.step(&mut w).unwrap();
        }
        let s = &mut w.state;
        assert!(!s.warm.is_empty(), "a column in contact has warm starts");
        let before = s.bodies.clone();
        s.remove_bodies(&[0, 9, 0]).unwrap();
        assert_eq!(s.bodies.len(), 8);
        assert_eq!(s.bodies.pos[..], before.pos[1..9]);
        assert_eq!(s.bodies.vel[..], before.vel[1..9]);
        assert_eq!(s.bodies.material[..], before.material[1..9]);
        assert!(s.warm.is_empty() && s.contact_history.is_empty());
        let e = s.remove_bodies(&[3, 8]).unwrap_err();
        assert!(e.contains("body id 8 is out of range"), "{e}");
        assert_eq!(s.bodies.len(), 8, "nothing removed on an error");
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
            let kept = w.state.clone();
            for _ in 0..after {
                st.step(&mut w).unwrap();
            }
            let straight = w.state.clone();
            w.restore(&kept).unwrap();
            assert_eq!(w.state, kept, "{scene}: restore gives the captured state");
            for _ in 0..after {
                st.step(&mut w).unwrap();
            }
            assert_eq!(
                w.state, straight,
                "{scene}: the steps after a restore differ from the same steps taken straight"
            );
        }
    }

    #[test]
    fn a_state_of_another_scene_is_refused_by_name() {
        let small = world("repose_small.ron").state;
        let mut column = world("column.ron");
        let e = column.restore(&small).unwrap_err();
        assert!(e.contains("inlets"), "{e}");
    }
}
