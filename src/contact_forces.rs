//! The loads of a step's contacts, one record per contact: the two ends,
//! the contact point and normal, the gap, and the force and torque split
//! into their normal, tangential, spinning and rolling parts. The contact
//! output of a run (`contacts.pvd`, `contacts_NNNNN.csv`,
//! [`crate::output::contacts`]) and the Python module's
//! `Simulation.contacts()` read them.
//!
//! The rigid formulations (complementarity, pyramid LCP) solve for the
//! impulses γ = (γ_n, γ_u, γ_w, τ_n, τ_u, τ_w) of a step in the contact
//! frame [n, u, w] ([`crate::problem`]); the records hold the mean loads
//! over the step, γ / h, acting on end B (their opposites on end A):
//!
//! ```text
//! normal_force     f_n = γ_n / h                 (scalar, along n)
//! tangential_force f_t = (γ_u u + γ_w w) / h     (world vector)
//! spinning_torque  t_s = τ_n / h                 (scalar, about n)
//! rolling_torque   t_r = (τ_u u + τ_w w) / h     (world vector)
//! ```
//!
//! so that each body's velocity update v⁺ = v + h g + M⁻¹ D γ
//! (Tasora & Anitescu 2013, eq. 44) reads
//! m (v⁺ − v) / h = m g + Σ ±(f_n n + f_t) over its contacts, and
//! I (ω⁺ − ω) / h = Σ ±(s × (f_n n + f_t) + t_s n + t_r) with s the lever
//! arm from its centre to the contact point.
//!
//! The contact point is where the step posed the contact: body A's centre
//! at the step's start plus the lever arm. The start is x⁺ − h v⁺ (the
//! position update x⁺ = x + h v⁺, [`crate::integrate`]), which recovers it
//! to rounding without keeping a copy of the positions. The lever arms
//! from each end's centre to the point are kept beside it (`arm_a`,
//! `arm_b`), as the step posed them.
//!
//! The penalty formulation's records are the loads at the state itself
//! (its sub-steps' contacts come and go within a step):
//! [`crate::formulation::penalty::records`].

use glam::DVec3;

use crate::bodies::Bodies;
use crate::problem::{ContactProblem, Vec6};

/// The per-contact loads of one step (module docs), as structs of arrays.
/// Ends are body ids; `body_b` is [`crate::collision::NO_BODY`] where end
/// B is a boundary, whose index `wall` then holds
/// ([`crate::collision::NO_WALL`] between two bodies).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContactForces {
    /// End A: a body.
    pub body_a: Vec<u32>,
    /// End B: a body, or `NO_BODY` for a boundary.
    pub body_b: Vec<u32>,
    /// The boundary of end B (index in the scene's boundaries), or `NO_WALL`.
    pub wall: Vec<u32>,
    /// The contact point (m).
    pub point: Vec<DVec3>,
    /// The lever arm from body A's centre to the point (m), as posed.
    pub arm_a: Vec<DVec3>,
    /// The lever arm from body B's centre to the point (m); zero for a
    /// boundary.
    pub arm_b: Vec<DVec3>,
    /// The unit normal, from A towards B.
    pub normal: Vec<DVec3>,
    /// The signed distance (m): negative when the ends overlap.
    pub gap: Vec<f64>,
    /// The normal force on B (N), along `normal`.
    pub normal_force: Vec<f64>,
    /// The tangential force on B (N).
    pub tangential_force: Vec<DVec3>,
    /// The spinning torque on B about `normal` (N m).
    pub spinning_torque: Vec<f64>,
    /// The rolling torque on B (N m), perpendicular to `normal`.
    pub rolling_torque: Vec<DVec3>,
    /// The elastic energy the contact stores (J): the penalty
    /// formulation's springs ([`crate::formulation::penalty::records`]);
    /// zero for the rigid formulations, whose contacts store none.
    pub elastic_energy: Vec<f64>,
}

impl ContactForces {
    /// Number of contacts.
    pub fn len(&self) -> usize {
        self.body_a.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.body_a.is_empty()
    }

    /// The whole force on B of contact `k`: f_n n + f_t (N).
    pub fn force(&self, k: usize) -> DVec3 {
        self.normal_force[k] * self.normal[k] + self.tangential_force[k]
    }

    /// The elastic energy contact `k` stores (J); 0 where the records
    /// hold none for it (records put together without energies).
    pub fn energy(&self, k: usize) -> f64 {
        self.elastic_energy.get(k).copied().unwrap_or(0.0)
    }

    /// The contact torque on B of contact `k` (besides the force's moment):
    /// t_s n + t_r (N m).
    pub fn torque(&self, k: usize) -> DVec3 {
        self.spinning_torque[k] * self.normal[k] + self.rolling_torque[k]
    }

    /// The records of a rigid step: its problem `p`, its impulses `gamma`
    /// (one per contact of `p`), the bodies after the step and the step's
    /// length `h` (module docs).
    ///
    /// # Panics
    /// When `gamma` is not one impulse per contact of `p` (the stepper keeps
    /// them together).
    pub fn from_impulses(p: &ContactProblem, gamma: &[Vec6], bodies: &Bodies, h: f64) -> Self {
        let m = p.n_contacts();
        assert_eq!(gamma.len(), m, "one impulse per contact");
        let mut out = ContactForces {
            body_a: p.body_a.clone(),
            body_b: p.body_b.clone(),
            wall: p.wall.clone(),
            arm_a: p.arm_a.clone(),
            arm_b: p.arm_b.clone(),
            gap: p.gap.clone(),
            elastic_energy: vec![0.0; m],
            ..Default::default()
        };
        out.point.reserve(m);
        out.normal.reserve(m);
        out.normal_force.reserve(m);
        out.tangential_force.reserve(m);
        out.spinning_torque.reserve(m);
        out.rolling_torque.reserve(m);
        for (k, g) in gamma.iter().enumerate() {
            let [n, u, w] = p.frame[k];
            let a = p.body_a[k] as usize;
            let start = bodies.pos[a] - h * bodies.vel[a];
            out.point.push(start + p.arm_a[k]);
            out.normal.push(n);
            out.normal_force.push(g[0] / h);
            out.tangential_force.push((g[1] * u + g[2] * w) / h);
            out.spinning_torque.push(g[3] / h);
            out.rolling_torque.push((g[4] * u + g[5] * w) / h);
        }
        out
    }
}
