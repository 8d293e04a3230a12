//! The listed boundary faces: where every boundary is planar (planes and
//! boxes) and still, the neighbour list ([`super::neighbours`]) lists at
//! each rebuild, beside the sphere pairs, every (sphere, face) pair whose
//! plane the sphere's surface is nearer than the skin, and keeps per listed
//! face what it keeps per listed pair: the contact's history, whether it
//! touched at the last sub-step, the law's constants (made once per
//! rebuild) and its loads of the sub-step (zero while it does not touch).
//! A sub-step tests each listed face and loads the touching ones — four at
//! a time in the lanes' law ([`super::lanes::four_walls`]) — with no search
//! over the spheres, no histories looked up by key and no constants made
//! per contact. (On the 6,000-bead bench bed the boundary contacts, 8 % of
//! the contacts, had taken 15 % of a one-thread sub-step that way; listed,
//! 7 %.)
//!
//! **The contacts of a full detection.** A face touches a sphere at a
//! sub-step when the centre is within the face's extent and nearer the
//! plane than the radius ([`collision::face_contact`], the full pass's own
//! test and geometry). The list is rebuilt before any sphere has moved half
//! the skin, so such a sphere's surface was within half the skin of the
//! plane at the rebuild: it was listed, whatever the face's extent then
//! (the extent is tested every sub-step). The listed faces run in the full
//! pass's order — by sphere, then boundary, then face — which is also the
//! order of their keys, and each body sums its listed faces' loads in it
//! (a face that does not touch adds zero loads), so the bits are those of
//! a full detection. Boundaries of other shapes, or moving ones, take the
//! general path of [`super::neighbours`] (the spheres near a boundary, or
//! all, searched every sub-step).

use rayon::prelude::*;

use super::held::{note_touch, run_starts, Held, HeldHistories};
use super::lanes;
use super::loads::{contact_loads, Context, Loads, PairConstants};
use super::ContactHistory;
use crate::bodies::Bodies;
use crate::boundary::{Boundary, Face};
use crate::collision::{self, ContactGeom, SphereAt, NO_BODY};

/// The listed (sphere, face) pairs and what the sub-steps need of each.
#[derive(Default)]
pub struct FaceList {
    /// Every face of the boundaries: (boundary index, face id, face, the
    /// boundary's material), in the order a full detection tests them.
    faces: Vec<(usize, u32, Face, u32)>,
    /// Per listed face, ascending in key (sphere, boundary, face): its
    /// sphere,
    pub(super) sphere: Vec<u32>,
    /// its face (an index into `faces`),
    face: Vec<u32>,
    /// its contact's key ([`collision::wall_key`]),
    pub(super) key: Vec<u64>,
    /// its contact's history (the default while it does not touch),
    pub(super) history: Vec<Held>,
    /// whether it touched at the last sub-step,
    pub(super) touching: Vec<bool>,
    /// its law's constants (`refresh_constants`),
    constants: Vec<PairConstants>,
    /// and its loads of the sub-step (zero where it does not touch).
    pub(super) loads: Vec<Loads>,
    /// Per body k, its listed faces: `start[k]..start[k + 1]`.
    pub(super) start: Vec<u32>,
}

/// Listed faces per parallel task of [`FaceList::forces`] (a multiple of
/// the lanes' four).
const CHUNK: usize = 64;
const _: () = assert!(CHUNK.is_multiple_of(lanes::N) && CHUNK <= 1 << 16);

