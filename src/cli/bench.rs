//! `repose bench`: time the complementarity solver on a settled pile's
//! problem, or whole steps of the penalty formulation.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use repose::run::{open_backend, BackendChoice};
use repose::solver::SolverMethod;
use repose::step::Backend;

use super::MethodArg;

/// The arguments of `repose bench` (its help: the `Command` variant).
#[derive(clap::Args)]
pub(crate) struct BenchArgs {
    /// Solver backend to benchmark (complementarity).
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub(crate) backend: BackendChoice,
    /// What is timed: the complementarity solver on a settled pile's
    /// contact problem, or whole penalty steps of a settling bed.
    #[arg(long, value_enum, default_value_t = BenchFormulation::Complementarity)]
    pub(crate) formulation: BenchFormulation,
    /// The scene (default scenes/bench_pile_large.ron; with `--formulation
    /// penalty` scenes/bench_penalty_bed.ron).
    #[arg(long)]
    pub(crate) scene: Option<PathBuf>,
    /// Penalty: scene steps before timing.
    #[arg(long, default_value_t = 100)]
    pub(crate) warm_up: usize,
    /// Penalty: scene steps timed.
    #[arg(long, default_value_t = 20)]
    pub(crate) steps: usize,
    /// Iterations per timed solve.
    #[arg(long, default_value_t = 100)]
    pub(crate) iterations: usize,
    /// The method timed: jacobi (every backend) or apgd (cpu: f64 APGD;
    /// cpu-f32 and gpu: the GPU's APGD).
    #[arg(long, value_enum, default_value_t = MethodArg::Jacobi)]
    pub(crate) solver: MethodArg,
    /// Instead of timing, solve from the settled warm start to this
    /// relative residual (weighted) with jacobi and with apgd, and print
    /// the iterations each needs (at most --cap).
    #[arg(long, value_name = "TOL")]
    pub(crate) to_tolerance: Option<f64>,
    /// Most iterations of a --to-tolerance solve.
    #[arg(long, default_value_t = 20_000)]
    pub(crate) cap: usize,
    /// Print the result as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Runs `repose bench`; the exit code says how it ended.
pub(crate) fn exec(args: BenchArgs) -> Result<ExitCode> {
    let BenchArgs {
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
    } = args;
    if formulation == BenchFormulation::Penalty {
        if !matches!(backend, BackendChoice::Auto | BackendChoice::Cpu) {
            anyhow::bail!(
                "--backend {backend:?}: the penalty formulation runs on the cpu backend only"
            );
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
            let st = repose::bench::iterations_to(&mut b, &problem, &gamma, method, tol, cap)?;
            println!(
                "{}: {method} {} {} iterations to {tol:e} (relative residual {:.3e}; {} contacts)",
                b.describe(),
                if st.converged {
                    "needs"
                } else {
                    "did not converge in"
                },
                st.iterations,
                st.residual_rel,
                problem.n_contacts()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut r =
        repose::bench::bench_solver(&mut b, &problem, &gamma, iterations, 5, solver.into())?;
    if matches!(b, Backend::Gpu(_)) && problem.n_contacts() > 20_000 {
        log::info!(
            "timing one iteration on {} too…",
            repose::bench::SMALL_SCENE
        );
        r.small = Some(repose::bench::small_fixed_cost(
            &mut b,
            iterations,
            5,
            solver.into(),
        )?);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        println!("{r}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What `repose bench` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum BenchFormulation {
    /// The complementarity solver's iterations.
    Complementarity,
    /// The penalty formulation's whole steps.
    Penalty,
}
