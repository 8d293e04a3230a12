//! `repose solve`: solve contact problems stored in Siconos' format, one
//! or a directory's, and print the table.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use repose::solve::{
    lemke_refuses, solve_all, solve_lemke, solve_problem, table, unsolved, SolveMethod,
    SolveOptions,
};
use repose::solver::SolverMethod;

use super::{method_named, MeasureArg};

/// The arguments of `repose solve` (its help: the `Command` variant).
#[derive(clap::Args)]
pub(crate) struct SolveArgs {
    /// The problem file (omit with --all).
    pub(crate) file: Option<PathBuf>,
    /// Solve every `.dat` file under this directory with every method.
    #[arg(long, value_name = "DIR", conflicts_with = "file")]
    pub(crate) all: Option<PathBuf>,
    /// The method: jacobi, apgd, pgs, fixed-point, extra-gradient,
    /// interior-point, newton, or lemke (the direct method on the faceted LCP
    /// of a 3-D Coulomb problem). With --all every method runs alone,
    /// and this one once more with its --fallback.
    #[arg(long, default_value = "apgd")]
    pub(crate) solver: repose::solve::SolveMethod,
    /// lemke: directions of the friction polygon (≥ 3).
    #[arg(long, default_value_t = repose::solve::LEMKE_DIRECTIONS)]
    pub(crate) directions: usize,
    /// Relative error to reach (Siconos measure).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1e-6)]
    pub(crate) tol: f64,
    /// Iterations at most.
    #[arg(long = "max-iter", default_value_t = 100_000)]
    pub(crate) max_iter: usize,
    /// Seconds at most per solve.
    #[arg(long = "time-limit", default_value_t = 60.0)]
    pub(crate) time_limit: f64,
    /// pgs: Anderson mixing over this many past residual checks (0:
    /// plain sweeps; the default, 5, turns the stalls on the hard
    /// problems of Acary & Bourrier 2021's piles into convergence:
    /// docs/solvers.md, "Hard problems").
    #[arg(long, default_value_t = repose::solver::pgs::ANDERSON_DEPTH)]
    pub(crate) anderson: usize,
    /// A second method for a problem the first leaves unsolved, started
    /// from the first's answer, with its own --time-limit; the better
    /// answer is reported. Default: interior-point after any other
    /// iterative method (apgd then interior-point solves every problem
    /// of tests/data to 1e-6: docs/solvers.md, "Hard problems"); `none` solves
    /// once. With --all, one more row per problem: --solver with its
    /// fallback.
    #[arg(long, value_name = "METHOD|none")]
    pub(crate) fallback: Option<String>,
    /// The residual the solver stops on: siconos (Siconos' relative
    /// error, so that figures compare with Siconos'), weighted (a run's
    /// default `solver.residual`: the test a run applied to a problem
    /// it dumped with `repose run --dump-problem`), or contact. With
    /// weighted or contact, "solved" is the solver's own test (`--json`
    /// gives its residual) and the error columns stay Siconos'.
    #[arg(long, value_enum, default_value_t = MeasureArg::Siconos)]
    pub(crate) measure: MeasureArg,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Runs `repose solve`; the exit code says how it ended.
pub(crate) fn exec(args: SolveArgs) -> Result<ExitCode> {
    let SolveArgs {
        file,
        all,
        solver,
        directions,
        tol,
        max_iter,
        time_limit,
        anderson,
        fallback,
        measure,
        json,
    } = args;
    if directions < 3 {
        anyhow::bail!("--directions must be ≥ 3 (got {directions})");
    }
    if tol.is_nan() || tol <= 0.0 || max_iter == 0 || time_limit.is_nan() || time_limit <= 0.0 {
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
        (Some(name), _) => Some(method_named("--fallback", name)?),
    };
    // A method is not its own fallback (`solver::solve` would not
    // run it twice): say so once, here.
    let fallback = fallback.filter(|&f| !matches!(solver, SolveMethod::Iterative(m) if m == f));
    let measure = repose::solver::ResidualMeasure::from(measure);
    if measure != repose::solver::ResidualMeasure::Siconos
        && matches!(solver, SolveMethod::Lemke { .. })
    {
        anyhow::bail!(
            "--measure: lemke is a direct method and does not stop on a residual; \
             its \"solved\" is Siconos' error"
        );
    }
    let opts = |method, fallback| SolveOptions {
        method,
        tolerance: tol,
        max_iterations: max_iter,
        time_limit,
        anderson,
        fallback,
        measure,
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
            let chain = match (solver, fallback) {
                (SolveMethod::Iterative(m), Some(f)) => Some((m, f)),
                _ => None,
            };
            rows = solve_all(&dir, chain, directions, &opts(SolverMethod::Apgd, None))
                .map_err(anyhow::Error::msg)?;
        }
        _ => anyhow::bail!("give a problem file or --all DIR"),
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", table(&rows));
    }
    // One file: solved or not. --all: every problem solved by some method.
    let unsolved = unsolved(&rows);
    if !unsolved.is_empty() {
        eprintln!("not solved to {tol:e}: {}", unsolved.join(", "));
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
