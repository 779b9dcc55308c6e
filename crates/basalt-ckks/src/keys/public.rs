//! Public key: an encryption of zero `(−a·s + e, a)` over `Q_L`.

use basalt_math::sampler::{self, Xof};

use super::secret::SecretKey;
use crate::params::Parameters;
use crate::util::{csprng, restrict};
use basalt_math::RnsPoly;

/// The public key `(b, a) = (−a·s + e, a)`, NTT domain over `Q_L`.
#[derive(Clone, Debug, PartialEq)]
pub struct PublicKey {
    pub(crate) b: RnsPoly,
    pub(crate) a: RnsPoly,
    pub(crate) params_id: u64,
    pub(crate) key_id: super::KeyId,
}

impl PublicKey {
    pub fn generate(params: &Parameters, sk: &SecretKey) -> PublicKey {
        let ring = params.ring();
        let l1 = params.max_level() + 1;
        let mut xof = Xof::new(sampler::fresh_seed(), b"basalt-ckks/pk-a");
        let a = sampler::uniform_ntt(ring, &mut xof, l1, 0);
        let mut rng = csprng();
        let e = sampler::gaussian(params.n(), params.sigma(), &mut rng);
        let mut b = ring.from_i64(&e, l1, 0);
        ring.ntt_assign(&mut b);
        let mut as_ = a.clone();
        ring.mul_assign(&mut as_, &restrict(&sk.poly, l1, 0));
        ring.sub_assign(&mut b, &as_);
        PublicKey { b, a, params_id: params.id(), key_id: sk.key_id }
    }
    pub fn params_id(&self) -> u64 {
        self.params_id
    }
    /// The key set of the secret it encrypts for.
    pub fn key_id(&self) -> super::KeyId {
        self.key_id
    }
}
