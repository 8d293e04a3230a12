//! Placing bodies, shared by the scene's generators and the inlets: a
//! prototype's copy at a site, and a hash of placed spheres for overlap
//! queries (cells at least one diameter wide, so any two overlapping
//! spheres share a cell or are neighbours).

use std::collections::HashMap;

use glam::DVec3;

use crate::bodies::BodyInit;

/// The prototype's copy with its centre of mass at `centre` (a generator's
/// site: the bounding ball the placement checked is about the centre of
/// mass), turned by `turn`.
pub(crate) fn copy_at(proto: &BodyInit, centre: DVec3, turn: glam::DQuat) -> BodyInit {
    BodyInit {
        pos: centre,
        rot: turn * proto.rot,
        ..proto.clone()
    }
}

/// A uniform grid of cells holding sphere indices, for overlap queries.
/// Cells are at least as wide as the largest sphere diameter, so any two
/// overlapping spheres are in the same or neighbouring cells.
pub(crate) struct SpatialHash {
    cell: f64,
    cells: HashMap<[i64; 3], Vec<usize>>,
}

impl SpatialHash {
    /// An empty hash with the given cell width (> 0).
    pub(crate) fn new(cell: f64) -> Self {
        SpatialHash {
            cell,
            cells: HashMap::new(),
        }
    }

    fn key(&self, p: DVec3) -> [i64; 3] {
        // Clamped well inside the i64 range so that the neighbour keys
        // k ± 1 exist however far away a sphere is.
        let lim = 2f64.powi(62);
        let c = (p / self.cell)
            .floor()
            .clamp(DVec3::splat(-lim), DVec3::splat(lim));
        [c.x as i64, c.y as i64, c.z as i64]
    }

    /// Records sphere `id` centred at `p`.
    pub(crate) fn insert(&mut self, p: DVec3, id: usize) {
        let k = self.key(p);
        self.cells.entry(k).or_default().push(id);
    }

    /// Calls `f` for every recorded id in the 27 cells around `p`; stops
    /// and returns true as soon as `f` does.
    pub(crate) fn any_near(&self, p: DVec3, mut f: impl FnMut(usize) -> bool) -> bool {
        let [x, y, z] = self.key(p);
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    if let Some(ids) = self.cells.get(&[x + dx, y + dy, z + dz]) {
                        if ids.iter().any(|&id| f(id)) {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }
}
