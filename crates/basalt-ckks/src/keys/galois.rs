//! Relinearization and Galois (rotation, conjugation) keys: thin wrappers around a
//! key-switching key, full or seeded, that remember what they switch from.

use std::borrow::Cow;
use std::collections::BTreeMap;

use basalt_math::RnsPoly;

use super::identity::KeyId;
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
    /// The key set it belongs to.
    pub fn key_id(&self) -> KeyId {
        match self {
            KeyMaterial::Full(k) => k.key_id,
            KeyMaterial::Seeded(k) => k.key_id,
        }
    }
    /// The full form: itself, or the seeded key expanded (every `a_j` regenerated), so that
    /// key switching reads stored halves rather than regenerating them at every use.
    ///
    /// # Errors
    /// [`CkksError::WrongParams`] for a key of another set.
    pub fn expanded(self, params: &Parameters) -> Result<KeyMaterial> {
        match self {
            KeyMaterial::Full(k) => Ok(KeyMaterial::Full(k)),
            KeyMaterial::Seeded(k) => Ok(KeyMaterial::Full(k.expand(params)?)),
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
    /// The key set these keys belong to (`None` for no keys, or only shape-only ones).
    ///
    /// # Errors
    /// [`CkksError::KeyMismatch`] if two keys belong to different key sets.
    pub fn key_id(&self) -> Result<Option<KeyId>> {
        let mut id = KeyId::UNBOUND;
        let ids = self
            .relin
            .iter()
            .map(|r| (r.key.key_id(), "relinearization key"))
            .chain(self.galois.values().map(|g| (g.key.key_id(), "Galois key")));
        for (k, what) in ids {
            id = id.join(k, what)?;
        }
        Ok(id.is_bound().then_some(id))
    }

    /// The rotation steps (left, in `1..slots`) the Galois keys serve, for `slots` slots of
    /// `params` (the conjugation key is not one).
    pub fn rotations(&self, params: &Parameters) -> Vec<i64> {
        let ring = params.ring();
        let half = params.max_slots() as i64;
        (1..half)
            .filter(|&k| self.galois.contains_key(&ring.galois_element_for_rotation(k)))
            .collect()
    }

    /// Whether the conjugation key is present.
    pub fn has_conjugation(&self, params: &Parameters) -> bool {
        self.galois.contains_key(&params.ring().galois_element_conjugate())
    }

    /// The keys a program needs: the relinearization key, the rotation keys for `steps`
    /// (e.g. `LinearTransform::rotations`) and, if `conjugate`, the conjugation key; a server
    /// keeps only these.
    ///
    /// # Errors
    /// [`CkksError::MissingRotationKey`] / [`CkksError::MissingConjugationKey`] naming the first
    /// key asked for and absent.
    pub fn select(&self, params: &Parameters, steps: &[i64], conjugate: bool) -> Result<Self> {
        let ring = params.ring();
        let mut out = EvaluationKeys { relin: self.relin.clone(), galois: BTreeMap::new() };
        for &k in steps {
            let g = ring.galois_element_for_rotation(k);
            if g == 1 {
                continue; // a rotation by a multiple of the slot count needs no key
            }
            let key = self
                .galois
                .get(&g)
                .ok_or(CkksError::MissingRotationKey { rotation: k, galois: g })?;
            out.galois.insert(g, key.clone());
        }
        if conjugate {
            let g = ring.galois_element_conjugate();
            let key = self.galois.get(&g).ok_or(CkksError::MissingConjugationKey { galois: g })?;
            out.galois.insert(g, key.clone());
        }
        Ok(out)
    }

    /// Every key in full form (seeded keys expanded once here, not at every use).
    ///
    /// # Errors
    /// [`CkksError::WrongParams`] for a key of another set.
    pub fn expanded(self, params: &Parameters) -> Result<Self> {
        let relin = match self.relin {
            Some(r) => Some(RelinKey { key: r.key.expanded(params)? }),
            None => None,
        };
        let galois = self
            .galois
            .into_iter()
            .map(|(g, k)| Ok((g, GaloisKey { galois: g, key: k.key.expanded(params)? })))
            .collect::<Result<_>>()?;
        Ok(EvaluationKeys { relin, galois })
    }

    /// Bytes of key material held (seeded keys count their stored half).
    pub fn size_bytes(&self) -> usize {
        self.relin.iter().map(|r| r.key.size_bytes()).sum::<usize>()
            + self.galois.values().map(|g| g.key.size_bytes()).sum::<usize>()
    }

    pub fn with_relin(mut self, rlk: RelinKey) -> Self {
        self.relin = Some(rlk);
        self
    }
    pub fn with_galois(mut self, gk: GaloisKey) -> Self {
        self.galois.insert(gk.galois, gk);
        self
    }
}
