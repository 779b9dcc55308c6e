//! Radix integers: unsigned and signed 2- to 64-bit encrypted integers made of shortint blocks
//! (2-bit message + 2-bit carry on TFHE-rs's `PARAM_MESSAGE_2_CARRY_2` set), as TFHE-rs's
//! integer layer builds them.
//!
//! # Representation
//! A [`RadixCiphertext`] of `B` bits is `B / log2(m)` blocks, least significant first; block `i`
//! encrypts a value `v_i` in `0..p` (`p = message_modulus · carry_modulus`) and the integer is
//! `Σ v_i · m^i mod 2^B` (`m = message_modulus`). A block is *clean* when its value is a single
//! digit (`v_i < m`) and its noise is that of one bootstrap.
//!
//! Every block carries two bounds, as TFHE-rs's `Degree` and `NoiseLevel`:
//! * `degree`: the largest value the block can hold. A linear operation adds the bounds; an
//!   operation whose result could reach the padding bit (`degree ≥ p`) first cleans its inputs.
//! * `noise_level`: the noise as a multiple of one bootstrap output's standard deviation,
//!   bounded by the L1 norm of the linear combination that produced it (sum of levels, times
//!   `|c|` for a scalar `c`). A bootstrap input must stay at or below
//!   [`max_noise_level`](IntegerServer::max_noise_level) `= m + 1` (5 on the 2+2 set, the bound
//!   TFHE-rs's `MaxNoiseLevel` uses there), which is exactly what packing two clean blocks into
//!   one message (`a·m + b`, a bivariate lookup) needs.
//!
//! Operations clean their inputs only when these bounds require it ([`IntegerServer::clean`]) and
//! return results that chain without overflow.
//!
//! # Files (one idea each)
//! [`radix`] (blocks, types, the encrypted boolean), [`client`] (encrypt/decrypt with the secret
//! key), [`server`] (the secret-free server and its batched bootstrap engine), [`carry`] (carry
//! propagation: Hillis–Steele prefix scan of generate/propagate states or a ripple, chosen by
//! thread count; column sums),
//! [`add`] (add, sub, neg, scalar add/sub), [`mul`] (products, scalar products),
//! [`comparison`] (eq … ge, min/max), [`boolean`] (select and the boolean algebra),
//! [`bitwise`], [`shift`] (shifts and rotations by clear or encrypted amounts), [`serialize`](mod@serialize).
//!
//! # Source
//! TFHE-rs `integer` (radix decomposition, degree/noise-level tracking, parallel carry
//! propagation, block comparisons), re-derived here; Chillotti–Joye–Paillier, "Programmable
//! bootstrapping enables efficient homomorphic inference of deep neural networks" (CSCML 2021)
//! for the radix representation with carry space.

pub mod add;
pub mod bitwise;
pub mod boolean;
pub mod carry;
pub mod client;
pub mod comparison;
pub mod error;
pub mod mul;
pub mod radix;
pub mod serialize;
pub mod server;
pub mod shift;

pub use carry::{CarryPropagation, carry_rounds, carry_rounds_many_lut};
pub use client::IntegerClient;
pub use error::{IntegerError, IntegerResult};
pub use radix::{Block, BoolCiphertext, IntegerType, RadixCiphertext};
pub use server::IntegerServer;
