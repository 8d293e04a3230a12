//! Distributions of sphere radii (`sizes:` of a `RandomBox` or an `Inlet`)
//! and the report of the radii a run produced (`extra.sizes`).
//!
//! | law | radii |
//! |---|---|
//! | `Classes(classes: [(min, max, fraction), …], by: Number \| Mass)` | sieve classes: class i is chosen with probability p_i, then r uniform in [min_i, max_i] |
//! | `Normal(mean, sd, min, max)` | normal, truncated to [min, max] |
//! | `LogNormal(median, sigma, min, max)` | ln r normal with mean ln(median) and standard deviation sigma, truncated to [min, max] |
//!
//! Class fractions are normalised to their sum. By number, p_i ∝ f_i; by
//! mass, the fractions are of the mass, so p_i ∝ f_i / E(r³)_i with
//! E(r³) = (b⁴ − a⁴) / (4 (b − a)) over [a, b] (a³ when a = b): the mean
//! volume of a sphere of the class.
//!
//! The truncated laws draw by rejection from the whole law (Box–Muller
//! normals from the source's seeded generator). Validation asks the window
//! to hold the mean (the median) and to be at least half a standard
//! deviation wide (sigma/2 in ln r), so that at least 19 % of the draws are
//! kept: P(0 ≤ Z ≤ 1/2) = 0.191 for a standard normal Z.
//!
//! Draws come from the source's generator, so a seed gives the same radii
//! on every machine.

use serde::{Deserialize, Serialize};

use crate::rng::Rng;

/// What class fractions are of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Basis {
    /// Fractions of the number of spheres.
    #[default]
    Number,
    /// Fractions of the mass (sieve analyses give these).
    Mass,
}

/// A distribution of radii (module docs); radii in metres.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum SizeDistribution {
    /// Sieve classes: `(min, max, fraction)` each, radii uniform within.
    Classes {
        /// The classes.
        classes: Vec<(f64, f64, f64)>,
        /// Whether the fractions are of the number or of the mass.
        #[serde(default)]
        by: Basis,
    },
    /// A normal law truncated to [`min`, `max`].
    Normal {
        /// Mean of the untruncated law (m).
        mean: f64,
        /// Its standard deviation (m).
        sd: f64,
        /// Smallest radius (m).
        min: f64,
        /// Largest radius (m).
        max: f64,
    },
    /// A log-normal law truncated to [`min`, `max`].
    LogNormal {
        /// Median of the untruncated law (m).
        median: f64,
        /// Standard deviation of ln r.
        sigma: f64,
        /// Smallest radius (m).
        min: f64,
        /// Largest radius (m).
        max: f64,
    },
}

/// The smallest radius a scene accepts (m): one nanometre. Far below it
/// the masses (∝ r³), moments of inertia (∝ r⁵) and settling threshold
/// (∝ r⁴) of ordinary densities leave the range of floating point: a
/// sphere of 10⁻⁹⁰ m has a moment of inertia of exactly 0.
pub const MIN_RADIUS: f64 = 1e-9;

/// `x` as a message quotes it: plainly, or in exponent form when tiny or
/// huge (`1e-90`, not ninety digits).
pub(crate) fn quoted(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e16).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// The weight of a class `(a, b, f)` in the draw: its fraction by number,
/// or its fraction of the mass over the mean volume of its spheres.
fn class_weight(by: Basis, &(a, b, f): &(f64, f64, f64)) -> f64 {
    match by {
        Basis::Number => f,
        Basis::Mass => f / mean_cube(a, b),
    }
}

