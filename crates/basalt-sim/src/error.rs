//! Every way a simulation input can be rejected, each with its own name (SEAL-style named
//! failures, STYLE.md §5), so that the CLI can print a precise message.

use std::path::PathBuf;

/// Errors from loading machines, or from simulating a trace on a machine.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: schema_version {found} is not supported (this build reads {supported})")]
    SchemaVersion { path: PathBuf, found: u32, supported: u32 },
    #[error("machine `{machine}`: `{field}` must be positive and finite, got {value}")]
    NonPositive { machine: String, field: String, value: f64 },
    #[error("machine `{machine}`, unit `{unit}`: {message}")]
    BadUnit { machine: String, unit: String, message: String },
    #[error("machine `{machine}`: two units serve `{kernel}` (`{first}` and `{second}`)")]
    DuplicateServer { machine: String, kernel: String, first: String, second: String },
    #[error("machine `{machine}` has no unit that executes `{kernel}`")]
    NoUnitFor { machine: String, kernel: String },
    #[error(
        "trace does not fit machine `{machine}`: {what} = {found} exceeds the supported {limit} \
         (was the trace recorded with other parameters?)"
    )]
    TraceMismatch { machine: String, what: String, found: u64, limit: u64 },
    #[error(
        "program does not fit machine `{machine}`: its keys and ciphertexts need at least \
         {need_mib:.1} MiB, more than on-chip {onchip_mib} MiB + off-chip {hbm_gib} GiB"
    )]
    DoesNotFit { machine: String, need_mib: f64, onchip_mib: f64, hbm_gib: f64 },
    #[error(
        "the trace stands for {markers} bootstrap(s) it does not contain (bootstrap markers): \
         time it with a bootstrap trace (`basalt sim run --bootstrap-trace b.json`, \
         `basalt_sim::refresh::simulate_with_bootstrap`)"
    )]
    UntimedBootstraps { markers: usize },
    #[error("trace is malformed: {0}")]
    BadTrace(String),
    #[error("grid: {0}")]
    Grid(String),
    #[error("`{field}` does not change how a recorded trace is timed: {takes_effect}")]
    RecordedSwitch { field: String, takes_effect: &'static str },
}
