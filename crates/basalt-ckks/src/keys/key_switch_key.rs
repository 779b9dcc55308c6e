//! Hybrid key-switching keys (Han–Ki "dnum" keys).
//!
//! A key switching from `s'` to `s` has, per gadget `(α, P)` of the parameter set
//! ([`crate::params::Gadget`]), one pair per digit `j`:
//! `(b_j, a_j) = (−a_j·s + e_j + P·g_j·s', a_j)` over `Q_top ∪ P` in the NTT domain, where
//! `g_j ≡ 1 mod q_i` for the Q limbs `i` of digit `j` (limbs `jα … jα+α−1`) and `≡ 0` elsewhere
//! (P limbs included, where `P ≡ 0` anyway). A digit's extension `d_j` (see
//! [`crate::keyswitch`]) satisfies `Σ_j d_j·g_j ≡ d mod Q_l` at every level `l ≤ top`, so one
//! part serves every level that uses its gadget: at level `l` only the limbs of `Q_l ∪ P` are
//! read and the digits above `l` are skipped. A set without `key_switch_bands` has one gadget
//! (`α`, all `k` special primes) for every level, hence one part; a banded set (CraterLake's
//! level-dependent `P`) has one part per distinct `α_l`, since the gadget factor `P_l·g_j`
//! differs. A key may hold only some parts ([`crate::KeyGenerator::for_levels`]); used at a
//! level whose part it lacks, it is refused with [`crate::CkksError::KeyNotForLevel`].
//!
//! The uniform halves `a_j` are drawn limb by limb from the XOF with a 32-byte seed (stream
//! `(gadget, digit, global limb)`), so a key can be stored as seed + `b` only
//! ([`super::SeededKeySwitchKey`], CraterLake's KSHGen) and any limb can be regenerated alone.
//!
//! # Cost
//! Per part: `⌈(top+1)/α⌉` digits × 2 polynomials × `(top + 1 + |P|)` limbs of `n` words
//! (`dnum + 1` ciphertexts' worth at `α = |P|`, CraterLake §3.1); the seeded form halves it.

use basalt_math::{RnsPoly, sampler};
use serde::{Deserialize, Serialize};

use super::secret::SecretKey;
use crate::error::{CkksError, Result};
use crate::params::Parameters;
use crate::util::{csprng, restrict};

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

/// One gadget's part of a key: `b_j` (and, in a full key, `a_j`) for every digit, over
/// `Q_top ∪ P` of the gadget.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyPart {
    pub(crate) b: Vec<RnsPoly>,
    /// Empty in a seeded key.
    pub(crate) a: Vec<RnsPoly>,
}

impl KeyPart {
    pub fn digits(&self) -> usize {
        self.b.len()
    }
    fn size_bytes(&self) -> usize {
        self.b.iter().chain(&self.a).map(|p| p.data().len() * 8).sum()
    }
}

/// A full key-switching key: both halves of every digit of every part.
#[derive(Clone, Debug, PartialEq)]
pub struct KeySwitchKey {
    /// One entry per gadget of the parameter set; `None` for a gadget not generated.
    pub(crate) parts: Vec<Option<KeyPart>>,
    pub(crate) seed: [u8; 32],
    pub(crate) tag: KeyTag,
    pub(crate) params_id: u64,
    /// The key set it belongs to: that of the secret it switches to.
    pub(crate) key_id: super::KeyId,
}

/// `P_g mod q_i` for every Q prime, `P_g` the product of the first `p_limbs` special primes.
pub(crate) fn p_mod_q(params: &Parameters, p_limbs: usize) -> Vec<u64> {
    let ring = params.ring();
    ring.q()
        .iter()
        .map(|m| params.p()[..p_limbs].iter().fold(1u64, |acc, &p| m.mul(acc, m.reduce(p))))
        .collect()
}

