//! The dynamic angle of repose in a rotating drum: the slope of the bed's
//! free surface in the drum's cross-section, sampled while the drum turns
//! and averaged over time.
//!
//! # Method
//!
//! With â the drum's unit axis and ŵ the "up" direction (against gravity)
//! made perpendicular to â, the cross-section has the coordinates
//! u = (x − c)·û along û = â × ŵ (horizontal, across the drum) and
//! w = (x − c)·ŵ (vertical), c the drum's centre.
//!
//! 1. **Profile.** Spheres are binned by u (one mean diameter wide by
//!    default); in each bin the highest top w + r is the free surface.
//! 2. **Window.** Where the surface meets the wall the profile bends (the
//!    bed climbs the wall, grains rain down the far side), so only the bins
//!    whose u lies in the central `central_fraction` (default 60 %) of the
//!    bed's extent [min u, max u] are fitted.
//! 3. **Fit.** A least-squares line w = a + s·u; the angle is atan(|s|) with
//!    its standard error s.e.(s)/(1 + s²), and the side the surface rises
//!    toward is recorded: for a drum spinning at ω about â the wall moves
//!    up on the −û side when ω > 0 (the wall at the bottom, −ŵ, moves along
//!    ω â × (−ŵ) = −ω û), so a bed carried by the wall has s·ω < 0.
//! 4. **Time.** [`DrumSampler`] fits every sample from `from_time` on (the
//!    start-up transient is left out) and reports the mean angle, the
//!    standard deviation over samples (the surface fluctuates as avalanches
//!    run) and the standard error of the mean.

use glam::DVec3;
use serde::{Deserialize, Serialize};

use super::fit::fit_line;
use super::AnalysisError;

/// Default central fraction of the bed's extent that is fitted.
pub const DEFAULT_CENTRAL_FRACTION: f64 = 0.6;

/// Drum measurement settings (scene: `analysis.drum`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DrumSettings {
    /// The drum: the name of a cylinder boundary. `None`: the first
    /// cylinder that spins.
    pub boundary: Option<String>,
    /// Simulated time (s, ≥ 0) from which the surface is sampled. `None`:
    /// half the duration (the first half is start-up).
    pub from_time: Option<f64>,
    /// Fraction of the bed's extent across the drum that is fitted, centred
    /// (in (0, 1]; default [`DEFAULT_CENTRAL_FRACTION`]).
    pub central_fraction: f64,
    /// Width of the profile bins (m, > 0). `None`: the mean diameter.
    pub bin_width: Option<f64>,
}

impl Default for DrumSettings {
    fn default() -> Self {
        DrumSettings {
            boundary: None,
            from_time: None,
            central_fraction: DEFAULT_CENTRAL_FRACTION,
            bin_width: None,
        }
    }
}

impl DrumSettings {
    /// Every value that is out of range, as `(field, reason)`.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut p = Vec::new();
        if let Some(t) = self.from_time {
            if !(t.is_finite() && t >= 0.0) {
                p.push((
                    "from_time",
                    format!("must be a finite number ≥ 0 (got {t})"),
                ));
            }
        }
        let f = self.central_fraction;
        if !(f > 0.0 && f <= 1.0) {
            p.push(("central_fraction", format!("must be in (0, 1] (got {f})")));
        }
        if let Some(w) = self.bin_width {
            if !(w.is_finite() && w > 0.0) {
                p.push((
                    "bin_width",
                    format!("must be a finite number > 0 (got {w})"),
                ));
            }
        }
        p
    }
}

/// The drum's geometry as the measurement sees it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DrumFrame {
    /// Centre of the drum (m).
    pub center: DVec3,
    /// Unit axis â.
    pub axis: DVec3,
    /// Unit "up" ŵ ⟂ â (against gravity).
    pub up: DVec3,
    /// Spin about â (rad/s; its sign says which side the wall rises on).
    pub omega: f64,
}

