//! Lookup tables (test vectors) with the TFHE-rs shortint encoding: plaintext space
//! `p = message_modulus · carry_modulus`, one padding bit, `Δ = q / (2p)`.
//!
//! # Algorithm
//! The negacyclic test vector holds `p` boxes of `N/p` coefficients, box `m` filled with
//! `f(m)·Δ`, then rotated left by half a box (the wrapped half negated) so that a phase anywhere
//! in `m·Δ ± Δ/2` selects box `m`. Blind rotation by `−φ̄` brings coefficient `φ̄` to position 0.
//!
//! # Source
//! Strix §II (the PBS test vector); TFHE-rs shortint's box/half-box layout (re-derived here).

use serde::{Deserialize, Serialize};

use crate::error::{Result, TfheError};
use crate::params::TfheParams;
use crate::torus::Torus;

/// A test vector of `N` torus words plus what it encodes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Lut<T: Torus> {
    pub(crate) tv: Vec<T>,
    /// Plaintext values per input message (empty for gate/sign test vectors).
    pub(crate) table: Vec<u64>,
}

/// `Δ = q / (2p)` for plaintext space `p` (one padding bit).
pub fn delta<T: Torus>(p: u64) -> T {
    T::ONE.shl(T::BITS - 1 - p.trailing_zeros())
}

impl<T: Torus> Lut<T> {
    /// Build from a function on `0..p`; outputs are reduced mod `p`.
    pub fn from_fn(params: &TfheParams, f: impl Fn(u64) -> u64) -> Self {
        let p = params.plaintext_modulus();
        let table: Vec<u64> = (0..p).map(|m| f(m) % p).collect();
        Self::build(params.polynomial_size, p, table)
    }

    /// Build from an explicit table of at most `p` entries (missing entries map to 0).
    pub fn from_table(params: &TfheParams, table: &[u64]) -> Result<Self> {
        let p = params.plaintext_modulus();
        if table.len() as u64 > p {
            return Err(TfheError::LutTooLarge { max: p as usize, found: table.len() });
        }
        let mut t: Vec<u64> = table.iter().map(|v| v % p).collect();
        t.resize(p as usize, 0);
        Ok(Self::build(params.polynomial_size, p, t))
    }

    fn build(n: usize, p: u64, table: Vec<u64>) -> Self {
        let d: T = delta(p);
        let boxed = n / p as usize;
        let mut raw = vec![T::ZERO; n];
        for (m, &v) in table.iter().enumerate() {
            let val = T::from_u64(v).wmul(d);
            raw[m * boxed..(m + 1) * boxed].iter_mut().for_each(|x| *x = val);
        }
        let half = boxed / 2;
        let mut tv = vec![T::ZERO; n];
        for (j, t) in tv.iter_mut().enumerate() {
            let src = j + half;
            *t = if src < n { raw[src] } else { raw[src - n].wneg() };
        }
        Lut { tv, table }
    }

    /// Gate bootstrapping test vector `μ·(1 + X + … + X^{N−1})`: outputs `+μ` for a phase in
    /// `(0, 1/2)` and `−μ` for a phase in `(1/2, 1)` (TFHE lib, NuFHE).
    pub fn sign(n: usize, mu: T) -> Self {
        Lut { tv: vec![mu; n], table: Vec::new() }
    }

    /// The test vector polynomial.
    pub fn test_vector(&self) -> &[T] {
        &self.tv
    }

    /// The plaintext table (input message → output message).
    pub fn table(&self) -> &[u64] {
        &self.table
    }
}
