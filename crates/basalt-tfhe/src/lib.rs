//! # basalt-tfhe
//!
//! TFHE on a 32- or 64-bit torus with programmable bootstrapping (PBS), Strix's two-level
//! ciphertext batching as a CPU schedule, Strix's four parameter sets (plus TFHE-rs's default
//! 2_2 set for side-by-side runs), a noise model with failure probabilities, trace hooks for the
//! Basalt simulator and validated serialisation.
//!
//! Layout follows TFHE-rs' core_crypto: one entity per file ([`lwe`], [`glwe`], [`ggsw`],
//! [`bsk`], [`keyswitch`] key), one algorithm per file ([`decompose`], [`fft`],
//! [`external_product`], [`modswitch`], [`blind_rotate`], [`sample_extract`], [`pbs`],
//! [`batch`]), then the user layer ([`keys`], [`lut`], [`many_lut`] (several tables from one
//! blind rotation), [`gates`], radix [`integer`]s) and
//! tooling ([`params`], [`noise`], [`serialize`]). [`dynamic`] erases the torus width for run-time set
//! selection (CLI, Python).
//!
//! Paper: Putra et al., "Strix: An End-to-End Streaming Architecture with Two-Level Ciphertext
//! Batching for Fully Homomorphic Encryption with Programmable Bootstrapping" (MICRO 2023).

pub mod arith;
pub mod batch;
pub mod blind_rotate;
pub mod bsk;
pub mod context;
pub mod decompose;
pub mod dynamic;
pub mod error;
pub mod external_product;
pub mod fft;
pub mod gates;
pub mod ggsw;
pub mod glwe;
pub mod integer;
pub mod keys;
pub mod keyswitch;
pub mod linear;
pub mod lut;
pub mod lwe;
pub mod many_lut;
pub mod modswitch;
pub mod ms_noise_reduction;
pub mod noise;
pub mod noise_validation;
pub mod params;
pub mod pbs;
pub mod random;
pub mod sample_extract;
pub mod serialize;
pub mod torus;
pub mod trace;
pub mod trace_shape;

pub use batch::BatchConfig;
pub use context::TfheContext;
pub use dynamic::{DynCiphertext, DynClientKey, DynServerKey};
pub use error::{Result, TfheError};
pub use gates::Gate;
pub use keys::{Ciphertext, ClientKey, Encoding, ServerKey, ServerKeyMemory};
pub use lut::Lut;
pub use many_lut::ManyLut;
pub use params::{TfheParams, preset_names};
pub use torus::Torus;

/// 64-bit-torus client key (Strix III/IV, TFHE-rs 2_2).
pub type ClientKey64 = ClientKey<u64>;
/// 32-bit-torus client key (Strix I/II).
pub type ClientKey32 = ClientKey<u32>;
