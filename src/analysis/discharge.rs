//! Discharge from a hopper or silo: the mass that has passed below the
//! outlet, sampled every step, and its rate over the steady part of the
//! flow — what the Beverloo correlation predicts.
//!
//! # Rate
//!
//! The discharged mass M(t) is the mass of the bodies whose centre is below
//! the plane z = `below` (the outlet, or a little under it). While the
//! outlet is fed, M grows linearly (the rate does not depend on the fill
//! height: the arch over the outlet carries the column's weight); it starts
//! with a transient as the flow sets up and bends as the silo empties. The
//! rate W is the least-squares slope of M against t over a window, by
//! default from the time 20 % to the time 80 % of the finally discharged
//! mass had passed (`from` / `to` in seconds override it; `from` alone
//! runs the window to the end of the run), with its
//! standard error from the fit's residuals (samples are correlated, so it
//! understates the scatter between runs; compare seeds for that).
//!
//! # Beverloo
//!
//! For a flat-bottomed silo with a circular outlet of diameter D and
//! grains of diameter d (Beverloo, Leniger & van de Velde 1961; Nedderman
//! 1992, ch. 10):
//!
//! W = C ρ_b √g (D − k d)^{5/2},
//!
//! with ρ_b the bulk density, C ≈ 0.55–0.65 and k ≈ 1.2–3 (1.5 typical).
//! [`beverloo`] evaluates it; [`Discharge::beverloo_c`] backs C out of a
//! measured rate.

use serde::{Deserialize, Serialize};

use crate::bodies::Bodies;

/// The `analysis.discharge` settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DischargeSettings {
    /// Height of the plane below which a body counts as discharged (m).
    pub below: f64,
    /// Start of the fit window (s); default: when 20 % of the final
    /// discharged mass had passed.
    #[serde(default)]
    pub from: Option<f64>,
    /// End of the fit window (s); default: the end of the run when `from`
    /// is given, else when 80 % had passed.
    #[serde(default)]
    pub to: Option<f64>,
}

impl DischargeSettings {
    /// Every value out of range, as (field, reason).
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut p = Vec::new();
        if !self.below.is_finite() {
            p.push((
                "below".into(),
                format!("must be finite (got {})", self.below),
            ));
        }
        for (name, v) in [("from", self.from), ("to", self.to)] {
            if let Some(v) = v {
                if !(v.is_finite() && v >= 0.0) {
                    p.push((name.into(), format!("must be a time ≥ 0 s (got {v})")));
                }
            }
        }
        if let (Some(a), Some(b)) = (self.from, self.to) {
            if b <= a {
                p.push(("to".into(), format!("must be after from = {a} s (got {b})")));
            }
        }
        p
    }
}

/// The discharged mass over time (the state a checkpoint keeps).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DischargeSampler {
    /// The settings.
    pub settings: DischargeSettings,
    /// (time s, discharged mass kg, discharged count) per sample.
    pub samples: Vec<(f64, f64, u64)>,
}

/// A measured discharge.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Discharge {
    /// Mass rate over the window (kg/s).
    pub rate_kg_s: f64,
    /// Its standard error from the fit (kg/s).
    pub rate_stderr_kg_s: f64,
    /// Bodies per second over the window.
    pub rate_per_s: f64,
    /// The fit window (s).
    pub window_s: [f64; 2],
    /// Samples in the window.
    pub samples: usize,
    /// Mass below the plane at the end (kg).
    pub discharged_kg: f64,
    /// Bodies below the plane at the end.
    pub discharged: u64,
}

impl DischargeSampler {
    /// A sampler with no samples.
    pub fn new(settings: DischargeSettings) -> Self {
        DischargeSampler {
            settings,
            samples: Vec::new(),
        }
    }

    /// Records the bodies below the plane at time `t`.
    pub fn sample(&mut self, bodies: &Bodies, t: f64) {
        let (mut mass, mut count) = (0.0, 0u64);
        for i in 0..bodies.len() {
            if bodies.pos[i].z < self.settings.below && bodies.inv_mass[i] > 0.0 {
                mass += 1.0 / bodies.inv_mass[i];
                count += 1;
            }
        }
        self.samples.push((t, mass, count));
    }

