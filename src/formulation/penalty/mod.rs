//! The penalty (smooth) DEM formulation: bodies overlap a little, and the
//! overlap pushes them apart with a normal force (Hertz or Hooke, damped to
//! a coefficient of restitution, [`normal`]); friction is seed 003's
//! micro-deflection springs with static and kinetic coefficients, for
//! sliding ([`slide`]) and for rolling and spinning ([`roll_spin`]). Small
//! explicit sub-steps integrate it.
//!
//! One step of the scene (`time_step`, which keeps setting output intervals
//! and inlets) is n sub-steps of Δt = h/n, each:
//!
//! ```text
//! collide (overlaps only) ─► forces (normal, then friction with history) ─► integrate
//! ```
//!
//! * **collide**: the same broadphase and narrowphase as the
//!   complementarity formulation ([`crate::collision::detect`]) with a zero
//!   envelope: a contact is an overlap δ = −Φ > 0; bodies of other shapes
//!   give one contact per manifold point. Sphere pairs come from a Verlet
//!   neighbour list ([`neighbours`]), the same contacts as a full detection.
//! * **forces**: per contact, the normal force from δ and its rate, then the
//!   friction force and the rolling and spinning torques from the
//!   contact's history (keyed as warm starts are:
//!   pair and manifold point; dropped when the pair separates), both
//!   applied at the contact point. Contacts are computed in parallel and
//!   added to their bodies in the canonical contact order: the same bits
//!   for any number of threads.
//! * **integrate**: half-implicit (symplectic) Euler, as seed 003 §4 uses:
//!   v ← v + Δt (F/m + g), ω ← ω + Δt I⁻¹ T, then x ← x + Δt v and the
//!   orientation by exp(Δt ω); bodies that are not spheres also take the
//!   implicit torque-free gyroscopic step of [`crate::integrate`].
//!
//! **The sub-step.** Unless the scene sets `time_step`, Δt is a fifth of the
//! smallest Rayleigh time T_R = π r √(ρ/G) / (0.1631 ν + 0.8766) (G the
//! shear modulus; Hertz) or a twentieth of the smallest contact half-period
//! π √(m*/k) (Hooke), the usual stability margins of explicit DEM; a set
//! `time_step` above that bound is kept and warned about once, with the
//! Rayleigh time.
//!
//! **Material combination.** E* and R* as Hertz's theory has them
//! ([`normal`]); μ_s, μ_k and e the minimum of the two materials' (as for
//! the complementarity cone); K_E the smaller of the two materials' set
//! values, else 2/7 of the contact's normal stiffness.

pub mod neighbours;
pub mod normal;
pub mod roll_spin;
pub mod slide;

use std::collections::HashMap;

use glam::DVec3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use normal::NormalModel;
pub use roll_spin::{RollHistory, SpinHistory};
pub use slide::SlideHistory;

use crate::bodies::SPHERE;
use crate::collision::{self, ContactGeom, NO_BODY};
use crate::material::Material;
use crate::step::{NonFiniteError, StageTimers, StepError, StepReport};
use crate::world::World;

/// The penalty formulation's settings (`formulation: Penalty(…)` in a scene).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PenaltySettings {
    /// The normal force law: `Hertz` (default) or `Hooke(stiffness: k)`.
    pub normal: NormalModel,
    /// The sub-step Δt (s); `None`: from the stiffness (module docs).
    pub time_step: Option<f64>,
    /// The rolling resistance: seed 003's tracked micro-deflection
    /// (`Tracked`, the default, from the materials' `roll_eta`) or the
    /// legacy constant torque (`ConstantTorque(coefficient: μ_r)`).
    pub rolling: RollingModel,
    /// The neighbour list's skin (m): sphere pairs closer than this are
    /// listed and checked every sub-step, the list rebuilt once a sphere
    /// has moved half of it ([`neighbours`]). `None`: 0.25 × the largest
    /// radius; `Some(0.0)`: no list, a full detection every sub-step.
    pub skin: Option<f64>,
    /// The spin stiffness: `Heuristic` (the default, seed 003 eq. 3c,
    /// K_ψ = η_ψ K_E R*², from the materials' `spin_eta`) or `Hertz`
    /// (App. C eqs. 12–14: the slide spring spread over the Hertz contact
    /// disk of radius a = √(R* δ), K_ψ = a² K_E / 2, caps μ N / (K_E a), so
    /// the spin torque peaks at a μ_s N / 2; every contact, whatever
    /// `spin_eta`).
    pub spinning: SpinModel,
}

