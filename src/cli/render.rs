//! `repose render`: draw a run's final.csv, or its force chains, as a PNG.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use repose::scene::{ColourBy, LookAlong};

/// The arguments of `repose render` (its help: the `Command` variant).
#[derive(clap::Args)]
pub(crate) struct RenderArgs {
    /// The run's output directory (holding final.csv; summary.json, if
    /// present, gives the caption).
    pub(crate) dir: PathBuf,
    /// What the sphere colours show.
    #[arg(long, value_enum, default_value_t = ColourBy::Height)]
    pub(crate) colour: ColourBy,
    /// The PNG file to write (default: DIR/final.png).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Picture width in pixels.
    #[arg(long, default_value_t = 1200)]
    pub(crate) width: u32,
    /// Picture height in pixels.
    #[arg(long, default_value_t = 600)]
    pub(crate) height: u32,
    /// The axis the side view looks along (x for a drum turning about x).
    #[arg(long, value_enum, default_value_t = LookAlong::Y)]
    pub(crate) look_along: LookAlong,
    /// Draw the force chains of the last frame instead (a run made with
    /// --contacts): a side view of a slice through the bodies, each
    /// loaded contact a line as thick and bright as its normal force;
    /// written to DIR/force_chains.png unless --out says otherwise.
    #[arg(long)]
    pub(crate) force_chains: bool,
    /// With --force-chains: half the thickness of the slice drawn (m;
    /// default two mean radii).
    #[arg(long, requires = "force_chains")]
    pub(crate) slice: Option<f64>,
}

/// Runs `repose render`; the exit code says how it ended.
pub(crate) fn exec(args: RenderArgs) -> Result<ExitCode> {
    let RenderArgs {
        dir,
        colour,
        out,
        width,
        height,
        look_along,
        force_chains,
        slice,
    } = args;
    if !dir.is_dir() {
        anyhow::bail!(
            "{}: not a directory (expected a run's output directory holding final.csv)",
            dir.display()
        );
    }
    if let Some(s) = slice.filter(|s| !(s.is_finite() && *s > 0.0)) {
        anyhow::bail!("--slice {s}: the half thickness must be a number > 0 (m)");
    }
    let (img, default_name) = if force_chains {
        let img =
            repose::render::chains::render_chains_dir(&dir, width, height, look_along, slice)?;
        (img, "force_chains.png")
    } else {
        let img = repose::render::render_output_dir(&dir, colour, look_along, width, height)?;
        (img, "final.png")
    };
    let path = out.unwrap_or_else(|| dir.join(default_name));
    repose::render::write_png(&path, &img)?;
    println!("{}", path.display());
    Ok(ExitCode::SUCCESS)
}
