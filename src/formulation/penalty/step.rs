//! One scene step under the penalty formulation (module docs of
//! [`super`]): the stable sub-step, then per sub-step collide, forces and
//! integrate, by the general driver or the neighbour list's.

use glam::DVec3;
use rayon::prelude::*;

use super::held::{note_touch, Held};
use super::loads::{contact_loads, Context, EndSum, Loads, PairConstants};
use super::normal::NormalModel;
use super::wall_sums::{listed_wall_impulses, wall_impulses};
use super::workspace::PenaltyWorkspace;
use super::{lanes, neighbours, ContactHistory, PenaltySettings, RollingModel};
use crate::bodies::{Bodies, SPHERE};
use crate::boundary::Boundary;
use crate::collision::{self, ContactGeom, NO_BODY};
use crate::formulation::stage::{NonFiniteError, Stage, StageTimers, StepError, StepReport};
use crate::model::Model;
use crate::state::State;

/// The largest stable sub-step (module docs) for the bodies `b` and the
/// spheres the model's inlets will add, and the smallest Rayleigh time
/// (Hertz; `None` for Hooke).
pub fn stable_time_step(
    model: &Model,
    b: &Bodies,
    settings: &PenaltySettings,
) -> (f64, Option<f64>) {
    let mats = &model.materials;
    // (radius, mass, material) of every body and of each inlet's spheres.
    let bodies = (0..b.len()).map(|i| {
        (
            b.radius[i],
            1.0 / b.inv_mass[i],
            &mats[b.material[i] as usize],
        )
    });
    let inlets = model.inlets.iter().map(|s| {
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
/// docs). Inlets have emitted already ([`crate::step`]). `walls` holds the
/// boundaries posed where `state` has them, and is moved with them after
/// each sub-step.
pub fn step(
    model: &Model,
    state: &mut State,
    walls: &mut [Boundary],
    settings: &PenaltySettings,
    ws: &mut PenaltyWorkspace,
    timers: &mut StageTimers,
) -> Result<StepReport, StepError> {
    let h = model.time_step;
    let (stable, rayleigh) = stable_time_step(model, &state.bodies, settings);
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
    ws.refresh_pair_table(settings.normal, &model.materials);
    let n = (h / dt_max).ceil().max(1.0) as u64;
    let dt = h / n as f64;
    let t0 = state.time;
    let listed = settings.skin.is_none_or(|s| s > 0.0) && !state.bodies.has_shapes();
    let next_step = state.step_index + 1;
    let crowded = |error| StepError::Crowded {
        step: next_step,
        error,
    };
    let mut contacts_last = 0;
    // Whether some sphere has moved half the skin since the list's last
    // rebuild, as the last sub-step's integration found (`None` before the
    // first sub-step: between scene steps positions may change outside
    // these sub-steps, a checkpoint be restored or the stepper be new, so
    // the list measures it itself).
    let mut moved = None;
    ws.wall_impulse.clear();
    ws.wall_impulse
        .resize(walls.len(), (DVec3::ZERO, DVec3::ZERO));
    ws.wall_count.clear();
    ws.wall_count.resize(walls.len(), 0);
    for k in 0..n {
        let time = t0 + k as f64 * dt;
        if listed {
            let list = &mut ws.neighbours;
            timers
                .time(Stage::Collide, || -> Result<(), collision::Crowded> {
                    list.refresh(&state.bodies, walls, settings.skin, time, moved)?;
                    if list.synced != Some(state.step_index) {
                        list.import(&state.contact_history);
                        list.synced = Some(state.step_index);
                    }
                    Ok(())
                })
                .map_err(crowded)?;
            // The boundaries' loads are summed in the forces stage: a
            // stage of their own would cost its timer every sub-step.
            contacts_last = timers.time(Stage::Forces, || {
                let n = listed_forces(model, &state.bodies, walls, ws, settings, dt, time);
                listed_wall_impulses(&state.bodies, walls, ws, dt);
                n
            });
            moved = Some(timers.time(Stage::Integrate, || {
                listed_integrate(model, state, ws, dt, time)
            }));
        } else {
            let contacts = timers
                .time(Stage::Collide, || {
                    collision::detect(&state.bodies, walls, 0.0, time)
                })
                .map_err(crowded)?;
            contacts_last = contacts.len();
            timers.time(Stage::Forces, || {
                forces(model, state, ws, settings, &contacts, dt);
                let found = contacts.iter().zip(&ws.loads);
                let found = found
                    .filter(|(c, _)| c.b == NO_BODY)
                    .map(|(c, (l, _))| (c.a, c.wall as usize, l));
                let (acc, count) = (&mut ws.wall_impulse, &mut ws.wall_count);
                wall_impulses(acc, count, &state.bodies, walls, dt, found);
            });
            timers.time(Stage::Integrate, || integrate(model, state, ws, dt, time));
        }
        state.place_boundaries(walls);
        state.time = time + dt;
    }
    state.time = t0 + h;
    state.step_index += 1;
    if listed {
        let list = &mut ws.neighbours;
        timers.time(Stage::Forces, || list.export(&mut state.contact_history));
        list.synced = Some(state.step_index);
    } else {
        ws.neighbours.synced = None;
    }
    let b = &state.bodies;
    let bad = |v: &[DVec3]| v.iter().position(|x| !x.is_finite());
    for (what, v) in [("velocity", &b.vel), ("angular velocity", &b.omega)] {
        if let Some(body) = bad(v) {
            return Err(NonFiniteError {
                step: state.step_index,
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

/// Every contact's loads, into the workspace's per-body sums; the world's
/// histories replaced by this sub-step's. The general driver: any bodies,
/// contacts from a full detection, histories in the world's map.
fn forces(
    model: &Model,
    state: &mut State,
    ws: &mut PenaltyWorkspace,
    settings: &PenaltySettings,
    contacts: &[ContactGeom],
    dt: f64,
) {
    let cx = Context::of(model, &state.bodies, &ws.pair_table, settings, dt);
    let history = &state.contact_history;
    contacts
        .par_iter()
        .map(|c| {
            let mut hist = neighbours::history_in(history, c.key);
            let k = PairConstants::of_contact(&cx, c);
            (contact_loads(&cx, c, &k, &mut hist), hist)
        })
        .collect_into_vec(&mut ws.loads);
    let nb = state.bodies.len();
    ws.force.clear();
    ws.force.resize(nb, DVec3::ZERO);
    ws.torque.clear();
    ws.torque.resize(nb, DVec3::ZERO);
    // This sub-step's histories replace the last (in place: the vector
    // keeps its allocation), sorted by key; pairs that separated drop out.
    let next = &mut state.contact_history;
    next.clear();
    for (c, (l, h)) in contacts.iter().zip(&ws.loads) {
        let a = c.a as usize;
        ws.force[a] -= l.force_b;
        ws.torque[a] += l.torque_a;
        if c.b != NO_BODY {
            let j = c.b as usize;
            ws.force[j] += l.force_b;
            ws.torque[j] += l.torque_b;
        }
        next.push((c.key, *h));
    }
    if next.windows(2).any(|w| w[0].0 > w[1].0) {
        next.sort_unstable_by_key(|&(k, _)| k);
    }
    debug_assert!(
        next.windows(2).all(|w| w[0].0 < w[1].0),
        "contact keys repeat"
    );
}

/// The neighbour list's driver (spheres only): every listed pair is tested
/// and, where it touches, loaded with the history it holds, while the
/// boundary contacts at time `time` are loaded (the two in one parallel
/// region): the listed faces' where the list has them ([`faces`]: tested
/// and loaded as the pairs), else those found for the spheres the list has
/// near a boundary, or all where one moves (into `ws.walls`), with their
/// histories from the list's sorted vector. The loads stay per pair and per
/// boundary contact for [`listed_integrate`], which also reads where each
/// body's boundary contacts begin (the listed faces', or `ws.wall_start`,
/// made here beside the pairs' law, as are the found contacts' next
/// histories). Returns the number of contacts.
fn listed_forces(
    model: &Model,
    b: &Bodies,
    bounds: &[Boundary],
    ws: &mut PenaltyWorkspace,
    settings: &PenaltySettings,
    dt: f64,
    time: f64,
) -> usize {
    let cx = Context::of(model, b, &ws.pair_table, settings, dt);
    let list = &mut ws.neighbours;
    list.refresh_constants(&cx);
    let neighbours::NeighbourList {
        pairs,
        constants,
        history,
        touching,
        loads,
        wall_history,
        next_wall_history: next_walls,
        walls: wall_contacts,
        faces,
        ..
    } = list;
    let (walls, wall_loads, wall_start) = (&mut ws.walls, &mut ws.wall_loads, &mut ws.wall_start);
    // Four contacts at a time through the lanes' law where the rolling
    // model allows (lanes.rs).
    let quads = settings.rolling == RollingModel::Tracked;
    let wall_history = &*wall_history;
    let mut touching_faces = 0;
    // One region, not three: the boundary contacts, their search and
    // their loads, are too few to pay for parallel regions of their own
    // (2 threads: 1.0–1.2× one thread's time); beside the pairs they run on
    // whichever thread is free.
    let (touching, ()) = rayon::join(
        || {
            // Four touching pairs at a time through the lanes' law; chunks
            // of fixed length, so which pairs go together does not depend
            // on the threads (nor do the bits: both laws give the same).
            pairs
                .par_chunks(CHUNK)
                .zip(constants.par_chunks(CHUNK))
                .zip(history.par_chunks_mut(CHUNK))
                .zip(touching.par_chunks_mut(CHUNK))
                .zip(loads.par_chunks_mut(CHUNK))
                .map(|((((pairs, constants), history), touching), loads)| {
                    listed_chunk(&cx, quads, pairs, constants, history, touching, loads)
                })
                .sum::<usize>()
        },
        || {
            let found = match wall_contacts {
                neighbours::WallContacts::Faces => None,
                neighbours::WallContacts::Near(near) => {
                    Some(collision::sphere_boundary_of(b, bounds, near, 0.0, time))
                }
                neighbours::WallContacts::All => {
                    Some(collision::sphere_boundary(b, bounds, 0.0, time))
                }
            };
            let Some(found) = found else {
                // The listed faces hold the boundary contacts.
                walls.clear();
                next_walls.clear();
                touching_faces = faces.forces(&cx, quads, bounds, time);
                return;
            };
            *walls = found;
            // Each contact's history of the last sub-step, then its loads
            // (four at a time in lanes as the pairs', the rest by the
            // scalar law), the history advanced in place, in runs of fixed
            // length (which contacts go together does not depend on the
            // threads); on a floor of a few layers of spheres the boundary
            // contacts outnumber the pairs.
            // (Resized, not cleared: every entry is written below, so only
            // a longer vector's new tail needs a value first.)
            next_walls.resize(walls.len(), (0, ContactHistory::default()));
            wall_loads.resize(walls.len(), Loads::default());
            walls
                .par_chunks(WALL_CHUNK)
                .zip(next_walls.par_chunks_mut(WALL_CHUNK))
                .zip(wall_loads.par_chunks_mut(WALL_CHUNK))
                .for_each(|((walls, history), loads)| {
                    neighbours::wall_histories(wall_history, walls, history);
                    wall_chunk(&cx, quads, walls, history, loads);
                });
            // The boundary contacts' bookkeeping, here beside the pairs'
            // loads rather than serial after them (2 threads: 5 % of the
            // bench's sub-steps there): their new histories, sorted by
            // key, and where each body's begin in `walls` (in body order).
            if next_walls.windows(2).any(|w| w[0].0 > w[1].0) {
                next_walls.sort_unstable_by_key(|&(k, _)| k);
            }
            // Where each body's contacts begin (they come in body order).
            super::held::run_starts(b.len(), walls.len(), |c| walls[c].a, wall_start);
        },
    );
    let list = &mut ws.neighbours;
    std::mem::swap(&mut list.wall_history, &mut list.next_wall_history);
    touching + touching_faces + walls.len()
}

/// Boundary contacts per parallel task of [`listed_forces`] (a multiple of
/// the lanes' four).
const WALL_CHUNK: usize = 64;
const _: () = assert!(WALL_CHUNK.is_multiple_of(lanes::N));

/// One run of boundary contacts `walls` with their histories of the last
/// sub-step (`history`, each a key and its history, advanced in place):
/// their loads into `loads`, four at a time in lanes where `quads` (the
/// rest by the scalar law).
fn wall_chunk(
    cx: &Context,
    quads: bool,
    walls: &[ContactGeom],
    history: &mut [(u64, ContactHistory)],
    loads: &mut [Loads],
) {
    let four = if quads {
        walls.len() - walls.len() % lanes::N
    } else {
        0
    };
    let (quad_walls, rest) = walls.split_at(four);
    let (quad_history, rest_history) = history.split_at_mut(four);
    let (quad_loads, rest_loads) = loads.split_at_mut(four);
    for ((c, h), out) in quad_walls
        .chunks_exact(lanes::N)
        .zip(quad_history.chunks_exact_mut(lanes::N))
        .zip(quad_loads.chunks_exact_mut(lanes::N))
    {
        let k = std::array::from_fn(|l| PairConstants::of_contact(cx, &c[l]));
        let mut held: [Held; lanes::N] = std::array::from_fn(|l| Held::from(h[l].1));
        lanes::four_walls(cx, c, &k, &mut held, out);
        for (h, held) in h.iter_mut().zip(held) {
            h.1 = held.into();
        }
    }
    for ((c, (_, h)), out) in rest.iter().zip(rest_history).zip(rest_loads) {
        let k = PairConstants::of_contact(cx, c);
        *out = contact_loads(cx, c, &k, h);
    }
}

/// Listed pairs per parallel task of [`listed_forces`].
const CHUNK: usize = 256;
// A chunk's pairs are numbered by u16 (`listed_chunk`).
const _: () = assert!(CHUNK <= 1 << 16);

/// One chunk of listed pairs (with their constants, histories, touching
/// flags and loads): tests each pair, clears the ones that stopped
/// touching, and computes the touching ones' loads, four at a time in
/// lanes where `quads` (the rest by the scalar law). Returns how many
/// touch.
fn listed_chunk(
    cx: &Context,
    quads: bool,
    pairs: &[(u32, u32)],
    constants: &[PairConstants],
    history: &mut [Held],
    touching: &mut [bool],
    loads: &mut [Loads],
) -> usize {
    let b = cx.bodies;
    let mut found = [0u16; CHUNK];
    let mut count = 0;
    for (p, &(i, j)) in pairs.iter().enumerate() {
        let touches = collision::spheres_within(b, i as usize, j as usize, 0.0);
        // Branch-free on whether a pair touches (60 % do, in no pattern a
        // predictor learns); only a change, which is rare, branches.
        found[count] = p as u16;
        count += usize::from(touches);
        note_touch(touches, &mut touching[p], &mut history[p], &mut loads[p]);
    }
    let found = &found[..count];
    let (four, rest) = found.split_at(if quads { count - count % lanes::N } else { 0 });
    for q in four.chunks_exact(lanes::N) {
        let at = std::array::from_fn(|l| usize::from(q[l]));
        lanes::four_pairs(cx, at, pairs, constants, history, loads);
    }
    for &p in rest {
        let p = usize::from(p);
        let (i, j) = (pairs[p].0 as usize, pairs[p].1 as usize);
        let c = collision::sphere_pair(b, i, j);
        loads[p] = history[p].through(|h| contact_loads(cx, &c, &constants[p], h));
    }
    count
}

/// The list driver's integration (spheres only): per chunk of bodies, each
/// body's loads summed (its ends of listed pairs, in the order [`forces`]
/// adds them, so the same bits, then its boundary contacts: its listed
/// faces, or `walls[wall_start[k]..wall_start[k + 1]]` for body k) and its
/// velocities advanced as [`integrate`] does, then its position and
/// orientation (one parallel pass over the bodies,
/// [`crate::integrate::positions_watched`]);
/// returns whether some sphere has moved half the skin since the list's
/// last rebuild.
fn listed_integrate(
    model: &Model,
    state: &mut State,
    ws: &PenaltyWorkspace,
    dt: f64,
    t: f64,
) -> bool {
    let g = model.gravity;
    let list = &ws.neighbours;
    let (starts, wall_loads) = match list.walls {
        neighbours::WallContacts::Faces => (&list.faces.start, &list.faces.loads),
        _ => (&ws.wall_start, &ws.wall_loads),
    };
    let moved = crate::integrate::positions_watched(
        &mut state.bodies,
        dt,
        list.anchor(),
        list.reach2(),
        |c| {
            let bodies = c.v.iter_mut().zip(c.w.iter_mut());
            for (o, (v, w)) in bodies.enumerate() {
                let k = c.first + o;
                let mut sum = EndSum::default();
                // B of pairs with smaller ids (ascending), then A of pairs
                // with larger ones (a run of the pairs): the order `forces`
                // adds them in. Pairs that do not touch hold zero loads:
                // adding them leaves the sum's bits as they are, and saves
                // an unpredictable branch.
                let as_b = &list.as_b[list.b_start[k] as usize..list.b_start[k + 1] as usize];
                for &p in as_b {
                    sum.add_b(&list.loads[p as usize]);
                }
                for l in &list.loads[list.a_start[k] as usize..list.a_start[k + 1] as usize] {
                    sum.add_a(l);
                }
                for l in &wall_loads[starts[k] as usize..starts[k + 1] as usize] {
                    sum.add_a(l);
                }
                let (fk, tk) = sum.force_torque();
                // As `integrate`'s velocity pass for a sphere.
                *v += (fk * c.inv_mass[o] + g) * dt;
                *w += tk * (c.inv_inertia[o] * dt);
            }
        },
    );
    move_boundaries(model, state, t, dt);
    moved
}

/// The boundaries' poses over the sub-step from `t` ([`crate::integrate::boundaries`]).
fn move_boundaries(model: &Model, state: &mut State, t: f64, dt: f64) {
    crate::integrate::boundaries(
        &model.boundaries,
        &mut state.boundary_origins,
        &mut state.boundary_rotations,
        t,
        dt,
    );
}

/// Symplectic Euler over `dt` from time `t` (module docs), from the loads
/// summed in `ws.force` and `ws.torque` (the general driver's).
fn integrate(model: &Model, state: &mut State, ws: &PenaltyWorkspace, dt: f64, t: f64) {
    let g = model.gravity;
    let b = &mut state.bodies;
    let crate::bodies::Bodies {
        vel,
        omega,
        inv_mass,
        inv_inertia,
        inv_inertia_body,
        shape,
        rot,
        ..
    } = b;
    vel.par_iter_mut()
        .zip(omega.par_iter_mut())
        .enumerate()
        .with_min_len(1024)
        .for_each(|(i, (v, w))| {
            *v += (ws.force[i] * inv_mass[i] + g) * dt;
            if shape[i] != SPHERE {
                let (r, inv_body) = (rot[i], inv_inertia_body[i]);
                let turned =
                    *w + crate::shape::world_inverse_inertia(r, inv_body) * ws.torque[i] * dt;
                *w = crate::integrate::gyroscopic(turned, r, inv_body, dt);
            } else {
                *w += ws.torque[i] * (inv_inertia[i] * dt);
            }
        });
    crate::integrate::positions(b, dt);
    move_boundaries(model, state, t, dt);
}