/// Fill `out` with limb `g` (global index) of `a_j` of gadget `gadget` regenerated from `seed`.
pub(crate) fn sample_a_limb(
    q: u64,
    seed: [u8; 32],
    (gadget, digit): (usize, usize),
    g: usize,
    out: &mut [u64],
) {
    let mut sep = Vec::with_capacity(36);
    sep.extend_from_slice(b"basalt-ckks/ksk-a");
    sep.extend_from_slice(&(gadget as u32).to_le_bytes());
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

/// `a_j` of gadget `gadget` on `Q_{q_limbs-1} ∪ P_gadget` regenerated from `seed` (no trace
/// event).
pub(crate) fn sample_a(
    params: &Parameters,
    seed: [u8; 32],
    (gadget, digit): (usize, usize),
    q_limbs: usize,
) -> RnsPoly {
    let ring = params.ring();
    let k = params.gadgets()[gadget].p_limbs;
    let mut a = RnsPoly::zero(params.n(), q_limbs, k, basalt_math::Domain::Ntt);
    let globals = ring.global_indices(&a);
    use rayon::prelude::*;
    a.data_mut().par_chunks_mut(params.n()).zip(globals).for_each(|(limb, g)| {
        sample_a_limb(ring.moduli()[g].value(), seed, (gadget, digit), g, limb)
    });
    a
}

/// The levels served by the parts present (`present[g]`), for error messages.
pub(crate) fn levels_served(params: &Parameters, present: &[bool]) -> String {
    let levels: Vec<usize> = (0..=params.max_level())
        .filter(|&l| present.get(params.gadget_index(l)).copied().unwrap_or(false))
        .collect();
    match (levels.first(), levels.last()) {
        (None, _) | (_, None) => "none".into(),
        (Some(lo), Some(hi)) if hi - lo + 1 == levels.len() => format!("{lo}..={hi}"),
        _ => format!("{levels:?}"),
    }
}

/// The part of `parts` serving `level`, or [`CkksError::KeyNotForLevel`].
pub(crate) fn part_at<'a>(
    params: &Parameters,
    parts: &'a [Option<KeyPart>],
    level: usize,
) -> Result<&'a KeyPart> {
    if level > params.max_level() {
        return Err(CkksError::LevelTooHigh { requested: level, max: params.max_level() });
    }
    parts.get(params.gadget_index(level)).and_then(Option::as_ref).ok_or_else(|| {
        let present: Vec<bool> = parts.iter().map(Option::is_some).collect();
        CkksError::KeyNotForLevel { level, served: levels_served(params, &present) }
    })
}

impl KeySwitchKey {
    /// Generate the key switching `s_from` (NTT, `Q_L ∪ P`) to `sk`, with the uniform halves
    /// expanded from `seed`: every part of the parameter set.
    pub fn generate(
        params: &Parameters,
        s_from: &RnsPoly,
        sk: &SecretKey,
        tag: KeyTag,
        seed: [u8; 32],
    ) -> KeySwitchKey {
        Self::generate_parts(params, s_from, sk, tag, seed, &vec![true; params.gadgets().len()])
    }

    /// [`KeySwitchKey::generate`] for the gadgets `wanted[g]` only.
    pub(crate) fn generate_parts(
        params: &Parameters,
        s_from: &RnsPoly,
        sk: &SecretKey,
        tag: KeyTag,
        seed: [u8; 32],
        wanted: &[bool],
    ) -> KeySwitchKey {
        let ring = params.ring();
        let mut rng = csprng();
        let parts = params
            .gadgets()
            .iter()
            .enumerate()
            .map(|(gi, gadget)| {
                if !wanted[gi] {
                    return None;
                }
                let (l1, k) = (gadget.top_level + 1, gadget.p_limbs);
                let pq = p_mod_q(params, k);
                let s = restrict(&sk.poly, l1, k);
                let mut part = KeyPart { b: Vec::new(), a: Vec::new() };
                for j in 0..gadget.digits() {
                    let a = sample_a(params, seed, (gi, j), l1);
                    let e = sampler::gaussian(params.n(), params.sigma(), &mut rng);
                    let mut b = ring.from_i64(&e, l1, k);
                    ring.ntt_assign(&mut b);
                    let mut t = a.clone();
                    ring.mul_assign(&mut t, &s);
                    ring.sub_assign(&mut b, &t);
                    for i in params.digit_range(gadget.top_level, j) {
                        let m = ring.q()[i];
                        let (w, ws) = (pq[i], m.shoup(pq[i]));
                        let src = s_from.limb(i).to_vec();
                        b.limb_mut(i)
                            .iter_mut()
                            .zip(src)
                            .for_each(|(x, s)| *x = m.add(*x, m.mul_shoup(s, w, ws)));
                    }
                    part.b.push(b);
                    part.a.push(a);
                }
                Some(part)
            })
            .collect();
        KeySwitchKey { parts, seed, tag, params_id: params.id(), key_id: sk.key_id }
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
    /// Bytes of key material (both halves).
    pub fn size_bytes(&self) -> usize {
        self.parts.iter().flatten().map(KeyPart::size_bytes).sum()
    }
}
