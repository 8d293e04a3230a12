//! `summary.json`: what a run was and how it went, for people and scripts.
//!
//! One pretty-printed JSON object ([`Summary`]): the scene and backend, the
//! number of steps and simulated time, wall-clock time in total and per
//! pipeline stage, contact counts and solver statistics over all steps, the
//! final kinetic energy, the number of bodies, the repose version, and an
//! `extra` object for results that later analyses add (angle of repose, …).
//! Open it with any text editor, `jq`, Python's `json.load`, or
//! [`read_summary`].
//!
//! Floating-point fields that can be undefined (a residual before any step,
//! an energy that overflowed) are written as `null` when not finite — JSON
//! has no NaN — and read back as NaN.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{write_atomic, ReadError};
use crate::gpu::profile::GpuCounters;

/// Serde helpers writing non-finite `f64` as `null` and reading `null` as NaN.
pub(crate) mod finite_or_null {
    use serde::{Deserialize, Deserializer, Serializer};

    /// `v`, or `null` when it is not finite.
    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_none()
        }
    }

    /// The number, or NaN for `null`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}

/// The record of one simulation run, written as `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Scene name (from the scene file).
    pub scene: String,
    /// Path of the scene file, as given on the command line.
    pub scene_file: String,
    /// The backend that ran the solver, e.g. `"cpu"` or `"gpu (llvmpipe)"`.
    pub backend: String,
    /// How the run ended: `completed` (its duration), `settled`
    /// (`analysis.stop_when_settled`), `interrupted` (SIGINT or SIGTERM),
    /// `diverged` (non-finite state) or `failed` (an error, e.g. the solver's).
    /// Summaries written before this field read as `completed`.
    #[serde(default)]
    pub stopped: StopReason,
    /// What stopped a run that did not complete (the error, or the quantity
    /// that diverged, with its step and body); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_message: Option<String>,
    /// The contact formulation: `complementarity` or `penalty`. Summaries
    /// written before this field read as `complementarity`.
    #[serde(default = "complementarity")]
    pub formulation: String,
    /// Number of time steps taken.
    pub steps: u64,
    /// Sub-steps taken (the penalty formulation's; one per step otherwise).
    #[serde(default)]
    pub substeps: u64,
    /// Σ over sub-steps of the bodies stepped: the penalty formulation's
    /// work measure (particle-steps).
    #[serde(default)]
    pub particle_steps: u64,
    /// Simulated (physical) time reached (s).
    pub simulated_time: f64,
    /// Wall-clock time of the whole run (s).
    pub wall_time_s: f64,
    /// Total wall-clock seconds per pipeline stage (broadphase, narrowphase,
    /// problem, solve, integrate, output, …), by stage name.
    pub stage_seconds: BTreeMap<String, f64>,
    /// Active contacts per step.
    pub contacts: ContactStats,
    /// Contact solver statistics over all steps (zero iterations and
    /// residuals under the penalty formulation, which solves no contact
    /// problem: see `substeps` and `particle_steps` there).
    pub solver: SolverStats,
    /// Where the GPU solver's time went (counts, bytes, host times; see
    /// [`GpuCounters`]); absent when the run did not use the GPU backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuCounters>,
    /// Total kinetic energy (translational + rotational) at the end (J);
    /// `null` in JSON when not finite.
    #[serde(with = "finite_or_null")]
    pub kinetic_energy_final: f64,
    /// Number of bodies at the end.
    pub bodies: usize,
    /// Version of repose that wrote the file.
    pub repose_version: String,
    /// Further results added by analyses, by name: `backend_reason`;
    /// `settling` ([`SettleReport`](crate::analysis::SettleReport), `null`
    /// when detection was off); `floor_z` (m, when the scene has a floor);
    /// `angle_of_repose` ([`HeapMeasurement`](crate::analysis::HeapMeasurement))
    /// or `angle_of_repose_error` (why it could not be measured).
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Summary {
    /// An empty summary for a run of `scene` (from `scene_file`) on
    /// `backend`, with the current repose version and everything else zero
    /// (residuals and energy undefined).
    pub fn new(
        scene: impl Into<String>,
        scene_file: impl Into<String>,
        backend: impl Into<String>,
    ) -> Self {
        Summary {
            scene: scene.into(),
            scene_file: scene_file.into(),
            backend: backend.into(),
            stopped: StopReason::Completed,
            stop_message: None,
            formulation: complementarity(),
            steps: 0,
            substeps: 0,
            particle_steps: 0,
            simulated_time: 0.0,
            wall_time_s: 0.0,
            stage_seconds: BTreeMap::new(),
            contacts: ContactStats::default(),
            solver: SolverStats::default(),
            gpu: None,
            kinetic_energy_final: f64::NAN,
            bodies: 0,
            repose_version: env!("CARGO_PKG_VERSION").to_owned(),
            extra: serde_json::Map::new(),
        }
    }

    /// What a run's last lines say: steps, time, contacts and iterations,
    /// the steps that met the tolerance (or the penalty sub-steps), the GPU
    /// breakdown, settling and the angle of repose.
    pub fn report_lines(&self) -> Vec<String> {
        let s = self;
        let mut lines = Vec::new();
        if s.formulation == "penalty" {
            lines.push(format!(
                "{}: {} steps, {:.3} s simulated in {:.1} s wall; mean {:.0} contacts per step",
                s.scene, s.steps, s.simulated_time, s.wall_time_s, s.contacts.mean
            ));
            lines.push(format!(
                "penalty: {} sub-steps ({:.1} per step); {:.3e} particle-steps/s all-in",
                s.substeps,
                s.substeps as f64 / s.steps.max(1) as f64,
                s.particle_steps as f64 / s.wall_time_s.max(1e-9)
            ));
        } else {
            lines.push(format!(
                    "{}: {} steps, {:.3} s simulated in {:.1} s wall; mean {:.0} contacts and {:.1} iterations per step; final relative residual {:.2e}",
                    s.scene,
                    s.steps,
                    s.simulated_time,
                    s.wall_time_s,
                    s.contacts.mean,
                    s.solver.iterations_mean,
                    s.solver.residual_rel_final
                ));
            lines.push(format!(
                "solver: {} of {} steps met the tolerance; {:.3e} contact-iterations/s all-in",
                s.solver.steps - s.solver.steps_not_converged,
                s.solver.steps,
                s.solver.contact_iterations as f64 / s.wall_time_s.max(1e-9)
            ));
            if let Some(g) = &s.gpu {
                lines.push(g.to_string());
            }
            if s.solver.steps_fallback > 0 {
                lines.push(format!(
                    "solver.fallback ran on {} step{} ({} of its iterations, {:.1} s, in all)",
                    s.solver.steps_fallback,
                    if s.solver.steps_fallback == 1 {
                        ""
                    } else {
                        "s"
                    },
                    s.solver.fallback_iterations_total,
                    s.solver.fallback_seconds_total
                ));
            }
        }
        if let Some(t) = s.extra.get("settling").and_then(|v| v.get("settle_time_s")) {
            if let Some(t) = t.as_f64() {
                lines.push(format!("settled at t = {t:.4} s"));
            }
        }
        if let Some(a) = s.extra.get("angle_of_repose") {
            let num = |k: &str| a.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
            lines.push(format!(
                "angle of repose: {:.2}° ± {:.2}°; height {:.4} m, base radius {:.4} m",
                num("angle_deg"),
                num("angle_stderr_deg"),
                num("height"),
                num("base_radius")
            ));
        }
        if let Some(a) = s.extra.get("dynamic_angle") {
            let num = |k: &str| a.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
            let window = |i: usize| {
                a.get("window_s")
                    .and_then(|w| w.get(i))
                    .and_then(|v| v.as_f64())
                    .unwrap_or(f64::NAN)
            };
            lines.push(format!(
                "dynamic angle of drum {:?}: {:.2}° ± {:.2}° (mean ± sd over {} samples from t = {:.3} s to {:.3} s)",
                a.get("boundary").and_then(|v| v.as_str()).unwrap_or(""),
                num("angle_deg"),
                num("angle_sd_deg"),
                a.get("samples").and_then(|v| v.as_u64()).unwrap_or(0),
                window(0),
                window(1)
            ));
        }
        lines
    }

    /// Adds a stretch of the GPU solver's counters (a resumed run adds its
    /// own to those of the processes before it).
    pub fn add_gpu(&mut self, c: &GpuCounters) {
        self.gpu.get_or_insert_with(GpuCounters::default).add(c);
    }

    /// Adds `seconds` to the total of stage `stage`.
    pub fn add_stage_seconds(&mut self, stage: &str, seconds: f64) {
        *self.stage_seconds.entry(stage.to_owned()).or_insert(0.0) += seconds;
    }
}

