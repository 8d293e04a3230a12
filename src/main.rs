//! The `repose` command-line program: sets up logging, parses the command
//! line (`cli/`, one file per command) and hands it over; an error is
//! printed with its causes and ends the program with exit code 1.

use std::process::ExitCode;

use clap::Parser;

mod cli;

fn main() -> ExitCode {
    repose::gpu::headless_runtime_dir();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
        .format_timestamp(None)
        .init();
    let cli = cli::Cli::parse();
    match cli::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
