//! Particle inlets (pluviation): sources that emit spheres during a run at a
//! given rate, at seeded random places inside a region, until a count is
//! reached.
//!
//! An inlet runs in the `emit` stage at the start of every step (see
//! `step.rs`). For the step from t to t + h it emits every sphere that is due
//! by the end of the step: after the world reaches time t, an inlet started at
//! `start_time` has emitted exactly min(count, ⌊rate · (t − start_time)⌋)
//! spheres (a relative slack of 1e-9 absorbs the rounding of t), unless it
//! fell behind (below).
//!
//! **Placement.** Each new sphere draws its radius (uniform in
//! [`radius`, `radius_max`]) and then up to [`INLET_TRIES`] centres uniformly
//! in the region; a centre is accepted when the sphere overlaps no existing
//! sphere (gap ≥ 0, so never deeper than the contact envelope) and stays on
//! the free side of every boundary surface (clearance ≥ its radius). When no
//! try succeeds the sphere is deferred to the next step (logged at debug
//! level) together with every later one of the step; the inlet then "falls
//! behind" its rate, and says so once at warn level when spheres have been
//! deferred on [`BEHIND_STEPS`] consecutive steps.
//!
//! **Body ids.** Emitted spheres are appended to [`Bodies`]: ids of existing
//! bodies never change (warm-start keys stay valid), new ids follow in
//! emission order, inlets in their scene order within a step.
//!
//! Everything is deterministic: the draws come from one [`Rng`] per inlet,
//! seeded by the scene, and depend only on the bodies present.

use glam::DVec3;
use serde::{Deserialize, Serialize};

use crate::bodies::{Bodies, BodyInit, SphereInit};
use crate::boundary::Boundary;
use crate::rng::Rng;

/// Random centres tried per sphere and step before it is deferred.
pub const INLET_TRIES: usize = 50;

/// Consecutive steps with deferred spheres after which an inlet warns (once)
/// that it falls behind its rate.
pub const BEHIND_STEPS: u32 = 10;

/// Where an inlet places sphere centres (uniformly at random).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum InletRegion {
    /// The axis-aligned box `min ..= max` (a side may be 0: a plane or line).
    Box {
        /// Lower corner (m).
        min: DVec3,
        /// Upper corner (m).
        max: DVec3,
    },
    /// A flat disc of radius `radius` around `center`, perpendicular to `normal`.
    Disk {
        /// Centre (m).
        center: DVec3,
        /// Normal of the disc's plane (normalised on use; must not be zero).
        normal: DVec3,
        /// Radius (m, > 0).
        radius: f64,
    },
}

impl InletRegion {
    /// A uniformly random point of the region.
    fn sample(&self, rng: &mut Rng) -> DVec3 {
        match *self {
            InletRegion::Box { min, max } => DVec3::new(
                rng.uniform(min.x, max.x),
                rng.uniform(min.y, max.y),
                rng.uniform(min.z, max.z),
            ),
            InletRegion::Disk {
                center,
                normal,
                radius,
            } => {
                // Uniform on the disc: radius R√u (the area element is
                // linear in the radius), angle uniform.
                let n = normal.normalize();
                let (e1, e2) = n.any_orthonormal_pair();
                let s = radius * rng.next_f64().sqrt();
                let phi = rng.uniform(0.0, std::f64::consts::TAU);
                center + (e1 * phi.cos() + e2 * phi.sin()) * s
            }
        }
    }

    /// The corners (min, max) of an axis-aligned box holding the region.
    pub fn bounds(&self) -> (DVec3, DVec3) {
        match *self {
            InletRegion::Box { min, max } => (min, max),
            InletRegion::Disk { center, radius, .. } => {
                (center - DVec3::splat(radius), center + DVec3::splat(radius))
            }
        }
    }
}

/// Where an inlet is in its emission: the changing part of an inlet, kept
/// in the [`State`](crate::state::State) beside the bodies it emitted; its
/// settings are the model's ([`InletSettings`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InletProgress {
    /// Spheres emitted so far.
    pub emitted: usize,
    /// The generator, where the next draw comes from.
    pub rng: Rng,
    /// Consecutive steps with deferred spheres.
    pub deferred_steps: u32,
    /// Whether the "falls behind" warning was given.
    pub warned: bool,
    /// The step end of the last emission.
    pub last_t_end: f64,
}

