//! The kernel trace: the one program representation that ties Basalt's library to its simulator.
//!
//! Every homomorphic operation in Basalt bottoms out in a handful of kernels (NTT, base
//! conversion, element-wise arithmetic, automorphisms, key loads, PBS steps). The kernels report
//! themselves here with their sizes. Run for real, a program computes *and* records; run on
//! shape-only ("symbolic") operands, the same code skips the arithmetic and only records. Either
//! way the trace is produced by the code that computes, never by a second copy of the algorithm
//! (the trap SimFHE falls into).
//!
//! Recording is opt-in and scoped to the calling thread: [`record`] opens a recorder, runs a
//! closure, and returns what the closure emitted. Kernels call [`emit`], which is a single
//! thread-local check when no recorder is open. Parallel kernels must emit from the thread that
//! called them, before fanning out (rayon workers have no recorder).
//!
//! Regions ([`region`]) name the algorithmic step a kernel belongs to (`KeySwitch › ModUp`), giving
//! the call tree SimFHE gets by monkey-patching.

mod kernel;
mod objects;
mod recorder;

pub use kernel::{ElemOp, Kernel, KernelKind, KeyId, TfheKey, TfheStep};
pub use objects::{ObjectId, ObjectShape, Operation, operation};
pub use recorder::{
    Event, KeyScope, Marker, OnChipPlaintexts, RegionGuard, Trace, begin, emit, end, is_recording,
    key_scope, mark, plaintexts_on_chip, record, region,
};
