//! Plaintexts and ciphertexts.
//!
//! Both hold RNS polynomials over `Q_l` in the evaluation (NTT) domain, a scale Δ (f64, exact
//! up to f64 rounding, tracked through every operation as Lattigo does), the number of slots
//! they pack, and the id of their parameter set so that objects from different sets are never
//! mixed silently. A ciphertext `(c_0, c_1, …)` decrypts to `Σ c_i s^i` (Lattigo's convention:
//! a fresh encryption is `(−a·s + m + e, a)`).
//!
//! Either can be *symbolic* (shape only, see `basalt_math::RnsPoly::symbolic`): every
//! evaluator operation then records its kernels to the trace and skips the arithmetic.

use basalt_math::{Domain, RnsPoly};
use basalt_trace::ObjectId;

use crate::error::{CkksError, Result};
use crate::keys::KeyId;
use crate::params::Parameters;

/// An encoded message: one polynomial over `Q_l`, NTT domain.
#[derive(Clone, Debug, PartialEq)]
pub struct Plaintext {
    pub(crate) poly: RnsPoly,
    pub(crate) scale: f64,
    pub(crate) slots: usize,
    pub(crate) params_id: u64,
}

/// A CKKS ciphertext of degree `polys.len() − 1` (1 normally, 2 after a product without
/// relinearization).
#[derive(Clone, Debug, PartialEq)]
pub struct Ciphertext {
    pub(crate) polys: Vec<RnsPoly>,
    pub(crate) scale: f64,
    pub(crate) slots: usize,
    pub(crate) params_id: u64,
    /// The key set it is encrypted under ([`KeyId::UNBOUND`] for a trivial encryption).
    pub(crate) key_id: KeyId,
    /// Identity in the trace (`CtLoad`/`CtStore`); not part of the value.
    pub(crate) object: ObjectId,
}

/// An encoded message over the extended basis `Q_l ∪ P` (NTT domain): the plaintext operand of
/// products with [`crate::CiphertextQP`] (double hoisting, where baby-step rotations stay in
/// `Q_l ∪ P` and are multiplied there before one ModDown).
///
/// Its polynomial is the same small-integer polynomial as a [`Plaintext`]'s, reduced modulo the
/// `P` primes too — *not* multiplied by `P`: the ciphertext operand already carries the factor
/// `P`, which the ModDown removes.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaintextQP {
    pub(crate) poly: RnsPoly,
    pub(crate) scale: f64,
    pub(crate) slots: usize,
    pub(crate) params_id: u64,
}

/// Checks shared by the polynomial constructors: ring shape, reduced residues (via
/// `RingContext::check_poly`), NTT domain, `p_limbs` special limbs, a usable scale and slot count.
pub(crate) fn check_poly_operand(
    params: &Parameters,
    poly: &RnsPoly,
    p_limbs: usize,
    what: &'static str,
) -> Result<()> {
    let bad = |reason: String| CkksError::InvalidPolynomial { what, reason };
    params.ring().check_poly(poly).map_err(bad)?;
    if poly.q_limbs() > params.max_level() + 1 {
        return Err(bad(format!(
            "{} Q limbs exceed the {} of the chain",
            poly.q_limbs(),
            params.max_level() + 1
        )));
    }
    if poly.p_limbs() != p_limbs {
        return Err(bad(format!("{} P limbs, expected {p_limbs}", poly.p_limbs())));
    }
    if poly.domain() != Domain::Ntt {
        return Err(bad("polynomial must be in the NTT domain".into()));
    }
    Ok(())
}

pub(crate) fn check_scale_slots(params: &Parameters, scale: f64, slots: usize) -> Result<()> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(CkksError::BadScale(scale.log2()));
    }
    if slots == 0 || !slots.is_power_of_two() || slots > params.max_slots() {
        return Err(CkksError::BadSlots { slots, max: params.max_slots() });
    }
    Ok(())
}

fn check_level(params: &Parameters, level: usize) -> Result<()> {
    if level > params.max_level() {
        return Err(CkksError::LevelTooHigh { requested: level, max: params.max_level() });
    }
    Ok(())
}

