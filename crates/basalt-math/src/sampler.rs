//! Randomness: a seeded XOF for public uniform polynomials (so keys can be stored as a seed,
//! CraterLake's KSHGen), and CSPRNG-driven secret and error distributions.

use rand::{CryptoRng, Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use sha3::Shake256;
use sha3::digest::{ExtendableOutput, Update, XofReader};

use crate::poly::{Domain, RnsPoly};
use crate::ring::RingContext;
use basalt_trace::{Kernel, emit};

/// A deterministic stream expanded from a 32-byte seed.
///
/// SHAKE256 absorbs the seed and a domain separator and squeezes a 32-byte key for ChaCha20,
/// which produces the stream: SHAKE alone was 18% of a key-generation profile, ChaCha20 runs
/// several times faster with the same security (a PRF keyed by a hash of the seed).
pub struct Xof {
    stream: ChaCha20Rng,
}

impl Xof {
    /// `domain_sep` separates streams drawn from the same seed (e.g. one per key and digit).
    pub fn new(seed: [u8; 32], domain_sep: &[u8]) -> Xof {
        let mut h = Shake256::default();
        h.update(b"basalt-xof-v2");
        h.update(&seed);
        h.update(&(domain_sep.len() as u64).to_le_bytes());
        h.update(domain_sep);
        let mut key = [0u8; 32];
        h.finalize_xof().read(&mut key);
        Xof { stream: ChaCha20Rng::from_seed(key) }
    }

    pub fn fill(&mut self, buf: &mut [u8]) {
        self.stream.fill_bytes(buf);
    }

    pub fn next_u64(&mut self) -> u64 {
        self.stream.next_u64()
    }
}

/// 32 bytes from the operating system's CSPRNG.
pub fn fresh_seed() -> [u8; 32] {
    let mut s = [0u8; 32];
    use rand::TryRngCore;
    rand::rngs::OsRng.try_fill_bytes(&mut s).expect("operating system RNG unavailable");
    s
}

/// A uniform polynomial over the given limbs, read directly as NTT-domain values (the uniform
/// distribution is the same in either domain, so no transform is needed). Each 64-bit word is
/// accepted when below the largest multiple of `q` that fits, then reduced: exactly uniform, and
/// at most a fraction `q / 2^64` of words is rejected. Limbs are drawn in order, so the result
/// depends only on the seed.
pub fn uniform_ntt(ctx: &RingContext, xof: &mut Xof, q_limbs: usize, p_limbs: usize) -> RnsPoly {
    let n = ctx.n();
    emit(Kernel::KeyGen { n: n as u32, limbs: (q_limbs + p_limbs) as u32 });
    let mut a = RnsPoly::zero(n, q_limbs, p_limbs, Domain::Ntt);
    for i in 0..a.limbs() {
        let m = ctx.modulus_of(&a, i);
        let q = m.value();
        let bound = u64::MAX - (u64::MAX % q) - 1; // accept v <= bound: (bound+1) is a multiple of q
        let limb = a.limb_mut(i);
        let mut filled = 0;
        while filled < n {
            let v = xof.next_u64();
            if v <= bound {
                limb[filled] = m.reduce(v);
                filled += 1;
            }
        }
    }
    a
}

/// Ternary secret with exactly `h` non-zero coefficients (±1 with equal probability).
pub fn ternary_hamming<R: RngCore + CryptoRng>(n: usize, h: usize, rng: &mut R) -> Vec<i64> {
    assert!(h <= n, "Hamming weight {h} exceeds the degree {n}");
    let mut idx: Vec<usize> = (0..n).collect();
    // Partial Fisher–Yates: the first h entries become a uniform h-subset.
    for i in 0..h {
        let j = rng.random_range(i..n);
        idx.swap(i, j);
    }
    let mut s = vec![0i64; n];
    for &i in &idx[..h] {
        s[i] = if rng.random::<bool>() { 1 } else { -1 };
    }
    s
}

/// Dense ternary secret: each coefficient −1, 0, 1 with probability 1/3.
pub fn ternary_dense<R: RngCore + CryptoRng>(n: usize, rng: &mut R) -> Vec<i64> {
    (0..n).map(|_| rng.random_range(0..3i64) - 1).collect()
}

/// Rounded Gaussian of standard deviation `sigma`, tail-cut at 6σ (Box–Muller on CSPRNG output).
pub fn gaussian<R: RngCore + CryptoRng>(n: usize, sigma: f64, rng: &mut R) -> Vec<i64> {
    let bound = (6.0 * sigma).ceil();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
        let u2: f64 = rng.random::<f64>();
        let r = sigma * (-2.0 * u1.ln()).sqrt();
        let t = 2.0 * std::f64::consts::PI * u2;
        for z in [r * t.cos(), r * t.sin()] {
            let v = z.round();
            if v.abs() <= bound && out.len() < n {
                out.push(v as i64);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::ntt_primes;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn xof_is_deterministic_and_domain_separated() {
        let q = ntt_primes(50, 6, 2, &[]).unwrap();
        let ctx = RingContext::new(6, &q, &[]).unwrap();
        let a = uniform_ntt(&ctx, &mut Xof::new([7; 32], b"k0"), 2, 0);
        let b = uniform_ntt(&ctx, &mut Xof::new([7; 32], b"k0"), 2, 0);
        let c = uniform_ntt(&ctx, &mut Xof::new([7; 32], b"k1"), 2, 0);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(ctx.check_poly(&a).is_ok());
    }

    #[test]
    fn distributions_have_the_right_shape() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let s = ternary_hamming(1024, 192, &mut rng);
        assert_eq!(s.iter().filter(|&&v| v != 0).count(), 192);
        assert!(s.iter().all(|v| v.abs() <= 1));
        let d = ternary_dense(30_000, &mut rng);
        let zeros = d.iter().filter(|&&v| v == 0).count() as f64 / 30_000.0;
        assert!((zeros - 1.0 / 3.0).abs() < 0.02, "{zeros}");
        let g = gaussian(100_000, 3.2, &mut rng);
        let mean = g.iter().sum::<i64>() as f64 / g.len() as f64;
        let var = g.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / g.len() as f64;
        assert!(
            mean.abs() < 0.05 && (var.sqrt() - 3.2).abs() < 0.1,
            "mean {mean} sd {}",
            var.sqrt()
        );
        assert!(g.iter().all(|v| v.abs() <= 20));
    }
}
