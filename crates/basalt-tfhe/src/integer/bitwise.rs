//! Bitwise `and`, `or`, `xor` (one bivariate bootstrap per block pair, all blocks in one
//! layer) and `not` (linear: `(m − 1) − a_i` per digit, no bootstrap).
//!
//! # Source
//! TFHE-rs `integer` (`bitand_parallelized` … : bivariate block LUTs), re-derived here.

use crate::integer::error::IntegerResult;
use crate::integer::radix::RadixCiphertext;
use crate::integer::server::{IntegerServer, Job};
use crate::torus::Torus;

/// A blockwise bit operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    Xor,
}

impl BitOp {
    pub fn eval(self, x: u64, y: u64) -> u64 {
        match self {
            BitOp::And => x & y,
            BitOp::Or => x | y,
            BitOp::Xor => x ^ y,
        }
    }
}

impl<T: Torus> IntegerServer<T> {
    /// `a op b` bit by bit.
    pub fn bitop(
        &self,
        op: BitOp,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<RadixCiphertext<T>> {
        self.check_pair(a, b)?;
        let (a, b) = (self.clean(a), self.clean(b));
        let m = self.message_modulus();
        let lut = self.lut2(move |x, y| op.eval(x, y) % m);
        let jobs = a
            .blocks
            .iter()
            .zip(&b.blocks)
            .map(|(x, y)| {
                // A bound on the result: and ≤ min, or/xor < next power of two above max.
                let degree = match op {
                    BitOp::And => x.degree.min(y.degree),
                    _ => ((x.degree | y.degree) + 1).next_power_of_two() - 1,
                }
                .min(m - 1);
                Job { input: self.pack(x, y), lut: &lut, degree }
            })
            .collect();
        Ok(RadixCiphertext { ty: a.ty, blocks: self.bootstrap_many(jobs) })
    }

    pub fn bitand(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<RadixCiphertext<T>> {
        self.bitop(BitOp::And, a, b)
    }
    pub fn bitor(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<RadixCiphertext<T>> {
        self.bitop(BitOp::Or, a, b)
    }
    pub fn bitxor(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<RadixCiphertext<T>> {
        self.bitop(BitOp::Xor, a, b)
    }

    /// `!a` (every bit flipped; for signed types `−a − 1`).
    pub fn bitnot(&self, a: &RadixCiphertext<T>) -> IntegerResult<RadixCiphertext<T>> {
        self.check(a)?;
        let a = if a.blocks.iter().all(|b| b.degree < self.message_modulus()) {
            a.clone()
        } else {
            self.clean(a)
        };
        let (m, d) = (self.message_modulus(), self.delta());
        let blocks = a.blocks.iter().map(|x| x.clear_minus(m - 1, d)).collect();
        Ok(RadixCiphertext { ty: a.ty, blocks })
    }
}
