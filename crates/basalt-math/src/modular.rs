//! Arithmetic modulo one word-size prime: Barrett reduction of 128-bit products and Shoup
//! multiplication by a precomputed constant.
//!
//! Moduli are below 2^62 so sums of two residues never overflow and Shoup's quotient estimate is
//! off by at most one.

use crate::MathError;

/// A modulus `q < 2^62` with its Barrett constant `floor(2^128 / q)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modulus {
    q: u64,
    /// `floor(2^128 / q)` split into low and high words.
    ratio: [u64; 2],
}

#[inline(always)]
fn mul_hi(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) >> 64) as u64
}

impl Modulus {
    pub fn new(q: u64) -> Result<Modulus, MathError> {
        if !(2..1 << 62).contains(&q) {
            return Err(MathError::ModulusOutOfRange(q));
        }
        // floor(2^128 / q) = floor((2^128 - 1) / q) unless q divides 2^128 (only powers of two).
        let r = u128::MAX / q as u128 + u128::from(q.is_power_of_two());
        Ok(Modulus { q, ratio: [r as u64, (r >> 64) as u64] })
    }

    #[inline(always)]
    pub fn value(&self) -> u64 {
        self.q
    }

    /// Number of bits of `q`.
    pub fn bits(&self) -> u32 {
        64 - self.q.leading_zeros()
    }

    /// `a + b mod q` for reduced `a`, `b`. The conditional subtractions here and below are
    /// written as `min` of the value and its (possibly wrapped) difference: branch-free, since
    /// residues are random and a branch on them is mispredicted half the time.
    #[inline(always)]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        let s = a + b;
        s.min(s.wrapping_sub(self.q))
    }

    /// `a − b mod q` for reduced `a`, `b`.
    #[inline(always)]
    pub fn sub(&self, a: u64, b: u64) -> u64 {
        let d = a.wrapping_sub(b);
        d.min(d.wrapping_add(self.q))
    }

    #[inline(always)]
    pub fn neg(&self, a: u64) -> u64 {
        if a == 0 { 0 } else { self.q - a }
    }

    /// `x mod q` for any 128-bit `x` (Barrett: estimate the quotient with `floor(2^128/q)`,
    /// then at most one correction).
    #[inline(always)]
    pub fn reduce_u128(&self, x: u128) -> u64 {
        let (x0, x1) = (x as u64, (x >> 64) as u64);
        let [r0, r1] = self.ratio;
        // floor(x * ratio / 2^128), dropping the lowest partial product's carry (the
        // estimate may then be low by one more, hence the loop below runs at most twice).
        let c0 = mul_hi(x0, r0);
        let m1 = x0 as u128 * r1 as u128;
        let m2 = x1 as u128 * r0 as u128;
        let mid = (c0 as u128) + (m1 as u64 as u128) + (m2 as u64 as u128);
        let quot = (x1 as u128 * r1 as u128) + (m1 >> 64) + (m2 >> 64) + (mid >> 64);
        // The estimate is at most two below `floor(x/q)`, so `r < 3q < 2^64`: two conditional
        // subtractions, written as `min` (a wrapped difference is above `r`) so that they compile
        // to `cmov` instead of a branch taken at random.
        let r = x.wrapping_sub(quot.wrapping_mul(self.q as u128)) as u64;
        let r = r.min(r.wrapping_sub(self.q));
        r.min(r.wrapping_sub(self.q))
    }

    #[inline(always)]
    pub fn reduce(&self, a: u64) -> u64 {
        if a < self.q { a } else { self.reduce_u128(a as u128) }
    }

    #[inline(always)]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128)
    }

    pub fn pow(&self, mut a: u64, mut e: u64) -> u64 {
        let mut r = 1 % self.q;
        a = self.reduce(a);
        while e > 0 {
            if e & 1 == 1 {
                r = self.mul(r, a);
            }
            a = self.mul(a, a);
            e >>= 1;
        }
        r
    }

    /// Inverse modulo `q` by the extended Euclidean algorithm (works for any `q`).
    pub fn inv(&self, a: u64) -> Option<u64> {
        let (mut t, mut new_t) = (0i128, 1i128);
        let (mut r, mut new_r) = (self.q as i128, self.reduce(a) as i128);
        while new_r != 0 {
            let quo = r / new_r;
            (t, new_t) = (new_t, t - quo * new_t);
            (r, new_r) = (new_r, r - quo * new_r);
        }
        if r != 1 {
            return None;
        }
        Some(t.rem_euclid(self.q as i128) as u64)
    }

    /// `x mod q` in `[0, q)` for a signed `x`.
    #[inline(always)]
    pub fn from_i64(&self, x: i64) -> u64 {
        let r = self.reduce(x.unsigned_abs());
        if x < 0 { self.neg(r) } else { r }
    }

    /// Centred lift of a residue to `(-q/2, q/2]`.
    #[inline(always)]
    pub fn center(&self, a: u64) -> i64 {
        if a > self.q / 2 { a as i64 - self.q as i64 } else { a as i64 }
    }

    /// Shoup's precomputed constant `floor(w * 2^64 / q)` for multiplying by `w < q`.
    #[inline(always)]
    pub fn shoup(&self, w: u64) -> u64 {
        (((w as u128) << 64) / self.q as u128) as u64
    }

    /// `a * w mod q` given `w_shoup = self.shoup(w)`: one high and two low multiplications.
    #[inline(always)]
    pub fn mul_shoup(&self, a: u64, w: u64, w_shoup: u64) -> u64 {
        let quot = mul_hi(a, w_shoup);
        let r = a.wrapping_mul(w).wrapping_sub(quot.wrapping_mul(self.q));
        r.min(r.wrapping_sub(self.q))
    }
}

