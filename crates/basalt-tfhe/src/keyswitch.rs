//! LWE key switching from the extracted key (dimension `kN`) to the small key (dimension `n`),
//! per ciphertext and batched as a matrix–matrix product.
//!
//! # Algorithm
//! `KSK_{i,j} = LWE_s(s'_i · q/B^j)`; `KS(a', b') = (0, b') − Σ_{i,j} d_{i,j}·KSK_{i,j}` with
//! `d_{i,j}` the signed gadget digits of `a'_i`. Batched, the loop order is swapped so
//! that each KSK row is read once per tile of ciphertexts (the ksk × LWE-batch product of Strix's
//! KS cluster); integer arithmetic is exact, so the result is bit-identical.
//!
//! # Storage: the top 32 bits of every word
//! The key is generated at the full torus width and then stored rounded to its top 32 bits
//! (a public function of the public key: no security change), and the sum `Σ d·KSK` is
//! computed mod 2^32, as in Strix's KS cluster, whose datapath is 32 bits wide (§VI-A). On the 64-bit torus this halves the bytes streamed per key switch (the
//! key, 60 MB on TFHE-rs's 2+2 set, is read from DRAM on every call: the key switch is
//! memory-bound) and replaces 64-bit multiplies, which AVX2 lacks, by `vpmulld`. The cost is
//! one rounding error of at most `2^-33` per key word, a phase variance of
//! `kN·l·E[d²]·(1 + n/2)·2^-64/12` ([`crate::noise`]), about 2^-20 of the key switch's own
//! noise on that set. The input body keeps its full width. On the 32-bit torus the stored key
//! is the key itself and the result is exact.
//!
//! # Source
//! Strix Alg. 2 and §IV-D (KS cluster, matrix–matrix formulation); CGGI JoC 2019 Alg. 1.

use std::marker::PhantomData;

use pulp::{Simd, WithSimd};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::bsk::KEY_STEP;
use crate::decompose::StreamingDecomposer;
use crate::lwe::LweSecretKey;
use crate::params::NoiseDistribution;
use crate::random::Csprng;
use crate::torus::Torus;
use basalt_math::progress::{Cancelled, Progress, Silent};

/// Key-switching key `ksk[kN·l][n+1]`, each word stored as its top 32 bits (module doc).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct KeySwitchKey<T: Torus> {
    pub(crate) in_dim: usize,
    pub(crate) out_dim: usize,
    pub(crate) base_log: u32,
    pub(crate) level: usize,
    pub(crate) data: Vec<u32>,
    #[serde(skip)]
    torus: PhantomData<T>,
}

/// Bits dropped when a torus word is stored in 32 bits.
#[inline(always)]
fn drop_bits<T: Torus>() -> u32 {
    T::BITS - 32
}

/// `x` rounded to its top 32 bits (to nearest, mod 2^32).
#[inline(always)]
pub fn top32<T: Torus>(x: T) -> u32 {
    let s = drop_bits::<T>();
    if s == 0 { x.to_u64() as u32 } else { (((x.to_u64() >> (s - 1)) + 1) >> 1) as u32 }
}

/// A 32-bit word back on the torus (`v · 2^(w−32)`).
#[inline(always)]
fn widen<T: Torus>(v: u32) -> T {
    T::from_u64(v as u64).shl(drop_bits::<T>())
}

impl<T: Torus> KeySwitchKey<T> {
    /// Generate the key switching `from` (big key) to `to` (small key).
    pub fn generate(
        from: &LweSecretKey<T>,
        to: &LweSecretKey<T>,
        base_log: u32,
        level: usize,
        noise: NoiseDistribution,
        rng: &mut Csprng,
    ) -> Self {
        match Self::generate_with(from, to, base_log, level, noise, rng, &Silent) {
            Ok(ksk) => ksk,
            Err(Cancelled) => unreachable!("Silent never cancels"),
        }
    }

    /// [`KeySwitchKey::generate`] reporting to `progress`: one step per input key bit, told
    /// in groups, and stopping between groups when it cancels. Every generator is forked
    /// before the first group, so the key is the one [`KeySwitchKey::generate`] makes from
    /// the same `rng`.
    ///
    /// # Errors
    /// [`Cancelled`] when `progress` says so.
    pub fn generate_with(
        from: &LweSecretKey<T>,
        to: &LweSecretKey<T>,
        base_log: u32,
        level: usize,
        noise: NoiseDistribution,
        rng: &mut Csprng,
        progress: &dyn Progress,
    ) -> std::result::Result<Self, Cancelled> {
        let (in_dim, out_dim) = (from.dimension(), to.dimension());
        let row = out_dim + 1;
        let mut data = vec![0u32; in_dim * level * row];
        let mut rngs: Vec<Csprng> = (0..in_dim).map(|_| rng.fork()).collect();
        progress.stage("key-switching key", in_dim as u64);
        // Blocks are small (one LWE per level): many per report.
        let step = 8 * KEY_STEP;
        let groups =
            data.chunks_mut(level * row * step).zip(rngs.chunks_mut(step)).zip(from.s.chunks(step));
        let mut done = 0;
        for ((data, rngs), bits) in groups {
            data.par_chunks_mut(level * row)
                .zip(rngs.par_iter_mut())
                .zip(bits.par_iter())
                .for_each(|((block, r), &si)| {
                    for j in 1..=level {
                        let g = T::ONE.shl(T::BITS - j as u32 * base_log);
                        let ct = to.encrypt(si.wmul(g), noise, r);
                        for (o, &x) in block[(j - 1) * row..j * row].iter_mut().zip(&ct.data) {
                            *o = top32(x);
                        }
                    }
                });
            done += bits.len() as u64;
            progress.step(done)?;
        }
        Ok(KeySwitchKey { in_dim, out_dim, base_log, level, data, torus: PhantomData })
    }

