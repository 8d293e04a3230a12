//! `repose compare`: bulk and per-particle differences of two runs'
//! final.csv.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

/// The arguments of `repose compare` (its help: the `Command` variant).
#[derive(clap::Args)]
pub(crate) struct CompareArgs {
    /// First final.csv.
    pub(crate) a: PathBuf,
    /// Second final.csv.
    pub(crate) b: PathBuf,
    /// Allowed bulk difference, in mean grain radii.
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.5)]
    pub(crate) tol: f64,
}

/// Runs `repose compare`; the exit code says how it ended.
pub(crate) fn exec(args: CompareArgs) -> Result<ExitCode> {
    let CompareArgs { a, b, tol } = args;
    if !(tol.is_finite() && tol >= 0.0) {
        anyhow::bail!("--tol {tol}: must be a finite number ≥ 0 (mean grain radii)");
    }
    let c = repose::compare::compare_files(&a, &b)?;
    let r = c.mean_radius;
    println!("{} bodies, mean radius {:.4e} m", c.bodies, r);
    for (what, v) in [
        ("centre of mass shift", c.com_shift),
        ("mean height difference", c.mean_height_diff),
        ("top height difference", c.max_height_diff),
        ("radius of gyration difference", c.gyration_radius_diff),
        ("per-particle RMS difference", c.rms_position_diff),
        ("per-particle max difference", c.max_position_diff),
    ] {
        println!("{what:<32} {v:.4e} m = {:.3} radii", v / r);
    }
    let worst = c.worst_bulk_in_radii();
    let ok = worst <= tol;
    println!(
        "bulk agreement: worst {worst:.3} radii, tolerance {tol} radii: {}",
        if ok { "agree" } else { "DIFFER" }
    );
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
