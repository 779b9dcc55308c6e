//! RNS-CKKS for Basalt: parameters and named presets, the canonical-embedding encoder, keys
//! (full and seeded), hybrid key switching with any `dnum` (standard, FAB-reordered, hoisted and
//! double-hoisted), the evaluator (with a throughput mode for batches), and validated serialization.
//!
//! Layout (Lattigo-like, one concern per file): [`params`] → [`encoder`] → [`keys`] →
//! [`keyswitch`] → [`eval`]; [`serialize`] and [`precision`] on the side. Everything
//! sits on `basalt-math` kernels, which report themselves to `basalt-trace`; the evaluator
//! opens named regions (`KeySwitch`, `ModUp`, `ModDown`, `Rescale`, `Relinearize`, `Rotate`)
//! and runs unchanged on symbolic (shape-only) ciphertexts, producing the same trace.
//!
//! # Example
//! ```
//! use basalt_ckks::encryptor::{decrypt, encrypt_sk};
//! use basalt_ckks::*;
//! // A toy (insecure) ring: N = 2^10, q0 of 60 bits, 3 levels of 40 bits, 2 special primes.
//! let mut lit = ParametersLiteral::toy(10, 60, 40, 3, 61, 2, 2);
//! lit.log_default_scale = 40.0;
//! let params = Parameters::new(lit)?;
//! let kg = KeyGenerator::new(&params);
//! let sk = kg.gen_secret_key();
//! let eval = Evaluator::new(&params, kg.gen_evaluation_keys(&sk, &[1], false, false))?;
//! let enc = Encoder::new(&params);
//! let v: Vec<Complex64> = (0..4).map(|i| Complex64::new(i as f64 / 4.0, 0.5)).collect();
//! let pt = enc.encode(&v, 4, params.max_level(), params.default_scale())?;
//! let ct = encrypt_sk(&params, &pt, &sk)?;
//! let sq = eval.rescale(&eval.mul_relin(&ct, &ct)?)?;
//! let r = eval.rotate(&sq, 1)?; // left by one slot
//! let out = enc.decode(&decrypt(&params, &r, &sk)?)?;
//! for i in 0..4 {
//!     assert!((out[i] - v[(i + 1) % 4] * v[(i + 1) % 4]).norm() < 1e-6);
//! }
//! # Ok::<(), CkksError>(())
//! ```
//!
//! Conventions: a ciphertext `(c_0, c_1)` decrypts to `c_0 + c_1·s`; polynomials are kept in
//! the NTT domain; `level` is the index of the top Q prime; rotations by `k > 0` rotate the
//! slots to the left (Galois element `5^k`).

pub mod ciphertext;
pub mod encoder;
pub mod encryptor;
pub mod error;
pub mod eval;
pub mod flooding;
pub mod keys;
pub mod keyswitch;
pub mod objects;
pub mod params;
pub mod precision;
pub mod progress;
pub mod serialize;
mod util;

pub use ciphertext::{Ciphertext, Plaintext, PlaintextQP};
pub use encoder::Encoder;
pub use error::{CkksError, ParamError, Result};
pub use eval::Evaluator;
pub use keys::{
    EvaluationKeys, GaloisKey, KeyGenerator, KeyId, KeyMaterial, KeySwitchKey, PublicKey, RelinKey,
    SecretKey, SeededKeySwitchKey,
};
pub use keyswitch::{CiphertextQP, HoistedDecomp, KsVariant};
pub use num_complex::Complex64;
pub use objects::{FusedOperation, Stored};
pub use params::{Parameters, ParametersLiteral, SecretDistribution};
pub use precision::PrecisionStats;
