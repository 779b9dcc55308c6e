//! Giant-step-centric (GSC) loop order, Osiris §IV.
//!
//! # Algorithm
//! With the input's decomposition computed once and kept (hoisting), iterate over the baby
//! steps instead of the giant steps:
//! 1. for each group of at most `max_partials` giant indices (Osiris keeps `n2 ≤ 4` partial
//!    sums on chip; a larger `n2` is split into groups rather than spilled):
//! 2. for each baby index `i`: rotate the input by `i` (from the cached decomposition), then
//!    regenerate the group's diagonals `pt_{j,i}` from their one stored limb (OF-Limb) and
//!    accumulate `x_i ⊙ pt_{j,i}` into partial sum `p_j` — each rotated input is used for
//!    every partial sum it feeds, then dropped;
//! 3. giant steps as in [`super::bsgs`] ([`super::double`] for [`super::Hoisting::Double`],
//!    which runs the same loop in `Q∪P`).
//!
//! Modular additions are exact and every rotation is a deterministic function of the shared
//! decomposition, so the result is bit-identical to the baby-step-centric order (tested).
//!
//! # Source
//! Osiris §IV-D and Fig. 8; ARK for OF-Limb.
//!
//! # Cost
//! As [`super::bsgs`], except that the baby-step rotations are recomputed once per group
//! (`⌈n2/max_partials⌉` groups) and each diagonal costs `l+1` NTTs to regenerate; alive at
//! once: one rotated input and `min(n2, max_partials)` partial sums.

use std::collections::BTreeMap;

use basalt_ckks::{Ciphertext, Evaluator, FusedOperation};

use super::LinearTransform;
use super::bsgs::{BabyRotator, GiantAccumulator, accumulate};
use crate::error::{CircuitError, Result};

/// GSC evaluation before the final rescale.
pub(crate) fn eval_giant_step_centric(
    lt: &LinearTransform,
    eval: &Evaluator,
    ct: &Ciphertext,
    max_partials: usize,
) -> Result<Ciphertext> {
    if lt.plan.hoisting == super::Hoisting::Double {
        if max_partials == 0 {
            return Err(CircuitError::NoFeasiblePlan("max_partials must be at least 1".into()));
        }
        return super::double::eval_double(lt, eval, ct, Some(max_partials));
    }
    eval_sum_giant_step_centric(eval, &[(lt, ct)], max_partials)
}

/// `Σ_k M_k·x_k` in the GSC order (no or single hoisting, one split), before the final
/// rescale: each baby step rotates every input and feeds all of their products into the
/// group's partial sums, so one pass per baby step serves every term (the sum's
/// [`super::bsgs::eval_sum_baby_step_centric`] keeps every rotation of every input instead).
pub(crate) fn eval_sum_giant_step_centric(
    eval: &Evaluator,
    terms: &[(&LinearTransform, &Ciphertext)],
    max_partials: usize,
) -> Result<Ciphertext> {
    if max_partials == 0 {
        return Err(CircuitError::NoFeasiblePlan("max_partials must be at least 1".into()));
    }
    let split = &terms[0].0.split;
    let rots = terms
        .iter()
        .map(|&(lt, ct)| BabyRotator::new(eval, ct, lt.plan.hoisting))
        .collect::<Result<Vec<_>>>()?;
    let giants: Vec<usize> = split.giant.keys().copied().collect();
    let mut out = GiantAccumulator::new(split);
    for group in giants.chunks(max_partials) {
        let mut babies: Vec<usize> =
            group.iter().flat_map(|j| split.giant[j].iter().copied()).collect();
        babies.sort_unstable();
        babies.dedup();
        let mut partials: BTreeMap<usize, Option<Ciphertext>> =
            group.iter().map(|&j| (j, None)).collect();
        for i in babies {
            let uses = split.giants_using(group, i);
            // GSC consumes the baby step in the pass that forms its products (Osiris §IV-E):
            // traced as one operation, so the rotations are never stored.
            let step = FusedOperation::begin();
            rots.iter().for_each(|r| r.reads(&step));
            uses.iter().filter_map(|j| partials[j].as_ref()).for_each(|p| step.reads(p));
            for (&(lt, ct), rot) in terms.iter().zip(&rots) {
                let xi = rot.rotate(i)?;
                for &j in &uses {
                    let pt = lt.plaintext(j, i, ct.is_symbolic())?;
                    let _on_chip = lt.plaintexts_on_chip().then(basalt_trace::plaintexts_on_chip);
                    let prod = eval.mul_plain(&xi, pt.as_ref())?;
                    accumulate(eval, partials.get_mut(&j).expect("group key"), prod)?;
                }
            }
            for j in &uses {
                step.writes(partials.get_mut(j).and_then(Option::as_mut).expect("used"));
            }
        }
        for (j, p) in partials {
            out.add(eval, j, p.expect("giant steps are non-empty"))?;
        }
    }
    out.finish(eval)
}
