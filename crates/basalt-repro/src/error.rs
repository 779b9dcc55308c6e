//! Every way a reproduction can fail, each with its own name: bad paper data, a program the
//! libraries refused, an unknown paper, or any failure of the model below ([`SimError`]).

use std::path::PathBuf;

use basalt_sim::SimError;

/// Errors from loading the papers' data or computing the report.
#[derive(Debug, thiserror::Error)]
pub enum ReproError {
    /// A machine file, a trace or a simulation the model refused.
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}:{line}: {message}")]
    PaperData { path: PathBuf, line: usize, message: String },
    #[error("trace source could not record {program}: {message}")]
    TraceSource { program: String, message: String },
    #[error("unknown paper `{0}` (known: osiris, fab, mxv, craterlake, strix)")]
    UnknownPaper(String),
}
