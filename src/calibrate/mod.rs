//! Calibration (`repose calibrate`): the parameter values whose simulated
//! angles match measured ones — the rolling friction that gives the heap
//! angle a lab measured, or μ and ρ together from a heap's static angle and
//! a drum's dynamic angle.
//!
//! # The problem
//!
//! n parameters x_k ∈ [a_k, b_k] (scene paths, `+`-linked as in sweeps, set
//! in every scene) and n scenes, each with a target angle T_j: the heap's
//! angle of repose, or a drum's dynamic angle, whichever the scene's
//! `analysis` measures. f_j(x) is scene j's mean angle over K seeds; we
//! look for f(x) = T. One target with one parameter is the common case; one
//! target alone cannot fix two parameters (a heap's angle is reached along
//! a whole curve of (μ, ρ)), hence one scene per parameter.
//!
//! f is noisy: a pile is chaotic and one seed moves its angle by a degree
//! or two. Each evaluation of scene j at x gives m_j ± e_j, with
//!
//! ```text
//! e = max(sd, s_fit) / √K      sd: over the K seeds (K ≥ 2; 0 for K = 1)
//!                              s_fit: root mean square of the runs' flank-fit standard errors
//! ```
//!
//! (the flank fit's error is a floor: two or three seeds can agree by
//! chance). A run that fails or measures no angle is left out of the mean;
//! a point where no seed measured an angle stops the calibration with the
//! runs' errors.
//!
//! # One parameter: a bracket, then false position (Illinois)
//!
//! Both ends of the range are run first. If the target lies beyond both
//! ends' angles by more than max(tol, h) (the band below), it is out of reach and the
//! closest end is named. Otherwise [a, b] brackets the target, and each
//! round runs the root of the line through the bracket's ends (regula falsi),
//! kept within the middle 80 % of the bracket; the Illinois rule halves an
//! end's weight when it survives two rounds, so a curved f cannot hold one
//! end fixed (Dahlquist & Björck, *Numerical Methods*, §6.2). With `jobs`
//! to spare beyond K seeds, a second point per round halves the larger side.
//!
//! Why this and not a surrogate model or the plain secant method: the
//! angle is monotone in μ and ρ over the ranges one searches but far from
//! linear (the angle of Tasora & Anitescu 2013 rises steeply with ρ and
//! then levels off), and noisy. The bracket keeps every step where the sign
//! changed, so a noisy evaluation cannot throw the search out of the range,
//! as a secant step can; false position needs fewer runs than bisection
//! where f is nearly linear inside the bracket, and the Illinois rule keeps
//! it from bisection's worst case.
//!
//! # Several parameters: a local linear surrogate
//!
//! Scaled to u ∈ [0, 1]ⁿ, the centre and n points a quarter of each range
//! away are run first. Each round fits, by least squares, a linear model
//! m ≈ c + A u to the 2n + 1 evaluations nearest the latest one, solves
//! A u = T − c (a Newton step on the fitted model, at most half the unit
//! box long), clamps it into the box and runs it. Least squares over more
//! points than unknowns averages the noise that a finite-difference or
//! Broyden Jacobian would chase. A nearly singular A (the targets do not
//! separate the parameters) stops with `ambiguous`; a step clamped to the
//! box twice in a row that still misses is `out_of_reach`.
//!
//! # Stopping and the interval
//!
//! An evaluation *meets* the targets when every |m_j − T_j| ≤ tol and every
//! band h_j (below) ≤ tol: status `converged`. The search is
//! `noise_limited` when the model's band already spans what is left to
//! search — for one parameter, the interval of the bracket's line covers
//! the bracket; for several, the last point is within max(tol, h) of the
//! targets and the model's next step is shorter than the root's band — so
//! narrowing further would chase noise (more seeds narrow it: e falls as
//! 1/√K). `budget` is reaching `--max-evals` first.
//!
//! The band of an angle is z·e, z Student's t₀.₉₇₅ for the degrees of
//! freedom of the seeds' scatter, pooled over every point run (a pile's
//! scatter hardly changes across a range, and two or three seeds alone
//! estimate it poorly; z = 2 with one seed, where only the flank fit's
//! error is known — which understates a pile's seed-to-seed scatter, so
//! use K ≥ 3 for a result). The estimate is the root of the last model (the
//! line through the final bracket; the last surrogate). Its interval is
//! where that model lies within the band of the target — ±h/|slope| for
//! one parameter, ±√diag(A⁻¹ H A⁻ᵀ) with H = diag(h_j²) for several —
//! widened to hold every point run whose angles are within their band of
//! the targets: a line through two noisy points can be steeper than the
//! response, and the points that could not be told from the target say
//! where else it may lie.

use anyhow::{bail, Context, Result};
use serde::Serialize;

mod bracket;
mod output;
mod running;
mod surrogate;