impl Plaintext {
    /// A plaintext from a polynomial over `Q_l` (NTT domain), e.g. one rebuilt from a stored
    /// limb (OF-Limb) rather than encoded from slot values. Symbolic polynomials are accepted
    /// (trace mode).
    ///
    /// # Errors
    /// [`CkksError::InvalidPolynomial`] for a wrong degree, too many Q limbs, any P limb, the
    /// coefficient domain or a residue not reduced modulo its prime; [`CkksError::BadScale`]
    /// and [`CkksError::BadSlots`] as for encoding.
    pub fn from_poly(params: &Parameters, poly: RnsPoly, scale: f64, slots: usize) -> Result<Self> {
        check_poly_operand(params, &poly, 0, "plaintext")?;
        check_scale_slots(params, scale, slots)?;
        Ok(Plaintext { poly, scale, slots, params_id: params.id() })
    }
    /// The zero plaintext at `level` with the given scale and slots.
    pub fn zero(params: &Parameters, level: usize, scale: f64, slots: usize) -> Result<Self> {
        check_level(params, level)?;
        Ok(Plaintext {
            poly: RnsPoly::zero(params.n(), level + 1, 0, Domain::Ntt),
            scale,
            slots,
            params_id: params.id(),
        })
    }
    /// A shape-only plaintext for trace mode.
    pub fn symbolic(params: &Parameters, level: usize) -> Result<Self> {
        check_level(params, level)?;
        Ok(Plaintext {
            poly: RnsPoly::symbolic(params.n(), level + 1, 0, Domain::Ntt),
            scale: params.default_scale(),
            slots: params.max_slots(),
            params_id: params.id(),
        })
    }
    pub fn level(&self) -> usize {
        self.poly.q_limbs() - 1
    }
    pub fn scale(&self) -> f64 {
        self.scale
    }
    pub fn set_scale(&mut self, scale: f64) {
        self.scale = scale;
    }
    pub fn slots(&self) -> usize {
        self.slots
    }
    pub fn params_id(&self) -> u64 {
        self.params_id
    }
    pub fn poly(&self) -> &RnsPoly {
        &self.poly
    }
    pub fn is_symbolic(&self) -> bool {
        self.poly.is_symbolic()
    }
}

impl PlaintextQP {
    /// A `Q_l ∪ P` plaintext from a polynomial with `l+1` Q limbs and the `k_at(l)` P limbs of
    /// its level (NTT domain). Symbolic polynomials are accepted (trace mode).
    ///
    /// # Errors
    /// As [`Plaintext::from_poly`], with exactly `params.k_at(l)` P limbs required.
    pub fn from_poly(params: &Parameters, poly: RnsPoly, scale: f64, slots: usize) -> Result<Self> {
        let k = params.k_at(poly.q_limbs().clamp(1, params.max_level() + 1) - 1);
        check_poly_operand(params, &poly, k, "Q∪P plaintext")?;
        check_scale_slots(params, scale, slots)?;
        Ok(PlaintextQP { poly, scale, slots, params_id: params.id() })
    }
    /// A shape-only `Q_l ∪ P` plaintext for trace mode.
    ///
    /// # Errors
    /// [`CkksError::LevelTooHigh`].
    pub fn symbolic(params: &Parameters, level: usize) -> Result<Self> {
        check_level(params, level)?;
        Ok(PlaintextQP {
            poly: RnsPoly::symbolic(params.n(), level + 1, params.k_at(level), Domain::Ntt),
            scale: params.default_scale(),
            slots: params.max_slots(),
            params_id: params.id(),
        })
    }
    pub fn level(&self) -> usize {
        self.poly.q_limbs() - 1
    }
    pub fn scale(&self) -> f64 {
        self.scale
    }
    pub fn set_scale(&mut self, scale: f64) {
        self.scale = scale;
    }
    pub fn slots(&self) -> usize {
        self.slots
    }
    pub fn params_id(&self) -> u64 {
        self.params_id
    }
    pub fn poly(&self) -> &RnsPoly {
        &self.poly
    }
    pub fn is_symbolic(&self) -> bool {
        self.poly.is_symbolic()
    }
}

