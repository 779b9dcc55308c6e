//! Hybrid key-switching keys (Han–Ki "dnum" keys).
//!
//! A key switching from `s'` to `s` has one pair per digit `j < dnum`:
//! `(b_j, a_j) = (−a_j·s + e_j + P·g_j·s', a_j)` over `Q_L ∪ P` in the NTT domain, where
//! `g_j ≡ 1 mod q_i` for the Q limbs `i` of digit `j` and `≡ 0` elsewhere (P limbs included,
//! where `P ≡ 0` anyway). A digit's extension `d_j` (see [`crate::keyswitch`]) satisfies
//! `Σ_j d_j·g_j ≡ d mod Q_l` at every level, so the same key serves all levels: at level `l`
//! only the limbs of `Q_l ∪ P` are read and the digits above `l` are skipped.
//!
//! The uniform halves `a_j` are drawn limb by limb from the XOF with a 32-byte seed (stream
//! `(digit, global limb)`), so a key can be stored as seed + `b` only
//! ([`super::SeededKeySwitchKey`], CraterLake's KSHGen) and any limb can be regenerated alone.
//!
//! # Cost
//! `dnum` digits × 2 polynomials × `(L + 1 + k)` limbs of `n` words (`dnum + 1` ciphertexts'
//! worth at `alpha = k`, CraterLake §3.1); the seeded form halves it.

use basalt_math::{RnsPoly, sampler};
use serde::{Deserialize, Serialize};

use super::secret::SecretKey;
use crate::params::Parameters;
use crate::util::csprng;

/// What a key is for, for error messages and checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum KeyTag {
    /// From `s²` (relinearization).
    Relin,
    /// Rotation / conjugation with Galois element `g`: from `s` to `φ_g^{-1}(s)`, the automorphism
    /// applied after the switch ([`crate::keys::GaloisKey`]).
    Galois(u64),
    /// From another secret.
    Custom,
}

impl std::fmt::Display for KeyTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyTag::Relin => write!(f, "s^2 (relinearization key)"),
            KeyTag::Galois(g) => write!(f, "s to phi_{g}^-1(s) (Galois key {g})"),
            KeyTag::Custom => write!(f, "another secret (custom key)"),
        }
    }
}

/// A full key-switching key: both halves of every digit.
#[derive(Clone, Debug, PartialEq)]
pub struct KeySwitchKey {
    pub(crate) b: Vec<RnsPoly>,
    pub(crate) a: Vec<RnsPoly>,
    pub(crate) seed: [u8; 32],
    pub(crate) tag: KeyTag,
    pub(crate) params_id: u64,
}

/// `P mod q_i` for every Q prime.
pub(crate) fn p_mod_q(params: &Parameters) -> Vec<u64> {
    let ring = params.ring();
    ring.q()
        .iter()
        .map(|m| params.p().iter().fold(1u64, |acc, &p| m.mul(acc, m.reduce(p))))
        .collect()
}

/// Fill `out` with limb `g` (global index) of `a_j` regenerated from `seed`.
pub(crate) fn sample_a_limb(q: u64, seed: [u8; 32], digit: usize, g: usize, out: &mut [u64]) {
    let mut sep = Vec::with_capacity(32);
    sep.extend_from_slice(b"basalt-ckks/ksk-a");
    sep.extend_from_slice(&(digit as u32).to_le_bytes());
    sep.extend_from_slice(&(g as u32).to_le_bytes());
    let mut xof = sampler::Xof::new(seed, &sep);
    let mask = u64::MAX >> q.leading_zeros();
    let mut buf = [0u8; 8 * 256];
    let mut filled = 0;
    while filled < out.len() {
        xof.fill(&mut buf);
        for w in buf.chunks_exact(8) {
            let v = u64::from_le_bytes(w.try_into().expect("8 bytes")) & mask;
            if v < q {
                out[filled] = v;
                filled += 1;
                if filled == out.len() {
                    break;
                }
            }
        }
    }
}

/// `a_j` on `Q_{q_limbs-1} ∪ P_{p_limbs}` regenerated from `seed` (no trace event).
pub(crate) fn sample_a(
    params: &Parameters,
    seed: [u8; 32],
    digit: usize,
    q_limbs: usize,
) -> RnsPoly {
    let ring = params.ring();
    let k = params.k();
    let mut a = RnsPoly::zero(params.n(), q_limbs, k, basalt_math::Domain::Ntt);
    let globals = ring.global_indices(&a);
    use rayon::prelude::*;
    a.data_mut()
        .par_chunks_mut(params.n())
        .zip(globals)
        .for_each(|(limb, g)| sample_a_limb(ring.moduli()[g].value(), seed, digit, g, limb));
    a
}

impl KeySwitchKey {
    /// Generate the key switching `s_from` (NTT, `Q_L ∪ P`) to `sk`, with the uniform halves
    /// expanded from `seed`.
    pub fn generate(
        params: &Parameters,
        s_from: &RnsPoly,
        sk: &SecretKey,
        tag: KeyTag,
        seed: [u8; 32],
    ) -> KeySwitchKey {
        let ring = params.ring();
        let l1 = params.max_level() + 1;
        let k = params.k();
        let pq = p_mod_q(params);
        let mut rng = csprng();
        let mut bs = Vec::with_capacity(params.dnum());
        let mut as_ = Vec::with_capacity(params.dnum());
        for j in 0..params.dnum() {
            let a = sample_a(params, seed, j, l1);
            let e = sampler::gaussian(params.n(), params.sigma(), &mut rng);
            let mut b = ring.from_i64(&e, l1, k);
            ring.ntt_assign(&mut b);
            let mut t = a.clone();
            ring.mul_assign(&mut t, &sk.poly);
            ring.sub_assign(&mut b, &t);
            for i in params.digit_range(params.max_level(), j) {
                let m = ring.q()[i];
                let (w, ws) = (pq[i], m.shoup(pq[i]));
                let src = s_from.limb(i).to_vec();
                b.limb_mut(i)
                    .iter_mut()
                    .zip(src)
                    .for_each(|(x, s)| *x = m.add(*x, m.mul_shoup(s, w, ws)));
            }
            bs.push(b);
            as_.push(a);
        }
        KeySwitchKey { b: bs, a: as_, seed, tag, params_id: params.id() }
    }

    pub fn digits(&self) -> usize {
        self.b.len()
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
    /// Bytes of key material (both halves).
    pub fn size_bytes(&self) -> usize {
        self.b.iter().chain(&self.a).map(|p| p.data().len() * 8).sum()
    }
}
