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
use crate::ciphertext::{Ciphertext, PlaintextQP, check_poly_operand, check_scale_slots};
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
    /// A `Q_l ∪ P` ciphertext from its two polynomials (`l+1` Q limbs and all `k` P limbs each,
    /// NTT domain), read as `(c_0 + c_1·s) / P`. Symbolic pairs are accepted (trace mode).
    ///
    /// # Errors
    /// [`CkksError::InvalidPolynomial`] for a wrong shape, domain or unreduced residue;
    /// [`CkksError::LevelMismatch`] if the two differ in level; [`CkksError::SymbolicMix`];
    /// [`CkksError::BadScale`] / [`CkksError::BadSlots`].
    pub fn from_polys(
        params: &Parameters,
        c0: RnsPoly,
        c1: RnsPoly,
        scale: f64,
        slots: usize,
    ) -> Result<Self> {
        check_poly_operand(params, &c0, params.k(), "Q∪P ciphertext")?;
        check_poly_operand(params, &c1, params.k(), "Q∪P ciphertext")?;
        if c0.q_limbs() != c1.q_limbs() {
            return Err(CkksError::LevelMismatch {
                left: c0.q_limbs() - 1,
                right: c1.q_limbs() - 1,
            });
        }
        if c0.is_symbolic() != c1.is_symbolic() {
            return Err(CkksError::SymbolicMix);
        }
        check_scale_slots(params, scale, slots)?;
        Ok(CiphertextQP { c0, c1, scale, slots, params_id: params.id() })
    }
    pub fn level(&self) -> usize {
        self.c0.q_limbs() - 1
    }
    pub fn scale(&self) -> f64 {
        self.scale
    }
    pub fn slots(&self) -> usize {
        self.slots
    }
    pub fn params_id(&self) -> u64 {
        self.params_id
    }
    pub fn is_symbolic(&self) -> bool {
        self.c0.is_symbolic()
    }
    /// The pair `(c_0, c_1)` over `Q_l ∪ P`.
    pub fn polys(&self) -> (&RnsPoly, &RnsPoly) {
        (&self.c0, &self.c1)
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

/// `ct ⊙ pt` over `Q_l ∪ P` (both operands already checked): two limb-wise products of
/// `l+1+k` limbs; the scale is the product of the scales and the factor `P` stays implicit.
pub(crate) fn mul_plain_qp(
    params: &Parameters,
    ct: &CiphertextQP,
    pt: &PlaintextQP,
) -> CiphertextQP {
    let ring = params.ring();
    let l1 = ct.level() + 1;
    let p = crate::util::restrict(&pt.poly, l1, params.k());
    basalt_trace::emit(basalt_trace::Kernel::PlainLoad {
        n: params.n() as u32,
        limbs: (l1 + params.k()) as u32,
    });
    let mut out = ct.clone();
    ring.mul_assign(&mut out.c0, &p);
    ring.mul_assign(&mut out.c1, &p);
    out.scale = ct.scale * pt.scale;
    out
}

/// Rotation of a `Q_l ∪ P` ciphertext `(a_0, a_1)` that stays in `Q_l ∪ P` (the giant step of
/// full double hoisting).
///
/// # Algorithm
/// `c_1 = ModDown(a_1) = round(a_1/P)`, so `a_0 + P·c_1·s = a_0 + a_1·s − r·s` with `|r| ≤ P/2`:
/// the pair `(a_0, c_1)` with `c_1` on the `Q_l` basis still decrypts (after the final ModDown)
/// to the same message up to a ModDown rounding error. Then decompose `c_1`, take the inner
/// product of its automorphed digits with the Galois key (`≈ P·φ_g(c_1)·φ_g(s)` switched to
/// `s`) and add `φ_g(a_0)` in `Q_l ∪ P`: no second ModDown, no lift of `c_0`.
///
/// # Cost
/// ModDown of one polynomial (`k` INTT, `n·k(l+1)` BConv, `l+1` NTT), a decomposition (as in
/// [`super::cost`]), automorphisms of `β(l+1+k)` digit limbs and `l+1+k` limbs of `a_0`,
/// `2β(l+1+k)` MulAcc.
pub(crate) fn automorphism_lazy_qp(
    params: &Parameters,
    ct: &CiphertextQP,
    galois: u64,
    key: &KeyMaterial,
) -> CiphertextQP {
    let _r = region("Rotate");
    let ring = params.ring();
    let c1 = {
        let _r = region("KeySwitch");
        rns::mod_down(ring, &ct.c1)
    };
    let decomp = super::decompose(params, &c1);
    let (mut v0, v1) = inner_product_rotated(params, &decomp, key, galois);
    let a0 = {
        let _r = region("Automorph");
        ring.automorphism(&ct.c0, galois)
    };
    ring.add_assign(&mut v0, &a0);
    CiphertextQP { c0: v0, c1: v1, scale: ct.scale, slots: ct.slots, params_id: ct.params_id }
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
