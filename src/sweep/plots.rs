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
    /// The height over the mean diameter (Acary & Bourrier 2021, Fig. 5a):
    /// `sweep_height.png`.
    HeightOverDiameter,
    /// The bottom's mean radius over the mean diameter
    /// (Acary & Bourrier 2021, Fig. 5b): `sweep_mean_radius.png`.
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
/// values are numbers > 0 spanning at least two decades (the 1e-5 … 1
/// rolling coefficients of Acary & Bourrier 2021).
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

/// The runs of each plotted point: the other parameters' value indices →
/// the first parameter's value index → the rows there (the seeds). Every
/// combination of the grid has its entry, even one without rows (a gap).
type PointGroups<'a> = BTreeMap<Vec<usize>, BTreeMap<usize, Vec<&'a SweepRow>>>;

fn point_groups<'a>(spec: &SweepSpec, rows: &'a [SweepRow]) -> PointGroups<'a> {
    let mut groups: PointGroups<'a> = BTreeMap::new();
    let index_of = |k: usize, value: &str| {
        spec.vary[k]
            .values
            .iter()
            .position(|v| v == value)
            .unwrap_or(usize::MAX)
    };
    let place = |values: &[String]| {
        let rest: Vec<usize> = (1..spec.vary.len())
            .map(|k| index_of(k, &values[k]))
            .collect();
        let x = if spec.vary.is_empty() {
            0
        } else {
            index_of(0, &values[0])
        };
        (rest, x)
    };
    for p in spec.points() {
        let (rest, x) = place(&p.values);
        groups.entry(rest).or_default().entry(x).or_default();
    }
    for r in rows {
        if r.values.len() != spec.vary.len() {
            continue;
        }
        let (rest, x) = place(&r.values);
        groups
            .entry(rest)
            .or_default()
            .entry(x)
            .or_default()
            .push(r);
    }
    groups
}

/// The plotted x of the first parameter's value index `k`: the value, its
/// log₁₀ on a log axis, or `k` when the values are not all numbers.
fn x_of(spec: &SweepSpec, k: usize) -> f64 {
    let first: Vec<String> = spec
        .vary
        .first()
        .map(|v| v.values.clone())
        .unwrap_or_else(|| vec![String::new()]);
    let numeric = first.iter().all(|v| v.parse::<f64>().is_ok());
    if !numeric {
        return k as f64;
    }
    let x = first
        .get(k)
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(f64::NAN);
    if sweep_log_x(spec) {
        x.log10()
    } else {
        x
    }
}

/// A point's metric values over its runs (a failed run has none; a run
/// whose heap had no slope to fit, a single layer, still has its pile size).
fn values_of(runs: &[&SweepRow], metric: SweepMetric) -> Vec<f64> {
    runs.iter()
        .filter_map(|r| metric.of(r))
        .filter(|a| a.is_finite())
        .collect()
}

