//! A contact's history as the neighbour list holds it between sub-steps:
//! the numbers of [`ContactHistory`] with its five yes/no facts packed
//! into one word.
//!
//! [`ContactHistory`] keeps each spring's deflection beside its mode
//! (`slipping: bool`) and the last contact point as an `Option`: every
//! flag pads to eight bytes, 144 bytes a contact. The listed pairs and
//! faces hold [`Held`] instead, the same numbers in 112 bytes:
//!
//! ```text
//! slide S (3) │ roll Θ_A (3) │ roll Θ_B (3) │ point (3, zero if none) │ spin Φ │ flags
//! flags: bit 0 slide slips · 1 A rolls · 2 B rolls · 3 spin slips · 4 point known
//! ```
//!
//! The sub-steps read and write every touching contact's history, so the
//! bytes count (on the 6,000-bead bench bed the listed histories are
//! megabytes, more than a core's L2); the lanes' law also reads the five
//! modes of four contacts as one vector of words, where it had gathered
//! twenty bytes (callgrind: 12 % fewer instructions in `four_pairs`). Conversion
//! both ways is exact ([`Held::from`], [`ContactHistory::from`]): the
//! world's histories, the checkpoints and the scalar law keep
//! [`ContactHistory`].

use glam::DVec3;

use super::loads::Loads;
use super::{ContactHistory, RollHistory, SlideHistory, SpinHistory};

/// A [`ContactHistory`] packed (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub(super) struct Held {
    /// The sliding micro-deflection S (m).
    pub slide: DVec3,
    /// The rocking micro-deflections Θ of A, then B (rad).
    pub roll: [DVec3; 2],
    /// The contact point at the last sub-step (m); zero where none
    /// ([`POINT`] clear).
    pub point: DVec3,
    /// The relative spin Φ (rad).
    pub spin: f64,
    /// The modes and whether `point` is known: [`SLIDE`], [`ROLL_A`],
    /// [`ROLL_B`], [`SPIN`], [`POINT`].
    pub flags: u64,
}

/// The slide slips (kinetic mode).
pub(super) const SLIDE: u64 = 1;
/// A rolls (kinetic mode of A's rocking spring).
pub(super) const ROLL_A: u64 = 2;
/// B rolls.
pub(super) const ROLL_B: u64 = 4;
/// The spin slips.
pub(super) const SPIN: u64 = 8;
/// The contact point of the last sub-step is known.
pub(super) const POINT: u64 = 16;

const _: () = assert!(std::mem::size_of::<Held>() == 112);

/// `bit` where `on`, else 0.
fn flag(on: bool, bit: u64) -> u64 {
    if on {
        bit
    } else {
        0
    }
}

impl From<ContactHistory> for Held {
    fn from(h: ContactHistory) -> Self {
        Held {
            slide: h.slide.deflection,
            roll: [h.roll[0].deflection, h.roll[1].deflection],
            point: h.point.unwrap_or(DVec3::ZERO),
            spin: h.spin.deflection,
            flags: flag(h.slide.slipping, SLIDE)
                | flag(h.roll[0].slipping, ROLL_A)
                | flag(h.roll[1].slipping, ROLL_B)
                | flag(h.spin.slipping, SPIN)
                | flag(h.point.is_some(), POINT),
        }
    }
}

impl From<Held> for ContactHistory {
    fn from(h: Held) -> Self {
        let on = |bit| h.flags & bit != 0;
        ContactHistory {
            slide: SlideHistory {
                deflection: h.slide,
                slipping: on(SLIDE),
            },
            roll: [
                RollHistory {
                    deflection: h.roll[0],
                    slipping: on(ROLL_A),
                },
                RollHistory {
                    deflection: h.roll[1],
                    slipping: on(ROLL_B),
                },
            ],
            spin: SpinHistory {
                deflection: h.spin,
                slipping: on(SPIN),
            },
            point: on(POINT).then_some(h.point),
        }
    }
}

impl Held {
    /// The scalar law (`f`, on a [`ContactHistory`]) run on this history:
    /// unpacked, advanced, packed again.
    #[inline]
    pub(super) fn through<R>(&mut self, f: impl FnOnce(&mut ContactHistory) -> R) -> R {
        let mut h = ContactHistory::from(*self);
        let out = f(&mut h);
        *self = Held::from(h);
        out
    }
}

