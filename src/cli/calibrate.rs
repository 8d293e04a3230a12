//! `repose calibrate`: find the parameter values whose simulated angles
//! meet measured ones.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use repose::calibrate;
use repose::run::BackendChoice;

use super::{every_run_overrides, EveryRun};

/// The arguments of `repose calibrate` (its help: the `Command` variant).
#[derive(clap::Args)]
pub(crate) struct CalibrateArgs {
    /// The scene file(s), one per target angle.
    #[arg(required = true)]
    pub(crate) scenes: Vec<PathBuf>,
    /// A calibrated parameter's scene path (`a+b` sets both to the same
    /// value); repeat for several, each followed by its --range.
    #[arg(long = "param", value_name = "PATH", required = true)]
    pub(crate) params: Vec<String>,
    /// The range searched for each --param, in order: `a:b`.
    #[arg(long = "range", value_name = "A:B", required = true)]
    pub(crate) ranges: Vec<String>,
    #[command(flatten)]
    pub(crate) every_run: EveryRun,
    /// The measured angle (°) to reproduce, one per scene in order: the
    /// angle of repose of a heap scene, the dynamic angle of a drum.
    #[arg(
        long = "target-angle",
        value_name = "DEG",
        required = true,
        allow_negative_numbers = true
    )]
    pub(crate) targets: Vec<f64>,
    /// Seeds per point and scene (the mean over them is calibrated; 3 or
    /// more recommended, 1 for a quick look).
    #[arg(long, default_value_t = 1)]
    pub(crate) seeds: u64,
    /// Tolerance on the angle (°).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1.0)]
    pub(crate) tol: f64,
    /// The most points to run (each is every scene × every seed).
    #[arg(long, default_value_t = 12)]
    pub(crate) max_evals: usize,
    /// Runs at once (each with its share of the CPU threads).
    #[arg(long, default_value_t = 1)]
    pub(crate) jobs: usize,
    /// The calibration directory (default: out/<first scene's name>_calibrate/).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Run every run again, even those an earlier calibration into the
    /// same directory finished (by default they are reused).
    #[arg(long)]
    pub(crate) rerun: bool,
    /// Solver backend of every run.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub(crate) backend: BackendChoice,
}

/// Runs `repose calibrate`; the exit code says how it ended.
pub(crate) fn exec(args: CalibrateArgs) -> Result<ExitCode> {
    let CalibrateArgs {
        scenes,
        params,
        ranges,
        every_run,
        targets,
        seeds,
        tol,
        max_evals,
        jobs,
        out,
        rerun,
        backend,
    } = args;
    if params.len() != ranges.len() {
        anyhow::bail!(
            "every --param needs its --range (got {} --param, {} --range)",
            params.len(),
            ranges.len()
        );
    }
    let params = params
        .iter()
        .zip(&ranges)
        .map(|(p, r)| calibrate::Param::parse(p, r))
        .collect::<Result<Vec<_>>>()?;
    let spec = calibrate::CalibrateSpec {
        scenes,
        targets,
        params,
        seeds,
        settings: calibrate::Settings {
            tol,
            max_evals,
            per_round: 1,
        },
        set: every_run_overrides(&every_run)?,
    };
    let out_dir = match out {
        Some(o) => o,
        None => {
            let first = repose::scene::Scene::load(&spec.scenes[0], &[])?;
            calibrate::default_calibrate_dir(&first.name)
        }
    };
    let opts = calibrate::CalibrateOptions {
        out_dir,
        jobs,
        backend,
        progress: std::io::stderr().is_terminal(),
        rerun,
    };
    let r = calibrate::run_calibration(&spec, &opts)?;
    let o = &r.outcome;
    println!(
        "calibration: {} after {} points ({} runs, {:.0} s)",
        o.status.as_str(),
        o.evaluations.len(),
        r.runs,
        r.wall_time_s
    );
    for (k, p) in spec.params.iter().enumerate() {
        match o.interval.get(k) {
            Some(iv) => println!(
                "{} = {} (interval {} … {})",
                p.path, o.estimate[k], iv[0], iv[1]
            ),
            None => println!("{}: closest point run {}", p.path, o.estimate[k]),
        }
    }
    println!("{}", o.message);
    for f in &r.files {
        println!("{}", f.display());
    }
    Ok(match o.status {
        calibrate::Status::Converged | calibrate::Status::NoiseLimited => ExitCode::SUCCESS,
        calibrate::Status::OutOfReach | calibrate::Status::Ambiguous => ExitCode::from(3),
        calibrate::Status::Budget => ExitCode::from(4),
    })
}
