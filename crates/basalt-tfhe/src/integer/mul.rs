//! Multiplication mod `2^bits` (the same for signed and unsigned in two's complement).
//!
//! # Algorithm
//! Schoolbook over blocks: for every pair `i + j < B`, one bivariate bootstrap on the packed
//! digits `a_i·m + b_j` gives the low digit of `a_i·b_j` (to column `i + j`) and another its high
//! digit (to column `i + j + 1`, skipped past the top or when `deg a_i · deg b_j < m`). All
//! partial products form one layer; the columns are then summed
//! (`sum_columns`) and the carries resolved by the scan.
//! A clear factor `c` uses its digits `c_j` the same way with univariate tables on `a_i`
//! (a digit 1 costs nothing, a digit 0 is skipped).
//!
//! # Source
//! TFHE-rs `integer` (`mul_parallelized`: block products by bivariate PBS then
//! `sum_ciphertexts_vec_parallelized`; `scalar_mul_parallelized`), re-derived here.

use crate::integer::error::IntegerResult;
use crate::integer::radix::{Block, RadixCiphertext};
use crate::integer::server::{IntegerServer, Job};
use crate::lut::Lut;
use crate::torus::Torus;

impl<T: Torus> IntegerServer<T> {
    /// `a · b` mod `2^bits`.
    pub fn mul(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<RadixCiphertext<T>> {
        self.check_pair(a, b)?;
        let (a, b) = (self.clean(a), self.clean(b));
        let m = self.message_modulus();
        let nb = a.blocks.len();
        let lo = self.lut2(|x, y| (x * y) % m);
        let hi = self.lut2(|x, y| (x * y) / m);
        let mut jobs = Vec::new();
        let mut plan = Vec::new();
        for (i, x) in a.blocks.iter().enumerate() {
            for (j, y) in b.blocks.iter().enumerate().take(nb - i) {
                let dprod = x.degree * y.degree;
                if dprod == 0 {
                    continue;
                }
                let packed = self.pack(x, y);
                if i + j + 1 < nb && dprod >= m {
                    jobs.push(Job { input: packed.clone(), lut: &hi, degree: dprod / m });
                    plan.push(i + j + 1);
                }
                jobs.push(Job { input: packed, lut: &lo, degree: dprod.min(m - 1) });
                plan.push(i + j);
            }
        }
        let mut cols: Vec<Vec<Block<T>>> = vec![Vec::new(); nb];
        for (c, blk) in plan.into_iter().zip(self.bootstrap_many(jobs)) {
            cols[c].push(blk);
        }
        Ok(RadixCiphertext { ty: a.ty, blocks: self.sum_columns(cols) })
    }

    /// `a · c` mod `2^bits` for a clear `c` (reduced mod `2^bits`; negative wraps).
    pub fn scalar_mul(&self, a: &RadixCiphertext<T>, c: i128) -> IntegerResult<RadixCiphertext<T>> {
        self.check(a)?;
        let a = self.clean(a);
        let m = self.message_modulus();
        let nb = a.blocks.len();
        let digits = self.digits_of(c, a.ty);
        // Tables per digit value 2..m (digit 1 is the block itself).
        let tables: Vec<(Lut<T>, Lut<T>)> = (0..m)
            .map(|d| (self.lut(move |x| (x * d) % m), self.lut(move |x| (x * d) / m)))
            .collect();
        let mut cols: Vec<Vec<Block<T>>> = vec![Vec::new(); nb];
        let mut jobs = Vec::new();
        let mut plan = Vec::new();
        for (j, &d) in digits.iter().enumerate() {
            if d == 0 {
                continue;
            }
            for (i, x) in a.blocks.iter().enumerate().take(nb - j) {
                if d == 1 {
                    cols[i + j].push(x.clone());
                    continue;
                }
                let dprod = x.degree * d;
                if dprod == 0 {
                    continue;
                }
                if i + j + 1 < nb && dprod >= m {
                    jobs.push(Job {
                        input: x.ct.clone(),
                        lut: &tables[d as usize].1,
                        degree: dprod / m,
                    });
                    plan.push(i + j + 1);
                }
                jobs.push(Job {
                    input: x.ct.clone(),
                    lut: &tables[d as usize].0,
                    degree: dprod.min(m - 1),
                });
                plan.push(i + j);
            }
        }
        for (c, blk) in plan.into_iter().zip(self.bootstrap_many(jobs)) {
            cols[c].push(blk);
        }
        Ok(RadixCiphertext { ty: a.ty, blocks: self.sum_columns(cols) })
    }
}
