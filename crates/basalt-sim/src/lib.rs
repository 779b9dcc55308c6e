//! basalt-sim: a trace-driven performance model of FHE accelerators.
//!
//! The simulator times the very kernel traces Basalt's libraries record (`basalt-trace`) on a
//! machine described as data (`data/machines/*.toml`). It depends on `basalt-trace` alone: the
//! papers' tables, their readings and the reproduction report that compares the model with them
//! live in `basalt-repro`, above the workloads that record the programs. Layout (STYLE.md §6):
//!
//! * [`machine`] — the machine schema, strict loading with named errors;
//! * [`grid`] — design-space grids: latency, area, energy, EDP per point, Pareto front;
//! * [`fragmentation`] — Strix §III's GPU blind-rotation fragmentation (device-level batching);
//! * [`units`] — one cost model per unit class (NTT, BConv, automorphism, element-wise, KSHGen,
//!   TFHE PBS cluster);
//! * [`memory`] — HBM traffic by kind and the on-chip store (Belady / LRU);
//! * [`bandwidth`] — HBM latency and banks, on-chip store banking, prefetch bounded by capacity;
//! * [`schedule`] — compute/memory overlap per window, stall accounting, regions;
//! * [`refresh`] — programs whose bootstraps are markers (`basalt_trace::Marker::Bootstrap`),
//!   timed from one recorded bootstrap;
//! * [`physical`] — area and energy per action, scaled with lanes, word size and node;
//! * [`report`] — latency, utilisation, traffic, energy, power (text and serde);
//! * [`plot`] — SVG figures of reports, sweeps, grids and ratio plots;
//! * [`source`] — the built-in machine files, user paths, `extends`;
//! * [`synth`] — closed-form kernel streams of the papers' listings, for tests and cross-checks.
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

pub mod bandwidth;
mod error;
pub mod fragmentation;
pub mod grid;
pub mod machine;
pub mod memory;
mod overrides;
pub mod physical;
pub mod plot;
pub mod refresh;
pub mod report;
pub mod schedule;
mod selector;
pub mod source;
pub mod synth;
pub mod units;

pub use error::SimError;
pub use machine::Machine;
pub use overrides::check_timing_overrides;
pub use report::Report;
pub use schedule::simulate;
