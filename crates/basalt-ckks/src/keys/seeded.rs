//! Seeded key-switching keys (CraterLake's KSHGen, HElib's key compression).
//!
//! Only the seed and the `b_j` halves are stored; every `a_j` limb is regenerated from the seed
//! when the key is used (a `Kernel::KeyGen` event of `l + 1 + |P_l|` limbs per digit at level
//! `l`), which halves key storage and key traffic. Expanding gives, bit for bit, the full key
//! that was generated with the same seed.

use basalt_math::RnsPoly;
use basalt_trace::{Kernel, emit};

use super::key_switch_key::{KeyPart, KeySwitchKey, KeyTag, sample_a};
use crate::error::{CkksError, Result};
use crate::params::Parameters;

/// A key-switching key stored as seed + `b` halves (its parts' `a` are empty).
#[derive(Clone, Debug, PartialEq)]
pub struct SeededKeySwitchKey {
    pub(crate) parts: Vec<Option<KeyPart>>,
    pub(crate) seed: [u8; 32],
    pub(crate) tag: KeyTag,
    pub(crate) params_id: u64,
    pub(crate) key_id: super::KeyId,
}

impl KeySwitchKey {
    /// Drop the uniform halves, keeping the seed.
    pub fn to_seeded(&self) -> SeededKeySwitchKey {
        let parts = self
            .parts
            .iter()
            .map(|p| p.as_ref().map(|p| KeyPart { b: p.b.clone(), a: Vec::new() }))
            .collect();
        SeededKeySwitchKey {
            parts,
            seed: self.seed,
            tag: self.tag,
            params_id: self.params_id,
            key_id: self.key_id,
        }
    }
}

impl SeededKeySwitchKey {
    /// Regenerate every `a_j` and return the full key.
    ///
    /// # Errors
    /// [`CkksError::WrongParams`] if `params` is not the key's parameter set.
    pub fn expand(&self, params: &Parameters) -> Result<KeySwitchKey> {
        if params.id() != self.params_id {
            return Err(CkksError::WrongParams { expected: params.id(), found: self.params_id });
        }
        let parts = self
            .parts
            .iter()
            .enumerate()
            .map(|(g, part)| {
                part.as_ref().map(|p| {
                    let l1 = params.gadgets()[g].top_level + 1;
                    let a =
                        (0..p.b.len()).map(|j| sample_a(params, self.seed, (g, j), l1)).collect();
                    KeyPart { b: p.b.clone(), a }
                })
            })
            .collect();
        Ok(KeySwitchKey {
            parts,
            seed: self.seed,
            tag: self.tag,
            params_id: self.params_id,
            key_id: self.key_id,
        })
    }

    /// `a_j` of gadget `g` on `Q_{q_limbs−1} ∪ P_g`, regenerated (emits `Kernel::KeyGen`).
    /// Shape only when `symbolic`.
    pub(crate) fn a_at(
        &self,
        params: &Parameters,
        (g, j): (usize, usize),
        q_limbs: usize,
        symbolic: bool,
    ) -> RnsPoly {
        let k = params.gadgets()[g].p_limbs;
        emit(Kernel::KeyGen { n: params.n() as u32, limbs: (q_limbs + k) as u32 });
        if symbolic {
            return RnsPoly::symbolic(params.n(), q_limbs, k, basalt_math::Domain::Ntt);
        }
        sample_a(params, self.seed, (g, j), q_limbs)
    }

    /// Digit pairs stored, over every part.
    pub fn digits(&self) -> usize {
        self.parts.iter().flatten().map(KeyPart::digits).sum()
    }
    /// The parts, one per gadget of the parameter set (`None`: not generated).
    pub fn parts(&self) -> &[Option<KeyPart>] {
        &self.parts
    }
    pub fn tag(&self) -> KeyTag {
        self.tag
    }
    pub fn seed(&self) -> [u8; 32] {
        self.seed
    }
    pub fn params_id(&self) -> u64 {
        self.params_id
    }
    pub fn key_id(&self) -> super::KeyId {
        self.key_id
    }
    /// Bytes of stored key material (the `b` halves only).
    pub fn size_bytes(&self) -> usize {
        self.parts.iter().flatten().flat_map(|p| &p.b).map(|p| p.data().len() * 8).sum()
    }
}
