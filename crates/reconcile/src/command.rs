//! Running a scheduler's commands: each call bounded in time, its output read whole, and every
//! way it can go wrong told apart — not installed, no answer in time, refused with a message,
//! or an answer that is not text — so that an adapter can log one clear line and retry, never
//! hang on a controller (`slurmctld`, `sge_qmaster`) that stopped answering.
//!
//! Every adapter asks its scheduler through [`Commands`], so that the same code runs against
//! the real commands ([`Runner`]) and, in tests and benchmarks, against recorded outputs, and
//! through [`Counted`], which counts what a pass asked and reads each answer with the
//! adapter's reader.

use std::cell::Cell;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why a command gave no usable answer.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CommandError {
    /// The program could not be started (not installed, not on `PATH`, not executable).
    #[error("{program}: cannot run it")]
    NotStarted {
        /// The program.
        program: String,
        /// What the system said.
        #[source]
        error: std::io::Error,
    },
    /// It did not finish in time and was killed.
    #[error("{command}: no answer within {seconds} s; killed")]
    TimedOut {
        /// The command line.
        command: String,
        /// The time it was given.
        seconds: f64,
    },
    /// It ended with a failure status.
    #[error("{command}: {status}: {stderr}")]
    Failed {
        /// The command line.
        command: String,
        /// How it ended.
        status: ExitStatus,
        /// What it said on standard error, trimmed.
        stderr: String,
    },
    /// Its standard output is not UTF-8.
    #[error("{command}: its output is not text (not UTF-8)")]
    NotText {
        /// The command line.
        command: String,
    },
}

/// Something that answers a scheduler's commands: the real ones, or recorded outputs.
pub trait Commands {
    /// The standard output of `command` (the program, then its arguments).
    fn run(&self, command: &[&str]) -> Result<String, CommandError>;
}

/// A command's answer that could not be used: no answer, or one its reader refused.
#[derive(Debug, Error)]
pub enum Unread<E: std::error::Error + 'static> {
    /// The command gave no usable answer.
    #[error(transparent)]
    Command(#[from] CommandError),
    /// Its answer could not be read.
    #[error("`{command}`")]
    Read {
        /// The command line.
        command: String,
        /// What was wrong with its output.
        #[source]
        error: E,
    },
}

/// A scheduler's commands, each one counted: how many a pass asked is part of what it shows.
pub struct Counted<C: Commands> {
    commands: C,
    calls: Cell<u32>,
}

impl<C: Commands> Counted<C> {
    /// `commands`, none counted yet.
    pub fn new(commands: C) -> Counted<C> {
        Counted {
            commands,
            calls: Cell::new(0),
        }
    }

    /// The commands counted (a stand-in's state, in tests).
    pub fn inner(&self) -> &C {
        &self.commands
    }

    /// The commands run since the count was last taken; the count starts again.
    pub fn taken(&self) -> u32 {
        self.calls.replace(0)
    }

    /// Runs `command` and reads its output with `read`.
    pub fn read<T, E: std::error::Error + 'static>(
        &self,
        command: &[&str],
        read: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, Unread<E>> {
        let text = self.run(command)?;
        read(&text).map_err(|error| Unread::Read {
            command: command.join(" "),
            error,
        })
    }
}

impl<C: Commands> Commands for Counted<C> {
    fn run(&self, command: &[&str]) -> Result<String, CommandError> {
        self.calls.set(self.calls.get() + 1);
        self.commands.run(command)
    }
}

impl Commands for Runner {
    fn run(&self, command: &[&str]) -> Result<String, CommandError> {
        let (program, args) = command.split_first().expect("a command names its program");
        Runner::run(self, program, args)
    }
}

/// How to run a scheduler's commands: where they are, and how long each may take.
#[derive(Debug, Clone, PartialEq)]
pub struct Runner {
    /// The folder of the scheduler's commands; `None`: they are found on `PATH`.
    pub bin: Option<PathBuf>,
    /// How long one call may take.
    pub timeout: Duration,
}

impl Default for Runner {
    /// Commands on `PATH`, 30 s each.
    fn default() -> Runner {
        Runner {
            bin: None,
            timeout: Duration::from_secs(30),
        }
    }
}

