//! Bootstrapping keys: the evaluation keys a [`Bootstrapper`] circuit runs with (each key only
//! with the parts of the levels it runs at), their size before they are made, and the
//! [`Encapsulation`] keys of the sparse ephemeral secret.

use basalt_ckks::{
    Ciphertext, EvaluationKeys, Evaluator, KeyGenerator, KeyMaterial, Parameters,
    ParametersLiteral, SecretDistribution, SecretKey,
};

use super::{Bootstrapper, base_modulus};
use crate::error::{CircuitError, Result};
use crate::lintrans::LinearTransform;

/// The key switch to the sparse ephemeral secret (over the small set `Q_0·P_0`) and back.
#[derive(Clone, Debug)]
pub struct Encapsulation {
    small: Parameters,
    small_eval: Evaluator,
    to_sparse: KeyMaterial,
    /// Read by ModRaise, which switches back to the dense secret with it.
    pub(super) to_dense: KeyMaterial,
}

impl Bootstrapper {
    /// The levels each rotation key runs at: its transforms' levels (SubSum's at the top, the
    /// sparse repacking rotation anywhere between CoeffToSlot's input and SlotToCoeff's), and
    /// that middle span (conjugation). With level-dependent key
    /// switching (`key_switch_bands`) a key holds one part per digit size it is used at, so
    /// generating every part for every key would multiply the key memory (52 parts on
    /// `CRATERLAKE_80_BOOT`); without bands every level shares one part and this changes nothing.
    fn key_levels(&self) -> (std::collections::BTreeMap<i64, Vec<usize>>, Vec<usize>) {
        let stc_in = self.stc.first().map_or(0, LinearTransform::level);
        // Only the levels a rescale reaches: with several primes per rescale the others never
        // hold a ciphertext, and with level-dependent key switching each would cost a part.
        let reachable = self.reachable_levels();
        let middle: Vec<usize> =
            (stc_in..=self.cts_level).filter(|l| reachable.contains(l)).collect();
        let mut rot: std::collections::BTreeMap<i64, Vec<usize>> = Default::default();
        for lt in self.cts.iter().chain(&self.stc) {
            for r in lt.rotations() {
                rot.entry(r).or_default().push(lt.level());
            }
        }
        let mut k = self.slots;
        while k < self.params.max_slots() {
            let levels = rot.entry(k as i64).or_default();
            levels.push(self.params.max_level());
            if k == self.slots {
                // The sparse repacking after CoeffToSlot rotates by the slot count, SubSum's
                // first step (its last only when the slot count is N/4).
                levels.extend(&middle);
            }
            k *= 2;
        }
        rot.remove(&0);
        (rot, middle)
    }

    /// The rotations the circuit makes and the levels each runs at (the parts its Galois key
    /// holds): a program that makes the same rotations at other levels adds those levels'
    /// parts to the same key rather than a second key.
    pub fn rotation_levels(&self) -> std::collections::BTreeMap<i64, Vec<usize>> {
        let mut rot = self.key_levels().0;
        rot.values_mut().for_each(|v| {
            v.sort_unstable();
            v.dedup();
        });
        rot
    }

    /// The levels rescaling from the top reaches: `base_primes + j·primes_per_rescale` limbs.
    fn reachable_levels(&self) -> Vec<usize> {
        let (base, c) = (self.params.base_primes(), self.params.primes_per_rescale());
        (base - 1..=self.params.max_level()).step_by(c).collect()
    }

    /// Evaluation keys for the circuit (relinearization for every reachable level, rotations and
    /// conjugation for the levels they run at, see `key_levels`; seeded or full) and, if the
    /// config asks for an
    /// ephemeral secret, the encapsulation keys.
    ///
    /// # Errors
    /// Parameter errors of the small encapsulation set.
    pub fn generate_keys(
        &self,
        sk: &SecretKey,
        seeded: bool,
    ) -> Result<(EvaluationKeys, Option<Encapsulation>)> {
        self.generate_keys_with(sk, seeded, true, &basalt_ckks::progress::Silent)
    }

    /// The bytes of the keys [`Bootstrapper::generate_keys`] makes (each key only with the
    /// parts of the levels it runs at, as generated; the encapsulation keys, always full: the
    /// switch to the sparse secret on the small `(Q_0, P_0)` set, the switch back with the top
    /// level's part).
    pub fn key_bytes(&self, seeded: bool) -> u64 {
        self.key_bytes_in_halves(if seeded { 1 } else { 2 })
    }

