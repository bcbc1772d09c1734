//! `fairshare generate`: the manual pages and shell completions, made from the very clap
//! definitions the binary parses its arguments with, so that they cannot drift from `--help`.
//! A hidden subcommand rather than a build script: a build script would have to compile every
//! library crate a second time (the arguments name their types) to see the same definitions.
//! It is for packagers (`scripts/deb.sh`); users never need it.

use anyhow::{Context, Result};
use clap_complete::Shell;
use std::path::{Path, PathBuf};

/// What `fairshare generate` writes.
#[derive(clap::Subcommand)]
pub enum What {
    /// One roff manual page per command and subcommand (fairshare.1, fairshare-serve.1, …).
    Man {
        /// The folder to write them into (it is created).
        dir: PathBuf,
    },
    /// Completions for bash (fairshare.bash), zsh (_fairshare) and fish (fairshare.fish).
    Completions {
        /// The folder to write them into (it is created).
        dir: PathBuf,
    },
}

/// Writes what `what` asks for, from `cli` (the public command line), naming every file.
pub fn run(what: What, cli: clap::Command) -> Result<()> {
    match what {
        What::Man { dir } => man(cli, &dir),
        What::Completions { dir } => completions(cli, &dir),
    }
}

/// The manual pages of `cli` and of every subcommand, into `dir`.
fn man(cli: clap::Command, dir: &Path) -> Result<()> {
    create(dir)?;
    clap_mangen::generate_to(cli, dir)
        .with_context(|| format!("writing manual pages into {}", dir.display()))?;
    list(dir)
}

/// The completion scripts of `cli` for bash, zsh and fish, into `dir`.
fn completions(mut cli: clap::Command, dir: &Path) -> Result<()> {
    create(dir)?;
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let path = clap_complete::generate_to(shell, &mut cli, "fairshare", dir)
            .with_context(|| format!("writing the {shell} completions into {}", dir.display()))?;
        println!("{}", path.display());
    }
    Ok(())
}

/// Creates `dir` and its parents.
fn create(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

/// Prints the path of every file in `dir`, sorted.
fn list(dir: &Path) -> Result<()> {
    let mut paths = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<std::io::Result<Vec<_>>>()?;
    paths.sort();
    for path in paths {
        println!("{}", path.display());
    }
    Ok(())
}
