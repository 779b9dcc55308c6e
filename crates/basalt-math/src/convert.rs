//! Conversions between integers and RNS polynomials, including the exact CRT lift used by
//! decoding and by the big-integer reference tests.

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{ToPrimitive, Zero};
use rayon::prelude::*;

use crate::poly::{Domain, RnsPoly};
use crate::ring::RingContext;

impl RingContext {
    /// Reduce signed integers into every limb of a new Coeff-domain polynomial.
    pub fn from_i64(&self, coeffs: &[i64], q_limbs: usize, p_limbs: usize) -> RnsPoly {
        assert_eq!(coeffs.len(), self.n(), "from_i64: expected n coefficients");
        let mut a = RnsPoly::zero(self.n(), q_limbs, p_limbs, Domain::Coeff);
        self.par_limbs(&mut a, |_, _, m, x| {
            x.iter_mut().zip(coeffs).for_each(|(x, &c)| *x = m.from_i64(c))
        });
        a
    }

    /// Reduce big integers into every limb of a new Coeff-domain polynomial.
    pub fn from_bigint(&self, coeffs: &[BigInt], q_limbs: usize, p_limbs: usize) -> RnsPoly {
        assert_eq!(coeffs.len(), self.n(), "from_bigint: expected n coefficients");
        let mut a = RnsPoly::zero(self.n(), q_limbs, p_limbs, Domain::Coeff);
        self.par_limbs(&mut a, |_, _, m, x| {
            let q = BigInt::from(m.value());
            x.iter_mut().zip(coeffs).for_each(|(x, c)| {
                let r = ((c % &q) + &q) % &q;
                *x = r.to_u64().expect("residue fits u64");
            })
        });
        a
    }

    /// Round real coefficients to the nearest integer and reduce them into every limb. Values
    /// of any magnitude an `f64` can hold are exact (no 2^63 limit).
    pub fn from_f64_round(&self, coeffs: &[f64], q_limbs: usize, p_limbs: usize) -> RnsPoly {
        assert_eq!(coeffs.len(), self.n(), "from_f64_round: expected n coefficients");
        assert!(coeffs.iter().all(|c| c.is_finite()), "from_f64_round: non-finite coefficient");
        const SMALL: f64 = 9.2e18; // below 2^63
        let mut a = RnsPoly::zero(self.n(), q_limbs, p_limbs, Domain::Coeff);
        self.par_limbs(&mut a, |_, _, m, x| {
            x.iter_mut().zip(coeffs).for_each(|(x, &c)| {
                let r = c.round();
                *x = if r.abs() < SMALL {
                    m.from_i64(r as i64)
                } else {
                    let b = BigInt::from_f64_exact(r);
                    let q = BigInt::from(m.value());
                    (((b % &q) + &q) % &q).to_u64().expect("residue fits u64")
                };
            })
        });
        a
    }

    /// Exact CRT lift of a Coeff-domain polynomial over all its limbs to centred big integers
    /// in `(-M/2, M/2]`, `M` the product of its moduli.
    pub fn to_bigint_centered(&self, a: &RnsPoly) -> Vec<BigInt> {
        assert_eq!(a.domain(), Domain::Coeff, "to_bigint_centered: needs the coefficient domain");
        let crt = Crt::new(self, a);
        (0..a.n())
            .into_par_iter()
            .with_min_len(crate::parallel::min_len())
            .map(|j| crt.lift(a, j))
            .collect()
    }

    /// The centred lift as `f64`, accurate to a relative `2^-48` or better for every
    /// coefficient whatever its size (exact mixed-radix digits, then a positive Horner sum).
    pub fn to_f64_centered(&self, a: &RnsPoly) -> Vec<f64> {
        assert_eq!(a.domain(), Domain::Coeff, "to_f64_centered: needs the coefficient domain");
        if a.limbs() == 1 {
            let m = self.modulus_of(a, 0);
            return a.limb(0).iter().map(|&x| m.center(x) as f64).collect();
        }
        let g = Garner::new(self, a);
        (0..a.n())
            .into_par_iter()
            .with_min_len(crate::parallel::min_len())
            .map(|j| g.lift_f64(a, j))
            .collect()
    }
}

/// Precomputed CRT reconstruction for one basis.
struct Crt {
    moduli: Vec<u64>,
    /// `(M/m_i)^{-1} mod m_i`.
    inv: Vec<u64>,
    /// `M/m_i`.
    hat: Vec<BigUint>,
    big_m: BigUint,
    half_m: BigUint,
}

trait FromF64Exact {
    fn from_f64_exact(x: f64) -> BigInt;
}
impl FromF64Exact for BigInt {
    fn from_f64_exact(x: f64) -> BigInt {
        num_traits::FromPrimitive::from_f64(x).expect("finite")
    }
}

impl Crt {
    fn new(ctx: &RingContext, a: &RnsPoly) -> Crt {
        let mods: Vec<_> = (0..a.limbs()).map(|i| ctx.modulus_of(a, i)).collect();
        let big_m: BigUint = mods.iter().map(|m| BigUint::from(m.value())).product();
        let hat: Vec<BigUint> = mods.iter().map(|m| &big_m / m.value()).collect();
        let inv = mods
            .iter()
            .zip(&hat)
            .map(|(m, h)| m.inv((h % m.value()).to_u64().expect("fits")).expect("coprime moduli"))
            .collect();
        Crt {
            moduli: mods.iter().map(|m| m.value()).collect(),
            inv,
            half_m: &big_m >> 1u32,
            hat,
            big_m,
        }
    }

