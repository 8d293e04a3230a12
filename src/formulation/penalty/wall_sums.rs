//! The boundaries' loads of a penalty step: each sub-step's boundary
//! contacts summed per boundary (force on it, torque about its origin,
//! times Δt), and those sums over the step's length h
//! ([`crate::wall_loads`] gives the rigid formulations' and `walls.csv`).

use glam::DVec3;

use super::loads::Loads;
use super::neighbours;
use super::workspace::PenaltyWorkspace;
use crate::bodies::Bodies;
use crate::boundary::Boundary;

/// The list driver's boundary contacts of the sub-step into the sums of
/// [`wall_impulses`]: the listed faces' or the found contacts'.
#[inline(never)]
pub(super) fn listed_wall_impulses(
    b: &Bodies,
    bounds: &[Boundary],
    ws: &mut PenaltyWorkspace,
    dt: f64,
) {
    let PenaltyWorkspace {
        wall_impulse,
        wall_count,
        walls,
        wall_loads,
        neighbours,
        ..
    } = ws;
    if matches!(neighbours.walls, neighbours::WallContacts::Faces) {
        let found = neighbours.faces.loads_by_boundary();
        wall_impulses(wall_impulse, wall_count, b, bounds, dt, found);
    } else {
        let found = walls.iter().zip(wall_loads.iter());
        let found = found.map(|(c, l)| (c.a, c.wall as usize, l));
        wall_impulses(wall_impulse, wall_count, b, bounds, dt, found);
    }
}

/// Adds one sub-step's boundary contacts to `acc`: for each (body A,
/// boundary b, loads) the force on b, F = `force_b`, and the torque about
/// b's origin o, (x_A − o) × F − τ_A (τ_A the torque on A about its
/// centre: what A loses, b gains), each times `dt`; `count` becomes the
/// number of contacts with a load per boundary.
pub(super) fn wall_impulses<'a>(
    acc: &mut [(DVec3, DVec3)],
    count: &mut [usize],
    bodies: &crate::bodies::Bodies,
    boundaries: &[crate::boundary::Boundary],
    dt: f64,
    contacts: impl Iterator<Item = (u32, usize, &'a Loads)>,
) {
    count.iter_mut().for_each(|c| *c = 0);
    for (a, wall, l) in contacts {
        if let (Some(sum), Some(b)) = (acc.get_mut(wall), boundaries.get(wall)) {
            let f = l.force_b;
            sum.0 += f * dt;
            sum.1 += ((bodies.pos[a as usize] - b.origin).cross(f) - l.torque_a) * dt;
            count[wall] += usize::from(f != DVec3::ZERO || l.torque_a != DVec3::ZERO);
        }
    }
}

/// The loads of the boundaries over the last step (`h` its length, `time`
/// its start: which boundaries move): the sub-steps' sums over h
/// ([`crate::wall_loads::WallLoad`]; `contacts` counts the contacts with
/// a load at the last sub-step).
pub fn wall_loads(
    ws: &PenaltyWorkspace,
    boundaries: &[crate::boundary::Boundary],
    h: f64,
    time: f64,
) -> Vec<crate::wall_loads::WallLoad> {
    ws.wall_impulse
        .iter()
        .zip(&ws.wall_count)
        .zip(boundaries)
        .map(|((&(j, l), &n), b)| crate::wall_loads::WallLoad::over_step(j, l, n, b, h, time))
        .collect()
}
