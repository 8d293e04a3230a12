//! The sweep's pictures: metric vs the first varied parameter (mean ± sd
//! over seeds, one series per other grid value) and the contact sheet.

use super::*;

/// Mean and sample standard deviation of `xs` (sd 0 for one value);
/// `None` for none.
pub fn mean_sd(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sd = if xs.len() > 1 {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    Some((mean, sd))
}

/// The series of `sweep.png`: the angle against the first varied
/// parameter, mean ± standard deviation over the runs with an angle at each
/// value (the seeds), one series per combination of the other varied
/// parameters (legend `name = value`, name the last segment of the path). Values of the first parameter that
/// are not numbers are plotted at their position in the list (0, 1, …).
/// Without varied parameters, one point at x = 0.
pub fn sweep_series(spec: &SweepSpec, rows: &[SweepRow]) -> Vec<Series> {
    sweep_series_of(spec, rows, &SweepMetric::Angle)
}

/// What a sweep plot shows on its y axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepMetric {
    /// The angle of repose (°): `sweep.png`.
    Angle,
    /// The height over the mean diameter (seed 001 Fig. 5a): `sweep_height.png`.
    HeightOverDiameter,
    /// The bottom's mean radius over the mean diameter (seed 001 Fig. 5b):
    /// `sweep_mean_radius.png`.
    MeanRadiusOverDiameter,
}

impl SweepMetric {
    /// Every metric, in the order the plots are written.
    pub const ALL: [SweepMetric; 3] = [
        SweepMetric::Angle,
        SweepMetric::HeightOverDiameter,
        SweepMetric::MeanRadiusOverDiameter,
    ];

    /// The metric's value in a row.
    pub fn of(self, r: &SweepRow) -> Option<f64> {
        match self {
            SweepMetric::Angle => r.angle_deg,
            SweepMetric::HeightOverDiameter => r.height_over_diameter,
            SweepMetric::MeanRadiusOverDiameter => r.bottom_mean_radius_over_diameter,
        }
    }

    /// The plot's file name.
    pub fn file_name(self) -> &'static str {
        match self {
            SweepMetric::Angle => "sweep.png",
            SweepMetric::HeightOverDiameter => "sweep_height.png",
            SweepMetric::MeanRadiusOverDiameter => "sweep_mean_radius.png",
        }
    }

    /// The y-axis label (and the title's subject).
    pub fn label(self) -> &'static str {
        match self {
            SweepMetric::Angle => "angle of repose (°)",
            SweepMetric::HeightOverDiameter => "pile height / mean diameter",
            SweepMetric::MeanRadiusOverDiameter => "mean radius of the bottom / mean diameter",
        }
    }
}

/// Whether the first varied parameter is drawn on a log₁₀ axis: all its
/// values are numbers > 0 spanning at least two decades (seed 001's
/// 1e-5 … 1 rolling coefficients).
pub fn sweep_log_x(spec: &SweepSpec) -> bool {
    let Some(v) = spec.vary.first() else {
        return false;
    };
    let xs: Option<Vec<f64>> = v.values.iter().map(|x| x.parse::<f64>().ok()).collect();
    match xs {
        Some(xs) if !xs.is_empty() && xs.iter().all(|x| *x > 0.0 && x.is_finite()) => {
            let (lo, hi) = xs
                .iter()
                .fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(*x), b.max(*x)));
            hi / lo >= 100.0
        }
        _ => false,
    }
}