    /// The rate over the window (module docs); an error says why there is
    /// none (nothing discharged, too few samples in the window).
    pub fn finish(&self) -> Result<Discharge, String> {
        let &(_, total, count) = self.samples.last().ok_or("no samples")?;
        if total <= 0.0 {
            return Err(format!(
                "nothing passed below z = {} m: no discharge to measure",
                self.settings.below
            ));
        }
        let when = |frac: f64| {
            self.samples
                .iter()
                .find(|s| s.1 >= frac * total)
                .map_or(0.0, |s| s.0)
        };
        let from = self.settings.from.unwrap_or_else(|| when(0.2));
        let end = self.samples.last().map_or(0.0, |s| s.0);
        let to = match (self.settings.from, self.settings.to) {
            (_, Some(t)) => t,
            (Some(_), None) => end,
            (None, None) => when(0.8),
        };
        let window: Vec<(f64, f64)> = self
            .samples
            .iter()
            .filter(|s| s.0 >= from && s.0 <= to)
            .map(|s| (s.0, s.1))
            .collect();
        if window.len() < 3 {
            return Err(format!(
                "only {} samples from t = {from} s to {to} s: too few for a rate",
                window.len()
            ));
        }
        let n = window.len() as f64;
        let (mt, mm) = window
            .iter()
            .fold((0.0, 0.0), |(a, b), (t, m)| (a + t / n, b + m / n));
        let sxx: f64 = window.iter().map(|(t, _)| (t - mt).powi(2)).sum();
        let sxy: f64 = window.iter().map(|(t, m)| (t - mt) * (m - mm)).sum();
        if sxx <= 0.0 {
            return Err(format!("the window t = {from} s to {to} s has no length"));
        }
        let slope = sxy / sxx;
        let ssr: f64 = window
            .iter()
            .map(|(t, m)| (m - mm - slope * (t - mt)).powi(2))
            .sum();
        let stderr = (ssr / (n - 2.0) / sxx).sqrt();
        let mean_mass = total / count as f64;
        Ok(Discharge {
            rate_kg_s: slope,
            rate_stderr_kg_s: stderr,
            rate_per_s: slope / mean_mass,
            window_s: [from, to],
            samples: window.len(),
            discharged_kg: total,
            discharged: count,
        })
    }
}

/// Beverloo's rate (kg/s) for outlet diameter `outlet`, grain diameter
/// `grain` (m), bulk density `bulk` (kg/m³), gravity `g` (m/s²) and the
/// constants `c` and `k` (module docs); 0 when D ≤ k d.
pub fn beverloo(outlet: f64, grain: f64, bulk: f64, g: f64, c: f64, k: f64) -> f64 {
    let free = (outlet - k * grain).max(0.0);
    c * bulk * g.sqrt() * free.powf(2.5)
}

impl Discharge {
    /// The Beverloo constant C that this rate gives for outlet `outlet`,
    /// grain `grain`, bulk density `bulk`, gravity `g` and constant `k`.
    pub fn beverloo_c(&self, outlet: f64, grain: f64, bulk: f64, g: f64, k: f64) -> f64 {
        self.rate_kg_s / beverloo(outlet, grain, bulk, g, 1.0, k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampler(samples: Vec<(f64, f64, u64)>) -> DischargeSampler {
        DischargeSampler {
            settings: DischargeSettings {
                below: 0.0,
                from: None,
                to: None,
            },
            samples,
        }
    }

    /// A ramp of 2 kg/s between a slow start and a stop: the default window
    /// (20–80 % of the final mass) lies on the ramp and finds 2 kg/s.
    #[test]
    fn the_rate_is_the_slope_of_the_steady_part() {
        let samples = (0..=300)
            .map(|k| {
                let t = k as f64 * 0.01;
                let m = if t < 0.5 {
                    t * t // transient: slope 1 at most
                } else {
                    (0.25 + 2.0 * (t - 0.5)).min(4.0)
                };
                (t, m, (m * 100.0) as u64)
            })
            .collect();
        let d = sampler(samples).finish().unwrap();
        assert!((d.rate_kg_s - 2.0).abs() < 1e-9, "{d:?}");
        assert!(d.window_s[0] >= 0.5 && d.window_s[1] <= 2.375, "{d:?}");
    }

    #[test]
    fn no_discharge_is_an_error_not_a_zero_rate() {
        let e = sampler(vec![(0.0, 0.0, 0), (1.0, 0.0, 0)])
            .finish()
            .unwrap_err();
        assert!(e.contains("nothing passed"), "{e}");
    }

    /// Beverloo for D = 30 mm, d = 5 mm, ρ_b = 1500, C = 0.58, k = 1.5:
    /// 0.58·1500·√9.81·0.0225^{5/2} = 0.58·1500·3.1321·7.594e-5 = 0.2069 kg/s
    /// (by hand), and C backs out.
    #[test]
    fn beverloo_rate_and_constant() {
        let w = beverloo(0.03, 0.005, 1500.0, 9.81, 0.58, 1.5);
        let hand = 0.58 * 1500.0 * 9.81f64.sqrt() * 0.0225f64.powf(2.5);
        assert!((w - hand).abs() < 1e-15 && (w - 0.2069).abs() < 1e-4, "{w}");
        let d = Discharge {
            rate_kg_s: w,
            rate_stderr_kg_s: 0.0,
            rate_per_s: 0.0,
            window_s: [0.0, 1.0],
            samples: 10,
            discharged_kg: 1.0,
            discharged: 1,
        };
        assert!((d.beverloo_c(0.03, 0.005, 1500.0, 9.81, 1.5) - 0.58).abs() < 1e-12);
    }
}
