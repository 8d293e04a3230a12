//! Dynamic bodies (spheres) as structs of arrays.
//!
//! Every per-body quantity lives in its own `Vec`, indexed by body id, so the
//! solver and collision stages stream through exactly the fields they need
//! (MuJoCo's model/data split, Box2D's body SoA). Spheres have isotropic
//! inertia, so angular velocities are kept in the world frame and the
//! orientation quaternion only matters for output and for tracking spin.

use glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};

/// All dynamic spheres of a simulation, one entry per body in each vector.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bodies {
    /// Centre positions (m).
    pub pos: Vec<DVec3>,
    /// Orientations as unit quaternions (body → world).
    pub rot: Vec<DQuat>,
    /// Linear velocities (m/s).
    pub vel: Vec<DVec3>,
    /// Angular velocities in the world frame (rad/s).
    pub omega: Vec<DVec3>,
    /// Radii (m).
    pub radius: Vec<f64>,
    /// Inverse masses (1/kg).
    pub inv_mass: Vec<f64>,
    /// Inverse scalar moments of inertia about the centre (1/(kg m²)).
    pub inv_inertia: Vec<f64>,
    /// Index into the scene's materials table.
    pub material: Vec<u32>,
}

/// The initial state of one sphere, as scene generators produce it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SphereInit {
    /// Centre position (m).
    pub pos: DVec3,
    /// Radius (m).
    pub radius: f64,
    /// Mass (kg).
    pub mass: f64,
    /// Moment of inertia about the centre (kg m²).
    pub inertia: f64,
    /// Linear velocity (m/s).
    pub vel: DVec3,
    /// Angular velocity, world frame (rad/s).
    pub omega: DVec3,
    /// Material index.
    pub material: u32,
}

impl SphereInit {
    /// Mass of a solid sphere of the given radius and density: (4/3) π r³ ρ.
    pub fn solid_mass(radius: f64, density: f64) -> f64 {
        4.0 / 3.0 * std::f64::consts::PI * radius.powi(3) * density
    }

    /// Moment of inertia of a solid sphere about its centre: (2/5) m r².
    pub fn solid_inertia(mass: f64, radius: f64) -> f64 {
        0.4 * mass * radius * radius
    }
}

impl Bodies {
    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// True when there are no bodies.
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// Appends one sphere; returns its body id.
    pub fn push(&mut self, s: &SphereInit) -> usize {
        self.pos.push(s.pos);
        self.rot.push(DQuat::IDENTITY);
        self.vel.push(s.vel);
        self.omega.push(s.omega);
        self.radius.push(s.radius);
        self.inv_mass.push(1.0 / s.mass);
        self.inv_inertia.push(1.0 / s.inertia);
        self.material.push(s.material);
        self.len() - 1
    }

    /// Builds the arrays from a list of sphere initial states.
    pub fn from_inits(inits: &[SphereInit]) -> Self {
        let mut b = Bodies::default();
        for s in inits {
            b.push(s);
        }
        b
    }

    /// Total kinetic energy, translational plus rotational (J).
    pub fn kinetic_energy(&self) -> f64 {
        (0..self.len())
            .map(|i| {
                0.5 * self.vel[i].length_squared() / self.inv_mass[i]
                    + 0.5 * self.omega[i].length_squared() / self.inv_inertia[i]
            })
            .sum()
    }

    /// The largest radius (0 when empty).
    pub fn max_radius(&self) -> f64 {
        self.radius.iter().copied().fold(0.0, f64::max)
    }
}
