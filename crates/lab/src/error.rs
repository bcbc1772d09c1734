//! Why the lab cannot set up or run what it was asked: one error for every experiment, each
//! variant saying which input or which run.

use fairshare_trace::TraceError;
use std::path::PathBuf;
use thiserror::Error;

/// Why an experiment cannot be set up or run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LabError {
    /// The trace cannot be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A site bundle is missing a file or its manifest cannot be read.
    #[error(transparent)]
    Bundle(#[from] fairshare_trace::bundle::BundleError),
    /// A record that lenient reading would skip stopped a strict read.
    #[error("{0} (--lenient skips such records and counts them)")]
    Record(TraceError),
    /// The trace, a capacity or a machine list cannot be used, and why.
    #[error("{0}")]
    Unusable(String),
    /// A file of results could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A run stopped: the engine refused its input or reading failed.
    #[error("replaying under {policy}")]
    Run {
        /// The policy of the run.
        policy: String,
        /// What went wrong: the engine's own error, kept as the cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}