/// How spinning is resisted in the penalty formulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum SpinModel {
    /// Seed 003 §3.3 eq. 3c with 𝒦 = 1/R* and the materials' η_ψ.
    #[default]
    Heuristic,
    /// Seed 003 App. C: 𝒦 = 1/a, η_ψ = 1/2.
    Hertz,
}

/// How rolling is resisted in the penalty formulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum RollingModel {
    /// Seed 003 §3.2's rocking springs ([`roll_spin`]), from `roll_eta`.
    #[default]
    Tracked,
    /// The legacy model of seed 003 App. A.2 eq. 8: a torque of constant
    /// size μ_r R* N against the relative angular velocity,
    /// M = −μ_r R* N (ω_A − ω_B)/‖ω_A − ω_B‖ on A and −M on B. Near rest
    /// ω cannot reach zero and the torque flips sign every step (the
    /// chatter the paper shows); kept to show it.
    ConstantTorque {
        /// The rolling coefficient μ_r (dimensionless, ≥ 0).
        coefficient: f64,
    },
}

impl PenaltySettings {
    /// Named problems with the settings: (field, reason).
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let NormalModel::Hooke { stiffness } = self.normal {
            if !(stiffness > 0.0 && stiffness.is_finite()) {
                out.push((
                    "normal.stiffness",
                    format!("must be finite and > 0 (got {stiffness})"),
                ));
            }
        }
        if let RollingModel::ConstantTorque { coefficient } = self.rolling {
            if !(coefficient >= 0.0 && coefficient.is_finite()) {
                out.push((
                    "rolling.coefficient",
                    format!("must be finite and ≥ 0 (got {coefficient})"),
                ));
            }
        }
        if let Some(skin) = self.skin {
            if !(skin >= 0.0 && skin.is_finite()) {
                out.push(("skin", format!("must be finite and ≥ 0 (got {skin})")));
            }
        }
        if let Some(dt) = self.time_step {
            if !(dt > 0.0 && dt.is_finite()) {
                out.push(("time_step", format!("must be finite and > 0 (got {dt})")));
            }
        }
        out
    }
}

/// One contact's history across sub-steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ContactHistory {
    /// Sliding micro-deflection and mode (seed 003 §3.1).
    pub slide: SlideHistory,
    /// Rocking micro-deflection and mode of body A, then B (§3.2).
    pub roll: [RollHistory; 2],
    /// Relative spin micro-deflection and mode (§3.3).
    pub spin: SpinHistory,
    /// The contact point at the last sub-step (m); `None` at onset.
    pub point: Option<DVec3>,
}

/// What the penalty stepper keeps between steps that is derived, not state
/// (so checkpoints need not hold it).
#[derive(Default)]
pub struct PenaltyWorkspace {
    /// ζ per (model, restitution bits): the bisection of
    /// [`normal::damping_ratio`] runs once per value.
    zeta: HashMap<(u8, u64), f64>,
    /// Whether the too-large sub-step has been warned about.
    warned: bool,
    force: Vec<DVec3>,
    torque: Vec<DVec3>,
    /// ζ of each pair of materials (row-major, materials × materials) for
    /// the step's normal model, refreshed once per scene step.
    zeta_table: Vec<f64>,
    /// The sub-step's per-contact loads (kept to reuse the allocation).
    loads: Vec<Loads>,
    /// The sphere pairs to check each sub-step.
    pub neighbours: neighbours::NeighbourList,
}

impl PenaltyWorkspace {
    fn zeta(&mut self, model: NormalModel, e: f64) -> f64 {
        let tag = match model {
            NormalModel::Hertz => 0,
            NormalModel::Hooke { .. } => 1,
        };
        *self
            .zeta
            .entry((tag, e.to_bits()))
            .or_insert_with(|| normal::damping_ratio(model, e))
    }

