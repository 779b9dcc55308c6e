//! The evaluator: homomorphic operations on ciphertexts of one parameter set.
//!
//! [`Evaluator`] holds the parameters, the evaluation keys (relinearization and Galois keys,
//! full or seeded) and the key-switching variant. Every operation validates its operands
//! (parameter set, levels, scales, degree, real vs symbolic) and returns a [`CkksError`]
//! naming the problem; none panics on user input. Operations are split by concern:
//! [`arith`] (add/sub/negate/plaintext and constant products), [`mul`] (tensor and
//! relinearization), [`rescale`] (rescale, level drop) and [`rotate`] (rotations, conjugation,
//! hoisting); [`batch`] runs many independent ciphertexts one per task (throughput mode).
//!
//! An [`Evaluator`] is `Send + Sync` and every operation takes `&self`: one evaluator (and one
//! copy of its keys) serves any number of threads at once.

pub mod arith;
pub mod batch;
pub mod fused;
pub mod lazy;
pub mod mul;
pub mod raise;
pub mod rescale;
pub mod rotate;

use basalt_math::RnsPoly;

use crate::ciphertext::{Ciphertext, Plaintext};
use crate::encoder::Encoder;
use crate::error::{CkksError, Result};
use crate::keys::{EvaluationKeys, KeyId, KeyMaterial};
use crate::keyswitch::{self, KsVariant};
use crate::params::Parameters;

/// Relative tolerance under which two scales count as equal.
const SCALE_TOL: f64 = 1e-9;

/// Homomorphic evaluator for one parameter set.
#[derive(Clone, Debug)]
pub struct Evaluator {
    pub(crate) params: Parameters,
    pub(crate) keys: EvaluationKeys,
    pub(crate) variant: KsVariant,
    pub(crate) block: usize,
    /// `P_g mod q_i` per gadget `g` of the parameter set.
    pub(crate) p_mod_q: Vec<Vec<u64>>,
    pub(crate) encoder: Encoder,
    /// Keys from `KeyGenerator::gen_symbolic_evaluation_keys`: trace mode only.
    pub(crate) symbolic_keys: bool,
    /// The key set of its keys ([`KeyId::UNBOUND`] without keys): ciphertexts under another
    /// one are refused by every operation.
    pub(crate) key_id: KeyId,
}

impl Evaluator {
    /// An evaluator with `keys`.
    ///
    /// # Errors
    /// [`CkksError::WrongParams`] if a key belongs to another parameter set;
    /// [`CkksError::KeyMismatch`] if two keys belong to different key sets.
    pub fn new(params: &Parameters, keys: EvaluationKeys) -> Result<Evaluator> {
        let key_id = keys.key_id()?.unwrap_or(KeyId::UNBOUND);
        let check = |id: u64| {
            if id != params.id() {
                Err(CkksError::WrongParams { expected: params.id(), found: id })
            } else {
                Ok(())
            }
        };
        if let Some(r) = &keys.relin {
            check(r.key.params_id())?;
        }
        for g in keys.galois.values() {
            check(g.key.params_id())?;
        }
        let symbolic = |k: &crate::keys::KeyMaterial| k.is_symbolic();
        let flags: Vec<bool> = keys
            .relin
            .iter()
            .map(|r| symbolic(&r.key))
            .chain(keys.galois.values().map(|g| symbolic(&g.key)))
            .collect();
        if flags.iter().any(|&f| f) && !flags.iter().all(|&f| f) {
            return Err(CkksError::SymbolicMix);
        }
        Ok(Evaluator {
            key_id,
            symbolic_keys: flags.first().copied().unwrap_or(false),
            params: params.clone(),
            keys,
            variant: KsVariant::Hybrid,
            block: 4,
            p_mod_q: params
                .gadgets()
                .iter()
                .map(|g| crate::keys::key_switch_key::p_mod_q(params, g.p_limbs))
                .collect(),
            encoder: Encoder::new(params),
        })
    }

