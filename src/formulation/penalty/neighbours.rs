//! A Verlet neighbour list for the penalty formulation's sphere pairs.
//!
//! The penalty formulation detects contacts every sub-step, tens of
//! sub-steps per scene step; rebuilding the grid each time was 85 % of a
//! run (`repose_small` under `Penalty`: 55.5 s of 65 s in `collide`). The
//! list keeps every pair of spheres closer than a *skin* (found by the
//! same grid, [`collision::sphere_pairs_within`] with the skin as envelope) and
//! the positions at that moment; a sub-step only checks the listed pairs,
//! until some sphere has moved half the skin since (two spheres then may
//! have closed the whole skin between them), or bodies were added, when it
//! is rebuilt. Listed pairs keep the grid's canonical order, and the
//! contact test and geometry are the grid's own ([`collision::spheres_within`],
//! [`collision::sphere_pair`]): the contacts are those of a rebuild every
//! sub-step, bit for bit. Bodies of other shapes are not listed: a scene
//! with them detects in full every sub-step.
//!
//! The list also holds what the sub-steps need per listed pair, so that no
//! map is searched or filled per contact: each pair's contact history (the
//! default while the pair does not touch), the law's constants of the pair
//! (`loads::PairConstants`: made once per rebuild), its loads of the sub-step
//! (zero while it does not touch, so the sums need not ask), and
//! per body the pairs it is an end of, in the order a serial pass over the
//! contacts would add them to the body (as B of pairs with smaller ids,
//! then as A of pairs with larger ones). Where every boundary is planar
//! and still, the list keeps the same per (sphere, face) pair within the
//! skin (`faces`); otherwise sphere–boundary contacts keep their
//! histories in a vector sorted by key.
//!
//! **The adapted skin.** Where the scene sets no skin, each rebuild picks
//! the next list's: twice the farthest any sphere moved per sub-step over
//! the last list's life, times [`TARGET_LIFE`] (50) sub-steps, within
//! [`SKIN_RANGE`] (0.05 to 1.5) of the largest radius; the first list takes
//! [`FIRST_SKIN`] (0.25) of it. A wider skin lists more pairs, each tested
//! every sub-step; a narrower one rebuilds more often (a rebuild costs a
//! few sub-steps). A fixed fraction of the radius suits few scenes: on the
//! 6,000-bead bench bed, settling at ≲ 0.3 m/s, 0.25 r lasted 90 sub-steps
//! and every skin from 0.075 to 0.25 r gave the same speed within the
//! machine's noise (0.05 r: 3 % slower); `repose_small`'s pour (beads
//! falling at ≈ 1.7 m/s, new ones each scene step) rebuilt every 5
//! sub-steps at 0.25 r and ran 1.8× faster at 1.5 r. The skin changes
//! which pairs are tested, never the contacts found, so the results do not
//! depend on it.
//!
//! Boundaries are skinned the same way when none of them moves (a drum
//! turning about its axis does not move its surfaces): a rebuild lists the
//! (sphere, face) pairs within the skin where every boundary is planar
//! (`faces`), else the spheres within the skin of a boundary, and
//! the sub-steps test only those ([`collision::sphere_boundary_of`]; on the
//! 6,000-bead bench bed the spheres near a boundary took the boundary pass
//! from 17 % of a sub-step to under 1 %; the listed faces took the
//! boundary contacts from 15 % of a one-thread sub-step to 7 %).
//! The contacts are again a full pass's, for spheres on the inner side of
//! the surfaces; a sphere that tunnels through a one-sided surface (up
//! through a plate, into a drum past its cap's rim) is met at the next
//! rebuild instead of the sub-step its centre crosses. The state's
//! histories ([`State::contact_history`](crate::state::State), sorted by
//! key) are written from the list's at the end of every scene step and read
//! back when the list does not hold the world's last step (a new stepper, a
//! restored checkpoint).

use glam::DVec3;
use rayon::prelude::*;

use super::faces::FaceList;
use super::held::{run_starts, Held, HeldHistories};
use super::loads::{Context, Loads, PairConstants};
use super::{ContactHistory, NormalModel, PairCoefficients};
use crate::bodies::Bodies;
use crate::boundary::Boundary;
use crate::collision::{self, pair_key, ContactGeom, Crowded};

