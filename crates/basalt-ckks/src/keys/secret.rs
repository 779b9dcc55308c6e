//! Secret keys: a ternary polynomial (dense or of Hamming weight h) drawn from a CSPRNG, kept in
//! the NTT domain over every prime of the set (`Q_L ∪ P`), since key generation for key
//! switching needs it in the extended basis.

//!
//! The key is erased from memory when dropped (`zeroize`), and it leaves the process only
//! through [`SecretKey::export_bytes`], a call whose name says what it does.

use std::sync::Arc;

use basalt_math::{RingContext, RnsPoly, sampler};
use zeroize::Zeroize;

use super::identity::KeyId;
use crate::params::{Parameters, SecretDistribution};
use crate::util::csprng;

/// The secret key `s`, with the [`KeyId`] of the key set it heads.
#[derive(Clone)]
pub struct SecretKey {
    pub(crate) poly: RnsPoly,
    pub(crate) params_id: u64,
    pub(crate) key_id: KeyId,
    /// The ring of its parameter set: exporting the key reads its coefficients back from the
    /// NTT domain without being handed the parameters.
    pub(crate) ring: Arc<RingContext>,
}

impl PartialEq for SecretKey {
    fn eq(&self, other: &SecretKey) -> bool {
        self.poly == other.poly && self.params_id == other.params_id && self.key_id == other.key_id
    }
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey {{ params_id: {:016x}, key_id: {}, .. }}", self.params_id, self.key_id)
    }
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.poly.data_mut().zeroize();
    }
}

impl SecretKey {
    /// A fresh secret with the parameter set's distribution, from the OS-seeded ChaCha20 CSPRNG.
    pub fn generate(params: &Parameters) -> SecretKey {
        let mut rng = csprng();
        let n = params.n();
        let coeffs = match params.secret() {
            SecretDistribution::DenseTernary => sampler::ternary_dense(n, &mut rng),
            SecretDistribution::Hamming { h } => sampler::ternary_hamming(n, h, &mut rng),
        };
        let sk = Self::from_coeffs(params, &coeffs);
        zeroize_coeffs(coeffs);
        sk
    }

    /// A fresh secret drawn from `dist` rather than the set's own distribution (the sparse
    /// ephemeral secret of bootstrapping's encapsulation), from the same CSPRNG.
    pub fn generate_with(params: &Parameters, dist: SecretDistribution) -> SecretKey {
        let mut rng = csprng();
        let n = params.n();
        let coeffs = match dist {
            SecretDistribution::DenseTernary => sampler::ternary_dense(n, &mut rng),
            SecretDistribution::Hamming { h } => sampler::ternary_hamming(n, h.min(n), &mut rng),
        };
        let sk = Self::from_coeffs(params, &coeffs);
        zeroize_coeffs(coeffs);
        sk
    }

    /// [`SecretKey::generate_with`] for a secret that belongs to the key set `owner` (an
    /// ephemeral secret of bootstrapping's encapsulation: the keys switching to and from it are
    /// part of that set and carry its id).
    pub fn generate_for(params: &Parameters, dist: SecretDistribution, owner: KeyId) -> SecretKey {
        let mut sk = Self::generate_with(params, dist);
        sk.key_id = owner;
        sk
    }

    /// The same secret, with the same identity, as a key of `to`, a parameter set over the same
    /// ring (bootstrapping's small encapsulation set).
    pub fn carried_to(&self, from: &Parameters, to: &Parameters) -> SecretKey {
        let coeffs = self.coefficients(from);
        let mut sk = Self::from_coeffs(to, &coeffs);
        zeroize_coeffs(coeffs);
        sk.key_id = self.key_id;
        sk
    }

    /// The ternary coefficients of `s` (centred lift of its first limb), to carry the same
    /// secret into another parameter set over the same ring.
    pub fn coefficients(&self, params: &Parameters) -> Vec<i64> {
        centred_coefficients(params.ring(), &self.poly)
    }

    /// The coefficients of `s` in its own ring (what [`SecretKey::export_bytes`] encodes).
    pub(crate) fn own_coefficients(&self) -> Vec<i64> {
        centred_coefficients(&self.ring, &self.poly)
    }

    /// The key with the given small coefficients (tests, reference computations), under a
    /// fresh [`KeyId`].
    pub fn from_coeffs(params: &Parameters, coeffs: &[i64]) -> SecretKey {
        let ring = params.ring();
        let mut poly = ring.from_i64(coeffs, params.max_level() + 1, params.k());
        ring.ntt_assign(&mut poly);
        SecretKey { poly, params_id: params.id(), key_id: KeyId::fresh(), ring: ring.clone() }
    }

    /// The identity of the key set this secret heads.
    pub fn key_id(&self) -> KeyId {
        self.key_id
    }

    /// The key polynomial (NTT domain, `Q_L ∪ P`).
    pub fn poly(&self) -> &RnsPoly {
        &self.poly
    }
    pub fn params_id(&self) -> u64 {
        self.params_id
    }
}

/// The centred lift of the first limb of `poly` (NTT domain, ring `ring`): the small
/// coefficients of a secret.
fn centred_coefficients(ring: &RingContext, poly: &RnsPoly) -> Vec<i64> {
    let mut low = poly.clone();
    low.truncate_q(1);
    low.drop_p();
    basalt_trace::record(|| ring.intt_assign(&mut low));
    let q0 = ring.q()[0].value();
    let out = low
        .limb(0)
        .iter()
        .map(|&x| if x > q0 / 2 { x as i64 - q0 as i64 } else { x as i64 })
        .collect();
    low.data_mut().zeroize();
    out
}

pub(crate) fn zeroize_coeffs(mut c: Vec<i64>) {
    c.zeroize();
}
