//! Ciphertext × ciphertext products and relinearization.

use basalt_math::rns;
use basalt_trace::{ObjectId, operation, region};

use super::Evaluator;
use crate::ciphertext::Ciphertext;
use crate::error::{CkksError, Result};
use crate::keys::KeyTag;
use crate::objects::{load, store};
use crate::util::lift_times_p;

impl Evaluator {
    /// Tensor product of two degree-1 ciphertexts: `(a_0b_0, a_0b_1 + a_1b_0, a_1b_1)`, a
    /// degree-2 ciphertext at scale `Δ_a·Δ_b` (no relinearization, no rescale).
    ///
    /// # Cost
    /// 4 pointwise products of `l+1` limbs (3 `Mul` + 1 `MulAcc`) and no NTT.
    pub fn mul(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check_pair(a, b, false)?;
        for c in [a, b] {
            if c.degree() != 1 {
                return Err(CkksError::Degree { degree: c.degree(), expected: 1 });
            }
        }
        let op = operation();
        load(&op, a);
        load(&op, b);
        let _r = region("Tensor");
        let ring = self.params.ring();
        let d0 = ring.mul(&a.polys[0], &b.polys[0]);
        let mut d1 = ring.mul(&a.polys[0], &b.polys[1]);
        ring.mul_acc(&mut d1, &a.polys[1], &b.polys[0]);
        let d2 = ring.mul(&a.polys[1], &b.polys[1]);
        let out = Ciphertext {
            polys: vec![d0, d1, d2],
            scale: a.scale * b.scale,
            slots: a.slots.max(b.slots),
            params_id: a.params_id,
            key_id: a.key_id.join(b.key_id, "the second operand")?,
            object: ObjectId::fresh(),
        };
        Ok(store(&op, out))
    }

    /// Relinearize a degree-2 ciphertext with the relinearization key: key-switch `c_2` from
    /// `s²` to `s` and add it to `(c_0, c_1)`.
    ///
    /// # Errors
    /// [`CkksError::MissingRelinKey`], [`CkksError::WrongKey`] (a key from another secret),
    /// [`CkksError::Degree`].
    pub fn relinearize(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        let op = operation();
        load(&op, ct);
        if ct.degree() == 1 {
            return Ok(store(&op, ct.clone()));
        }
        if ct.degree() != 2 {
            return Err(CkksError::Degree { degree: ct.degree(), expected: 2 });
        }
        let rlk = self.relin_key(ct.level())?;
        let _r = region("Relinearize");
        let _k = basalt_trace::key_scope(basalt_trace::KeyId::Relin);
        let (c0, c1) =
            self.keyswitch_add(&ct.polys[2], &rlk.key, [Some(&ct.polys[0]), Some(&ct.polys[1])]);
        let out = ct.with_polys(vec![c0, c1]);
        Ok(store(&op, out))
    }

    /// `relinearize(mul(a, b))`.
    pub fn mul_relin(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let _r = region("HMult");
        let op = operation();
        load(&op, a);
        load(&op, b);
        let t = self.mul(a, b)?;
        Ok(store(&op, self.relinearize(&t)?))
    }

    /// `rescale(k·relinearize(mul(a, b)) + add + constant)` with `k = 2` if `double`, else 1,
    /// where the rescale is merged into relinearisation's ModDown: de Castro et al.'s "ModDown
    /// merge" (FAB's reference \[15\]; `rescale_fusion` in their SimFHE cost model). The key
    /// switch of `c_2` stays in `Q_l ∪ P`, `P·(k·c_0 + add_0 + constant, k·c_1 + add_1)` joins
    /// it there, and one exact division by `P·q_top` ([`rns::mod_down_rescale`]) replaces
    /// ModDown's and the rescale's INTT/BConv/NTT chains. The result equals the unmerged one
    /// up to one unit of rounding per coefficient. `add` must be at the product's scale and
    /// level; `constant` is added at that scale (as [`Evaluator::add_const`]).
    ///
    /// # Errors
    /// As [`Evaluator::mul`], [`Evaluator::relinearize`] and [`Evaluator::rescale`].
    pub fn mul_relin_rescale(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        double: bool,
        add: Option<&Ciphertext>,
        constant: f64,
    ) -> Result<Ciphertext> {
        let _r = region("HMult");
        let count = self.params.primes_per_rescale();
        if a.level() + 1 < count + self.params.base_primes() {
            return Err(CkksError::LevelBelowZero { level: a.level(), drop: count });
        }
        let rlk = self.relin_key(a.level())?;
        let op = operation();
        load(&op, a);
        load(&op, b);
        if let Some(x) = add {
            load(&op, x);
        }
        let mut t = self.mul(a, b)?;
        let d2 = t.polys.pop().expect("a tensor product has three polynomials");
        // The tail on Q_l, at the product's scale: k·(c_0, c_1) + add + constant.
        if double {
            t = self.add(&t, &t)?;
        }
        if let Some(x) = add {
            self.add_assign(&mut t, x)?;
        }
        if constant != 0.0 {
            t = self.add_const(&t, constant.into())?;
        }
        let _r = region("Relinearize");
        let _k = basalt_trace::key_scope(basalt_trace::KeyId::Relin);
        let _s = region("KeySwitch");
        let ring = self.params.ring();
        let (mut v0, mut v1) = self.keyswitch_lazy(&d2, &rlk.key);
        let k = self.params.k_at(a.level());
        let p_mod_q = self.p_mod_q(a.level());
        let polys = [(&mut v0, &t.polys[0]), (&mut v1, &t.polys[1])].map(|(v, c)| {
            if double {
                let w = v.clone();
                ring.add_assign(v, &w);
            }
            ring.add_assign(v, &lift_times_p(ring, c, k, p_mod_q));
            rns::mod_down_rescale(ring, v, count)
        });
        let limbs = a.level() + 1;
        let dropped: f64 =
            self.params.q()[limbs - count..limbs].iter().map(|&q| q as f64).product();
        let out = Ciphertext {
            polys: polys.into(),
            scale: t.scale / dropped,
            slots: t.slots,
            params_id: t.params_id,
            key_id: t.key_id,
            object: ObjectId::fresh(),
        };
        Ok(store(&op, out))
    }

    /// The relinearisation key, checked (holding the part key switching at `level` reads).
    fn relin_key(&self, level: usize) -> Result<&crate::keys::RelinKey> {
        let rlk = self.keys.relin.as_ref().ok_or(CkksError::MissingRelinKey)?;
        if rlk.key.tag() != KeyTag::Relin {
            return Err(CkksError::WrongKey {
                expected: KeyTag::Relin.to_string(),
                found: rlk.key.tag().to_string(),
            });
        }
        rlk.key.check_level(&self.params, level)?;
        Ok(rlk)
    }
}
