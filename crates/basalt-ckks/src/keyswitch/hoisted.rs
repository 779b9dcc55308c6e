//! Hoisted rotations: one Decompose + ModUp shared by many rotations of the same ciphertext,
//! and double hoisting (`_lazy` results left in `Q_l ∪ P`, one ModDown for a whole sum).
//!
//! # Algorithm
//! For `ct = (c_0, c_1)` at level `l` and Galois elements `g_1 … g_r`:
//! 1. `D = decompose(c_1)` once (INTT, ModUp of every digit);
//! 2. per rotation `g`: inner product of the digits with the Galois key of `g`, which switches
//!    `s` to `φ_g^{-1}(s)` ([`crate::keys::GaloisKey`]) → `(v_0, v_1)` over `Q_l ∪ P`;
//! 3. `_lazy`: `(v_0 + P·c_0, v_1)` permuted by `φ_g`, left in `Q_l ∪ P` — sums of these need a
//!    single ModDown at the end ([`CiphertextQP::mod_down`]); otherwise ModDown now, add `c_0`,
//!    and permute the pair over `Q_l`.
//!
//! The automorphism comes *after* the key switch (Lattigo's `AutomorphismHoisted[Lazy]`): since
//! `(v_0 + c_0) + v_1·φ_g^{-1}(s) ≈ c_0 + c_1·s`, applying `φ_g` gives a ciphertext of
//! `φ_g(m)` under `s`. It permutes the 2 output polynomials (`2(l+1)` limbs, `2(l+1+k)` lazy)
//! instead of the `β` extended digits and `c_0` (`β(l+1+k) + l+1` limbs), which is fewer for
//! every `β ≥ 2` and, not lazy, for every `β`. A single-hoisted rotation decomposes the same
//! `c_1` as a plain rotation does, so the two are bit-identical.
//!
//! # Source
//! Halevi & Shoup, "Faster homomorphic linear transformations in HElib", CRYPTO 2018 (hoisting);
//! Bossuat et al., EUROCRYPT 2021 §3 (double hoisting); Lattigo `AutomorphismHoistedLazy`
//! (automorphism after the gadget product).
//!
//! # Cost
//! Once: INTT `l+1`, ModUp as in [`super::cost`]. Per rotation: inner product `2β(l+1+k)`
//! MulAcc, automorphisms of `2(l+1+k)` limbs (lazy) or, after the ModDown (`2k` INTT +
//! `2(l+1)` NTT), of `2(l+1)` limbs.

use basalt_math::{RnsPoly, rns};
use basalt_trace::{ObjectId, operation, region};

use super::decompose::HoistedDecomp;
use super::hybrid::{inner_product, inner_product_then};
use crate::ciphertext::{Ciphertext, PlaintextQP, check_poly_operand, check_scale_slots};
use crate::error::{CkksError, Result};
use crate::keys::{KeyId, KeyMaterial};
use crate::objects::{load, store, store_in_place};
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
    /// The key set it is under (see [`crate::KeyId`]).
    pub(crate) key_id: KeyId,
    /// Identity in the trace (`CtLoad`/`CtStore`); not part of the value.
    pub(crate) object: ObjectId,
}

