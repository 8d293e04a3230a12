//! Redraws the README's sweep figures from their committed tables
//! (`docs/figures/tasora2013_sweep.csv`, `acary2021_sweep.csv`) with the current
//! plots: `cargo run --release --example redraw_sweep_plots -- docs/figures`.
//! The sweeps themselves take hours (README, "The papers' angle-of-repose
//! studies"); their `sweep.csv` holds everything the plots need.

use std::path::{Path, PathBuf};

use repose::render::write_png;
use repose::sweep::{read_sweep_csv, sweep_plot_of, SweepMetric, SweepSpec, Vary};

/// The sweep specification a table was written by: its varied paths with
/// their values in order of first appearance, and its seeds.
fn spec_of(paths: &[String], rows: &[repose::sweep::SweepRow]) -> SweepSpec {
    let vary = paths
        .iter()
        .enumerate()
        .map(|(k, path)| {
            let mut values: Vec<String> = Vec::new();
            for r in rows {
                if !values.contains(&r.values[k]) {
                    values.push(r.values[k].clone());
                }
            }
            Vary {
                path: path.clone(),
                spec: values.join(","),
                values,
            }
        })
        .collect();
    let seeds = rows.iter().map(|r| r.seed + 1).max().unwrap_or(1);
    SweepSpec {
        vary,
        seeds,
        set: Vec::new(),
    }
}

fn redraw(dir: &Path, table: &str, scene: &str, plots: &[(SweepMetric, &str)]) {
    let path = dir.join(table);
    let (paths, rows) = read_sweep_csv(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let spec = spec_of(&paths, &rows);
    for (metric, file) in plots {
        let img = sweep_plot_of(&spec, scene, &rows, *metric)
            .unwrap_or_else(|e| panic!("{table}: {e:#}"));
        let out = dir.join(file);
        write_png(&out, &img).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
        println!("wrote {}", out.display());
    }
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("docs/figures"));
    redraw(
        &dir,
        "tasora2013_sweep.csv",
        "repose_tasora2013",
        &[(SweepMetric::Angle, "tasora2013_sweep.png")],
    );
    redraw(
        &dir,
        "acary2021_sweep.csv",
        "repose_acary2021",
        &[
            (SweepMetric::HeightOverDiameter, "acary2021_height.png"),
            (
                SweepMetric::MeanRadiusOverDiameter,
                "acary2021_mean_radius.png",
            ),
        ],
    );
}