pub use output::*;
pub use running::*;

/// One calibrated parameter: the scene path(s) it sets and its range.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Param {
    /// The scene path, `+`-linked paths set to the same value
    /// (`materials.0.rolling+materials.0.spinning`).
    pub path: String,
    /// Low end of the range searched.
    pub lo: f64,
    /// High end (> `lo`).
    pub hi: f64,
}

impl Param {
    /// The scene paths it sets (one, or the `+`-linked ones).
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.path.split('+').map(str::trim)
    }

    /// A parameter from `--param PATH` and `--range a:b` (a < b, finite).
    pub fn parse(path: &str, range: &str) -> Result<Param> {
        let path = path.trim();
        if path.is_empty() || path.split('+').any(|p| p.trim().is_empty()) {
            bail!("--param {path:?}: a scene path is needed, e.g. materials.0.rolling");
        }
        let fail = |why: &str| anyhow::anyhow!("--range {range} (for {path}): {why}");
        let (a, b) = range
            .split_once(':')
            .ok_or_else(|| fail("expected a:b, e.g. 0:0.005"))?;
        let num = |s: &str, what: &str| match s.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(fail(&format!("the {what} {s:?} is not a finite number"))),
        };
        let (lo, hi) = (num(a, "low end")?, num(b, "high end")?);
        if lo >= hi {
            return Err(fail("the low end must be below the high end"));
        }
        Ok(Param {
            path: path.to_string(),
            lo,
            hi,
        })
    }

    fn width(&self) -> f64 {
        self.hi - self.lo
    }

    /// `x` rounded to a ten-thousandth of the range's decade (0.0012345 →
    /// 0.001234 for a range 0…0.005) and clamped into the range, so run
    /// directories have readable names and the search stops at a
    /// resolution no user needs.
    pub fn round(&self, x: f64) -> f64 {
        let step = 10f64.powi(self.width().log10().floor() as i32 - 4);
        let v = (x / step).round() * step;
        let v: f64 = format!("{v:.12e}").parse().unwrap_or(v);
        v.clamp(self.lo, self.hi)
    }

    /// u ∈ [0, 1] of value `x`.
    fn unit(&self, x: f64) -> f64 {
        (x - self.lo) / self.width()
    }

    /// The value at u ∈ [0, 1].
    fn value(&self, u: f64) -> f64 {
        self.lo + u * self.width()
    }
}

/// One scene's angle at one point: the mean over its seeds and its error.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Observation {
    /// Mean angle over the runs that measured one (°).
    pub mean: f64,
    /// Standard deviation over those runs (°; `None` for one run).
    pub sd: Option<f64>,
    /// Standard error of the mean, max(sd, s_fit) / √K (°; module docs);
    /// the search replaces sd by the seeds' scatter pooled over all its
    /// points.
    pub stderr: f64,
    /// s_fit: root mean square of the runs' flank-fit standard errors (°).
    pub fit: f64,
    /// How many runs measured an angle.
    pub runs: usize,
}

impl Observation {
    /// From the angles of K runs and their flank-fit standard errors (°);
    /// `None` when no run measured an angle.
    pub fn of_runs(angles: &[f64], fit_stderrs: &[f64]) -> Option<Observation> {
        let k = angles.len();
        if k == 0 {
            return None;
        }
        let mean = angles.iter().sum::<f64>() / k as f64;
        let sd = (k >= 2).then(|| {
            (angles.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / (k - 1) as f64).sqrt()
        });
        let fit = if fit_stderrs.is_empty() {
            0.0
        } else {
            (fit_stderrs.iter().map(|e| e * e).sum::<f64>() / fit_stderrs.len() as f64).sqrt()
        };
        Some(Observation {
            mean,
            sd,
            stderr: sd.unwrap_or(0.0).max(fit) / (k as f64).sqrt(),
            fit,
            runs: k,
        })
    }
}

/// One point run: its parameter values and one observation per target.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evaluation {
    /// Position in the order of evaluation (0-based).
    pub index: usize,
    /// The round it was run in (0: the range's ends or the design).
    pub round: usize,
    /// One value per parameter.
    pub x: Vec<f64>,
    /// One observation per target (scene).
    pub obs: Vec<Observation>,
}

/// How a calibration ended (module docs, "Stopping and the interval").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// An evaluation within `tol` of every target, with band ≤ tol.
    Converged,
    /// Within two standard errors of every target, but the seeds' scatter
    /// is wider than `tol`.
    NoiseLimited,
    /// No value in the ranges reaches the target(s).
    OutOfReach,
    /// The targets do not determine the parameters separately.
    Ambiguous,
    /// `max_evals` evaluations were made without meeting the targets.
    Budget,
}

