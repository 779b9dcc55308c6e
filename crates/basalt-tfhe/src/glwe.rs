//! GLWE secret keys and ciphertexts: `(A_1..A_k, B = Σ A_i·S_i + M + E)` over
//! `Z_q[X]/(X^N + 1)`, polynomials stored back to back, body last.

use serde::{Deserialize, Serialize};

use crate::fft::fft_for;
use crate::lwe::LweSecretKey;
use crate::params::NoiseDistribution;
use crate::random::Csprng;
use crate::torus::Torus;

/// Binary GLWE secret key: `k` polynomials of degree `< N`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct GlweSecretKey<T: Torus> {
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) s: Vec<T>,
}

/// Erase the key when dropped.
impl<T: Torus> Drop for GlweSecretKey<T> {
    fn drop(&mut self) {
        crate::keys::zeroize_words(&mut self.s);
    }
}

impl<T: Torus> GlweSecretKey<T> {
    pub fn generate(k: usize, n: usize, rng: &mut Csprng) -> Self {
        let s = std::mem::take(&mut LweSecretKey::<T>::generate(k * n, rng).s);
        GlweSecretKey { k, n, s }
    }

    pub fn glwe_dimension(&self) -> usize {
        self.k
    }

    pub fn poly_size(&self) -> usize {
        self.n
    }

    /// The same bits read as an LWE key of dimension `kN`: the key of sample-extracted LWEs.
    pub fn as_lwe_key(&self) -> LweSecretKey<T> {
        LweSecretKey::from_bits(self.s.clone())
    }

    /// Encrypt a plaintext polynomial `m` (length N) into `out`.
    pub fn encrypt_into(
        &self,
        out: &mut GlweCiphertext<T>,
        m: &[T],
        noise: NoiseDistribution,
        rng: &mut Csprng,
    ) {
        let (k, n) = (self.k, self.n);
        let fft = fft_for(n);
        out.k = k;
        out.n = n;
        out.data.resize((k + 1) * n, T::ZERO);
        let (mask, body) = out.data.split_at_mut(k * n);
        rng.fill_uniform(mask);
        for (b, &mj) in body.iter_mut().zip(m) {
            let e: T = rng.noise(noise);
            *b = mj.wadd(e);
        }
        let mut prod = vec![T::ZERO; n];
        for c in 0..k {
            fft.mul_exact_small(&mask[c * n..(c + 1) * n], &self.s[c * n..(c + 1) * n], &mut prod);
            for (b, &p) in body.iter_mut().zip(&prod) {
                *b = b.wadd(p);
            }
        }
    }

    pub fn encrypt(
        &self,
        m: &[T],
        noise: NoiseDistribution,
        rng: &mut Csprng,
    ) -> GlweCiphertext<T> {
        let mut c = GlweCiphertext::zero(self.k, self.n);
        self.encrypt_into(&mut c, m, noise, rng);
        c
    }

    /// Phase polynomial `B - Σ A_i·S_i`.
    pub fn phase(&self, ct: &GlweCiphertext<T>) -> Vec<T> {
        let (k, n) = (self.k, self.n);
        let fft = fft_for(n);
        let mut out = ct.data[k * n..].to_vec();
        let mut prod = vec![T::ZERO; n];
        for c in 0..k {
            fft.mul_exact_small(
                &ct.data[c * n..(c + 1) * n],
                &self.s[c * n..(c + 1) * n],
                &mut prod,
            );
            for (o, &p) in out.iter_mut().zip(&prod) {
                *o = o.wsub(p);
            }
        }
        out
    }
}

/// GLWE ciphertext: `k + 1` polynomials of size `N`, body last.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct GlweCiphertext<T: Torus> {
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) data: Vec<T>,
}

impl<T: Torus> GlweCiphertext<T> {
    pub fn zero(k: usize, n: usize) -> Self {
        GlweCiphertext { k, n, data: vec![T::ZERO; (k + 1) * n] }
    }

    /// Noiseless `(0, .., 0, M)`: the initial accumulator of blind rotation.
    pub fn trivial(k: usize, m: &[T]) -> Self {
        let n = m.len();
        let mut c = Self::zero(k, n);
        c.data[k * n..].copy_from_slice(m);
        c
    }

    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    pub fn glwe_dimension(&self) -> usize {
        self.k
    }

    pub fn poly_size(&self) -> usize {
        self.n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fft::schoolbook_negacyclic;

    #[test]
    fn glwe_phase_matches_schoolbook_and_message() {
        let mut rng = Csprng::from_seed(3);
        let (k, n) = (2, 256);
        let sk = GlweSecretKey::<u64>::generate(k, n, &mut rng);
        let m: Vec<u64> = (0..n as u64).map(|j| (j % 8) << 60).collect();
        let ct = sk.encrypt(&m, NoiseDistribution::TUniform { bound_log2: 10 }, &mut rng);
        let ph = sk.phase(&ct);
        // Independent phase via the O(N^2) schoolbook product.
        let mut ph2 = ct.data[k * n..].to_vec();
        for c in 0..k {
            let p = schoolbook_negacyclic(&ct.data[c * n..(c + 1) * n], &sk.s[c * n..(c + 1) * n]);
            for (o, x) in ph2.iter_mut().zip(p) {
                *o = o.wrapping_sub(x);
            }
        }
        assert_eq!(ph, ph2);
        for (p, mj) in ph.iter().zip(&m) {
            assert!(p.wrapping_sub(*mj).to_signed().abs() <= 1 << 10);
        }
    }
}