impl Runner {
    /// Runs `program` with `args` and returns its standard output, or why it gave none. It
    /// runs with `TZ=UTC`, so that the times the scheduler prints are read as what they are.
    pub fn run(&self, program: &str, args: &[&str]) -> Result<String, CommandError> {
        let path = self
            .bin
            .as_ref()
            .map_or(program.into(), |b| b.join(program));
        let command = std::iter::once(program)
            .chain(args.iter().copied())
            .collect::<Vec<_>>();
        let command = command.join(" ");
        let child = Command::new(&path)
            .args(args)
            .env("TZ", "UTC")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|error| CommandError::NotStarted {
                program: path.display().to_string(),
                error,
            })?;
        let (status, stdout, stderr) = self.wait(child, &command)?;
        if !status.success() {
            let stderr = String::from_utf8_lossy(&stderr).trim().to_owned();
            return Err(CommandError::Failed {
                command,
                status,
                stderr,
            });
        }
        String::from_utf8(stdout).map_err(|_| CommandError::NotText { command })
    }

    /// Waits for `child` at most the runner's timeout, reading both outputs as they come (a
    /// large answer must not fill a pipe and stall the command).
    fn wait(
        &self,
        mut child: Child,
        command: &str,
    ) -> Result<(ExitStatus, Vec<u8>, Vec<u8>), CommandError> {
        let stdout = drain(child.stdout.take());
        let stderr = drain(child.stderr.take());
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(CommandError::TimedOut {
                        command: command.to_owned(),
                        seconds: self.timeout.as_secs_f64(),
                    });
                }
            }
        };
        Ok((status, joined(stdout), joined(stderr)))
    }
}

/// Reads a pipe to its end on its own thread.
fn drain(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// What a draining thread read.
fn joined(reader: JoinHandle<Vec<u8>>) -> Vec<u8> {
    reader.join().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runner(seconds: f64) -> Runner {
        Runner {
            bin: None,
            timeout: Duration::from_secs_f64(seconds),
        }
    }

    #[test]
    fn an_answer_is_read_whole() {
        let big = runner(10.0).run("sh", &["-c", "seq 1 200000"]).unwrap();
        assert_eq!(big.lines().count(), 200_000, "more than a pipe holds");
        assert!(big.ends_with("200000\n"));
    }

    #[test]
    fn each_failure_is_told_apart() {
        let missing = runner(5.0).run("no-such-slurm-command", &[]).unwrap_err();
        assert!(
            matches!(missing, CommandError::NotStarted { .. }),
            "{missing}"
        );
        let refused = runner(5.0)
            .run("sh", &["-c", "echo 'Invalid job id specified' >&2; exit 1"])
            .unwrap_err();
        assert!(
            refused.to_string().ends_with(": Invalid job id specified"),
            "{refused}"
        );
        let binary = runner(5.0).run("printf", &["\\377\\376"]).unwrap_err();
        assert!(matches!(binary, CommandError::NotText { .. }), "{binary}");
    }

    #[test]
    fn a_command_that_does_not_answer_is_killed_in_time() {
        let started = Instant::now();
        let slow = runner(0.2).run("sleep", &["300"]).unwrap_err();
        assert!(matches!(slow, CommandError::TimedOut { .. }), "{slow}");
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "killed, not waited for"
        );
        assert_eq!(
            slow.to_string(),
            "sleep 300: no answer within 0.2 s; killed"
        );
    }

    #[test]
    fn counted_commands_count_every_call_and_name_an_answer_not_read() {
        let counted = Counted::new(runner(5.0));
        assert_eq!(
            counted
                .read(&["echo", "7"], |t| t.trim().parse::<u32>())
                .unwrap(),
            7
        );
        let unread = counted
            .read(&["echo", "x"], |t| t.trim().parse::<u32>())
            .unwrap_err();
        assert!(matches!(&unread, Unread::Read { command, .. } if command == "echo x"));
        let failed = counted.read(&["false"], |t| t.parse::<u32>()).unwrap_err();
        assert!(matches!(
            failed,
            Unread::Command(CommandError::Failed { .. })
        ));
        assert_eq!(counted.taken(), 3, "failures count too");
        assert_eq!(counted.taken(), 0, "the count starts again");
    }
}
