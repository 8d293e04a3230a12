//! The penalty formulation's contact records ([`ContactForces`]) for
//! output and analysis: the loads every contact would apply at the state
//! the world is in (its positions, velocities and contact histories), as
//! the next sub-step would compute them, without advancing anything.
//!
//! A penalty step is many sub-steps whose contacts come and go, so unlike
//! the rigid formulations' step impulses these are instantaneous loads at
//! the frame's state. Each contact's `Loads` (force on B, torques on A
//! and B about their centres) split along the contact normal n:
//!
//! ```text
//! f_n = F·n,   f_t = F − f_n n,
//! τ_c = −τ_A − s_A × F   (the contact torque on B: A's torque, less the
//!                         moment of −F at the lever arm s_A, reversed)
//! t_s = τ_c·n, t_r = τ_c − t_s n
//! ```
//!
//! Each record also carries the **elastic energy** the contact stores at
//! that state: the work its springs' elastic parts have taken in (the
//! dampers store nothing), with the deflections as the sub-step leaves
//! them and the springs' stiffnesses at the present overlap:
//!
//! ```text
//! normal   Hertz (2/5) k δ^{5/2}  (= ∫₀^δ k x^{3/2} dx),  Hooke ½ k δ²
//! slide    ½ K_E |S|²                       (the spring of Fang & Negrut 2020, eq. 1b)
//! roll     ½ K_R (|Θ_A|² + |Θ_B|²),  K_R = 4 η_r K_E / κ²   (eq. 2b; tracked model)
//! spin     ½ K_ψ Φ²,  K_ψ = η_ψ K_E R*²     (eq. 3c; Hertzian spin: K_ψ = ½ K_E a², a² = δ R*)
//! ```
//!
//! K_E is the set slide stiffness, or 2/7 of the normal law's dF/dδ at δ
//! (for Hertz it grows with the overlap; the tangential springs' energy is
//! counted at the present stiffness). The legacy constant
//! rolling torque has no spring and stores nothing.
//!
//! Detection is the general driver's ([`crate::collision::detect`]) and the
//! histories the world's (written at the end of every step by either
//! driver), so the records are the same whichever driver ran the step.

use glam::DVec3;

use super::loads::{contact_loads, Context, PairConstants};
use super::normal::{self, NormalModel};
use super::step::stable_time_step;
use super::workspace::PenaltyWorkspace;
use super::{neighbours, ContactHistory, PenaltySettings, RollingModel, SpinModel};
use crate::collision::{self, ContactGeom, NO_BODY};
use crate::contact_forces::ContactForces;
use crate::model::Model;
use crate::state::State;

/// The contact records of `state` under `model` and `settings` (module
/// docs); the detection's error where a grid cell holds more spheres than
/// it can.
pub fn contact_forces(
    model: &Model,
    state: &State,
    settings: &PenaltySettings,
) -> Result<ContactForces, collision::Crowded> {
    let mut ws = PenaltyWorkspace::default();
    ws.refresh_pair_table(settings.normal, &model.materials);
    let b = &state.bodies;
    let (stable, _) = stable_time_step(model, b, settings);
    let dt_max = settings.time_step.unwrap_or(stable);
    let h = model.time_step;
    let dt = h / (h / dt_max).ceil().max(1.0);
    let cx = Context::of(model, b, &ws.pair_table, settings, dt);
    let mut walls = Vec::new();
    state.pose_boundaries(model, &mut walls);
    let contacts = collision::detect(b, &walls, 0.0, state.time)?;
    let mut out = ContactForces::default();
    for c in &contacts {
        let mut hist = neighbours::history_in(&state.contact_history, c.key);
        let k = PairConstants::of_contact(&cx, c);
        let l = contact_loads(&cx, c, &k, &mut hist);
        out.elastic_energy.push(stored_energy(&cx, c, &k, &hist));
        let (a, n, f) = (c.a as usize, c.normal, l.force_b);
        let s_a = c.point - b.pos[a];
        let fn_ = f.dot(n);
        let tau = -l.torque_a - s_a.cross(f);
        let ts = tau.dot(n);
        out.body_a.push(c.a);
        out.body_b.push(c.b);
        out.wall.push(c.wall);
        out.point.push(c.point);
        out.arm_a.push(s_a);
        out.arm_b.push(if c.b == NO_BODY {
            DVec3::ZERO
        } else {
            c.point - b.pos[c.b as usize]
        });
        out.normal.push(n);
        out.gap.push(c.gap);
        out.normal_force.push(fn_);
        out.tangential_force.push(f - fn_ * n);
        out.spinning_torque.push(ts);
        out.rolling_torque.push(tau - ts * n);
    }
    Ok(out)
}

/// The elastic energy contact `c` (constants `k`) stores with the history
/// `hist` as its sub-step left it (module docs' table), in J.
fn stored_energy(cx: &Context, c: &ContactGeom, k: &PairConstants, hist: &ContactHistory) -> f64 {
    let settings = cx.settings;
    let pc = cx.pair_of(cx.bodies.material[c.a as usize], c.material_b);
    let delta = if -c.gap > 0.0 { -c.gap } else { 0.0 };
    let nf = normal::normal_force(settings.normal, &k.normal, delta, 0.0);
    let normal = match settings.normal {
        NormalModel::Hertz => 0.4 * k.normal.k * delta * delta * delta.sqrt(),
        NormalModel::Hooke { .. } => 0.5 * k.normal.k * delta * delta,
    };
    let k_e = pc.slide_stiffness.unwrap_or(2.0 / 7.0 * nf.stiffness);
    let slide = 0.5 * k_e * hist.slide.deflection.length_squared();
    let kappa = k.kappa[0] + k.kappa[1];
    let roll = match settings.rolling {
        RollingModel::Tracked if kappa > 0.0 => {
            let k_r = 4.0 * pc.eta_r * k_e / (kappa * kappa);
            0.5 * k_r
                * (hist.roll[0].deflection.length_squared()
                    + hist.roll[1].deflection.length_squared())
        }
        _ => 0.0,
    };
    let k_psi = match settings.spinning {
        SpinModel::Heuristic => pc.eta_psi * k_e * k.inv_kappa * k.inv_kappa,
        // η_ψ = 1/2 and 1/𝒦 = a, the contact disk's radius: a² = δ R*.
        SpinModel::Hertz => 0.5 * k_e * delta * k.inv_kappa,
    };
    let spin = 0.5 * k_psi * hist.spin.deflection * hist.spin.deflection;
    normal + slide + roll + spin
}
