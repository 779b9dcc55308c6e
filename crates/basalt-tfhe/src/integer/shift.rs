//! Shifts and rotations, by a clear amount or by an encrypted one.
//!
//! # Algorithm
//! A clear amount `k mod bits = q·b + r` (`b = log2 m` bits per block) moves whole blocks by
//! `q` for free; the `r`-bit remainder makes each output digit a function of two neighbouring
//! source digits, one bivariate bootstrap on their packing (`hi·m + lo`), all blocks in one
//! layer. Blocks shifted in are zeros, or for a signed right shift copies of the sign
//! (`m − 1` or 0, one univariate bootstrap of the top digit). Rotations take their neighbours
//! cyclically.
//! An encrypted amount runs a barrel shifter: the bits `k_j` of the amount (`j < log2 bits`)
//! are extracted in one layer (the bits of one block from one many-LUT bootstrap), then stage
//! `j` computes `select(k_j, x ≪ 2^j, x)`.
//! Amounts are taken mod `bits`, as Rust's `wrapping_shl` / `rotate_left` do.
//!
//! # Source
//! TFHE-rs `integer` (`scalar_left_shift_parallelized`, `scalar_rotate_*`, `left_shift_parallelized`
//! by encrypted amount), re-derived here.

use crate::integer::error::{IntegerError, IntegerResult};
use crate::integer::radix::{Block, RadixCiphertext};
use crate::integer::server::{IntegerServer, Job, ManyJob};
use crate::lut::Lut;
use crate::many_lut::ManyLut;
use crate::torus::Torus;

/// Which way bits move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShiftKind {
    /// `x << k` (zeros in).
    Left,
    /// `x >> k`: logical for unsigned types, arithmetic (sign in) for signed ones.
    Right,
    RotateLeft,
    RotateRight,
}

/// Where one input of an output digit comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Src {
    Zero,
    Blk(usize),
    /// The sign fill of a signed right shift (function of the top digit).
    Sign,
}

impl<T: Torus> IntegerServer<T> {
    /// `a` shifted or rotated by the clear `k` (mod `bits`).
    pub fn shift_clear(
        &self,
        a: &RadixCiphertext<T>,
        k: u64,
        kind: ShiftKind,
    ) -> IntegerResult<RadixCiphertext<T>> {
        self.check(a)?;
        let a = self.clean(a);
        let m = self.message_modulus();
        let b = self.block_bits() as u64;
        let nb = a.blocks.len();
        let k = k % a.ty.bits as u64;
        let (q, r) = ((k / b) as isize, k % b);
        let signed_right = kind == ShiftKind::Right && a.ty.signed;
        let top = nb - 1;
        let src = |j: isize| -> Src {
            let n = nb as isize;
            match kind {
                ShiftKind::RotateLeft | ShiftKind::RotateRight => {
                    Src::Blk(j.rem_euclid(n) as usize)
                }
                _ if (0..n).contains(&j) => Src::Blk(j as usize),
                _ if j >= n && signed_right => Src::Sign,
                _ => Src::Zero,
            }
        };
        let left = matches!(kind, ShiftKind::Left | ShiftKind::RotateLeft);
        // Output digit i = f(hi, lo) from its two source digits.
        let f = move |hi: u64, lo: u64| {
            if r == 0 {
                if left { hi } else { lo }
            } else if left {
                ((hi << r) | (lo >> (b - r))) % m
            } else {
                ((lo >> r) | (hi << (b - r))) % m
            }
        };
        let half = m / 2;
        let sext = move |x: u64| if x >= half { m - 1 } else { 0 };
        let both: Lut<T> = self.lut2(f);
        let hi_only: Lut<T> = self.lut(move |x| f(x, 0));
        let lo_only: Lut<T> = self.lut(move |x| f(0, x));
        let same: Lut<T> = self.lut(move |x| f(x, x));
        let sign_hi: Lut<T> = self.lut(move |x| f(sext(x), x));
        let sign_both: Lut<T> = self.lut(move |x| f(sext(x), sext(x)));
        let mut out: Vec<Option<Block<T>>> = vec![None; nb];
        let mut jobs = Vec::new();
        let mut plan = Vec::new();
        for (i, slot) in out.iter_mut().enumerate() {
            let i = i as isize;
            let (hi, lo) =
                if left { (src(i - q), src(i - q - 1)) } else { (src(i + q + 1), src(i + q)) };
            let main = if left { hi } else { lo };
            let x = |j: usize| &a.blocks[j];
            let job = |input: &Block<T>, lut| Job { input: input.ct.clone(), lut, degree: m - 1 };
            let j = match (r, main, hi, lo) {
                (0, Src::Blk(j), _, _) => {
                    *slot = Some(x(j).clone());
                    continue;
                }
                (0, Src::Zero, _, _) | (_, _, Src::Zero, Src::Zero) => {
                    *slot = Some(self.trivial_block(0));
                    continue;
                }
                (0, Src::Sign, _, _) | (_, _, Src::Sign, Src::Sign) => job(x(top), &sign_both),
                (_, _, Src::Blk(h), Src::Blk(l)) if h == l => job(x(h), &same),
                (_, _, Src::Blk(h), Src::Blk(l)) => {
                    Job { input: self.pack(x(h), x(l)), lut: &both, degree: m - 1 }
                }
                (_, _, Src::Blk(h), Src::Zero) => job(x(h), &hi_only),
                (_, _, Src::Zero, Src::Blk(l)) => job(x(l), &lo_only),
                (_, _, Src::Sign, Src::Blk(l)) => {
                    debug_assert_eq!(l, top);
                    job(x(top), &sign_hi)
                }
                (_, _, hi, lo) => unreachable!("source pair {hi:?}, {lo:?}"),
            };
            jobs.push(j);
            plan.push(i as usize);
        }
        for (i, blk) in plan.into_iter().zip(self.bootstrap_many(jobs)) {
            out[i] = Some(blk);
        }
        Ok(RadixCiphertext {
            ty: a.ty,
            blocks: out.into_iter().map(|b| b.expect("filled")).collect(),
        })
    }

