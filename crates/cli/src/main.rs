//! `fairshare`: the one binary. It parses arguments and calls the library crates; the work
//! itself lives in `fairshare-core` and its siblings.

mod allocate;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Multi-resource fair sharing: who goes next, and how much each client gets.
#[derive(Parser)]
#[command(name = "fairshare", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// One-shot allocation of an instance file (JSON): see what a policy gives.
    Allocate(allocate::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Allocate(args) => allocate::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
