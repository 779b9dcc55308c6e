//! Long operations: how much memory keys will take before they exist, progress reports and
//! cancellation.
//!
//! Key generation at N = 2^16 takes seconds to minutes and gigabytes; a caller should know the
//! size before asking, see how far it is, and be able to stop it (Ctrl-C from Python). A
//! [`Progress`] is told of each stage and each finished step (one key-switching key, one
//! bootstrapping stage) and may answer [`Cancelled`]: the operation stops between steps and
//! returns [`CkksError::Cancelled`], leaving nothing half-made.
//!
//! The hook itself ([`Progress`], [`Cancelled`], [`Silent`]) lives in `basalt_math::progress`,
//! shared with TFHE key generation, and is re-exported here.
//!
//! [`KeyMemory::estimate`] counts the words of every key part from the parameter set's
//! gadgets, as key generation will allocate them; [`check_memory`] compares a need with the
//! memory the kernel reports available (`MemAvailable`), so that an impossible request is a
//! named error instead of an abort in the allocator.

pub use basalt_math::progress::{
    Cancelled, KEY_MEMORY_SHARE, Progress, Silent, available_memory, human_bytes,
};

use crate::keys::{EvaluationKeys, KeyGenerator, SecretKey};
use crate::{CkksError, Parameters, Result};

impl From<Cancelled> for CkksError {
    fn from(_: Cancelled) -> Self {
        CkksError::Cancelled
    }
}

/// Refuse `need` bytes for `what` when more than [`KEY_MEMORY_SHARE`] of the available memory,
/// unless `force`.
///
/// # Errors
/// [`CkksError::OutOfMemory`] naming `what`, the need and what is available.
pub fn check_memory(what: &str, need: u64, force: bool) -> Result<()> {
    match basalt_math::progress::memory_refusal(need, force) {
        Some((need, available)) => {
            Err(CkksError::OutOfMemory { what: what.to_string(), need, available })
        }
        None => Ok(()),
    }
}

/// The memory a set of evaluation keys will take, before it is generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KeyMemory {
    /// One key-switching key with every part (relinearisation, one rotation, conjugation).
    pub per_key: u64,
    /// How many keys: relinearisation + rotations + conjugation.
    pub keys: u64,
    /// The secret and public keys and the evaluator's working ciphertexts (a few at the top).
    pub other: u64,
    /// Everything.
    pub total: u64,
}

impl KeyMemory {
    /// Key memory for `params` with `rotations` rotation keys, a conjugation key if asked, full
    /// or seeded (seeded keys store only `b`, half the words). Counted from the gadgets: each
    /// part holds `digits` polynomials `b` (and `a` unless seeded) over `top_level + 1` Q limbs
    /// and `p_limbs` P limbs of `N` 64-bit words, exactly what key generation allocates.
    pub fn estimate(
        params: &Parameters,
        rotations: usize,
        conjugate: bool,
        seeded: bool,
    ) -> KeyMemory {
        let n = params.n() as u64;
        let halves = if seeded { 1 } else { 2 };
        let per_key: u64 = params
            .gadgets()
            .iter()
            .map(|g| {
                let limbs = (g.top_level + 1 + g.p_limbs) as u64;
                g.digits() as u64 * halves * limbs * n * 8
            })
            .sum();
        let keys = 1 + rotations as u64 + u64::from(conjugate);
        let top = (params.max_level() + 1 + params.p().len()) as u64 * n * 8;
        // Secret (1) and public (2) polynomials over Q∪P, and about 8 working polynomials.
        let other = 11 * top;
        KeyMemory { per_key, keys, other, total: per_key * keys + other }
    }
}

impl KeyGenerator {
    /// [`KeyGenerator::gen_evaluation_keys`] that first checks the keys fit in memory
    /// ([`check_memory`], unless `force`), reports one step per key to `progress` and stops
    /// between keys when it cancels.
    ///
    /// # Errors
    /// [`CkksError::OutOfMemory`], [`CkksError::Cancelled`].
    pub fn gen_evaluation_keys_with(
        &self,
        sk: &SecretKey,
        rotations: &[i64],
        conjugate: bool,
        seeded: bool,
        force: bool,
        progress: &dyn Progress,
    ) -> Result<EvaluationKeys> {
        self.gen_keys_with(sk, true, rotations, conjugate, seeded, force, progress)
    }

    /// [`KeyGenerator::gen_evaluation_keys_with`] without the relinearisation key: the
    /// rotation (and conjugation) keys of a program whose relinearisation key comes with
    /// another set, a bootstrapping circuit's, so that no second one is made and held.
    ///
    /// # Errors
    /// As [`KeyGenerator::gen_evaluation_keys_with`].
    pub fn gen_galois_keys_with(
        &self,
        sk: &SecretKey,
        rotations: &[i64],
        conjugate: bool,
        seeded: bool,
        force: bool,
        progress: &dyn Progress,
    ) -> Result<EvaluationKeys> {
        self.gen_keys_with(sk, false, rotations, conjugate, seeded, force, progress)
    }

