//! Hoisted rotations: one Decompose + ModUp shared by many rotations of the same ciphertext,
//! and double hoisting (`_lazy` results left in `Q_l ∪ P`, one ModDown for a whole sum).
//!
//! # Algorithm
//! For `ct = (c_0, c_1)` at level `l` and Galois elements `g_1 … g_r`:
//! 1. `D = decompose(c_1)` once (INTT, ModUp of every digit);
//! 2. per rotation `g`: permute every extended digit with the automorphism (`φ_g` is a slot
//!    permutation in the NTT domain, and `φ_g(d̃_j)` is a valid extension of digit `j` of
//!    `φ_g(c_1)`), inner product with the Galois key of `g` → `(v_0, v_1)` over `Q_l ∪ P`;
//! 3. `_lazy`: return `(v_0 + P·φ_g(c_0), v_1)` in `Q_l ∪ P` — sums of these need a single
//!    ModDown at the end ([`CiphertextQP::mod_down`]); otherwise ModDown now and add `φ_g(c_0)`.
//!
//! Hoisted results decrypt to the same message as plain rotations but are not bit-identical:
//! BConv of `φ_g(x)` and `φ_g(BConv(x))` differ by multiples of the digit modulus, which the
//! key's gadget cancels.
//!
//! # Source
//! Halevi & Shoup, "Faster homomorphic linear transformations in HElib", CRYPTO 2018 (hoisting);
//! Bossuat et al., EUROCRYPT 2021 §3 (double hoisting); Lattigo `AutomorphismHoistedLazy`.
//!
//! # Cost
//! Once: INTT `l+1`, ModUp as in [`super::cost`]. Per rotation: automorphisms of
//! `β(l+1+k)` + `l+1` limbs, inner product `2β(l+1+k)` MulAcc, and (non-lazy) ModDown
//! `2k` INTT + `2(l+1)` NTT.

use basalt_math::{RnsPoly, rns};
use basalt_trace::region;

use super::decompose::HoistedDecomp;
use super::hybrid::inner_product_rotated;
use crate::ciphertext::Ciphertext;
use crate::error::{CkksError, Result};
use crate::keys::KeyMaterial;
use crate::params::Parameters;
use crate::util::lift_times_p;

/// A ciphertext over `Q_l ∪ P` carrying an implicit factor `P` (result of a lazy rotation).
#[derive(Clone, Debug, PartialEq)]
pub struct CiphertextQP {
    pub(crate) c0: RnsPoly,
    pub(crate) c1: RnsPoly,
    pub(crate) scale: f64,
    pub(crate) slots: usize,
    pub(crate) params_id: u64,
}

impl CiphertextQP {
    pub fn level(&self) -> usize {
        self.c0.q_limbs() - 1
    }
    pub fn scale(&self) -> f64 {
        self.scale
    }
    /// `self += other` (same level; exact).
    ///
    /// # Panics
    /// If the levels differ or one operand is symbolic and the other not; use
    /// [`CiphertextQP::try_add_assign`] for a checked version.
    pub fn add_assign(&mut self, params: &Parameters, other: &CiphertextQP) {
        let ring = params.ring();
        ring.add_assign(&mut self.c0, &other.c0);
        ring.add_assign(&mut self.c1, &other.c1);
    }

    /// Checked `self += other`.
    ///
    /// # Errors
    /// Parameter set, level or scale mismatch; symbolic and real operands mixed.
    pub fn try_add_assign(&mut self, params: &Parameters, other: &CiphertextQP) -> Result<()> {
        for id in [self.params_id, other.params_id] {
            if id != params.id() {
                return Err(CkksError::WrongParams { expected: params.id(), found: id });
            }
        }
        if self.level() != other.level() {
            return Err(CkksError::LevelMismatch { left: self.level(), right: other.level() });
        }
        if self.c0.is_symbolic() != other.c0.is_symbolic() {
            return Err(CkksError::SymbolicMix);
        }
        if !crate::eval::scales_match(self.scale, other.scale) {
            return Err(CkksError::ScaleMismatch {
                left: self.scale.log2(),
                right: other.scale.log2(),
            });
        }
        self.add_assign(params, other);
        Ok(())
    }
    /// ModDown both polynomials to `Q_l`: one ModDown for however many lazy results were summed.
    pub fn mod_down(&self, params: &Parameters) -> Ciphertext {
        let ring = params.ring();
        Ciphertext {
            polys: vec![rns::mod_down(ring, &self.c0), rns::mod_down(ring, &self.c1)],
            scale: self.scale,
            slots: self.slots,
            params_id: self.params_id,
        }
    }
}

/// `P·ct` over `Q_l ∪ P` (the lazy form of the identity rotation).
pub fn lift_lazy(params: &Parameters, ct: &Ciphertext, p_mod_q: &[u64]) -> CiphertextQP {
    let ring = params.ring();
    CiphertextQP {
        c0: lift_times_p(ring, &ct.polys[0], params.k(), p_mod_q),
        c1: lift_times_p(ring, &ct.polys[1], params.k(), p_mod_q),
        scale: ct.scale,
        slots: ct.slots,
        params_id: ct.params_id,
    }
}

/// Lazy rotation of `ct` by Galois element `galois` reusing `decomp = decompose(c_1)`.
pub fn automorphism_hoisted_lazy(
    params: &Parameters,
    ct: &Ciphertext,
    decomp: &HoistedDecomp,
    galois: u64,
    key: &KeyMaterial,
    p_mod_q: &[u64],
) -> CiphertextQP {
    let _r = region("Rotate");
    let ring = params.ring();
    let (mut v0, v1) = inner_product_rotated(params, decomp, key, galois);
    let c0 = ring.automorphism(&ct.polys[0], galois);
    let pc0 = lift_times_p(ring, &c0, params.k(), p_mod_q);
    ring.add_assign(&mut v0, &pc0);
    CiphertextQP { c0: v0, c1: v1, scale: ct.scale, slots: ct.slots, params_id: ct.params_id }
}

/// Non-lazy hoisted rotation: ModDown right away and add `φ_g(c_0)` in `Q_l`.
pub fn automorphism_hoisted(
    params: &Parameters,
    ct: &Ciphertext,
    decomp: &HoistedDecomp,
    galois: u64,
    key: &KeyMaterial,
) -> Ciphertext {
    let _r = region("Rotate");
    let ring = params.ring();
    let (v0, v1) = inner_product_rotated(params, decomp, key, galois);
    let (u0, u1) = {
        let _r = region("KeySwitch");
        (rns::mod_down(ring, &v0), rns::mod_down(ring, &v1))
    };
    let mut c0 = ring.automorphism(&ct.polys[0], galois);
    ring.add_assign(&mut c0, &u0);
    Ciphertext { polys: vec![c0, u1], scale: ct.scale, slots: ct.slots, params_id: ct.params_id }
}
