//! Settling detection: the pile is settled once the mean kinetic energy per
//! particle has stayed below a threshold for a hold time.
//!
//! See the [module docs](super) for why the criterion is the mean kinetic
//! energy per particle (rather than the largest speed) and how the defaults
//! scale with the scene.

use serde::{Deserialize, Serialize};

use super::AnalysisError;

/// Default threshold on the mean kinetic energy per particle, in units of
/// m̄·|g|·r̄ (mean mass, gravity, mean radius): 10⁻⁴, i.e. grains moving at
/// about 1.4 % of √(g r̄) (from ½ v² = 10⁻⁴ g r̄) — 4.4 mm/s for 1 cm grains
/// under Earth gravity.
pub const DEFAULT_KE_THRESHOLD: f64 = 1e-4;

/// Default hold time in units of the grain time scale √(r̄/|g|).
pub const DEFAULT_HOLD_GRAIN_TIMES: f64 = 5.0;

/// Default hold time in time steps, at least (so that the criterion never
/// rests on a handful of samples).
pub const DEFAULT_HOLD_STEPS: f64 = 10.0;

/// Settling detection settings (scene: `analysis.settle`), relative to the
/// scene's grains and gravity; [`SettleSettings::resolve`] turns them into
/// absolute numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SettleSettings {
    /// Threshold on the mean kinetic energy per particle (translational plus
    /// rotational), in units of m̄·|g|·r̄ (> 0). Default
    /// [`DEFAULT_KE_THRESHOLD`] = 10⁻⁴.
    pub ke_threshold: f64,
    /// How long the energy must stay below the threshold (s, ≥ 0).
    /// `None`: max(5·√(r̄/|g|), 10 time steps).
    pub hold: Option<f64>,
}

impl Default for SettleSettings {
    fn default() -> Self {
        SettleSettings {
            ke_threshold: DEFAULT_KE_THRESHOLD,
            hold: None,
        }
    }
}

impl SettleSettings {
    /// Every value that is out of range, as `(field, reason)` (empty when
    /// the settings are valid).
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut p = Vec::new();
        if !(self.ke_threshold.is_finite() && self.ke_threshold > 0.0) {
            p.push((
                "ke_threshold",
                format!("must be a finite number > 0 (got {})", self.ke_threshold),
            ));
        }
        if let Some(h) = self.hold {
            if !(h.is_finite() && h >= 0.0) {
                p.push(("hold", format!("must be a finite number ≥ 0 (got {h})")));
            }
        }
        p
    }

    /// The absolute criterion for grains of mean mass `mean_mass` (kg) and
    /// mean radius `mean_radius` (m) under gravity of magnitude `gravity`
    /// (m/s²), stepped with `time_step` (s).
    ///
    /// Errors: invalid settings; a non-positive or non-finite mass, radius
    /// or time step; zero gravity (the energy scale m̄·|g|·r̄ vanishes, so a
    /// relative threshold means nothing).
    pub fn resolve(
        &self,
        mean_mass: f64,
        mean_radius: f64,
        gravity: f64,
        time_step: f64,
    ) -> Result<SettleCriterion, AnalysisError> {
        if let Some((field, reason)) = self.problems().into_iter().next() {
            return Err(AnalysisError::InvalidSetting {
                field: format!("settle.{field}"),
                reason,
            });
        }
        for (what, v) in [
            ("mean mass", mean_mass),
            ("mean radius", mean_radius),
            ("time step", time_step),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(AnalysisError::InvalidSetting {
                    field: "settle".into(),
                    reason: format!("the {what} must be finite and > 0 (got {v})"),
                });
            }
        }
        if !(gravity.is_finite() && gravity > 0.0) {
            return Err(AnalysisError::InvalidSetting {
                field: "settle".into(),
                reason: format!(
                    "settling is judged relative to m·|g|·r, which needs gravity (|g| = {gravity})"
                ),
            });
        }
        let hold = self.hold.unwrap_or_else(|| {
            (DEFAULT_HOLD_GRAIN_TIMES * (mean_radius / gravity).sqrt())
                .max(DEFAULT_HOLD_STEPS * time_step)
        });
        Ok(SettleCriterion {
            ke_per_particle: self.ke_threshold * mean_mass * gravity * mean_radius,
            ke_relative: self.ke_threshold,
            hold,
        })
    }
}

/// An absolute settling criterion.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SettleCriterion {
    /// Threshold on the mean kinetic energy per particle (J, > 0).
    pub ke_per_particle: f64,
    /// The same threshold in units of m̄·|g|·r̄ (for the record).
    pub ke_relative: f64,
    /// Hold time (s, ≥ 0).
    pub hold: f64,
}

