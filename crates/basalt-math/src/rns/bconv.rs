//! Fast base conversion (Bajard et al. / Halevi–Polyakov–Shoup "approximate" CRT).
//!
//! # Algorithm
//! Given residues `x_i = X mod q_i` on a basis `{q_i}` with product `Q`, and a target basis
//! `{p_j}`:
//! 1. `y_i = [x_i · (Q/q_i)^{-1}]_{q_i}` (one Shoup multiplication per coefficient and input limb);
//! 2. `out_j = Σ_i y_i · [Q/q_i]_{p_j} mod p_j` (a matrix product: `n · from · to` multiply-adds,
//!    accumulated lazily in 128 bits).
//!
//! The result is `X + u·Q mod p_j` for an integer `0 <= u < from`: exact up to a small multiple
//! of `Q`, which ModUp tolerates (it becomes noise) and ModDown cancels by construction.
//!
//! # Source
//! Bajard, Eynard, Hasan, Zucca, "A full RNS variant of FV like somewhat homomorphic encryption
//! schemes", SAC 2016; CraterLake calls this unit CRB (change RNS base).

use std::sync::Arc;

use basalt_trace::{Kernel, emit};
use num_bigint::BigUint;
use num_traits::ToPrimitive;
use rayon::prelude::*;

use crate::modular::Modulus;
use crate::ring::RingContext;

use super::simd;

/// Coefficients per block of the lazy accumulation (keeps the 128-bit accumulators in L1).
const BLOCK: usize = 512;

