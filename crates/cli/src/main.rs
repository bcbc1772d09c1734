//! `fairshare`: the one binary. It parses arguments and calls the library crates; the work
//! itself lives in `fairshare-core` and its siblings.

mod adapters;
mod agent;
mod allocate;
mod baa;
mod cloud;
mod collect;
mod draw;
mod generate;
mod gridengine;
mod operator;
mod output;
mod penalty;
mod priorities;
mod replay;
mod serve;
mod simulate;
mod slurm;
mod sweep;
mod trace;
mod whatif;

use clap::builder::TypedValueParser;
use clap::{CommandFactory, Parser, Subcommand};
use fairshare_core::choice::Choice;
use std::process::ExitCode;

/// mimalloc rather than the system allocator: the daemon's priority cycle allocates per
/// workload, and with glibc's allocator it took three times as long (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// What `--help` says after the subcommands: the exit codes and where the JSON is described.
const AFTER_HELP: &str = "\
A Slurm site's month under another policy, before changing anything:
  fairshare slurm collect site/                     (on the controller's host)
  fairshare slurm what-if site/ --policy sdrf       (anywhere: docs/slurm-whatif.md)

Exit status:
  0  success (also when standard output is closed early, as by `| head`)
  1  error: an input, a setting or an output that cannot be used (the message says which)
  2  usage: unknown option, missing or malformed argument

Every --json output starts with \"schema_version\": 1; docs/json.md describes each field and its unit.";

/// What `--version` says: the version and the commit the binary was built from (build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("FAIRSHARE_COMMIT"),
    ")"
);

/// Multi-resource fair sharing: who goes next, and how much each client gets.
///
/// `C` is the set of commands: [`Invocation`] when run, [`Command`] when documented.
#[derive(Parser)]
#[command(name = "fairshare", version = VERSION, about, long_about = None, after_help = AFTER_HELP)]
struct Cli<C: Subcommand> {
    #[command(subcommand)]
    command: C,
}

/// The command line as parsed: the public commands and the packagers' hidden `generate`.
/// The manual pages and completions are made from `Cli<Command>`, which leaves it out.
#[derive(Subcommand)]
enum Invocation {
    #[command(flatten)]
    Public(Box<Command>),
    /// Write the manual pages or shell completions (for packagers: scripts/deb.sh).
    #[command(hide = true, subcommand)]
    Generate(generate::What),
}

/// The public commands.
#[derive(Subcommand)]
enum Command {
    // A subcommand whose arguments carry their own doc (what it does, an example) has none
    // here: a doc comment on the variant would replace that long help with its one line.
    Allocate(allocate::Args),
    Replay(Box<replay::Args>),
    Sweep(Box<sweep::Args>),
    Penalty(Box<penalty::Args>),
    Priorities(Box<priorities::Args>),
    /// Bottleneck-aware allocation over time: the BAA-T paper's experiment, or a timeline of joins.
    #[command(subcommand)]
    Baa(baa::Command),
    Simulate(simulate::Args),
    Cloud(Box<cloud::Args>),
    /// Run the fairness service: collect nodes' usage reports, serve heaviness-based priorities.
    Serve(Box<serve::Args>),
    /// Make bearer tokens for the fairness service.
    Token(serve::TokenArgs),
    /// The fairness service's current ranking, refreshing like top.
    Top(operator::TopArgs),
    /// Why a user is as heavy as the fairness service says.
    Explain(operator::ExplainArgs),
    /// The nodes the fairness service knows and their latest reports.
    Nodes(operator::NodesArgs),
    /// The node agent: measure workloads through cgroups, apply fairness priorities.
    Agent(Box<agent::Args>),
    /// A Slurm site: predict a policy on the site's own month (collect, what-if), then
    /// apply it to the live queue (sync, watch).
    #[command(
        long_about = "A Slurm site: predict a policy on the site's own month (`fairshare slurm collect site/`, then `fairshare slurm what-if site/ --policy sdrf`), then apply it to the live queue (sync, watch): rank the waiting associations, set site factors"
    )]
    Slurm(slurm::Args),
    /// Apply a policy to a live Grid Engine queue: rank the waiting users, set POSIX
    /// priorities.
    #[command(alias = "ge")]
    Gridengine(gridengine::Args),
}

fn main() -> ExitCode {
    let result = match Cli::<Invocation>::parse().command {
        Invocation::Public(command) => {
            if !command.serves() {
                return_freed_memory_at_once();
                no_transparent_huge_pages();
            }
            run(*command)
        }
        Invocation::Generate(what) => generate::run(what, Cli::<Command>::command()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", message(&err));
            ExitCode::FAILURE
        }
    }
}

impl Command {
    /// Whether the command keeps running to serve others (the service, the agent, the
    /// adapters), rather than doing one piece of work and exiting.
    fn serves(&self) -> bool {
        matches!(
            self,
            Command::Serve(_) | Command::Agent(_) | Command::Slurm(_) | Command::Gridengine(_)
        )
    }
}