impl Status {
    /// The name written to `calibrate.json` and printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Converged => "converged",
            Status::NoiseLimited => "noise_limited",
            Status::OutOfReach => "out_of_reach",
            Status::Ambiguous => "ambiguous",
            Status::Budget => "budget",
        }
    }
}

/// The result of a calibration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    /// How it ended.
    pub status: Status,
    /// The estimate, one value per parameter (for `out_of_reach`: the
    /// closest point reached).
    pub estimate: Vec<f64>,
    /// Its interval per parameter, `[low, high]` within the range; empty
    /// for `out_of_reach` and `ambiguous`.
    pub interval: Vec<[f64; 2]>,
    /// The evaluation whose angles came closest to the targets.
    pub nearest: usize,
    /// What it means, in a sentence or two.
    pub message: String,
    /// Every evaluation, in order.
    pub evaluations: Vec<Evaluation>,
}

/// Runs points: the simulations ([`SimEvaluator`]) or, in tests, a
/// function.
pub trait Evaluator {
    /// Evaluates `points` (one value per parameter each) in round `round`:
    /// one observation per target for each point, in order.
    fn evaluate(&mut self, round: usize, points: &[Vec<f64>]) -> Result<Vec<Vec<Observation>>>;
}

/// How to search.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Tolerance on the angle (°).
    pub tol: f64,
    /// The most points to run (each is K seeds × the scenes).
    pub max_evals: usize,
    /// Points per round with one parameter (1 or 2; 2 when `jobs` leaves
    /// room for a second point's seeds).
    pub per_round: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            tol: 1.0,
            max_evals: 12,
            per_round: 1,
        }
    }
}

/// Finds the parameter values whose angles meet `targets` (one per
/// scene; as many as `params`). Errors: bad settings, or an evaluation
/// that failed.
pub fn calibrate(
    params: &[Param],
    targets: &[f64],
    settings: &Settings,
    evaluator: &mut dyn Evaluator,
) -> Result<Outcome> {
    if params.is_empty() || params.len() != targets.len() {
        bail!(
            "one target angle per parameter is needed (got {} parameter{}, {} target{})",
            params.len(),
            if params.len() == 1 { "" } else { "s" },
            targets.len(),
            if targets.len() == 1 { "" } else { "s" }
        );
    }
    if !(settings.tol > 0.0 && settings.tol.is_finite()) {
        bail!(
            "--tol must be a positive number of degrees (got {})",
            settings.tol
        );
    }
    let min_evals = if params.len() == 1 {
        2
    } else {
        params.len() + 2
    };
    if settings.max_evals < min_evals {
        bail!(
            "--max-evals {} is too few: {} parameter{} need at least {min_evals}",
            settings.max_evals,
            params.len(),
            if params.len() == 1 { "" } else { "s" }
        );
    }
    if let Some(t) = targets.iter().find(|t| !t.is_finite()) {
        bail!("the target angle {t} is not a finite number");
    }
    let mut s = Search {
        params,
        targets,
        settings,
        evaluator,
        evals: Vec::new(),
        round: 0,
        z: vec![2.0; targets.len()],
    };
    if params.len() == 1 {
        s.one_parameter()
    } else {
        s.surrogate()
    }
}

struct Search<'a> {
    params: &'a [Param],
    targets: &'a [f64],
    settings: &'a Settings,
    evaluator: &'a mut dyn Evaluator,
    evals: Vec<Evaluation>,
    round: usize,
    /// Per target: the multiplier of the standard error for a two-sided
    /// 95 % band (Student's t for the pooled scatter's degrees of freedom;
    /// 2 while there are none).
    z: Vec<f64>,
}

/// Student's t quantile t₀.₉₇₅ for `dof` degrees of freedom (2 for none:
/// the flank fit's error alone, taken as known).
pub fn t975(dof: usize) -> f64 {
    const T: [f64; 10] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    ];
    match dof {
        0 => 2.0,
        1..=10 => T[dof - 1],
        _ => 1.96 + 2.5 / dof as f64,
    }
}

/// A bracket end for one parameter: evaluation index, x, miss m − T
/// (oriented so that it grows with the bracket's direction) and weight.
#[derive(Clone, Copy, Debug)]
struct End {
    eval: usize,
    x: f64,
    d: f64,
    /// The 95 % band z·e of its angle (°).
    h: f64,
}

