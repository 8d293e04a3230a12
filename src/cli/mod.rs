//! The command line of `repose`: its subcommands and their help text
//! (clap), one file per command (`cli/run.rs`, `cli/sweep.rs`, …), each
//! with its arguments and an `exec` that checks them, calls the library
//! and prints what it returns. This file holds what several commands share:
//! the options of every run of a study, the solver's names and the
//! overrides they stand for. `main.rs` only parses and hands over
//! ([`dispatch`]).

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use repose::scene::parse_set;
use repose::solver::{ResidualMeasure, SolverMethod};

mod bench;
mod calibrate;
mod check_existence;
mod compare;
mod info;
mod measure;
mod merge;
mod render;
mod run;
mod solve;
mod sweep;
mod validate;

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
    Run(run::RunArgs),
    /// Run a scene over a grid of parameter values and seeds: DIR/sweep.csv
    /// (one row per run), DIR/sweep.png (angle vs the first varied
    /// parameter), DIR/contact_sheet.png and `DIR/runs/<run>/`. Exit code 2
    /// when some runs failed (their rows say why).
    Sweep(sweep::SweepArgs),
    /// Find the parameter values whose simulated angles meet measured ones:
    /// one scene and one parameter (`--param materials.0.rolling --range
    /// 0:0.005 --target-angle 32`), or one scene per parameter (a heap and a
    /// drum for μ and ρ; `--target-angle` once per scene, in order).
    /// Writes DIR/calibrate.csv, calibrate.json, calibrate.png and the runs
    /// under DIR/runs/. Exit code 3 when the target is out of reach or the
    /// targets are ambiguous, 4 when the budget ran out.
    Calibrate(calibrate::CalibrateArgs),
    /// Join the directories of a sharded sweep (checked to be shards of one
    /// sweep, every run present once) into one sweep.csv, sweep.png and
    /// contact_sheet.png.
    Merge(merge::MergeArgs),
    /// Render a run's final.csv as a picture (side and top view of the
    /// spheres): DIR/final.png unless --out.
    Render(render::RenderArgs),
    /// Run the built-in analytic validation cases and print measured vs expected.
    Validate(validate::ValidateArgs),
    /// Benchmark a solver backend: contact-iterations per second and its
    /// share of the device's memory-copy bandwidth; or, with `--formulation
    /// penalty`, the penalty formulation's particle-steps per second.
    Bench(bench::BenchArgs),
    /// Compare two runs' final.csv (e.g. GPU vs CPU): bulk quantities of the
    /// pile and per-particle differences; exit code 1 when a bulk quantity
    /// differs by more than --tol mean radii.
    Compare(compare::CompareArgs),
    /// Measure the angle of repose of a saved run from DIR/final.csv and
    /// record it in DIR/summary.json.
    Measure(measure::MeasureArgs),
    /// Solve contact problems stored in Siconos' text format (`.dat`): print
    /// solver, iterations, seconds and the Siconos error; exit code 1 when
    /// not solved. With `--all DIR`, every problem under DIR with every
    /// method, as a table.
    Solve(solve::SolveArgs),
    /// Check Acary & Cadoux 2011's existence criterion: whether a step's contact
    /// problem is guaranteed a solution (s ≥ 0) and robustly so (s > 0).
    /// INPUT: a RON incremental problem `IncrementalProblem(dim, dofs, h, w,
    /// mu)`, a Siconos `.dat` problem, or a scene with `--at-step N`.
    CheckExistence(check_existence::CheckExistenceArgs),
    /// Show what this build can do: version, threads, backends.
    Info,
    /// Print this command line's reference as Markdown (docs/cli.md is its
    /// output; a test fails when the two differ).
    #[command(hide = true)]
    MarkdownHelp,
}

/// Runs the command `cli` names; the exit code says how it ended.
pub(crate) fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run(a) => run::exec(a),
        Command::Sweep(a) => sweep::exec(a),
        Command::Calibrate(a) => calibrate::exec(a),
        Command::Merge(a) => merge::exec(a),
        Command::Render(a) => render::exec(a),
        Command::Validate(a) => validate::exec(a),
        Command::Bench(a) => bench::exec(a),
        Command::Compare(a) => compare::exec(a),
        Command::Measure(a) => measure::exec(a),
        Command::Solve(a) => solve::exec(a),
        Command::CheckExistence(a) => check_existence::exec(a),
        Command::Info => info::exec(),
        Command::MarkdownHelp => {
            let options = clap_markdown::MarkdownOptions::new()
                .title("Command-line reference".to_string())
                .show_footer(false)
                .show_table_of_contents(true);
            print!("{}", clap_markdown::help_markdown_custom::<Cli>(&options));
            Ok(ExitCode::SUCCESS)
        }
    }
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

/// The overrides that `--set` (each `PATH=VALUE`), `--solver` and
/// `--fallback METHOD|none` stand for, in that order.
fn scene_overrides(
    set: &[String],
    solver: Option<SolverMethod>,
    fallback: Option<&str>,
) -> anyhow::Result<Vec<(String, String)>> {
    let mut overrides = set
        .iter()
        .map(|s| parse_set(s))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(m) = solver {
        overrides.push(("solver.method".into(), format!("{m:?}")));
    }
    if let Some(name) = fallback {
        let value = match name {
            "none" => "None".to_string(),
            _ => format!("Some({:?})", method_named("--fallback", name)?),
        };
        overrides.push(("solver.fallback".into(), value));
    }
    Ok(overrides)
}

/// The overrides of a sweep's or calibration's [`EveryRun`] options.
fn every_run_overrides(e: &EveryRun) -> anyhow::Result<Vec<(String, String)>> {
    scene_overrides(
        &e.set,
        e.solver.map(SolverMethod::from),
        e.fallback.as_deref(),
    )
}

/// The method a `--fallback`-style option names (`SolverMethod::name`), or
/// an error listing the names.
fn method_named(option: &str, name: &str) -> Result<SolverMethod> {
    SolverMethod::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = SolverMethod::ALL.iter().map(|m| m.name()).collect();
        anyhow::anyhow!(
            "{option}: unknown method {name:?}; one of {}, none",
            names.join(", ")
        )
    })
}
