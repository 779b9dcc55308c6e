//! On-the-fly limb extension (OF-Limb): keep one limb's worth of each plaintext diagonal and
//! rebuild the full-RNS plaintext at every use.
//!
//! # Algorithm
//! An encoded diagonal is a polynomial with integer coefficients `m_t`, `|m_t| < q_0/2`, so its
//! centred residues modulo `q_0` *are* the integers, and every other limb follows:
//! 1. store `[m]_{q_0}` in coefficient form (`n` words);
//! 2. per use: reduce the centred coefficients modulo each `q_i` of the current level (and `p_i`
//!    for `Q∪P` products) and run a forward NTT per limb.
//!
//! [`extend_q0`] / [`extend_q0_qp`] are exactly that, on `basalt-math` polynomials, and
//! [`OfLimbDiagonal::regenerate`] / [`OfLimbDiagonal::regenerate_qp`] wrap the result with
//! `Plaintext::from_poly` / `PlaintextQP::from_poly` (validated: shape, level, reduced
//! residues). A test checks the extension is bit-identical to the encoder's output at every
//! limb, `Q` and `Q∪P`; nothing is re-encoded from slot values at use.
//!
//! # Source
//! Kim et al., "ARK", MICRO 2022 (OF-Limb); Osiris §III and §IV (every plaintext diagonal).
//!
//! # Cost
//! Storage: `n` words per diagonal instead of `(l+1)·n` (traffic down by `l+1`, `l+1+α` in
//! `Q∪P`). Per use: `l+1` NTTs (`l+1+k` over `Q∪P`), no FFT.

use basalt_ckks::{CkksError, Encoder, Parameters, Plaintext, PlaintextQP};
use basalt_math::RnsPoly;
use num_complex::Complex64;

use crate::error::Result;

/// One diagonal kept at one limb's worth of storage: its centred `q_0` limb.
#[derive(Clone, Debug, PartialEq)]
pub struct OfLimbDiagonal {
    q0: Vec<i64>,
    slots: usize,
    scale: f64,
}

impl OfLimbDiagonal {
    /// Encode `values` once and keep the centred `q_0` limb.
    ///
    /// # Errors
    /// Encoding errors at `level` (the overflow check runs once, here);
    /// [`CkksError::Overflow`] if a coefficient is not below `q_0/2`, so that the `q_0` limb
    /// would not determine it.
    pub fn new(
        encoder: &Encoder,
        values: &[Complex64],
        slots: usize,
        level: usize,
        scale: f64,
    ) -> Result<OfLimbDiagonal> {
        encoder.encode(values, slots, level, scale)?;
        let q0 = q0_limb(encoder, values, slots, scale)?;
        let half = encoder.params().q()[0] / 2;
        if let Some(&c) = q0.iter().find(|c| c.unsigned_abs() >= half) {
            return Err(CkksError::Overflow { value: c as f64 / scale }.into());
        }
        Ok(OfLimbDiagonal { q0, slots, scale })
    }

    /// The `Q_level` plaintext, extended from the stored limb on every call.
    ///
    /// # Errors
    /// From `Plaintext::from_poly` (a level above the chain).
    pub fn regenerate(&self, params: &Parameters, level: usize) -> Result<Plaintext> {
        let poly = extend_q0(params, &self.q0, level);
        Ok(Plaintext::from_poly(params, poly, self.scale, self.slots)?)
    }

    /// The `Q_level ∪ P` plaintext (full double hoisting), extended on every call.
    ///
    /// # Errors
    /// From `PlaintextQP::from_poly`.
    pub fn regenerate_qp(&self, params: &Parameters, level: usize) -> Result<PlaintextQP> {
        let poly = extend_q0_qp(params, &self.q0, level);
        Ok(PlaintextQP::from_poly(params, poly, self.scale, self.slots)?)
    }
}

/// The centred `q_0` limb (as integers) of the plaintext encoding `values`.
///
/// # Errors
/// Encoding errors (bad slot count, overflow).
pub fn q0_limb(
    encoder: &Encoder,
    values: &[Complex64],
    slots: usize,
    scale: f64,
) -> Result<Vec<i64>> {
    Ok(encoder.embed(values, slots, scale)?.into_iter().map(|c| c.round() as i64).collect())
}

/// Extend a centred `q_0` limb to limbs `q_0..q_level` and NTT them (step 2 above).
pub fn extend_q0(params: &Parameters, q0: &[i64], level: usize) -> RnsPoly {
    extend(params, q0, level, 0)
}

/// Extend a centred `q_0` limb to `q_0..q_level` and all `P` primes, NTT domain.
pub fn extend_q0_qp(params: &Parameters, q0: &[i64], level: usize) -> RnsPoly {
    extend(params, q0, level, params.k_at(level))
}

fn extend(params: &Parameters, q0: &[i64], level: usize, p_limbs: usize) -> RnsPoly {
    let ring = params.ring();
    let mut p = ring.from_i64(q0, level + 1, p_limbs);
    ring.ntt_assign(&mut p);
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_ckks::ParametersLiteral;

    #[test]
    fn coefficients_beyond_half_q0_are_refused() {
        let params = Parameters::new(ParametersLiteral::toy(10, 55, 40, 4, 55, 1, 5)).unwrap();
        let enc = Encoder::new(&params);
        let v = [Complex64::new(1.0, 0.0)];
        // 2^60 > q_0/2 (q_0 of 55 bits) but below Q_4/2: encodable, not storable as one limb.
        assert!(enc.encode(&v, 1, 4, 2f64.powi(60)).is_ok());
        assert!(OfLimbDiagonal::new(&enc, &v, 1, 4, 2f64.powi(60)).is_err());
        assert!(OfLimbDiagonal::new(&enc, &v, 1, 4, 2f64.powi(40)).is_ok());
    }

    #[test]
    fn extension_is_bit_identical_to_encoding() {
        let params = Parameters::new(ParametersLiteral::toy(10, 55, 40, 4, 55, 1, 5)).unwrap();
        let enc = Encoder::new(&params);
        let slots = params.max_slots();
        let v: Vec<Complex64> = (0..slots)
            .map(|t| Complex64::new((t as f64 * 0.37).sin(), (t as f64).cos() * 0.5))
            .collect();
        let scale = params.q()[4] as f64;
        let q0 = q0_limb(&enc, &v, slots, scale).unwrap();
        for level in [1, 4] {
            let pt = enc.encode(&v, slots, level, scale).unwrap();
            assert_eq!(&extend_q0(&params, &q0, level), pt.poly(), "level {level}");
            let d = OfLimbDiagonal::new(&enc, &v, slots, level, scale).unwrap();
            assert_eq!(d.regenerate(&params, level).unwrap(), pt);
            let qp = enc.encode_qp(&v, slots, level, scale).unwrap();
            assert_eq!(&extend_q0_qp(&params, &q0, level), qp.poly(), "Q∪P level {level}");
            assert_eq!(d.regenerate_qp(&params, level).unwrap(), qp);
        }
    }
}
