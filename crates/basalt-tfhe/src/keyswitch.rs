//! LWE key switching from the extracted key (dimension `kN`) to the small key (dimension `n`),
//! per ciphertext and batched as a matrix–matrix product.
//!
//! # Algorithm
//! `KSK_{i,j} = LWE_s(s'_i · q/B^j)`; `KS(a', b') = (0, b') − Σ_{i,j} d_{i,j}·KSK_{i,j}` with
//! `d_{i,j}` the signed gadget digits of `a'_i`. Batched, the loop order is swapped so
//! that each KSK row is read once per tile of ciphertexts (the ksk × LWE-batch product of Strix's
//! KS cluster); integer arithmetic is exact, so the result is bit-identical.
//!
//! # Source
//! Strix Alg. 2 and §IV-D (KS cluster, matrix–matrix formulation); CGGI JoC 2019 Alg. 1.

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

/// Key-switching key `ksk[kN·l][n+1]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct KeySwitchKey<T: Torus> {
    pub(crate) in_dim: usize,
    pub(crate) out_dim: usize,
    pub(crate) base_log: u32,
    pub(crate) level: usize,
    pub(crate) data: Vec<T>,
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
        let mut data = vec![T::ZERO; in_dim * level * row];
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
                        block[(j - 1) * row..j * row].copy_from_slice(&ct.data);
                    }
                });
            done += bits.len() as u64;
            progress.step(done)?;
        }
        Ok(KeySwitchKey { in_dim, out_dim, base_log, level, data })
    }

    /// Bytes of the key for these dimensions, before it is generated.
    pub fn size_bytes_of(in_dim: usize, out_dim: usize, level: usize) -> u64 {
        (in_dim * level * (out_dim + 1) * std::mem::size_of::<T>()) as u64
    }

    pub fn input_dimension(&self) -> usize {
        self.in_dim
    }

    pub fn output_dimension(&self) -> usize {
        self.out_dim
    }

    pub fn size_bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<T>()
    }

    fn decomposer(&self) -> StreamingDecomposer {
        StreamingDecomposer::new(self.base_log, self.level)
    }

    /// Key-switch one ciphertext (`in_dim + 1` words) into `out` (`out_dim + 1` words).
    pub fn keyswitch(&self, input: &[T], out: &mut [T]) {
        let row = self.out_dim + 1;
        assert!(input.len() == self.in_dim + 1 && out.len() == row);
        out.iter_mut().for_each(|x| *x = T::ZERO);
        out[self.out_dim] = input[self.in_dim];
        let dec = self.decomposer();
        let mut digits = vec![0i64; self.level];
        for (i, &a) in input[..self.in_dim].iter().enumerate() {
            dec.decompose_one(a, &mut digits);
            for (j, &d) in digits.iter().enumerate() {
                if d != 0 {
                    let r = &self.data[(i * self.level + j) * row..(i * self.level + j + 1) * row];
                    sub_scaled(out, r, T::from_i64(d));
                }
            }
        }
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
            for (c, out) in o.iter_mut().enumerate() {
                assert_eq!(inp[c].len(), self.in_dim + 1);
                out.clear();
                out.resize(row, T::ZERO);
                out[self.out_dim] = inp[c][self.in_dim];
            }
            // Digits of input coefficient i for the whole tile, [ct][level].
            let mut digits = vec![0i64; inp.len() * l];
            for i in 0..self.in_dim {
                for (c, x) in inp.iter().enumerate() {
                    dec.decompose_one(x[i], &mut digits[c * l..(c + 1) * l]);
                }
                for j in 0..l {
                    let r = &self.data[(i * l + j) * row..(i * l + j + 1) * row];
                    for (c, out) in o.iter_mut().enumerate() {
                        let d = digits[c * l + j];
                        if d != 0 {
                            sub_scaled(out, r, T::from_i64(d));
                        }
                    }
                }
            }
        });
    }
}

/// `out -= d · row` (wrapping), vectorised at run time.
#[inline]
fn sub_scaled<T: Torus>(out: &mut [T], row: &[T], d: T) {
    struct Impl<'a, T> {
        out: &'a mut [T],
        row: &'a [T],
        d: T,
    }
    impl<T: Torus> WithSimd for Impl<'_, T> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: Simd>(self, _simd: S) {
            for (o, &r) in self.out.iter_mut().zip(self.row) {
                *o = o.wsub(r.wmul(self.d));
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
}