/// [`sweep_series`] for any [`SweepMetric`]; x is log₁₀ of the value when
/// [`sweep_log_x`].
pub fn sweep_series_of(spec: &SweepSpec, rows: &[SweepRow], metric: &SweepMetric) -> Vec<Series> {
    let log_x = sweep_log_x(spec);
    let first: Vec<String> = spec
        .vary
        .first()
        .map(|v| v.values.clone())
        .unwrap_or_else(|| vec![String::new()]);
    let numeric = first.iter().all(|v| v.parse::<f64>().is_ok());
    let x_of = |k: usize| {
        if numeric {
            let x = first[k].parse::<f64>().unwrap_or(f64::NAN);
            if log_x {
                x.log10()
            } else {
                x
            }
        } else {
            k as f64
        }
    };
    // Group: rest-values → first-value index → angles.
    let mut groups: BTreeMap<Vec<usize>, BTreeMap<usize, Vec<f64>>> = BTreeMap::new();
    let index_of = |k: usize, value: &str| {
        spec.vary[k]
            .values
            .iter()
            .position(|v| v == value)
            .unwrap_or(usize::MAX)
    };
    // Every combination gets a series, even one without angles (a gap).
    for p in spec.points() {
        let rest: Vec<usize> = (1..spec.vary.len())
            .map(|k| index_of(k, &p.values[k]))
            .collect();
        let x = if spec.vary.is_empty() {
            0
        } else {
            index_of(0, &p.values[0])
        };
        groups.entry(rest).or_default().entry(x).or_default();
    }
    for r in rows {
        if r.values.len() != spec.vary.len() {
            continue;
        }
        let rest: Vec<usize> = (1..spec.vary.len())
            .map(|k| index_of(k, &r.values[k]))
            .collect();
        let x = if spec.vary.is_empty() {
            0
        } else {
            index_of(0, &r.values[0])
        };
        // A failed run has no numbers; a run whose heap had no slope to fit
        // (a single layer) still has its pile size.
        if let Some(a) = metric.of(r).filter(|a| a.is_finite()) {
            groups
                .entry(rest)
                .or_default()
                .entry(x)
                .or_default()
                .push(a);
        }
    }
    groups
        .into_iter()
        .map(|(rest, points)| {
            let label = rest
                .iter()
                .enumerate()
                .map(|(j, &i)| {
                    let v = &spec.vary[j + 1];
                    // The last segment of each linked path: the legend has
                    // room for "friction = 0.3", not for the full path.
                    let short: Vec<&str> = v
                        .path
                        .split('+')
                        .map(|p| p.rsplit('.').next().unwrap_or(p))
                        .collect();
                    format!(
                        "{} = {}",
                        short.join("+"),
                        v.values.get(i).map_or("?", |s| s)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let pts: Vec<(f64, f64, f64)> = points
                .into_iter()
                .map(|(x, angles)| {
                    let (m, sd) = mean_sd(&angles).unwrap_or((f64::NAN, f64::NAN));
                    (x_of(x), m, sd)
                })
                .collect();
            Series::with_errors(label, &pts)
        })
        .collect()
}

/// `sweep.png`: [`sweep_series`] drawn with [`plot_lines`], titled with the
/// scene name.
pub fn sweep_plot(spec: &SweepSpec, scene_name: &str, rows: &[SweepRow]) -> Result<Image> {
    sweep_plot_of(spec, scene_name, rows, SweepMetric::Angle)
}

/// The plot of one [`SweepMetric`] (`sweep.png` for the angle).
pub fn sweep_plot_of(
    spec: &SweepSpec,
    scene_name: &str,
    rows: &[SweepRow],
    metric: SweepMetric,
) -> Result<Image> {
    sweep_plot_with(spec, scene_name, rows, metric, None)
}

/// [`sweep_plot_of`] with `reference` curves drawn over the sweep's.
pub fn sweep_plot_with(
    spec: &SweepSpec,
    scene_name: &str,
    rows: &[SweepRow],
    metric: SweepMetric,
    reference: Option<&Reference>,
) -> Result<Image> {
    let x_label = match spec.vary.first() {
        Some(v) if sweep_log_x(spec) => format!("{} (log scale)", v.path),
        Some(v) if v.values.iter().all(|x| x.parse::<f64>().is_ok()) => v.path.clone(),
        Some(v) => format!("{} (position in the list)", v.path),
        None => "(nothing varied)".to_string(),
    };
    let opts = PlotOptions {
        title: format!(
            "{scene_name}: {}, mean ± sd over {} seed{}",
            metric.label(),
            spec.seeds,
            if spec.seeds == 1 { "" } else { "s" }
        ),
        x_label,
        y_label: metric.label().to_string(),
        log_x: sweep_log_x(spec),
        ..PlotOptions::default()
    };
    let mut series = sweep_series_of(spec, rows, &metric);
    if let Some(r) = reference {
        series.extend(r.series(metric, opts.log_x));
    }
    Ok(plot_lines(&series, &opts)?)
}

/// A compact caption for a thumbnail: `name=value … s<seed>`, each path
/// shortened to its last segment unless two paths share it.
fn short_caption(spec: &SweepSpec, p: &RunPoint) -> String {
    let last = |path: &str| {
        path.rsplit(['.', '[', ']'])
            .find(|s| !s.is_empty())
            .unwrap_or(path)
            .to_string()
    };
    let shorts: Vec<String> = spec.vary.iter().map(|v| last(&v.path)).collect();
    let unique = shorts.iter().collect::<BTreeSet<_>>().len() == shorts.len();
    let mut parts: Vec<String> = spec
        .vary
        .iter()
        .zip(&shorts)
        .zip(&p.values)
        .map(|((v, short), value)| format!("{}={value}", if unique { short } else { &v.path }))
        .collect();
    parts.push(format!("s{}", p.seed));
    parts.join(" ")
}

/// `contact_sheet.png`: every run's `final.png` (found through the
/// manifest's `run_dirs`, relative to `dir`) with a caption of its index,
/// values (paths shortened to their last segment) and seed; a missing or unreadable picture is a grey tile whose caption
/// says so. ⌈√n⌉ columns.
pub fn sweep_contact_sheet(dir: &Path, manifest: &Manifest, rows: &[SweepRow]) -> Result<Image> {
    let mut items = Vec::with_capacity(rows.len());
    for r in rows {
        let p = RunPoint {
            index: r.run,
            values: r.values.clone(),
            seed: r.seed,
        };
        let mut caption = format!("#{} {}", r.run, short_caption(&manifest.spec, &p));
        let pic = manifest
            .run_dirs
            .get(&r.run)
            .map(|d| dir.join(d).join("final.png"));
        let img = match pic.as_ref().map(read_png) {
            Some(Ok(img)) => img,
            _ => {
                caption.push_str(" (no picture)");
                Image::new(400, 200, Rgb::LIGHT_GREY)?
            }
        };
        items.push((img, caption));
    }
    let cols = (items.len() as f64).sqrt().ceil().max(1.0) as usize;
    Ok(contact_sheet(&items, cols)?)
}
