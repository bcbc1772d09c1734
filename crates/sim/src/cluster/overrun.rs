//! What the engine does with a job that runs past the walltime it asked for: a choice of its
//! own, because sites kill such jobs and a replay may rather run them in full.

use fairshare_core::choice::Choice;

/// What happens to a job that runs past the walltime it asked for, as `--overrun` chooses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overrun {
    /// It is killed at its walltime, as batch systems (and Alea) do: it runs only that long.
    #[default]
    Kill,
    /// It runs its recorded runtime in full, its request raised to that runtime.
    Extend,
}

impl Choice for Overrun {
    const ALL: &'static [Overrun] = &[Overrun::Kill, Overrun::Extend];

    fn name(self) -> &'static str {
        match self {
            Overrun::Kill => "kill",
            Overrun::Extend => "extend",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Overrun::Kill => "a job that ran longer than its walltime request is killed at the request, as sites do",
            Overrun::Extend => "a job that ran longer than its walltime request runs in full, its request raised to its runtime",
        }
    }
}
