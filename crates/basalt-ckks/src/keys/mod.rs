//! Keys: secret, public, key-switching (full and seeded), relinearization and Galois keys, and
//! the [`KeyGenerator`] that makes them.

pub mod galois;
pub mod identity;
pub mod key_switch_key;
pub mod public;
pub mod secret;
pub mod seeded;

pub use galois::{EvaluationKeys, GaloisKey, KeyMaterial, RelinKey};
pub use identity::KeyId;
pub use key_switch_key::{KeyPart, KeySwitchKey, KeyTag};
pub use public::PublicKey;
pub use secret::SecretKey;
pub use seeded::SeededKeySwitchKey;

use basalt_math::sampler::fresh_seed;

use crate::params::Parameters;

/// Generates keys for one parameter set. Secrets and errors come from an OS-seeded ChaCha20
/// CSPRNG; the uniform halves of key-switching keys from a fresh 32-byte seed per key.
#[derive(Clone, Debug)]
pub struct KeyGenerator {
    params: Parameters,
    /// Which gadgets (key parts) to generate: all unless [`KeyGenerator::for_levels`].
    wanted: Vec<bool>,
}

impl KeyGenerator {
    pub fn new(params: &Parameters) -> KeyGenerator {
        KeyGenerator { params: params.clone(), wanted: vec![true; params.gadgets().len()] }
    }
    /// Generate key-switching keys only for the levels in `levels` (their gadgets' parts): with
    /// level-dependent key switching (`key_switch_bands`) a key for every level holds one part
    /// per distinct digit size, far more than one level needs. Keys used at another level are
    /// refused ([`crate::CkksError::KeyNotForLevel`]). Without bands every level shares one
    /// part, so this changes nothing.
    pub fn for_levels(mut self, levels: impl IntoIterator<Item = usize>) -> KeyGenerator {
        self.wanted = vec![false; self.params.gadgets().len()];
        for l in levels.into_iter().filter(|&l| l <= self.params.max_level()) {
            self.wanted[self.params.gadget_index(l)] = true;
        }
        self
    }
    /// The parameter set the keys are generated for.
    pub fn params(&self) -> &Parameters {
        &self.params
    }
    pub fn gen_secret_key(&self) -> SecretKey {
        SecretKey::generate(&self.params)
    }
    pub fn gen_public_key(&self, sk: &SecretKey) -> PublicKey {
        PublicKey::generate(&self.params, sk)
    }
    /// Key switching `from` to `to`; it carries `to`'s key id (a ciphertext switched with it is
    /// under `to`).
    pub fn gen_key_switch_key(&self, from: &SecretKey, to: &SecretKey) -> KeySwitchKey {
        KeySwitchKey::generate_parts(
            &self.params,
            &from.poly,
            to,
            KeyTag::Custom,
            fresh_seed(),
            &self.wanted,
        )
    }
    fn material(
        &self,
        s_from: &basalt_math::RnsPoly,
        to: &SecretKey,
        tag: KeyTag,
        seeded: bool,
    ) -> KeyMaterial {
        let k =
            KeySwitchKey::generate_parts(&self.params, s_from, to, tag, fresh_seed(), &self.wanted);
        if seeded { KeyMaterial::Seeded(k.to_seeded()) } else { KeyMaterial::Full(k) }
    }
    /// Relinearization key (`s² → s`); `seeded` stores only seed + `b`.
    pub fn gen_relin_key(&self, sk: &SecretKey, seeded: bool) -> RelinKey {
        let ring = self.params.ring();
        let mut s2 = sk.poly.clone();
        ring.mul_assign(&mut s2, &sk.poly);
        let key = self.material(&s2, sk, KeyTag::Relin, seeded);
        zeroize::Zeroize::zeroize(s2.data_mut());
        RelinKey { key }
    }
    /// Galois key for `X → X^galois`, in Lattigo's form: it switches `s` to `φ^{-1}(s)`
    /// (`φ = φ_galois`), so that a rotation key-switches `c_1` first and permutes its two
    /// output polynomials after (`φ` of a ciphertext under `φ^{-1}(s)` is one under `s`),
    /// instead of permuting every extended digit of a hoisted decomposition.
    pub fn gen_galois_key(&self, sk: &SecretKey, galois: u64, seeded: bool) -> GaloisKey {
        let ring = self.params.ring();
        let inverse = galois_inverse(galois, self.params.n() as u64);
        let to = SecretKey {
            poly: ring.automorphism(&sk.poly, inverse),
            params_id: sk.params_id,
            key_id: sk.key_id,
            ring: sk.ring.clone(),
        };
        GaloisKey { galois, key: self.material(&sk.poly, &to, KeyTag::Galois(galois), seeded) }
    }
    /// Key for a rotation by `k` slots (left for `k > 0`).
    pub fn gen_rotation_key(&self, sk: &SecretKey, k: i64, seeded: bool) -> GaloisKey {
        let g = self.params.ring().galois_element_for_rotation(k);
        self.gen_galois_key(sk, g, seeded)
    }
    /// Key for complex conjugation.
    pub fn gen_conjugation_key(&self, sk: &SecretKey, seeded: bool) -> GaloisKey {
        let g = self.params.ring().galois_element_conjugate();
        self.gen_galois_key(sk, g, seeded)
    }
    /// A shape-only generic key-switching key (trace mode), e.g. bootstrapping's
    /// encapsulation keys.
    pub fn gen_symbolic_key_switch_key(&self, seeded: bool) -> KeyMaterial {
        self.symbolic_material(KeyTag::Custom, seeded)
    }
    /// Shape-only key material for trace mode: the same shapes (hence the same key loads and
    /// regenerations in a trace) as a real key, no data and no sampling. An evaluator holding
    /// such keys only accepts symbolic ciphertexts.
    fn symbolic_material(&self, tag: KeyTag, seeded: bool) -> KeyMaterial {
        let p = &self.params;
        let parts = p
            .gadgets()
            .iter()
            .zip(&self.wanted)
            .map(|(g, &wanted)| {
                let shape = || {
                    basalt_math::RnsPoly::symbolic(
                        p.n(),
                        g.top_level + 1,
                        g.p_limbs,
                        basalt_math::Domain::Ntt,
                    )
                };
                let b = (0..g.digits()).map(|_| shape()).collect();
                let a =
                    if seeded { Vec::new() } else { (0..g.digits()).map(|_| shape()).collect() };
                wanted.then_some(KeyPart { b, a })
            })
            .collect();
        let (seed, params_id, key_id) = ([0u8; 32], p.id(), KeyId::UNBOUND);
        if seeded {
            KeyMaterial::Seeded(SeededKeySwitchKey { parts, seed, tag, params_id, key_id })
        } else {
            KeyMaterial::Full(KeySwitchKey { parts, seed, tag, params_id, key_id })
        }
    }