impl DrumFrame {
    /// The frame of a drum at `center` with axis `axis` spinning at `omega`
    /// about it, under gravity `gravity`. Errors when the axis is zero or
    /// (nearly) vertical — a drum turning about the vertical has no
    /// surface slope to measure — or there is no gravity.
    pub fn new(
        center: DVec3,
        axis: DVec3,
        omega: f64,
        gravity: DVec3,
    ) -> Result<Self, AnalysisError> {
        let a = axis.normalize_or_zero();
        let g = gravity.normalize_or_zero();
        if a == DVec3::ZERO || g == DVec3::ZERO {
            return Err(AnalysisError::Degenerate(format!(
                "a drum needs an axis and gravity (axis {axis}, gravity {gravity})"
            )));
        }
        let up = -g - a * (-g).dot(a);
        if up.length() < 0.1 {
            return Err(AnalysisError::Degenerate(format!(
                "the drum's axis {axis} is within 6° of gravity {gravity}: its bed has no surface slope to measure"
            )));
        }
        Ok(DrumFrame {
            center,
            axis: a,
            up: up.normalize(),
            omega,
        })
    }

    /// û = â × ŵ: across the drum, horizontal.
    pub fn across(&self) -> DVec3 {
        self.axis.cross(self.up)
    }
}

/// One fit of the free surface.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SurfaceFit {
    /// Simulated time of the sample (s).
    pub time: f64,
    /// Surface angle atan(|s|) (degrees).
    pub angle_deg: f64,
    /// Its standard error (degrees).
    pub angle_stderr_deg: f64,
    /// The slope s = dw/du.
    pub slope: f64,
    /// Whether the surface rises toward the side where the wall moves up
    /// (s·ω < 0); `true` for a drum at rest with s = 0.
    pub rises_with_the_wall: bool,
    /// Profile bins fitted.
    pub bins: usize,
}

/// Fits the free surface of the bed of spheres (`positions`, `radii`) in
/// the drum `frame` at time `time` (see the module docs).
///
/// Errors: bad input as for the heap measurement; fewer than 3 bins in the
/// central window.
pub fn fit_drum_surface(
    positions: &[DVec3],
    radii: &[f64],
    frame: &DrumFrame,
    settings: &DrumSettings,
    time: f64,
) -> Result<SurfaceFit, AnalysisError> {
    if let Some((field, reason)) = settings.problems().into_iter().next() {
        return Err(AnalysisError::InvalidSetting {
            field: format!("drum.{field}"),
            reason,
        });
    }
    super::check_counts(positions, radii)?;
    let across = frame.across();
    let mut pts = Vec::with_capacity(positions.len());
    for (i, (p, &r)) in positions.iter().zip(radii).enumerate() {
        if !(p.is_finite() && r.is_finite() && r > 0.0) {
            return Err(AnalysisError::InvalidSphere {
                index: i,
                reason: format!("centre {p} or radius {r} is not valid"),
            });
        }
        let d = *p - frame.center;
        pts.push((d.dot(across), d.dot(frame.up) + r));
    }
    let n = pts.len() as f64;
    let w = settings
        .bin_width
        .unwrap_or(2.0 * radii.iter().sum::<f64>() / n);
    let (lo, hi) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        });
    let mid = 0.5 * (lo + hi);
    let half = 0.5 * settings.central_fraction * (hi - lo);
    // Highest top per bin, at the position of the sphere it belongs to.
    let nbins = (((hi - lo) / w).floor() as usize + 1).min(1 << 20);
    let mut best: Vec<Option<(f64, f64)>> = vec![None; nbins];
    for &(u, top) in &pts {
        let k = (((u - lo) / w).floor() as usize).min(nbins - 1);
        if !matches!(best[k], Some((_, t)) if t >= top) {
            best[k] = Some((u, top));
        }
    }
    let window: Vec<(f64, f64)> = best
        .into_iter()
        .flatten()
        .filter(|(u, _)| (u - mid).abs() <= half)
        .collect();
    let fit = fit_line(&window).ok_or_else(|| {
        AnalysisError::Degenerate(format!(
            "{} profile bins of {w:.4e} m in the central {:.0} % of the bed ({:.4e} m across): need at least 3 for a line fit (a smaller bin_width or more spheres)",
            window.len(),
            100.0 * settings.central_fraction,
            hi - lo
        ))
    })?;
    let deg = f64::to_degrees;
    Ok(SurfaceFit {
        time,
        angle_deg: deg(fit.slope.abs().atan()),
        angle_stderr_deg: deg(fit.slope_stderr / (1.0 + fit.slope * fit.slope)),
        slope: fit.slope,
        rises_with_the_wall: fit.slope * frame.omega <= 0.0,
        bins: window.len(),
    })
}