    /// Fills `zeta_table`: a contact's restitution is the smaller of its
    /// two materials' (module docs).
    fn refresh_zeta_table(&mut self, model: NormalModel, materials: &[Material]) {
        let n = materials.len();
        let mut table = std::mem::take(&mut self.zeta_table);
        table.clear();
        for ma in materials {
            for mb in materials {
                table.push(self.zeta(model, ma.restitution.min(mb.restitution)));
            }
        }
        debug_assert_eq!(table.len(), n * n);
        self.zeta_table = table;
    }
}

/// The largest stable sub-step (module docs) for the world's bodies and
/// the spheres its inlets will add, and the smallest Rayleigh time (Hertz;
/// `None` for Hooke).
pub fn stable_time_step(world: &World, settings: &PenaltySettings) -> (f64, Option<f64>) {
    let b = &world.bodies;
    let mats = &world.materials;
    // (radius, mass, material) of every body and of each inlet's spheres.
    let bodies = (0..b.len()).map(|i| {
        (
            b.radius[i],
            1.0 / b.inv_mass[i],
            &mats[b.material[i] as usize],
        )
    });
    let inlets = world.inlets.iter().map(|inlet| {
        let s = &inlet.settings;
        let m = 4.0 / 3.0 * std::f64::consts::PI * s.radius.powi(3) * s.density;
        (s.radius, m, &mats[s.material as usize])
    });
    let smallest = bodies.chain(inlets);
    match settings.normal {
        NormalModel::Hertz => {
            let t = smallest
                .map(|(r, m, mat)| {
                    let rho = m / (4.0 / 3.0 * std::f64::consts::PI * r.powi(3));
                    let g = mat.young_modulus / (2.0 * (1.0 + mat.poisson_ratio));
                    std::f64::consts::PI * r * (rho / g).sqrt()
                        / (0.1631 * mat.poisson_ratio + 0.8766)
                })
                .fold(f64::INFINITY, f64::min);
            (0.2 * t, Some(t))
        }
        NormalModel::Hooke { stiffness } => {
            let m = smallest.map(|(_, m, _)| m).fold(f64::INFINITY, f64::min);
            (
                std::f64::consts::PI * (0.5 * m / stiffness).sqrt() / 20.0,
                None,
            )
        }
    }
}

/// One scene step under the penalty formulation: `n` sub-steps (module
/// docs). Inlets have emitted already ([`crate::step`]).
pub fn step(
    world: &mut World,
    settings: &PenaltySettings,
    ws: &mut PenaltyWorkspace,
    timers: &mut StageTimers,
) -> Result<StepReport, StepError> {
    let h = world.time_step;
    let (stable, rayleigh) = stable_time_step(world, settings);
    let dt_max = match settings.time_step {
        Some(dt) => {
            if dt > stable && !ws.warned {
                ws.warned = true;
                log::warn!(
                    "penalty time_step {dt:e} s exceeds the stable bound {stable:e} s{}: contacts may blow up",
                    rayleigh.map_or(String::new(), |t| format!(
                        " (a fifth of the smallest Rayleigh time, {t:e} s)"
                    ))
                );
            }
            dt
        }
        None => stable,
    };
    ws.refresh_zeta_table(settings.normal, &world.materials);
    let n = (h / dt_max).ceil().max(1.0) as u64;
    let dt = h / n as f64;
    let t0 = world.time;
    let mut contacts_last = 0;
    for k in 0..n {
        let time = t0 + k as f64 * dt;
        let skin = settings
            .skin
            .unwrap_or_else(|| 0.25 * world.bodies.max_radius());
        let list = &mut ws.neighbours;
        let contacts = timers
            .time("collide", || {
                if skin > 0.0 && !world.bodies.has_shapes() {
                    list.contacts(&world.bodies, &world.boundaries, skin, time)
                } else {
                    collision::detect(&world.bodies, &world.boundaries, 0.0, time)
                }
            })
            .map_err(|error| StepError::Crowded {
                step: world.step_index + 1,
                error,
            })?;
        contacts_last = contacts.len();
        timers.time("forces", || forces(world, settings, ws, &contacts, dt));
        timers.time("integrate", || integrate(world, ws, dt, time));
        world.time = time + dt;
    }
    world.time = t0 + h;
    world.step_index += 1;
    let b = &world.bodies;
    let bad = |v: &[DVec3]| v.iter().position(|x| !x.is_finite());
    for (what, v) in [("velocity", &b.vel), ("angular velocity", &b.omega)] {
        if let Some(body) = bad(v) {
            return Err(NonFiniteError {
                step: world.step_index,
                time: t0,
                what,
                body,
            }
            .into());
        }
    }
    Ok(StepReport {
        contacts: contacts_last,
        solve: crate::solver::SolveStats {
            converged: true,
            ..Default::default()
        },
        substeps: n,
    })
}