    /// [`KeyGenerator::gen_evaluation_keys`] in trace mode: shape-only keys, generated in
    /// microseconds whatever the parameter set (see `symbolic_material`).
    pub fn gen_symbolic_evaluation_keys(
        &self,
        rotations: &[i64],
        conjugate: bool,
        seeded: bool,
    ) -> EvaluationKeys {
        let ring = self.params.ring();
        let mut ek = EvaluationKeys::default()
            .with_relin(RelinKey { key: self.symbolic_material(KeyTag::Relin, seeded) });
        let mut galois: Vec<u64> =
            rotations.iter().map(|&k| ring.galois_element_for_rotation(k)).collect();
        if conjugate {
            galois.push(ring.galois_element_conjugate());
        }
        for g in galois {
            let key = self.symbolic_material(KeyTag::Galois(g), seeded);
            ek = ek.with_galois(GaloisKey { galois: g, key });
        }
        ek
    }

    /// Relinearization key plus rotation keys for `rotations` (and conjugation if asked).
    pub fn gen_evaluation_keys(
        &self,
        sk: &SecretKey,
        rotations: &[i64],
        conjugate: bool,
        seeded: bool,
    ) -> EvaluationKeys {
        let mut ek = EvaluationKeys::default().with_relin(self.gen_relin_key(sk, seeded));
        for &k in rotations {
            ek = ek.with_galois(self.gen_rotation_key(sk, k, seeded));
        }
        if conjugate {
            ek = ek.with_galois(self.gen_conjugation_key(sk, seeded));
        }
        ek
    }
}

/// The inverse of the Galois element `g` (odd) modulo `2n`: `g^{n−1}`, since the odd residues
/// modulo `2n` form a group of order `n`.
fn galois_inverse(g: u64, n: u64) -> u64 {
    let m = 2 * n;
    let (mut base, mut e, mut acc) = (g % m, n - 1, 1u64);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc * base % m;
        }
        base = base * base % m;
        e >>= 1;
    }
    acc
}
