//! Encrypted booleans: `select` (if-then-else on an encrypted condition) and the boolean algebra
//! on the 0/1 blocks comparisons return.
//!
//! # Algorithm
//! `select(c, a, b)`: per block, two bivariate bootstraps on the packed `c·m + a_i` and
//! `c·m + b_i` give `c ? a_i : 0` and `c ? 0 : b_i`; their sum is the result digit (exactly one is
//! nonzero, so its degree stays that of a digit; its noise level is 2). Boolean `and`/`or`/`xor`
//! are one bootstrap of the sum `x + y ∈ {0, 1, 2}`; `not` is the linear `1 − x`.
//!
//! # Source
//! TFHE-rs `integer` (`if_then_else_parallelized` via `zero_out_if`; `BooleanBlock`), re-derived.

use crate::integer::error::{IntegerError, IntegerResult};
use crate::integer::radix::{Block, BoolCiphertext, RadixCiphertext};
use crate::integer::server::{IntegerServer, Job};
use crate::torus::Torus;

impl<T: Torus> IntegerServer<T> {
    /// `cond ? a : b`.
    pub fn select(
        &self,
        cond: &BoolCiphertext<T>,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<RadixCiphertext<T>> {
        self.check_bool(cond)?;
        self.check_pair(a, b)?;
        let c = self.fresh_bool(cond);
        let (a, b) = (self.clean(a), self.clean(b));
        let keep_if_true = self.lut2(|c, x| if c == 1 { x } else { 0 });
        let keep_if_false = self.lut2(|c, x| if c == 1 { 0 } else { x });
        let mut jobs = Vec::with_capacity(2 * a.blocks.len());
        for (x, y) in a.blocks.iter().zip(&b.blocks) {
            jobs.push(Job { input: self.pack(&c, x), lut: &keep_if_true, degree: x.degree });
            jobs.push(Job { input: self.pack(&c, y), lut: &keep_if_false, degree: y.degree });
        }
        let out = self.bootstrap_many(jobs);
        let blocks = out
            .chunks(2)
            .map(|p| {
                let mut s = p[0].add(&p[1]);
                // One of the two is zero: the sum is a digit of either operand.
                s.degree = p[0].degree.max(p[1].degree);
                s
            })
            .collect();
        Ok(RadixCiphertext { ty: a.ty, blocks })
    }

    fn bool_pair(
        &self,
        x: &BoolCiphertext<T>,
        y: &BoolCiphertext<T>,
        f: impl Fn(u64) -> u64,
    ) -> IntegerResult<BoolCiphertext<T>> {
        self.check_bool(x)?;
        self.check_bool(y)?;
        let (x, y) = (self.fresh_bool(x), self.fresh_bool(y));
        let lut = self.lut(f);
        let job = Job { input: x.add(&y).ct, lut: &lut, degree: 1 };
        Ok(BoolCiphertext { block: self.bootstrap_many(vec![job]).pop().expect("one") })
    }

    /// `x ∧ y`.
    pub fn bool_and(
        &self,
        x: &BoolCiphertext<T>,
        y: &BoolCiphertext<T>,
    ) -> IntegerResult<BoolCiphertext<T>> {
        self.bool_pair(x, y, |s| (s == 2) as u64)
    }

    /// `x ∨ y`.
    pub fn bool_or(
        &self,
        x: &BoolCiphertext<T>,
        y: &BoolCiphertext<T>,
    ) -> IntegerResult<BoolCiphertext<T>> {
        self.bool_pair(x, y, |s| (s >= 1) as u64)
    }

    /// `x ⊕ y`.
    pub fn bool_xor(
        &self,
        x: &BoolCiphertext<T>,
        y: &BoolCiphertext<T>,
    ) -> IntegerResult<BoolCiphertext<T>> {
        self.bool_pair(x, y, |s| (s == 1) as u64)
    }

    /// `¬x` (linear, no bootstrap).
    pub fn bool_not(&self, x: &BoolCiphertext<T>) -> IntegerResult<BoolCiphertext<T>> {
        self.check_bool(x)?;
        Ok(BoolCiphertext { block: x.block.clear_minus(1, self.delta()) })
    }

    /// A boolean as the integer 0 or 1 of type `ty`.
    pub fn bool_to_integer(
        &self,
        x: &BoolCiphertext<T>,
        ty: crate::integer::IntegerType,
    ) -> IntegerResult<RadixCiphertext<T>> {
        self.check_bool(x)?;
        let nb = ty.blocks(self.block_bits())?;
        let mut blocks: Vec<Block<T>> = vec![x.block.clone()];
        blocks.extend((1..nb).map(|_| self.trivial_block(0)));
        Ok(RadixCiphertext { ty, blocks })
    }

    /// A trivial (public) encrypted boolean.
    pub fn trivial_bool(&self, b: bool) -> BoolCiphertext<T> {
        BoolCiphertext { block: self.trivial_block(b as u64) }
    }

    /// Check that a block claimed as boolean is one of this key (used by deserialisation).
    pub fn check_bool_ciphertext(&self, x: &BoolCiphertext<T>) -> IntegerResult<()> {
        self.check_bool(x).map_err(|e| match e {
            IntegerError::Malformed(s) => IntegerError::Malformed(format!("boolean: {s}")),
            e => e,
        })
    }
}
