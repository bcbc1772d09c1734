//! `fairshare`: the one binary. It parses arguments and calls the library crates; the work
//! itself lives in `fairshare-core` and its siblings.

mod allocate;
mod output;
mod replay;
mod simulate;
mod sweep;
mod workload;

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
    /// Replay a workload trace under several policies and compare waits, completions and use.
    Replay(Box<replay::Args>),
    /// Run the SDRF paper's grid of discount factors × capacity fractions over a trace.
    Sweep(Box<sweep::Args>),
    /// Run a process-level scenario under bottleneck-based global priorities (or a baseline).
    Simulate(simulate::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Allocate(args) => allocate::run(args),
        Command::Replay(args) => replay::run(*args),
        Command::Sweep(args) => sweep::run(*args),
        Command::Simulate(args) => simulate::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", message(&err));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, each cause shown once: a cause whose text the message
/// already carries (many errors print their source in their own text) is not repeated.
fn message(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain().map(ToString::to_string) {
        if !text.contains(&cause) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&cause);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::message;

    #[test]
    fn causes_are_shown_once() {
        let io = std::io::Error::other("trailing comma at line 3 column 56");
        let err = anyhow::Error::new(io).context("f.json: trailing comma at line 3 column 56");
        let err = err.context("reading f.json");
        assert_eq!(
            message(&err),
            "reading f.json: f.json: trailing comma at line 3 column 56"
        );
    }
}
