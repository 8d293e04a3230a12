//! Where each world of a batch lives in the GPU solver's buffers
//! (`shaders/jacobi.wgsl`, "Worlds"), and the concatenated records.
//!
//! World w's contacts occupy `contact_start..contact_end` and its bodies
//! `body_start..body_end`, each range starting at a multiple of the
//! workgroup size [`WG`], so every workgroup of the
//! contact and body passes holds one world's threads (the `groups` buffer
//! names it) and the residual reduction's partial sums of a world are its
//! own, in the order they have when the world runs alone. Slots (contact
//! ends in CSR order) follow each other without gaps. Between ranges lie
//! padding records whose threads return at once.
//!
//! | buffer | world w's part | shifted ids |
//! |---|---|---|
//! | contacts, γ | `contact_start ..` | body ids + `body_start`, slot ids + `slot_start` |
//! | bodies (each region), inertia | `body_start ..` | — |
//! | offsets | `body_start ..= body_end` | + `slot_start`; padding bodies own no slots |
//! | partials | `contact_start / RWG ..` | — |
//!
//! A batch of one world has every start at 0: its records go up unchanged.

use crate::collision::NO_BODY;
use crate::solver::packed::{PackedContact, PackedProblem};

/// Workgroup size of `contact_pass` and `body_pass` (WGSL `WG`).
pub const WG: u32 = 256;
/// Workgroup size of the residual reduction (WGSL `RWG`).
pub const RWG: u32 = 256;

/// One world's ranges in the batch's buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorldRange {
    /// First contact record.
    pub contact_start: usize,
    /// Contacts of the world.
    pub contacts: usize,
    /// First body record.
    pub body_start: usize,
    /// Bodies of the world.
    pub bodies: usize,
    /// First slot.
    pub slot_start: usize,
    /// Slots (contact ends) of the world.
    pub slots: usize,
}

impl WorldRange {
    /// One past the world's last contact.
    pub fn contact_end(&self) -> usize {
        self.contact_start + self.contacts
    }

    /// One past the world's last body.
    pub fn body_end(&self) -> usize {
        self.body_start + self.bodies
    }

    /// The world's residual partial sums (one per contact workgroup).
    pub fn partials(&self) -> (usize, usize) {
        let first = self.contact_start / RWG as usize;
        (first, first + self.contacts.div_ceil(RWG as usize))
    }
}

/// The ranges of all worlds of a batch and the buffers' total sizes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BatchLayout {
    /// Each world's ranges, in batch order.
    pub worlds: Vec<WorldRange>,
    /// Contact records in all, padding included (a multiple of WG).
    pub contacts: usize,
    /// Body records in all, padding included (a multiple of WG).
    pub bodies: usize,
    /// Slots in all.
    pub slots: usize,
}

impl BatchLayout {
    /// Lays out worlds of (contacts, bodies, slots) one after another.
    pub fn new(sizes: impl IntoIterator<Item = (usize, usize, usize)>) -> Self {
        const _: () = assert!(
            WG == RWG,
            "a residual workgroup covers one contact workgroup"
        );
        let wg = WG as usize;
        let mut l = BatchLayout::default();
        for (contacts, bodies, slots) in sizes {
            l.worlds.push(WorldRange {
                contact_start: l.contacts,
                contacts,
                body_start: l.bodies,
                bodies,
                slot_start: l.slots,
                slots,
            });
            l.contacts += contacts.div_ceil(wg).max(1) * wg;
            l.bodies += bodies.div_ceil(wg).max(1) * wg;
            l.slots += slots;
        }
        l
    }

    /// Workgroups over the contacts (the first part of `groups`).
    pub fn contact_groups(&self) -> usize {
        self.contacts / WG as usize
    }

    /// The world of each contact workgroup, then of each body workgroup.
    pub fn groups(&self) -> Vec<u32> {
        let wg = WG as usize;
        let mut g = vec![0u32; self.contact_groups() + self.bodies / wg];
        let nc = self.contact_groups();
        for (w, r) in self.worlds.iter().enumerate() {
            let c_end = r.contact_start + r.contacts.div_ceil(wg).max(1) * wg;
            let b_end = r.body_start + r.bodies.div_ceil(wg).max(1) * wg;
            g[r.contact_start / wg..c_end / wg].fill(w as u32);
            g[nc + r.body_start / wg..nc + b_end / wg].fill(w as u32);
        }
        g
    }

    /// The CSR offsets of all bodies (length `bodies + 1`): each world's,
    /// shifted by its first slot; padding bodies own no slots.
    pub fn offsets(&self, problems: &[&PackedProblem]) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.bodies + 1);
        for (r, p) in self.worlds.iter().zip(problems) {
            // The entry at a world's first body is its first slot, which is
            // where the padding before it (or the previous world) ends.
            let last = *out.last().unwrap_or(&0);
            out.resize(r.body_start, last);
            let s = r.slot_start as u32;
            out.extend(p.offsets[..=r.bodies].iter().map(|&o| o + s));
        }
        out.resize(self.bodies + 1, self.slots as u32);
        out
    }

    /// World `w`'s contact records with their ids shifted to the batch's
    /// body and slot numbering (walls stay walls).
    pub fn shifted_contacts(&self, w: usize, p: &PackedProblem) -> Vec<PackedContact> {
        let r = &self.worlds[w];
        let (b, s) = (r.body_start as u32, r.slot_start as u32);
        p.contacts
            .iter()
            .map(|c| {
                let mut c = *c;
                c.ids[0] += b;
                c.ids[2] += s;
                if c.ids[1] != NO_BODY {
                    c.ids[1] += b;
                    c.ids[3] += s;
                }
                c
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worlds_start_at_workgroup_boundaries_and_slots_follow_each_other() {
        let l = BatchLayout::new([(300, 10, 550), (1, 300, 1), (256, 256, 400)]);
        let starts: Vec<_> = l
            .worlds
            .iter()
            .map(|r| (r.contact_start, r.body_start, r.slot_start))
            .collect();
        assert_eq!(starts, vec![(0, 0, 0), (512, 256, 550), (768, 768, 551)]);
        assert_eq!((l.contacts, l.bodies, l.slots), (1024, 1024, 951));
        assert_eq!(l.worlds[0].partials(), (0, 2));
        assert_eq!(l.worlds[2].partials(), (3, 4));
        let g = l.groups();
        assert_eq!(g, vec![0, 0, 1, 2, 0, 1, 1, 2]);
    }

    #[test]
    fn offsets_shift_by_the_first_slot_and_padding_owns_none() {
        let p0 = PackedProblem {
            offsets: vec![0, 2, 3],
            ..Default::default()
        };
        let p1 = PackedProblem {
            offsets: vec![0, 1],
            ..Default::default()
        };
        let l = BatchLayout::new([(2, 2, 3), (1, 1, 1)]);
        let o = l.offsets(&[&p0, &p1]);
        assert_eq!(o.len(), 513);
        assert_eq!(&o[..3], &[0, 2, 3]);
        assert!(
            o[3..=256].iter().all(|&x| x == 3),
            "padding bodies own no slots"
        );
        assert_eq!(o[257], 4);
        assert!(o[257..].iter().all(|&x| x == 4));
    }
}