/// The forces and torques of one contact on its two ends (A, then B; B's
/// are ignored for a wall).
struct Loads {
    force_a: DVec3,
    torque_a: DVec3,
    force_b: DVec3,
    torque_b: DVec3,
    key: u64,
    history: ContactHistory,
}

/// Every contact's loads, into the workspace's per-body sums; the world's
/// histories replaced by this sub-step's.
fn forces(
    world: &mut World,
    settings: &PenaltySettings,
    ws: &mut PenaltyWorkspace,
    contacts: &[ContactGeom],
    dt: f64,
) {
    let b = &world.bodies;
    let mats = &world.materials;
    let zetas = &ws.zeta_table;
    let history = &world.contact_history;
    contacts
        .par_iter()
        .map(|c| {
            let a = c.a as usize;
            let ma = &mats[b.material[a] as usize];
            let mb = &mats[c.material_b as usize];
            let wall = c.b == NO_BODY;
            let ra = c.point - b.pos[a];
            let ua = b.vel[a] + b.omega[a].cross(ra);
            let (ub, rb, inv_mb, radius_b, omega_b, inv_ib) = if wall {
                (
                    c.wall_velocity,
                    DVec3::ZERO,
                    0.0,
                    f64::INFINITY,
                    c.wall_omega,
                    0.0,
                )
            } else {
                let j = c.b as usize;
                let r = c.point - b.pos[j];
                (
                    b.vel[j] + b.omega[j].cross(r),
                    r,
                    b.inv_mass[j],
                    b.radius[j],
                    b.omega[j],
                    b.inv_inertia[j],
                )
            };
            let rel = ub - ua;
            let n = c.normal;
            let delta = -c.gap;
            let m_star = 1.0 / (b.inv_mass[a] + inv_mb);
            let params = normal::NormalParams {
                e_star: normal::effective_modulus(
                    ma.young_modulus,
                    ma.poisson_ratio,
                    mb.young_modulus,
                    mb.poisson_ratio,
                ),
                r_star: 1.0 / (1.0 / b.radius[a] + 1.0 / radius_b),
                m_star,
                zeta: zetas[b.material[a] as usize * mats.len() + c.material_b as usize],
            };
            let nf = normal::normal_force(settings.normal, &params, delta, -rel.dot(n));
            let k_e = match (ma.slide_stiffness, mb.slide_stiffness) {
                (Some(x), Some(y)) => x.min(y),
                (Some(x), None) | (None, Some(x)) => x,
                (None, None) => 2.0 / 7.0 * nf.stiffness,
            };
            let mut hist = history.get(&c.key).copied().unwrap_or_default();
            let friction = if k_e > 0.0 {
                slide::slide(
                    &mut hist.slide,
                    &slide::SlideParams {
                        mu_s: ma.mu_static().min(mb.mu_static()),
                        mu_k: ma.mu_kinetic().min(mb.mu_kinetic()),
                        stiffness: k_e,
                        m_star,
                    },
                    n,
                    rel,
                    nf.force,
                    dt,
                )
            } else {
                DVec3::ZERO
            };
            // Rolling and spinning resistance (roll_spin.rs): the contact
            // point's travel over each body since the last sub-step (none
            // at onset: the paper's loads start from no history).
            let (kappa_a, kappa_b) = (1.0 / b.radius[a], 1.0 / radius_b);
            let tangential = |x: DVec3| x - n * x.dot(n);
            let (travel_a, travel_b) = match hist.point {
                Some(c0) => {
                    let dc = c.point - c0;
                    (tangential(dc - ua * dt), tangential(dc - ub * dt))
                }
                None => (DVec3::ZERO, DVec3::ZERO),
            };
            hist.point = Some(c.point);
            let rp = roll_spin::ResistanceParams {
                mu_s: ma.mu_static().min(mb.mu_static()),
                mu_k: ma.mu_kinetic().min(mb.mu_kinetic()),
                k_e,
                eta_r: ma.roll_eta.min(mb.roll_eta),
                eta_psi: ma.spin_eta.min(mb.spin_eta),
                i_star: 1.0 / (b.inv_inertia[a] + inv_ib),
            };
            let kappa = kappa_a + kappa_b;
            let (roll_a, roll_b) = match settings.rolling {
                RollingModel::ConstantTorque { coefficient } => {
                    let w = b.omega[a] - omega_b;
                    let len = w.length();
                    let m = if len > 0.0 {
                        w * (-coefficient * nf.force / (kappa * len))
                    } else {
                        DVec3::ZERO
                    };
                    (m, -m)
                }
                RollingModel::Tracked => (
                    roll_spin::roll(
                        &mut hist.roll[0],
                        &rp,
                        n,
                        travel_a,
                        kappa_a,
                        kappa,
                        nf.force,
                        dt,
                    ),
                    roll_spin::roll(
                        &mut hist.roll[1],
                        &rp,
                        -n,
                        travel_b,
                        kappa_b,
                        kappa,
                        nf.force,
                        dt,
                    ),
                ),
            };
            let turn = dt * (omega_b - b.omega[a]).dot(n);
            let (spin_rp, spin_curvature) = match settings.spinning {
                SpinModel::Heuristic => (rp, kappa),
                SpinModel::Hertz => (
                    roll_spin::ResistanceParams { eta_psi: 0.5, ..rp },
                    1.0 / (delta / kappa).sqrt(),
                ),
            };
            let spin_b =
                n * roll_spin::spin(&mut hist.spin, &spin_rp, turn, spin_curvature, nf.force, dt);
            let on_b = n * nf.force + friction;
            Loads {
                force_a: -on_b,
                torque_a: ra.cross(-on_b) + roll_a - spin_b,
                force_b: on_b,
                torque_b: rb.cross(on_b) + roll_b + spin_b,
                key: c.key,
                history: hist,
            }
        })
        .collect_into_vec(&mut ws.loads);
    let nb = b.len();
    ws.force.clear();
    ws.force.resize(nb, DVec3::ZERO);
    ws.torque.clear();
    ws.torque.resize(nb, DVec3::ZERO);
    // This sub-step's histories replace the last (in place: the map keeps
    // its allocation); pairs that separated drop out.
    let next = &mut world.contact_history;
    next.clear();
    for (c, l) in contacts.iter().zip(&ws.loads) {
        let a = c.a as usize;
        ws.force[a] += l.force_a;
        ws.torque[a] += l.torque_a;
        if c.b != NO_BODY {
            let j = c.b as usize;
            ws.force[j] += l.force_b;
            ws.torque[j] += l.torque_b;
        }
        next.insert(l.key, l.history);
    }
}

/// Symplectic Euler over `dt` from time `t` (module docs).
fn integrate(world: &mut World, ws: &PenaltyWorkspace, dt: f64, t: f64) {
    let g = world.gravity;
    let b = &mut world.bodies;
    let shapes = b.has_shapes();
    for i in 0..b.len() {
        b.vel[i] += (ws.force[i] * b.inv_mass[i] + g) * dt;
        if shapes && b.shape[i] != SPHERE {
            let w = b.omega[i] + b.inv_inertia_world(i) * ws.torque[i] * dt;
            b.omega[i] = crate::integrate::gyroscopic(w, b.rot[i], b.inv_inertia_body[i], dt);
        } else {
            b.omega[i] += ws.torque[i] * (b.inv_inertia[i] * dt);
        }
    }
    crate::integrate::positions(b, dt);
    crate::integrate::boundaries(&mut world.boundaries, t, dt);
}