/// The listed pairs and where the spheres were when they were listed.
#[derive(Default)]
pub struct NeighbourList {
    /// Sphere pairs (i < j) in ascending (i, j): the grid's canonical order.
    pub(super) pairs: Vec<(u32, u32)>,
    anchor: Vec<DVec3>,
    skin: f64,
    /// Sub-steps since the last rebuild (counting the rebuild's; 0: never
    /// built).
    age: u64,
    /// Rebuilds so far (for reports and tests).
    pub rebuilds: u64,
    /// Per pair, its contact history; the default while it does not touch.
    pub(super) history: Vec<Held>,
    /// Per pair, whether it touched at the last sub-step (its history is
    /// the default where it did not).
    pub(super) touching: Vec<bool>,
    /// Per pair, its law's constants ([`PairConstants`]), for the pair
    /// coefficients and normal law in `constants_of`.
    pub(super) constants: Vec<PairConstants>,
    /// What `constants` were computed for: the rebuild count, the normal
    /// law and the pair coefficients (`None`: not yet).
    constants_of: Option<(u64, NormalModel, Vec<PairCoefficients>)>,
    /// Per pair, its loads of the current sub-step; zero where it does not
    /// touch (the sums add every listed pair).
    pub(super) loads: Vec<Loads>,
    /// Per body k, the pairs it is B of: `as_b[b_start[k]..b_start[k + 1]]`
    /// (pair indices, ascending in A). The pairs it is A of are
    /// `a_start[k]..a_start[k + 1]`, a run of `pairs` (sorted by A).
    pub(super) b_start: Vec<u32>,
    pub(super) as_b: Vec<u32>,
    pub(super) a_start: Vec<u32>,
    /// Sphere–boundary histories of the last sub-step, sorted by key
    /// (empty where the listed faces hold them, [`WallContacts::Faces`]).
    pub(super) wall_history: Vec<(u64, ContactHistory)>,
    /// Where a sub-step puts the next `wall_history` (then swapped in).
    pub(super) next_wall_history: Vec<(u64, ContactHistory)>,
    /// The vectors of `history` and `touching` before the last rebuild,
    /// kept for the next one to fill (contents meaningless).
    spare_history: Vec<Held>,
    spare_touching: Vec<bool>,
    /// A rebuild's cursor per body while it fills `as_b`.
    cursor: Vec<u32>,
    /// The world step whose end the histories hold (`None`: not the world's).
    pub(super) synced: Option<u64>,
    /// How the sub-steps find the sphere–boundary contacts.
    pub(super) walls: WallContacts,
    /// The listed boundary faces (empty unless `walls` is
    /// [`WallContacts::Faces`]).
    pub(super) faces: FaceList,
}

/// How the sub-steps of a list find the sphere–boundary contacts.
#[derive(Default)]
pub(super) enum WallContacts {
    /// Every boundary planar and still: the listed faces ([`FaceList`];
    /// their histories are there, `wall_history` is empty).
    #[default]
    Faces,
    /// Every boundary still, some not planar: the spheres within the skin
    /// of a boundary at the last rebuild (ascending ids), the only ones
    /// that can touch one before the next rebuild, are searched
    /// ([`collision::sphere_boundary_of`]).
    Near(Vec<u32>),
    /// Some boundary moves: every sphere is searched.
    All,
}

/// The adapted skin's aim: a list lasting this many sub-steps (module
/// docs, "The adapted skin").
pub const TARGET_LIFE: f64 = 50.0;
/// The adapted skin's bounds, times the largest radius.
pub const SKIN_RANGE: (f64, f64) = (0.05, 1.5);
/// The first list's adapted skin, times the largest radius.
pub const FIRST_SKIN: f64 = 0.25;

/// New listed pairs per parallel run of a rebuild's history merge.
const MERGE_RUN: usize = 2048;

impl NeighbourList {
    /// Whether the list no longer covers every pair that may touch.
    /// `moved`: whether some sphere has moved half the skin since the
    /// rebuild, where the caller knows it (from the last sub-step's
    /// [`integrate::positions_watched`](crate::integrate::positions_watched));
    /// `None`: measured here.
    fn stale(&self, bodies: &Bodies, fixed: Option<f64>, moved: Option<bool>) -> bool {
        if bodies.len() != self.anchor.len() || fixed.is_some_and(|skin| skin != self.skin) {
            return true;
        }
        moved.unwrap_or_else(|| {
            let limit = self.reach2();
            bodies
                .pos
                .par_iter()
                .zip(self.anchor.par_iter())
                .any(|(x, a)| (*x - *a).length_squared() >= limit)
        })
    }

