//! The files of a calibration: `calibrate.csv` (every evaluation of every
//! scene), `calibrate.json` (the estimate, its interval, the status and
//! what was run) and `calibrate.png` (angle against the parameter with the
//! target and the interval; for two parameters, the search's path in the
//! parameter plane).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use super::*;
use crate::output::write_atomic;
use crate::render::plot::SeriesPoint;
use crate::render::{fmt_num, plot_lines, write_png, PlotOptions, Series};
use crate::scene::Scene;

/// Columns of `calibrate.csv` before the parameter paths.
pub const CALIBRATE_LEADING_COLUMNS: [&str; 3] = ["eval", "round", "scene"];

/// Columns of `calibrate.csv` after the parameter paths (one column per
/// parameter, headed by its path, sits between `scene` and `seeds`).
pub const CALIBRATE_CSV_COLUMNS: [&str; 8] = [
    "seeds",
    "runs_measured",
    "target_deg",
    "mean_deg",
    "sd_deg",
    "stderr_deg",
    "miss_deg",
    "dir",
];

/// `calibrate.json`.
#[derive(Clone, Debug, Serialize)]
pub struct CalibrateJson {
    /// How the search ended ([`Status`]).
    pub status: Status,
    /// What it means.
    pub message: String,
    /// The search method (module docs of [`crate::calibrate`]).
    pub method: String,
    /// Tolerance on the angle (°).
    pub tol_deg: f64,
    /// Seeds per point and scene.
    pub seeds: u64,
    /// The evaluation budget.
    pub max_evals: usize,
    /// The overrides every run took (`--set`, `--solver`, `--fallback`),
    /// as (path, value).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<(String, String)>,
    /// The scenes and their targets.
    pub scenes: Vec<JsonScene>,
    /// The parameters with their estimates and intervals.
    pub params: Vec<JsonParam>,
    /// The evaluation that came closest to the targets.
    pub nearest: JsonNearest,
    /// Points run.
    pub evaluations: usize,
    /// Simulation runs made or reused.
    pub runs: usize,
    /// Wall time of the calibration (s).
    pub wall_time_s: f64,
    /// The version of repose that wrote it.
    pub repose_version: String,
}

/// A scene of `calibrate.json`.
#[derive(Clone, Debug, Serialize)]
pub struct JsonScene {
    /// The scene file as given.
    pub file: String,
    /// Its name.
    pub name: String,
    /// Its target angle (°).
    pub target_deg: f64,
    /// What is measured: `angle_of_repose` or `dynamic_angle`.
    pub measures: String,
}

/// A parameter of `calibrate.json`.
#[derive(Clone, Debug, Serialize)]
pub struct JsonParam {
    /// The scene path(s).
    pub path: String,
    /// The range searched.
    pub range: [f64; 2],
    /// The estimate (for `out_of_reach`: the closest point run).
    pub estimate: f64,
    /// Its interval, `null` for `out_of_reach` and `ambiguous`.
    pub interval: Option<[f64; 2]>,
}

/// The closest evaluation of `calibrate.json`.
#[derive(Clone, Debug, Serialize)]
pub struct JsonNearest {
    /// Its index (the `eval` column of `calibrate.csv`).
    pub eval: usize,
    /// Its parameter values.
    pub x: Vec<f64>,
    /// The mean angle of each scene (°).
    pub angles_deg: Vec<f64>,
    /// Their standard errors (°).
    pub stderr_deg: Vec<f64>,
}

/// The search method's name for `calibrate.json`.
pub fn method_name(n_params: usize) -> &'static str {
    if n_params == 1 {
        "bracket, then false position with the Illinois rule"
    } else {
        "local linear least-squares surrogate, Newton steps"
    }
}

