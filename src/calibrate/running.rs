//! Running a calibration on scenes: every point is K seeds of every scene,
//! run through the sweep machinery ([`crate::sweep::run_jobs`]: jobs,
//! seeds, reused and resumed runs), each in a directory named by its
//! values, so a calibration run again into the same directory reuses every
//! run it has already made, whatever path the search takes.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::*;
use crate::run::BackendChoice;
use crate::scene::Scene;
use crate::sweep::{
    apply_seed, has_seeded_source, run_jobs, safe_name, RunJob, RunPoint, SweepOptions, SweepRow,
};

/// What to calibrate: the scenes and their targets, the parameters, the
/// seeds and the search settings.
#[derive(Clone, Debug)]
pub struct CalibrateSpec {
    /// One scene file per target.
    pub scenes: Vec<PathBuf>,
    /// The target angle of each scene (°).
    pub targets: Vec<f64>,
    /// The parameters (as many as targets).
    pub params: Vec<Param>,
    /// Seeds per point and scene (≥ 1).
    pub seeds: u64,
    /// Tolerance and budget.
    pub settings: Settings,
    /// Overrides every run of every scene takes, before the parameters'
    /// values (`--set`, `--solver`, `--fallback`), as (path, value); none
    /// of their paths is a calibrated one.
    pub set: Vec<(String, String)>,
}

/// How to run a calibration.
#[derive(Clone, Debug)]
pub struct CalibrateOptions {
    /// The calibration directory.
    pub out_dir: PathBuf,
    /// Runs at once.
    pub jobs: usize,
    /// Solver backend of every run.
    pub backend: BackendChoice,
    /// Draw the progress bar of each round's runs.
    pub progress: bool,
    /// Run every run again, even those an earlier calibration finished.
    pub rerun: bool,
}

/// One scene's runs at one point, for `calibrate.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct PointRecord {
    /// The evaluation's index.
    pub eval: usize,
    /// Its round.
    pub round: usize,
    /// Which scene (index into the spec's scenes).
    pub scene: usize,
    /// The parameter values.
    pub x: Vec<f64>,
    /// Runs made (seeds).
    pub runs: usize,
    /// The observation (`None` never reaches a record: such a point stops
    /// the calibration).
    pub obs: Observation,
    /// The runs' directories, relative to the calibration directory.
    pub dirs: Vec<String>,
}

/// What a calibration produced.
#[derive(Clone, Debug)]
pub struct CalibrateReport {
    /// The search's result.
    pub outcome: Outcome,
    /// One record per evaluation and scene, in order.
    pub records: Vec<PointRecord>,
    /// Runs made or reused.
    pub runs: usize,
    /// Wall time (s).
    pub wall_time_s: f64,
    /// The files written.
    pub files: Vec<PathBuf>,
}

/// The scenes loaded and checked for a calibration: every parameter path
/// set at both ends of its range in every scene (and every seed's scene at
/// the ends) validates, and every scene measures an angle. Errors name the
/// file, the field and the reason before anything runs.
pub fn prepare_calibration(spec: &CalibrateSpec) -> Result<Vec<Scene>> {
    if spec.scenes.len() != spec.targets.len() {
        bail!(
            "one --target-angle per scene is needed (got {}, {})",
            count(spec.scenes.len(), "scene"),
            count(spec.targets.len(), "target")
        );
    }
    if spec.params.len() != spec.targets.len() {
        bail!(
            "as many --param as target angles are needed: {} for {} (one target cannot fix two parameters; add a scene that responds to the other, e.g. a drum)",
            count(spec.params.len(), "parameter"),
            count(spec.targets.len(), "target")
        );
    }
    if spec.seeds == 0 {
        bail!("--seeds must be at least 1 (got 0)");
    }
    for (path, _) in &spec.set {
        let path_c = crate::scene::canonical_path(path);
        if spec
            .params
            .iter()
            .any(|p| p.paths().any(|q| crate::scene::canonical_path(q) == path_c))
        {
            bail!("--set {path}: this path is calibrated (--param); give it one or the other");
        }
    }
    let mut scenes = Vec::new();
    for file in &spec.scenes {
        let scene = Scene::load(file, &spec.set)?;
        if scene.analysis.heap.is_none() && scene.analysis.drum.is_none() {
            bail!(
                "{}: analysis: the scene measures no angle (add analysis.heap for an angle of repose, or analysis.drum for a drum's dynamic angle)",
                file.display()
            );
        }
        for corner in [false, true] {
            let overrides: Vec<(String, String)> = spec
                .params
                .iter()
                .flat_map(|p| {
                    let v = if corner { p.hi } else { p.lo };
                    p.paths().map(move |q| (q.to_string(), format!("{v}")))
                })
                .collect();
            let s = scene.with_overrides(&overrides).with_context(|| {
                format!(
                    "{}: the parameters at the {} end of their ranges",
                    file.display(),
                    if corner { "high" } else { "low" }
                )
            })?;
            for k in 1..spec.seeds {
                apply_seed(&s, k)
                    .validate()
                    .with_context(|| format!("{}: seed offset {k}", file.display()))?;
            }
        }
        if spec.seeds > 1 && !has_seeded_source(&scene) {
            log::warn!(target: "repose::calibrate",
                "--seeds {}: {} has no seeded sphere source, so every seed gives the same run",
                spec.seeds,
                file.display()
            );
        }
        scenes.push(scene);
    }
    Ok(scenes)
}

