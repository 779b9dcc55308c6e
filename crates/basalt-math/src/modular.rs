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

    #[test]
    fn rejects_out_of_range() {
        assert!(Modulus::new(1).is_err());
        assert!(Modulus::new(1 << 62).is_err());
        assert_eq!(Modulus::new(1 << 20).unwrap().reduce_u128(1 << 100), 0);
    }
}
