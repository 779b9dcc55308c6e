//! The scheme-level steps of bootstrapping: ModRaise, multiplication by `i` (a monomial, free
//! of levels), and key switching a whole ciphertext to another secret (sparse-secret
//! encapsulation). The circuit around them lives in `basalt-circuits::bootstrap`.

use basalt_trace::{operation, region};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use basalt_math::{Domain, RnsPoly};

use super::Evaluator;
use crate::ciphertext::Ciphertext;
use crate::error::{CkksError, Result};
use crate::keys::KeyMaterial;
use crate::objects::{load, store};

/// `NTT(X^{N/2})` per parameter set, over the whole Q chain: multiplying by it multiplies
/// every slot by `i` (`ζ^{5^j·N/2} = i` for the 2N-th root `ζ`), exactly and without a level.
fn monomial_i(ev: &Evaluator) -> Arc<RnsPoly> {
    static CACHE: OnceLock<Mutex<HashMap<u64, Arc<RnsPoly>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let id = ev.params.id();
    if let Some(p) = cache.lock().expect("monomial cache").get(&id) {
        return p.clone();
    }
    let ring = ev.params.ring();
    let n = ev.params.n();
    let mut coeffs = vec![0i64; n];
    coeffs[n / 2] = 1;
    let mut m = ring.from_i64(&coeffs, ev.params.max_level() + 1, 0);
    // Not part of any program's trace: a one-off table like the NTT twiddles.
    basalt_trace::record(|| ring.ntt_assign(&mut m));
    let m = Arc::new(m);
    cache.lock().expect("monomial cache").insert(id, m.clone());
    m
}

impl Evaluator {
    /// ModRaise: reinterpret a ciphertext modulo the base modulus `Q_0` (level 0) as one modulo
    /// the whole chain `Q_L`. Its coefficients are lifted centred, so it now decrypts to
    /// `m + Q_0·I` for a small integer polynomial `I` (bounded by the secret's Hamming weight),
    /// which EvalMod removes. The scale is kept.
    ///
    /// # Cost
    /// Per polynomial: INTT of the base limbs, the centred lift, NTT of `L + 1` limbs.
    ///
    /// # Errors
    /// [`CkksError::LevelMismatch`] if `ct` is not on the base modulus alone (level
    /// `base_primes − 1`: 0, or 1 for a `q_0` split over two primes; drop it first),
    /// degree ≠ 1.
    pub fn mod_raise(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        Self::check_degree1(ct)?;
        let base_level = self.params.base_primes() - 1;
        if ct.level() != base_level {
            return Err(CkksError::LevelMismatch { left: ct.level(), right: base_level });
        }
        let op = operation();
        load(&op, ct);
        let _r = region("ModRaise");
        let ring = self.params.ring();
        let (n, top) = (self.params.n(), self.params.max_level() + 1);
        let base = self.params.base_primes();
        let polys = ct
            .polys
            .iter()
            .map(|p| {
                let mut low = p.clone();
                ring.intt_assign(&mut low);
                let mut high = if p.is_symbolic() {
                    RnsPoly::symbolic(n, top, 0, Domain::Coeff)
                } else if base == 1 {
                    let q0 = self.params.q()[0];
                    let half = q0 / 2;
                    let c: Vec<i64> = low
                        .limb(0)
                        .iter()
                        .map(|&x| if x > half { x as i64 - q0 as i64 } else { x as i64 })
                        .collect();
                    ring.from_i64(&c, top, 0)
                } else {
                    let c = ring.to_bigint_centered(&low);
                    ring.from_bigint(&c, top, 0)
                };
                ring.ntt_assign(&mut high);
                high
            })
            .collect();
        let out = ct.with_polys(polys);
        Ok(store(&op, out))
    }

