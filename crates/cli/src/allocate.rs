//! `fairshare allocate`: one-shot allocation of an instance file, to see what a policy gives.

use anyhow::{Context, Result};
use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::instance::Instance;
use fairshare_report::allocate_table;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;

/// Allocate the resources of one instance file under its policy.
///
/// The file (JSON) names the policy (drf, weighted-drf, asset, sdrf), the mode (tasks:
/// indivisible tasks by progressive filling; divisible: exact water-filling), the capacity per
/// resource and the users with their demand, and optionally weight, queued tasks and commitment
/// (a fraction of each capacity). See README.md for an example.
#[derive(clap::Args)]
pub struct Args {
    /// Instance file; `-` or nothing reads standard input.
    instance: Option<PathBuf>,
    /// Print the answer as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// In task mode, what to do when the chosen user's next task does not fit: stop the pass
    /// (head-of-line, the paper's rule) or skip that user and try the next.
    #[arg(long, value_parser = crate::choice::<FillRule>(), default_value = "head-of-line")]
    rule: FillRule,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let (name, text) = read_instance(args.instance.as_deref())?;
    let instance =
        Instance::from_json(&text).with_context(|| format!("{name}: not a usable instance"))?;
    let outcome = instance
        .solve(args.rule)
        .with_context(|| format!("{name}: cannot allocate"))?;
    if args.json {
        crate::output::write_json(std::path::Path::new("-"), &outcome)
    } else {
        crate::output::print(&allocate_table(&outcome))
    }
}

fn read_instance(path: Option<&std::path::Path>) -> Result<(String, String)> {
    match path {
        Some(p) if p.as_os_str() != "-" => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            Ok((p.display().to_string(), text))
        }
        _ => {
            if std::io::stdin().is_terminal() {
                anyhow::bail!(
                    "no instance: give a file, or pipe one on standard input (see --help)"
                );
            }
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read standard input")?;
            Ok(("<stdin>".into(), text))
        }
    }
}