/// `n word` or `n words`.
fn count(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// The [`Evaluator`] that runs scenes.
pub struct SimEvaluator<'a> {
    spec: &'a CalibrateSpec,
    scenes: &'a [Scene],
    opts: &'a CalibrateOptions,
    /// What each point's runs gave, in order.
    pub records: Vec<PointRecord>,
    /// Runs made or reused so far.
    pub runs: usize,
    next_eval: usize,
}

impl<'a> SimEvaluator<'a> {
    /// An evaluator for prepared `scenes` ([`prepare_calibration`]).
    pub fn new(spec: &'a CalibrateSpec, scenes: &'a [Scene], opts: &'a CalibrateOptions) -> Self {
        SimEvaluator {
            spec,
            scenes,
            opts,
            records: Vec::new(),
            runs: 0,
            next_eval: 0,
        }
    }

    /// The directory of scene `j`'s runs at `x`, relative to the
    /// calibration directory: `runs/<j>_<scene name>/<path>=<value>_…`.
    fn point_dir(&self, j: usize, x: &[f64]) -> String {
        let mut name = String::new();
        for (k, (p, v)) in self.spec.params.iter().zip(x).enumerate() {
            if k > 0 {
                name.push('_');
            }
            name.push_str(&safe_name(&p.path));
            name.push('=');
            name.push_str(&safe_name(&format!("{v}")));
        }
        format!("runs/{j}_{}/{name}", safe_name(&self.scenes[j].name))
    }
}

