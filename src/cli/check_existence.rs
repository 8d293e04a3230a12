//! `repose check-existence`: Acary & Cadoux 2011's existence criterion on
//! a stored problem or a scene's step.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use repose::step::Stepper;

/// The arguments of `repose check-existence` (its help: the `Command` variant).
#[derive(clap::Args)]
pub(crate) struct CheckExistenceArgs {
    /// The problem (`.ron` incremental problem, `.dat` Siconos problem)
    /// or, with `--at-step`, a scene.
    pub(crate) input: PathBuf,
    /// Run the scene this many steps and check the last step's problem.
    #[arg(long, value_name = "N")]
    pub(crate) at_step: Option<u64>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Runs `repose check-existence`; the exit code says how it ended.
pub(crate) fn exec(args: CheckExistenceArgs) -> Result<ExitCode> {
    let CheckExistenceArgs {
        input,
        at_step,
        json,
    } = args;
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
            existence::from_contact_problem(st.last_problem()),
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
