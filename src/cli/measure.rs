//! `repose measure`: measure a saved run's angle of repose and record it
//! in its summary.json.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use repose::analysis::{Axis, HeapMethod};
use repose::measure::{format_report, measure_dir, MeasureOptions};

/// The arguments of `repose measure` (its help: the `Command` variant).
#[derive(clap::Args)]
pub(crate) struct MeasureArgs {
    /// The run's output directory (with final.csv and summary.json).
    pub(crate) dir: PathBuf,
    /// Profile method: radial (a conical heap), or x / y (a planar heap
    /// whose cross-section runs along x / y). Default: as the run
    /// measured, else radial.
    #[arg(long, value_enum)]
    pub(crate) method: Option<MethodChoice>,
    /// Floor height (m). Default: as recorded in summary.json, else the
    /// lowest sphere bottom.
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) floor: Option<f64>,
    /// Print the measurement as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Runs `repose measure`; the exit code says how it ended.
pub(crate) fn exec(args: MeasureArgs) -> Result<ExitCode> {
    let MeasureArgs {
        dir,
        method,
        floor,
        json,
    } = args;
    let opts = MeasureOptions {
        method: method.map(HeapMethod::from),
        floor,
    };
    let r = measure_dir(&dir, &opts)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r.measurement)?);
    } else {
        println!("{}", format_report(&r.measurement, &r.floor_source));
        println!("recorded in {}", r.summary_path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `--method` of `repose measure`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum MethodChoice {
    /// Bins of distance from the pile axis (a conical heap).
    Radial,
    /// A planar heap, bins along x (two flanks).
    X,
    /// A planar heap, bins along y (two flanks).
    Y,
}

impl From<MethodChoice> for HeapMethod {
    fn from(m: MethodChoice) -> Self {
        match m {
            MethodChoice::Radial => HeapMethod::Radial,
            MethodChoice::X => HeapMethod::Planar { axis: Axis::X },
            MethodChoice::Y => HeapMethod::Planar { axis: Axis::Y },
        }
    }
}
