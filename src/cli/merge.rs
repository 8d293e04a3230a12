//! `repose merge`: join the directories of a sharded sweep into one.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use repose::sweep;

use super::sweep::{default_sweep_dir, report_sweep};

/// The arguments of `repose merge` (its help: the `Command` variant).
#[derive(clap::Args)]
pub(crate) struct MergeArgs {
    /// The shard directories (each with sweep.csv and sweep.json).
    #[arg(required = true)]
    pub(crate) dirs: Vec<PathBuf>,
    /// Where the joined files go (default: `out/<scene name>_sweep/`).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Draw reference data over the plots (as for `repose sweep`).
    #[arg(long, value_name = "FILE")]
    pub(crate) reference: Option<PathBuf>,
}

/// Runs `repose merge`; the exit code says how it ended.
pub(crate) fn exec(args: MergeArgs) -> Result<ExitCode> {
    let MergeArgs {
        dirs,
        out,
        reference,
    } = args;
    let reference = reference.map(|f| sweep::Reference::read(&f)).transpose()?;
    let out = match out {
        Some(o) => o,
        None => {
            let m = sweep::Manifest::read(&dirs[0])?;
            default_sweep_dir(&m.scene_name)
        }
    };
    let report = sweep::merge_with(&dirs, &out, reference.as_ref())?;
    Ok(report_sweep(
        &report,
        &format!("merged {} directories", dirs.len()),
    ))
}
