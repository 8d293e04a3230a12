//! The penalty formulation's contact records ([`ContactForces`]) for
//! output and analysis: the loads every contact would apply at the state
//! the world is in (its positions, velocities and contact histories), as
//! the next sub-step would compute them, without advancing anything.
//!
//! A penalty step is many sub-steps whose contacts come and go, so unlike
//! the rigid formulations' step impulses these are instantaneous loads at
//! the frame's state. Each contact's [`Loads`] (force on B, torques on A
//! and B about their centres) split along the contact normal n:
//!
//! ```text
//! f_n = F·n,   f_t = F − f_n n,
//! τ_c = −τ_A − s_A × F   (the contact torque on B: A's torque, less the
//!                         moment of −F at the lever arm s_A, reversed)
//! t_s = τ_c·n, t_r = τ_c − t_s n
//! ```
//!
//! Detection is the general driver's ([`crate::collision::detect`]) and the
//! histories the world's (written at the end of every step by either
//! driver), so the records are the same whichever driver ran the step.

use glam::DVec3;

use super::loads::{contact_loads, Context, PairConstants};
use super::{neighbours, stable_time_step, PenaltySettings, PenaltyWorkspace};
use crate::collision::{self, NO_BODY};
use crate::contact_forces::ContactForces;
use crate::world::World;

/// The contact records of `world` under `settings` (module docs); the
/// detection's error where a grid cell holds more spheres than it can.
pub fn contact_forces(
    world: &World,
    settings: &PenaltySettings,
) -> Result<ContactForces, collision::Crowded> {
    let mut ws = PenaltyWorkspace::default();
    ws.refresh_pair_table(settings.normal, &world.materials);
    let (stable, _) = stable_time_step(world, settings);
    let dt_max = settings.time_step.unwrap_or(stable);
    let h = world.time_step;
    let dt = h / (h / dt_max).ceil().max(1.0);
    let cx = Context {
        bodies: &world.bodies,
        materials: &world.materials,
        pairs: &ws.pair_table,
        settings,
        dt,
        inv_dt: 1.0 / dt,
    };
    let b = &world.bodies;
    let contacts = collision::detect(b, &world.boundaries, 0.0, world.time)?;
    let mut out = ContactForces::default();
    for c in &contacts {
        let mut hist = neighbours::history_in(&world.contact_history, c.key);
        let k = PairConstants::of_contact(&cx, c);
        let l = contact_loads(&cx, c, &k, &mut hist);
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