impl FaceList {
    /// Each touching listed face's (sphere, boundary index, loads of the
    /// sub-step).
    pub(super) fn loads_by_boundary(&self) -> impl Iterator<Item = (u32, usize, &Loads)> + '_ {
        self.touching
            .iter()
            .enumerate()
            .filter(|(_, &t)| t)
            .map(|(k, _)| {
                let f = self.face[k] as usize;
                (self.sphere[k], self.faces[f].0, &self.loads[k])
            })
    }

    /// Whether listed faces can serve `boundaries`: every one planar, and
    /// its geometry still.
    pub(super) fn serve(boundaries: &[Boundary]) -> bool {
        boundaries
            .iter()
            .all(|b| b.is_planar() && b.geometry_still())
    }

    /// Lists every (sphere, face) pair whose plane the sphere's surface is
    /// nearer than `skin` (module docs), each with the history `held` has
    /// for its key (sorted by key; the boundary contacts of the last
    /// sub-step), else the default. The constants are left to
    /// [`FaceList::refresh_constants`].
    pub(super) fn rebuild(
        &mut self,
        bodies: &Bodies,
        boundaries: &[Boundary],
        skin: f64,
        held: &[(u64, ContactHistory)],
    ) {
        self.faces.clear();
        for (bi, b) in boundaries.iter().enumerate() {
            for (id, f) in b.faces() {
                self.faces.push((bi, id, f, b.material));
            }
        }
        let faces = &self.faces;
        let listed: Vec<(u32, u32)> = (0..bodies.len())
            .into_par_iter()
            .with_min_len(1024)
            .flat_map_iter(|i| {
                let (x, r) = (bodies.pos[i], bodies.radius[i]);
                (faces.iter().enumerate())
                    .filter(move |(_, (_, _, f, _))| (x - f.point).dot(f.normal) - r < skin)
                    .map(move |(k, _)| (i as u32, k as u32))
            })
            .collect();
        self.sphere.clear();
        self.face.clear();
        self.key.clear();
        self.history.clear();
        self.touching.clear();
        let mut held = HeldHistories::new(held);
        for (i, k) in listed {
            let (bi, id, _, _) = self.faces[k as usize];
            let key = collision::wall_key(i, bi, id);
            let found = held.find(key);
            let (h, t) = (found.unwrap_or_default(), found.is_some());
            self.sphere.push(i);
            self.face.push(k);
            self.key.push(key);
            self.history.push(h.into());
            self.touching.push(t);
        }
        debug_assert!(self.key.windows(2).all(|w| w[0] < w[1]));
        let sphere = &self.sphere;
        run_starts(bodies.len(), sphere.len(), |p| sphere[p], &mut self.start);
        self.loads.clear();
        self.loads.resize(self.sphere.len(), Loads::default());
    }

    /// Every listed face's law constants (for the pair coefficients and
    /// normal law of `cx`): a sphere's against a boundary's material.
    pub(super) fn refresh_constants(&mut self, cx: &Context) {
        let faces = &self.faces;
        (self.sphere.par_iter())
            .zip(self.face.par_iter())
            .map(|(&i, &k)| PairConstants::of_sphere_wall(cx, i as usize, faces[k as usize].3))
            .collect_into_vec(&mut self.constants);
    }

    /// The histories of the faces touching at the last sub-step, with
    /// their keys (ascending).
    pub(super) fn held(&self) -> impl Iterator<Item = (u64, ContactHistory)> + '_ {
        (self.key.iter())
            .zip(&self.history)
            .zip(&self.touching)
            .filter(|(_, &t)| t)
            .map(|((&k, h), _)| (k, (*h).into()))
    }

    /// Takes the histories from `world` (the boundary contacts' of the
    /// world, sorted by key): each listed face the one of its key, the
    /// default where there is none.
    pub(super) fn import(&mut self, world: &[(u64, ContactHistory)]) {
        let mut held = HeldHistories::new(world);
        for ((&key, h), t) in (self.key.iter())
            .zip(&mut self.history)
            .zip(&mut self.touching)
        {
            let found = held.find(key);
            (*h, *t) = (found.unwrap_or_default().into(), found.is_some());
        }
        self.loads.fill(Loads::default());
    }

    /// Drops every listed face (the list now serves boundaries it cannot).
    pub(super) fn clear(&mut self) {
        self.sphere.clear();
        self.face.clear();
        self.key.clear();
        self.history.clear();
        self.touching.clear();
        self.constants.clear();
        self.loads.clear();
        self.start.clear();
    }

    /// Tests every listed face at time `time` and loads the touching ones,
    /// advancing their histories (four at a time in lanes where `quads`;
    /// chunks of fixed length, so the grouping does not depend on the
    /// threads, nor do the bits). Returns how many touch.
    pub(super) fn forces(
        &mut self,
        cx: &Context,
        quads: bool,
        boundaries: &[Boundary],
        time: f64,
    ) -> usize {
        let at = At {
            cx,
            boundaries,
            faces: &self.faces,
            time,
        };
        (self.sphere.par_chunks(CHUNK))
            .zip(self.face.par_chunks(CHUNK))
            .zip(self.constants.par_chunks(CHUNK))
            .zip(self.history.par_chunks_mut(CHUNK))
            .zip(self.touching.par_chunks_mut(CHUNK))
            .zip(self.loads.par_chunks_mut(CHUNK))
            .map(
                |(((((sphere, face), constants), history), touching), loads)| {
                    at.chunk(quads, sphere, face, constants, history, touching, loads)
                },
            )
            .sum()
    }
}