fn complementarity() -> String {
    "complementarity".into()
}

/// How a run ended ([`Summary::stopped`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    /// It ran its whole duration.
    #[default]
    Completed,
    /// It stopped once the pile had settled (`analysis.stop_when_settled`).
    Settled,
    /// SIGINT or SIGTERM stopped it after a step; the outputs are complete.
    Interrupted,
    /// The state became non-finite; the outputs hold the last finite step.
    Diverged,
    /// An error stopped it (e.g. the solver's); outputs up to the step before.
    Failed,
}

impl std::fmt::Display for StopReason {
    /// The word `summary.json` uses: `completed`, `settled`, …
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StopReason::Completed => "completed",
            StopReason::Settled => "settled",
            StopReason::Interrupted => "interrupted",
            StopReason::Diverged => "diverged",
            StopReason::Failed => "failed",
        })
    }
}

/// Number of active contacts per step: minimum, mean, maximum.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ContactStats {
    /// Steps recorded.
    pub steps: u64,
    /// Sum of the contact counts over all steps.
    pub total: u64,
    /// Fewest contacts in one step (0 before any step).
    pub min: u64,
    /// Mean contacts per step (0 before any step).
    pub mean: f64,
    /// Most contacts in one step.
    pub max: u64,
}

impl ContactStats {
    /// Records the number of contacts of one step.
    pub fn record(&mut self, contacts: usize) {
        let c = contacts as u64;
        self.min = if self.steps == 0 { c } else { self.min.min(c) };
        self.max = self.max.max(c);
        self.steps += 1;
        self.total += c;
        self.mean = self.total as f64 / self.steps as f64;
    }
}