    #[allow(clippy::too_many_arguments)]
    fn gen_keys_with(
        &self,
        sk: &SecretKey,
        relin: bool,
        rotations: &[i64],
        conjugate: bool,
        seeded: bool,
        force: bool,
        progress: &dyn Progress,
    ) -> Result<EvaluationKeys> {
        let params = self.params();
        let m = KeyMemory::estimate(params, rotations.len(), conjugate, seeded);
        let need = m.total - if relin { 0 } else { m.per_key };
        check_memory(&format!("evaluation keys for {}", params.name()), need, force)?;
        let total = u64::from(relin) + rotations.len() as u64 + u64::from(conjugate);
        let mut ek = EvaluationKeys::default();
        if total == 0 {
            return Ok(ek);
        }
        progress.stage("key generation", total);
        let mut done = 0;
        if relin {
            ek = ek.with_relin(self.gen_relin_key(sk, seeded));
            done += 1;
            progress.step(done)?;
        }
        for &k in rotations {
            ek = ek.with_galois(self.gen_rotation_key(sk, k, seeded));
            done += 1;
            progress.step(done)?;
        }
        if conjugate {
            ek = ek.with_galois(self.gen_conjugation_key(sk, seeded));
            progress.step(total)?;
        }
        Ok(ek)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    fn toy() -> Parameters {
        Parameters::new(crate::ParametersLiteral::toy(10, 60, 40, 3, 61, 2, 2)).unwrap()
    }

    /// The estimate is what generation allocates, byte for byte, full and seeded.
    #[test]
    fn the_estimate_is_the_generated_keys_size() {
        let params = toy();
        let kg = KeyGenerator::new(&params);
        let sk = kg.gen_secret_key();
        for seeded in [false, true] {
            let ek = kg.gen_evaluation_keys(&sk, &[1, 2, 5], true, seeded);
            let est = KeyMemory::estimate(&params, 3, true, seeded);
            let sizes: Vec<u64> = std::iter::once(ek.relin.as_ref().unwrap().key.size_bytes())
                .chain(ek.galois.values().map(|g| g.key.size_bytes()))
                .map(|b| b as u64)
                .collect();
            assert_eq!(sizes.len(), 5);
            assert!(sizes.iter().all(|&b| b == est.per_key), "{sizes:?} vs {est:?}");
        }
    }

    /// Without the relinearisation key: the rotations and conjugation asked for, one step each.
    #[test]
    fn galois_keys_alone_hold_no_relinearisation_key() {
        struct Count(AtomicU64);
        impl Progress for Count {
            fn stage(&self, _: &str, total: u64) {
                self.0.store(total, Ordering::Relaxed);
            }
        }
        let params = toy();
        let kg = KeyGenerator::new(&params);
        let sk = kg.gen_secret_key();
        let total = Count(AtomicU64::new(0));
        let ek = kg.gen_galois_keys_with(&sk, &[1, 3], true, false, false, &total).unwrap();
        assert!(ek.relin.is_none());
        assert_eq!(ek.galois.len(), 3);
        assert_eq!(total.0.load(Ordering::Relaxed), 3);
        let all = kg.gen_evaluation_keys_with(&sk, &[1, 3], true, false, false, &total).unwrap();
        assert!(all.relin.is_some() && all.galois.keys().eq(ek.galois.keys()));
        assert_eq!(total.0.load(Ordering::Relaxed), 4);
    }

    /// A request far beyond the machine is refused before anything is allocated, unless forced.
    #[test]
    fn keys_beyond_available_memory_are_refused() {
        let Some(avail) = available_memory() else { return };
        let e = check_memory("a test", avail.saturating_mul(4), false).unwrap_err();
        assert!(matches!(e, CkksError::OutOfMemory { .. }), "{e}");
        assert!(e.to_string().contains("a test"), "{e}");
        assert!(check_memory("a test", avail.saturating_mul(4), true).is_ok());
        // 60 one-prime digits at N = 2^10: 60 parts of 2 x 61 limbs, computed, not built.
        let big = Parameters::new(crate::ParametersLiteral::toy(10, 30, 30, 59, 31, 1, 60));
        let est = KeyMemory::estimate(&big.unwrap(), 0, false, false);
        assert_eq!(est.per_key, 60 * 2 * 61 * 1024 * 8);
    }

    struct StopAfter(u64, AtomicU64);
    impl Progress for StopAfter {
        fn step(&self, done: u64) -> std::result::Result<(), Cancelled> {
            self.1.store(done, Ordering::Relaxed);
            if done >= self.0 { Err(Cancelled) } else { Ok(()) }
        }
    }

    #[test]
    fn key_generation_reports_each_key_and_stops_when_cancelled() {
        let params = toy();
        let kg = KeyGenerator::new(&params);
        let sk = kg.gen_secret_key();
        let all = StopAfter(u64::MAX, AtomicU64::new(0));
        let ek = kg.gen_evaluation_keys_with(&sk, &[1, 2, 3], true, false, false, &all).unwrap();
        assert_eq!((all.1.load(Ordering::Relaxed), ek.galois.len()), (5, 4));
        let stop = StopAfter(2, AtomicU64::new(0));
        let e = kg.gen_evaluation_keys_with(&sk, &[1, 2, 3], true, false, false, &stop);
        assert!(matches!(e, Err(CkksError::Cancelled)));
        assert_eq!(stop.1.load(Ordering::Relaxed), 2);
    }
}