/// What a chunk of [`FaceList::forces`] reads besides its listed faces.
struct At<'a> {
    cx: &'a Context<'a>,
    boundaries: &'a [Boundary],
    faces: &'a [(usize, u32, Face, u32)],
    time: f64,
}

impl At<'_> {
    /// One chunk of listed faces (`sphere[p]` against face `face[p]`, with
    /// their constants, histories, touching flags and loads): as
    /// `listed_chunk` does for pairs.
    #[allow(clippy::too_many_arguments)]
    fn chunk(
        &self,
        quads: bool,
        sphere: &[u32],
        face: &[u32],
        constants: &[PairConstants],
        history: &mut [Held],
        touching: &mut [bool],
        loads: &mut [Loads],
    ) -> usize {
        let b = self.cx.bodies;
        let mut found = [(0u16, UNUSED); CHUNK];
        let mut count = 0;
        for (p, (&i, &k)) in sphere.iter().zip(face).enumerate() {
            let (bi, id, f, _) = &self.faces[k as usize];
            let s = SphereAt {
                i,
                x: b.pos[i as usize],
                r: b.radius[i as usize],
            };
            let c =
                collision::face_contact(s, (*bi, &self.boundaries[*bi]), *id, f, 0.0, self.time);
            let touches = c.is_some();
            if let Some(c) = c {
                found[count] = (p as u16, c);
                count += 1;
            }
            note_touch(touches, &mut touching[p], &mut history[p], &mut loads[p]);
        }
        let found = &found[..count];
        let (four, rest) = found.split_at(if quads { count - count % lanes::N } else { 0 });
        for q in four.chunks_exact(lanes::N) {
            let p: [usize; lanes::N] = std::array::from_fn(|l| usize::from(q[l].0));
            let c: [ContactGeom; lanes::N] = std::array::from_fn(|l| q[l].1);
            let k: [PairConstants; lanes::N] = std::array::from_fn(|l| constants[p[l]]);
            let mut h: [Held; lanes::N] = std::array::from_fn(|l| history[p[l]]);
            let mut out = [Loads::default(); lanes::N];
            lanes::four_walls(self.cx, &c, &k, &mut h, &mut out);
            for l in 0..lanes::N {
                history[p[l]] = h[l];
                loads[p[l]] = out[l];
            }
        }
        for (p, c) in rest {
            let p = usize::from(*p);
            loads[p] = history[p].through(|h| contact_loads(self.cx, c, &constants[p], h));
        }
        count
    }
}

/// A placeholder for the unfilled entries of a chunk's found contacts.
const UNUSED: ContactGeom = ContactGeom {
    a: 0,
    b: NO_BODY,
    key: 0,
    normal: glam::DVec3::ZERO,
    point: glam::DVec3::ZERO,
    gap: 0.0,
    material_b: 0,
    wall_velocity: glam::DVec3::ZERO,
    wall_omega: glam::DVec3::ZERO,
    wall: collision::NO_WALL,
};