thread_local! {
    /// One output limb per thread for [`BConv::convert_each`].
    static SCRATCH: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What the conversion returns for an input `X ∈ [0, Q)` (the residues' CRT value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BConvMode {
    /// `X + u·Q` for some `0 ≤ u < from`: no correction (the fast conversion; ModUp).
    Fast,
    /// `X` itself: `u = ⌊Σ_i y_i/q_i⌋` subtracted (ModDown, Rescale).
    Exact,
    /// `X` or `X − Q`, whichever lies in about `(−Q/2, Q/2]`: `u = round(Σ_i y_i/q_i)`
    /// subtracted. A centred ModUp digit is at most `Q/2` in size instead of up to
    /// `from · Q`, so the key-switching noise it multiplies is up to `2·from` times smaller.
    Centered,
}

/// Step 1 of a conversion ([`BConv::prepare_input`]): the scaled inputs `y_i` and, in the
/// exact and centred modes, the multiple `u` of `Q` to subtract per coefficient.
#[derive(Debug)]
pub struct BConvInput {
    y: Vec<Vec<u64>>,
    u: Vec<u64>,
}

/// Precomputed tables for converting from one set of limbs to another.
#[derive(Debug)]
pub struct BConv {
    from: Vec<Modulus>,
    to: Vec<Modulus>,
    /// `(Q/q_i)^{-1} mod q_i` and its Shoup constant.
    hat_inv: Vec<(u64, u64)>,
    /// `table[j][i] = (Q/q_i) mod p_j`.
    table: Vec<Vec<u64>>,
    /// Shoup constants of `table[j][i]` modulo `p_j`, for the SIMD paths (AVX-512, AVX2).
    table_shoup: Vec<Vec<u64>>,
    /// How many products fit in a u128 accumulator before a reduction.
    chunk: usize,
    /// `1/q_i` and `Q mod p_j`, for the exact variant ([`BConv::apply_exact`]).
    recip: Vec<f64>,
    q_mod_to: Vec<u64>,
}

impl BConv {
    /// Tables for converting from the limbs with global indices `from` to those in `to`.
    pub fn new(ctx: &RingContext, from: &[usize], to: &[usize]) -> BConv {
        let from: Vec<Modulus> = from.iter().map(|&g| ctx.moduli()[g]).collect();
        let to: Vec<Modulus> = to.iter().map(|&g| ctx.moduli()[g]).collect();
        let big_q: BigUint = from.iter().map(|m| BigUint::from(m.value())).product();
        let hats: Vec<BigUint> = from.iter().map(|m| &big_q / m.value()).collect();
        let hat_inv = from
            .iter()
            .zip(&hats)
            .map(|(m, h)| {
                let v = m.inv((h % m.value()).to_u64().expect("fits")).expect("coprime moduli");
                (v, m.shoup(v))
            })
            .collect();
        let table: Vec<Vec<u64>> = to
            .iter()
            .map(|p| hats.iter().map(|h| (h % p.value()).to_u64().expect("fits")).collect())
            .collect();
        let table_shoup = table
            .iter()
            .zip(&to)
            .map(|(row, p)| row.iter().map(|&t| p.shoup(t)).collect())
            .collect();
        let max_bits = |ms: &[Modulus]| ms.iter().map(Modulus::bits).max().unwrap_or(1);
        let product_bits = max_bits(&from) + max_bits(&to);
        let chunk =
            if product_bits >= 128 { 1 } else { (1usize << (128 - product_bits).min(20)) - 1 };
        let recip = from.iter().map(|m| 1.0 / m.value() as f64).collect();
        let q_mod_to = to.iter().map(|p| (&big_q % p.value()).to_u64().expect("fits")).collect();
        BConv { from, to, hat_inv, table, table_shoup, chunk: chunk.max(1), recip, q_mod_to }
    }

    pub fn from_len(&self) -> usize {
        self.from.len()
    }
    pub fn to_len(&self) -> usize {
        self.to.len()
    }

    /// Convert Coeff-domain limbs `input[i]` (mod `from[i]`) into `output[j]` (mod `to[j]`):
    /// the fast conversion, `X + u·Q` with `0 <= u < from`.
    pub fn apply(&self, input: &[&[u64]], output: &mut [&mut [u64]]) {
        self.convert(input, output, BConvMode::Fast, &[], &|_, _| {});
    }

    /// Exact conversion of `X mod Q` (in `[0, Q)`): the overshoot `u = floor(Σ_i y_i / q_i)` is
    /// computed in floating point and subtracted (Halevi–Polyakov–Shoup, CT-RSA 2019, §2.4).
    /// `u` can be off by one only when `Σ y_i/q_i` lies within about `2^-50` of an integer.
    /// ModDown and Rescale use this: the fast version's error `−u·Q/D` is biased (never
    /// positive), which costs several bits of worst-slot precision after a key switch.
    pub fn apply_exact(&self, input: &[&[u64]], output: &mut [&mut [u64]]) {
        self.convert(input, output, BConvMode::Exact, &[], &|_, _| {});
    }

    /// [`BConv::apply`] (or [`BConv::apply_exact`] when `exact`) followed by `post(j, limb)` on
    /// each output limb in the task that produced it, while the limb is still in cache: ModUp
    /// and ModDown fuse their NTT and final arithmetic this way instead of streaming every limb
    /// through memory once more.
    pub fn apply_then(
        &self,
        input: &[&[u64]],
        output: &mut [&mut [u64]],
        exact: bool,
        post: &(dyn Fn(usize, &mut [u64]) + Sync),
    ) {
        let mode = if exact { BConvMode::Exact } else { BConvMode::Fast };
        self.convert(input, output, mode, &[], post);
    }

    /// [`BConv::apply_then`] with any [`BConvMode`].
    pub fn apply_mode_then(
        &self,
        input: &[&[u64]],
        output: &mut [&mut [u64]],
        mode: BConvMode,
        post: &(dyn Fn(usize, &mut [u64]) + Sync),
    ) {
        self.convert(input, output, mode, &[], post);
    }

    /// [`BConv::apply_then`] (exact) of `X`, minus the constant `minus[j]` in output limb `j`:
    /// `[X − minus_j]_{p_j}`, the subtraction folded into the final reduction instead of a pass
    /// of its own (ModDown and Rescale subtract `floor(D/2)` this way).
    pub fn apply_exact_sub_then(
        &self,
        input: &[&[u64]],
        output: &mut [&mut [u64]],
        minus: &[u64],
        post: &(dyn Fn(usize, &mut [u64]) + Sync),
    ) {
        assert_eq!(minus.len(), self.to.len(), "BConv: one constant per output limb");
        self.convert(input, output, BConvMode::Exact, minus, post);
    }

    fn convert(
        &self,
        input: &[&[u64]],
        output: &mut [&mut [u64]],
        mode: BConvMode,
        minus: &[u64],
        post: &(dyn Fn(usize, &mut [u64]) + Sync),
    ) {
        assert_eq!(output.len(), self.to.len(), "BConv: wrong number of output limbs");
        let n = input.first().map_or(0, |l| l.len());
        emit(Kernel::BConv { n: n as u32, from: input.len() as u32, to: output.len() as u32 });
        let (y, u) = self.prepare(input, mode);
        output.par_iter_mut().with_min_len(crate::parallel::min_len()).enumerate().for_each(
            |(j, out)| {
                let minus = minus.get(j).map_or(0, |&m| self.to[j].reduce(m));
                self.convert_limb(&y, &u, j, minus, out);
                post(j, out);
            },
        );
    }

    /// The conversion without an output polynomial: output limb `j` is computed into a
    /// per-thread scratch limb and handed to `f(j, &mut targets[j], limb)`, in the task that
    /// produced it. Fused callers (key switching's ModUp feeding the inner product) consume
    /// each converted limb while it is in cache and never store the converted polynomial.
    ///
    /// Reports **no** trace kernel: the caller reports the logical BConv it performs, in its
    /// own order.
    pub fn convert_each<T: Send>(
        &self,
        input: &[&[u64]],
        targets: &mut [T],
        mode: BConvMode,
        f: &(dyn Fn(usize, &mut T, &mut [u64]) + Sync),
    ) {
        assert_eq!(targets.len(), self.to.len(), "BConv: wrong number of output limbs");
        let n = input.first().map_or(0, |l| l.len());
        let (y, u) = self.prepare(input, mode);
        targets.par_iter_mut().with_min_len(crate::parallel::min_len()).enumerate().for_each(
            |(j, t)| {
                // Taken out of the thread-local (not borrowed) so that a nested use on this thread
                // would allocate its own limb instead of panicking.
                let mut limb = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
                limb.resize(n, 0);
                self.convert_limb(&y, &u, j, 0, &mut limb);
                f(j, t, &mut limb);
                SCRATCH.with(|s| *s.borrow_mut() = limb);
            },
        );
    }

    /// Step 1 of a conversion of `input`, kept so that output limbs can then be produced one at
    /// a time, in any order and on any thread ([`BConv::convert_prepared`]): key switching
    /// consumes every digit's extension of one limb together. Reports no trace kernel.
    pub fn prepare_input(&self, input: &[&[u64]], mode: BConvMode) -> BConvInput {
        let (y, u) = self.prepare(input, mode);
        BConvInput { y, u }
    }

    /// Output limb `j` of the conversion prepared in `prep` (by [`BConv::prepare_input`] on
    /// these tables), written to `out`: the limb [`BConv::convert_each`] would hand over.
    ///
    /// # Panics
    /// If `j` is not an output limb or `out` is not one limb long.
    pub fn convert_prepared(&self, prep: &BConvInput, j: usize, out: &mut [u64]) {
        assert!(j < self.to.len(), "BConv: output limb {j} of {}", self.to.len());
        assert_eq!(prep.y.len(), self.from.len(), "BConv: prepared for other tables");
        assert!(prep.y.iter().all(|y| y.len() == out.len()), "BConv: limb length");
        self.convert_limb(&prep.y, &prep.u, j, 0, out);
    }

    /// Step 1, `y_i = x_i · (Q/q_i)^{-1} mod q_i`, and (exact and centred modes) the multiple
    /// `u` of `Q` to subtract per coefficient.
    fn prepare(&self, input: &[&[u64]], mode: BConvMode) -> (Vec<Vec<u64>>, Vec<u64>) {
        assert_eq!(input.len(), self.from.len(), "BConv: wrong number of input limbs");
        let n = input.first().map_or(0, |l| l.len());
        let y: Vec<Vec<u64>> = input
            .par_iter()
            .zip(&self.from)
            .zip(&self.hat_inv)
            .with_min_len(crate::parallel::min_len())
            .map(|((x, m), &(w, ws))| {
                let mut yi = vec![0u64; x.len()];
                if simd::mul_shoup(x, w, ws, m.value(), &mut yi).is_none() {
                    yi.iter_mut().zip(x.iter()).for_each(|(o, &v)| *o = m.mul_shoup(v, w, ws));
                }
                yi
            })
            .collect();
        let u: Vec<u64> = if mode == BConvMode::Fast {
            Vec::new()
        } else {
            let centered = mode == BConvMode::Centered;
            let mut u = vec![0u64; n];
            u.par_chunks_mut(OVERSHOOT_BLOCK)
                .with_min_len(crate::parallel::min_len().max(4))
                .enumerate()
                .for_each(|(b, out)| {
                    overshoot(&y, &self.recip, b * OVERSHOOT_BLOCK, centered, out);
                });
            u
        };
        (y, u)
    }

    /// Step 2 for output limb `j`: `out = Σ_i y_i · table[j][i] (− u·Q) − minus mod p_j`
    /// (`minus < p_j`).
    fn convert_limb(&self, y: &[Vec<u64>], u: &[u64], j: usize, minus: u64, out: &mut [u64]) {
        let (p, row) = (self.to[j], self.table[j].as_slice());
        // Inputs are residues below 2^62, as the lazy Shoup sum requires.
        let (neg_q, off) = (p.neg(self.q_mod_to[j]), p.neg(minus));
        let ts = &self.table_shoup[j];
        if simd::try_convert_limb(y, row, ts, p.value(), u, neg_q, off, out).is_some() {
            return;
        }
        let (neg_q, off) = (neg_q as u128, off as u128);
        // The final reduction of one coefficient's unreduced sum `a`, with `p − minus` and
        // (exact variant) `u·(p − Q mod p)` added first: together below 2^67, so the sum stays
        // below 2^128 unless `a` is already close to it (dozens of inputs), and only then is
        // `a` reduced first.
        let exact = |c: usize, a: u128| {
            let t = u[c] as u128 * neg_q + off;
            match a.checked_add(t) {
                Some(s) => p.reduce_u128(s),
                None => p.reduce_u128(p.reduce_u128(a) as u128 + t),
            }
        };
        let fast = |_: usize, a: u128| match a.checked_add(off) {
            Some(s) => p.reduce_u128(s),
            None => p.reduce_u128(p.reduce_u128(a) as u128 + off),
        };
        let plain = |_: usize, a: u128| p.reduce_u128(a);
        let done = if u.is_empty() && minus == 0 {
            Self::in_registers(y, row, self.chunk, out, plain)
        } else if u.is_empty() {
            Self::in_registers(y, row, self.chunk, out, fast)
        } else {
            Self::in_registers(y, row, self.chunk, out, exact)
        };
        if done {
            return;
        }
        let n = out.len();
        let mut acc = [0u128; BLOCK];
        for start in (0..n).step_by(BLOCK) {
            let len = BLOCK.min(n - start);
            let acc = &mut acc[..len];
            self.accumulate(y, row, p, start, acc);
            for (c, (o, &a)) in out[start..start + len].iter_mut().zip(acc.iter()).enumerate() {
                *o = if u.is_empty() { fast(start + c, a) } else { exact(start + c, a) };
            }
        }
    }

    /// Up to 8 inputs whose products all fit one accumulator: the sum of each coefficient is
    /// kept in registers and reduced at once by `fin(coefficient, sum)` (no accumulator array
    /// goes through memory). Returns false, doing nothing, for other input counts.
    fn in_registers(
        y: &[Vec<u64>],
        row: &[u64],
        chunk: usize,
        out: &mut [u64],
        fin: impl Fn(usize, u128) -> u64,
    ) -> bool {
        fn regs<const F: usize>(
            y: &[Vec<u64>],
            row: &[u64],
            out: &mut [u64],
            fin: impl Fn(usize, u128) -> u64,
        ) -> bool {
            let n = out.len();
            let ys: [&[u64]; F] = std::array::from_fn(|i| &y[i][..n]);
            let ts: [u128; F] = std::array::from_fn(|i| row[i] as u128);
            for (c, o) in out.iter_mut().enumerate() {
                let mut s = 0u128;
                for i in 0..F {
                    s += ys[i][c] as u128 * ts[i];
                }
                *o = fin(c, s);
            }
            true
        }
        if y.len() > chunk {
            return false;
        }
        match y.len() {
            1 => regs::<1>(y, row, out, fin),
            2 => regs::<2>(y, row, out, fin),
            3 => regs::<3>(y, row, out, fin),
            4 => regs::<4>(y, row, out, fin),
            5 => regs::<5>(y, row, out, fin),
            6 => regs::<6>(y, row, out, fin),
            7 => regs::<7>(y, row, out, fin),
            8 => regs::<8>(y, row, out, fin),
            _ => false,
        }
    }

    /// `acc[c] = Σ_i y_i[start + c] · row[i]`, unreduced (but below 2^128): input by input,
    /// with a reduction every `chunk` inputs.
    fn accumulate(&self, y: &[Vec<u64>], row: &[u64], p: Modulus, start: usize, acc: &mut [u128]) {
        let len = acc.len();
        acc.fill(0);
        for (k, (yi, &t)) in y.iter().zip(row).enumerate() {
            for (a, &v) in acc.iter_mut().zip(&yi[start..start + len]) {
                *a += v as u128 * t as u128;
            }
            if (k + 1) % self.chunk == 0 {
                acc.iter_mut().for_each(|a| *a = p.reduce_u128(*a) as u128);
            }
        }
    }
}

/// Coefficients per block of [`overshoot`] (its `f64` sums stay in L1).
const OVERSHOOT_BLOCK: usize = 256;

/// `out[c] = ⌊Σ_i y_i[start + c]·recip_i⌋` (rounded to nearest, halves away from zero, when
/// `centered`): the multiple of `Q` that the exact and centred conversions subtract.
///
/// The sums are formed input by input over a block, in the same order and with the same
/// roundings as a per-coefficient sum (no fused multiply-add), so the result does not depend on
/// the form that runs. The AVX2 form is the same code compiled for AVX2, where the conversions,
/// products and roundings vectorise instead of costing a libm call per coefficient.
fn overshoot(y: &[Vec<u64>], recip: &[f64], start: usize, centered: bool, out: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if super::avx2::available() {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { overshoot_avx2(y, recip, start, centered, out) };
        return;
    }
    overshoot_body(y, recip, start, centered, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn overshoot_avx2(y: &[Vec<u64>], recip: &[f64], start: usize, centered: bool, out: &mut [u64]) {
    overshoot_body(y, recip, start, centered, out);
}

#[inline(always)]
fn overshoot_body(y: &[Vec<u64>], recip: &[f64], start: usize, centered: bool, out: &mut [u64]) {
    let len = out.len();
    assert!(len <= OVERSHOOT_BLOCK, "overshoot: block too long");
    let mut sum = [0.0f64; OVERSHOOT_BLOCK];
    let sum = &mut sum[..len];
    for (yi, &r) in y.iter().zip(recip) {
        for (s, &v) in sum.iter_mut().zip(&yi[start..start + len]) {
            *s += v as f64 * r;
        }
    }
    for (o, &s) in out.iter_mut().zip(sum.iter()) {
        *o = (if centered { s.round() } else { s.floor() }) as u64;
    }
}

impl RingContext {
    /// The (cached) BConv tables from the limbs `from` to the limbs `to` (global indices).
    pub fn bconv(&self, from: &[usize], to: &[usize]) -> Arc<BConv> {
        let key = (from.to_vec(), to.to_vec());
        if let Some(b) = self.bconv_cache.lock().expect("bconv cache poisoned").get(&key) {
            return b.clone();
        }
        let b = Arc::new(BConv::new(self, from, to));
        self.bconv_cache.lock().expect("bconv cache poisoned").insert(key, b.clone());
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Step 2 by every form this CPU runs (the vector kernel on a length that is a multiple of
    /// 8, the scalar loop on one that is not) against the CRT value in big integers: exact mode gives `X mod p_j`, centred mode `X` or `X − Q`, fast mode `X + u·Q`
    /// with `0 ≤ u < from`; primes of 20 to 61 bits, some just above 2^61.
    #[test]
    fn every_step2_form_matches_big_integer_crt() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for (from_bits, to_bits) in
            [(60u32, 61u32), (61, 60), (20, 36), (40, 61), (56, 39), (36, 20)]
        {
            let q = crate::primes::ntt_primes(from_bits, 4, 5, &[]).unwrap();
            // `ntt_primes` alternates above and below 2^bits: 61-bit primes just above 2^61
            // are among them, as in Lattigo's special primes.
            let p = crate::primes::ntt_primes(to_bits, 4, 4, &q).unwrap();
            let ctx = RingContext::new(4, &q, &p).unwrap();
            for f in [1usize, 3, 5] {
                let from: Vec<usize> = (0..f).collect();
                let to: Vec<usize> = (5..9).collect();
                let conv = BConv::new(&ctx, &from, &to);
                let big_q: BigUint = q[..f].iter().map(|&v| BigUint::from(v)).product();
                // Zero and the largest residue among random ones (never all largest at once, nor
                // alone: the exact mode's floating-point `u` may be off by one at `X = Q − 1`).
                let input: Vec<Vec<u64>> = q[..f]
                    .iter()
                    .enumerate()
                    .map(|(i, &m)| {
                        let mut v: Vec<u64> = (0..8).map(|_| rng.random_range(0..m)).collect();
                        v[0] = 0;
                        if f > 1 {
                            v[1 + i % 2] = m - 1;
                        }
                        v
                    })
                    .collect();
                // Results on all 8 coefficients, which the 6-coefficient run must repeat.
                let mut first: Vec<Vec<u64>> = Vec::new();
                for n in [8usize, 6] {
                    let view: Vec<&[u64]> = input.iter().map(|v| &v[..n]).collect();
                    let mut run = 0;
                    // The CRT value of each coefficient.
                    let xs: Vec<BigUint> = (0..n)
                        .map(|c| {
                            let mut x = BigUint::from(0u32);
                            for (i, &m) in q[..f].iter().enumerate() {
                                let hat = &big_q / m;
                                let hat_mod = (&hat % m).to_u64().unwrap();
                                let inv = Modulus::new(m).unwrap().inv(hat_mod).unwrap();
                                let yi = input[i][c] as u128 * inv as u128 % m as u128;
                                x += hat * BigUint::from(yi);
                            }
                            x % &big_q
                        })
                        .collect();
                    for mode in [BConvMode::Fast, BConvMode::Exact, BConvMode::Centered] {
                        let prep = conv.prepare_input(&view, mode);
                        for (j, &pj) in p.iter().enumerate() {
                            let mut out = vec![0u64; n];
                            conv.convert_prepared(&prep, j, &mut out);
                            if n == 8 {
                                first.push(out.clone());
                            } else {
                                assert_eq!(out, first[run][..n], "{mode:?} j={j}: forms differ");
                            }
                            run += 1;
                            for c in 0..n {
                                let x_mod = (&xs[c] % pj).to_u64().unwrap();
                                let q_mod = (&big_q % pj).to_u64().unwrap();
                                let m = Modulus::new(pj).unwrap();
                                // `X + u·Q mod p_j` for each allowed `u` (negative: centred).
                                let with = |u: i64| m.add(x_mod, m.mul(q_mod, m.from_i64(u)));
                                let ok = match mode {
                                    BConvMode::Exact => out[c] == x_mod,
                                    BConvMode::Centered => out[c] == x_mod || out[c] == with(-1),
                                    BConvMode::Fast => (0..f as i64).any(|u| out[c] == with(u)),
                                };
                                assert!(ok, "q{from_bits}→p{to_bits} f={f} n={n} {mode:?} c={c}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// The overshoot `u` of every form (the one this CPU runs and the plain one) equals the
    /// per-coefficient sum, on random inputs, inputs that are multiples of half their modulus
    /// (sums landing on integers and halves), and the largest residues.
    #[test]
    fn overshoot_matches_the_per_coefficient_sum() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let moduli: Vec<u64> =
            vec![(1 << 61) - 1, 1_152_921_504_606_830_593, 68_719_403_009, 1_099_511_627_689, 97];
        let recip: Vec<f64> = moduli.iter().map(|&q| 1.0 / q as f64).collect();
        for f in 1..=moduli.len() {
            let n = 3 * OVERSHOOT_BLOCK + 40;
            let y: Vec<Vec<u64>> = moduli[..f]
                .iter()
                .map(|&q| {
                    (0..n)
                        .map(|c| match c % 4 {
                            0 => q - 1,
                            1 => q / 2 * (c as u64 % 3),
                            _ => rng.random_range(0..q),
                        })
                        .collect()
                })
                .collect();
            for centered in [false, true] {
                let want: Vec<u64> = (0..n)
                    .map(|c| {
                        let s: f64 =
                            y.iter().zip(&recip[..f]).map(|(yi, r)| yi[c] as f64 * r).sum();
                        (if centered { s.round() } else { s.floor() }) as u64
                    })
                    .collect();
                for start in (0..n).step_by(OVERSHOOT_BLOCK) {
                    let len = OVERSHOOT_BLOCK.min(n - start);
                    let mut got = vec![u64::MAX; len];
                    overshoot(&y, &recip[..f], start, centered, &mut got);
                    assert_eq!(got, want[start..start + len], "f={f} centered={centered}");
                    let mut plain = vec![u64::MAX; len];
                    overshoot_body(&y, &recip[..f], start, centered, &mut plain);
                    assert_eq!(plain, got, "f={f} centered={centered}");
                }
            }
        }
    }
}
