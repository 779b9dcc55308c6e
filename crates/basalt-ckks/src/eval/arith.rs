//! Additions, subtractions, negation, and products by plaintexts and constants.

use basalt_math::RnsPoly;
use basalt_trace::operation;
use num_complex::Complex64;

use super::{Evaluator, scales_match};
use crate::ciphertext::{Ciphertext, Plaintext};
use crate::error::{CkksError, Result};
use crate::objects::{load, store};
use crate::util::restrict;

/// Residue of the integer-valued `v` modulo `q` (|v| < 2^126).
pub(crate) fn f64_residue(v: f64, q: u64) -> Result<u64> {
    if !v.is_finite() || v.abs() >= 2f64.powi(126) {
        return Err(CkksError::Overflow { value: v });
    }
    let r = (v as i128).rem_euclid(q as i128);
    Ok(r as u64)
}

impl Evaluator {
    /// `out = a; out_i ⊕= b_i`, padding `a` with zeros if `b` has the higher degree.
    fn zip_polys(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        f: impl Fn(&mut RnsPoly, &RnsPoly),
    ) -> Ciphertext {
        let mut out = a.clone();
        out.key_id = a.key_id.join(b.key_id, "the second operand").unwrap_or(a.key_id);
        for p in b.polys.iter().skip(a.polys.len()) {
            out.polys.push(p.zero_like());
        }
        for (o, p) in out.polys.iter_mut().zip(&b.polys) {
            f(o, p);
        }
        out
    }

    /// `a + b` (same level and scale; degrees may differ).
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check_pair(a, b, true)?;
        let op = operation();
        load(&op, a);
        load(&op, b);
        let ring = self.params.ring();
        Ok(store(&op, self.zip_polys(a, b, |x, y| ring.add_assign(x, y))))
    }

    /// `a − b`.
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check_pair(a, b, true)?;
        let op = operation();
        load(&op, a);
        load(&op, b);
        let ring = self.params.ring();
        Ok(store(&op, self.zip_polys(a, b, |x, y| ring.sub_assign(x, y))))
    }

    /// `−a`.
    pub fn neg(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check_ct(a)?;
        let op = operation();
        load(&op, a);
        let ring = self.params.ring();
        let mut out = a.clone();
        out.polys.iter_mut().for_each(|p| ring.neg_assign(p));
        Ok(store(&op, out))
    }

    fn plain_at(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<RnsPoly> {
        self.check_ct(ct)?;
        self.check_pt(ct, pt)?;
        Ok(restrict(&pt.poly, ct.level() + 1, 0))
    }

    /// `ct + pt` (same scale; the plaintext may be at a higher level).
    pub fn add_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        let p = self.plain_at(ct, pt)?;
        if !scales_match(ct.scale, pt.scale) {
            return Err(CkksError::ScaleMismatch { left: ct.scale.log2(), right: pt.scale.log2() });
        }
        let op = operation();
        load(&op, ct);
        let mut out = ct.clone();
        self.params.ring().add_assign(&mut out.polys[0], &p);
        Ok(store(&op, out))
    }

    /// `ct − pt`.
    pub fn sub_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        let p = self.plain_at(ct, pt)?;
        if !scales_match(ct.scale, pt.scale) {
            return Err(CkksError::ScaleMismatch { left: ct.scale.log2(), right: pt.scale.log2() });
        }
        let op = operation();
        load(&op, ct);
        let mut out = ct.clone();
        self.params.ring().sub_assign(&mut out.polys[0], &p);
        Ok(store(&op, out))
    }

    /// `ct ⊙ pt` (slot-wise product); the result's scale is the product of the scales.
    pub fn mul_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        let p = self.plain_at(ct, pt)?;
        let op = operation();
        load(&op, ct);
        let ring = self.params.ring();
        let mut out = ct.clone();
        basalt_trace::emit(basalt_trace::Kernel::PlainLoad {
            n: self.params.n() as u32,
            limbs: (ct.level() + 1) as u32,
        });
        out.polys.iter_mut().for_each(|c| ring.mul_assign(c, &p));
        out.scale = ct.scale * pt.scale;
        Ok(store(&op, out))
    }

    /// Add the complex constant `c` to every slot.
    pub fn add_const(&self, ct: &Ciphertext, c: Complex64) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        let op = operation();
        load(&op, ct);
        let ring = self.params.ring();
        let mut out = ct.clone();
        if c.im == 0.0 {
            let v = (c.re * ct.scale).round();
            let s: Vec<u64> = self.params.q()[..=ct.level()]
                .iter()
                .map(|&q| f64_residue(v, q))
                .collect::<Result<_>>()?;
            ring.add_const_assign(&mut out.polys[0], &s);
            return Ok(store(&op, out));
        }
        let mut pt = self.encoder.encode_constant(c, ct.level(), ct.scale)?;
        if ct.is_symbolic() {
            pt = Plaintext::symbolic(&self.params, ct.level())?;
            pt.scale = ct.scale;
        }
        self.add_plain(ct, &pt).map(|out| store(&op, out))
    }

    /// Subtract the complex constant `c` from every slot.
    pub fn sub_const(&self, ct: &Ciphertext, c: Complex64) -> Result<Ciphertext> {
        self.add_const(ct, -c)
    }

    /// Multiply every slot by the real constant `c`, scaled by `const_scale` (the result's scale
    /// is `ct.scale · const_scale`). Use the top prime `q_l` as `const_scale` to have the next
    /// rescale restore the scale exactly ([`Evaluator::mul_const`] does).
    pub fn mul_const_scaled(
        &self,
        ct: &Ciphertext,
        c: f64,
        const_scale: f64,
    ) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        let v = (c * const_scale).round();
        let s: Vec<u64> = self.params.q()[..=ct.level()]
            .iter()
            .map(|&q| f64_residue(v, q))
            .collect::<Result<_>>()?;
        let op = operation();
        load(&op, ct);
        let ring = self.params.ring();
        let mut out = ct.clone();
        out.polys.iter_mut().for_each(|p| ring.mul_scalar_assign(p, &s));
        out.scale = ct.scale * const_scale;
        Ok(store(&op, out))
    }

    /// Multiply by the real constant `c` with `const_scale = q_l` (or 1 at level 0, rounding
    /// `c` to an integer).
    pub fn mul_const(&self, ct: &Ciphertext, c: f64) -> Result<Ciphertext> {
        let s = if ct.level() == 0 { 1.0 } else { self.params.q()[ct.level()] as f64 };
        self.mul_const_scaled(ct, c, s)
    }

    /// Multiply by the complex constant `c` (encoded at scale `q_l`).
    pub fn mul_const_complex(&self, ct: &Ciphertext, c: Complex64) -> Result<Ciphertext> {
        if c.im == 0.0 {
            return self.mul_const(ct, c.re);
        }
        let s = if ct.level() == 0 { 1.0 } else { self.params.q()[ct.level()] as f64 };
        let pt = if ct.is_symbolic() {
            let mut p = Plaintext::symbolic(&self.params, ct.level())?;
            p.scale = s;
            p
        } else {
            self.encoder.encode_constant(c, ct.level(), s)?
        };
        self.mul_plain(ct, &pt)
    }

    /// Multiply by a small integer (no scale change).
    pub fn mul_integer(&self, ct: &Ciphertext, c: i64) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        let op = operation();
        load(&op, ct);
        let ring = self.params.ring();
        let mut out = ct.clone();
        out.polys.iter_mut().for_each(|p| ring.mul_i64_assign(p, c));
        Ok(store(&op, out))
    }
}