impl Evaluator for SimEvaluator<'_> {
    fn evaluate(&mut self, round: usize, points: &[Vec<f64>]) -> Result<Vec<Vec<Observation>>> {
        let k = self.spec.seeds as usize;
        let n_scenes = self.scenes.len();
        // Every (point, scene, seed) of the round, in that order.
        let mut prepared: Vec<(RunPoint, Scene, PathBuf, String)> = Vec::new();
        for (i, x) in points.iter().enumerate() {
            let values: Vec<String> = x.iter().map(|v| format!("{v}")).collect();
            let overrides: Vec<(String, String)> = self
                .spec
                .params
                .iter()
                .zip(&values)
                .flat_map(|(p, v)| p.paths().map(move |q| (q.to_string(), v.clone())))
                .collect();
            let caption_x = self
                .spec
                .params
                .iter()
                .zip(&values)
                .map(|(p, v)| format!("{} = {v}", p.path))
                .collect::<Vec<_>>()
                .join(", ");
            for (j, base) in self.scenes.iter().enumerate() {
                let scene = base
                    .with_overrides(&overrides)
                    .with_context(|| format!("{}: {caption_x}", self.spec.scenes[j].display()))?;
                let dir = self.opts.out_dir.join(self.point_dir(j, x));
                for s in 0..k {
                    let scene = apply_seed(&scene, s as u64);
                    if s > 0 {
                        scene.validate().with_context(|| {
                            format!("{}: {caption_x}, seed {s}", self.spec.scenes[j].display())
                        })?;
                    }
                    let index = (i * n_scenes + j) * k + s;
                    let point = RunPoint {
                        index,
                        values: values.clone(),
                        seed: s as u64,
                    };
                    let caption = format!("{}: {caption_x}, seed {s}", scene.name);
                    prepared.push((point, scene, dir.join(format!("seed{s}")), caption));
                }
            }
        }
        let list: Vec<RunJob<'_>> = prepared
            .iter()
            .map(|(p, scene, dir, caption)| RunJob {
                point: p,
                scene,
                dir: dir.clone(),
                caption: caption.clone(),
            })
            .collect();
        log::info!(target: "repose::calibrate",
            "round {round}: {} point{} × {n_scenes} scene{} × {k} seed{} = {} runs, {} at a time",
            points.len(),
            if points.len() == 1 { "" } else { "s" },
            if n_scenes == 1 { "" } else { "s" },
            if k == 1 { "" } else { "s" },
            list.len(),
            self.opts.jobs.min(list.len()).max(1)
        );
        let sweep_opts = SweepOptions {
            out_dir: self.opts.out_dir.clone(),
            jobs: self.opts.jobs,
            shard: crate::sweep::Shard::ALL,
            frames: false,
            backend: self.opts.backend,
            progress: self.opts.progress,
            rerun: self.opts.rerun,
            reference: None,
            batch: None,
        };
        let rows = run_jobs(&list, &sweep_opts);
        if rows.len() < list.len() || crate::interrupt::requested() {
            bail!(
                "interrupted: {} of the round's {} runs finished; run the same command again to continue (finished runs are reused)",
                rows.len(),
                list.len()
            );
        }
        self.runs += rows.len();
        let mut out = Vec::with_capacity(points.len());
        for (i, x) in points.iter().enumerate() {
            let mut obs_i = Vec::with_capacity(n_scenes);
            for j in 0..n_scenes {
                let first = (i * n_scenes + j) * k;
                let mine: Vec<&SweepRow> = rows
                    .iter()
                    .filter(|r| (first..first + k).contains(&r.run))
                    .collect();
                let good: Vec<&&SweepRow> = mine
                    .iter()
                    .filter(|r| !r.run_failed() && r.angle_deg.is_some())
                    .collect();
                let angles: Vec<f64> = good.iter().filter_map(|r| r.angle_deg).collect();
                let fits: Vec<f64> = good.iter().filter_map(|r| r.angle_stderr_deg).collect();
                let rel = self.point_dir(j, x);
                let Some(o) = Observation::of_runs(&angles, &fits) else {
                    let why = mine
                        .iter()
                        .map(|r| {
                            format!(
                                "seed {}: {}",
                                r.seed,
                                if r.error.is_empty() {
                                    "no angle"
                                } else {
                                    &r.error
                                }
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("; ");
                    bail!(
                        "{} measured no angle at {} ({}): {why}",
                        self.spec.scenes[j].display(),
                        self.spec
                            .params
                            .iter()
                            .zip(x)
                            .map(|(p, v)| format!("{} = {v}", p.path))
                            .collect::<Vec<_>>()
                            .join(", "),
                        self.opts.out_dir.join(&rel).display()
                    );
                };
                if o.runs < k {
                    log::warn!(target: "repose::calibrate",
                        "{} at {rel}: {} of {k} runs measured an angle; the mean is of those",
                        self.spec.scenes[j].display(),
                        o.runs
                    );
                }
                self.records.push(PointRecord {
                    eval: self.next_eval + i,
                    round,
                    scene: j,
                    x: x.clone(),
                    runs: mine.len(),
                    obs: o.clone(),
                    dirs: (0..k).map(|s| format!("{rel}/seed{s}")).collect(),
                });
                log::info!(target: "repose::calibrate",
                    "evaluation {}: {} → {:.2}° ± {:.2}° ({} run{}; target {:.2}°)",
                    self.next_eval + i,
                    rel,
                    o.mean,
                    o.stderr,
                    o.runs,
                    if o.runs == 1 { "" } else { "s" },
                    self.spec.targets[j]
                );
                obs_i.push(o);
            }
            out.push(obs_i);
        }
        self.next_eval += points.len();
        Ok(out)
    }
}

/// Runs a whole calibration: checks the scenes, searches, and writes
/// `calibrate.csv`, `calibrate.json` and `calibrate.png` into
/// `opts.out_dir`.
pub fn run_calibration(spec: &CalibrateSpec, opts: &CalibrateOptions) -> Result<CalibrateReport> {
    crate::interrupt::install();
    if opts.jobs == 0 {
        bail!("--jobs must be at least 1 (got 0)");
    }
    let scenes = prepare_calibration(spec)?;
    std::fs::create_dir_all(&opts.out_dir)
        .with_context(|| format!("cannot create {}", opts.out_dir.display()))?;
    let t0 = Instant::now();
    let mut settings = spec.settings.clone();
    // A second point per round when the jobs leave room for its runs.
    let per_point = spec.seeds as usize * scenes.len();
    settings.per_round = if opts.jobs >= 2 * per_point { 2 } else { 1 };
    let mut ev = SimEvaluator::new(spec, &scenes, opts);
    let outcome = calibrate(&spec.params, &spec.targets, &settings, &mut ev)?;
    let mut report = CalibrateReport {
        outcome,
        records: ev.records,
        runs: ev.runs,
        wall_time_s: t0.elapsed().as_secs_f64(),
        files: Vec::new(),
    };
    report.files = write_calibration(&opts.out_dir, spec, &scenes, &report)?;
    Ok(report)
}

/// The default calibration directory: `out/<first scene's name>_calibrate/`.
pub fn default_calibrate_dir(scene_name: &str) -> PathBuf {
    Path::new("out").join(format!("{scene_name}_calibrate"))
}