/// A uniform draw in (0, 1], never 0 (for a logarithm).
fn open_unit(rng: &mut Rng) -> f64 {
    1.0 - rng.next_f64()
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut Rng) -> f64 {
    let (u, v) = (open_unit(rng), rng.next_f64());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// E(r³) for r uniform in [a, b].
fn mean_cube(a: f64, b: f64) -> f64 {
    if b > a {
        (b.powi(4) - a.powi(4)) / (4.0 * (b - a))
    } else {
        a.powi(3)
    }
}

impl SizeDistribution {
    /// The smallest and the largest radius it can give (m).
    pub fn bounds(&self) -> (f64, f64) {
        match self {
            SizeDistribution::Classes { classes, .. } => classes.iter().fold(
                (f64::INFINITY, f64::NEG_INFINITY),
                |(lo, hi), &(a, b, _)| (lo.min(a), hi.max(b)),
            ),
            SizeDistribution::Normal { min, max, .. }
            | SizeDistribution::LogNormal { min, max, .. } => (*min, *max),
        }
    }

    /// Every value out of range, as `(field, reason)`.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut p = Vec::new();
        let mut bad = |f: &str, why: String| p.push((f.to_string(), why));
        match self {
            SizeDistribution::Classes { classes, by } => {
                if classes.is_empty() {
                    bad(
                        "classes",
                        "needs at least one class (min, max, fraction)".into(),
                    );
                }
                for (i, &(a, b, f)) in classes.iter().enumerate() {
                    if !(a.is_finite() && b.is_finite() && a >= MIN_RADIUS && b >= a) {
                        bad(
                            &format!("classes[{i}]"),
                            format!(
                                "radii must be finite with {MIN_RADIUS:e} m ≤ min ≤ max (got min {}, max {})",
                                quoted(a),
                                quoted(b)
                            ),
                        );
                    }
                    if !(f.is_finite() && f >= 0.0) {
                        bad(
                            &format!("classes[{i}]"),
                            format!("the fraction must be ≥ 0 (got {f})"),
                        );
                    }
                }
                // The draw scales the weights by their sum: it must be a
                // finite number > 0 (fractions of 1e308 each add up to inf,
                // and every draw would fall in one class).
                let total: f64 = classes.iter().map(|c| class_weight(*by, c)).sum();
                let valid = classes.iter().all(|&(a, b, f)| {
                    a.is_finite()
                        && b.is_finite()
                        && a >= MIN_RADIUS
                        && b >= a
                        && f.is_finite()
                        && f >= 0.0
                });
                if valid && !classes.is_empty() {
                    if total <= 0.0 {
                        bad("classes", "the fractions add up to 0".into());
                    } else if !total.is_finite() {
                        bad(
                            "classes",
                            format!("the fractions' weights add up to {total}: give fractions of order 1 (they are normalised to their sum)"),
                        );
                    }
                }
            }
            SizeDistribution::Normal { mean, sd, min, max } => {
                let ok = [*mean, *sd, *min, *max].iter().all(|v| v.is_finite());
                if !ok || *sd <= 0.0 || *min < MIN_RADIUS {
                    bad("sd", format!("mean, sd, min and max must be finite, sd > 0 and min ≥ {MIN_RADIUS:e} m (got mean {mean}, sd {sd}, min {min}, max {max})"));
                } else if !(min <= mean && mean <= max) || max - min < 0.5 * sd {
                    bad("min", format!("the window [min, max] = [{min}, {max}] must hold the mean {mean} and be at least sd/2 = {} wide (so that a fifth of the draws fall in it)", 0.5 * sd));
                }
            }
            SizeDistribution::LogNormal {
                median,
                sigma,
                min,
                max,
            } => {
                let ok = [*median, *sigma, *min, *max].iter().all(|v| v.is_finite());
                if !ok || *sigma <= 0.0 || *min < MIN_RADIUS {
                    bad("sigma", format!("median, sigma, min and max must be finite, sigma > 0 and min ≥ {MIN_RADIUS:e} m (got median {median}, sigma {sigma}, min {min}, max {max})"));
                } else if !(min <= median && median <= max) || (max / min).ln() < 0.5 * sigma {
                    bad("min", format!("the window [min, max] = [{min}, {max}] must hold the median {median} and span at least sigma/2 = {} in ln r", 0.5 * sigma));
                }
            }
        }
        p
    }

    /// One radius drawn from `rng` (a valid distribution: [`Self::problems`]
    /// empty).
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match self {
            SizeDistribution::Classes { classes, by } => {
                let weight = |c: &(f64, f64, f64)| class_weight(*by, c);
                let total: f64 = classes.iter().map(weight).sum();
                let mut u = rng.next_f64() * total;
                let last = classes.len() - 1;
                let mut pick = last;
                for (i, c) in classes.iter().enumerate() {
                    let w = weight(c);
                    if u < w {
                        pick = i;
                        break;
                    }
                    u -= w;
                }
                let (a, b, _) = classes[pick];
                if b > a {
                    rng.uniform(a, b)
                } else {
                    a
                }
            }
            SizeDistribution::Normal { mean, sd, min, max } => {
                truncated(rng, *min, *max, |z| mean + sd * z)
            }
            SizeDistribution::LogNormal {
                median,
                sigma,
                min,
                max,
            } => truncated(rng, *min, *max, |z| median * (sigma * z).exp()),
        }
    }
}

/// The first of `law(z)` over standard normal draws z that lies in
/// [`min`, `max`]. Validation keeps at least 19 % of the draws, so a
/// million misses (probability below 10⁻⁹⁰⁰⁰⁰) cannot happen in practice;
/// should they, the window's middle is returned.
fn truncated(rng: &mut Rng, min: f64, max: f64, law: impl Fn(f64) -> f64) -> f64 {
    for _ in 0..1_000_000 {
        let r = law(normal(rng));
        if (min..=max).contains(&r) {
            return r;
        }
    }
    0.5 * (min + max)
}

/// The radii a run produced (`extra.sizes` of `summary.json`): by number,
/// and the mass-median radius.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeReport {
    /// Spheres counted.
    pub count: usize,
    /// Mean radius (m).
    pub mean: f64,
    /// Standard deviation of the radius (m).
    pub sd: f64,
    /// Smallest and largest radius (m).
    pub min: f64,
    /// Largest radius (m).
    pub max: f64,
    /// Radii below which 10 %, 50 %, 90 % of the spheres lie (m).
    pub r10: f64,
    /// The median radius (m).
    pub r50: f64,
    /// See `r10`.
    pub r90: f64,
    /// The radius below which half the mass lies (equal densities; m).
    pub r50_mass: f64,
}

impl SizeReport {
    /// The report of `radii`; `None` when there are none.
    pub fn of(radii: &[f64]) -> Option<SizeReport> {
        if radii.is_empty() {
            return None;
        }
        let mut r = radii.to_vec();
        r.sort_by(f64::total_cmp);
        let n = r.len() as f64;
        let mean = r.iter().sum::<f64>() / n;
        let var = r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        let q = |p: f64| r[((p * n).ceil() as usize).clamp(1, r.len()) - 1];
        let total: f64 = r.iter().map(|x| x.powi(3)).sum();
        let mut acc = 0.0;
        let mut r50_mass = r[r.len() - 1];
        for x in &r {
            acc += x.powi(3);
            if acc >= 0.5 * total {
                r50_mass = *x;
                break;
            }
        }
        Some(SizeReport {
            count: r.len(),
            mean,
            sd: var.sqrt(),
            min: r[0],
            max: r[r.len() - 1],
            r10: q(0.1),
            r50: q(0.5),
            r90: q(0.9),
            r50_mass,
        })
    }
}