/// Reduction modulo `q` of 128-bit values known to lie below a bound `B ≤ 2^64·2^{b}`
/// (`2^{b−1} ≤ q < 2^b`): lazy sums of a few products of residues, as the key-switching inner
/// product and BConv form.
///
/// # Why
/// [`Modulus::reduce_u128`] accepts any 128-bit value and spends about six multiplications
/// (the full 128×128-bit product of Barrett's method). When the value has at most `64 + s`
/// bits, its top 64 bits `x' = ⌊x/2^s⌋` carry enough of it: the quotient estimate
/// `q̂ = ⌊x'·μ/2^64⌋` with `μ = ⌊2^{64+s}/q⌋` needs one high product (and an addition when
/// `μ ≥ 2^64`), the remainder one low product.
///
/// # Bound
/// `q̂ ≤ ⌊x/q⌋`, and `x/q − x'·μ/2^64 < x/2^{64+s} + 2^s/q + 1 ≤ 1 + 2 + 1` for `x < 2^{64+s}`,
/// `s ≤ b`: `q̂` is at most 3 below the quotient, so `x − q̂·q < 4q < 2^64` is exact in 64-bit
/// wrapping arithmetic and three conditional subtractions leave the canonical residue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WideReducer {
    q: u64,
    /// `s`: the bits of the value below its top 64.
    shift: u32,
    /// `μ mod 2^64`.
    mu_lo: u64,
    /// `u64::MAX` when `μ ≥ 2^64` (then `μ < 2^65`), else 0: `x'·μ_hi` as a mask.
    mu_hi_mask: u64,
}

impl WideReducer {
    /// A reducer modulo `m` for values up to `max` (inclusive), or `None` if `max` has more than
    /// `64 + b` bits (`b` the bits of `m`).
    pub fn new(m: Modulus, max: u128) -> Option<WideReducer> {
        let q = m.value();
        let bits = 128 - max.leading_zeros();
        let shift = bits.saturating_sub(64);
        if shift > m.bits() {
            return None;
        }
        // μ = ⌊2^{64+s}/q⌋ < 2^{65+s−b} ≤ 2^65 unless `q` is a power of two (`shift ≤ b ≤ 62`
        // keeps 2^{64+s} within 128 bits).
        let mu = (1u128 << (64 + shift)) / q as u128;
        if mu >> 65 != 0 {
            return None;
        }
        let mu_hi_mask = if mu >> 64 == 1 { u64::MAX } else { 0 };
        Some(WideReducer { q, shift, mu_lo: mu as u64, mu_hi_mask })
    }

