//! Comparing two runs' `final.csv` (e.g. GPU vs CPU backend): per-particle
//! differences and the bulk quantities a granular study reads off a pile.
//!
//! A poured pile is chaotic: after hundreds of steps, f32 and f64 arithmetic
//! put individual grains in different places, so per-particle differences
//! are reported but the agreement criterion is on bulk quantities — centre
//! of mass, mean and maximum height, radius of gyration — which must agree to
//! a tolerance relative to the mean grain radius.

use std::path::Path;

use anyhow::{bail, Result};
use serde::Serialize;

use crate::output::csv::read_final_csv;

/// Differences between two final states.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Bodies in each file.
    pub bodies: usize,
    /// Mean radius (m).
    pub mean_radius: f64,
    /// |Δ centre of mass| (m).
    pub com_shift: f64,
    /// |Δ mean z| (m).
    pub mean_height_diff: f64,
    /// |Δ highest sphere top| (m).
    pub max_height_diff: f64,
    /// |Δ radius of gyration about the vertical through the centre of mass| (m).
    pub gyration_radius_diff: f64,
    /// RMS of per-particle position differences (m).
    pub rms_position_diff: f64,
    /// Largest per-particle position difference (m).
    pub max_position_diff: f64,
}

impl Comparison {
    /// The largest bulk difference in units of the mean radius.
    pub fn worst_bulk_in_radii(&self) -> f64 {
        [
            self.com_shift,
            self.mean_height_diff,
            self.max_height_diff,
            self.gyration_radius_diff,
        ]
        .into_iter()
        .fold(0.0, f64::max)
            / self.mean_radius
    }
}

fn bulk(rows: &[[f64; 11]]) -> (f64, f64, f64, [f64; 3], f64) {
    let n = rows.len() as f64;
    let mut c = [0.0; 3];
    for r in rows {
        for k in 0..3 {
            c[k] += r[1 + k] / n;
        }
    }
    let top = rows
        .iter()
        .map(|r| r[3] + r[10])
        .fold(f64::NEG_INFINITY, f64::max);
    let rg = (rows
        .iter()
        .map(|r| (r[1] - c[0]).powi(2) + (r[2] - c[1]).powi(2))
        .sum::<f64>()
        / n)
        .sqrt();
    let rmean = rows.iter().map(|r| r[10]).sum::<f64>() / n;
    (c[2], top, rg, c, rmean)
}

/// Every number finite and every radius positive: a state with NaN or ∞ (a
/// run that diverged) or a non-positive radius has no bulk quantities to
/// compare, and NaN would make every comparison pass.
fn check_rows(path: &Path, rows: &[[f64; 11]]) -> Result<()> {
    const COLUMNS: [&str; 11] = [
        "id", "x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz", "radius",
    ];
    for (i, r) in rows.iter().enumerate() {
        if let Some(c) = (0..11).find(|&c| !r[c].is_finite()) {
            bail!(
                "{}: row {} (body {}): column `{}` is {}; compare needs finite states (did that run diverge?)",
                path.display(),
                i + 2,
                r[0],
                COLUMNS[c],
                r[c]
            );
        }
        if r[10] <= 0.0 {
            bail!(
                "{}: row {} (body {}): radius {} must be > 0",
                path.display(),
                i + 2,
                r[0],
                r[10]
            );
        }
    }
    Ok(())
}

/// Compares two `final.csv` files (same bodies, same order); a file with a
/// non-finite number or a radius ≤ 0 is an error naming file, row and column.
pub fn compare_files(a: &Path, b: &Path) -> Result<Comparison> {
    let ra = read_final_csv(a)?;
    let rb = read_final_csv(b)?;
    check_rows(a, &ra)?;
    check_rows(b, &rb)?;
    if ra.len() != rb.len() {
        bail!(
            "{} has {} bodies but {} has {}",
            a.display(),
            ra.len(),
            b.display(),
            rb.len()
        );
    }
    if let Some(i) = (0..ra.len()).find(|&i| ra[i][0] != rb[i][0] || ra[i][10] != rb[i][10]) {
        bail!(
            "row {}: ids or radii differ between {} and {}",
            i + 2,
            a.display(),
            b.display()
        );
    }
    let (za, ta, ga, ca, rmean) = bulk(&ra);
    let (zb, tb, gb, cb, _) = bulk(&rb);
    let d: Vec<f64> = ra
        .iter()
        .zip(&rb)
        .map(|(x, y)| {
            ((x[1] - y[1]).powi(2) + (x[2] - y[2]).powi(2) + (x[3] - y[3]).powi(2)).sqrt()
        })
        .collect();
    Ok(Comparison {
        bodies: ra.len(),
        mean_radius: rmean,
        com_shift: ((ca[0] - cb[0]).powi(2) + (ca[1] - cb[1]).powi(2) + (ca[2] - cb[2]).powi(2))
            .sqrt(),
        mean_height_diff: (za - zb).abs(),
        max_height_diff: (ta - tb).abs(),
        gyration_radius_diff: (ga - gb).abs(),
        rms_position_diff: (d.iter().map(|x| x * x).sum::<f64>() / d.len().max(1) as f64).sqrt(),
        max_position_diff: d.iter().copied().fold(0.0, f64::max),
    })
}