/// [`sweep_series`] for any [`SweepMetric`]; x is log₁₀ of the value when
/// [`sweep_log_x`].
pub fn sweep_series_of(spec: &SweepSpec, rows: &[SweepRow], metric: &SweepMetric) -> Vec<Series> {
    point_groups(spec, rows)
        .into_iter()
        .map(|(rest, points)| {
            let label = rest
                .iter()
                .enumerate()
                .map(|(j, &i)| {
                    let v = &spec.vary[j + 1];
                    // The last segment of each linked path: the legend has
                    // room for "friction = 0.3", not for the full path.
                    format!(
                        "{} = {}",
                        short_path(&v.path),
                        v.values.get(i).map_or("?", |s| s)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let pts: Vec<(f64, f64, f64)> = points
                .into_iter()
                .map(|(x, runs)| {
                    let (m, sd) =
                        mean_sd(&values_of(&runs, *metric)).unwrap_or((f64::NAN, f64::NAN));
                    (x_of(spec, x), m, sd)
                })
                .collect();
            Series::with_errors(label, &pts)
        })
        .collect()
}

/// The legend of the marks over points with a run that was not settled at
/// its end.
pub const UNSETTLED_MARK: &str = "a run not settled at its end";
/// The legend of the marks over points with a run whose solves missed the
/// tolerance on some steps.
pub const UNCONVERGED_MARK: &str = "a run with steps short of the tolerance";

/// The marks laid over [`sweep_series_of`]'s points: rings where a run of
/// the point was not settled at its end (`settled` false), crosses where a
/// run had steps whose solve stopped short of the tolerance
/// (`steps_not_converged` > 0) — the points whose value a reader should
/// not take at face value. Each is a series only when it has a point.
pub fn sweep_marks(spec: &SweepSpec, rows: &[SweepRow], metric: SweepMetric) -> Vec<Series> {
    let (mut unsettled, mut unconverged) = (Vec::new(), Vec::new());
    for points in point_groups(spec, rows).into_values() {
        for (x, runs) in points {
            let Some((m, _)) = mean_sd(&values_of(&runs, metric)) else {
                continue;
            };
            let at = (x_of(spec, x), m);
            if runs.iter().any(|r| r.settled == Some(false)) {
                unsettled.push(at);
            }
            if runs
                .iter()
                .any(|r| r.steps_not_converged.is_some_and(|n| n > 0))
            {
                unconverged.push(at);
            }
        }
    }
    [
        (UNSETTLED_MARK, unsettled, SeriesStyle::Ring),
        (UNCONVERGED_MARK, unconverged, SeriesStyle::Cross),
    ]
    .into_iter()
    .filter(|(_, pts, _)| !pts.is_empty())
    .map(|(label, pts, style)| Series::marks(label, &pts, style))
    .collect()
}

/// The unit of a scene path's value, from its last segment, for axis
/// labels: `rolling` and `spinning` are lengths (m), `friction` has none.
/// `None` where the path is not one of the known fields.
pub fn path_unit(path: &str) -> Option<&'static str> {
    let last = path
        .rsplit(['.', '[', ']'])
        .find(|s| !s.is_empty() && s.parse::<usize>().is_err())?;
    Some(match last {
        "rolling" | "spinning" | "radius" | "spacing" | "envelope" | "half_length" => "m",
        "friction" | "static_friction" | "kinetic_friction" | "restitution" | "omega"
        | "lambda" | "jitter" => "dimensionless",
        "density" => "kg/m³",
        "time_step" | "duration" | "frame_interval" | "start_time" => "s",
        "angular_velocity" => "rad/s",
        "velocity" | "max_recovery_speed" => "m/s",
        "rate" => "1/s",
        _ => return None,
    })
}

/// The x-axis label of a sweep plot: the first varied path with its unit
/// (of both halves of a linked `a+b` path when they agree), and how the
/// values are placed.
fn x_axis_label(spec: &SweepSpec) -> String {
    let Some(v) = spec.vary.first() else {
        return "(nothing varied)".to_string();
    };
    let units: BTreeSet<Option<&str>> = v.path.split('+').map(|p| path_unit(p.trim())).collect();
    let unit = match units.into_iter().collect::<Vec<_>>()[..] {
        [Some(u)] => Some(u),
        _ => None,
    };
    let how = if sweep_log_x(spec) {
        Some("log scale")
    } else if v.values.iter().all(|x| x.parse::<f64>().is_ok()) {
        None
    } else {
        Some("position in the list")
    };
    match [unit, how].into_iter().flatten().collect::<Vec<_>>()[..] {
        [] => v.path.clone(),
        ref parts => format!("{} ({})", v.path, parts.join(", ")),
    }
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

/// [`sweep_plot_of`] with `reference` curves drawn over the sweep's, and
/// [`sweep_marks`] over the points that need a second look.
pub fn sweep_plot_with(
    spec: &SweepSpec,
    scene_name: &str,
    rows: &[SweepRow],
    metric: SweepMetric,
    reference: Option<&Reference>,
) -> Result<Image> {
    let opts = PlotOptions {
        title: plot_title(spec, scene_name, metric),
        x_label: x_axis_label(spec),
        y_label: metric.label().to_string(),
        log_x: sweep_log_x(spec),
        ..PlotOptions::default()
    };
    let mut series = sweep_series_of(spec, rows, &metric);
    if let Some(r) = reference {
        series.extend(r.series(metric, opts.log_x));
    }
    series.extend(sweep_marks(spec, rows, metric));
    Ok(plot_lines(&series, &opts)?)
}

/// A sweep plot's title: the scene, the metric and what a point is (the
/// mean ± sd over the seeds, or with one seed the run itself: no bar).
fn plot_title(spec: &SweepSpec, scene_name: &str, metric: SweepMetric) -> String {
    let spread = if spec.seeds > 1 {
        format!("mean ± sd over {} seeds", spec.seeds)
    } else {
        "one run per point (one seed: no spread to draw)".to_string()
    };
    format!("{scene_name}: {}, {spread}", metric.label())
}

/// A path shortened to the last segment of each of its `+`-linked parts:
/// `materials.0.rolling+materials.0.spinning` → `rolling+spinning`.
fn short_path(path: &str) -> String {
    path.split('+')
        .map(|p| {
            let p = p.trim();
            p.rsplit(['.', '[', ']'])
                .find(|s| !s.is_empty())
                .unwrap_or(p)
        })
        .collect::<Vec<_>>()
        .join("+")
}

/// A compact caption for a thumbnail: `name=value … s<seed>`, each path
/// shortened to the last segment of each of its linked parts
/// (`rolling+spinning=0.001`) unless two paths share the short form.
fn short_caption(spec: &SweepSpec, p: &RunPoint) -> String {
    let shorts: Vec<String> = spec.vary.iter().map(|v| short_path(&v.path)).collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(vary: &[&str], seeds: u64) -> SweepSpec {
        let vary: Vec<String> = vary.iter().map(|s| s.to_string()).collect();
        SweepSpec::parse(&vary, seeds).unwrap()
    }

    #[test]
    fn a_linked_sweep_names_both_halves_and_their_unit() {
        let s = spec(&["materials.0.rolling+materials.0.spinning=0:0.001:3"], 1);
        assert_eq!(
            x_axis_label(&s),
            "materials.0.rolling+materials.0.spinning (m)"
        );
        let p = s.points().remove(0);
        assert_eq!(short_caption(&s, &p), "rolling+spinning=0 s0");
        let t = plot_title(&s, "pile", SweepMetric::Angle);
        assert!(
            t.contains("one run per point") && !t.contains("sd over"),
            "{t}"
        );
        let t3 = plot_title(
            &spec(&["materials.0.friction=0.2,0.4"], 3),
            "pile",
            SweepMetric::Angle,
        );
        assert!(t3.ends_with("mean ± sd over 3 seeds"), "{t3}");
        // Units that differ, or are unknown, are not guessed.
        assert_eq!(
            x_axis_label(&spec(&["materials.0.rolling+materials.0.friction=1,2"], 1)),
            "materials.0.rolling+materials.0.friction"
        );
        assert_eq!(
            x_axis_label(&spec(&["materials.0.friction=1e-5,1e-1"], 1)),
            "materials.0.friction (dimensionless, log scale)"
        );
    }

    #[test]
    fn points_with_an_unsettled_or_unconverged_run_are_marked() {
        let s = spec(&["materials.0.friction=0.2,0.4,0.6"], 2);
        let row = |p: &RunPoint, angle: f64, settled: bool, missed: u64| SweepRow {
            run: p.index,
            values: p.values.clone(),
            seed: p.seed,
            angle_deg: Some(angle),
            settled: Some(settled),
            steps: Some(100),
            steps_not_converged: Some(missed),
            ..SweepRow::default()
        };
        let pts: Vec<RunPoint> = s.points();
        let rows: Vec<SweepRow> = pts
            .iter()
            .map(|p| match (p.values[0].as_str(), p.seed) {
                ("0.4", 1) => row(p, 32.0, false, 0),
                ("0.6", 0) => row(p, 36.0, true, 7),
                (_, _) => row(p, 30.0, true, 0),
            })
            .collect();
        let marks = sweep_marks(&s, &rows, SweepMetric::Angle);
        assert_eq!(marks.len(), 2, "{marks:?}");
        let at =
            |k: usize| -> Vec<(f64, f64)> { marks[k].points.iter().map(|p| (p.x, p.y)).collect() };
        assert_eq!(
            (marks[0].label.as_str(), marks[0].style),
            (UNSETTLED_MARK, SeriesStyle::Ring)
        );
        assert_eq!(at(0), vec![(0.4, 31.0)], "the mean of 30° and 32°");
        assert_eq!(
            (marks[1].label.as_str(), marks[1].style),
            (UNCONVERGED_MARK, SeriesStyle::Cross)
        );
        assert_eq!(at(1), vec![(0.6, 33.0)]);
        let clean: Vec<SweepRow> = pts.iter().map(|p| row(p, 30.0, true, 0)).collect();
        assert!(sweep_marks(&s, &clean, SweepMetric::Angle).is_empty());
    }
}