/// Writes the three files; returns their paths (the PNG only when it
/// could be drawn: a failure there is a warning).
pub fn write_calibration(
    dir: &Path,
    spec: &CalibrateSpec,
    scenes: &[Scene],
    report: &CalibrateReport,
) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let csv_path = dir.join("calibrate.csv");
    write_calibrate_csv(&csv_path, spec, scenes, &report.records, &report.outcome)?;
    files.push(csv_path);

    let o = &report.outcome;
    let near = &o.evaluations[o.nearest];
    let json = CalibrateJson {
        status: o.status,
        message: o.message.clone(),
        method: method_name(spec.params.len()).to_string(),
        tol_deg: spec.settings.tol,
        seeds: spec.seeds,
        max_evals: spec.settings.max_evals,
        set: spec.set.clone(),
        scenes: spec
            .scenes
            .iter()
            .zip(scenes)
            .zip(&spec.targets)
            .map(|((f, s), t)| JsonScene {
                file: f.display().to_string(),
                name: s.name.clone(),
                target_deg: *t,
                measures: if s.analysis.heap.is_some() {
                    "angle_of_repose".into()
                } else {
                    "dynamic_angle".into()
                },
            })
            .collect(),
        params: spec
            .params
            .iter()
            .enumerate()
            .map(|(k, p)| JsonParam {
                path: p.path.clone(),
                range: [p.lo, p.hi],
                estimate: o.estimate[k],
                interval: o.interval.get(k).copied(),
            })
            .collect(),
        nearest: JsonNearest {
            eval: near.index,
            x: near.x.clone(),
            angles_deg: near.obs.iter().map(|b| b.mean).collect(),
            stderr_deg: near.obs.iter().map(|b| b.stderr).collect(),
        },
        evaluations: o.evaluations.len(),
        runs: report.runs,
        wall_time_s: report.wall_time_s,
        repose_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let json_path = dir.join("calibrate.json");
    let text = serde_json::to_string_pretty(&json)?;
    write_atomic(&json_path, |w| {
        w.write_all(text.as_bytes()).and_then(|_| writeln!(w))
    })
    .with_context(|| format!("cannot write {}", json_path.display()))?;
    files.push(json_path);

    let png_path = dir.join("calibrate.png");
    match calibrate_plot(spec, scenes, o)
        .and_then(|img| write_png(&png_path, &img).map_err(anyhow::Error::new))
    {
        Ok(()) => files.push(png_path),
        Err(e) => log::warn!(target: "repose::calibrate", "no {}: {e:#}", png_path.display()),
    }
    Ok(files)
}

/// Writes `calibrate.csv`: one row per evaluation and scene; the standard
/// error is the search's (the seeds' scatter pooled over all points, as
/// the interval uses), not the point's own.
pub fn write_calibrate_csv(
    path: &Path,
    spec: &CalibrateSpec,
    scenes: &[Scene],
    records: &[PointRecord],
    outcome: &Outcome,
) -> Result<()> {
    let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    write_atomic(path, |w| {
        let mut out = crate::sweep::csv_writer(w);
        let header: Vec<String> = CALIBRATE_LEADING_COLUMNS
            .iter()
            .map(|s| s.to_string())
            .chain(spec.params.iter().map(|p| p.path.clone()))
            .chain(CALIBRATE_CSV_COLUMNS.iter().map(|s| s.to_string()))
            .collect();
        out.write_record(&header)?;
        for r in records {
            let mut rec = vec![
                r.eval.to_string(),
                r.round.to_string(),
                scenes[r.scene].name.clone(),
            ];
            rec.extend(r.x.iter().map(|v| format!("{v}")));
            let target = spec.targets[r.scene];
            rec.extend([
                spec.seeds.to_string(),
                r.obs.runs.to_string(),
                format!("{target}"),
                format!("{}", r.obs.mean),
                opt(r.obs.sd),
                format!(
                    "{}",
                    outcome
                        .evaluations
                        .get(r.eval)
                        .map_or(r.obs.stderr, |e| e.obs[r.scene].stderr)
                ),
                format!("{}", r.obs.mean - target),
                r.dirs
                    .first()
                    .and_then(|d| d.rsplit_once('/').map(|(a, _)| a.to_string()))
                    .unwrap_or_default(),
            ]);
            out.write_record(&rec)?;
        }
        out.flush()
    })
    .with_context(|| format!("cannot write {}", path.display()))
}

