//! Multiplication mod `2^bits` (the same for signed and unsigned in two's complement).
//!
//! # Algorithm
//! Schoolbook over blocks: for every pair `i + j < B`, one bivariate bootstrap on the packed
//! digits `a_i·m + b_j` gives the low digit of `a_i·b_j` (to column `i + j`) and another its high
//! digit (to column `i + j + 1`, skipped past the top or when `deg a_i · deg b_j < m`). All
//! partial products form one layer; the columns are then summed
//! (`sum_columns`) and the carries resolved by the scan.
//! A clear factor `c` uses its digits `c_j` the same way with univariate tables on `a_i`
//! (a digit 1 costs nothing, a digit 0 is skipped). With many-LUT bootstrapping
//! ([`crate::many_lut`]) every table one block needs — low and high digit of `a_i·d` for each
//! digit value `d ≥ 2` of `c`, each once however many positions hold `d` — comes from one blind
//! rotation (`p/m` tables of a digit fit: 4 on the 2+2 set), so at most `B` bootstraps
//! instead of up to two per block and digit position.
//!
//! # Source
//! TFHE-rs `integer` (`mul_parallelized`: block products by bivariate PBS then
//! `sum_ciphertexts_vec_parallelized`; `scalar_mul_parallelized`), re-derived here.

use crate::integer::error::IntegerResult;
use crate::integer::radix::{Block, RadixCiphertext};
use crate::integer::server::{IntegerServer, Job, ManyJob};
use crate::lut::Lut;
use crate::many_lut::ManyLut;
use crate::torus::Torus;

/// A table of a scalar product: (digit value `d`, high digit of `x·d`?).
type Table = (u64, bool);

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
        if self.many_lut {
            return Ok(RadixCiphertext {
                ty: a.ty,
                blocks: self.scalar_products_many_lut(&a, &digits),
            });
        }
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

    /// The column sums of `a · c` for the digits of a clear `c`, with every table a block needs
    /// (low and high digit of `x·d` for each digit value `d ≥ 2` of `c`, each computed once
    /// however many positions of `c` hold `d`) packed into as few many-LUT bootstraps as fit
    /// (`p / m` tables per blind rotation on a clean block: 4 on the 2+2 set, so one per block).
    fn scalar_products_many_lut(&self, a: &RadixCiphertext<T>, digits: &[u64]) -> Vec<Block<T>> {
        let m = self.message_modulus();
        let nb = a.blocks.len();
        let cap = ManyLut::<T>::capacity(self.plaintext_modulus(), m - 1).max(1);
        let mut cols: Vec<Vec<Block<T>>> = vec![Vec::new(); nb];
        // Per block: the tables (digit value, high half?) it needs and their target columns.
        let mut needs: Vec<Vec<(Table, Vec<usize>)>> = vec![Vec::new(); nb];
        for (i, x) in a.blocks.iter().enumerate() {
            for (j, &d) in digits.iter().enumerate().take(nb - i) {
                if d == 1 {
                    cols[i + j].push(x.clone());
                }
                let dprod = x.degree * d;
                if d <= 1 || dprod == 0 {
                    continue;
                }
                let mut need =
                    |key: Table, col: usize| match needs[i].iter_mut().find(|(k, _)| *k == key) {
                        Some((_, c)) => c.push(col),
                        None => needs[i].push((key, vec![col])),
                    };
                need((d, false), i + j);
                if i + j + 1 < nb && dprod >= m {
                    need((d, true), i + j + 1);
                }
            }
        }
        // Distinct packings (shared by blocks that need the same tables).
        let mut luts: Vec<(Vec<Table>, ManyLut<T>)> = Vec::new();
        let mut plan = Vec::new(); // (block, packing, first table of the chunk)
        for (i, need) in needs.iter().enumerate() {
            let keys: Vec<Table> = need.iter().map(|(k, _)| *k).collect();
            for (c, chunk) in keys.chunks(cap).enumerate() {
                let idx = match luts.iter().position(|(k, _)| k == chunk) {
                    Some(idx) => idx,
                    None => {
                        let fns: Vec<Box<dyn Fn(u64) -> u64>> = chunk
                            .iter()
                            .map(|&(d, hi)| -> Box<dyn Fn(u64) -> u64> {
                                if hi {
                                    Box::new(move |x| x * d / m)
                                } else {
                                    Box::new(move |x| x * d % m)
                                }
                            })
                            .collect();
                        let refs: Vec<&dyn Fn(u64) -> u64> =
                            fns.iter().map(|f| f.as_ref()).collect();
                        let lut = ManyLut::from_fns(self.params(), m - 1, &refs)
                            .expect("at most p/m tables of a digit, values below p");
                        luts.push((chunk.to_vec(), lut));
                        luts.len() - 1
                    }
                };
                plan.push((i, idx, c * cap));
            }
        }
        let jobs = plan
            .iter()
            .map(|&(i, idx, _)| ManyJob {
                input: a.blocks[i].ct.clone(),
                input_degree: a.blocks[i].degree,
                lut: &luts[idx].1,
            })
            .collect();
        for (&(i, _, first), outs) in plan.iter().zip(self.bootstrap_many_lut(jobs)) {
            for (t, blk) in outs.into_iter().enumerate() {
                for &col in &needs[i][first + t].1 {
                    cols[col].push(blk.clone());
                }
            }
        }
        self.sum_columns(cols)
    }
}
