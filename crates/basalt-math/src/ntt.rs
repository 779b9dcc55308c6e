//! The negacyclic number-theoretic transform for one prime.
//!
//! Two implementations compute the same transform bit for bit (same root, bit-reversed slot
//! order, fully reduced outputs):
//! - [`crate::ntt_avx2::Avx2Ntt`], ours, on x86-64 CPUs with AVX2 and without AVX-512 (where
//!   `tfhe-ntt` has only its AVX2 path), for primes below 2^62;
//! - `tfhe-ntt`'s `prime64` plan everywhere else (AVX-512, and IFMA for primes below
//!   2^50/2^51, or scalar).
//!
//! `basalt bench ntt` times both on the same data. `tfhe-ntt`'s forward transform leaves the
//! evaluations in bit-reversed order and its inverse does not divide by `n`; this wrapper hides
//! the latter, and records which root of `X^n + 1` each slot holds so automorphisms can be
//! applied in the evaluation domain.

use std::collections::HashMap;
use std::sync::Arc;

use tfhe_ntt::prime64::Plan;

use crate::MathError;
use crate::modular::Modulus;

/// Whether to use [`crate::ntt_avx2::Avx2Ntt`]: on CPUs with AVX2 and without AVX-512F, where
/// it measured faster than `tfhe-ntt` (`basalt bench ntt`); with AVX-512, `tfhe-ntt`'s
/// 8-lane kernels are used.
#[cfg(target_arch = "x86_64")]
fn use_own_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && !std::arch::is_x86_feature_detected!("avx512f")
}

/// A negacyclic NTT over `Z_q[X]/(X^n+1)`.
#[derive(Clone, Debug)]
pub struct NttTable {
    plan: Plan,
    modulus: Modulus,
    /// Our AVX2 transform, where it applies (see the module doc); shared by clones.
    #[cfg(target_arch = "x86_64")]
    avx2: Option<Arc<crate::ntt_avx2::Avx2Ntt>>,
}

impl NttTable {
    pub fn new(n: usize, modulus: Modulus) -> Result<NttTable, MathError> {
        let q = modulus.value();
        if q % (2 * n as u64) != 1 {
            return Err(MathError::NotNttFriendly { q, n });
        }
        let plan = Plan::try_new(n, q).ok_or(MathError::NotNttFriendly { q, n })?;
        #[cfg(target_arch = "x86_64")]
        let avx2 = if use_own_avx2() {
            // Slot 0 of the forward transform of X is the root the plan evaluates at.
            let mut x = vec![0u64; n];
            x[1] = 1;
            plan.fwd(&mut x);
            crate::ntt_avx2::Avx2Ntt::new(n, q, x[0]).map(Arc::new)
        } else {
            None
        };
        Ok(NttTable {
            plan,
            modulus,
            #[cfg(target_arch = "x86_64")]
            avx2,
        })
    }

    /// Which implementation runs: `"basalt-avx2"` or `"tfhe-ntt"`.
    pub fn backend(&self) -> &'static str {
        #[cfg(target_arch = "x86_64")]
        if self.avx2.is_some() {
            return "basalt-avx2";
        }
        "tfhe-ntt"
    }

    pub fn n(&self) -> usize {
        self.plan.ntt_size()
    }

    pub fn modulus(&self) -> Modulus {
        self.modulus
    }

    /// Coefficients → evaluations (slot order: see [`NttTable::slot_exponents`]).
    #[inline]
    pub fn forward(&self, a: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = &self.avx2 {
            return t.forward(a);
        }
        self.plan.fwd(a);
    }

    /// Evaluations → coefficients, including the division by `n`.
    #[inline]
    pub fn inverse(&self, a: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = &self.avx2 {
            return t.inverse(a);
        }
        self.plan.inv(a);
        self.plan.normalize(a);
    }

    /// `acc += a ∘ b` (pointwise, all inputs reduced), vectorised by `tfhe-ntt`.
    #[inline]
    pub fn mul_acc(&self, acc: &mut [u64], a: &[u64], b: &[u64]) {
        self.plan.mul_accumulate(acc, a, b);
    }

    /// For each slot `j`, the odd exponent `e_j` such that slot `j` evaluates at `ψ^{e_j}`,
    /// where `ψ` is the root held by slot 0 (so `e_0 = 1`).
    pub fn slot_exponents(&self) -> Result<Vec<u32>, MathError> {
        let n = self.n();
        let m = self.modulus;
        let mut x = vec![0u64; n];
        x[1] = 1;
        self.forward(&mut x);
        let psi = x[0];
        let psi2 = m.mul(psi, psi);
        let mut exponent_of = HashMap::with_capacity(n);
        let mut p = psi;
        for e in (1..2 * n as u32).step_by(2) {
            exponent_of.insert(p, e);
            p = m.mul(p, psi2);
        }
        x.iter()
            .map(|v| {
                exponent_of.get(v).copied().ok_or(MathError::NotNttFriendly { q: m.value(), n })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::ntt_primes;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Schoolbook negacyclic product, O(n^2), exact in u128.
    #[allow(clippy::needless_range_loop)] // index form mirrors the definition
    fn naive_negacyclic(a: &[u64], b: &[u64], m: Modulus) -> Vec<u64> {
        let n = a.len();
        let mut out = vec![0u64; n];
        for i in 0..n {
            for j in 0..n {
                let p = m.mul(a[i], b[j]);
                let k = i + j;
                if k < n {
                    out[k] = m.add(out[k], p);
                } else {
                    out[k - n] = m.sub(out[k - n], p);
                }
            }
        }
        out
    }

    #[test]
    fn ntt_product_equals_naive_negacyclic_product() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for (bits, log_n) in [(28u32, 6u32), (50, 7), (54, 8), (60, 9), (61, 10), (36, 5)] {
            let n = 1usize << log_n;
            for q in ntt_primes(bits, log_n, 2, &[]).unwrap() {
                let m = Modulus::new(q).unwrap();
                let t = NttTable::new(n, m).unwrap();
                let a: Vec<u64> = (0..n).map(|_| rng.random_range(0..q)).collect();
                let b: Vec<u64> = (0..n).map(|_| rng.random_range(0..q)).collect();
                let want = naive_negacyclic(&a, &b, m);
                let (mut fa, mut fb) = (a.clone(), b.clone());
                t.forward(&mut fa);
                t.forward(&mut fb);
                let mut prod = vec![0u64; n];
                t.mul_acc(&mut prod, &fa, &fb);
                assert!(prod.iter().all(|&v| v < q));
                t.inverse(&mut prod);
                assert_eq!(prod, want, "q={q} n={n}");
                t.inverse(&mut fa);
                assert_eq!(fa, a);
            }
        }
    }

    #[test]
    fn slots_hold_distinct_odd_powers_of_one_root() {
        let q = ntt_primes(40, 8, 1, &[]).unwrap()[0];
        let t = NttTable::new(256, Modulus::new(q).unwrap()).unwrap();
        let mut e = t.slot_exponents().unwrap();
        assert_eq!(e[0], 1);
        e.sort();
        assert_eq!(e, (1..512).step_by(2).collect::<Vec<u32>>());
    }

    #[test]
    fn rejects_unfriendly_prime() {
        let m = Modulus::new(998_244_353).unwrap(); // 119·2^23+1: fine for n ≤ 2^22
        assert!(NttTable::new(1 << 10, m).is_ok());
        let m = Modulus::new(1_000_000_007).unwrap();
        assert!(matches!(NttTable::new(16, m), Err(MathError::NotNttFriendly { .. })));
    }
}
