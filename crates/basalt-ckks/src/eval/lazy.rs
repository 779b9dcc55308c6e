//! Operations on lazy (`Q_l ∪ P`) ciphertexts for full double hoisting, checked single hoisted
//! rotations, and small accessors the circuits build on.
//!
//! # Algorithm
//! Bossuat et al.'s double-hoisted BSGS keeps everything between the input's one decomposition
//! and the output's one ModDown in `Q_l ∪ P`: baby steps are lazy hoisted rotations
//! ([`Evaluator::rotate_hoisted_lazy`]), each giant step's inner sum is formed there with
//! plaintexts encoded over `Q_l ∪ P` ([`Evaluator::mul_plain_qp`],
//! [`crate::Encoder::encode_qp`]), the giant rotation takes the sum as input without leaving
//! `Q_l ∪ P` ([`Evaluator::rotate_lazy_qp`]), and one [`Evaluator::mod_down`] ends the transform.
//!
//! # Source
//! Bossuat, Mouchet, Troncoso-Pastoriza, Hubaux, EUROCRYPT 2021, §3 (Alg. 4, double hoisting);
//! Lattigo's BSGS with `Q∪P` diagonals (read for the structure, not copied).
//!
//! # Cost
//! `mul_plain_qp`: `2(l+1+k)` limb products and one plaintext load of `l+1+k` limbs.
//! `rotate_lazy_qp`: see `keyswitch::hoisted::automorphism_lazy_qp`.

use crate::ciphertext::{Ciphertext, PlaintextQP};
use crate::encoder::Encoder;
use crate::error::{CkksError, Result};
use crate::keyswitch::{CiphertextQP, HoistedDecomp, hoisted};
use basalt_trace::operation;

use super::Evaluator;
use crate::objects::{load, store, store_in_place};

impl Evaluator {
    /// The evaluator's encoder (same parameter set), so circuits need not build another.
    pub fn encoder(&self) -> &Encoder {
        &self.encoder
    }

    /// `P_l mod q_i` for every Q prime of the chain, `P_l` the special modulus of `level`: the
    /// factor lazy (`Q_l ∪ P_l`) results carry.
    ///
    /// # Panics
    /// If `level > max_level()`.
    pub fn p_mod_q(&self, level: usize) -> &[u64] {
        &self.p_mod_q[self.params.gadget_index(level)]
    }

    /// `a += b` in place (same level and scale; degrees may differ), saving the copy
    /// [`Evaluator::add`] makes.
    ///
    /// # Errors
    /// As [`Evaluator::add`]: parameter set, level or scale mismatch, symbolic and real mixed.
    pub fn add_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.check_pair(a, b, true)?;
        a.key_id = a.key_id.join(b.key_id, "the second operand")?;
        let op = operation();
        load(&op, a);
        load(&op, b);
        let ring = self.params.ring();
        for p in b.polys.iter().skip(a.polys.len()) {
            a.polys.push(p.zero_like());
        }
        for (x, y) in a.polys.iter_mut().zip(&b.polys) {
            ring.add_assign(x, y);
        }
        store_in_place(&op, a);
        Ok(())
    }

    fn check_qp(&self, ct: &CiphertextQP) -> Result<()> {
        if ct.params_id != self.params.id() {
            return Err(CkksError::WrongParams { expected: self.params.id(), found: ct.params_id });
        }
        if self.symbolic_keys && !ct.is_symbolic() {
            return Err(CkksError::SymbolicMix);
        }
        self.check_key_id(ct.key_id)
    }

    /// Rotation of `ct` left by `k` from its decomposition `decomp` (single hoisting: many
    /// rotations share one Decompose + ModUp). `k = 0` returns `ct`. `decomp` must come from
    /// [`Evaluator::decompose`] of this `ct` (only its level can be checked).
    ///
    /// # Errors
    /// Wrong parameter set, degree ≠ 1, [`CkksError::LevelMismatch`] between `ct` and
    /// `decomp`, [`CkksError::MissingRotationKey`].
    pub fn rotate_hoisted_with(
        &self,
        ct: &Ciphertext,
        decomp: &HoistedDecomp,
        k: i64,
    ) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        Self::check_degree1(ct)?;
        if decomp.level() != ct.level() {
            return Err(CkksError::LevelMismatch { left: ct.level(), right: decomp.level() });
        }
        let g = self.params.ring().galois_element_for_rotation(k);
        let op = operation();
        load(&op, ct);
        if g == 1 {
            return Ok(store(&op, ct.clone()));
        }
        let gk = self.galois_key(g, Some(k), ct.level())?;
        load(&op, decomp);
        // Name the key for the simulator's on-chip store, as `rotate` does.
        let _k = basalt_trace::key_scope(basalt_trace::KeyId::Galois { element: g });
        Ok(store(&op, hoisted::automorphism_hoisted(&self.params, ct, decomp, g, &gk.key)))
    }

    /// `ct ⊙ pt` over `Q_l ∪ P` (slot-wise; the scale is the product of the scales). The
    /// plaintext may be at a higher level; its extra Q limbs are ignored.
    ///
    /// # Errors
    /// [`CkksError::WrongParams`], [`CkksError::SymbolicMix`], [`CkksError::LevelMismatch`] if
    /// the plaintext is below the ciphertext's level.
    pub fn mul_plain_qp(&self, ct: &CiphertextQP, pt: &PlaintextQP) -> Result<CiphertextQP> {
        self.check_qp(ct)?;
        self.check_plain_qp(pt, (ct.is_symbolic(), ct.level()))?;
        let op = operation();
        load(&op, ct);
        Ok(store(&op, hoisted::mul_plain_qp(&self.params, ct, pt)))
    }

    /// Rotate a lazy `Q_l ∪ P` ciphertext left by `k`, leaving the result in `Q_l ∪ P` (one
    /// ModDown of `c_1` only, no ModDown of the result): the giant step of full double hoisting.
    /// `k = 0` returns a copy.
    ///
    /// # Errors
    /// [`CkksError::WrongParams`], [`CkksError::SymbolicMix`],
    /// [`CkksError::MissingRotationKey`].
    pub fn rotate_lazy_qp(&self, ct: &CiphertextQP, k: i64) -> Result<CiphertextQP> {
        self.check_qp(ct)?;
        let g = self.params.ring().galois_element_for_rotation(k);
        let op = operation();
        load(&op, ct);
        if g == 1 {
            return Ok(store(&op, ct.clone()));
        }
        let gk = self.galois_key(g, Some(k), ct.level())?;
        // Name the key for the simulator's on-chip store, as `rotate` does.
        let _k = basalt_trace::key_scope(basalt_trace::KeyId::Galois { element: g });
        Ok(store(&op, hoisted::automorphism_lazy_qp(&self.params, ct, g, &gk.key)))
    }
}
