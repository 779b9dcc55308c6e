//! Basalt's benchmarks: every timing the project publishes comes from here, not from the
//! libraries (which carry no timing code).
//!
//! - [`harness`]: warm-up to a steady state, thread pools built once per thread count,
//!   thread counts interleaved round by round, page faults and the cold first run reported
//!   apart, peak resident memory.
//! - [`math`]: the NTT (beside `tfhe-ntt`) and ModDown.
//! - [`ckks`]: NTT, key switching, mul + relinearise, rescale, rotation, hoisted rotations,
//!   and the throughput mode (batches of independent ciphertexts), with speed-ups over one
//!   thread and fork-join counts.
//! - [`bootstrap`]: CKKS bootstrapping at every thread count from one set of keys, with the
//!   peak resident memory of keys + bootstrap (full or seeded keys).
//! - [`tfhe`]: programmable bootstrapping latency, batched throughput, stages, failure rate.
//!
//! Every suite returns JSON-serialisable records; `basalt bench <suite>` prints them one per
//! line, and `scripts/benchmarks_md.py` turns the latest run into BENCHMARKS.md.

pub mod bootstrap;
pub mod ckks;
pub mod harness;
pub mod math;
pub mod tfhe;
pub mod tfhe_integer;

pub use harness::{Pools, Stats, Timing};
