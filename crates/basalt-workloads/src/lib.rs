//! The papers' benchmark applications as encrypted CKKS programs.
//!
//! Layering: `basalt-ckks` (scheme) ← `basalt-circuits` (linear transforms) ← this crate ←
//! `basalt-repro` (the papers' reproduction, which records these programs shape-only),
//! `basalt-cli` and `basalt-py`. It does not know the simulator: where a trace stands for a
//! bootstrap recorded elsewhere it writes a `basalt_trace::Marker::Bootstrap`.
//!
//! - [`network`]: a small feed-forward network as a list of [`network::Layer`]s (LoLa's
//!   convolution-representation convolution, dense layers as hybrid-diagonal BSGS products,
//!   square activations), its cleartext twin, and [`network::Model`], the same network
//!   prepared for one parameter set and strategy — with encoded weights (real run) or shapes
//!   only (trace mode). One `evaluate` serves both: the trace of a symbolic run equals the
//!   real run's.
//! - [`mnist`]: the MNIST networks of Osiris Table III(a) and CraterLake Table 3 (SecureML's
//!   MLP, LoLa-CryptoNets), with seeded pseudo-random weights (no trained model is available
//!   offline; the rows are about time, the tests about the encrypted result equalling the
//!   cleartext network's).
//! - [`lenet`]: Orion's LeNet (Osiris Table III(a), Set II): two strided convolutions as
//!   hybrid-diagonal BSGS products in the multiplexed layout, two dense layers, squares.
//! - [`resnet`]: ResNet-20 for CIFAR-10 (CraterLake Table 3), all channels in one ciphertext,
//!   convolutions as BSGS matrix-vector products, composite minimax ReLU, bootstraps where the
//!   levels run out; its cleartext twin.
//! - [`lstm`]: CraterLake's LSTM benchmark (`h ← σ(W_0·h + W_1·x)`, 128-wide, bootstrapped
//!   whenever the state runs out of levels) and its cleartext twin.
//! - [`logreg`]: CraterLake's logistic-regression training (HELR iterations over 256-sample
//!   batches, both NAG vectors bootstrapped as one complex ciphertext) and its cleartext twin.
//! - [`digits`]: scikit-learn's bundled digits and the weights trained on them (compiled in),
//!   resized to the papers' input shapes.
//! - [`classify`]: encrypted classification with a [`network::Network`] against its twin.
//! - [`helr_digits`]: HELR training under encryption on digits 3-vs-8, with bootstraps.
//! - [`sort_run`]: the bitonic sort run for real against an exact sort.
//! - [`resnet_run`]: ResNet-20, trained on the digits, run for real against its twin.
//! - [`lenet_run`], [`lstm_run`]: LeNet and the LSTM, trained on the digits, run for real
//!   against their twins.
//! - [`registry`]: every runnable workload by name (`basalt workload`, `basalt.workloads`).
//! - [`trace`]: record one inference at a preset in trace mode.
//!
//! See `docs/workloads.md` for packing, depth and parameters.

pub mod cifar;
pub mod classify;
pub mod digits;
pub mod encrypted_weights;
pub mod helr_digits;
pub mod lenet;
pub mod lenet_run;
pub mod logreg;
pub mod lstm;
pub mod lstm_run;
pub mod memory;
pub mod mnist;
pub mod network;
pub mod registry;
pub mod resnet;
pub mod resnet_run;
pub mod sort;
pub mod sort_run;
pub mod tfhe_nn;
pub mod trace;

pub use basalt_circuits::{CircuitError, Result};