    /// Use the given key-switching datapath (`block`: extension limbs per block for
    /// [`KsVariant::Reordered`]).
    pub fn with_variant(mut self, variant: KsVariant, block: usize) -> Self {
        self.variant = variant;
        self.block = block.max(1);
        self
    }

    pub fn params(&self) -> &Parameters {
        &self.params
    }
    pub fn variant(&self) -> KsVariant {
        self.variant
    }
    pub fn keys(&self) -> &EvaluationKeys {
        &self.keys
    }
    /// The key set of its evaluation keys ([`KeyId::UNBOUND`] if it holds none).
    pub fn key_id(&self) -> KeyId {
        self.key_id
    }

    /// Key switching of `d` with the evaluator's variant.
    ///
    /// # Panics
    /// If `key` lacks the part of `d`'s level (check with [`KeyMaterial::check_level`]; the
    /// evaluator's operations do and return [`CkksError::KeyNotForLevel`]).
    pub fn keyswitch(&self, d: &RnsPoly, key: &KeyMaterial) -> (RnsPoly, RnsPoly) {
        match self.variant {
            KsVariant::Hybrid => keyswitch::keyswitch(&self.params, d, key),
            KsVariant::Reordered => {
                keyswitch::keyswitch_reordered(&self.params, d, key, self.block)
            }
        }
    }

    /// Key switching of `d` with the evaluator's variant, left in `Q_l ∪ P` (no ModDown).
    pub(crate) fn keyswitch_lazy(&self, d: &RnsPoly, key: &KeyMaterial) -> (RnsPoly, RnsPoly) {
        match self.variant {
            KsVariant::Hybrid => keyswitch::keyswitch_lazy(&self.params, d, key),
            KsVariant::Reordered => {
                keyswitch::reordered::keyswitch_reordered_lazy(&self.params, d, key, self.block)
            }
        }
    }

    /// Key switching of `d` plus `adds[i]` (when given) on result `i`, the additions done in
    /// ModDown's last pass: no copy of the addend, no separate pass. Reports the same trace as
    /// [`Evaluator::keyswitch`] followed by `add_assign` of each addend.
    pub(crate) fn keyswitch_add(
        &self,
        d: &RnsPoly,
        key: &KeyMaterial,
        adds: [Option<&RnsPoly>; 2],
    ) -> (RnsPoly, RnsPoly) {
        let ring = self.params.ring();
        let out = {
            let _r = basalt_trace::region("KeySwitch");
            let (v0, v1) = self.keyswitch_lazy(d, key);
            let down = |v: &RnsPoly, add: Option<&RnsPoly>| match add {
                Some(c) => basalt_math::rns::mod_down_add(ring, v, c),
                None => basalt_math::rns::mod_down(ring, v),
            };
            (down(&v0, adds[0]), down(&v1, adds[1]))
        };
        for c in adds.iter().flatten() {
            basalt_trace::emit(basalt_trace::Kernel::Elem {
                n: c.n() as u32,
                limbs: c.limbs() as u32,
                op: basalt_trace::ElemOp::Add,
            });
        }
        out
    }

    /// `(φ_g(u_0 + add), φ_g(u_1))` for the key switch `(u_0, u_1)` of `d`: a rotation's key
    /// switch and automorphism, the addition and the permutation done in ModDown's last pass
    /// ([`basalt_math::rns::mod_down_automorphism`]). Reports the same trace as
    /// [`Evaluator::keyswitch_add`] followed by the two automorphisms in an `Automorph` region.
    pub(crate) fn keyswitch_add_automorphism(
        &self,
        d: &RnsPoly,
        key: &KeyMaterial,
        add: &RnsPoly,
        galois: u64,
    ) -> (RnsPoly, RnsPoly) {
        let ring = self.params.ring();
        let (c0, c1) = {
            let _r = basalt_trace::region("KeySwitch");
            let (v0, v1) = self.keyswitch_lazy(d, key);
            (
                basalt_math::rns::mod_down_automorphism(ring, &v0, Some(add), galois),
                basalt_math::rns::mod_down_automorphism(ring, &v1, None, galois),
            )
        };
        basalt_trace::emit(basalt_trace::Kernel::Elem {
            n: add.n() as u32,
            limbs: add.limbs() as u32,
            op: basalt_trace::ElemOp::Add,
        });
        let _r = basalt_trace::region("Automorph");
        ring.report_automorphism(&c0, galois);
        ring.report_automorphism(&c1, galois);
        (c0, c1)
    }

