//! LWE secret keys and ciphertexts: `(a_1..a_n, b = <a, s> + mu + e)`, `b` stored last as in
//! Strix Alg. 1/2 (`c[n+1]`, `b = c[n]`).

use serde::{Deserialize, Serialize};

use crate::params::NoiseDistribution;
use crate::random::Csprng;
use crate::torus::Torus;

/// Binary LWE secret key `s in {0,1}^n`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct LweSecretKey<T: Torus> {
    pub(crate) s: Vec<T>,
}

/// Erase the key when dropped (every copy, e.g. the one a client key lends to encryption).
impl<T: Torus> Drop for LweSecretKey<T> {
    fn drop(&mut self) {
        crate::keys::zeroize_words(&mut self.s);
    }
}

impl<T: Torus> LweSecretKey<T> {
    /// Uniform binary key from the CSPRNG.
    pub fn generate(n: usize, rng: &mut Csprng) -> Self {
        LweSecretKey { s: (0..n).map(|_| if rng.bit() { T::ONE } else { T::ZERO }).collect() }
    }

    pub fn from_bits(s: Vec<T>) -> Self {
        LweSecretKey { s }
    }

    pub fn dimension(&self) -> usize {
        self.s.len()
    }

    pub fn as_slice(&self) -> &[T] {
        &self.s
    }

    /// Encrypt a torus plaintext.
    pub fn encrypt(&self, mu: T, noise: NoiseDistribution, rng: &mut Csprng) -> LweCiphertext<T> {
        let n = self.s.len();
        let mut data = vec![T::ZERO; n + 1];
        rng.fill_uniform(&mut data[..n]);
        let e: T = rng.noise(noise);
        let dot = dot(&data[..n], &self.s);
        data[n] = dot.wadd(mu).wadd(e);
        LweCiphertext { data }
    }

    /// Phase `b - <a, s> = mu + e`.
    pub fn phase(&self, ct: &LweCiphertext<T>) -> T {
        let n = self.s.len();
        debug_assert_eq!(ct.data.len(), n + 1);
        ct.data[n].wsub(dot(&ct.data[..n], &self.s))
    }
}

#[inline]
pub(crate) fn dot<T: Torus>(a: &[T], s: &[T]) -> T {
    a.iter().zip(s).fold(T::ZERO, |acc, (&x, &y)| acc.wadd(x.wmul(y)))
}

/// LWE ciphertext of dimension `n` (`n + 1` words).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct LweCiphertext<T: Torus> {
    pub(crate) data: Vec<T>,
}

impl<T: Torus> LweCiphertext<T> {
    pub fn zero(n: usize) -> Self {
        LweCiphertext { data: vec![T::ZERO; n + 1] }
    }

    /// Noiseless encryption of `mu` under any key (mask zero).
    pub fn trivial(n: usize, mu: T) -> Self {
        let mut c = Self::zero(n);
        c.data[n] = mu;
        c
    }

    pub fn from_vec(data: Vec<T>) -> Self {
        LweCiphertext { data }
    }

    /// `n` (an empty, i.e. malformed, ciphertext reports 0).
    pub fn dimension(&self) -> usize {
        self.data.len().saturating_sub(1)
    }

    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    pub fn body(&self) -> T {
        self.data[self.data.len() - 1]
    }

    pub fn add_assign(&mut self, o: &Self) {
        for (x, &y) in self.data.iter_mut().zip(&o.data) {
            *x = x.wadd(y);
        }
    }

    pub fn sub_assign(&mut self, o: &Self) {
        for (x, &y) in self.data.iter_mut().zip(&o.data) {
            *x = x.wsub(y);
        }
    }

    /// Multiply by a small signed integer (a cleartext).
    pub fn scale(&mut self, c: i64) {
        let c = T::from_i64(c);
        for x in &mut self.data {
            *x = x.wmul(c);
        }
    }

    /// Add a plaintext to the body.
    pub fn add_plain(&mut self, mu: T) {
        let n = self.data.len() - 1;
        self.data[n] = self.data[n].wadd(mu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::torus::{from_real, to_real};

    #[test]
    fn encrypt_phase_is_message_plus_small_noise() {
        let mut rng = Csprng::from_seed(1);
        let sk = LweSecretKey::<u64>::generate(300, &mut rng);
        let noise = NoiseDistribution::Gaussian { std_dev: 1e-9 };
        for m in [0.0, 0.25, -0.125, 0.4] {
            let ct = sk.encrypt(from_real(m), noise, &mut rng);
            let err = to_real(sk.phase(&ct).wsub(from_real(m)));
            assert!(err.abs() < 1e-7, "m={m} err={err}");
        }
        // A wrong key gives a phase far from the message (the mask is uniform).
        let other = LweSecretKey::<u64>::generate(300, &mut rng);
        let ct = sk.encrypt(from_real(0.25), noise, &mut rng);
        assert!(to_real(other.phase(&ct).wsub(from_real(0.25))).abs() > 1e-6);
    }

    #[test]
    fn tuniform_noise_is_bounded_and_centred() {
        let mut rng = Csprng::from_seed(2);
        let d = NoiseDistribution::TUniform { bound_log2: 5 };
        let mut sum = 0i64;
        let mut seen_end = false;
        for _ in 0..20000 {
            let e: u64 = rng.noise(d);
            let v = e.to_signed();
            assert!(v.abs() <= 32);
            seen_end |= v.abs() == 32;
            sum += v;
        }
        assert!(seen_end);
        assert!((sum as f64 / 20000.0).abs() < 1.0);
    }
}
