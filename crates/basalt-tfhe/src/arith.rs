//! Leveled (bootstrap-free) arithmetic on encoded messages, and bivariate LUTs built from it.
//!
//! Messages live in `Z_p` with `p = message_modulus · carry_modulus` and one padding bit, so
//! additions are exact as long as the true sum stays below `p` (the carry space absorbs it, as
//! in TFHE-rs shortint's `unchecked_*` operations); a LUT then cleans up (e.g. `x mod msg`).
//!
//! # Algorithm
//! Bivariate LUT: `f(a, b)` is evaluated as the univariate LUT `g(a·m + b) = f(a, b)` on the
//! packed value `a·m + b` (`m = message_modulus`), which needs `a < carry_modulus`.
//!
//! # Source
//! TFHE-rs shortint (bivariate PBS via packing); CGGI JoC 2019 (linear homomorphism of LWE).

use crate::error::{Result, TfheError};
use crate::keys::{Ciphertext, ServerKey};
use crate::lut::{Lut, delta};
use crate::torus::Torus;

impl<T: Torus> ServerKey<T> {
    /// `a + b` (no carry propagation, no bootstrap).
    pub fn add(&self, a: &Ciphertext<T>, b: &Ciphertext<T>) -> Result<Ciphertext<T>> {
        self.check(a)?;
        self.check(b)?;
        let mut out = a.clone();
        out.lwe.add_assign(&b.lwe);
        Ok(out)
    }

    /// `a − b` mod `2p` (wraps into the padding bit if `b > a`; use a LUT afterwards).
    pub fn sub(&self, a: &Ciphertext<T>, b: &Ciphertext<T>) -> Result<Ciphertext<T>> {
        self.check(a)?;
        self.check(b)?;
        let mut out = a.clone();
        out.lwe.sub_assign(&b.lwe);
        Ok(out)
    }

    /// `c · a` for a small cleartext `c` (noise grows by `c²`).
    pub fn scalar_mul(&self, a: &Ciphertext<T>, c: u64) -> Result<Ciphertext<T>> {
        self.check(a)?;
        let mut out = a.clone();
        out.lwe.scale(c as i64);
        Ok(out)
    }

    /// `a + c` for a cleartext `c < p`.
    pub fn scalar_add(&self, a: &Ciphertext<T>, c: u64) -> Result<Ciphertext<T>> {
        self.check(a)?;
        let p = self.params.plaintext_modulus();
        if c >= p {
            return Err(TfheError::MessageOutOfRange { message: c, modulus: p });
        }
        let mut out = a.clone();
        out.lwe.add_plain(T::from_u64(c).wmul(delta(p)));
        Ok(out)
    }

    /// `f(a, b)` for `a < carry_modulus`, `b < message_modulus`, with one PBS.
    pub fn bivariate(
        &self,
        a: &Ciphertext<T>,
        b: &Ciphertext<T>,
        f: impl Fn(u64, u64) -> u64,
    ) -> Result<Ciphertext<T>> {
        let m = self.params.message_modulus;
        let packed = self.add(&self.scalar_mul(a, m)?, b)?;
        let lut = Lut::from_fn(&self.params, |x| f(x / m, x % m));
        self.apply_lut(&packed, &lut)
    }
}

#[cfg(test)]
mod tests {
    use crate::keys::ClientKey;
    use crate::lut::Lut;
    use crate::params::toy;
    use crate::random::Csprng;

    #[test]
    fn add_then_lut_and_bivariate_exhaustive() {
        let params = toy::u64_small(); // message 4, carry 2: p = 8
        let mut rng = Csprng::from_seed(61);
        let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng);
        let m = params.message_modulus;
        let clean = Lut::from_fn(&params, |x| x % m);
        for a in 0..m {
            for b in 0..m {
                let ca = ck.encrypt_with(a, &mut rng).unwrap();
                let cb = ck.encrypt_with(b, &mut rng).unwrap();
                let s = sk.add(&ca, &cb).unwrap();
                assert_eq!(ck.decrypt(&s).unwrap(), a + b);
                assert_eq!(ck.decrypt(&sk.apply_lut(&s, &clean).unwrap()).unwrap(), (a + b) % m);
                if b <= a {
                    assert_eq!(ck.decrypt(&sk.sub(&ca, &cb).unwrap()).unwrap(), a - b);
                }
                assert_eq!(ck.decrypt(&sk.scalar_add(&ca, 3).unwrap()).unwrap(), a + 3);
                if a < params.carry_modulus {
                    let f = |x: u64, y: u64| (x * 3 + y * y) % m;
                    let r = sk.bivariate(&ca, &cb, f).unwrap();
                    assert_eq!(ck.decrypt(&r).unwrap(), f(a, b), "f({a},{b})");
                }
            }
        }
        let ca = ck.encrypt_with(1, &mut rng).unwrap();
        assert_eq!(ck.decrypt(&sk.scalar_mul(&ca, 5).unwrap()).unwrap(), 5);
        assert!(sk.scalar_add(&ca, 8).is_err());
    }
}