impl Ciphertext {
    /// The zero ciphertext (degree `degree`) at `level`.
    pub fn zero(params: &Parameters, degree: usize, level: usize, scale: f64) -> Result<Self> {
        check_level(params, level)?;
        Ok(Ciphertext {
            polys: (0..=degree)
                .map(|_| RnsPoly::zero(params.n(), level + 1, 0, Domain::Ntt))
                .collect(),
            scale,
            slots: params.max_slots(),
            params_id: params.id(),
            key_id: KeyId::UNBOUND,
            object: ObjectId::fresh(),
        })
    }
    /// A shape-only degree-1 ciphertext for trace mode: the same evaluator code records the
    /// kernels an operation would run, without computing.
    pub fn symbolic(params: &Parameters, level: usize) -> Result<Self> {
        check_level(params, level)?;
        Ok(Ciphertext {
            polys: (0..2)
                .map(|_| RnsPoly::symbolic(params.n(), level + 1, 0, Domain::Ntt))
                .collect(),
            scale: params.default_scale(),
            slots: params.max_slots(),
            params_id: params.id(),
            key_id: KeyId::UNBOUND,
            object: ObjectId::fresh(),
        })
    }
    /// A new object with `polys` and this ciphertext's scale, slots and parameter set: the
    /// result of an operation that keeps them (a fresh trace identity, see `objects.rs`).
    pub(crate) fn with_polys(&self, polys: Vec<RnsPoly>) -> Ciphertext {
        Ciphertext {
            polys,
            scale: self.scale,
            slots: self.slots,
            params_id: self.params_id,
            key_id: self.key_id,
            object: ObjectId::fresh(),
        }
    }
    /// Level: index of the top Q prime (limbs − 1).
    pub fn level(&self) -> usize {
        self.polys[0].q_limbs() - 1
    }
    pub fn degree(&self) -> usize {
        self.polys.len() - 1
    }
    pub fn scale(&self) -> f64 {
        self.scale
    }
    pub fn set_scale(&mut self, scale: f64) {
        self.scale = scale;
    }
    pub fn slots(&self) -> usize {
        self.slots
    }
    pub fn set_slots(&mut self, slots: usize) {
        self.slots = slots;
    }
    pub fn params_id(&self) -> u64 {
        self.params_id
    }
    /// The key set it is encrypted under.
    pub fn key_id(&self) -> KeyId {
        self.key_id
    }
    pub fn polys(&self) -> &[RnsPoly] {
        &self.polys
    }
    pub fn is_symbolic(&self) -> bool {
        self.polys[0].is_symbolic()
    }
    /// The same residues as a ciphertext of `to`, a parameter set over the same ring whose
    /// first `level + 1` Q primes equal this one's (how bootstrapping hands a level-0
    /// ciphertext to the small `Q_0·P_0` set of its sparse-secret encapsulation and back).
    ///
    /// # Errors
    /// [`CkksError::WrongParams`] if the ring degree or any of those primes differ, or the
    /// ciphertext's level does not exist in `to`.
    pub fn reinterpret(&self, from: &Parameters, to: &Parameters) -> Result<Ciphertext> {
        let l = self.level();
        if from.id() != self.params_id
            || from.n() != to.n()
            || l > to.max_level()
            || from.q()[..=l] != to.q()[..=l]
        {
            return Err(CkksError::WrongParams { expected: to.id(), found: self.params_id });
        }
        let mut out = self.clone();
        out.params_id = to.id();
        out.slots = self.slots.min(to.max_slots());
        Ok(out)
    }
    /// Drop Q limbs down to `level` (no rescale, the scale is unchanged).
    pub fn drop_to_level(&mut self, level: usize) -> Result<()> {
        if level > self.level() {
            return Err(CkksError::LevelTooHigh { requested: level, max: self.level() });
        }
        for p in &mut self.polys {
            p.truncate_q(level + 1);
        }
        Ok(())
    }
}

impl Plaintext {
    /// Drop Q limbs down to `level`.
    pub fn drop_to_level(&mut self, level: usize) -> Result<()> {
        if level > self.level() {
            return Err(CkksError::LevelTooHigh { requested: level, max: self.level() });
        }
        self.poly.truncate_q(level + 1);
        Ok(())
    }
}