    fn y(&self, a: &RnsPoly, i: usize, j: usize) -> u64 {
        let q = self.moduli[i];
        (a.limb(i)[j] as u128 * self.inv[i] as u128 % q as u128) as u64
    }

    fn lift(&self, a: &RnsPoly, j: usize) -> BigInt {
        let mut x = BigUint::zero();
        for i in 0..self.moduli.len() {
            x += &self.hat[i] * self.y(a, i, j);
        }
        x %= &self.big_m;
        if x > self.half_m {
            BigInt::from_biguint(Sign::Minus, &self.big_m - x)
        } else {
            BigInt::from(x)
        }
    }
}

/// Mixed-radix (Garner) reconstruction: exact digits `X = Σ d_i · Π_{j<i} m_j`, `0 <= d_i < m_i`,
/// in `O(limbs²)` word operations per coefficient and no big integers.
struct Garner {
    moduli: Vec<crate::Modulus>,
    /// `inv[i][j] = m_j^{-1} mod m_i` for `j < i`, with Shoup constants.
    inv: Vec<Vec<(u64, u64)>>,
    /// Residues and mixed-radix digits of `floor(M/2)`, to centre the lift.
    half_res: Vec<u64>,
    half_dig: Vec<u64>,
}

impl Garner {
    fn new(ctx: &RingContext, a: &RnsPoly) -> Garner {
        let moduli: Vec<_> = (0..a.limbs()).map(|i| ctx.modulus_of(a, i)).collect();
        let inv = (0..moduli.len())
            .map(|i| {
                let m = moduli[i];
                (0..i)
                    .map(|j| {
                        let v = m.inv(m.reduce(moduli[j].value())).expect("coprime moduli");
                        (v, m.shoup(v))
                    })
                    .collect()
            })
            .collect();
        let big_m: BigUint = moduli.iter().map(|m| BigUint::from(m.value())).product();
        let half: BigUint = big_m >> 1u32;
        let half_res: Vec<u64> =
            moduli.iter().map(|m| (&half % m.value()).to_u64().expect("fits")).collect();
        let mut g = Garner { moduli, inv, half_res: half_res.clone(), half_dig: Vec::new() };
        g.half_dig = g.digits(|i| half_res[i]);
        g
    }

    fn digits(&self, residue: impl Fn(usize) -> u64) -> Vec<u64> {
        let mut d: Vec<u64> = Vec::with_capacity(self.moduli.len());
        for (i, m) in self.moduli.iter().enumerate() {
            let mut t = residue(i);
            for (j, &(w, ws)) in self.inv[i].iter().enumerate() {
                t = m.mul_shoup(m.sub(t, m.reduce(d[j])), w, ws);
            }
            d.push(t);
        }
        d
    }

    fn lift_f64(&self, a: &RnsPoly, j: usize) -> f64 {
        // Digits of X' = X + floor(M/2) mod M, then X_c = X' − floor(M/2) by borrow-propagating
        // subtraction; a final borrow means X_c < 0 and the digits hold M − |X_c|.
        let x = self.digits(|i| self.moduli[i].add(a.limb(i)[j], self.half_res[i]));
        let sub = |x: &[u64], y: &dyn Fn(usize) -> u64| {
            let mut borrow = 0u64;
            let d: Vec<u64> = x
                .iter()
                .enumerate()
                .map(|(i, &xi)| {
                    let (t, b1) = xi.overflowing_sub(y(i));
                    let (t, b2) = t.overflowing_sub(borrow);
                    borrow = u64::from(b1 || b2);
                    if borrow == 1 { t.wrapping_add(self.moduli[i].value()) } else { t }
                })
                .collect();
            (d, borrow == 1)
        };
        let (d, negative) = sub(&x, &|i| self.half_dig[i]);
        let d = if negative { sub(&vec![0; d.len()], &|i| d[i]).0 } else { d };
        let mag = d
            .iter()
            .zip(&self.moduli)
            .rev()
            .fold(0.0f64, |r, (&di, m)| r * m.value() as f64 + di as f64);
        if negative { -mag } else { mag }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::ntt_primes;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn crt_lift_inverts_reduction(vals in proptest::collection::vec(any::<i64>(), 16), shift in 0u32..130) {
            let q = ntt_primes(50, 4, 4, &[]).unwrap();
            let ctx = RingContext::new(4, &q, &[]).unwrap();
            let big: Vec<BigInt> = vals.iter().map(|&v| BigInt::from(v) << shift).collect();
            let a = ctx.from_bigint(&big, 4, 0);
            prop_assert_eq!(ctx.to_bigint_centered(&a), big.clone());
            let f = ctx.to_f64_centered(&a);
            for (x, b) in f.iter().zip(&big) {
                let want = b.to_f64().unwrap();
                prop_assert!((x - want).abs() <= want.abs() * 1e-14, "{} vs {}", x, want);
            }
            let fl: Vec<f64> = big.iter().map(|b| b.to_f64().unwrap()).collect();
            let r = ctx.from_f64_round(&fl, 4, 0);
            prop_assert_eq!(ctx.to_bigint_centered(&r), fl.iter().map(|&v| BigInt::from_f64_exact(v)).collect::<Vec<_>>());
        }
    }
}