impl CiphertextQP {
    /// A `Q_l ∪ P` ciphertext from its two polynomials (`l+1` Q limbs and `k_at(l)` P limbs each,
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
        let k = params.k_at(c0.q_limbs().clamp(1, params.max_level() + 1) - 1);
        check_poly_operand(params, &c0, k, "Q∪P ciphertext")?;
        check_poly_operand(params, &c1, k, "Q∪P ciphertext")?;
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
        Ok(CiphertextQP::result(c0, c1, (scale, slots, params.id(), KeyId::UNBOUND)))
    }
    /// An operation's result: `(c_0, c_1)` with `(scale, slots, params_id, key_id)` and a fresh
    /// trace identity.
    pub(crate) fn result(
        c0: RnsPoly,
        c1: RnsPoly,
        (scale, slots, params_id, key_id): (f64, usize, u64, KeyId),
    ) -> Self {
        CiphertextQP { c0, c1, scale, slots, params_id, key_id, object: ObjectId::fresh() }
    }
    /// The key set it is under.
    pub fn key_id(&self) -> KeyId {
        self.key_id
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
        let op = operation();
        load(&op, self);
        load(&op, other);
        let ring = params.ring();
        ring.add_assign(&mut self.c0, &other.c0);
        ring.add_assign(&mut self.c1, &other.c1);
        store_in_place(&op, self);
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
        self.key_id = self.key_id.join(other.key_id, "the second operand")?;
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
        let op = operation();
        load(&op, self);
        let ring = params.ring();
        store(
            &op,
            Ciphertext {
                polys: vec![rns::mod_down(ring, &self.c0), rns::mod_down(ring, &self.c1)],
                scale: self.scale,
                slots: self.slots,
                params_id: self.params_id,
                key_id: self.key_id,
                object: ObjectId::fresh(),
            },
        )
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
    let k = params.k_at(ct.level());
    let p = crate::util::restrict(&pt.poly, l1, k);
    basalt_trace::emit(basalt_trace::Kernel::PlainLoad {
        n: params.n() as u32,
        limbs: (l1 + k) as u32,
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
/// product of its digits with the Galois key (`≈ P·c_1·s` under `φ_g^{-1}(s)`), add `a_0` in
/// `Q_l ∪ P` and permute the pair by `φ_g`: no second ModDown, no lift of `c_0`.
///
/// # Cost
/// ModDown of one polynomial (`k` INTT, `n·k(l+1)` BConv, `l+1` NTT), a decomposition (as in
/// [`super::cost`]), `2β(l+1+k)` MulAcc, automorphisms of `2(l+1+k)` limbs.
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
    let (mut v0, v1) = key_switch(params, &decomp, key);
    ring.add_assign(&mut v0, &ct.c0);
    let (c0, c1) = permute(params, &v0, &v1, galois);
    CiphertextQP::result(c0, c1, (ct.scale, ct.slots, ct.params_id, ct.key_id))
}

/// The inner product of `decomp` with a Galois key (no automorphism yet).
fn key_switch(
    params: &Parameters,
    decomp: &HoistedDecomp,
    key: &KeyMaterial,
) -> (RnsPoly, RnsPoly) {
    let _r = region("KeySwitch");
    inner_product(params, decomp, key)
}

/// `(φ_g(x_0), φ_g(x_1))`: the automorphism applied once to a rotation's two output
/// polynomials.
fn permute(params: &Parameters, x0: &RnsPoly, x1: &RnsPoly, galois: u64) -> (RnsPoly, RnsPoly) {
    let _r = region("Automorph");
    let ring = params.ring();
    (ring.automorphism(x0, galois), ring.automorphism(x1, galois))
}

/// The trace of `lift_times_p` of `c_0`, the addition to `v_0` and [`permute`], for the fused
/// form of [`automorphism_hoisted_lazy`] that computed them inside the inner product.
fn report_lift_add_permute(params: &Parameters, v0: &RnsPoly, v1: &RnsPoly, galois: u64) {
    use basalt_trace::{ElemOp, Kernel, emit};
    let (n, l1) = (params.n() as u32, v0.q_limbs() as u32);
    emit(Kernel::Elem { n, limbs: l1, op: ElemOp::MulScalar });
    emit(Kernel::Elem { n, limbs: v0.limbs() as u32, op: ElemOp::Add });
    let _r = region("Automorph");
    params.ring().report_automorphism(v0, galois);
    params.ring().report_automorphism(v1, galois);
}

/// `P·ct` over `Q_l ∪ P` (the lazy form of the identity rotation); `p_mod_q` of the level's `P`.
pub fn lift_lazy(params: &Parameters, ct: &Ciphertext, p_mod_q: &[u64]) -> CiphertextQP {
    let ring = params.ring();
    let k = params.k_at(ct.level());
    let (c0, c1) = (
        lift_times_p(ring, &ct.polys[0], k, p_mod_q),
        lift_times_p(ring, &ct.polys[1], k, p_mod_q),
    );
    CiphertextQP::result(c0, c1, (ct.scale, ct.slots, ct.params_id, ct.key_id))
}

/// Lazy rotation of `ct` by Galois element `galois` reusing `decomp = decompose(c_1)`;
/// `p_mod_q` of the level's `P`.
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
    let meta = (ct.scale, ct.slots, ct.params_id, ct.key_id);
    let k = params.k_at(ct.level());
    let c0 = &ct.polys[0];
    // Fused where the inner product runs limb by limb: `+ P·c_0` and the permutation are
    // applied to each pair of limbs as it is produced (same values, same trace).
    let perm =
        (!c0.is_symbolic()).then(|| ring.galois_permutation(galois % (2 * params.n() as u64)));
    let l1 = c0.q_limbs();
    let post = |i: usize, o0: &mut [u64], o1: &mut [u64]| {
        let perm = perm.as_deref().expect("called on real data only");
        if i < l1 {
            let m = ring.q()[i];
            let (w, ws) = (p_mod_q[i], m.shoup(p_mod_q[i]));
            let src = c0.limb(i);
            o0.iter_mut().zip(src).for_each(|(o, &x)| *o = m.add(*o, m.mul_shoup(x, w, ws)));
        }
        basalt_math::fused::permute_in_place(o0, perm);
        basalt_math::fused::permute_in_place(o1, perm);
    };
    let ((mut v0, v1), fused) = {
        let _r = region("KeySwitch");
        inner_product_then(params, decomp, key, Some(&post))
    };
    if fused {
        report_lift_add_permute(params, &v0, &v1, galois);
        return CiphertextQP::result(v0, v1, meta);
    }
    let pc0 = lift_times_p(ring, c0, k, p_mod_q);
    ring.add_assign(&mut v0, &pc0);
    let (c0, c1) = permute(params, &v0, &v1, galois);
    CiphertextQP::result(c0, c1, meta)
}

/// Non-lazy hoisted rotation: ModDown right away, add `c_0`, permute the pair in `Q_l`.
pub fn automorphism_hoisted(
    params: &Parameters,
    ct: &Ciphertext,
    decomp: &HoistedDecomp,
    galois: u64,
    key: &KeyMaterial,
) -> Ciphertext {
    let _r = region("Rotate");
    let ring = params.ring();
    let (v0, v1) = key_switch(params, decomp, key);
    // ModDown, the addition of `c_0` and the permutation in one pass per limb
    // (`rns::mod_down_automorphism`); the trace is that of the separate steps.
    let (c0, c1) = {
        let _r = region("KeySwitch");
        (
            rns::mod_down_automorphism(ring, &v0, Some(&ct.polys[0]), galois),
            rns::mod_down_automorphism(ring, &v1, None, galois),
        )
    };
    basalt_trace::emit(basalt_trace::Kernel::Elem {
        n: c0.n() as u32,
        limbs: c0.limbs() as u32,
        op: basalt_trace::ElemOp::Add,
    });
    {
        let _r = region("Automorph");
        ring.report_automorphism(&c0, galois);
        ring.report_automorphism(&c1, galois);
    }
    ct.with_polys(vec![c0, c1])
}