impl Search<'_> {
    /// Runs `points` (rounded; those already run are not run again) and
    /// returns their evaluation indices.
    fn run(&mut self, points: Vec<Vec<f64>>) -> Result<Vec<usize>> {
        let mut ids = Vec::with_capacity(points.len());
        let mut fresh: Vec<Vec<f64>> = Vec::new();
        let mut fresh_slot = Vec::new();
        for p in points {
            let x: Vec<f64> = p
                .iter()
                .zip(self.params)
                .map(|(v, q)| q.round(*v))
                .collect();
            if let Some(i) = self.evals.iter().position(|e| e.x == x) {
                ids.push(Some(i));
            } else if let Some(k) = fresh.iter().position(|f| *f == x) {
                ids.push(None);
                fresh_slot.push((ids.len() - 1, k));
            } else {
                ids.push(None);
                fresh_slot.push((ids.len() - 1, fresh.len()));
                fresh.push(x);
            }
        }
        if !fresh.is_empty() {
            let obs = self
                .evaluator
                .evaluate(self.round, &fresh)
                .with_context(|| format!("calibration round {}", self.round))?;
            if obs.len() != fresh.len() || obs.iter().any(|o| o.len() != self.targets.len()) {
                bail!("the evaluator returned the wrong number of observations");
            }
            let base = self.evals.len();
            for (k, (x, o)) in fresh.into_iter().zip(obs).enumerate() {
                self.evals.push(Evaluation {
                    index: base + k,
                    round: self.round,
                    x,
                    obs: o,
                });
            }
            for (slot, k) in fresh_slot {
                ids[slot] = Some(base + k);
            }
        }
        self.round += 1;
        self.repool();
        Ok(ids
            .into_iter()
            .map(|i| i.expect("every point has an evaluation"))
            .collect())
    }

    /// Pools the seeds' scatter over every point run (per target) and
    /// recomputes each point's standard error as max(pooled sd, s_fit)/√K
    /// and the band multiplier from the pooled degrees of freedom: the
    /// scatter of a pile hardly changes across a range, and two or three
    /// seeds alone estimate it poorly.
    fn repool(&mut self) {
        for j in 0..self.targets.len() {
            let (mut ss, mut dof) = (0.0, 0usize);
            for e in &self.evals {
                let o = &e.obs[j];
                if let (Some(sd), true) = (o.sd, o.runs >= 2) {
                    ss += sd * sd * (o.runs - 1) as f64;
                    dof += o.runs - 1;
                }
            }
            let pooled = if dof > 0 {
                (ss / dof as f64).sqrt()
            } else {
                0.0
            };
            for e in &mut self.evals {
                let o = &mut e.obs[j];
                o.stderr = pooled.max(o.fit) / (o.runs.max(1) as f64).sqrt();
            }
            self.z[j] = t975(dof);
        }
    }

    /// The 95 % band z·e of evaluation `i`'s angle in scene `j` (°).
    fn band(&self, i: usize, j: usize) -> f64 {
        self.z[j] * self.evals[i].obs[j].stderr
    }

    fn miss(&self, i: usize, j: usize) -> f64 {
        self.evals[i].obs[j].mean - self.targets[j]
    }

    /// Whether evaluation `i` meets every target: |m − T| ≤ tol and
    /// band ≤ tol.
    fn converged(&self, i: usize) -> bool {
        let tol = self.settings.tol;
        let obs = &self.evals[i].obs;
        (0..obs.len()).all(|j| self.miss(i, j).abs() <= tol && self.band(i, j) <= tol)
    }

    /// Whether evaluation `i` is within max(tol, band) of every target.
    fn within_noise(&self, i: usize) -> bool {
        let tol = self.settings.tol;
        let obs = &self.evals[i].obs;
        (0..obs.len()).all(|j| self.miss(i, j).abs() <= tol.max(self.band(i, j)))
    }

    /// Widens `interval` to hold every point run whose angles could not be
    /// told from the targets (within max(tol, band) of each): a noisy,
    /// curved response can put such points beyond the model's band.
    fn widen(&self, interval: &mut [[f64; 2]]) {
        for i in 0..self.evals.len() {
            if self.within_noise(i) {
                for (iv, x) in interval.iter_mut().zip(&self.evals[i].x) {
                    iv[0] = iv[0].min(*x);
                    iv[1] = iv[1].max(*x);
                }
            }
        }
    }

    /// The evaluation whose largest miss, in units of max(tol, band), is
    /// smallest.
    fn nearest(&self) -> usize {
        let score = |i: usize| {
            (0..self.targets.len())
                .map(|j| self.miss(i, j).abs() / self.settings.tol.max(self.band(i, j)))
                .fold(0.0f64, f64::max)
        };
        (0..self.evals.len())
            .min_by(|&a, &b| score(a).total_cmp(&score(b)))
            .unwrap_or(0)
    }

    fn outcome(
        &mut self,
        status: Status,
        estimate: Vec<f64>,
        interval: Vec<[f64; 2]>,
        message: String,
    ) -> Outcome {
        Outcome {
            status,
            estimate,
            interval,
            nearest: self.nearest(),
            message,
            evaluations: std::mem::take(&mut self.evals),
        }
    }

    fn end(&self, i: usize, sign: f64) -> End {
        End {
            eval: i,
            x: self.evals[i].x[0],
            d: sign * self.miss(i, 0),
            h: self.band(i, 0),
        }
    }
}
