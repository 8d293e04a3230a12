//! Analyses of a simulated pile: when it has settled, and its angle of
//! repose (docs/scene-format.md, `analysis`).
//!
//! # Settling
//!
//! A pile is *settled* once the mean kinetic energy per particle
//! (translational plus rotational) has stayed below a threshold for a hold
//! time ([`SettleDetector`]). The mean energy rather than the largest speed:
//! a nonsmooth solver stopped at a finite residual leaves a few grains
//! creeping at the surface, and the odd grain rolling away across the floor
//! long after the heap has frozen would keep a max-speed criterion from
//! ever firing, while the heap's shape — what is measured — no longer
//! changes. The mean is also what the energy history of a run shows. The
//! threshold is relative, in units of m̄·|g|·r̄ (mean mass, gravity, mean
//! radius: the energy of lifting a grain by its radius), so one default
//! serves beads and boulders: 10⁻⁴, grains moving at about 1.4 % of √(g r̄).
//! The hold time defaults to 5 √(r̄/|g|) — a few times the time a grain takes
//! to fall through its own radius, long enough that the quiet moment at the
//! top of a bounce or a pause between avalanches is not taken for rest —
//! and at least 10 steps. The settle time is the *start* of the final quiet
//! interval; the detection comes one hold time later. A pile that moves
//! again (an avalanche) is no longer settled.
//!
//! # Angle of repose
//!
//! [`measure_heap`] works on the final positions and radii only, so a run
//! and `repose measure` on its saved `final.csv` give the same numbers. z
//! is up and the floor is horizontal at a given height.
//!
//! 1. **Axis.** The pile axis is vertical through a given point or, by
//!    default, through the horizontal centroid of the sphere centres (the
//!    apex of a symmetric heap). For a planar (2-D) heap only the
//!    coordinate across the crest matters.
//! 2. **Surface profile.** Spheres are binned by horizontal distance from
//!    the axis ([`HeapMethod::Radial`]) or, for planar heaps, by the signed
//!    coordinate along one axis, each side of the crest separately
//!    ([`HeapMethod::Planar`]). Bins are one mean diameter wide by default;
//!    the profile is the highest sphere *top* (z + r) above the floor in
//!    each bin, placed at that sphere's own distance from the axis (not at
//!    the bin centre: bins one diameter wide against layers 1.6 radii apart
//!    alias into a false slope). The highest top — not the mean — is the
//!    free surface. Among equal tops (a lattice layer) the outermost is
//!    taken: on a falling flank it is the one touching the surface.
//! 3. **Flank.** The cap (rounded by the last grains to arrive) and the toe
//!    (grains that rolled out over the floor, a floor layer spread to the
//!    walls) are not part of the slope. The flank is the set of profile
//!    bins whose height lies between 20 % and 80 % (settings `flank_from`,
//!    `flank_to`) of the profile's height range, from its lowest bin (the
//!    floor layer) to the heap's height. Choosing bins by height rather
//!    than by distance keeps the window on the slope whatever spreads over
//!    the floor; measuring the range from the lowest bin rather than from
//!    the floor keeps a floor layer out of the range. A profile less than
//!    one mean diameter high above its lowest bin is a layer, not a heap:
//!    all its bins are fitted, which gives a flat layer an angle ≈ 0 rather
//!    than an empty window.
//! 4. **Fit.** An ordinary least-squares line height = a + s·distance on
//!    each flank; angle = atan(|s|), its standard error the slope's,
//!    √(SSR/(n−2)/Sxx), carried through atan: s.e.(s)/(1 + s²). A planar
//!    heap's two flanks are fitted separately and averaged, with standard
//!    error √(s₁² + s₂²)/2; both are reported. A flank with fewer than
//!    `min_bins` (4) bins in its window is not fitted (a planar heap against
//!    a wall has one flank); no flank at all is an error.
//! 5. **Height and base radius.** The height is the top of the highest
//!    sphere above the floor. The base radius is where the heap meets the
//!    floor: of the spheres in the floor layer (centre at most one mean
//!    diameter above the floor) that belong to the pile, the largest group
//!    of spheres connected through touching ones — strays that rolled
//!    away, alone or gathered at a wall, are left out and counted
//!    (`floor_layer_strays`) —
//!    the 98 % quantile (`base_quantile`) of their footprint radius,
//!    distance from the axis plus own radius. The height/base-radius
//!    angle atan(H/R) is a second, cruder estimate (it includes the cap and
//!    toe); for a planar heap R is the base half-width.
//!
//! On synthetic lattice heaps (`tests/analysis.rs`: cones and wedges of
//! 20°, 30°, 40°, ten or more layers high, smooth and roughened) this gives
//! the construction angle within ±1°; the remaining error is the lattice's
//! own staircase.
//!
//! # Pile size
//!
//! [`measure_pile`] gives what Acary & Bourrier 2021 plot (§6.2, Fig. 5):
//! the height and the "mean radius" of the pile — the mean horizontal
//! distance of the spheres touching the floor from their centroid — both
//! also over the mean diameter. It needs no fit, so a single layer (height
//! 1 diameter) has one. Spheres whose centre is below the floor (fallen off
//! a plate) are left out of both measurements.
//!
//! # Dynamic angle
//!
//! In a rotating drum the angle is that of the flowing surface, sampled
//! during the run and averaged ([`DrumSampler`], [`fit_drum_surface`]; the
//! method is in the `drum` module's source docs).
//!
//! # Discharge
//!
//! The mass passing below a hopper's outlet over time and its steady rate,
//! for comparison with the Beverloo correlation ([`DischargeSampler`];
//! the method is in the `discharge` module's source docs).
//!
//! Bad input — no spheres, one sphere, NaN coordinates, a floor above the
//! heap, a pile too small for a fit — is an [`AnalysisError`] saying what
//! and why, never a panic or a NaN.

