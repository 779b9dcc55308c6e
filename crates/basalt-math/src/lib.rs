//! The bottom layer of Basalt: modular arithmetic, NTT-friendly primes, the negacyclic NTT,
//! RNS polynomials, fast base conversion (BConv) with ModUp/ModDown/Rescale, and samplers.
//!
//! # Counts used throughout Basalt
//! Defined once here; every crate above uses these words with these meanings.
//! - `n`: ring degree, a power of two; the ring is `Z_q[X]/(X^n + 1)`.
//! - `level` (`l`): index of the top prime of the Q chain a polynomial lives on; it uses
//!   `q_0..q_l`. The maximum level is `L` (the chain has `L + 1` primes).
//! - `limbs`: number of RNS residues of a polynomial, `= level + 1` for a Q polynomial and
//!   `level + 1 + k` for one on `Q_l ∪ P`.
//! - `k`: number of special primes `p_0..p_{k-1}` (their product is `P`).
//! - `dnum`: number of digits of the hybrid key-switching decomposition; `alpha` is the number of
//!   Q limbs per digit (`alpha = ceil((L + 1) / dnum)`).
//!
//! # Layout
//! [`modular`] (one prime) → [`primes`] → [`ntt`] (one prime: our AVX2 transform, or
//! `tfhe-ntt`) → [`ring`] (all the primes of a parameter set) → [`poly`] (RNS polynomials) →
//! kernels on [`ring::RingContext`] (element-wise arithmetic, automorphisms, conversions) →
//! [`rns`] (BConv and the ModChange family: ModUp, ModDown, Rescale) and [`sampler`].
//!
//! Every kernel reports itself to [`basalt_trace`] before computing, and skips the arithmetic on
//! shape-only ([`poly::RnsPoly::symbolic`]) operands: one code path serves real runs and traces.

pub mod bench;
pub mod convert;
pub mod fused;
pub mod kernels;
pub mod modular;
pub mod ntt;
#[cfg(target_arch = "x86_64")]
pub mod ntt_avx2;
pub mod parallel;
pub mod poly;
pub mod primes;
pub mod progress;
pub mod ring;
pub mod rns;
pub mod sampler;
pub mod security;

pub use modular::Modulus;
pub use poly::{Domain, RnsPoly};
pub use ring::RingContext;

/// Errors of the math layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MathError {
    #[error("modulus {0} is out of range: it must satisfy 2 <= q < 2^62")]
    ModulusOutOfRange(u64),
    #[error("{0} is not prime")]
    NotPrime(u64),
    #[error("prime {q} is not NTT-friendly for n = {n}: q must be 1 mod 2n")]
    NotNttFriendly { q: u64, n: usize },
    #[error("ring degree 2^{0} is unsupported: log n must be in 4..=17")]
    UnsupportedDegree(u32),
    #[error("prime bit size {0} is unsupported: it must be in 20..=61")]
    UnsupportedPrimeBits(u32),
    #[error(
        "only {found} NTT-friendly primes of {bits} bits exist for n = 2^{log_n}; {wanted} requested"
    )]
    NotEnoughPrimes { bits: u32, log_n: u32, wanted: usize, found: usize },
    #[error("modulus {0} appears twice in the chain")]
    DuplicateModulus(u64),
    #[error("the chain needs at least one Q prime")]
    EmptyChain,
}
