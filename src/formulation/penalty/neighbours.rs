//! A Verlet neighbour list for the penalty formulation's sphere pairs.
//!
//! The penalty formulation detects contacts every sub-step, tens of
//! sub-steps per scene step; rebuilding the grid each time was 85 % of a
//! run (`repose_small` under `Penalty`: 55.5 s of 65 s in `collide`). The
//! list keeps every pair of spheres closer than a *skin* (found by the
//! same grid, [`collision::sphere_sphere`] with the skin as envelope) and
//! the positions at that moment; a sub-step only checks the listed pairs,
//! until some sphere has moved half the skin since (two spheres then may
//! have closed the whole skin between them), or bodies were added, when it
//! is rebuilt. Listed pairs keep the grid's canonical order, and the
//! contact test and geometry are the grid's own ([`collision::spheres_within`],
//! [`collision::sphere_pair`]): the contacts are those of a rebuild every
//! sub-step, bit for bit. Bodies of other shapes are not listed: a scene
//! with them detects in full every sub-step.

use glam::DVec3;
use rayon::prelude::*;

use crate::bodies::Bodies;
use crate::boundary::Boundary;
use crate::collision::{self, ContactGeom, Crowded};

/// The listed pairs and where the spheres were when they were listed.
#[derive(Default)]
pub struct NeighbourList {
    pairs: Vec<(u32, u32)>,
    anchor: Vec<DVec3>,
    skin: f64,
    /// Rebuilds so far (for reports and tests).
    pub rebuilds: u64,
}

impl NeighbourList {
    /// Whether the list no longer covers every pair that may touch.
    fn stale(&self, bodies: &Bodies, skin: f64) -> bool {
        if bodies.len() != self.anchor.len() || skin != self.skin {
            return true;
        }
        let limit = 0.25 * skin * skin;
        bodies
            .pos
            .par_iter()
            .zip(self.anchor.par_iter())
            .any(|(x, a)| (*x - *a).length_squared() >= limit)
    }

    /// The sphere–sphere and sphere–boundary contacts (overlaps, gap < 0)
    /// at `time`, rebuilding the list first when it is stale.
    pub fn contacts(
        &mut self,
        bodies: &Bodies,
        boundaries: &[Boundary],
        skin: f64,
        time: f64,
    ) -> Result<Vec<ContactGeom>, Crowded> {
        if self.stale(bodies, skin) {
            self.pairs = collision::sphere_sphere(bodies, skin)?
                .iter()
                .map(|g| (g.a, g.b))
                .collect();
            self.anchor.clone_from(&bodies.pos);
            self.skin = skin;
            self.rebuilds += 1;
        }
        let mut out: Vec<ContactGeom> = self
            .pairs
            .par_iter()
            .filter(|&&(i, j)| collision::spheres_within(bodies, i as usize, j as usize, 0.0))
            .map(|&(i, j)| collision::sphere_pair(bodies, i as usize, j as usize))
            .collect();
        out.extend(collision::sphere_boundary(bodies, boundaries, 0.0, time));
        Ok(out)
    }
}