/// `calibrate.png`: for one parameter, each scene's mean angle (± its sd
/// over seeds, or the flank fit's error for one seed) against the value,
/// the target line, the estimate and its interval; for two or more, the
/// search's path in the plane of the first two parameters with the
/// estimate's interval as a cross.
pub fn calibrate_plot(
    spec: &CalibrateSpec,
    scenes: &[Scene],
    o: &Outcome,
) -> Result<crate::render::Image> {
    let p0 = &spec.params[0];
    let status = o.status.as_str().replace('_', " ");
    if spec.params.len() == 1 {
        let t = spec.targets[0];
        let mut ev: Vec<&Evaluation> = o.evaluations.iter().collect();
        ev.sort_by(|a, b| a.x[0].total_cmp(&b.x[0]));
        let pts: Vec<SeriesPoint> = ev
            .iter()
            .map(|e| SeriesPoint {
                x: e.x[0],
                y: e.obs[0].mean,
                err: Some(e.obs[0].sd.unwrap_or(e.obs[0].stderr)),
            })
            .collect();
        let (mut ylo, mut yhi) = pts.iter().fold((t, t), |(a, b), p| {
            let e = p.err.unwrap_or(0.0);
            (a.min(p.y - e), b.max(p.y + e))
        });
        let pad = 0.05 * (yhi - ylo).max(1.0);
        ylo -= pad;
        yhi += pad;
        let vline = |label: &str, x: f64| Series::new(label, &[(x, ylo), (x, yhi)]);
        let mut series = vec![
            Series {
                label: format!(
                    "mean ± {}, {} seed{}",
                    if spec.seeds >= 2 { "sd" } else { "fit err." },
                    spec.seeds,
                    if spec.seeds == 1 { "" } else { "s" }
                ),
                points: pts,
                style: crate::render::plot::SeriesStyle::Line,
            },
            Series::new(format!("target {}°", fmt_num(t)), &[(p0.lo, t), (p0.hi, t)]),
        ];
        if let Some(iv) = o.interval.first() {
            series.push(vline(
                &format!("estimate {}", fmt_num(o.estimate[0])),
                o.estimate[0],
            ));
            series.push(Series::new(
                "interval",
                &[(iv[0], ylo), (iv[0], yhi), (iv[1], yhi), (iv[1], ylo)],
            ));
        }
        let img = plot_lines(
            &series,
            &PlotOptions {
                title: format!("{} to {}°: {status}", scenes[0].name, fmt_num(t)),
                x_label: p0.path.clone(),
                y_label: "angle (°)".into(),
                ..PlotOptions::default()
            },
        )?;
        return Ok(img);
    }
    let p1 = &spec.params[1];
    let path: Vec<(f64, f64)> = o.evaluations.iter().map(|e| (e.x[0], e.x[1])).collect();
    let mut series = vec![Series::new("points run, in order", &path)];
    if o.interval.len() >= 2 {
        let (x, y) = (o.estimate[0], o.estimate[1]);
        let (ix, iy) = (o.interval[0], o.interval[1]);
        series.push(Series::new(
            "estimate, interval",
            &[(ix[0], y), (ix[1], y), (x, y), (x, iy[0]), (x, iy[1])],
        ));
    }
    // The ranges' corners, so the plot shows the whole box searched.
    series.push(Series::new(
        "ranges searched",
        &[
            (p0.lo, p1.lo),
            (p0.hi, p1.lo),
            (p0.hi, p1.hi),
            (p0.lo, p1.hi),
            (p0.lo, p1.lo),
        ],
    ));
    let targets = scenes
        .iter()
        .zip(&spec.targets)
        .map(|(s, t)| format!("{} {}°", s.name, fmt_num(*t)))
        .collect::<Vec<_>>()
        .join(", ");
    let img = plot_lines(
        &series,
        &PlotOptions {
            title: format!("calibration to {targets}: {status}"),
            x_label: p0.path.clone(),
            y_label: p1.path.clone(),
            ..PlotOptions::default()
        },
    )?;
    Ok(img)
}