/// The dynamic angle over a run: the statistics of the surface fits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DynamicAngle {
    /// The drum boundary measured.
    pub boundary: String,
    /// Mean of the sampled surface angles (degrees).
    pub angle_deg: f64,
    /// Standard deviation over the samples (degrees; 0 for one sample).
    pub angle_sd_deg: f64,
    /// Standard error of the mean, sd/√n (degrees).
    pub angle_stderr_deg: f64,
    /// Samples averaged.
    pub samples: usize,
    /// Samples whose surface rose toward the wall's rising side.
    pub samples_rising_with_the_wall: usize,
    /// Samples that could not be fitted (too few bins).
    pub samples_failed: usize,
    /// First and last sample times (s).
    pub window_s: [f64; 2],
    /// The method in words.
    pub description: String,
    /// Every sample.
    pub fits: Vec<SurfaceFit>,
}

/// Collects surface fits during a run and summarises them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DrumSampler {
    /// The drum's name.
    pub boundary: String,
    /// Its geometry.
    pub frame: DrumFrame,
    /// The settings.
    pub settings: DrumSettings,
    /// Sampling starts at this time (s).
    pub from_time: f64,
    fits: Vec<SurfaceFit>,
    failed: usize,
    last_error: Option<AnalysisError>,
}

impl DrumSampler {
    /// A sampler of the drum `boundary` (`frame`), sampling from `from_time`.
    pub fn new(boundary: String, frame: DrumFrame, settings: DrumSettings, from_time: f64) -> Self {
        DrumSampler {
            boundary,
            frame,
            settings,
            from_time,
            fits: Vec::new(),
            failed: 0,
            last_error: None,
        }
    }

    /// Fits the surface at `time` when it is at or after `from_time`.
    pub fn sample(&mut self, positions: &[DVec3], radii: &[f64], time: f64) {
        if time + 1e-12 < self.from_time {
            return;
        }
        match fit_drum_surface(positions, radii, &self.frame, &self.settings, time) {
            Ok(f) => self.fits.push(f),
            Err(e) => {
                self.failed += 1;
                self.last_error = Some(e);
            }
        }
    }

    /// The summary; an error when no sample could be fitted (with the
    /// last reason) or none was taken.
    pub fn finish(self) -> Result<DynamicAngle, AnalysisError> {
        if self.fits.is_empty() {
            return Err(self.last_error.unwrap_or_else(|| {
                AnalysisError::Degenerate(format!(
                    "no surface sample of drum {:?} was taken: the run ended before analysis.drum.from_time = {} s",
                    self.boundary, self.from_time
                ))
            }));
        }
        let n = self.fits.len() as f64;
        let mean = self.fits.iter().map(|f| f.angle_deg).sum::<f64>() / n;
        let sd = if self.fits.len() > 1 {
            (self
                .fits
                .iter()
                .map(|f| (f.angle_deg - mean).powi(2))
                .sum::<f64>()
                / (n - 1.0))
                .sqrt()
        } else {
            0.0
        };
        Ok(DynamicAngle {
            boundary: self.boundary,
            angle_deg: mean,
            angle_sd_deg: sd,
            angle_stderr_deg: sd / n.sqrt(),
            samples: self.fits.len(),
            samples_rising_with_the_wall: self.fits.iter().filter(|f| f.rises_with_the_wall).count(),
            samples_failed: self.failed,
            window_s: [
                self.fits.first().map_or(f64::NAN, |f| f.time),
                self.fits.last().map_or(f64::NAN, |f| f.time),
            ],
            description: format!(
                "free surface of the bed in the drum's cross-section: highest sphere top per bin across the drum, straight-line fit over the central {:.0} % of the bed, angle = atan(|slope|); mean, sd and standard error over the samples from t = {} s",
                100.0 * self.settings.central_fraction,
                self.from_time
            ),
            fits: self.fits,
        })
    }
}
