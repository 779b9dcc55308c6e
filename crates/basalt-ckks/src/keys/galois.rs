//! Relinearization and Galois (rotation, conjugation) keys: thin wrappers around a
//! key-switching key, full or seeded, that remember what they switch from.

use std::borrow::Cow;
use std::collections::BTreeMap;

use basalt_math::RnsPoly;

use super::key_switch_key::{KeyPart, KeySwitchKey, KeyTag, part_at};
use super::seeded::SeededKeySwitchKey;
use crate::error::{CkksError, Result};
use crate::params::Parameters;

/// Key material in either storage form.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyMaterial {
    Full(KeySwitchKey),
    Seeded(SeededKeySwitchKey),
}

impl KeyMaterial {
    pub fn tag(&self) -> KeyTag {
        match self {
            KeyMaterial::Full(k) => k.tag,
            KeyMaterial::Seeded(k) => k.tag,
        }
    }
    pub fn params_id(&self) -> u64 {
        match self {
            KeyMaterial::Full(k) => k.params_id,
            KeyMaterial::Seeded(k) => k.params_id,
        }
    }
    pub fn is_seeded(&self) -> bool {
        matches!(self, KeyMaterial::Seeded(_))
    }
    /// Digit pairs stored, over every part.
    pub fn digits(&self) -> usize {
        match self {
            KeyMaterial::Full(k) => k.digits(),
            KeyMaterial::Seeded(k) => k.digits(),
        }
    }
    /// The parts, one per gadget of the parameter set (`None`: not generated).
    pub fn parts(&self) -> &[Option<KeyPart>] {
        match self {
            KeyMaterial::Full(k) => &k.parts,
            KeyMaterial::Seeded(k) => &k.parts,
        }
    }
    /// Whether the key holds the part key switching at `level` reads.
    ///
    /// # Errors
    /// [`CkksError::KeyNotForLevel`] naming the levels it does serve;
    /// [`CkksError::LevelTooHigh`]; [`CkksError::WrongParams`] for a key of another set.
    pub fn check_level(&self, params: &Parameters, level: usize) -> Result<()> {
        if self.params_id() != params.id() {
            return Err(CkksError::WrongParams { expected: params.id(), found: self.params_id() });
        }
        part_at(params, self.parts(), level).map(|_| ())
    }
    /// True for shape-only (trace mode) key material.
    pub(crate) fn is_symbolic(&self) -> bool {
        self.parts().iter().flatten().any(|p| p.b.first().is_some_and(RnsPoly::is_symbolic))
    }
    /// `b_j` of part `g` over `Q_top ∪ P_g`.
    ///
    /// # Panics
    /// If the key lacks part `g` (callers check with [`KeyMaterial::check_level`] first).
    pub(crate) fn b(&self, g: usize, j: usize) -> &RnsPoly {
        &self.parts()[g].as_ref().expect("key part checked by the caller").b[j]
    }
    /// `a_j` of part `g`: the stored one (over `Q_top ∪ P_g`), or regenerated on `Q_l ∪ P_g`
    /// for a seeded key.
    pub(crate) fn a(
        &self,
        params: &Parameters,
        (g, j): (usize, usize),
        q_limbs: usize,
        symbolic: bool,
    ) -> Cow<'_, RnsPoly> {
        match self {
            KeyMaterial::Full(k) => {
                Cow::Borrowed(&k.parts[g].as_ref().expect("key part checked by the caller").a[j])
            }
            KeyMaterial::Seeded(k) => Cow::Owned(k.a_at(params, (g, j), q_limbs, symbolic)),
        }
    }
    /// Bytes of stored key material.
    pub fn size_bytes(&self) -> usize {
        match self {
            KeyMaterial::Full(k) => k.size_bytes(),
            KeyMaterial::Seeded(k) => k.size_bytes(),
        }
    }
}

/// Relinearization key: switches `s²` to `s`.
#[derive(Clone, Debug, PartialEq)]
pub struct RelinKey {
    pub key: KeyMaterial,
}

/// Galois key for `X → X^galois`: switches `s` to `φ_galois^{-1}(s)` (Lattigo's form), so a
/// rotation key-switches `c_1` and then permutes its two output polynomials by `φ_galois`.
#[derive(Clone, Debug, PartialEq)]
pub struct GaloisKey {
    pub galois: u64,
    pub key: KeyMaterial,
}

/// The evaluation keys an [`crate::eval::Evaluator`] holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvaluationKeys {
    pub relin: Option<RelinKey>,
    pub galois: BTreeMap<u64, GaloisKey>,
}

impl EvaluationKeys {
    pub fn with_relin(mut self, rlk: RelinKey) -> Self {
        self.relin = Some(rlk);
        self
    }
    pub fn with_galois(mut self, gk: GaloisKey) -> Self {
        self.galois.insert(gk.galois, gk);
        self
    }
}
