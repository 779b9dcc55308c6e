//! CKKS circuits for Basalt: linear transforms on encrypted vectors, polynomial evaluation, and
//! the HE-MxV benchmark suite, all written on the public API of `basalt-ckks`.
//!
//! Layout (Lattigo's `circuits/`, one paper idea per module):
//! - [`lintrans`]: plaintext matrices as diagonals ([`lintrans::Diagonals`]), one entry point
//!   [`lintrans::LinearTransform::evaluate`] for every strategy — Halevi–Shoup diagonal method,
//!   baby-step giant-step ([`lintrans::bsgs`]) without, with single and with double hoisting,
//!   Osiris' giant-step-centric order ([`lintrans::gsc`], `GscOrder`) with on-the-fly limb
//!   extension ([`lintrans::of_limb`]) — the automatic plan under an on-chip memory bound
//!   ([`lintrans::plan`]), closed-form costs ([`lintrans::cost`]), and Gazelle's hybrid
//!   packing for rectangular products ([`lintrans::mxv_hybrid`]).
//! - [`polynomial`]: Chebyshev interpolation and evaluation with optimal depth and exact output
//!   scale, plus the activation approximations (composite sign/ReLU, HELR sigmoid).
//! - [`compare`]: sign / min / max through composites of odd polynomials (Cheon–Kim–Kim's
//!   `f_3`, `g_3`), bootstrapping between stages through a caller's refresh.
//! - [`helr`]: one HELR logistic-regression training iteration (FAB Table 8's workload).
//! - [`accounting`]: operation counts from the kernel trace (`basalt_trace::record`).
//! - [`mxv_suite`]: the seven FC layers of HE-MxV on Set-A/B/C, encrypted for real.
//!
//! Every circuit has a cleartext twin used as its test oracle.

pub mod accounting;
pub mod bootstrap;
pub mod compare;
pub mod error;
pub mod helr;
pub mod lintrans;
pub mod mxv_suite;
pub mod polynomial;
pub mod testing;

pub use accounting::OpCounts;
pub use error::{CircuitError, Result};