    /// Multiply every slot by `i` (or `−i` if `negate`): a product with the monomial `X^{N/2}`,
    /// exact, no level and no scale change.
    pub fn mul_by_i(&self, ct: &Ciphertext, negate: bool) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        let op = operation();
        load(&op, ct);
        let ring = self.params.ring();
        let mut out = ct.clone();
        let mono = if ct.is_symbolic() {
            RnsPoly::symbolic(self.params.n(), ct.level() + 1, 0, Domain::Ntt)
        } else {
            let m = monomial_i(self);
            let mut m = (*m).clone();
            m.truncate_q(ct.level() + 1);
            m
        };
        for p in &mut out.polys {
            ring.mul_assign(p, &mono);
            if negate {
                ring.neg_assign(p);
            }
        }
        Ok(store(&op, out))
    }

    /// Switch a degree-1 ciphertext from the secret `key` switches from to the secret it
    /// switches to (e.g. to a sparse ephemeral secret before ModRaise, and back after it).
    ///
    /// # Errors
    /// [`CkksError::WrongParams`] for a key of another set, [`CkksError::KeyNotForLevel`] for one
    /// without the part of `ct`'s level, degree ≠ 1.
    pub fn switch_key(&self, ct: &Ciphertext, key: &KeyMaterial) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        Self::check_degree1(ct)?;
        key.check_level(&self.params, ct.level())?;
        ct.key_id.join(key.key_id(), "the key-switching key")?;
        let op = operation();
        load(&op, ct);
        let _r = region("SwitchKey");
        let (u0, u1) = self.keyswitch(&ct.polys[1], key);
        let mut c0 = ct.polys[0].clone();
        self.params.ring().add_assign(&mut c0, &u0);
        let out = ct.with_polys(vec![c0, u1]);
        Ok(store(&op, out))
    }
}

#[cfg(test)]
mod tests {
    use num_complex::Complex64;

    use crate::encryptor::{decrypt, encrypt_sk};
    use crate::{Encoder, Evaluator, KeyGenerator, Parameters, ParametersLiteral};

    fn params() -> Parameters {
        Parameters::new(ParametersLiteral::toy(10, 50, 40, 3, 55, 2, 2)).unwrap()
    }

    #[test]
    fn mod_raise_adds_a_multiple_of_q0() {
        let params = params();
        let kg = KeyGenerator::new(&params);
        let sk = kg.gen_secret_key();
        let ev = Evaluator::new(&params, kg.gen_evaluation_keys(&sk, &[], false, false)).unwrap();
        let enc = Encoder::new(&params);
        let v: Vec<Complex64> = (0..4).map(|i| Complex64::new(0.1 * i as f64, 0.0)).collect();
        let pt = enc.encode(&v, 4, 0, 2f64.powi(30)).unwrap();
        let ct = encrypt_sk(&params, &pt, &sk).unwrap();
        let up = ev.mod_raise(&ct).unwrap();
        assert_eq!(up.level(), params.max_level());
        let m_up = decrypt(&params, &up, &sk).unwrap();
        let m_lo = decrypt(&params, &ct, &sk).unwrap();
        let ring = params.ring();
        let a = ring.to_bigint_centered(&{
            let mut p = m_up.poly().clone();
            ring.intt_assign(&mut p);
            p
        });
        let b = ring.to_bigint_centered(&{
            let mut p = m_lo.poly().clone();
            ring.intt_assign(&mut p);
            p
        });
        let q0 = num_bigint::BigInt::from(params.q()[0]);
        let mut nonzero = 0;
        for (x, y) in a.iter().zip(&b) {
            let d = x - y;
            assert_eq!(&d % &q0, 0.into(), "difference is a multiple of q0");
            let i = &d / &q0;
            assert!(i.magnitude() <= &num_bigint::BigUint::from(params.n() as u64));
            nonzero += usize::from(i != 0.into());
        }
        assert!(nonzero > 0, "a dense secret leaves a non-zero overflow I");
    }

    #[test]
    fn mul_by_i_rotates_the_phase_of_every_slot() {
        let params = params();
        let kg = KeyGenerator::new(&params);
        let sk = kg.gen_secret_key();
        let ev = Evaluator::new(&params, kg.gen_evaluation_keys(&sk, &[], false, false)).unwrap();
        let enc = Encoder::new(&params);
        let v: Vec<Complex64> = (0..8).map(|i| Complex64::new(0.1 * i as f64, -0.05)).collect();
        let ct = encrypt_sk(&params, &enc.encode(&v, 8, 2, 2f64.powi(35)).unwrap(), &sk).unwrap();
        for neg in [false, true] {
            let out = ev.mul_by_i(&ct, neg).unwrap();
            assert_eq!((out.level(), out.scale()), (ct.level(), ct.scale()));
            let have = enc.decode(&decrypt(&params, &out, &sk).unwrap()).unwrap();
            let unit = if neg { -Complex64::i() } else { Complex64::i() };
            for (h, w) in have.iter().zip(&v) {
                assert!((h - w * unit).norm() < 1e-6, "{h} vs {}", w * unit);
            }
        }
    }
}