/// Watches the mean kinetic energy per particle step by step and says when
/// the pile has settled.
///
/// A sample is *quiet* when its energy is finite and below the threshold.
/// The pile is settled while the current run of quiet samples has lasted at
/// least the hold time; its settle time is the time of the first sample of
/// that run. A loud sample (or a non-finite one, or time going backwards)
/// ends the run, so a pile that starts moving again (an avalanche) is no
/// longer settled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SettleDetector {
    criterion: SettleCriterion,
    quiet_since: Option<f64>,
    last_time: Option<f64>,
    last_ke: Option<f64>,
    settled: bool,
}

impl SettleDetector {
    /// A detector for `criterion`. Errors when the threshold is not finite
    /// and > 0 or the hold time is not finite and ≥ 0.
    pub fn new(criterion: SettleCriterion) -> Result<Self, AnalysisError> {
        let c = criterion;
        if !(c.ke_per_particle.is_finite() && c.ke_per_particle > 0.0) {
            return Err(AnalysisError::InvalidSetting {
                field: "settle.ke_per_particle".into(),
                reason: format!("must be a finite number > 0 (got {})", c.ke_per_particle),
            });
        }
        if !(c.hold.is_finite() && c.hold >= 0.0) {
            return Err(AnalysisError::InvalidSetting {
                field: "settle.hold".into(),
                reason: format!("must be a finite number ≥ 0 (got {})", c.hold),
            });
        }
        Ok(SettleDetector {
            criterion,
            quiet_since: None,
            last_time: None,
            last_ke: None,
            settled: false,
        })
    }

    /// The criterion in use.
    pub fn criterion(&self) -> SettleCriterion {
        self.criterion
    }

    /// Records the mean kinetic energy per particle (J) at `time` (s);
    /// returns whether the pile is settled now.
    pub fn update(&mut self, time: f64, ke_per_particle: f64) -> bool {
        let backwards = matches!(self.last_time, Some(t) if time < t);
        let quiet = time.is_finite()
            && ke_per_particle.is_finite()
            && ke_per_particle < self.criterion.ke_per_particle
            && !backwards;
        self.last_time = Some(time);
        self.last_ke = Some(ke_per_particle);
        if !quiet {
            self.quiet_since = None;
            self.settled = false;
            return false;
        }
        let since = *self.quiet_since.get_or_insert(time);
        // A relative slack absorbs the rounding of accumulated step times.
        let slack = 1e-9 * time.abs().max(self.criterion.hold);
        self.settled = time - since >= self.criterion.hold - slack;
        self.settled
    }

    /// Whether the pile is settled after the last sample.
    pub fn is_settled(&self) -> bool {
        self.settled
    }

    /// When the pile settled (the first sample of the current quiet run),
    /// if it is settled; `None` otherwise.
    pub fn settle_time(&self) -> Option<f64> {
        if self.settled {
            self.quiet_since
        } else {
            None
        }
    }

    /// The record of the detection so far; `stopped_when_settled` says
    /// whether the run was ended because the pile settled.
    pub fn report(&self, stopped_when_settled: bool) -> SettleReport {
        let settle_time = self.settle_time();
        SettleReport {
            criterion: "mean kinetic energy per particle below the threshold for the hold time"
                .into(),
            ke_threshold_j: self.criterion.ke_per_particle,
            ke_threshold_relative: self.criterion.ke_relative,
            hold_s: self.criterion.hold,
            settled: self.settled,
            settle_time_s: settle_time,
            detected_at_s: settle_time.map(|t| t + self.criterion.hold),
            ke_per_particle_final_j: self.last_ke.filter(|k| k.is_finite()),
            stopped_when_settled,
        }
    }
}

/// What settling detection found, as recorded in `summary.json`
/// (`extra.settling`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SettleReport {
    /// The criterion, in words.
    pub criterion: String,
    /// Threshold on the mean kinetic energy per particle (J).
    pub ke_threshold_j: f64,
    /// The threshold in units of m̄·|g|·r̄.
    pub ke_threshold_relative: f64,
    /// Hold time (s).
    pub hold_s: f64,
    /// Whether the pile was settled at the end of the run.
    pub settled: bool,
    /// When the pile settled (s of simulated time); `null` when it did not.
    pub settle_time_s: Option<f64>,
    /// When settling was established: settle time + hold time (s).
    pub detected_at_s: Option<f64>,
    /// Mean kinetic energy per particle at the last sample (J); `null`
    /// before any sample or when not finite.
    pub ke_per_particle_final_j: Option<f64>,
    /// Whether the run was ended early because the pile settled
    /// (`analysis.stop_when_settled`).
    pub stopped_when_settled: bool,
}