    /// Bytes of the key for these dimensions, before it is generated.
    pub fn size_bytes_of(in_dim: usize, out_dim: usize, level: usize) -> u64 {
        (in_dim * level * (out_dim + 1) * std::mem::size_of::<u32>()) as u64
    }

    pub fn input_dimension(&self) -> usize {
        self.in_dim
    }

    pub fn output_dimension(&self) -> usize {
        self.out_dim
    }

    pub fn size_bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<u32>()
    }

    fn decomposer(&self) -> StreamingDecomposer {
        StreamingDecomposer::new(self.base_log, self.level)
    }

    /// Key-switch one ciphertext (`in_dim + 1` words) into `out` (`out_dim + 1` words).
    pub fn keyswitch(&self, input: &[T], out: &mut [T]) {
        let row = self.out_dim + 1;
        assert!(input.len() == self.in_dim + 1 && out.len() == row);
        let mut acc = vec![0u32; row];
        let dec = self.decomposer();
        let mut digits = vec![0i64; self.level];
        for (i, &a) in input[..self.in_dim].iter().enumerate() {
            dec.decompose_one(a, &mut digits);
            for (j, &d) in digits.iter().enumerate() {
                if d != 0 {
                    let r = &self.data[(i * self.level + j) * row..(i * self.level + j + 1) * row];
                    sub_scaled(&mut acc, r, d as u32);
                }
            }
        }
        self.finish(input[self.in_dim], &acc, out);
    }

    /// `out = (0, b) − Σ d·KSK` from the 32-bit sum `acc = −Σ d·KSK mod 2^32`.
    fn finish(&self, body: T, acc: &[u32], out: &mut [T]) {
        let n = self.out_dim;
        for (o, &a) in out[..n].iter_mut().zip(&acc[..n]) {
            *o = widen(a);
        }
        out[n] = body.wadd(widen(acc[n]));
    }

    /// Key-switch a batch: the KSK is streamed once per tile of `tile` ciphertexts, tiles run
    /// on the rayon pool. Bit-identical to [`keyswitch`](Self::keyswitch) on each input.
    pub fn keyswitch_batch(&self, inputs: &[&[T]], outs: &mut [Vec<T>], tile: usize) {
        assert_eq!(inputs.len(), outs.len());
        let row = self.out_dim + 1;
        let tile = tile.max(1);
        outs.par_chunks_mut(tile).zip(inputs.par_chunks(tile)).for_each(|(o, inp)| {
            let dec = self.decomposer();
            let l = self.level;
            for x in inp {
                assert_eq!(x.len(), self.in_dim + 1);
            }
            let mut accs = vec![0u32; inp.len() * row];
            // Digits of input coefficient i for the whole tile, [ct][level].
            let mut digits = vec![0i64; inp.len() * l];
            for i in 0..self.in_dim {
                for (c, x) in inp.iter().enumerate() {
                    dec.decompose_one(x[i], &mut digits[c * l..(c + 1) * l]);
                }
                for j in 0..l {
                    let r = &self.data[(i * l + j) * row..(i * l + j + 1) * row];
                    for (c, acc) in accs.chunks_mut(row).enumerate() {
                        let d = digits[c * l + j];
                        if d != 0 {
                            sub_scaled(acc, r, d as u32);
                        }
                    }
                }
            }
            for ((out, acc), x) in o.iter_mut().zip(accs.chunks(row)).zip(inp) {
                out.clear();
                out.resize(row, T::ZERO);
                self.finish(x[self.in_dim], acc, out);
            }
        });
    }
}