/// Where each body's run begins in a list of `len` items sorted by body
/// (`body_of(p)`, ascending): into `out`, bodies + 1 entries, so that body
/// k's items are `out[k]..out[k + 1]` (empty for a body with none). One
/// scan with the position in a register (summing counts in place waited
/// on each store). Listed pairs by A and boundary contacts by sphere.
pub(super) fn run_starts(
    bodies: usize,
    len: usize,
    body_of: impl Fn(usize) -> u32,
    out: &mut Vec<u32>,
) {
    debug_assert!((1..len).all(|p| body_of(p - 1) <= body_of(p)));
    out.clear();
    let mut at = 0;
    out.extend((0..=bodies as u32).map(|k| {
        while at < len && body_of(at) < k {
            at += 1;
        }
        at as u32
    }));
}

/// The histories of a sorted (key, history) slice, found for keys asked
/// mostly in ascending order (the boundary contacts of a sub-step, the
/// listed faces at a rebuild or an import): each ask walks on from where
/// the last stopped; the first, and one whose key is smaller than the
/// last, searches afresh.
pub(super) struct HeldHistories<'a> {
    held: &'a [(u64, ContactHistory)],
    at: usize,
    last: Option<u64>,
}

impl<'a> HeldHistories<'a> {
    /// Finds in `held` (sorted by key).
    pub(super) fn new(held: &'a [(u64, ContactHistory)]) -> Self {
        Self {
            held,
            at: 0,
            last: None,
        }
    }

    /// The history held for `key`, if any.
    pub(super) fn find(&mut self, key: u64) -> Option<ContactHistory> {
        if self.last.is_none_or(|last| key < last) {
            self.at = self.held.partition_point(|&(k, _)| k < key);
        }
        self.last = Some(key);
        while self.at < self.held.len() && self.held[self.at].0 < key {
            self.at += 1;
        }
        match self.held.get(self.at) {
            Some(&(k, h)) if k == key => Some(h),
            _ => None,
        }
    }
}

/// Records whether a listed contact (a pair, or a sphere and a face)
/// `touches` at this sub-step; one that has stopped drops its history and
/// holds zero loads (the per-body sums add it without asking). Only a
/// change, which is rare, branches.
#[inline(always)]
pub(super) fn note_touch(
    touches: bool,
    touching: &mut bool,
    history: &mut Held,
    loads: &mut Loads,
) {
    if touches != *touching {
        *touching = touches;
        if !touches {
            *history = Held::default();
            *loads = Loads::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every combination of the five flags, with numbers in every field
    /// (and a point of zero, which `None` must not be confused with),
    /// survives the trip through [`Held`] bit for bit; the default packs
    /// to the default.
    #[test]
    fn packing_a_history_loses_nothing() {
        assert_eq!(Held::from(ContactHistory::default()), Held::default());
        for mask in 0..32u32 {
            let on = |k: u32| mask >> k & 1 == 1;
            let h = ContactHistory {
                slide: SlideHistory {
                    deflection: DVec3::new(1e-7, -2e-7, 3e-9),
                    slipping: on(0),
                },
                roll: [
                    RollHistory {
                        deflection: DVec3::new(-0.0, 4e-3, f64::MIN_POSITIVE),
                        slipping: on(1),
                    },
                    RollHistory {
                        deflection: DVec3::new(5e-4, 0.0, -6e-4),
                        slipping: on(2),
                    },
                ],
                spin: SpinHistory {
                    deflection: -7e-5,
                    slipping: on(3),
                },
                point: on(4).then_some(if mask % 3 == 0 {
                    DVec3::ZERO
                } else {
                    DVec3::new(0.01, -0.02, 0.003)
                }),
            };
            let back = ContactHistory::from(Held::from(h));
            assert_eq!(back, h, "flags {mask:05b}");
            let bits = |v: DVec3| v.to_array().map(f64::to_bits);
            assert_eq!(bits(back.roll[0].deflection), bits(h.roll[0].deflection));
        }
    }
}