    /// The squared distance from its place at the last rebuild past which
    /// a sphere makes the list stale: (skin/2)².
    pub(super) fn reach2(&self) -> f64 {
        0.25 * self.skin * self.skin
    }

    /// Where the spheres were at the last rebuild.
    pub(super) fn anchor(&self) -> &[DVec3] {
        &self.anchor
    }

    /// Rebuilds the list when it is stale (at simulated time `time`); a
    /// pair listed before keeps its history. `fixed`: the skin the scene
    /// sets, `None` to adapt it (module docs); `moved`: as for `stale`.
    /// Call once per sub-step (the list counts its age in calls).
    pub(super) fn refresh(
        &mut self,
        bodies: &Bodies,
        boundaries: &[Boundary],
        fixed: Option<f64>,
        time: f64,
        moved: Option<bool>,
    ) -> Result<(), Crowded> {
        if !self.stale(bodies, fixed, moved) {
            // (A list never built, over no bodies, has no age.)
            if self.rebuilds > 0 {
                self.age += 1;
            }
            return Ok(());
        }
        let skin = fixed.unwrap_or_else(|| self.adapted_skin(bodies));
        // A sphere moves less than half the skin before the next rebuild,
        // so against boundaries that stay put the skin is reach enough.
        // The boundary contacts' histories move to where the new list
        // keeps them.
        let held = match self.walls {
            WallContacts::Faces => self.faces.held().collect(),
            _ => std::mem::take(&mut self.wall_history),
        };
        if FaceList::serve(boundaries) {
            self.faces.rebuild(bodies, boundaries, skin, &held);
            self.walls = WallContacts::Faces;
        } else {
            self.faces.clear();
            self.wall_history = held;
            self.walls = if boundaries.iter().all(Boundary::geometry_still) {
                let mut near: Vec<u32> = collision::sphere_boundary(bodies, boundaries, skin, time)
                    .iter()
                    .map(|c| c.a)
                    .collect();
                near.dedup();
                WallContacts::Near(near)
            } else {
                WallContacts::All
            };
        }
        let pairs = collision::sphere_pairs_within(bodies, skin)?;
        // Both lists ascend in (i, j): each run of new pairs takes its
        // histories by a merge from where its first pair falls among the
        // old ones, the runs in parallel, into the vectors of the list
        // before last (their pages already mapped: fresh ones took a page
        // fault per 4 KiB; the serial merge into them was half a rebuild).
        let mut history = std::mem::take(&mut self.spare_history);
        let mut touching = std::mem::take(&mut self.spare_touching);
        history.resize(pairs.len(), Held::default());
        touching.resize(pairs.len(), false);
        let old = (&self.pairs, &self.history, &self.touching);
        pairs
            .par_chunks(MERGE_RUN)
            .zip(history.par_chunks_mut(MERGE_RUN))
            .zip(touching.par_chunks_mut(MERGE_RUN))
            .for_each(|((new, history), touching)| {
                let (old_pairs, old_history, old_touching) = old;
                let mut at = old_pairs.partition_point(|q| *q < new[0]);
                for ((p, h), t) in new.iter().zip(history).zip(touching) {
                    while at < old_pairs.len() && old_pairs[at] < *p {
                        at += 1;
                    }
                    (*h, *t) = if old_pairs.get(at) == Some(p) {
                        (old_history[at], old_touching[at])
                    } else {
                        (Held::default(), false)
                    };
                }
            });
        // Per body, the pairs it is B of (in pair order, so ascending in A)
        // and where its run of pairs as A begins (running sums kept in a
        // register: summing in place waits on each store).
        let n = bodies.len();
        let (b_start, a_start, as_b) = (&mut self.b_start, &mut self.a_start, &mut self.as_b);
        b_start.clear();
        b_start.resize(n + 1, 0);
        for &(_, j) in &pairs {
            b_start[j as usize + 1] += 1;
        }
        let mut sum = 0;
        for s in b_start.iter_mut() {
            sum += *s;
            *s = sum;
        }
        run_starts(n, pairs.len(), |p| pairs[p].0, a_start);
        let cursor = &mut self.cursor;
        cursor.clear();
        cursor.extend_from_slice(&b_start[..n]);
        as_b.clear();
        as_b.resize(pairs.len(), 0);
        for (p, &(_, j)) in pairs.iter().enumerate() {
            as_b[cursor[j as usize] as usize] = p as u32;
            cursor[j as usize] += 1;
        }
        // Zero loads for every pair (the touching ones' are written before
        // they are read).
        self.loads.resize(pairs.len(), Loads::default());
        self.loads
            .par_iter_mut()
            .for_each(|l| *l = Loads::default());
        self.pairs = pairs;
        self.spare_history = std::mem::replace(&mut self.history, history);
        self.spare_touching = std::mem::replace(&mut self.touching, touching);
        self.anchor.clone_from(&bodies.pos);
        self.skin = skin;
        self.age = 1;
        self.rebuilds += 1;
        Ok(())
    }