    /// `a` shifted or rotated by the encrypted `amount` (mod `bits`; the type's width must be a
    /// power of two). The amount may be of any unsigned or signed type; its low bits are used.
    pub fn shift(
        &self,
        a: &RadixCiphertext<T>,
        amount: &RadixCiphertext<T>,
        kind: ShiftKind,
    ) -> IntegerResult<RadixCiphertext<T>> {
        self.check(a)?;
        self.check(amount)?;
        let bits = a.ty.bits;
        if !bits.is_power_of_two() {
            return Err(IntegerError::Unsupported(format!(
                "shift by an encrypted amount needs a power-of-two width, not {}",
                a.ty
            )));
        }
        let b = self.block_bits();
        let stages = bits.trailing_zeros();
        let amount = self.clean(amount);
        let used = (0..stages).take_while(|&j| ((j / b) as usize) < amount.blocks.len()).count();
        let amount_bits: Vec<Block<T>> = if self.many_lut {
            // The bits of one amount block come from one blind rotation (b ≤ p/m tables).
            let m = self.message_modulus();
            let per_block: Vec<usize> = (0..used.div_ceil(b as usize))
                .map(|q| (used - q * b as usize).min(b as usize))
                .collect();
            let luts: Vec<ManyLut<T>> = (1..=b as usize)
                .map(|cnt| {
                    let fns: Vec<Box<dyn Fn(u64) -> u64>> = (0..cnt)
                        .map(|t| Box::new(move |x: u64| (x >> t) & 1) as Box<dyn Fn(u64) -> u64>)
                        .collect();
                    let refs: Vec<&dyn Fn(u64) -> u64> = fns.iter().map(|f| f.as_ref()).collect();
                    ManyLut::from_fns(self.params(), m - 1, &refs)
                        .expect("log2(m) one-bit tables of a digit fit p / m ≥ m")
                })
                .collect();
            let jobs = per_block
                .iter()
                .enumerate()
                .map(|(q, &cnt)| ManyJob {
                    input: amount.blocks[q].ct.clone(),
                    input_degree: amount.blocks[q].degree,
                    lut: &luts[cnt - 1],
                })
                .collect();
            self.bootstrap_many_lut(jobs).into_iter().flatten().collect()
        } else {
            let bit_luts: Vec<Lut<T>> = (0..b).map(|t| self.lut(move |x| (x >> t) & 1)).collect();
            let jobs: Vec<Job<'_, T>> = (0..used as u32)
                .map(|j| Job {
                    input: amount.blocks[(j / b) as usize].ct.clone(),
                    lut: &bit_luts[(j % b) as usize],
                    degree: 1,
                })
                .collect();
            self.bootstrap_many(jobs)
        };
        let mut x = self.clean(a);
        for (j, bit) in amount_bits.into_iter().enumerate() {
            let shifted = self.shift_clear(&x, 1 << j, kind)?;
            let cond = crate::integer::BoolCiphertext { block: bit };
            x = self.clean(&self.select(&cond, &shifted, &x)?);
        }
        Ok(x)
    }
}
