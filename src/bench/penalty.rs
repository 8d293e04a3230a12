//! The penalty formulation's benchmark (`repose bench --formulation
//! penalty`, `cargo bench`): particle-steps per second — bodies × sub-steps
//! ÷ wall time, everything in the step included (neighbour list, boundary
//! contacts, forces with history, integration) — on a scene under the
//! penalty formulation, by default `scenes/bench_penalty_bed.ron` (6,000
//! spheres settling into a bed: Hertz, slide, roll and spin friction with
//! history). The scene is first stepped `warm` steps so that the timed
//! steps see a bed in contact rather than spheres in free fall.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::formulation::Formulation;
use crate::scene::Scene;
use crate::step::Stepper;
use crate::world::World;

/// What one penalty benchmark measured.
#[derive(Clone, Debug, Serialize)]
pub struct PenaltyBench {
    /// The scene's name.
    pub scene: String,
    /// Bodies at the end (a scene with inlets adds some while timed: use
    /// one without, as the default bed is).
    pub particles: usize,
    /// Rayon threads.
    pub threads: usize,
    /// Scene steps taken before timing.
    pub warm_steps: usize,
    /// Scene steps timed.
    pub timed_steps: usize,
    /// Sub-steps in the timed steps.
    pub substeps: u64,
    /// The sub-step Δt (s).
    pub substep_seconds: f64,
    /// Mean over the timed steps of the contacts at each step's last sub-step.
    pub mean_contacts: f64,
    /// Wall time of the timed steps (s).
    pub seconds: f64,
    /// Bodies × sub-steps ÷ wall time.
    pub particle_steps_per_second: f64,
    /// Seconds per stage of the timed steps.
    pub stage_seconds: BTreeMap<String, f64>,
    /// Times the neighbour list was rebuilt in the timed steps (0 where
    /// the scene runs without one).
    pub list_rebuilds: u64,
}

/// A benchmark scene's world after its warm-up.
pub struct Warmed {
    /// The scene's name.
    pub name: String,
    /// The world.
    pub world: World,
    /// Its stepper (neighbour list and histories warm).
    pub stepper: Stepper,
}

/// Loads `scene` (which must use the penalty formulation) and steps it
/// `warm` times.
pub fn warm_world(scene: &Path, warm: usize) -> Result<Warmed> {
    let s = Scene::load(scene, &[])?;
    if !matches!(s.formulation, Formulation::Penalty(_)) {
        bail!(
            "{}: the penalty benchmark needs a scene with `formulation: Penalty(…)`",
            scene.display()
        );
    }
    let mut world = s.build()?;
    let mut st = Stepper::new();
    for k in 0..warm {
        st.step(&mut world)
            .with_context(|| format!("warm-up step {} of {}", k + 1, warm))?;
    }
    Ok(Warmed {
        name: s.name,
        world,
        stepper: st,
    })
}

/// Times `steps` scene steps of a warmed world.
pub fn time_steps(w: &mut Warmed, steps: usize) -> Result<PenaltyBench> {
    let (world, st) = (&mut w.world, &mut w.stepper);
    st.timers = Default::default();
    let rebuilds = st.penalty_rebuilds();
    let (mut substeps, mut contacts) = (0u64, 0usize);
    let t0 = Instant::now();
    for k in 0..steps {
        let r = st
            .step(world)
            .with_context(|| format!("timed step {} of {steps}", k + 1))?;
        substeps += r.substeps;
        contacts += r.contacts;
    }
    let seconds = t0.elapsed().as_secs_f64();
    let particles = world.state.bodies.len();
    Ok(PenaltyBench {
        scene: w.name.clone(),
        particles,
        threads: rayon::current_num_threads(),
        warm_steps: world.state.step_index as usize - steps,
        timed_steps: steps,
        substeps,
        substep_seconds: world.model.time_step * steps as f64 / substeps.max(1) as f64,
        mean_contacts: contacts as f64 / steps.max(1) as f64,
        seconds,
        particle_steps_per_second: (particles as u64 * substeps) as f64 / seconds,
        stage_seconds: st.timers.seconds(),
        list_rebuilds: st.penalty_rebuilds() - rebuilds,
    })
}

impl std::fmt::Display for PenaltyBench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total: f64 = self.stage_seconds.values().sum();
        let shares: Vec<String> = self
            .stage_seconds
            .iter()
            .filter(|(_, v)| **v > 0.01 * total)
            .map(|(k, v)| format!("{k} {:.0} %", 100.0 * v / total))
            .collect();
        write!(
            f,
            "penalty, {}: {} particles, {:.0} contacts, {} steps after {} warm-up ({} sub-steps of {:.2e} s) \
             in {:.2} s on {} threads: {:.3e} particle-steps/s ({}; {} neighbour-list rebuilds)",
            self.scene,
            self.particles,
            self.mean_contacts,
            self.timed_steps,
            self.warm_steps,
            self.substeps,
            self.substep_seconds,
            self.seconds,
            self.threads,
            self.particle_steps_per_second,
            shares.join(", "),
            self.list_rebuilds
        )
    }
}
