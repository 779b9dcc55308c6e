//! Boolean gates on top of PBS, with the TFHE-library encoding `true = +1/8`, `false = −1/8`.
//!
//! # Algorithm
//! A gate is a linear combination of the two inputs plus a constant, chosen so that the result
//! has phase `+1/8` (true) or `−1/8`/`3/8`-side (false) away from the decision boundary, followed
//! by one bootstrap with the sign test vector `μ = 1/8`:
//! NAND = `1/8 − a − b`, AND = `−1/8 + a + b`, OR = `1/8 + a + b`, XOR = `1/4 + 2(a + b)`.
//!
//! # Source
//! CGGI JoC 2019 §5 (gate bootstrapping); Strix Fig. 1 (TFHE gate = PBS + KS + add/sub).

use crate::error::Result;
use crate::keys::{Ciphertext, ServerKey};
use crate::lut::Lut;
use crate::torus::Torus;

/// The four gates the issue asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    Nand,
    And,
    Or,
    Xor,
}

impl Gate {
    /// Cleartext truth table (the test oracle).
    pub fn eval(self, a: bool, b: bool) -> bool {
        match self {
            Gate::Nand => !(a && b),
            Gate::And => a && b,
            Gate::Or => a || b,
            Gate::Xor => a ^ b,
        }
    }
}

impl<T: Torus> ServerKey<T> {
    /// The linear part of a gate (before bootstrapping).
    pub fn gate_linear(
        &self,
        gate: Gate,
        a: &Ciphertext<T>,
        b: &Ciphertext<T>,
    ) -> Result<Ciphertext<T>> {
        self.check(a)?;
        self.check(b)?;
        crate::keys::check_encoding(a, crate::keys::Encoding::Boolean)?;
        crate::keys::check_encoding(b, crate::keys::Encoding::Boolean)?;
        let eighth = T::ONE.shl(T::BITS - 3);
        let mut out = a.clone();
        match gate {
            Gate::Nand => {
                out.lwe.scale(-1);
                out.lwe.sub_assign(&b.lwe);
                out.lwe.add_plain(eighth);
            }
            Gate::And => {
                out.lwe.add_assign(&b.lwe);
                out.lwe.add_plain(eighth.wneg());
            }
            Gate::Or => {
                out.lwe.add_assign(&b.lwe);
                out.lwe.add_plain(eighth);
            }
            Gate::Xor => {
                out.lwe.add_assign(&b.lwe);
                out.lwe.scale(2);
                out.lwe.add_plain(eighth.shl(1));
            }
        }
        Ok(out)
    }

    /// Evaluate a gate: linear combination then one bootstrap (and key switch).
    pub fn gate(&self, gate: Gate, a: &Ciphertext<T>, b: &Ciphertext<T>) -> Result<Ciphertext<T>> {
        let lin = self.gate_linear(gate, a, b)?;
        let lut = Lut::sign(self.params.polynomial_size, T::ONE.shl(T::BITS - 3));
        self.apply_lut_any(&lin, &lut)
    }

    pub fn nand(&self, a: &Ciphertext<T>, b: &Ciphertext<T>) -> Result<Ciphertext<T>> {
        self.gate(Gate::Nand, a, b)
    }
    pub fn and(&self, a: &Ciphertext<T>, b: &Ciphertext<T>) -> Result<Ciphertext<T>> {
        self.gate(Gate::And, a, b)
    }
    pub fn or(&self, a: &Ciphertext<T>, b: &Ciphertext<T>) -> Result<Ciphertext<T>> {
        self.gate(Gate::Or, a, b)
    }
    pub fn xor(&self, a: &Ciphertext<T>, b: &Ciphertext<T>) -> Result<Ciphertext<T>> {
        self.gate(Gate::Xor, a, b)
    }
}
