//! Ciphertext × ciphertext products and relinearization.

use basalt_trace::region;

use super::Evaluator;
use crate::ciphertext::Ciphertext;
use crate::error::{CkksError, Result};
use crate::keys::KeyTag;

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
        let _r = region("Tensor");
        let ring = self.params.ring();
        let d0 = ring.mul(&a.polys[0], &b.polys[0]);
        let mut d1 = ring.mul(&a.polys[0], &b.polys[1]);
        ring.mul_acc(&mut d1, &a.polys[1], &b.polys[0]);
        let d2 = ring.mul(&a.polys[1], &b.polys[1]);
        Ok(Ciphertext {
            polys: vec![d0, d1, d2],
            scale: a.scale * b.scale,
            slots: a.slots.max(b.slots),
            params_id: a.params_id,
        })
    }

    /// Relinearize a degree-2 ciphertext with the relinearization key: key-switch `c_2` from
    /// `s²` to `s` and add it to `(c_0, c_1)`.
    ///
    /// # Errors
    /// [`CkksError::MissingRelinKey`], [`CkksError::WrongKey`] (a key from another secret),
    /// [`CkksError::Degree`].
    pub fn relinearize(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        if ct.degree() == 1 {
            return Ok(ct.clone());
        }
        if ct.degree() != 2 {
            return Err(CkksError::Degree { degree: ct.degree(), expected: 2 });
        }
        let rlk = self.keys.relin.as_ref().ok_or(CkksError::MissingRelinKey)?;
        if rlk.key.tag() != KeyTag::Relin {
            return Err(CkksError::WrongKey {
                expected: KeyTag::Relin.to_string(),
                found: rlk.key.tag().to_string(),
            });
        }
        let _r = region("Relinearize");
        let _k = basalt_trace::key_scope(basalt_trace::KeyId::Relin);
        let (c0, c1) =
            self.keyswitch_add(&ct.polys[2], &rlk.key, [Some(&ct.polys[0]), Some(&ct.polys[1])]);
        Ok(Ciphertext {
            polys: vec![c0, c1],
            scale: ct.scale,
            slots: ct.slots,
            params_id: ct.params_id,
        })
    }

    /// `relinearize(mul(a, b))`.
    pub fn mul_relin(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let _r = region("HMult");
        let t = self.mul(a, b)?;
        self.relinearize(&t)
    }
}