    pub(crate) fn check_ct(&self, ct: &Ciphertext) -> Result<()> {
        if ct.params_id != self.params.id() {
            return Err(CkksError::WrongParams { expected: self.params.id(), found: ct.params_id });
        }
        if self.symbolic_keys && !ct.is_symbolic() {
            return Err(CkksError::SymbolicMix);
        }
        self.check_key_id(ct.key_id)
    }

    /// A ciphertext's key set against the evaluation keys'.
    pub(crate) fn check_key_id(&self, id: KeyId) -> Result<()> {
        self.key_id.join(id, "the ciphertext").map(|_| ())
    }

    pub(crate) fn check_pt(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<()> {
        self.check_plain_operand(
            (pt.params_id, pt.is_symbolic(), pt.level()),
            (ct.is_symbolic(), ct.level()),
        )
    }

    /// A plaintext operand `(params id, symbolic, level)` against a ciphertext's
    /// `(symbolic, level)`: same parameters, same kind, and at least the ciphertext's level (its
    /// extra limbs are ignored). Shared by the `Q` and `Q ∪ P` plaintext products.
    pub(crate) fn check_plain_operand(
        &self,
        (pt_id, pt_symbolic, pt_level): (u64, bool, usize),
        (ct_symbolic, ct_level): (bool, usize),
    ) -> Result<()> {
        if pt_id != self.params.id() {
            return Err(CkksError::WrongParams { expected: self.params.id(), found: pt_id });
        }
        if ct_symbolic != pt_symbolic {
            return Err(CkksError::SymbolicMix);
        }
        if pt_level < ct_level {
            return Err(CkksError::LevelMismatch { left: ct_level, right: pt_level });
        }
        Ok(())
    }

    /// A `Q ∪ P` plaintext against a `Q ∪ P` ciphertext at `ct_level`: as
    /// [`Evaluator::check_plain_operand`], and at least the special primes of the ciphertext's
    /// level (with `key_switch_bands` a plaintext encoded at a level of a larger `α` has fewer).
    pub(crate) fn check_plain_qp(
        &self,
        pt: &crate::PlaintextQP,
        (ct_symbolic, ct_level): (bool, usize),
    ) -> Result<()> {
        self.check_plain_operand(
            (pt.params_id, pt.is_symbolic(), pt.level()),
            (ct_symbolic, ct_level),
        )?;
        let need = self.params.k_at(ct_level);
        if pt.poly.p_limbs() < need {
            return Err(CkksError::InvalidPolynomial {
                what: "Q∪P plaintext",
                reason: format!(
                    "{} P limbs, level {ct_level} needs {need}: encode it at that level",
                    pt.poly.p_limbs()
                ),
            });
        }
        Ok(())
    }

    pub(crate) fn check_pair(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        same_scale: bool,
    ) -> Result<()> {
        self.check_ct(a)?;
        self.check_ct(b)?;
        if a.is_symbolic() != b.is_symbolic() {
            return Err(CkksError::SymbolicMix);
        }
        a.key_id.join(b.key_id, "the second operand")?;
        if a.level() != b.level() {
            return Err(CkksError::LevelMismatch { left: a.level(), right: b.level() });
        }
        if same_scale && !scales_match(a.scale, b.scale) {
            return Err(CkksError::ScaleMismatch { left: a.scale.log2(), right: b.scale.log2() });
        }
        Ok(())
    }
}

pub(crate) fn scales_match(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() <= SCALE_TOL
}
