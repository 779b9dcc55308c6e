//! Fused operations for circuits that accumulate many constant products (polynomial
//! evaluation's `Σ c_k·T_k`): no intermediate ciphertexts, no copies of the limbs a level drop
//! discards.

use super::Evaluator;
use super::scales_match;
use crate::ciphertext::Ciphertext;
use crate::error::{CkksError, Result};
use crate::objects::{load, store, store_in_place};
use basalt_trace::operation;

impl Evaluator {
    /// `acc += c·ct` with `c` encoded as the integer `round(c·const_scale)`, over `acc`'s
    /// limbs (`ct` may be at a higher level: its extra limbs are ignored, a free level drop).
    /// `acc`'s scale must be `ct.scale · const_scale`.
    ///
    /// # Errors
    /// Parameter set, symbolic/real mix, `ct` below `acc`'s level, degree mismatch, scales
    /// that do not match, a constant that overflows.
    pub fn mul_const_add_assign(
        &self,
        acc: &mut Ciphertext,
        ct: &Ciphertext,
        c: f64,
        const_scale: f64,
    ) -> Result<()> {
        self.check_ct(acc)?;
        self.check_ct(ct)?;
        if acc.is_symbolic() != ct.is_symbolic() {
            return Err(CkksError::SymbolicMix);
        }
        if ct.level() < acc.level() {
            return Err(CkksError::LevelMismatch { left: acc.level(), right: ct.level() });
        }
        if acc.degree() != ct.degree() {
            return Err(CkksError::Degree { degree: ct.degree(), expected: acc.degree() });
        }
        if !scales_match(acc.scale, ct.scale * const_scale) {
            return Err(CkksError::ScaleMismatch {
                left: acc.scale.log2(),
                right: (ct.scale * const_scale).log2(),
            });
        }
        let op = operation();
        load(&op, acc);
        load(&op, ct);
        // The same integer constant as `mul_const_scaled` would use.
        let v = (c * const_scale).round();
        let s: Vec<u64> = self.params.q()[..=acc.level()]
            .iter()
            .map(|&q| super::arith::f64_residue(v, q))
            .collect::<Result<_>>()?;
        let ring = self.params.ring();
        for (a, p) in acc.polys.iter_mut().zip(&ct.polys) {
            ring.mul_scalar_acc_assign(a, p, &s);
        }
        store_in_place(&op, acc);
        Ok(())
    }

    /// A zero ciphertext shaped like `ct` at `level` with scale `scale` (the accumulator of
    /// [`Evaluator::mul_const_add_assign`]).
    ///
    /// # Errors
    /// [`CkksError::LevelTooHigh`] above `ct`'s level.
    pub fn zero_like(&self, ct: &Ciphertext, level: usize, scale: f64) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        if level > ct.level() {
            return Err(CkksError::LevelTooHigh { requested: level, max: ct.level() });
        }
        let polys = ct.polys.iter().map(|p| p.with_shape(level + 1, 0, p.domain())).collect();
        // Written, not read: only `ct`'s shape is used.
        let op = operation();
        let mut out = ct.with_polys(polys);
        out.scale = scale;
        Ok(store(&op, out))
    }
}

impl Evaluator {
    /// `acc += ct ⊙ pt` over `Q_l ∪ P` (`acc = ct ⊙ pt` when `acc` is `None`): the partial sums
    /// of a double-hoisted transform accumulated in place, without a product ciphertext per
    /// diagonal (each would be `2(l+1+k)` fresh limbs to allocate, fill and add).
    ///
    /// # Errors
    /// As [`Evaluator::mul_plain_qp`]; a level or scale mismatch with `acc`.
    pub fn mul_plain_qp_acc(
        &self,
        acc: &mut Option<crate::CiphertextQP>,
        ct: &crate::CiphertextQP,
        pt: &crate::PlaintextQP,
    ) -> Result<()> {
        let op = operation();
        load(&op, ct);
        let Some(a) = acc.as_mut() else {
            *acc = Some(store(&op, self.mul_plain_qp(ct, pt)?));
            return Ok(());
        };
        load(&op, a);
        self.check_plain_qp(pt, (ct.is_symbolic(), ct.level()))?;
        if a.params_id != ct.params_id || a.params_id != self.params.id() {
            return Err(CkksError::WrongParams { expected: self.params.id(), found: ct.params_id });
        }
        if a.level() != ct.level() {
            return Err(CkksError::LevelMismatch { left: a.level(), right: ct.level() });
        }
        a.key_id = a.key_id.join(ct.key_id, "the second operand")?;
        if a.c0.is_symbolic() != ct.c0.is_symbolic() {
            return Err(CkksError::SymbolicMix);
        }
        if !scales_match(a.scale, ct.scale * pt.scale) {
            return Err(CkksError::ScaleMismatch {
                left: a.scale.log2(),
                right: (ct.scale * pt.scale).log2(),
            });
        }
        let l1 = ct.level() + 1;
        let k = self.params.k_at(ct.level());
        // The stored diagonal is usually at exactly this level: borrow it rather than copy.
        let p = if pt.poly.q_limbs() == l1 && pt.poly.p_limbs() == k {
            std::borrow::Cow::Borrowed(&pt.poly)
        } else {
            std::borrow::Cow::Owned(crate::util::restrict(&pt.poly, l1, k))
        };
        basalt_trace::emit(basalt_trace::Kernel::PlainLoad {
            n: self.params.n() as u32,
            limbs: (l1 + k) as u32,
        });
        let ring = self.params.ring();
        ring.mul_acc(&mut a.c0, &ct.c0, &p);
        ring.mul_acc(&mut a.c1, &ct.c1, &p);
        store_in_place(&op, a);
        Ok(())
    }
}