/// `out -= d · row` mod 2^32, vectorised at run time (`vpmulld` on AVX2).
#[inline]
fn sub_scaled(out: &mut [u32], row: &[u32], d: u32) {
    struct Impl<'a> {
        out: &'a mut [u32],
        row: &'a [u32],
        d: u32,
    }
    impl WithSimd for Impl<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: Simd>(self, _simd: S) {
            for (o, &r) in self.out.iter_mut().zip(self.row) {
                *o = o.wrapping_sub(r.wrapping_mul(self.d));
            }
        }
    }
    pulp::Arch::new().dispatch(Impl { out, row, d });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyswitch_preserves_phase_and_batch_is_identical() {
        let mut rng = Csprng::from_seed(7);
        let big = LweSecretKey::<u64>::generate(512, &mut rng);
        let small = LweSecretKey::<u64>::generate(100, &mut rng);
        let noise = NoiseDistribution::TUniform { bound_log2: 30 };
        let ksk = KeySwitchKey::generate(&big, &small, 4, 6, noise, &mut rng);
        let msgs: Vec<u64> = (0..20u64).map(|m| m << 59).collect();
        let cts: Vec<_> = msgs.iter().map(|&m| big.encrypt(m, noise, &mut rng)).collect();
        let mut singles = Vec::new();
        for (ct, &m) in cts.iter().zip(&msgs) {
            let mut out = vec![0u64; 101];
            ksk.keyswitch(ct.as_slice(), &mut out);
            let ph = small.phase(&crate::lwe::LweCiphertext::from_vec(out.clone()));
            assert!(ph.wrapping_sub(m).to_signed().abs() < 1 << 50, "m={m:#x}");
            singles.push(out);
        }
        let inputs: Vec<&[u64]> = cts.iter().map(|c| c.as_slice()).collect();
        for tile in [1, 3, 8, 64] {
            let mut outs = vec![Vec::new(); inputs.len()];
            ksk.keyswitch_batch(&inputs, &mut outs, tile);
            assert_eq!(outs, singles, "tile {tile}");
        }
    }

    /// Textbook key switch at the full torus width on the widened stored key: the 32-bit
    /// kernel must give exactly this (the reduction mod 2^32 loses nothing).
    fn reference<T: Torus>(ksk: &KeySwitchKey<T>, input: &[T]) -> Vec<T> {
        let row = ksk.out_dim + 1;
        let mut out = vec![T::ZERO; row];
        out[ksk.out_dim] = input[ksk.in_dim];
        for (i, &a) in input[..ksk.in_dim].iter().enumerate() {
            let digits = crate::decompose::decompose_reference(a, ksk.base_log, ksk.level);
            for (j, &d) in digits.iter().enumerate() {
                let r = &ksk.data[(i * ksk.level + j) * row..(i * ksk.level + j + 1) * row];
                for (o, &k) in out.iter_mut().zip(r) {
                    *o = o.wsub(widen::<T>(k).wmul(T::from_i64(d)));
                }
            }
        }
        out
    }

    #[test]
    fn the_32_bit_kernel_equals_the_full_width_sum_on_the_stored_key() {
        let mut rng = Csprng::from_seed(8);
        let noise = NoiseDistribution::TUniform { bound_log2: 30 };
        let big = LweSecretKey::<u64>::generate(256, &mut rng);
        let small = LweSecretKey::<u64>::generate(64, &mut rng);
        let ksk = KeySwitchKey::generate(&big, &small, 3, 5, noise, &mut rng);
        for _ in 0..8 {
            let mut x = vec![0u64; 257];
            rng.fill_uniform(&mut x);
            let mut out = vec![0u64; 65];
            ksk.keyswitch(&x, &mut out);
            assert_eq!(out, reference(&ksk, &x));
            // The body keeps its low 32 bits; the mask is a multiple of 2^32.
            assert_eq!(out[64] & 0xffff_ffff, x[256] & 0xffff_ffff);
            assert!(out[..64].iter().all(|&a| a & 0xffff_ffff == 0));
        }
        // On the 32-bit torus the stored key is the key and the result is the textbook one.
        let big = LweSecretKey::<u32>::generate(128, &mut rng);
        let small = LweSecretKey::<u32>::generate(48, &mut rng);
        let noise = NoiseDistribution::TUniform { bound_log2: 10 };
        let ksk = KeySwitchKey::generate(&big, &small, 4, 4, noise, &mut rng);
        let ct = big.encrypt(3 << 29, noise, &mut rng);
        let mut out = vec![0u32; 49];
        ksk.keyswitch(ct.as_slice(), &mut out);
        assert_eq!(out, reference(&ksk, ct.as_slice()));
        let ph = small.phase(&crate::lwe::LweCiphertext::from_vec(out));
        assert!(ph.wrapping_sub(3 << 29).to_signed().abs() < 1 << 24);
    }

    #[test]
    fn top32_rounds_to_nearest() {
        assert_eq!(top32(0u64), 0);
        assert_eq!(top32((1u64 << 31) - 1), 0);
        assert_eq!(top32(1u64 << 31), 1);
        assert_eq!(top32(u64::MAX), 0);
        assert_eq!(top32(0xdead_beef_7fff_ffffu64), 0xdead_beef);
        assert_eq!(top32(0xdead_beef_8000_0000u64), 0xdead_bef0);
        assert_eq!(top32(0x1234_5678u32), 0x1234_5678);
    }
}
