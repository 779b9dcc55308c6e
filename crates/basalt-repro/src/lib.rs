//! basalt-repro: the papers' tables against the simulator's models.
//!
//! `basalt-sim` is the model (machines, units, memory, schedule, report) and reads traces only;
//! this crate sits above the workloads and holds what belongs to the papers: their tables and
//! readings (`data/papers/<paper>/`), the programs each row times, recorded by the libraries
//! themselves, and the "ours vs theirs" report with its Markdown page. Layout:
//!
//! * [`papers`] — the paper rows (CSV), their kinds, tolerances and derivations, the readings;
//! * [`data`] — the papers' files built into the crate, or a data folder on disk;
//! * [`program`] — what a row needs timed: closed-form [`Workload`]s and library [`Program`]s;
//! * [`library`] — the libraries as the [`TraceSource`] (shape-only recordings, cached);
//! * [`reproduce`](mod@reproduce) — one module per paper or row group, the report and its page;
//! * [`plot`] — ours / theirs per modelled row as a figure;
//! * [`pbs_epoch`] — Strix's PBS epochs, recorded by basalt-tfhe from the parameters alone;
//! * [`strix_nn`] — Strix's time for the TFHE deep networks (`basalt workload run nn-20`).
//!
//! # Example
//! ```no_run
//! // Every paper, with the libraries' traces, from the built-in data (about a minute).
//! let r = basalt_repro::library::reproduce(None, basalt_sim::source::builtin_dir()).unwrap();
//! let (independent, modelled, within) = r.headline();
//! println!("{within} of {independent} independent rows within tolerance ({modelled} modelled)");
//! ```

pub mod data;
mod error;
pub mod fusion;
pub mod library;
pub mod papers;
pub mod pbs_epoch;
pub mod plot;
pub mod program;
pub mod reproduce;
pub mod strix_nn;

pub use error::ReproError;
pub use program::{
    BasicOp, ClosedForm, DftPlan, HelrStep, Hoisting, LolaNet, MnistNet, OpParams, Program,
    ResnetSparse, TraceSource, Workload,
};
pub use reproduce::{ReproReport, reproduce, reproduce_with};