/// The settings of an inlet (what a scene gives; `radius_max` ≥ `radius`).
#[derive(Clone, Debug, PartialEq)]
pub struct InletSettings {
    /// Name for logs.
    pub name: String,
    /// Region of the centres.
    pub region: InletRegion,
    /// Spheres per second.
    pub rate: f64,
    /// Spheres in all.
    pub count: usize,
    /// Smallest radius (m).
    pub radius: f64,
    /// Largest radius (m).
    pub radius_max: f64,
    /// Radii from this distribution instead (then `radius` and
    /// `radius_max` are its bounds).
    pub sizes: Option<crate::sizes::SizeDistribution>,
    /// The body every emission copies when the inlet emits shapes (its
    /// centre of mass at the origin, in its body frame; its bounding radius
    /// is `radius`), else `None` for spheres.
    pub shape: Option<BodyInit>,
    /// Turn each emitted body at random.
    pub random_orientation: bool,
    /// Material index.
    pub material: u32,
    /// Density (kg/m³).
    pub density: f64,
    /// Initial velocity (m/s).
    pub velocity: DVec3,
    /// Velocity jitter per component (m/s).
    pub velocity_jitter: f64,
    /// Seed of the draws.
    pub seed: u64,
    /// Start of emission (s).
    pub start_time: f64,
}

impl InletProgress {
    /// An inlet's progress before it starts: nothing emitted, its stream
    /// at the settings' seed.
    pub fn new(s: &InletSettings) -> Self {
        InletProgress {
            emitted: 0,
            rng: Rng::new(s.seed),
            deferred_steps: 0,
            warned: false,
            last_t_end: f64::NEG_INFINITY,
        }
    }

    /// How many spheres of the inlet `s` are due by simulated time `t`:
    /// min(count, ⌊rate · (t − start_time)⌋), 0 before `start_time`.
    pub fn due_by(s: &InletSettings, t: f64) -> usize {
        let elapsed = t - s.start_time;
        if elapsed < 0.0 {
            return 0;
        }
        let n = s.rate * elapsed;
        // Slack for the rounding of t = Σ h: 0.25 · 4000 · 1e-3 may come out
        // as 0.999…; never more than one part in 10⁹.
        let n = (n + 1e-9 * n.max(1.0)).floor();
        (n as usize).min(s.count)
    }

    /// Whether every sphere of the inlet `s` has been emitted.
    pub fn finished(&self, s: &InletSettings) -> bool {
        self.emitted >= s.count
    }