    fn key_bytes_in_halves(&self, halves: u64) -> u64 {
        let p = &self.params;
        let parts = |levels: &[usize]| -> u64 {
            let mut wanted = vec![false; p.gadgets().len()];
            for &l in levels.iter().filter(|&&l| l <= p.max_level()) {
                wanted[p.gadget_index(l)] = true;
            }
            p.gadgets()
                .iter()
                .zip(wanted)
                .filter(|(_, w)| *w)
                .map(|(g, _)| {
                    let limbs = (g.top_level + 1 + g.p_limbs) as u64;
                    g.digits() as u64 * halves * limbs * p.n() as u64 * 8
                })
                .sum()
        };
        let (rot, middle) = self.key_levels();
        let encaps = match self.cfg.ephemeral_h {
            None => 0,
            Some(h) => {
                let top = p.max_level();
                let to_dense = if halves == 2 { parts(&[top]) } else { 2 * parts(&[top]) };
                let to_sparse = Encapsulation::small_params(p, h).map_or(0, |s| {
                    let g = s.gadgets();
                    g.iter()
                        .map(|g| {
                            let limbs = (g.top_level + 1 + g.p_limbs) as u64;
                            g.digits() as u64 * 2 * limbs * s.n() as u64 * 8
                        })
                        .sum()
                });
                to_dense + to_sparse
            }
        };
        parts(&self.reachable_levels())
            + parts(&middle)
            + rot.values().map(|levels| parts(levels)).sum::<u64>()
            + encaps
    }

    /// [`Bootstrapper::generate_keys`] that first checks the keys fit in memory
    /// ([`Bootstrapper::key_bytes`] against what is available, unless `force`), reports one step
    /// per key to `progress`, and stops between keys when it cancels.
    ///
    /// # Errors
    /// As [`Bootstrapper::generate_keys`]; out of memory; cancelled.
    pub fn generate_keys_with(
        &self,
        sk: &SecretKey,
        seeded: bool,
        force: bool,
        progress: &dyn basalt_ckks::progress::Progress,
    ) -> Result<(EvaluationKeys, Option<Encapsulation>)> {
        let what = format!("bootstrapping keys for {}", self.params.name());
        basalt_ckks::progress::check_memory(&what, self.key_bytes(seeded), force)?;
        let kg = KeyGenerator::new(&self.params);
        let (rot, middle) = self.key_levels();
        let total = 2 + rot.len() as u64 + u64::from(self.cfg.ephemeral_h.is_some());
        let step = |done: u64| progress.step(done).map_err(basalt_ckks::CkksError::from);
        progress.stage("bootstrapping keys", total);
        let at = |levels: &[usize]| kg.clone().for_levels(levels.iter().copied());
        // Every level a rescale can reach (callers multiply with it after the bootstrap too);
        // with double-prime scaling the odd limb counts are never reached.
        let relin = kg.clone().for_levels(self.reachable_levels()).gen_relin_key(sk, seeded);
        step(1)?;
        let mut keys = EvaluationKeys::default()
            .with_relin(relin)
            .with_galois(at(&middle).gen_conjugation_key(sk, seeded));
        step(2)?;
        for (i, (r, levels)) in rot.iter().enumerate() {
            keys = keys.with_galois(at(levels).gen_rotation_key(sk, *r, seeded));
            step(3 + i as u64)?;
        }
        let enc = match self.cfg.ephemeral_h {
            None => None,
            Some(h) => Some(Encapsulation::generate(&self.params, sk, h)?),
        };
        step(total)?;
        Ok((keys, enc))
    }

    /// Shape-only keys for trace mode.
    pub fn symbolic_keys(&self, seeded: bool) -> EvaluationKeys {
        KeyGenerator::new(&self.params).gen_symbolic_evaluation_keys(
            &self.rotations(),
            true,
            seeded,
        )
    }
}

/// A key generator for the top level only: the switch back to the dense secret runs right after
/// ModRaise, so with level-dependent key switching (`key_switch_bands`) the key needs only the
/// top level's part.
fn top_level_keys(params: &Parameters) -> KeyGenerator {
    let top = params.max_level();
    KeyGenerator::new(params).for_levels(top..=top)
}

impl Encapsulation {
    /// Keys for switching `sk` to a fresh ephemeral secret of weight `h` over the small set
    /// `(Q_0, P_0)` (the base primes and the first special primes, see `small_params`), and
    /// back over the full set.
    ///
    /// # Errors
    /// Parameter errors of the small set.
    pub fn generate(params: &Parameters, sk: &SecretKey, h: usize) -> Result<Encapsulation> {
        let small = Self::small_params(params, h)?;
        // The ephemeral secret belongs to `sk`'s key set: both keys carry its identity.
        let eph_small =
            SecretKey::generate_for(&small, SecretDistribution::Hamming { h }, sk.key_id());
        let sk_small = sk.carried_to(params, &small);
        let to_sparse =
            KeyMaterial::Full(KeyGenerator::new(&small).gen_key_switch_key(&sk_small, &eph_small));
        let eph_full = eph_small.carried_to(&small, params);
        let to_dense = KeyMaterial::Full(top_level_keys(params).gen_key_switch_key(&eph_full, sk));
        let small_eval = Evaluator::new(&small, EvaluationKeys::default())?;
        Ok(Encapsulation { small, small_eval, to_sparse, to_dense })
    }