    /// `x mod q` for `x` up to the bound given to [`WideReducer::new`] (canonical residue).
    #[inline(always)]
    pub fn reduce(&self, x: u128) -> u64 {
        let xp = (x >> self.shift) as u64;
        let qhat = mul_hi(xp, self.mu_lo).wrapping_add(xp & self.mu_hi_mask);
        let r = (x as u64).wrapping_sub(qhat.wrapping_mul(self.q));
        let r = r.min(r.wrapping_sub(self.q));
        let r = r.min(r.wrapping_sub(self.q));
        r.min(r.wrapping_sub(self.q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Primes: the largest below 2^62 (found by `is_prime`), a Mersenne prime, two small ones.
    fn qs() -> [u64; 4] {
        let top = (1..).map(|k| (1u64 << 62) - k).find(|&q| crate::primes::is_prime(q)).unwrap();
        [top, (1 << 61) - 1, 998_244_353, 65_537]
    }

    proptest! {
        #[test]
        fn mul_reduce_agree_with_u128_remainder(a in any::<u64>(), b in any::<u64>(), i in 0usize..4, x in any::<u128>()) {
            let qs = qs();
            let m = Modulus::new(qs[i]).unwrap();
            let q = qs[i] as u128;
            prop_assert_eq!(m.reduce_u128(x) as u128, x % q);
            let (a, b) = (a % qs[i], b % qs[i]);
            prop_assert_eq!(m.mul(a, b) as u128, a as u128 * b as u128 % q);
            prop_assert_eq!(m.mul_shoup(a, b, m.shoup(b)), m.mul(a, b));
            prop_assert_eq!(m.add(a, b) as u128, (a as u128 + b as u128) % q);
            prop_assert_eq!(m.add(m.sub(a, b), b), a);
            if a != 0 {
                let inv = m.inv(a).unwrap();
                prop_assert_eq!(m.mul(a, inv), 1);
            }
        }

        #[test]
        fn signed_round_trip(x in -(1i64 << 40)..(1i64 << 40), i in 0usize..2) {
            let m = Modulus::new(qs()[i]).unwrap();
            prop_assert_eq!(m.center(m.from_i64(x)), x);
        }
    }

    /// Every bound shape the reducer accepts (values of at most 64 bits, bounds of exactly
    /// `64 + b` bits, `μ` above and below 2^64), on random values and on the bound's
    /// neighbourhood, against the 128-bit remainder; and it refuses wider bounds.
    #[test]
    fn wide_reducer_matches_u128_remainder() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
        let prime_below = |bits: u32| {
            (1..).map(|k| (1u64 << bits) - k).find(|&q| crate::primes::is_prime(q)).unwrap()
        };
        let prime_above = |bits: u32| {
            (1..).map(|k| (1u64 << bits) + k).find(|&q| crate::primes::is_prime(q)).unwrap()
        };
        let mut qs: Vec<u64> = [20u32, 31, 36, 40, 50, 55, 60, 61, 62].map(prime_below).to_vec();
        qs.extend([20u32, 36, 60, 61].map(prime_above));
        qs.push((1 << 61) - 1);
        for q in qs {
            let m = Modulus::new(q).unwrap();
            let b = m.bits();
            let sq = (q as u128 - 1) * (q as u128 - 1);
            let mut bounds: Vec<u128> = vec![q as u128 - 1, u64::MAX as u128, sq];
            bounds.extend((2..=20u128).filter_map(|f| sq.checked_mul(f)));
            bounds.push((1u128 << (64 + b)) - 1);
            for max in bounds {
                let Some(r) = WideReducer::new(m, max) else {
                    assert!(128 - max.leading_zeros() > 64 + b, "q={q} max={max} refused");
                    continue;
                };
                let mut xs: Vec<u128> = vec![0, 1, max, max - 1, max / 2, q as u128, q as u128 - 1];
                xs.extend(
                    (1..=4u128)
                        .filter_map(|k| (max / q as u128).checked_sub(k))
                        .map(|k| k * q as u128),
                );
                xs.extend((0..2000).map(|_| rng.random_range(0..=max)));
                for x in xs.into_iter().filter(|&x| x <= max) {
                    assert_eq!(r.reduce(x) as u128, x % q as u128, "q={q} max={max:#x} x={x:#x}");
                }
            }
            assert!(WideReducer::new(m, 1u128 << (64 + b)).is_none(), "q={q}");
        }
    }

    #[test]
    fn rejects_out_of_range() {
        assert!(Modulus::new(1).is_err());
        assert!(Modulus::new(1 << 62).is_err());
        assert_eq!(Modulus::new(1 << 20).unwrap().reduce_u128(1 << 100), 0);
    }
}