    /// Emits the spheres of the inlet `s` due by time `t_end` (the end of
    /// the coming step) into `bodies`; returns how many. `envelope` is the contact envelope
    /// (only for the search radius). Once per step: a second call with the
    /// same `t_end` emits nothing.
    pub fn emit(
        &mut self,
        s: &InletSettings,
        bodies: &mut Bodies,
        boundaries: &[Boundary],
        t_end: f64,
        envelope: f64,
    ) -> usize {
        if t_end == self.last_t_end {
            return 0;
        }
        self.last_t_end = t_end;
        let due = Self::due_by(s, t_end);
        if due <= self.emitted {
            return 0;
        }
        // Neighbour search: the bodies near the region in a spatial hash
        // whose cell is the largest possible contact distance.
        let r_max = bodies.max_radius().max(s.radius_max);
        let reach = 2.0 * r_max + envelope.max(0.0);
        let (lo, hi) = s.region.bounds();
        let (lo, hi) = (lo - DVec3::splat(reach), hi + DVec3::splat(reach));
        let mut hash = crate::placement::SpatialHash::new(2.0 * r_max);
        for (i, p) in bodies.pos.iter().enumerate() {
            if p.cmpge(lo).all() && p.cmple(hi).all() {
                hash.insert(*p, i);
            }
        }
        let mut placed = 0;
        while self.emitted < due {
            let r = if let Some(d) = &s.sizes {
                d.sample(&mut self.rng)
            } else if s.radius_max > s.radius {
                self.rng.uniform(s.radius, s.radius_max)
            } else {
                s.radius
            };
            let mut found = None;
            for _ in 0..INLET_TRIES {
                let x = s.region.sample(&mut self.rng);
                let hits_sphere = hash.any_near(x, |j| {
                    let rr = r + bodies.radius[j];
                    x.distance_squared(bodies.pos[j]) < rr * rr
                });
                if !hits_sphere && clear_of_walls(boundaries, x, r) {
                    found = Some(x);
                    break;
                }
            }
            let Some(pos) = found else {
                log::debug!(
                    "inlet {}: no free place for sphere {} after {INLET_TRIES} tries; \
                     deferring {} spheres to the next step",
                    s.name,
                    self.emitted,
                    due - self.emitted
                );
                self.deferred_steps += 1;
                if self.deferred_steps >= BEHIND_STEPS && !self.warned {
                    self.warned = true;
                    log::warn!(
                        "inlet {} falls behind its rate of {} spheres/s: the region is \
                         crowded ({} of {} due spheres emitted by t = {t_end:.4} s); \
                         enlarge the region, lower the rate or give the spheres more velocity",
                        s.name,
                        s.rate,
                        self.emitted,
                        due
                    );
                }
                return placed;
            };
            let j = s.velocity_jitter;
            let vel = if j > 0.0 {
                s.velocity
                    + DVec3::new(
                        self.rng.uniform(-j, j),
                        self.rng.uniform(-j, j),
                        self.rng.uniform(-j, j),
                    )
            } else {
                s.velocity
            };
            let id = match &s.shape {
                Some(proto) => {
                    let turn = if s.random_orientation {
                        self.rng.rotation()
                    } else {
                        glam::DQuat::IDENTITY
                    };
                    // The placement checked a ball about the centre of mass.
                    bodies.push_body(&BodyInit {
                        vel,
                        ..crate::placement::copy_at(proto, pos, turn)
                    })
                }
                None => {
                    let mass = SphereInit::solid_mass(r, s.density);
                    bodies.push(&SphereInit {
                        pos,
                        radius: r,
                        mass,
                        inertia: SphereInit::solid_inertia(mass, r),
                        vel,
                        omega: DVec3::ZERO,
                        material: s.material,
                    })
                }
            };
            hash.insert(pos, id);
            self.emitted += 1;
            placed += 1;
        }
        self.deferred_steps = 0;
        placed
    }
}

/// Seeded random places of a region tried before a run to see that it
/// can hold the inlet's largest sphere ([`region_holds`]).
pub const REGION_CHECK_TRIES: usize = 1_000;

/// Whether some place of `region` holds a sphere of radius `r` inside
/// every boundary and clear of its surfaces, among [`REGION_CHECK_TRIES`]
/// seeded random places (the same every time). An inlet defers every later
/// sphere behind one it cannot place, so a region that cannot hold its
/// largest sphere would stop the inlet at the first such draw.
pub fn region_holds(region: &InletRegion, boundaries: &[Boundary], r: f64) -> bool {
    let mut rng = Rng::new(0x05ee_d1e7);
    (0..REGION_CHECK_TRIES).any(|_| clear_of_walls(boundaries, region.sample(&mut rng), r))
}

/// Whether a sphere of radius `r` at `x` is inside every boundary and clear
/// of every boundary surface.
fn clear_of_walls(boundaries: &[Boundary], x: DVec3, r: f64) -> bool {
    boundaries.iter().all(|b| {
        if b.clearance(x).is_none() {
            return false;
        }
        let mut clear = true;
        b.surfaces(x, |s| clear &= s.distance >= r);
        clear
    })
}

/// Runs every inlet of a world (`settings`, the model's, and `progress`,
/// the state's, in scene order) for the step that ends at `t_end`;
/// returns the number of spheres emitted.
pub fn emit_all(
    settings: &[InletSettings],
    progress: &mut [InletProgress],
    bodies: &mut Bodies,
    boundaries: &[Boundary],
    t_end: f64,
    envelope: f64,
) -> usize {
    settings
        .iter()
        .zip(progress)
        .map(|(s, p)| p.emit(s, bodies, boundaries, t_end, envelope))
        .sum()
}
