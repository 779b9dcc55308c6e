//! Secret keys: a ternary polynomial (dense or of Hamming weight h) drawn from a CSPRNG, kept in
//! the NTT domain over every prime of the set (`Q_L ∪ P`), since key generation for key
//! switching needs it in the extended basis.

use basalt_math::{RnsPoly, sampler};

use crate::params::{Parameters, SecretDistribution};
use crate::util::csprng;

/// The secret key `s`.
#[derive(Clone, PartialEq)]
pub struct SecretKey {
    pub(crate) poly: RnsPoly,
    pub(crate) params_id: u64,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey {{ params_id: {:016x}, .. }}", self.params_id)
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
        Self::from_coeffs(params, &coeffs)
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
        Self::from_coeffs(params, &coeffs)
    }

    /// The ternary coefficients of `s` (centred lift of its first limb), to carry the same
    /// secret into another parameter set over the same ring.
    pub fn coefficients(&self, params: &Parameters) -> Vec<i64> {
        let ring = params.ring();
        let mut low = self.poly.clone();
        low.truncate_q(1);
        low.drop_p();
        basalt_trace::record(|| ring.intt_assign(&mut low));
        let q0 = params.q()[0];
        low.limb(0)
            .iter()
            .map(|&x| if x > q0 / 2 { x as i64 - q0 as i64 } else { x as i64 })
            .collect()
    }

    /// The key with the given small coefficients (tests, reference computations).
    pub fn from_coeffs(params: &Parameters, coeffs: &[i64]) -> SecretKey {
        let ring = params.ring();
        let mut poly = ring.from_i64(coeffs, params.max_level() + 1, params.k());
        ring.ntt_assign(&mut poly);
        SecretKey { poly, params_id: params.id() }
    }

    /// The key polynomial (NTT domain, `Q_L ∪ P`).
    pub fn poly(&self) -> &RnsPoly {
        &self.poly
    }
    pub fn params_id(&self) -> u64 {
        self.params_id
    }
}
