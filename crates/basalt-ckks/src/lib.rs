//! RNS-CKKS for Basalt: parameters and named presets, the canonical-embedding encoder, keys
//! (full and seeded), hybrid key switching with any `dnum` (standard, FAB-reordered, hoisted and
//! double-hoisted), the evaluator, validated serialization, and benchmark entry points.
//!
//! Layout (Lattigo-like, one concern per file): [`params`] → [`encoder`] → [`keys`] →
//! [`keyswitch`] → [`eval`]; [`serialize`], [`precision`] and [`bench`] on the side. Everything
//! sits on `basalt-math` kernels, which report themselves to `basalt-trace`; the evaluator
//! opens named regions (`KeySwitch`, `ModUp`, `ModDown`, `Rescale`, `Relinearize`, `Rotate`)
//! and runs unchanged on symbolic (shape-only) ciphertexts, producing the same trace.
//!
//! Conventions: a ciphertext `(c_0, c_1)` decrypts to `c_0 + c_1·s`; polynomials are kept in
//! the NTT domain; `level` is the index of the top Q prime; rotations by `k > 0` rotate the
//! slots to the left (Galois element `5^k`).

pub mod bench;
pub mod ciphertext;
pub mod encoder;
pub mod encryptor;
pub mod error;
pub mod eval;
pub mod keys;
pub mod keyswitch;
pub mod params;
pub mod precision;
pub mod serialize;
mod util;

pub use ciphertext::{Ciphertext, Plaintext};
pub use encoder::Encoder;
pub use error::{CkksError, ParamError, Result};
pub use eval::Evaluator;
pub use keys::{
    EvaluationKeys, GaloisKey, KeyGenerator, KeyMaterial, KeySwitchKey, PublicKey, RelinKey,
    SecretKey, SeededKeySwitchKey,
};
pub use keyswitch::{CiphertextQP, HoistedDecomp, KsVariant};
pub use num_complex::Complex64;
pub use params::{Parameters, ParametersLiteral, SecretDistribution};
pub use precision::PrecisionStats;