/// mimalloc's `mi_option_purge_delay`: its index in mimalloc v3's `mi_option_t`
/// (include/mimalloc.h), which `libmimalloc-sys` names only for v2.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Makes mimalloc give freed memory back to the system at once rather than a second later, its
/// default: a command that runs for a second or two otherwise holds every block it ever freed.
/// A replay of the seven Google parts peaked at 93 MB with the delay and 60 MB without, in the
/// same time (docs/benchmarks.md). Services keep the delay, which spares them system calls.
fn return_freed_memory_at_once() {
    // SAFETY: sets one of mimalloc's options, which it reads atomically.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) }
}

/// Asks the kernel not to back this process with transparent huge pages. mimalloc asks for
/// them on the regions it reserves, and the kernel then fills 2 MB at a time where a command
/// touches a few kilobytes: a replay of the seven Google parts peaked at 65–69 MB with them and
/// 51–53 MB without, in the same time (docs/benchmarks.md). Services keep them. Where the
/// kernel has no such switch the call fails and nothing changes.
fn no_transparent_huge_pages() {
    // SAFETY: PR_SET_THP_DISABLE takes one integer argument and touches no memory of ours.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
}

/// Runs one public command.
fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Allocate(args) => allocate::run(args),
        Command::Replay(args) => replay::run(*args),
        Command::Sweep(args) => sweep::run(*args),
        Command::Penalty(args) => penalty::run(*args),
        Command::Priorities(args) => priorities::run(*args),
        Command::Baa(command) => baa::run(command),
        Command::Simulate(args) => simulate::run(args),
        Command::Cloud(args) => cloud::run(*args),
        Command::Serve(args) => serve::run(*args),
        Command::Token(args) => serve::token_command(args),
        Command::Top(args) => operator::top(args),
        Command::Explain(args) => operator::explain(args),
        Command::Nodes(args) => operator::nodes(args),
        Command::Agent(args) => agent::run(*args),
        Command::Slurm(args) => slurm::run(args),
        Command::Gridengine(args) => gridengine::run(args),
    }
}

/// A value parser for a library's named options: the possible values and their help come
/// from the type's [`Choice`] list, so the command line mirrors nothing.
fn choice<T: Choice + Send + Sync>() -> impl TypedValueParser<Value = T> {
    let values = T::ALL
        .iter()
        .map(|c| clap::builder::PossibleValue::new(c.name()).help(c.about()));
    clap::builder::PossibleValuesParser::new(values)
        .try_map(|name| T::named(&name).ok_or(format!("expected {}", T::names())))
}

/// The long help of a `--policy` option: `what`, then every policy `engine` runs, from the
/// policy registry.
fn policy_help(engine: fairshare_core::policy::Engine, what: &str) -> String {
    format!(
        "{what}:\n{}",
        fairshare_core::policy::registry::help(engine)
    )
}

/// The error and its causes on one line, each once ([`fairshare_core::error::joined`]).
fn message(err: &anyhow::Error) -> String {
    fairshare_core::error::joined(err.chain().map(|e| e as &dyn std::error::Error))
}

#[cfg(test)]
mod tests {
    use super::{
        message, no_transparent_huge_pages, return_freed_memory_at_once, Cli, Command, Invocation,
        PURGE_DELAY,
    };
    use clap::CommandFactory;

    #[test]
    fn the_purge_delay_is_the_option_set() {
        // SAFETY: reads one of mimalloc's options.
        let get = || unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            // Its default in mimalloc v3, which no neighbouring option shares.
            assert_eq!(get(), 1000);
        }
        return_freed_memory_at_once();
        assert_eq!(get(), 0);
    }

    #[test]
    fn a_command_asks_for_no_transparent_huge_pages() {
        no_transparent_huge_pages();
        // SAFETY: PR_GET_THP_DISABLE takes no argument and touches no memory of ours.
        let disabled = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
        assert_eq!(disabled, 1);
    }

    #[test]
    fn help_gives_the_exit_codes_and_the_json_layout() {
        let help = Cli::<Invocation>::command().render_long_help().to_string();
        for line in ["  0  success", "  1  error", "  2  usage", "docs/json.md"] {
            assert!(help.contains(line), "{line} missing from\n{help}");
        }
    }

    #[test]
    fn generate_is_hidden_and_left_out_of_the_documented_command_line() {
        let parsed = Cli::<Invocation>::command();
        assert!(parsed.find_subcommand("generate").unwrap().is_hide_set());
        let documented = Cli::<Command>::command();
        assert!(documented.find_subcommand("generate").is_none());
        assert_eq!(
            documented.get_subcommands().count() + 1,
            parsed.get_subcommands().count()
        );
        assert_eq!(documented.get_version(), parsed.get_version());
    }

    #[test]
    fn causes_are_shown_once() {
        let io = std::io::Error::other("trailing comma at line 3 column 56");
        let err = anyhow::Error::new(io).context("f.json");
        let err = err.context("reading the sweep");
        assert_eq!(
            message(&err),
            "reading the sweep: f.json: trailing comma at line 3 column 56"
        );
    }
}
