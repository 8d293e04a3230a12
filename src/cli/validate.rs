//! `repose validate`: run the built-in analytic cases on a backend and
//! print measured against expected.

use std::process::ExitCode;

use anyhow::Result;

use repose::run::{open_backend, BackendChoice};
use repose::step::Stepper;

/// The arguments of `repose validate` (its help: the `Command` variant).
#[derive(clap::Args)]
pub(crate) struct ValidateArgs {
    /// Solver backend to validate.
    #[arg(long, value_enum, default_value_t = BackendChoice::Cpu)]
    pub(crate) backend: BackendChoice,
}

/// Runs `repose validate`; the exit code says how it ended.
pub(crate) fn exec(args: ValidateArgs) -> Result<ExitCode> {
    let ValidateArgs { backend } = args;
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
