//! The `repose` command-line program. The only module that knows about the
//! terminal: it parses arguments, sets up logging and reports errors.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use repose::analysis::{Axis, HeapMethod};
use repose::calibrate;
use repose::measure::{format_report, measure_dir, MeasureOptions};
use repose::output::summary::StopReason;
use repose::render::{ColourBy, LookAlong};
use repose::run::{open_backend, resume_run, run_file, BackendChoice, ResumeOptions, RunOptions};
use repose::scene::parse_set;
use repose::solver::SolverMethod;
use repose::step::Stepper;
use repose::sweep::{self, Shard, SweepOptions, SweepReport, SweepSpec};

/// Granular dynamics with nonsmooth contact: sliding, rolling and spinning
/// friction in one 6-D cone per contact.
#[derive(Parser)]
#[command(name = "repose", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a scene file and write frames, final.csv, final.png and summary.json.
    Run {
        /// The scene file (RON).
        #[arg(required_unless_present = "resume")]
        scene: Option<PathBuf>,
        /// Continue the run whose output directory is DIR from its
        /// checkpoint (DIR/checkpoint.bin), with the scene and options it was
        /// started with; on the cpu backend the result is bit-identical to
        /// an uninterrupted run.
        #[arg(
            long,
            value_name = "DIR",
            conflicts_with_all = ["scene", "set", "out", "no_frames", "no_picture", "solver", "dump_problem", "overwrite", "checkpoint_every"]
        )]
        resume: Option<PathBuf>,
        /// Write a checkpoint every N steps (`500`) or every T seconds of wall
        /// time (`60s`), or `off` (default: the scene's output.checkpoint,
        /// every 60 s).
        #[arg(long, value_name = "N|Ts|off")]
        checkpoint_every: Option<String>,
        /// Override a scalar field, e.g. `--set materials.0.rolling=0.02` (repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// Output directory (default: out/<scene name>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write no VTU frames.
        #[arg(long)]
        no_frames: bool,
        /// Write no final.png (overrides the scene's output.picture.enabled).
        #[arg(long)]
        no_picture: bool,
        /// Solver backend: auto = GPU if an adapter exists, else CPU (with
        /// --resume: the backend the run started with).
        #[arg(long, value_enum)]
        backend: Option<BackendChoice>,
        /// Solver method (overrides the scene's `solver.method`).
        #[arg(long, value_enum)]
        solver: Option<SolverMethod>,
        /// Write the contact problem of these steps (1 = the first) to
        /// OUT/problem_stepNNNNNN.dat, in the Siconos format `repose solve`
        /// reads (d = 6: the spinning row appended).
        #[arg(long, value_name = "STEP[,STEP…]", value_delimiter = ',')]
        dump_problem: Vec<u64>,
        /// Replace the outputs of an earlier run in the output directory
        /// (without it such a directory is refused, so runs never mix).
        #[arg(long)]
        overwrite: bool,
    },
    /// Run a scene over a grid of parameter values and seeds: DIR/sweep.csv
    /// (one row per run), DIR/sweep.png (angle vs the first varied
    /// parameter), DIR/contact_sheet.png and DIR/runs/<run>/. Exit code 2
    /// when some runs failed (their rows say why).
    Sweep {
        /// The scene file (RON).
        scene: PathBuf,
        /// A varied parameter: `path=a:b:n` (n values from a to b inclusive)
        /// or `path=v1,v2,…` (repeatable; several make a grid, the first
        /// varying slowest).
        #[arg(long = "vary", value_name = "PATH=SPEC", required = true)]
        vary: Vec<String>,
        /// Seeds per grid point: every seeded sphere source gets seed + s,
        /// s = 0…k−1 (1: the scene's own seeds).
        #[arg(long, default_value_t = 1)]
        seeds: u64,
        /// Runs at once (each with its share of the CPU threads).
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Run only shard i of n (1-based): the runs whose index ≡ i−1 mod n;
        /// join the shards with `repose merge`.
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        /// The sweep directory (default: out/<scene name>_sweep/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Keep the VTU frames of every run (off by default in sweeps).
        #[arg(long)]
        frames: bool,
        /// Run every run again, even those a previous sweep into the same
        /// directory finished (by default they are reused: a sweep resumes).
        #[arg(long)]
        rerun: bool,
        /// Solver backend of every run.
        #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
        backend: BackendChoice,
        /// Draw reference data over the plots: CSV with the parameter's
        /// value first, then columns named angle_deg, height_over_diameter
        /// or bottom_mean_radius_over_diameter (optional <column>_err and
        /// label).
        #[arg(long, value_name = "FILE")]
        reference: Option<PathBuf>,
    },
    /// Find the parameter values whose simulated angles meet measured ones:
    /// one scene and one parameter (`--param materials.0.rolling --range
    /// 0:0.005 --target-angle 32`), or one scene per parameter (a heap and a
    /// drum for μ and ρ; `--target-angle` once per scene, in order).
    /// Writes DIR/calibrate.csv, calibrate.json, calibrate.png and the runs
    /// under DIR/runs/. Exit code 3 when the target is out of reach or the
    /// targets are ambiguous, 4 when the budget ran out.
    Calibrate {
        /// The scene file(s), one per target angle.
        #[arg(required = true)]
        scenes: Vec<PathBuf>,
        /// A calibrated parameter's scene path (`a+b` sets both to the same
        /// value); repeat for several, each followed by its --range.
        #[arg(long = "param", value_name = "PATH", required = true)]
        params: Vec<String>,
        /// The range searched for each --param, in order: `a:b`.
        #[arg(long = "range", value_name = "A:B", required = true)]
        ranges: Vec<String>,
        /// The measured angle (°) to reproduce, one per scene in order: the
        /// angle of repose of a heap scene, the dynamic angle of a drum.
        #[arg(
            long = "target-angle",
            value_name = "DEG",
            required = true,
            allow_negative_numbers = true
        )]
        targets: Vec<f64>,
        /// Seeds per point and scene (the mean over them is calibrated; 3 or
        /// more recommended, 1 for a quick look).
        #[arg(long, default_value_t = 1)]
        seeds: u64,
        /// Tolerance on the angle (°).
        #[arg(long, allow_negative_numbers = true, default_value_t = 1.0)]
        tol: f64,
        /// The most points to run (each is every scene × every seed).
        #[arg(long, default_value_t = 12)]
        max_evals: usize,
        /// Runs at once (each with its share of the CPU threads).
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// The calibration directory (default: out/<first scene's name>_calibrate/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Run every run again, even those an earlier calibration into the
        /// same directory finished (by default they are reused).
        #[arg(long)]
        rerun: bool,
        /// Solver backend of every run.
        #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
        backend: BackendChoice,
    },
    /// Join the directories of a sharded sweep (checked to be shards of one
    /// sweep, every run present once) into one sweep.csv, sweep.png and
    /// contact_sheet.png.
    Merge {
        /// The shard directories (each with sweep.csv and sweep.json).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where the joined files go (default: out/<scene name>_sweep/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Draw reference data over the plots (as for `repose sweep`).
        #[arg(long, value_name = "FILE")]
        reference: Option<PathBuf>,
    },
    /// Render a run's final.csv as a picture (side and top view of the
    /// spheres): DIR/final.png unless --out.
    Render {
        /// The run's output directory (holding final.csv; summary.json, if
        /// present, gives the caption).
        dir: PathBuf,
        /// What the sphere colours show.
        #[arg(long, value_enum, default_value_t = ColourBy::Height)]
        colour: ColourBy,
        /// The PNG file to write (default: DIR/final.png).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Picture width in pixels.
        #[arg(long, default_value_t = 1200)]
        width: u32,
        /// Picture height in pixels.
        #[arg(long, default_value_t = 600)]
        height: u32,
        /// The axis the side view looks along (x for a drum turning about x).
        #[arg(long, value_enum, default_value_t = LookAlong::Y)]
        look_along: LookAlong,
    },
    /// Run the built-in analytic validation cases and print measured vs expected.
    Validate {
        /// Solver backend to validate.
        #[arg(long, value_enum, default_value_t = BackendChoice::Cpu)]
        backend: BackendChoice,
    },
    /// Benchmark a solver backend: contact-iterations per second and its
    /// share of the device's memory-copy bandwidth; or, with `--formulation
    /// penalty`, the penalty formulation's particle-steps per second.
    Bench {
        /// Solver backend to benchmark (complementarity).
        #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
        backend: BackendChoice,
        /// What is timed: the complementarity solver on a settled pile's
        /// contact problem, or whole penalty steps of a settling bed.
        #[arg(long, value_enum, default_value_t = BenchFormulation::Complementarity)]
        formulation: BenchFormulation,
        /// The scene (default scenes/bench_pile_large.ron; with `--formulation
        /// penalty` scenes/bench_penalty_bed.ron).
        #[arg(long)]
        scene: Option<PathBuf>,
        /// Penalty: scene steps before timing.
        #[arg(long, default_value_t = 100)]
        warm_up: usize,
        /// Penalty: scene steps timed.
        #[arg(long, default_value_t = 20)]
        steps: usize,
        /// Iterations per timed solve.
        #[arg(long, default_value_t = 100)]
        iterations: usize,
        /// The method timed: jacobi (every backend) or apgd (cpu: f64 APGD;
        /// cpu-f32 and gpu: the GPU's APGD).
        #[arg(long, value_enum, default_value_t = SolverMethod::Jacobi)]
        solver: SolverMethod,
        /// Instead of timing, solve from the settled warm start to this
        /// relative residual (weighted) with jacobi and with apgd, and print
        /// the iterations each needs (at most --cap).
        #[arg(long, value_name = "TOL")]
        to_tolerance: Option<f64>,
        /// Most iterations of a --to-tolerance solve.
        #[arg(long, default_value_t = 20_000)]
        cap: usize,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Compare two runs' final.csv (e.g. GPU vs CPU): bulk quantities of the
    /// pile and per-particle differences; exit code 1 when a bulk quantity
    /// differs by more than --tol mean radii.
    Compare {
        /// First final.csv.
        a: PathBuf,
        /// Second final.csv.
        b: PathBuf,
        /// Allowed bulk difference, in mean grain radii.
        #[arg(long, allow_negative_numbers = true, default_value_t = 0.5)]
        tol: f64,
    },
    /// Measure the angle of repose of a saved run from DIR/final.csv and
    /// record it in DIR/summary.json.
    Measure {
        /// The run's output directory (with final.csv and summary.json).
        dir: PathBuf,
        /// Profile method: radial (a conical heap), or x / y (a planar heap
        /// whose cross-section runs along x / y). Default: as the run
        /// measured, else radial.
        #[arg(long, value_enum)]
        method: Option<MethodChoice>,
        /// Floor height (m). Default: as recorded in summary.json, else the
        /// lowest sphere bottom.
        #[arg(long, allow_negative_numbers = true)]
        floor: Option<f64>,
        /// Print the measurement as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Solve contact problems stored in Siconos' text format (`.dat`): print
    /// solver, iterations, seconds and the Siconos error; exit code 1 when
    /// not solved. With `--all DIR`, every problem under DIR with every
    /// method, as a table.
    Solve {
        /// The problem file (omit with --all).
        file: Option<PathBuf>,
        /// Solve every `.dat` file under this directory with every method.
        #[arg(long, value_name = "DIR", conflicts_with = "file")]
        all: Option<PathBuf>,
        /// The method: jacobi, apgd, pgs, fixed-point, extra-gradient,
        /// interior-point, or lemke (the direct method on the faceted LCP
        /// of a 3-D Coulomb problem). With --all every method runs alone,
        /// and this one once more with its --fallback.
        #[arg(long, default_value = "apgd")]
        solver: repose::solve::SolveMethod,
        /// lemke: directions of the friction polygon (≥ 3).
        #[arg(long, default_value_t = repose::solve::LEMKE_DIRECTIONS)]
        directions: usize,
        /// Relative error to reach (Siconos measure).
        #[arg(long, allow_negative_numbers = true, default_value_t = 1e-6)]
        tol: f64,
        /// Iterations at most.
        #[arg(long = "max-iter", default_value_t = 100_000)]
        max_iter: usize,
        /// Seconds at most per solve.
        #[arg(long = "time-limit", default_value_t = 60.0)]
        time_limit: f64,
        /// pgs: Anderson mixing over this many past residual checks (0:
        /// plain sweeps; the default, 5, turns the seed 001 hard problems'
        /// stalls into convergence: README, "Hard problems").
        #[arg(long, default_value_t = repose::solver::pgs::ANDERSON_DEPTH)]
        anderson: usize,
        /// A second method for a problem the first leaves unsolved, started
        /// from the first's answer, with its own --time-limit; the better
        /// answer is reported. Default: interior-point after any other
        /// iterative method (apgd then interior-point solves every problem
        /// of tests/data to 1e-6: README, "Hard problems"); `none` solves
        /// once. With --all, one more row per problem: --solver with its
        /// fallback.
        #[arg(long, value_name = "METHOD|none")]
        fallback: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check seed 004's existence criterion: whether a step's contact
    /// problem is guaranteed a solution (s ≥ 0) and robustly so (s > 0).
    /// INPUT: a RON incremental problem `IncrementalProblem(dim, dofs, h, w,
    /// mu)`, a Siconos `.dat` problem, or a scene with `--at-step N`.
    CheckExistence {
        /// The problem (`.ron` incremental problem, `.dat` Siconos problem)
        /// or, with `--at-step`, a scene.
        input: PathBuf,
        /// Run the scene this many steps and check the last step's problem.
        #[arg(long, value_name = "N")]
        at_step: Option<u64>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show what this build can do: version, threads, backends.
    Info,
}

/// What `repose bench` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum BenchFormulation {
    /// The complementarity solver's iterations.
    Complementarity,
    /// The penalty formulation's whole steps.
    Penalty,
}

/// `--method` of `repose measure`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum MethodChoice {
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

/// Mesa's Vulkan drivers (lavapipe among them) probe the Wayland window
/// system when an instance is made and print "error: XDG_RUNTIME_DIR is
/// invalid or not set in the environment." when there is no session
/// directory — harmless for repose, which opens no window, but alarming.
/// Without a usable one, point it at a private directory under the temp
/// dir (made with mode 0700). Runs first in `main`, before any thread.
fn headless_runtime_dir() {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        let usable = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .is_some_and(|d| d.is_dir());
        if usable {
            return;
        }
        let user = std::env::var("USER").unwrap_or_else(|_| "user".into());
        let dir = std::env::temp_dir().join(format!("repose-runtime-{user}"));
        if dir.is_dir() || std::fs::DirBuilder::new().mode(0o700).create(&dir).is_ok() {
            std::env::set_var("XDG_RUNTIME_DIR", &dir);
        }
    }
}

fn main() -> ExitCode {
    headless_runtime_dir();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
        .format_timestamp(None)
        .init();
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// The default sweep directory of a scene: `out/<name>_sweep/`.
fn default_sweep_dir(scene_name: &str) -> PathBuf {
    PathBuf::from("out").join(format!("{scene_name}_sweep"))
}

/// Prints the summary line and the files of a sweep or merge; exit code 2
/// when some runs failed.
fn report_sweep(r: &SweepReport, what: &str) -> ExitCode {
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

fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run {
            scene,
            resume,
            checkpoint_every,
            set,
            out,
            no_frames,
            no_picture,
            backend,
            solver,
            dump_problem,
            overwrite,
        } => {
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
                let mut overrides = set
                    .iter()
                    .map(|s| parse_set(s))
                    .collect::<Result<Vec<_>, _>>()?;
                if let Some(m) = solver {
                    overrides.push(("solver.method".into(), format!("{m:?}")));
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
                };
                let scene = scene
                    .ok_or_else(|| anyhow::anyhow!("a scene file or --resume DIR is needed"))?;
                run_file(&scene, &overrides, &opts)?
            };
            if s.formulation == "penalty" {
                println!(
                    "{}: {} steps, {:.3} s simulated in {:.1} s wall; mean {:.0} contacts per step",
                    s.scene, s.steps, s.simulated_time, s.wall_time_s, s.contacts.mean
                );
                println!(
                    "penalty: {} sub-steps ({:.1} per step); {:.3e} particle-steps/s all-in",
                    s.substeps,
                    s.substeps as f64 / s.steps.max(1) as f64,
                    s.particle_steps as f64 / s.wall_time_s.max(1e-9)
                );
            } else {
                println!(
                    "{}: {} steps, {:.3} s simulated in {:.1} s wall; mean {:.0} contacts and {:.1} iterations per step; final relative residual {:.2e}",
                    s.scene,
                    s.steps,
                    s.simulated_time,
                    s.wall_time_s,
                    s.contacts.mean,
                    s.solver.iterations_mean,
                    s.solver.residual_rel_final
                );
                println!(
                    "solver: {} of {} steps met the tolerance; {:.3e} contact-iterations/s all-in",
                    s.solver.steps - s.solver.steps_not_converged,
                    s.solver.steps,
                    s.solver.contact_iterations as f64 / s.wall_time_s.max(1e-9)
                );
                if s.solver.steps_fallback > 0 {
                    println!(
                        "solver.fallback ran on {} steps ({} of its iterations in all)",
                        s.solver.steps_fallback, s.solver.fallback_iterations_total
                    );
                }
            }
            if let Some(t) = s.extra.get("settling").and_then(|v| v.get("settle_time_s")) {
                if let Some(t) = t.as_f64() {
                    println!("settled at t = {t:.4} s");
                }
            }
            if let Some(a) = s.extra.get("angle_of_repose") {
                let num = |k: &str| a.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
                println!(
                    "angle of repose: {:.2}° ± {:.2}°; height {:.4} m, base radius {:.4} m",
                    num("angle_deg"),
                    num("angle_stderr_deg"),
                    num("height"),
                    num("base_radius")
                );
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
        Command::Sweep {
            scene,
            vary,
            seeds,
            jobs,
            shard,
            out,
            frames,
            rerun,
            backend,
            reference,
        } => {
            let spec = SweepSpec::parse(&vary, seeds)?;
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
            };
            let report = sweep::run_sweep(&prepared, &opts)?;
            Ok(report_sweep(
                &report,
                &format!("shard {shard} of the sweep"),
            ))
        }
        Command::Calibrate {
            scenes,
            params,
            ranges,
            targets,
            seeds,
            tol,
            max_evals,
            jobs,
            out,
            rerun,
            backend,
        } => {
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
        Command::Merge {
            dirs,
            out,
            reference,
        } => {
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
        Command::Render {
            dir,
            colour,
            out,
            width,
            height,
            look_along,
        } => {
            if !dir.is_dir() {
                anyhow::bail!(
                    "{}: not a directory (expected a run's output directory holding final.csv)",
                    dir.display()
                );
            }
            let img = repose::render::render_output_dir(&dir, colour, look_along, width, height)?;
            let path = out.unwrap_or_else(|| dir.join("final.png"));
            repose::render::write_png(&path, &img)?;
            println!("{}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Validate { backend } => {
            let (_, why) = open_backend(backend)?;
            println!("backend {why}");
            let mk = || {
                Stepper::with_backend(
                    open_backend(backend)
                        .expect("backend opened once already")
                        .0,
                )
            };
            let mut checks = repose::validate::run_all(&mk);
            if matches!(backend, BackendChoice::Cpu) {
                checks.extend(repose::validate::penalty::run_all());
            } else {
                println!(
                    "(the penalty formulation's cases run on the cpu backend only: repose validate --backend cpu)"
                );
            }
            let mut failed = 0;
            for c in &checks {
                let tag = if c.passed() { "pass" } else { "FAIL" };
                if !c.passed() {
                    failed += 1;
                }
                println!("{tag}  {c}");
            }
            println!("{} passed, {} failed", checks.len() - failed, failed);
            Ok(if failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Bench {
            backend,
            formulation,
            scene,
            warm_up,
            steps,
            iterations,
            solver,
            to_tolerance,
            cap,
            json,
        } => {
            if formulation == BenchFormulation::Penalty {
                if !matches!(backend, BackendChoice::Auto | BackendChoice::Cpu) {
                    anyhow::bail!("--backend {backend:?}: the penalty formulation runs on the cpu backend only");
                }
                if steps == 0 {
                    anyhow::bail!("--steps 0: time at least one step");
                }
                let scene = scene.unwrap_or_else(|| PathBuf::from("scenes/bench_penalty_bed.ron"));
                log::info!("warming {} up for {warm_up} steps…", scene.display());
                let mut w = repose::bench::penalty::warm_world(&scene, warm_up)?;
                let r = repose::bench::penalty::time_steps(&mut w, steps)?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&r)?);
                } else {
                    println!("{r}");
                }
                return Ok(ExitCode::SUCCESS);
            }
            let scene = scene.unwrap_or_else(|| PathBuf::from("scenes/bench_pile_large.ron"));
            let (mut b, why) = open_backend(backend)?;
            log::info!("backend {why}");
            log::info!("settling {} for 3 steps on the CPU…", scene.display());
            let (problem, gamma) = repose::bench::prepare(&scene, 3)?;
            if let Some(tol) = to_tolerance {
                for method in [SolverMethod::Jacobi, SolverMethod::Apgd] {
                    let st =
                        repose::bench::iterations_to(&mut b, &problem, &gamma, method, tol, cap)?;
                    println!(
                        "{}: {method} {} {} iterations to {tol:e} (relative residual {:.3e}; {} contacts)",
                        b.describe(),
                        if st.converged { "needs" } else { "did not converge in" },
                        st.iterations,
                        st.residual_rel,
                        problem.n_contacts()
                    );
                }
                return Ok(ExitCode::SUCCESS);
            }
            let r = repose::bench::bench_solver(&mut b, &problem, &gamma, iterations, 5, solver)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                println!("{r}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::CheckExistence {
            input,
            at_step,
            json,
        } => {
            use repose::existence;
            let file = input.display();
            let (problem, what) = if let Some(n) = at_step {
                if n == 0 {
                    anyhow::bail!("--at-step 0: the first step is 1");
                }
                let scene = repose::scene::Scene::load(&input, &[])?;
                if !matches!(
                    scene.formulation,
                    repose::formulation::Formulation::Complementarity
                ) {
                    anyhow::bail!("{file}: the existence criterion is about the complementarity formulation's step problem; this scene uses `formulation: Penalty`");
                }
                let mut world = scene.build()?;
                let mut st = Stepper::new();
                for k in 1..=n {
                    st.step(&mut world)
                        .map_err(|e| anyhow::anyhow!("{file}: step {k} of {n}: {e}"))?;
                }
                (
                    existence::from_contact_problem(&st.last_problem),
                    format!("{file}, step {n}"),
                )
            } else if input.extension().is_some_and(|e| e == "dat") {
                let p = repose::siconos::SiconosProblem::read(&input)?;
                (
                    existence::from_siconos(&p),
                    format!("{file} (reduced form W, q)"),
                )
            } else {
                (
                    existence::read_ron(&input).map_err(|e| anyhow::anyhow!(e))?,
                    format!("{file}"),
                )
            };
            let r = if problem.n_contacts() == 0 {
                existence::ExistenceReport {
                    s: f64::INFINITY,
                    guaranteed: true,
                    robust: true,
                    status: "no contacts".into(),
                }
            } else {
                existence::check(&problem)
            };
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                println!(
                    "{what}: {} contacts, d = {}; s = {:.6e} (capped at 1; solver: {}): {}",
                    problem.n_contacts(),
                    problem.dim,
                    r.s,
                    r.status,
                    if r.robust {
                        "a solution exists, robustly (s > 0)"
                    } else if r.guaranteed {
                        "a solution exists (s = 0: not robust to small changes)"
                    } else if r.s.is_nan() {
                        "the solver failed: no answer"
                    } else {
                        "condition (A) fails (s < 0): a solution is not guaranteed"
                    }
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare { a, b, tol } => {
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
        Command::Measure {
            dir,
            method,
            floor,
            json,
        } => {
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
        Command::Solve {
            file,
            all,
            solver,
            directions,
            tol,
            max_iter,
            time_limit,
            anderson,
            fallback,
            json,
        } => {
            use repose::solve::{
                lemke_refuses, problem_files, problem_name, solve_lemke, solve_problem, table,
                SolveMethod, SolveOptions, SolveReport,
            };
            if directions < 3 {
                anyhow::bail!("--directions must be ≥ 3 (got {directions})");
            }
            if tol.is_nan()
                || tol <= 0.0
                || max_iter == 0
                || time_limit.is_nan()
                || time_limit <= 0.0
            {
                anyhow::bail!("--tol and --time-limit must be > 0 and --max-iter ≥ 1");
            }
            if let Err(why) = repose::solver::pgs::check_depth(anderson) {
                anyhow::bail!("--anderson {why}");
            }
            let fallback = match (fallback.as_deref(), solver) {
                (None, SolveMethod::Iterative(_)) => Some(SolverMethod::InteriorPoint),
                (None | Some("none"), _) => None,
                (Some(_), SolveMethod::Lemke { .. }) => {
                    anyhow::bail!("--fallback: lemke is a direct method; it takes none")
                }
                (Some(name), _) => Some(SolverMethod::from_name(name).ok_or_else(|| {
                    let names: Vec<&str> = SolverMethod::ALL.iter().map(|m| m.name()).collect();
                    anyhow::anyhow!(
                        "--fallback: unknown method {name:?}; one of {}, none",
                        names.join(", ")
                    )
                })?),
            };
            // A method is not its own fallback (`solver::solve` would not
            // run it twice): say so once, here.
            let fallback =
                fallback.filter(|&f| !matches!(solver, SolveMethod::Iterative(m) if m == f));
            let opts = |method, fallback| SolveOptions {
                method,
                tolerance: tol,
                max_iterations: max_iter,
                time_limit,
                anderson,
                fallback,
            };
            let mut rows = Vec::new();
            match (file, all) {
                (Some(f), None) => {
                    let p = repose::siconos::SiconosProblem::read(&f)?;
                    let name = f.display().to_string();
                    match solver {
                        SolveMethod::Iterative(m) => {
                            rows.push(solve_problem(&p, &name, &opts(m, fallback)));
                        }
                        SolveMethod::Lemke { .. } => {
                            if let Some(why) = lemke_refuses(&p, directions) {
                                anyhow::bail!("{name}: {why}");
                            }
                            rows.push(solve_lemke(&p, &name, directions, tol));
                        }
                    }
                }
                (None, Some(dir)) => {
                    let files = problem_files(&dir)
                        .map_err(|e| anyhow::anyhow!("{}: cannot list: {e}", dir.display()))?;
                    if files.is_empty() {
                        anyhow::bail!("{}: no .dat files found", dir.display());
                    }
                    for f in files {
                        let name = problem_name(&dir, &f);
                        // A bad file is a row of the table; the others go on.
                        let p = match repose::siconos::SiconosProblem::read(&f) {
                            Ok(p) => p,
                            Err(e) => {
                                log::warn!("{name}: cannot read: {e}");
                                rows.push(SolveReport::unreadable(&name, e.to_string()));
                                continue;
                            }
                        };
                        // Every method alone, then --solver with its
                        // fallback when one is given.
                        let chain = match (solver, fallback) {
                            (SolveMethod::Iterative(m), Some(f)) => Some((m, f)),
                            _ => None,
                        };
                        let alone = SolverMethod::ALL.iter().map(|&m| (m, None));
                        for (m, f) in alone.chain(chain.map(|(m, f)| (m, Some(f)))) {
                            let r = solve_problem(&p, &name, &opts(m, f));
                            log::info!(
                                "{name}: {}: {} iterations, {:.3} s, relative error {:.2e}",
                                r.solver,
                                r.iterations,
                                r.seconds,
                                r.error_rel
                            );
                            rows.push(r);
                        }
                        // The direct method where it applies (3-D Coulomb,
                        // small enough for a dense tableau).
                        if lemke_refuses(&p, directions).is_none() {
                            rows.push(solve_lemke(&p, &name, directions, tol));
                        }
                    }
                }
                _ => anyhow::bail!("give a problem file or --all DIR"),
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else {
                print!("{}", table(&rows));
            }
            // One file: solved or not. --all: every problem solved by some method.
            let mut problems: Vec<&str> = rows.iter().map(|r| r.problem.as_str()).collect();
            problems.dedup();
            let unsolved: Vec<&str> = problems
                .into_iter()
                .filter(|p| !rows.iter().any(|r| r.problem == *p && r.converged))
                .collect();
            if !unsolved.is_empty() {
                eprintln!("not solved to {tol:e}: {}", unsolved.join(", "));
                return Ok(ExitCode::from(1));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Info => {
            println!("repose {}", env!("CARGO_PKG_VERSION"));
            println!("CPU threads (rayon): {}", rayon::current_num_threads());
            println!("backends: cpu (f64, every method), cpu-f32 (mirror of the GPU solvers), gpu (WGSL, wgpu: jacobi and apgd)");
            let adapters = repose::gpu::GpuContext::list_adapters();
            if adapters.is_empty() {
                println!("GPU adapters: none (install mesa-vulkan-drivers for lavapipe; set WGPU_BACKEND=vulkan)");
            }
            for a in adapters {
                println!("GPU adapter: {a}");
            }
            match repose::gpu::GpuContext::try_new() {
                Some(ctx) => {
                    println!("--backend auto would use: {}", ctx.describe());
                    println!("enabled features: {:?}", ctx.device.features());
                }
                None => println!("--backend auto would use: cpu"),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
