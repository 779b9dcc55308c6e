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
//! [`extend_q0`] is exactly that, on `basalt-math` polynomials; a test checks it is
//! bit-identical to the encoder's output at every limb. Because `basalt-ckks` does not yet
//! expose a `Plaintext` constructor from a polynomial, [`OfLimbDiagonal::regenerate`] rebuilds
//! the plaintext by re-encoding the stored slot values (also `n` words, and bit-identical to
//! the extension because encoding rounds the same real coefficients); the `l+1` forward NTTs
//! per use are the same.
//!
//! # Source
//! Kim et al., "ARK", MICRO 2022 (OF-Limb); Osiris §III and §IV (every plaintext diagonal).
//!
//! # Cost
//! Storage: `n` words per diagonal instead of `(l+1)·n` (traffic down by `l+1`, `l+1+α` in
//! `Q∪P`). Per use: `l+1` NTTs (plus the `n/2` special FFT of re-encoding in this version).

use basalt_ckks::{Encoder, Parameters, Plaintext};
use basalt_math::RnsPoly;
use num_complex::Complex64;

use crate::error::Result;

/// One diagonal kept at one limb's worth of storage.
#[derive(Clone, Debug, PartialEq)]
pub struct OfLimbDiagonal {
    values: Vec<Complex64>,
    slots: usize,
    scale: f64,
}

impl OfLimbDiagonal {
    /// Validate that `values` encode at `level` (the overflow check runs once, here).
    pub fn new(
        encoder: &Encoder,
        values: &[Complex64],
        slots: usize,
        level: usize,
        scale: f64,
    ) -> Result<OfLimbDiagonal> {
        encoder.encode(values, slots, level, scale)?;
        Ok(OfLimbDiagonal { values: values.to_vec(), slots, scale })
    }

    /// The full-RNS plaintext at `level` (rebuilt on every call).
    pub fn regenerate(&self, encoder: &Encoder, level: usize) -> Result<Plaintext> {
        Ok(encoder.encode(&self.values, self.slots, level, self.scale)?)
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
    let ring = params.ring();
    let mut p = ring.from_i64(q0, level + 1, 0);
    ring.ntt_assign(&mut p);
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_ckks::ParametersLiteral;

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
            assert_eq!(d.regenerate(&enc, level).unwrap(), pt);
        }
    }
}