/// Contact solver statistics over all steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SolverStats {
    /// Steps (solves) recorded.
    pub steps: u64,
    /// Iterations summed over all steps.
    pub iterations_total: u64,
    /// Mean iterations per step (0 before any step).
    pub iterations_mean: f64,
    /// Absolute natural-map residual at the end of the last step
    /// (`null` before any step, or when not finite).
    #[serde(with = "finite_or_null")]
    pub residual_abs_final: f64,
    /// Relative natural-map residual at the end of the last step.
    #[serde(with = "finite_or_null")]
    pub residual_rel_final: f64,
    /// Largest relative residual at the end of any step (NaN, written
    /// `null`, once any step's residual was NaN).
    #[serde(with = "finite_or_null")]
    pub residual_rel_max: f64,
    /// Steps that stopped at the iteration limit without reaching the
    /// tolerance.
    pub steps_not_converged: u64,
    /// Contacts × iterations summed over all steps: the work of the solves.
    /// Divided by the wall time it is the all-in rate (collision, assembly
    /// and outputs included) that `repose run` prints.
    #[serde(default)]
    pub contact_iterations: u64,
    /// Steps on which the fallback method ran (`solver.fallback`: the
    /// first method stopped unconverged); whether they then met the
    /// tolerance is counted in `steps_not_converged`.
    #[serde(default)]
    pub steps_fallback: u64,
    /// The fallback's iterations summed over those steps (Newton steps for
    /// the interior point).
    #[serde(default)]
    pub fallback_iterations_total: u64,
    /// Wall-clock seconds the fallback took, summed over those steps: what
    /// it cost beside the whole run's `wall_time_s`.
    #[serde(default)]
    pub fallback_seconds_total: f64,
}

impl Default for SolverStats {
    fn default() -> Self {
        SolverStats {
            steps: 0,
            iterations_total: 0,
            iterations_mean: 0.0,
            residual_abs_final: f64::NAN,
            residual_rel_final: f64::NAN,
            residual_rel_max: f64::NAN,
            steps_not_converged: 0,
            contact_iterations: 0,
            steps_fallback: 0,
            fallback_iterations_total: 0,
            fallback_seconds_total: 0.0,
        }
    }
}

impl SolverStats {
    /// Records one step's solve: its iteration count, its final absolute and
    /// relative residuals, and whether it met the tolerance.
    pub fn record(
        &mut self,
        iterations: usize,
        residual_abs: f64,
        residual_rel: f64,
        converged: bool,
    ) {
        self.residual_rel_max = if self.steps == 0 {
            residual_rel
        } else if residual_rel.is_nan() || residual_rel > self.residual_rel_max {
            // NaN propagates: once a residual was NaN the maximum stays NaN.
            if self.residual_rel_max.is_nan() {
                f64::NAN
            } else {
                residual_rel
            }
        } else {
            self.residual_rel_max
        };
        self.steps += 1;
        self.iterations_total += iterations as u64;
        self.iterations_mean = self.iterations_total as f64 / self.steps as f64;
        self.residual_abs_final = residual_abs;
        self.residual_rel_final = residual_rel;
        if !converged {
            self.steps_not_converged += 1;
        }
    }

    /// Counts a step on which the fallback method ran `iterations` in
    /// `seconds`.
    pub fn record_fallback(&mut self, iterations: usize, seconds: f64) {
        self.steps_fallback += 1;
        self.fallback_iterations_total += iterations as u64;
        self.fallback_seconds_total += seconds;
    }

    /// Adds one step's contacts × iterations to [`SolverStats::contact_iterations`].
    pub fn record_work(&mut self, contacts: usize, iterations: usize) {
        self.contact_iterations += contacts as u64 * iterations as u64;
    }
}

/// Writes `value` (typically a [`Summary`]) as pretty-printed JSON with a
/// final newline, atomically. Errors name the file.
pub fn write_json<T: Serialize + ?Sized>(path: impl AsRef<Path>, value: &T) -> io::Result<()> {
    write_atomic(path.as_ref(), |w| {
        serde_json::to_writer_pretty(&mut *w, value).map_err(io::Error::from)?;
        writeln!(w)
    })
}

/// Reads a `summary.json` back. Unknown fields are ignored (files from
/// newer versions stay readable); `extra` may be absent.
pub fn read_summary(path: impl AsRef<Path>) -> Result<Summary, ReadError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|err| ReadError::Io {
        path: path.to_owned(),
        err,
    })?;
    serde_json::from_str(&text).map_err(|e| ReadError::Format {
        path: path.to_owned(),
        line: e.line(),
        reason: e.to_string(),
    })
}
