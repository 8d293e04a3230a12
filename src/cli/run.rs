//! `repose run`: simulate one scene, several in a batch, or resume a run
//! from its checkpoint; print the run's report.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use repose::output::summary::StopReason;
use repose::run::{resume_run, run_file, BackendChoice, ResumeOptions, RunOptions};
use repose::solver::SolverMethod;

use super::{scene_overrides, MethodArg};

/// The arguments of `repose run` (its help: the `Command` variant).
#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// The scene file (RON). Several are stepped together in one batch
    /// on a GPU backend (`--backend gpu`, or `auto` on a hardware GPU;
    /// one after another otherwise), each into `OUT/<scene name>` with
    /// --out, else its default directory.
    #[arg(required_unless_present = "resume", num_args = 1..)]
    pub(crate) scene: Vec<PathBuf>,
    /// Continue the run whose output directory is DIR from its
    /// checkpoint (DIR/checkpoint.bin), with the scene and options it was
    /// started with; on the cpu backend the result is bit-identical to
    /// an uninterrupted run.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = ["scene", "set", "out", "no_frames", "no_picture", "solver", "fallback", "dump_problem", "overwrite", "checkpoint_every"]
    )]
    pub(crate) resume: Option<PathBuf>,
    /// Write a checkpoint every N steps (`500`) or every T seconds of wall
    /// time (`60s`), or `off` (default: the scene's output.checkpoint,
    /// every 60 s).
    #[arg(long, value_name = "N|Ts|off")]
    pub(crate) checkpoint_every: Option<String>,
    /// Override a scalar field, e.g. `--set materials.0.rolling=0.02` (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub(crate) set: Vec<String>,
    /// Output directory (default: `out/<scene name>/`).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Write no VTU frames.
    #[arg(long)]
    pub(crate) no_frames: bool,
    /// Also write each frame's contacts: contacts_NNNNN.vtu (lines
    /// between bodies: force chains; contacts.pvd) and
    /// contacts_NNNNN.csv (points, normals, forces, torques). Sets the
    /// scene's `output.contacts`.
    #[arg(long)]
    pub(crate) contacts: bool,
    /// Write no final.png (overrides the scene's output.picture.enabled).
    #[arg(long)]
    pub(crate) no_picture: bool,
    /// Solver backend: auto = a hardware GPU for scenes of 2,000 bodies
    /// or more that its solvers can run, else the CPU (with --resume:
    /// the backend the run started with).
    #[arg(long, value_enum)]
    pub(crate) backend: Option<BackendChoice>,
    /// Solver method (overrides the scene's `solver.method`).
    #[arg(long, value_enum)]
    pub(crate) solver: Option<MethodArg>,
    /// A second method for the steps the first leaves above its
    /// tolerance, started from the first's answer; the better answer
    /// is kept (overrides the scene's `solver.fallback`; `none` turns it
    /// off). CPU backend. E.g. `--solver interior-point --fallback pgs`
    /// for the sphere piles of Acary & Bourrier 2021 at μ_r ≥ 0.1 m
    /// (docs/solvers.md).
    #[arg(long, value_name = "METHOD|none")]
    pub(crate) fallback: Option<String>,
    /// Write the contact problem of these steps (1 = the first) to
    /// OUT/problem_stepNNNNNN.dat, in the Siconos format `repose solve`
    /// reads (d = 6: the spinning row appended).
    #[arg(long, value_name = "STEP[,STEP…]", value_delimiter = ',')]
    pub(crate) dump_problem: Vec<u64>,
    /// Replace the outputs of an earlier run in the output directory
    /// (without it such a directory is refused, so runs never mix).
    #[arg(long)]
    pub(crate) overwrite: bool,
}

/// Runs `repose run`; the exit code says how it ended.
pub(crate) fn exec(args: RunArgs) -> Result<ExitCode> {
    let RunArgs {
        scene,
        resume,
        checkpoint_every,
        set,
        out,
        no_frames,
        contacts,
        no_picture,
        backend,
        solver,
        fallback,
        dump_problem,
        overwrite,
    } = args;
    // The bar draws only on a terminal; otherwise the run logs a
    // progress line every 30 s.
    let s = if let Some(dir) = resume {
        resume_run(
            &dir,
            &ResumeOptions {
                backend,
                progress: true,
                stop_after_step: None,
            },
        )?
    } else {
        let mut overrides =
            scene_overrides(&set, solver.map(SolverMethod::from), fallback.as_deref())?;
        if contacts {
            overrides.push(("output.contacts".into(), "true".into()));
        }
        if let Some(every) = checkpoint_every {
            overrides.extend(checkpoint_overrides(&every)?);
        }
        let opts = RunOptions {
            out_dir: out,
            progress: true,
            no_frames,
            backend: backend.unwrap_or_default(),
            no_picture,
            dump_steps: dump_problem,
            overwrite,
            stop_after_step: None,
            steps_done: None,
        };
        if scene.len() > 1 {
            let results = repose::run::batch::run_files(&scene, &overrides, &opts)?;
            let mut failed = 0;
            for (path, r) in scene.iter().zip(results) {
                println!("== {}", path.display());
                match r {
                    Ok(s) => s.report_lines().iter().for_each(|l| println!("{l}")),
                    Err(e) => {
                        failed += 1;
                        println!("FAILED: {e:#}");
                    }
                }
            }
            return Ok(if failed > 0 {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            });
        }
        let scene = scene
            .into_iter()
            .next()
            .ok_or_else(|| anyhow::anyhow!("a scene file or --resume DIR is needed"))?;
        run_file(&scene, &overrides, &opts)?
    };
    for line in s.report_lines() {
        println!("{line}");
    }
    if s.stopped == StopReason::Interrupted {
        println!(
            "interrupted after step {}: the outputs are complete for that step, and a checkpoint is kept (repose run --resume DIR continues)",
            s.steps
        );
        return Ok(ExitCode::from(repose::interrupt::EXIT_INTERRUPTED as u8));
    }
    Ok(ExitCode::SUCCESS)
}

/// The `--set` overrides that `--checkpoint-every SPEC` stands for: `N`
/// (every N steps, and no longer by wall time), `Ts` (every T seconds of
/// wall time only) or `off`.
fn checkpoint_overrides(spec: &str) -> Result<Vec<(String, String)>> {
    let set = |k: &str, v: &str| (format!("output.checkpoint.{k}"), v.to_string());
    let spec = spec.trim();
    if spec.eq_ignore_ascii_case("off") {
        return Ok(vec![set("enabled", "false")]);
    }
    let bad = || {
        anyhow::anyhow!(
            "--checkpoint-every {spec:?}: expected a step count (500), seconds of wall time (60s) or off"
        )
    };
    if let Some(secs) = spec.strip_suffix('s') {
        let t: f64 = secs.trim().parse().map_err(|_| bad())?;
        anyhow::ensure!(
            t.is_finite() && t > 0.0,
            "--checkpoint-every {spec:?}: the seconds must be > 0"
        );
        return Ok(vec![
            set("enabled", "true"),
            set("every_seconds", &t.to_string()),
            set("every_steps", "None"),
        ]);
    }
    let n: u64 = spec.parse().map_err(|_| bad())?;
    anyhow::ensure!(
        n > 0,
        "--checkpoint-every {spec:?}: the step count must be ≥ 1"
    );
    Ok(vec![
        set("enabled", "true"),
        set("every_steps", &n.to_string()),
        set("every_seconds", "None"),
    ])
}
