//! Addition, subtraction, negation and their clear-operand forms, all mod `2^bits` (two's
//! complement for signed types, as Rust's `wrapping_*`).
//!
//! # Algorithm
//! `a + b`: blockwise sums (`≤ 2m − 2`, no bootstrap) then the single-carry scan
//! ([`carry`](crate::integer::carry)). `a − b = a + ¬b + 1`, where `¬b_i = (m − 1) − b_i` is
//! linear and the `+1` lands on block 0 (which the scan allows up to `2m − 1`): subtraction
//! costs exactly an addition. `−a = ¬a + 1` the same way. A clear operand adds its digits.
//!
//! # Source
//! TFHE-rs `integer` (`add_parallelized`, `sub_parallelized`, `neg_parallelized`), re-derived.

use crate::integer::error::IntegerResult;
use crate::integer::radix::{Block, RadixCiphertext};
use crate::integer::server::IntegerServer;
use crate::torus::Torus;

impl<T: Torus> IntegerServer<T> {
    /// Clean copies of both operands when their blockwise combination would not fit the
    /// single-carry scan (TFHE-rs's "smart" operations).
    fn operands_for_sum(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
        fits: impl Fn(&Block<T>, &Block<T>, usize) -> bool,
    ) -> (RadixCiphertext<T>, RadixCiphertext<T>) {
        let ok = a.blocks.iter().zip(&b.blocks).enumerate().all(|(i, (x, y))| fits(x, y, i));
        if ok { (a.clone(), b.clone()) } else { (self.clean(a), self.clean(b)) }
    }

    /// `a + b` mod `2^bits`.
    pub fn add(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<RadixCiphertext<T>> {
        self.check_pair(a, b)?;
        let m = self.message_modulus();
        let max = self.max_noise_level();
        let (a, b) = self.operands_for_sum(a, b, |x, y, _| {
            x.degree + y.degree <= 2 * m - 2 && x.noise_level + y.noise_level < max
        });
        let blocks = a.blocks.iter().zip(&b.blocks).map(|(x, y)| x.add(y)).collect();
        Ok(RadixCiphertext { ty: a.ty, blocks: self.propagate_single_carry(blocks) })
    }

    /// `a − b` mod `2^bits`.
    pub fn sub(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<RadixCiphertext<T>> {
        self.check_pair(a, b)?;
        let m = self.message_modulus();
        let max = self.max_noise_level();
        let (a, b) = self.operands_for_sum(a, b, |x, y, _| {
            x.degree + m - 1 <= 2 * m - 2 && y.degree < m && x.noise_level + y.noise_level < max
        });
        let d = self.delta();
        let blocks = a
            .blocks
            .iter()
            .zip(&b.blocks)
            .enumerate()
            .map(|(i, (x, y))| {
                let s = x.add(&y.clear_minus(m - 1, d));
                if i == 0 { s.add_clear(1, d) } else { s }
            })
            .collect();
        Ok(RadixCiphertext { ty: a.ty, blocks: self.propagate_single_carry(blocks) })
    }

    /// `−a` mod `2^bits`.
    pub fn neg(&self, a: &RadixCiphertext<T>) -> IntegerResult<RadixCiphertext<T>> {
        self.check(a)?;
        let a = self.clean(a);
        let (m, d) = (self.message_modulus(), self.delta());
        let blocks = a
            .blocks
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let s = x.clear_minus(m - 1, d);
                if i == 0 { s.add_clear(1, d) } else { s }
            })
            .collect();
        Ok(RadixCiphertext { ty: a.ty, blocks: self.propagate_single_carry(blocks) })
    }

    /// `a + c` mod `2^bits` for a clear `c` (any integer; it is reduced mod `2^bits`).
    pub fn scalar_add(&self, a: &RadixCiphertext<T>, c: i128) -> IntegerResult<RadixCiphertext<T>> {
        self.check(a)?;
        let digits = self.digits_of(c, a.ty);
        let a = if a.blocks.iter().all(|b| b.degree < self.message_modulus()) {
            a.clone()
        } else {
            self.clean(a)
        };
        let d = self.delta();
        let blocks = a.blocks.iter().zip(digits).map(|(x, c)| x.add_clear(c, d)).collect();
        Ok(RadixCiphertext { ty: a.ty, blocks: self.clean_blocks(blocks) })
    }

    /// `a − c` mod `2^bits` for a clear `c`.
    pub fn scalar_sub(&self, a: &RadixCiphertext<T>, c: i128) -> IntegerResult<RadixCiphertext<T>> {
        let mask = a.ty.mask() as i128;
        self.scalar_add(a, (mask + 1 - (c & mask)) & mask)
    }
}