    /// Shape-only encapsulation keys (trace mode).
    ///
    /// # Errors
    /// Parameter errors of the small set.
    pub fn symbolic(params: &Parameters, h: usize) -> Result<Encapsulation> {
        let small = Self::small_params(params, h)?;
        let to_sparse = KeyGenerator::new(&small).gen_symbolic_key_switch_key(false);
        let to_dense = top_level_keys(params).gen_symbolic_key_switch_key(false);
        let small_eval = Evaluator::new(
            &small,
            KeyGenerator::new(&small).gen_symbolic_evaluation_keys(&[], false, false),
        )?;
        Ok(Encapsulation { small, small_eval, to_sparse, to_dense })
    }

    /// The small set `(Q_0, P_0)`: the base primes and as many special primes as it takes for
    /// `P_0 ≥ Q_0`, so that the one-digit key switch's noise is divided by at least `Q_0`
    /// (Lattigo's 60-bit `q_0` and 61-bit `p_0`; a split `q_0` of 28-bit words, CraterLake,
    /// or a 48-bit `q_0` over 33-bit special primes, Osiris, need several).
    fn small_params(params: &Parameters, h: usize) -> Result<Parameters> {
        let base = params.base_primes();
        let log_q0 = base_modulus(params).log2();
        let mut k = 0;
        let mut log_p0 = 0.0;
        while log_p0 < log_q0 && k < params.p().len() {
            log_p0 += (params.p()[k] as f64).log2();
            k += 1;
        }
        if log_p0 < log_q0 {
            return Err(CircuitError::Invalid(format!(
                "encapsulation needs special primes covering q_0 (2^{log_q0:.1}); P has 2^{log_p0:.1}"
            )));
        }
        let lit = ParametersLiteral {
            name: format!("{}_ENCAPSULATION_H{h}", params.name()),
            aliases: vec![],
            log_n: params.log_n(),
            log_q: vec![],
            q: params.q()[..base].to_vec(),
            log_p: vec![],
            p: params.p()[..k].to_vec(),
            dnum: Some(1),
            alpha: None,
            key_switch_bands: vec![],
            secret: SecretDistribution::Hamming { h },
            sigma: params.sigma(),
            log_default_scale: params.literal().log_default_scale,
            double_prime: false,
            base_primes: Some(base),
            primes_below: false,
            allow_insecure: params.literal().allow_insecure,
            provenance: Default::default(),
        };
        Ok(Parameters::new(lit).map_err(basalt_ckks::CkksError::from)?)
    }

    pub(super) fn to_sparse(&self, params: &Parameters, ct: &Ciphertext) -> Result<Ciphertext> {
        let small = ct.reinterpret(params, &self.small)?;
        let sw = self.small_eval.switch_key(&small, &self.to_sparse)?;
        Ok(sw.reinterpret(&self.small, params)?)
    }

    /// Bytes of both keys' material.
    pub fn size_bytes(&self) -> usize {
        self.to_sparse.size_bytes() + self.to_dense.size_bytes()
    }

    /// The key set both keys belong to.
    pub fn key_id(&self) -> basalt_ckks::KeyId {
        self.to_dense.key_id()
    }

    /// Both keys as bytes (each checksummed and carrying its key id), for a server that
    /// bootstraps without the secret; the small set is rebuilt from the parameters on load.
    ///
    /// # Errors
    /// Scheme errors (symbolic keys cannot be written).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let (a, b) = (self.to_sparse.to_bytes()?, self.to_dense.to_bytes()?);
        let mut out = (a.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(&a);
        out.extend_from_slice(&b);
        Ok(out)
    }

    /// Load [`Encapsulation::to_bytes`]'s output for `params` and ephemeral weight `h`.
    ///
    /// # Errors
    /// Corrupt bytes, keys of another set, or two keys of different key sets.
    pub fn from_bytes(params: &Parameters, h: usize, bytes: &[u8]) -> Result<Encapsulation> {
        let bad = |m: String| CircuitError::Invalid(format!("encapsulation keys: {m}"));
        let len = bytes
            .get(..8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize)
            .ok_or_else(|| bad("truncated".into()))?;
        let rest = &bytes[8..];
        if len > rest.len() {
            return Err(bad(format!("{len} bytes announced, {} present", rest.len())));
        }
        let small = Self::small_params(params, h)?;
        let to_sparse = KeyMaterial::from_bytes(&small, &rest[..len])?;
        let to_dense = KeyMaterial::from_bytes(params, &rest[len..])?;
        to_dense.key_id().join(to_sparse.key_id(), "the switch to the ephemeral secret")?;
        let small_eval = Evaluator::new(&small, EvaluationKeys::default())?;
        Ok(Encapsulation { small, small_eval, to_sparse, to_dense })
    }

    /// The small set's `log2(Q_0·P_0)` (its security is checked like any preset's).
    pub fn log_qp(&self) -> f64 {
        self.small.log_qp()
    }
}