    /// The skin of the next list when the scene sets none (module docs,
    /// "The adapted skin"): twice the farthest any sphere has moved per
    /// sub-step since the last rebuild, times [`TARGET_LIFE`] sub-steps,
    /// within [`SKIN_RANGE`] of the largest radius; [`FIRST_SKIN`] of it for
    /// the first list.
    fn adapted_skin(&self, bodies: &Bodies) -> f64 {
        let r = bodies.max_radius();
        let (lo, hi) = (SKIN_RANGE.0 * r, SKIN_RANGE.1 * r);
        if self.age == 0 {
            return FIRST_SKIN * r;
        }
        // Bodies are only appended: the first ones have anchors.
        let farthest2 = (bodies.pos.par_iter())
            .zip(self.anchor.par_iter())
            .map(|(x, a)| (*x - *a).length_squared())
            .reduce(|| 0.0, f64::max);
        (2.0 * farthest2.sqrt() / self.age as f64 * TARGET_LIFE).clamp(lo, hi)
    }

    /// The current list's skin (m).
    pub fn skin(&self) -> f64 {
        self.skin
    }

    /// Computes every listed pair's constants unless they are those of
    /// this list, normal law and pair coefficients already. (Bodies keep
    /// their radius, mass and material for life and are only appended,
    /// which rebuilds the list: a pair's constants change with nothing
    /// else.)
    pub(super) fn refresh_constants(&mut self, cx: &Context) {
        let model = cx.settings.normal;
        if let Some((rebuild, m, table)) = &self.constants_of {
            if *rebuild == self.rebuilds && *m == model && table.as_slice() == cx.pairs {
                return;
            }
        }
        self.pairs
            .par_iter()
            .map(|&(i, j)| PairConstants::of_spheres(cx, i as usize, j as usize))
            .collect_into_vec(&mut self.constants);
        self.faces.refresh_constants(cx);
        self.constants_of = Some((self.rebuilds, model, cx.pairs.to_vec()));
    }

    /// Takes the histories from the world's (every pair and boundary
    /// contact in it, sorted by key; the others start afresh).
    pub(super) fn import(&mut self, world: &[(u64, ContactHistory)]) {
        self.pairs
            .par_iter()
            .zip(self.history.par_iter_mut())
            .zip(self.touching.par_iter_mut())
            .for_each(|((&(i, j), h), t)| {
                let key = pair_key(i, j);
                let found = world.binary_search_by_key(&key, |&(k, _)| k).ok();
                (*h, *t) = match found {
                    Some(at) => (world[at].1.into(), true),
                    None => (Held::default(), false),
                };
            });
        // A pair that touched before the import may not touch now: its
        // loads must read zero (touching ones are written before use).
        self.loads.fill(Loads::default());
        // The boundary contacts' keys have the top bit: the sorted tail.
        let walls = &world[world.partition_point(|&(k, _)| k >> 63 == 0)..];
        self.wall_history.clear();
        match self.walls {
            WallContacts::Faces => self.faces.import(walls),
            _ => self.wall_history.extend_from_slice(walls),
        }
    }

