//! `repose sweep`: run a scene over a grid of parameter values and seeds,
//! and report the sweep's files.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use repose::run::BackendChoice;
use repose::sweep::{self, Shard, SweepOptions, SweepReport, SweepSpec};

use super::{every_run_overrides, EveryRun};

/// The arguments of `repose sweep` (its help: the `Command` variant).
#[derive(clap::Args)]
pub(crate) struct SweepArgs {
    /// The scene file (RON).
    pub(crate) scene: PathBuf,
    /// A varied parameter: `path=a:b:n` (n values from a to b inclusive)
    /// or `path=v1,v2,…` (repeatable; several make a grid, the first
    /// varying slowest).
    #[arg(long = "vary", value_name = "PATH=SPEC", required = true)]
    pub(crate) vary: Vec<String>,
    #[command(flatten)]
    pub(crate) every_run: EveryRun,
    /// Seeds per grid point: every seeded sphere source gets seed + s,
    /// s = 0…k−1 (1: the scene's own seeds).
    #[arg(long, default_value_t = 1)]
    pub(crate) seeds: u64,
    /// Runs at once (each with its share of the CPU threads).
    #[arg(long, default_value_t = 1)]
    pub(crate) jobs: usize,
    /// Run only shard i of n (1-based): the runs whose index ≡ i−1 mod n;
    /// join the shards with `repose merge`.
    #[arg(long, value_name = "I/N")]
    pub(crate) shard: Option<String>,
    /// The sweep directory (default: `out/<scene name>_sweep/`).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Keep the VTU frames of every run (off by default in sweeps).
    #[arg(long)]
    pub(crate) frames: bool,
    /// Run every run again, even those a previous sweep into the same
    /// directory finished (by default they are reused: a sweep resumes).
    #[arg(long)]
    pub(crate) rerun: bool,
    /// Solver backend of every run.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub(crate) backend: BackendChoice,
    /// Runs stepped together on one GPU, one solve per step for all
    /// (each run's files as when it runs alone). It pays on a hardware
    /// GPU, where a solve's fixed cost outweighs the work of a pile of
    /// thousands of contacts; on a software adapter (lavapipe) or the
    /// CPU it gains little. Default: every run of the shard (up to 64)
    /// on a hardware GPU, else 1 (one at a time, --jobs at once).
    #[arg(long, value_name = "K")]
    pub(crate) batch: Option<usize>,
    /// Draw reference data over the plots: CSV with the parameter's
    /// value first, then columns named angle_deg, height_over_diameter
    /// or bottom_mean_radius_over_diameter (optional `<column>_err` and
    /// label).
    #[arg(long, value_name = "FILE")]
    pub(crate) reference: Option<PathBuf>,
}

/// Runs `repose sweep`; the exit code says how it ended.
pub(crate) fn exec(args: SweepArgs) -> Result<ExitCode> {
    let SweepArgs {
        scene,
        vary,
        every_run,
        seeds,
        jobs,
        shard,
        out,
        frames,
        rerun,
        backend,
        batch,
        reference,
    } = args;
    let spec = SweepSpec::parse(&vary, seeds)?.with_set(every_run_overrides(&every_run)?)?;
    let reference = reference.map(|f| sweep::Reference::read(&f)).transpose()?;
    let shard = match shard {
        Some(s) => Shard::parse(&s)?,
        None => Shard::ALL,
    };
    if jobs == 0 {
        anyhow::bail!("--jobs must be at least 1 (got 0)");
    }
    let prepared = sweep::prepare(&scene, spec)?;
    let out_dir = out.unwrap_or_else(|| default_sweep_dir(&prepared.base.name));
    let opts = SweepOptions {
        out_dir,
        jobs,
        shard,
        frames,
        backend,
        progress: std::io::stderr().is_terminal(),
        rerun,
        reference,
        batch,
    };
    let report = sweep::run_sweep(&prepared, &opts)?;
    Ok(report_sweep(
        &report,
        &format!("shard {shard} of the sweep"),
    ))
}

/// The default sweep directory of a scene: `out/<name>_sweep/`.
pub(super) fn default_sweep_dir(scene_name: &str) -> PathBuf {
    PathBuf::from("out").join(format!("{scene_name}_sweep"))
}

/// Prints the summary line and the files of a sweep or merge; exit code 2
/// when some runs failed.
pub(super) fn report_sweep(r: &SweepReport, what: &str) -> ExitCode {
    println!(
        "{what}: {} runs, {} failed; outputs in {}",
        r.rows.len(),
        r.failed,
        r.out_dir.display()
    );
    for f in &r.files {
        println!("{}", f.display());
    }
    let unmeasured = r
        .rows
        .iter()
        .filter(|row| !row.error.is_empty() && !row.run_failed())
        .count();
    if unmeasured > 0 {
        println!("{unmeasured} runs could not be measured in full (their `error` says why)");
    }
    if r.failed > 0 {
        for row in r.rows.iter().filter(|row| row.run_failed()) {
            eprintln!("run {} failed: {}", row.run, row.error);
        }
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}
