//! Reference data drawn over a sweep's plots (`--reference FILE`): a
//! paper's curve, a lab's measurements, another code's results.
//!
//! The file is CSV with a header. The first column is the varied
//! parameter's value (any header); the others are named after the
//! `sweep.csv` columns they compare with — `angle_deg`,
//! `height_over_diameter`, `bottom_mean_radius_over_diameter` — each
//! optionally followed by `<column>_err` (drawn as an error bar). An
//! optional `label` column splits the rows into curves (e.g. one per μ);
//! without it the curve is named after the file. Empty cells are gaps.
//! Each plot draws the columns it shows; a file with none of them is an
//! error, as is a cell that is not a number (file, line, column, text).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};

use super::SweepMetric;
use crate::render::plot::SeriesPoint;
use crate::render::Series;

/// The `sweep.csv` column a metric is compared with in a reference file.
pub fn reference_column(metric: SweepMetric) -> &'static str {
    match metric {
        SweepMetric::Angle => "angle_deg",
        SweepMetric::HeightOverDiameter => "height_over_diameter",
        SweepMetric::MeanRadiusOverDiameter => "bottom_mean_radius_over_diameter",
    }
}

/// Points of one reference column: (x, y, error).
pub type RefPoints = Vec<(f64, f64, Option<f64>)>;

/// One labelled curve: its label and its points per metric column.
pub type RefCurve = (String, BTreeMap<String, RefPoints>);

/// Reference curves read from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// The file's stem: the curve's name when there is no `label` column.
    pub name: String,
    /// Per label (in order of first appearance), per metric column: the
    /// points (x, y, error).
    pub curves: Vec<RefCurve>,
}

impl Reference {
    /// Reads a reference file (module docs).
    pub fn read(path: &Path) -> Result<Reference> {
        let file = path.display().to_string();
        let text = crate::output::bounded::read_text(path)
            .with_context(|| format!("{file}: cannot read the reference file"))?;
        let mut rd = csv::ReaderBuilder::new()
            .has_headers(true)
            .trim(csv::Trim::All)
            .from_reader(text.as_bytes());
        let header: Vec<String> = rd
            .headers()
            .with_context(|| format!("{file}: cannot read the header"))?
            .iter()
            .map(str::to_string)
            .collect();
        let known: Vec<&str> = SweepMetric::ALL
            .iter()
            .map(|m| reference_column(*m))
            .collect();
        let label_col = header.iter().position(|h| h == "label");
        let cols: Vec<(usize, &str, Option<usize>)> = header
            .iter()
            .enumerate()
            .skip(1)
            .filter_map(|(i, h)| known.iter().find(|k| **k == h).map(|k| (i, *k)))
            .map(|(i, k)| {
                let err = header.iter().position(|h| *h == format!("{k}_err"));
                (i, k, err)
            })
            .collect();
        if header.len() < 2 || cols.is_empty() {
            bail!(
                "{file}: the header {:?} names no column to compare: after the parameter's column, give one of {}",
                header.join(","),
                known.join(", ")
            );
        }
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "reference".into());
        let mut curves: Vec<RefCurve> = Vec::new();
        for rec in rd.records() {
            let rec = rec.with_context(|| format!("{file}: malformed CSV"))?;
            let line = rec.position().map_or(0, |p| p.line());
            let num = |i: usize| -> Result<Option<f64>> {
                let cell = rec.get(i).unwrap_or("");
                if cell.is_empty() {
                    return Ok(None);
                }
                match cell.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(Some(v)),
                    _ => bail!(
                        "{file}: line {line}: column {}: {:?} is not a finite number",
                        header[i],
                        crate::output::bounded::clip(cell)
                    ),
                }
            };
            let Some(x) = num(0)? else {
                bail!(
                    "{file}: line {line}: the first column ({}) is empty",
                    header[0]
                );
            };
            let label = label_col
                .and_then(|i| rec.get(i))
                .filter(|s| !s.is_empty())
                .map_or_else(|| name.clone(), str::to_string);
            let k = match curves.iter().position(|(l, _)| *l == label) {
                Some(k) => k,
                None => {
                    curves.push((label, BTreeMap::new()));
                    curves.len() - 1
                }
            };
            for &(i, col, err) in &cols {
                if let Some(y) = num(i)? {
                    let e = match err {
                        Some(j) => num(j)?,
                        None => None,
                    };
                    curves[k]
                        .1
                        .entry(col.to_string())
                        .or_default()
                        .push((x, y, e));
                }
            }
        }
        Ok(Reference { name, curves })
    }

    /// The curves for `metric`'s plot, x as log₁₀ when the plot's axis is
    /// (points with x ≤ 0 are then left out), each labelled
    /// `<label> (reference)`.
    pub fn series(&self, metric: SweepMetric, log_x: bool) -> Vec<Series> {
        let col = reference_column(metric);
        self.curves
            .iter()
            .filter_map(|(label, by_col)| {
                let pts = by_col.get(col)?;
                let points: Vec<SeriesPoint> = pts
                    .iter()
                    .filter(|(x, _, _)| !log_x || *x > 0.0)
                    .map(|&(x, y, err)| SeriesPoint {
                        x: if log_x { x.log10() } else { x },
                        y,
                        err,
                    })
                    .collect();
                (!points.is_empty()).then(|| Series {
                    label: format!("{label} (reference)"),
                    points,
                    style: crate::render::plot::SeriesStyle::Line,
                })
            })
            .collect()
    }
}