    /// Writes the histories of the contacts of the last sub-step into the
    /// world's, replacing what it held: the touching pairs' in pair order,
    /// which is key order, then the boundary contacts' (sorted, and after
    /// every pair's by their keys' top bit).
    pub(super) fn export(&self, world: &mut Vec<(u64, ContactHistory)>) {
        world.clear();
        world.par_extend(
            (self.pairs.par_iter())
                .zip(self.history.par_iter())
                .zip(self.touching.par_iter())
                .filter(|(_, &t)| t)
                .map(|((&(i, j), h), _)| (pair_key(i, j), (*h).into())),
        );
        match self.walls {
            WallContacts::Faces => world.extend(self.faces.held()),
            _ => world.extend_from_slice(&self.wall_history),
        }
        debug_assert!(world.windows(2).all(|w| w[0].0 < w[1].0));
    }
}

/// The history of the contact of key `key` in `histories` (sorted by
/// key), or the default where it has none.
pub(super) fn history_in(histories: &[(u64, ContactHistory)], key: u64) -> ContactHistory {
    match histories.binary_search_by_key(&key, |&(k, _)| k) {
        Ok(at) => histories[at].1,
        Err(_) => ContactHistory::default(),
    }
}

/// Each boundary contact of `walls` with the history it had at the last
/// sub-step (from a list's `wall_history`, sorted by key; the default for a
/// new contact), into `out` (as long as `walls`). The contacts come in body
/// order, so their keys mostly ascend ([`HeldHistories`]).
pub(super) fn wall_histories(
    wall_history: &[(u64, ContactHistory)],
    walls: &[ContactGeom],
    out: &mut [(u64, ContactHistory)],
) {
    let mut held = HeldHistories::new(wall_history);
    for (c, out) in walls.iter().zip(out) {
        *out = (c.key, held.find(c.key).unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::SphereInit;

    /// Boundary contacts whose keys fall back (a fresh search), skip ahead,
    /// repeat none and include keys the last sub-step did not have (before
    /// the first, between, after the last): each gets the history a binary
    /// search finds ([`history_in`]), the default where there is none.
    #[test]
    fn wall_histories_match_a_search_for_each_key() {
        let held = |key: u64| {
            let mut h = ContactHistory::default();
            h.spin.deflection = key as f64;
            h.point = Some(DVec3::splat(key as f64));
            (key, h)
        };
        let wall_history: Vec<_> = [10, 20, 30, 40].map(held).to_vec();
        let keys = [30u64, 10, 40, 35, 5, 20, 45, 15, 30];
        let walls: Vec<ContactGeom> = keys
            .iter()
            .map(|&key| ContactGeom {
                a: 0,
                b: collision::NO_BODY,
                key,
                normal: DVec3::Z,
                point: DVec3::ZERO,
                gap: 0.0,
                material_b: 0,
                wall_velocity: DVec3::ZERO,
                wall_omega: DVec3::ZERO,
                wall: 0,
            })
            .collect();
        let mut out = vec![(0, ContactHistory::default()); walls.len()];
        wall_histories(&wall_history, &walls, &mut out);
        for (&key, (k, h)) in keys.iter().zip(&out) {
            assert_eq!(*k, key);
            let want = history_in(&wall_history, key);
            assert_eq!(
                (h.spin.deflection, h.point),
                (want.spin.deflection, want.point),
                "key {key}"
            );
            let held_before = [10, 20, 30, 40].contains(&key);
            assert_eq!(h.point.is_some(), held_before, "key {key}");
        }
    }

    /// Runs of items by body, with bodies that have none at the start, in
    /// the middle and at the end: each body's run is exactly its items.
    #[test]
    fn run_starts_give_each_body_its_items() {
        let items = [1u32, 1, 3, 4, 4, 4];
        let mut out = vec![99; 2];
        run_starts(6, items.len(), |p| items[p], &mut out);
        assert_eq!(out, [0, 0, 2, 2, 3, 6, 6]);
        for (k, w) in out.windows(2).enumerate() {
            let run = &items[w[0] as usize..w[1] as usize];
            assert!(run.iter().all(|&b| b == k as u32), "body {k}: {run:?}");
            let count = items.iter().filter(|&&b| b == k as u32).count();
            assert_eq!(run.len(), count, "body {k}");
        }
        run_starts(3, 0, |_| unreachable!(), &mut out);
        assert_eq!(out, [0, 0, 0, 0]);
    }

    /// Two spheres of radius 1 mm, 10 mm apart, the second moving along x
    /// by `step` a sub-step, under the adapted skin: the skin of each
    /// list after the first is 2 × `step` × [`TARGET_LIFE`] (within
    /// [`SKIN_RANGE`]), and the first is [`FIRST_SKIN`] of the radius.
    fn skins(step: f64, substeps: usize) -> Vec<f64> {
        let mut bodies = Bodies::default();
        for x in [0.0, 0.01] {
            bodies.push(&SphereInit {
                pos: DVec3::new(x, 0.0, 0.0),
                radius: 1e-3,
                mass: 1.0,
                inertia: 1.0,
                vel: DVec3::ZERO,
                omega: DVec3::ZERO,
                material: 0,
            });
        }
        let mut list = NeighbourList::default();
        let mut out = Vec::new();
        for k in 0..substeps {
            let before = list.rebuilds;
            list.refresh(&bodies, &[], None, k as f64, None)
                .expect("two spheres are not crowded");
            if list.rebuilds != before {
                out.push(list.skin());
            }
            bodies.pos[1].x += step;
        }
        out
    }

    /// A rebuild carries each pair's history and touching flag to the
    /// pair's new place, over many merge runs: 4,096 spheres in a lattice,
    /// each listed pair marked, the list rebuilt with a wider skin (which
    /// adds the diagonal pairs) and then a narrower one (which drops them).
    #[test]
    fn a_rebuild_carries_every_pairs_history() {
        let mut bodies = Bodies::default();
        let (r, n) = (1e-3, 16);
        for k in 0..n * n * n {
            let at = DVec3::new((k % n) as f64, (k / n % n) as f64, (k / (n * n)) as f64);
            bodies.push(&SphereInit {
                pos: at * (2.0 * r * 1.01),
                radius: r,
                mass: 1.0,
                inertia: 1.0,
                vel: DVec3::ZERO,
                omega: DVec3::ZERO,
                material: 0,
            });
        }
        let mark = |(i, j): (u32, u32)| f64::from(i) * 1e5 + f64::from(j);
        let mut list = NeighbourList::default();
        list.refresh(&bodies, &[], Some(0.1 * r), 0.0, None)
            .expect("a lattice is not crowded");
        let first = list.pairs.clone();
        assert!(first.len() > 2 * MERGE_RUN, "{} pairs", first.len());
        for (p, &ij) in first.iter().enumerate() {
            list.history[p].spin = mark(ij);
            list.touching[p] = ij.0 % 3 == 0;
        }
        for skin in [1.0 * r, 0.1 * r] {
            list.refresh(&bodies, &[], Some(skin), 0.0, None)
                .expect("a lattice is not crowded");
            assert!(list.pairs.windows(2).all(|w| w[0] < w[1]));
            let mut carried = 0;
            for (p, &ij) in list.pairs.iter().enumerate() {
                let was = first.binary_search(&ij).is_ok();
                let (h, t) = (list.history[p].spin, list.touching[p]);
                if was {
                    carried += 1;
                    assert_eq!(
                        (h, t),
                        (mark(ij), ij.0 % 3 == 0),
                        "pair {ij:?}, skin {skin:e}"
                    );
                } else {
                    assert_eq!((h, t), (0.0, false), "new pair {ij:?}, skin {skin:e}");
                }
            }
            assert_eq!(
                carried,
                first.len(),
                "skin {skin:e}: every first pair is listed"
            );
        }
    }

    #[test]
    fn the_adapted_skin_lets_a_list_last_its_target_life() {
        let r = 1e-3;
        for (step, substeps, want) in [
            // 0.1 r: within the range.
            (1e-6, 400, 2.0 * 1e-6 * TARGET_LIFE),
            // Faster than the widest skin allows, slower than the narrowest.
            (1e-4, 400, SKIN_RANGE.1 * r),
            (1e-8, 20_000, SKIN_RANGE.0 * r),
        ] {
            let got = skins(step, substeps);
            assert_eq!(
                got[0],
                FIRST_SKIN * r,
                "step {step:e}: the first list's skin"
            );
            assert!(got.len() >= 3, "step {step:e}: only {} lists", got.len());
            for (k, s) in got.iter().enumerate().skip(1) {
                let close = (s - want).abs() <= 1e-9 * want;
                assert!(close, "step {step:e}, list {k}: skin {s:e}, want {want:e}");
            }
        }
    }
}