mod bulk;
mod discharge;
mod drum;
mod fit;
mod heap;
mod settle;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use bulk::{
    measure_bulk, read_bulk_csv, write_bulk_csv, BulkSample, BulkSettings, BULK_CSV_HEADER,
};
pub use discharge::{beverloo, Discharge, DischargeSampler, DischargeSettings};
pub use drum::{
    fit_drum_surface, DrumFrame, DrumSampler, DrumSettings, DynamicAngle, SurfaceFit,
    DEFAULT_CENTRAL_FRACTION,
};
pub use fit::{fit_line, LineFit};
pub use heap::{
    measure_heap, measure_pile, Axis, FlankFit, HeapMeasurement, HeapMethod, HeapSettings,
    PileSize, DEFAULT_BASE_QUANTILE, DEFAULT_FLANK_FROM, DEFAULT_FLANK_TO, DEFAULT_MIN_BINS,
    TOUCH_GAP,
};
pub use settle::{
    SettleCriterion, SettleDetector, SettleReport, SettleSettings, DEFAULT_HOLD_GRAIN_TIMES,
    DEFAULT_HOLD_STEPS, DEFAULT_KE_THRESHOLD,
};

/// The `analysis: (…)` section of a scene: what runs measure, and whether
/// they stop once the pile has settled. Every field optional; a scene
/// without the section records the settle time and measures nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnalysisSettings {
    /// Measure the heap (angle of repose) at the end of the run with these
    /// settings; `None` (default): no measurement.
    pub heap: Option<HeapSettings>,
    /// Measure the dynamic angle of a rotating drum's free surface during
    /// the run with these settings; `None` (default): no measurement.
    pub drum: Option<DrumSettings>,
    /// Measure the discharge rate below a plane (a hopper's or silo's
    /// outlet) with these settings; `None` (default): no measurement.
    pub discharge: Option<DischargeSettings>,
    /// Measure the solid fraction, coordination number, Love–Weber stress
    /// and kinetic energy of the bodies in this box at every frame
    /// (`bulk.csv`, the `bulk` module); `None` (default): no measurement.
    pub bulk: Option<BulkSettings>,
    /// Height of the floor the heap rests on (m). `None`: the highest
    /// horizontal floor of the scene's boundaries (an upward plane or a
    /// box floor) at or below the spheres, else the lowest sphere bottom.
    pub floor: Option<f64>,
    /// Settling detection.
    pub settle: SettleSettings,
    /// End the run as soon as the pile has settled (default false).
    pub stop_when_settled: bool,
    /// Check the existence criterion of Acary & Cadoux 2011
    /// ([`crate::existence`]) on the step's contact problem every this many
    /// steps (complementarity formulation), logged and summed up in
    /// `summary.json` (`extra.existence`); `None` (default): never.
    pub existence_every: Option<u64>,
}

