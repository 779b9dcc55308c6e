//! Randomness: a ChaCha20 CSPRNG seeded from the OS, and the samplers TFHE needs
//! (uniform torus masks, binary keys, rounded Gaussian and TUniform noise).

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::params::NoiseDistribution;
use crate::torus::Torus;

/// Cryptographic generator used for keys, masks and noise.
pub struct Csprng {
    rng: ChaCha20Rng,
}

impl Csprng {
    /// Seeded from the operating system (`getrandom`).
    pub fn from_os() -> Self {
        Csprng { rng: ChaCha20Rng::from_os_rng() }
    }

    /// Deterministic stream for tests and reproducible benchmarks. Not for real keys.
    pub fn from_seed(seed: u64) -> Self {
        Csprng { rng: ChaCha20Rng::seed_from_u64(seed) }
    }

    /// An independent child generator (256-bit seed drawn from this one), so that key
    /// generation can run on several threads without sharing a generator.
    pub fn fork(&mut self) -> Self {
        let mut seed = [0u8; 32];
        self.rng.fill_bytes(&mut seed);
        Csprng { rng: ChaCha20Rng::from_seed(seed) }
    }

    /// Uniform word.
    #[inline]
    pub fn uniform<T: Torus>(&mut self) -> T {
        T::from_u64(self.rng.next_u64())
    }

    pub fn fill_uniform<T: Torus>(&mut self, out: &mut [T]) {
        for x in out {
            *x = self.uniform();
        }
    }

    /// Uniform bit.
    #[inline]
    pub fn bit(&mut self) -> bool {
        self.rng.next_u32() & 1 == 1
    }

    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Standard normal via Box–Muller (53-bit uniforms; adequate for TFHE noise widths).
    fn std_normal(&mut self) -> f64 {
        let u1: f64 = 1.0 - self.rng.random::<f64>(); // in (0, 1]
        let u2: f64 = self.rng.random::<f64>();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// One noise sample from `dist`, as a torus word.
    pub fn noise<T: Torus>(&mut self, dist: NoiseDistribution) -> T {
        match dist {
            NoiseDistribution::Gaussian { std_dev } => {
                let scale = 2f64.powi(T::BITS as i32);
                T::from_f64_wrapping(self.std_normal() * std_dev * scale)
            }
            NoiseDistribution::TUniform { bound_log2 } => {
                // Sum of a uniform value in [0, 2^(b+1)) and one extra bit, shifted: gives the
                // TUniform law on [-2^b, 2^b] (ends with half the interior probability).
                let b = bound_log2;
                let r = self.rng.next_u64();
                let width = b + 2;
                let v = if width >= 64 { r } else { r & ((1u64 << width) - 1) };
                // v uniform in [0, 2^(b+2)); x = (v + 1) >> 1 is uniform-ish on [0, 2^(b+1)] with
                // half weight at both ends; centre it.
                let x = (v as i128 + 1) >> 1;
                let c = x - (1i128 << b);
                T::from_i64(c as i64)
            }
        }
    }
}
