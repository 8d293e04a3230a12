//! What the penalty stepper keeps between steps that is derived from the
//! world and its settings, not part of its state: the damping ratios and
//! the material-pair coefficients (module docs of [`super`], "Material
//! combination"), the sub-step's load buffers and the neighbour list.

use std::collections::HashMap;

use glam::DVec3;

use super::loads::Loads;
use super::neighbours;
use super::normal::{self, NormalModel};
use super::{ContactHistory, PairCoefficients};
use crate::collision::ContactGeom;
use crate::material::Material;

/// What the penalty stepper keeps between steps that is derived, not state
/// (so checkpoints need not hold it).
#[derive(Default)]
pub struct PenaltyWorkspace {
    /// ζ per (model, restitution bits): the bisection of
    /// [`normal::damping_ratio`] runs once per value.
    pub(super) zeta: HashMap<(u8, u64), f64>,
    /// Whether the too-large sub-step has been warned about.
    pub(super) warned: bool,
    pub(super) force: Vec<DVec3>,
    pub(super) torque: Vec<DVec3>,
    /// The coefficients of each pair of materials (row-major, materials ×
    /// materials) for the step's normal model, refreshed once per scene step.
    pub(super) pair_table: Vec<PairCoefficients>,
    /// The sub-step's per-contact loads and new histories (the general
    /// driver's).
    pub(super) loads: Vec<(Loads, ContactHistory)>,
    /// The list driver's sphere–boundary contacts of the sub-step.
    pub(super) walls: Vec<ContactGeom>,
    /// Their loads.
    pub(super) wall_loads: Vec<Loads>,
    /// Where each body's contacts begin in `walls` (one more entry than bodies).
    pub(super) wall_start: Vec<u32>,
    /// Per boundary, Σ over the step's sub-steps of the bodies' force on it
    /// and their torque about its origin, times Δt ([`wall_impulses`]).
    pub(super) wall_impulse: Vec<(DVec3, DVec3)>,
    /// Per boundary, its contacts with a load at the last sub-step.
    pub(super) wall_count: Vec<usize>,
    /// The sphere pairs to check each sub-step.
    pub neighbours: neighbours::NeighbourList,
}

impl PenaltyWorkspace {
    pub(super) fn zeta(&mut self, model: NormalModel, e: f64) -> f64 {
        let tag = match model {
            NormalModel::Hertz => 0,
            NormalModel::Hooke { .. } => 1,
        };
        *self
            .zeta
            .entry((tag, e.to_bits()))
            .or_insert_with(|| normal::damping_ratio(model, e))
    }

    /// Fills `pair_table` (module docs, "Material combination").
    pub(super) fn refresh_pair_table(&mut self, model: NormalModel, materials: &[Material]) {
        let mut table = std::mem::take(&mut self.pair_table);
        table.clear();
        for ma in materials {
            for mb in materials {
                table.push(PairCoefficients {
                    zeta: self.zeta(model, ma.restitution.min(mb.restitution)),
                    e_star: normal::effective_modulus(
                        ma.young_modulus,
                        ma.poisson_ratio,
                        mb.young_modulus,
                        mb.poisson_ratio,
                    ),
                    mu_s: ma.mu_static().min(mb.mu_static()),
                    mu_k: ma.mu_kinetic().min(mb.mu_kinetic()),
                    slide_stiffness: match (ma.slide_stiffness, mb.slide_stiffness) {
                        (Some(x), Some(y)) => Some(x.min(y)),
                        (x, None) | (None, x) => x,
                    },
                    eta_r: ma.roll_eta.min(mb.roll_eta),
                    root_eta_r: ma.roll_eta.min(mb.roll_eta).sqrt(),
                    eta_psi: ma.spin_eta.min(mb.spin_eta),
                    root_eta_psi: ma.spin_eta.min(mb.spin_eta).sqrt(),
                });
            }
        }
        self.pair_table = table;
    }
}
