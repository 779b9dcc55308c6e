//! Relinearization and Galois (rotation, conjugation) keys: thin wrappers around a
//! key-switching key, full or seeded, that remember what they switch from.

use std::borrow::Cow;
use std::collections::BTreeMap;

use basalt_math::RnsPoly;

use super::key_switch_key::{KeySwitchKey, KeyTag};
use super::seeded::SeededKeySwitchKey;
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
    pub fn digits(&self) -> usize {
        match self {
            KeyMaterial::Full(k) => k.b.len(),
            KeyMaterial::Seeded(k) => k.b.len(),
        }
    }
    /// `b_j` over `Q_L ∪ P`.
    pub(crate) fn b(&self, j: usize) -> &RnsPoly {
        match self {
            KeyMaterial::Full(k) => &k.b[j],
            KeyMaterial::Seeded(k) => &k.b[j],
        }
    }
    /// `a_j`: the stored one (over `Q_L ∪ P`), or regenerated on `Q_l ∪ P` for a seeded key.
    pub(crate) fn a(
        &self,
        params: &Parameters,
        j: usize,
        q_limbs: usize,
        symbolic: bool,
    ) -> Cow<'_, RnsPoly> {
        match self {
            KeyMaterial::Full(k) => Cow::Borrowed(&k.a[j]),
            KeyMaterial::Seeded(k) => Cow::Owned(k.a_at(params, j, q_limbs, symbolic)),
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