impl AnalysisSettings {
    /// Every value that is out of range, as `(field path below
    /// `analysis`, reason)`.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut p: Vec<(String, String)> = Vec::new();
        if let Some(h) = &self.heap {
            p.extend(
                h.problems()
                    .into_iter()
                    .map(|(f, r)| (format!("heap.{f}"), r)),
            );
        }
        if let Some(d) = &self.drum {
            p.extend(
                d.problems()
                    .into_iter()
                    .map(|(f, r)| (format!("drum.{f}"), r)),
            );
        }
        if let Some(d) = &self.discharge {
            p.extend(
                d.problems()
                    .into_iter()
                    .map(|(f, r)| (format!("discharge.{f}"), r)),
            );
        }
        if let Some(b) = &self.bulk {
            p.extend(
                b.problems()
                    .into_iter()
                    .map(|(f, r)| (format!("bulk.{f}"), r)),
            );
        }
        if self.existence_every == Some(0) {
            p.push((
                "existence_every".into(),
                "must be ≥ 1 (steps), or None".into(),
            ));
        }
        if let Some(f) = self.floor {
            if !f.is_finite() {
                p.push(("floor".into(), format!("must be a finite number (got {f})")));
            }
        }
        p.extend(
            self.settle
                .problems()
                .into_iter()
                .map(|(f, r)| (format!("settle.{f}"), r)),
        );
        p
    }
}

/// The checks every measurement starts with: as many radii as positions,
/// and at least one sphere.
pub(crate) fn check_counts(positions: &[glam::DVec3], radii: &[f64]) -> Result<(), AnalysisError> {
    if positions.len() != radii.len() {
        return Err(AnalysisError::LengthMismatch {
            positions: positions.len(),
            radii: radii.len(),
        });
    }
    if positions.is_empty() {
        return Err(AnalysisError::NoSpheres);
    }
    Ok(())
}

/// Why an analysis could not be done.
#[derive(Debug, Error, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum AnalysisError {
    /// There are no spheres to measure.
    #[error("no spheres to measure")]
    NoSpheres,
    /// The position and radius lists differ in length.
    #[error("{positions} positions but {radii} radii")]
    LengthMismatch {
        /// Number of positions.
        positions: usize,
        /// Number of radii.
        radii: usize,
    },
    /// A sphere with a non-finite position or a bad radius.
    #[error("sphere {index}: {reason}")]
    InvalidSphere {
        /// Index of the sphere in the input.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A setting out of range.
    #[error("{field}: {reason}")]
    InvalidSetting {
        /// The setting (path below the scene's `analysis` section).
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The spheres do not form something measurable (nothing above the
    /// floor, nothing resting on it).
    #[error("{0}")]
    Degenerate(String),
    /// Too few profile bins in the flank window for a line fit.
    #[error(
        "too few profile bins in the flank window (heights {:.4e} to {:.4e} m above the floor) for a line fit: found {found}, need at least {needed} on a flank; the pile is too small for bins {bin_width:.4e} m wide (try a smaller bin_width or more spheres)",
        window[0], window[1]
    )]
    TooFewBins {
        /// Bins found in the window, per flank.
        found: String,
        /// Bins needed.
        needed: usize,
        /// The flank window (heights above the floor, m).
        window: [f64; 2],
        /// The bin width (m).
        bin_width: f64,
    },
}
