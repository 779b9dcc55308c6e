//! Rotations, conjugation and hoisted rotations.

use basalt_trace::operation;
use basalt_trace::{KeyId, region};

use super::Evaluator;
use crate::ciphertext::Ciphertext;
use crate::error::{CkksError, Result};
use crate::keys::{GaloisKey, KeyTag};
use crate::keyswitch::{self, CiphertextQP, HoistedDecomp, hoisted};
use crate::objects::{load, store};

impl Evaluator {
    /// The Galois key of `galois`, checked: present, a Galois key of that element, holding the
    /// part key switching at `level` reads.
    pub(crate) fn galois_key(
        &self,
        galois: u64,
        rotation: Option<i64>,
        level: usize,
    ) -> Result<&GaloisKey> {
        let gk = self.keys.galois.get(&galois).ok_or(match rotation {
            Some(k) => CkksError::MissingRotationKey { rotation: k, galois },
            None => CkksError::MissingConjugationKey { galois },
        })?;
        if gk.key.tag() != KeyTag::Galois(galois) {
            return Err(CkksError::WrongKey {
                expected: KeyTag::Galois(galois).to_string(),
                found: gk.key.tag().to_string(),
            });
        }
        gk.key.check_level(&self.params, level)?;
        Ok(gk)
    }

    pub(crate) fn check_degree1(ct: &Ciphertext) -> Result<()> {
        if ct.degree() != 1 {
            return Err(CkksError::Degree { degree: ct.degree(), expected: 1 });
        }
        Ok(())
    }

    /// Apply `X → X^galois` and switch back to `s` (the key must be present).
    pub fn automorphism(
        &self,
        ct: &Ciphertext,
        galois: u64,
        rotation: Option<i64>,
    ) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        Self::check_degree1(ct)?;
        let gk = self.galois_key(galois, rotation, ct.level())?;
        let op = operation();
        load(&op, ct);
        let _r = region("Rotate");
        // Name the key for the simulator's on-chip store (rotations by one step share it).
        let _k = basalt_trace::key_scope(KeyId::Galois { element: galois });
        // Key switch first (the key switches `s` to `φ^{-1}(s)`), then permute the pair, as
        // the hoisted rotations do: bit-identical to them, and as many permuted limbs. The
        // permutation is applied in ModDown's last pass, limb by limb while in cache.
        let (c0, c1) = self.keyswitch_add_automorphism(&ct.polys[1], &gk.key, &ct.polys[0], galois);
        let out = ct.with_polys(vec![c0, c1]);
        Ok(store(&op, out))
    }

    /// Rotate the slots left by `k` (right for `k < 0`).
    ///
    /// # Errors
    /// [`CkksError::MissingRotationKey`] naming `k` and its Galois element.
    pub fn rotate(&self, ct: &Ciphertext, k: i64) -> Result<Ciphertext> {
        let g = self.params.ring().galois_element_for_rotation(k);
        self.automorphism(ct, g, Some(k))
    }

    /// Complex conjugation of every slot.
    pub fn conjugate(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        let g = self.params.ring().galois_element_conjugate();
        self.automorphism(ct, g, None)
    }

    /// Decompose + ModUp of `c_1`, to share among rotations of `ct`.
    pub fn decompose(&self, ct: &Ciphertext) -> Result<HoistedDecomp> {
        self.check_ct(ct)?;
        Self::check_degree1(ct)?;
        let op = operation();
        load(&op, ct);
        Ok(store(&op, keyswitch::decompose(&self.params, &ct.polys[1])))
    }

    /// Rotations of `ct` by every `k` in `ks`, sharing one decomposition (single hoisting).
    pub fn rotate_hoisted(&self, ct: &Ciphertext, ks: &[i64]) -> Result<Vec<Ciphertext>> {
        let keys: Vec<(u64, Option<&GaloisKey>)> = ks
            .iter()
            .map(|&k| {
                let g = self.params.ring().galois_element_for_rotation(k);
                if g == 1 {
                    Ok((g, None))
                } else {
                    self.galois_key(g, Some(k), ct.level()).map(|gk| (g, Some(gk)))
                }
            })
            .collect::<Result<_>>()?;
        let op = operation();
        load(&op, ct);
        // The shared decomposition is this operation's working set (nested: not reported).
        let decomp = self.decompose(ct)?;
        // Coarse tasks: with at least one rotation per thread, each rotation is one task with
        // its kernels kept on that thread (one fork-join for all of them instead of one per
        // kernel). Trace recording is per thread, so a recorded run stays on this thread.
        let threads = rayon::current_num_threads();
        if threads > 1
            && keys.len() >= threads
            && basalt_math::parallel::inner_parallel()
            && !basalt_trace::is_recording()
        {
            use rayon::prelude::*;
            let out: Vec<Ciphertext> = keys
                .into_par_iter()
                .with_max_len(1)
                .map(|(g, gk)| match gk {
                    None => ct.clone(),
                    Some(gk) => basalt_math::parallel::sequential(|| {
                        hoisted::automorphism_hoisted(&self.params, ct, &decomp, g, &gk.key)
                    }),
                })
                .collect();
            return Ok(out.into_iter().map(|r| store(&op, r)).collect());
        }
        Ok(keys
            .into_iter()
            .map(|(g, gk)| match gk {
                None => store(&op, ct.clone()),
                Some(gk) => {
                    let _k = basalt_trace::key_scope(KeyId::Galois { element: g });
                    let r = hoisted::automorphism_hoisted(&self.params, ct, &decomp, g, &gk.key);
                    store(&op, r)
                }
            })
            .collect())
    }

    /// Lazy hoisted rotations: results left in `Q_l ∪ P` (times `P`), to be summed and brought
    /// down once with [`Evaluator::mod_down`] (double hoisting). `k = 0` gives `P·ct` and needs
    /// no key.
    pub fn rotate_hoisted_lazy(
        &self,
        ct: &Ciphertext,
        decomp: &HoistedDecomp,
        ks: &[i64],
    ) -> Result<Vec<CiphertextQP>> {
        self.check_ct(ct)?;
        if decomp.level() != ct.level() {
            return Err(CkksError::LevelMismatch { left: ct.level(), right: decomp.level() });
        }
        let op = operation();
        load(&op, ct);
        load(&op, decomp);
        ks.iter()
            .map(|&k| {
                let g = self.params.ring().galois_element_for_rotation(k);
                if g == 1 {
                    // Rotation by 0: P·ct in Q_l ∪ P, so that ModDown returns ct exactly.
                    let lifted = hoisted::lift_lazy(&self.params, ct, self.p_mod_q(ct.level()));
                    return Ok(store(&op, lifted));
                }
                let gk = self.galois_key(g, Some(k), ct.level())?;
                let _k = basalt_trace::key_scope(KeyId::Galois { element: g });
                let r = hoisted::automorphism_hoisted_lazy(
                    &self.params,
                    ct,
                    decomp,
                    g,
                    &gk.key,
                    self.p_mod_q(ct.level()),
                );
                Ok(store(&op, r))
            })
            .collect()
    }

    /// ModDown of a (sum of) lazy rotation result(s).
    pub fn mod_down(&self, ct: &CiphertextQP) -> Result<Ciphertext> {
        if ct.params_id != self.params.id() {
            return Err(CkksError::WrongParams { expected: self.params.id(), found: ct.params_id });
        }
        self.check_key_id(ct.key_id)?;
        Ok(ct.mod_down(&self.params))
    }
}
