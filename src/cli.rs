//! The command line of `repose`: its subcommands, their arguments and
//! their help text (clap). What each command does is in `main.rs`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use repose::analysis::{Axis, HeapMethod};
use repose::run::BackendChoice;
use repose::scene::{ColourBy, LookAlong};
use repose::solver::{ResidualMeasure, SolverMethod};

/// What every run of a sweep or a calibration takes alike (`repose run`
/// has the same options, with its own help).
#[derive(clap::Args, Debug)]
pub(crate) struct EveryRun {
    /// Override a field in every run, e.g. `--set duration=10`
    /// (repeatable; not a varied or calibrated path).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub(crate) set: Vec<String>,
    /// Solver method of every run (overrides the scene's `solver.method`).
    #[arg(long, value_enum)]
    pub(crate) solver: Option<MethodArg>,
    /// A second method for the steps the first leaves unconverged, in
    /// every run (overrides the scene's `solver.fallback`; `none` turns it
    /// off). CPU backend.
    #[arg(long, value_name = "METHOD|none")]
    pub(crate) fallback: Option<String>,
}

/// Granular dynamics with nonsmooth contact: sliding, rolling and spinning
/// friction in one 6-D cone per contact.
#[derive(Parser)]
#[command(name = "repose", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Simulate a scene file and write frames, final.csv, final.png and summary.json.
    Run {
        /// The scene file (RON). Several are stepped together in one batch
        /// on a GPU backend (`--backend gpu`, or `auto` on a hardware GPU;
        /// one after another otherwise), each into `OUT/<scene name>` with
        /// --out, else its default directory.
        #[arg(required_unless_present = "resume", num_args = 1..)]
        scene: Vec<PathBuf>,
        /// Continue the run whose output directory is DIR from its
        /// checkpoint (DIR/checkpoint.bin), with the scene and options it was
        /// started with; on the cpu backend the result is bit-identical to
        /// an uninterrupted run.
        #[arg(
            long,
            value_name = "DIR",
            conflicts_with_all = ["scene", "set", "out", "no_frames", "no_picture", "solver", "fallback", "dump_problem", "overwrite", "checkpoint_every"]
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
        /// Output directory (default: `out/<scene name>/`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write no VTU frames.
        #[arg(long)]
        no_frames: bool,
        /// Also write each frame's contacts: contacts_NNNNN.vtu (lines
        /// between bodies: force chains; contacts.pvd) and
        /// contacts_NNNNN.csv (points, normals, forces, torques). Sets the
        /// scene's `output.contacts`.
        #[arg(long)]
        contacts: bool,
        /// Write no final.png (overrides the scene's output.picture.enabled).
        #[arg(long)]
        no_picture: bool,
        /// Solver backend: auto = a hardware GPU for scenes of 2,000 bodies
        /// or more that its solvers can run, else the CPU (with --resume:
        /// the backend the run started with).
        #[arg(long, value_enum)]
        backend: Option<BackendChoice>,
        /// Solver method (overrides the scene's `solver.method`).
        #[arg(long, value_enum)]
        solver: Option<MethodArg>,
        /// A second method for the steps the first leaves above its
        /// tolerance, started from the first's answer; the better answer
        /// is kept (overrides the scene's `solver.fallback`; `none` turns it
        /// off). CPU backend. E.g. `--solver interior-point --fallback pgs`
        /// for the sphere piles of Acary & Bourrier 2021 at μ_r ≥ 0.1 m
        /// (docs/solvers.md).
        #[arg(long, value_name = "METHOD|none")]
        fallback: Option<String>,
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
    /// parameter), DIR/contact_sheet.png and `DIR/runs/<run>/`. Exit code 2
    /// when some runs failed (their rows say why).
    Sweep {
        /// The scene file (RON).
        scene: PathBuf,
        /// A varied parameter: `path=a:b:n` (n values from a to b inclusive)
        /// or `path=v1,v2,…` (repeatable; several make a grid, the first
        /// varying slowest).
        #[arg(long = "vary", value_name = "PATH=SPEC", required = true)]
        vary: Vec<String>,
        #[command(flatten)]
        every_run: EveryRun,
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
        /// The sweep directory (default: `out/<scene name>_sweep/`).
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
        /// Runs stepped together on one GPU, one solve per step for all
        /// (each run's files as when it runs alone). It pays on a hardware
        /// GPU, where a solve's fixed cost outweighs the work of a pile of
        /// thousands of contacts; on a software adapter (lavapipe) or the
        /// CPU it gains little. Default: every run of the shard (up to 64)
        /// on a hardware GPU, else 1 (one at a time, --jobs at once).
        #[arg(long, value_name = "K")]
        batch: Option<usize>,
        /// Draw reference data over the plots: CSV with the parameter's
        /// value first, then columns named angle_deg, height_over_diameter
        /// or bottom_mean_radius_over_diameter (optional `<column>_err` and
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
        #[command(flatten)]
        every_run: EveryRun,
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
        /// Where the joined files go (default: `out/<scene name>_sweep/`).
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
        /// Draw the force chains of the last frame instead (a run made with
        /// --contacts): a side view of a slice through the bodies, each
        /// loaded contact a line as thick and bright as its normal force;
        /// written to DIR/force_chains.png unless --out says otherwise.
        #[arg(long)]
        force_chains: bool,
        /// With --force-chains: half the thickness of the slice drawn (m;
        /// default two mean radii).
        #[arg(long, requires = "force_chains")]
        slice: Option<f64>,
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
        #[arg(long, value_enum, default_value_t = MethodArg::Jacobi)]
        solver: MethodArg,
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
        /// interior-point, newton, or lemke (the direct method on the faceted LCP
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
        /// plain sweeps; the default, 5, turns the stalls on the hard
        /// problems of Acary & Bourrier 2021's piles into convergence:
        /// docs/solvers.md, "Hard problems").
        #[arg(long, default_value_t = repose::solver::pgs::ANDERSON_DEPTH)]
        anderson: usize,
        /// A second method for a problem the first leaves unsolved, started
        /// from the first's answer, with its own --time-limit; the better
        /// answer is reported. Default: interior-point after any other
        /// iterative method (apgd then interior-point solves every problem
        /// of tests/data to 1e-6: docs/solvers.md, "Hard problems"); `none` solves
        /// once. With --all, one more row per problem: --solver with its
        /// fallback.
        #[arg(long, value_name = "METHOD|none")]
        fallback: Option<String>,
        /// The residual the solver stops on: siconos (Siconos' relative
        /// error, so that figures compare with Siconos'), weighted (a run's
        /// default `solver.residual`: the test a run applied to a problem
        /// it dumped with `repose run --dump-problem`), or contact. With
        /// weighted or contact, "solved" is the solver's own test (`--json`
        /// gives its residual) and the error columns stay Siconos'.
        #[arg(long, value_enum, default_value_t = MeasureArg::Siconos)]
        measure: MeasureArg,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check Acary & Cadoux 2011's existence criterion: whether a step's contact
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
    /// Print this command line's reference as Markdown (docs/cli.md is its
    /// output; a test fails when the two differ).
    #[command(hide = true)]
    MarkdownHelp,
}

/// `--solver`: the contact solver's methods as the command line offers
/// them, each the [`SolverMethod`] of the same name (the solver's own
/// enum stays free of the argument parser; its docs say the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum MethodArg {
    /// Projected Jacobi (Tasora & Anitescu 2013, eq. 46); runs on every
    /// backend.
    Jacobi,
    /// Accelerated projected gradient descent with adaptive step and restart
    /// (on the gpu and cpu-f32 backends with a fixed step and a restart when
    /// the residual grew between two checks: docs/gpu-design.md). The
    /// default: what docs/solvers.md recommends for a new scene.
    Apgd,
    /// Projected block Gauss–Seidel (Acary & Bourrier 2021, §5.2), CPU only.
    Pgs,
    /// Projected fixed point with self-adaptive step (Acary & Bourrier
    /// 2021, eq. 64), CPU only.
    FixedPoint,
    /// Extra-gradient with self-adaptive step (Acary & Bourrier 2021,
    /// eq. 65), CPU only.
    ExtraGradient,
    /// Primal–dual interior point on the conic QP (De Saxcé: the shift
    /// updated at every Newton step; clarabel as its fallback), CPU only.
    InteriorPoint,
    /// Semismooth Newton on all contacts at once (the natural map, or
    /// Alart–Curnier's under De Saxcé's law; one sparse LU a step), CPU
    /// only.
    Newton,
}

