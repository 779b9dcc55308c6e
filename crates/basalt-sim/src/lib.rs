//! basalt-sim: a trace-driven performance model of FHE accelerators.
//!
//! The simulator times the very kernel traces Basalt's libraries record (`basalt-trace`) on a
//! machine described as data (`data/machines/*.toml`), and compares its figures with the
//! papers' tables (`data/papers/<paper>/*.csv`). Layout (STYLE.md §6):
//!
//! * [`machine`] — the machine schema, strict loading with named errors;
//! * [`grid`] — design-space grids: latency, area, energy, EDP per point, Pareto front;
//! * [`fragmentation`] — Strix §III's GPU blind-rotation fragmentation (device-level batching);
//! * [`units`] — one cost model per unit class (NTT, BConv, automorphism, element-wise, KSHGen,
//!   TFHE PBS cluster);
//! * [`memory`] — HBM traffic by kind and the on-chip store (Belady / LRU);
//! * [`schedule`] — compute/memory overlap per window, stall accounting, regions;
//! * [`refresh`] — programs whose bootstraps are markers, timed from one recorded bootstrap;
//! * [`physical`] — area and energy per action, scaled with lanes, word size and node;
//! * [`report`] — latency, utilisation, traffic, energy, power (text and serde);
//! * [`papers`] / [`reproduce`](mod@reproduce) — paper data and "ours vs theirs" per row;
//! * [`source`] — the built-in machine files and paper data, user paths, `extends`;
//! * [`synth`] — closed-form kernel-stream generators used until library traces exist.
//!
//! # Example
//! ```
//! use basalt_sim::{Machine, simulate, synth::ckks::{KsShape, hybrid_keyswitch}};
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/machines/craterlake.toml");
//! let m = Machine::load(dir).unwrap();
//! let t = hybrid_keyswitch(KsShape { n: 1 << 16, limbs: 60, dnum: 1, special: 60, seeded: true });
//! let r = simulate(&m, &t).unwrap();
//! // ≥ 5.8 µs: CraterLake's CRB alone, 3 × 60 residues × 32 cycles at 1 GHz.
//! assert!(r.seconds > 5e-6);
//! ```

mod error;
pub mod fragmentation;
pub mod grid;
pub mod machine;
pub mod memory;
mod overrides;
pub mod papers;
pub mod physical;
pub mod plot;
pub mod refresh;
pub mod report;
pub mod reproduce;
pub mod schedule;
mod selector;
pub mod source;
pub mod synth;
pub mod units;

pub use error::SimError;
pub use machine::Machine;
pub use overrides::check_timing_overrides;
pub use report::Report;
pub use reproduce::{ReproReport, reproduce, reproduce_with};
pub use schedule::simulate;
pub use synth::{
    BOOTSTRAP_REGION, ClosedForm, DftHoisting, DftPlan, HelrStep, LolaNet, MnistNet, Program,
    ResnetSparse, TraceSource, Workload,
};
