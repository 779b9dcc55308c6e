//! The bootstrapping key: `n` GGSW encryptions of the LWE key bits under the GLWE key, stored
//! once in the Fourier domain as one contiguous `c64` array (Strix's VMA also reads a
//! pre-transformed key; a CPU benefits the same way: no FFT of the key per PBS).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tfhe_fft::c64;

use crate::fft::fft_for;
use crate::ggsw::GgswCiphertext;
use crate::glwe::GlweSecretKey;
use crate::lwe::LweSecretKey;
use crate::params::NoiseDistribution;
use crate::random::Csprng;
use crate::torus::Torus;
use basalt_math::progress::{Cancelled, Progress, Silent};

/// Key rows (GGSWs, key-switching blocks) generated between two progress reports: enough to
/// keep every core busy, few enough that Ctrl-C is answered within a fraction of a second.
pub(crate) const KEY_STEP: usize = 32;

/// Fourier-domain bootstrapping key `bsk[n][(k+1)l][k+1]` of `N/2` complex values each.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FourierBsk {
    pub(crate) lwe_dim: usize,
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) base_log: u32,
    pub(crate) level: usize,
    /// Base size of the FFT plan whose permuted order the data is in.
    pub(crate) fft_base_n: usize,
    #[serde(with = "c64_vec")]
    pub(crate) data: Vec<c64>,
}

/// Serde for `Vec<c64>` as a flat sequence of `f64` (re, im, re, im, …).
mod c64_vec {
    use serde::ser::SerializeSeq;
    use serde::{Deserialize, Deserializer, Serializer};
    use tfhe_fft::c64;

    pub fn serialize<S: Serializer>(v: &[c64], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(2 * v.len()))?;
        for z in v {
            seq.serialize_element(&z.re)?;
            seq.serialize_element(&z.im)?;
        }
        seq.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<c64>, D::Error> {
        let flat = Vec::<f64>::deserialize(d)?;
        if flat.len() % 2 != 0 {
            return Err(serde::de::Error::custom("odd number of Fourier components"));
        }
        Ok(flat.chunks_exact(2).map(|p| c64::new(p[0], p[1])).collect())
    }
}

impl FourierBsk {
    /// Generate `bsk[i] = GGSW(s_i)` (in parallel, one forked generator per GGSW).
    #[allow(clippy::too_many_arguments)]
    pub fn generate<T: Torus>(
        lwe_sk: &LweSecretKey<T>,
        glwe_sk: &GlweSecretKey<T>,
        base_log: u32,
        level: usize,
        noise: NoiseDistribution,
        rng: &mut Csprng,
    ) -> Self {
        match Self::generate_with(lwe_sk, glwe_sk, base_log, level, noise, rng, &Silent) {
            Ok(bsk) => bsk,
            Err(Cancelled) => unreachable!("Silent never cancels"),
        }
    }

    /// [`FourierBsk::generate`] reporting to `progress`: one step per GGSW, told in groups of
    /// `KEY_STEP` (32), and stopping between groups when it cancels. Every generator is forked
    /// before the first group, so the key is the one [`FourierBsk::generate`] makes from the
    /// same `rng`.
    ///
    /// # Errors
    /// [`Cancelled`] when `progress` says so.
    #[allow(clippy::too_many_arguments)]
    pub fn generate_with<T: Torus>(
        lwe_sk: &LweSecretKey<T>,
        glwe_sk: &GlweSecretKey<T>,
        base_log: u32,
        level: usize,
        noise: NoiseDistribution,
        rng: &mut Csprng,
        progress: &dyn Progress,
    ) -> Result<Self, Cancelled> {
        let (k, n) = (glwe_sk.k, glwe_sk.n);
        let fft = fft_for(n);
        let per = Self::ggsw_len_of(k, n, level);
        let lwe_dim = lwe_sk.dimension();
        let mut data = vec![c64::default(); per * lwe_dim];
        let mut rngs: Vec<Csprng> = (0..lwe_dim).map(|_| rng.fork()).collect();
        progress.stage("bootstrapping key", lwe_dim as u64);
        let groups = data
            .chunks_mut(per * KEY_STEP)
            .zip(rngs.chunks_mut(KEY_STEP))
            .zip(lwe_sk.s.chunks(KEY_STEP));
        let mut done = 0;
        for ((data, rngs), bits) in groups {
            data.par_chunks_mut(per).zip(rngs.par_iter_mut()).zip(bits.par_iter()).for_each(
                |((out, r), &bit)| {
                    let g = GgswCiphertext::encrypt(
                        glwe_sk,
                        bit.to_signed(),
                        base_log,
                        level,
                        noise,
                        r,
                    );
                    g.to_fourier(&fft, out);
                },
            );
            done += bits.len() as u64;
            progress.step(done)?;
        }
        Ok(FourierBsk { lwe_dim, k, n, base_log, level, fft_base_n: fft.base_n(), data })
    }

    /// Bytes of the key for these dimensions, before it is generated: `lwe_dim` GGSWs of
    /// `(k+1)·level·(k+1)` Fourier polynomials of `N/2` complex values.
    pub fn size_bytes_of(lwe_dim: usize, k: usize, n: usize, level: usize) -> u64 {
        (lwe_dim * Self::ggsw_len_of(k, n, level) * std::mem::size_of::<c64>()) as u64
    }

    fn ggsw_len_of(k: usize, n: usize, level: usize) -> usize {
        (k + 1) * level * (k + 1) * (n / 2)
    }

    /// Number of `c64` per GGSW.
    pub fn ggsw_len(&self) -> usize {
        Self::ggsw_len_of(self.k, self.n, self.level)
    }

    /// The Fourier GGSW of key bit `i`.
    #[inline]
    pub fn ggsw(&self, i: usize) -> &[c64] {
        let per = self.ggsw_len();
        &self.data[i * per..(i + 1) * per]
    }

    pub fn lwe_dimension(&self) -> usize {
        self.lwe_dim
    }

    pub fn glwe_dimension(&self) -> usize {
        self.k
    }

    pub fn poly_size(&self) -> usize {
        self.n
    }

    pub fn base_log(&self) -> u32 {
        self.base_log
    }

    pub fn level(&self) -> usize {
        self.level
    }

    /// Size in bytes of the Fourier data.
    pub fn size_bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<c64>()
    }
}