impl From<MethodArg> for SolverMethod {
    fn from(m: MethodArg) -> Self {
        match m {
            MethodArg::Jacobi => SolverMethod::Jacobi,
            MethodArg::Apgd => SolverMethod::Apgd,
            MethodArg::Pgs => SolverMethod::Pgs,
            MethodArg::FixedPoint => SolverMethod::FixedPoint,
            MethodArg::ExtraGradient => SolverMethod::ExtraGradient,
            MethodArg::InteriorPoint => SolverMethod::InteriorPoint,
            MethodArg::Newton => SolverMethod::Newton,
        }
    }
}

/// `--measure`: the residual measures as the command line offers them,
/// each the [`ResidualMeasure`] of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum MeasureArg {
    /// ‖γ − Π(γ − C ŷ)‖ / max(‖γ‖, ‖C ŷ‖) with C the contacts' effective
    /// masses: impulses against impulses, so one
    /// contact left holding a stale impulse is not hidden by fast contacts
    /// elsewhere. A run's default, on every backend (the GPU's residual pass
    /// and the cpu-f32 mirror weight by the same b_f).
    Weighted,
    /// ‖γ − Π(γ − ŷ)‖ / max(‖γ‖, ‖Nγ + r‖), unweighted. It adds impulses
    /// to velocities, so a scene with fast contacts can pass it with a
    /// stale impulse left in.
    Contact,
    /// max(‖r‖, ‖γ‖, ‖Nγ + r‖), the measure of Siconos' test suite
    /// (`tests/data/siconos/README.md`), so that figures compare. The GPU
    /// and cpu-f32 backends, whose records do not hold ‖r‖, use
    /// the unweighted `contact` measure when asked for this one.
    Siconos,
}

impl From<MeasureArg> for ResidualMeasure {
    fn from(m: MeasureArg) -> Self {
        match m {
            MeasureArg::Weighted => ResidualMeasure::Weighted,
            MeasureArg::Contact => ResidualMeasure::Contact,
            MeasureArg::Siconos => ResidualMeasure::Siconos,
        }
    }
}

/// What `repose bench` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum BenchFormulation {
    /// The complementarity solver's iterations.
    Complementarity,
    /// The penalty formulation's whole steps.
    Penalty,
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
