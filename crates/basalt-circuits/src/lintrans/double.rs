//! Full double hoisting of a BSGS transform (Bossuat et al.): one Decompose + ModUp of the input,
//! everything else in `Q∪P` until one ModDown.
//!
//! # Algorithm
//! With `D = decompose(x)` computed once:
//! 1. baby steps: `x̃_i = rot_i(x)` *lazily* — the inner product of the digits with the Galois
//!    key plus `P·c_0`, the pair then permuted by `φ`, left in `Q∪P` with the factor `P` (no
//!    ModDown); `x̃_0 = P·x`;
//! 2. per giant index `j`: `p̃_j = Σ_i x̃_i ⊙ pt_{j,i}` in `Q∪P`, the diagonals encoded over
//!    `Q∪P` (the same small integer polynomial reduced modulo the `P` primes too; the factor
//!    `P` is carried by `x̃_i`);
//! 3. giant rotation in `Q∪P`: ModDown of `c_1` of `p̃_j` only, decompose it, inner product of
//!    the digits with the key of `n1·j`, plus `c_0` still in `Q∪P`, the pair permuted
//!    (`Evaluator::rotate_lazy_qp`); `j = 0` needs nothing;
//! 4. `ỹ = Σ_j rot_{n1 j}(p̃_j)` in `Q∪P`, then **one** ModDown of the pair and one rescale (by
//!    the caller).
//!
//! Per baby step this saves the ModDown pair of a single-hoisted rotation (`2k` INTT, `2(l+1)`
//! NTT, `2nk(l+1)` BConv) at the price of products over `l+1+k` limbs instead of `l+1`; per
//! giant step it saves the lift of `c_0` and halves the ModDown. Rounding differs from the
//! single-hoisted result (the key-switching error is multiplied by the diagonal before it is
//! divided by `P`), so results are precision-equal, not bit-identical, to the other hoistings.
//!
//! `max_partials = Some(m)` runs the giant-step-centric order of [`super::gsc`] (groups of at
//! most `m` partial sums, baby rotations recomputed per group, diagonals extended from their
//! stored `q_0` limb over `Q∪P`); exact modular additions make it bit-identical to `None`.
//!
//! # Source
//! Bossuat, Mouchet, Troncoso-Pastoriza, Hubaux, EUROCRYPT 2021, §3 and Alg. 4; Osiris §IV
//! (GSC order, OF-Limb over `Q∪P`).
//!
//! # Cost
//! [`super::cost::predict`] with [`super::Hoisting::Double`]: one decompose, `|B∖{0}|` lazy
//! rotations per group (plus a `2(l+1)`-limb lift where baby 0 is used), `D` products over
//! `Q∪P`, per non-zero giant step a one-polynomial ModDown + decompose + lazy key switch, one
//! final ModDown pair, one rescale.

use std::collections::BTreeMap;

use basalt_ckks::{Ciphertext, CiphertextQP, Evaluator, FusedOperation};

use super::LinearTransform;
use crate::error::{CircuitError, Result};

/// `acc += x` over `Q∪P` (or `acc = x`).
fn accumulate_qp(eval: &Evaluator, acc: &mut Option<CiphertextQP>, x: CiphertextQP) -> Result<()> {
    match acc {
        None => *acc = Some(x),
        Some(a) => a.try_add_assign(eval.params(), &x)?,
    }
    Ok(())
}

/// Full double-hoisted evaluation before the final rescale: baby-step-centric for `None`,
/// giant-step-centric with at most `m` partial sums for `Some(m)`.
pub(crate) fn eval_double(
    lt: &LinearTransform,
    eval: &Evaluator,
    ct: &Ciphertext,
    max_partials: Option<usize>,
) -> Result<Ciphertext> {
    let decomp = eval.decompose(ct)?;
    let lazy_rot = |i: usize| -> Result<CiphertextQP> {
        let mut r = eval.rotate_hoisted_lazy(ct, &decomp, &[i as i64])?;
        Ok(r.pop().expect("one rotation asked"))
    };
    let symbolic = ct.is_symbolic();
    let giants: Vec<usize> = lt.split.giant.keys().copied().collect();
    let mut out: Option<CiphertextQP> = None;
    let mut giant_step = |j: usize, p: CiphertextQP| -> Result<()> {
        let r = if j == 0 { p } else { eval.rotate_lazy_qp(&p, (j * lt.split.n1) as i64)? };
        accumulate_qp(eval, &mut out, r)
    };
    match max_partials {
        None => {
            // Lattigo's order: every lazy baby step first, then one giant step at a time.
            let babies: BTreeMap<usize, CiphertextQP> = lt
                .split
                .babies()
                .into_iter()
                .map(|i| Ok((i, lazy_rot(i)?)))
                .collect::<Result<_>>()?;
            for &j in &giants {
                let mut partial = None;
                for &i in &lt.split.giant[&j] {
                    let pt = lt.plaintext_qp(j, i, symbolic)?;
                    eval.mul_plain_qp_acc(&mut partial, &babies[&i], &pt)?;
                }
                giant_step(j, partial.expect("giant steps are non-empty"))?;
            }
        }
        Some(0) => {
            return Err(CircuitError::NoFeasiblePlan("max_partials must be at least 1".into()));
        }
        Some(m) => {
            for group in giants.chunks(m) {
                let mut babies: Vec<usize> =
                    group.iter().flat_map(|j| lt.split.giant[j].iter().copied()).collect();
                babies.sort_unstable();
                babies.dedup();
                let mut partials: BTreeMap<usize, Option<CiphertextQP>> =
                    group.iter().map(|&j| (j, None)).collect();
                for i in babies {
                    let uses = lt.split.giants_using(group, i);
                    // GSC consumes the baby step in the pass that forms its products (Osiris
                    // §IV-E): traced as one operation, so the rotation is never stored.
                    let step = FusedOperation::begin();
                    step.reads(ct);
                    step.reads(&decomp);
                    uses.iter().filter_map(|j| partials[j].as_ref()).for_each(|p| step.reads(p));
                    let xi = lazy_rot(i)?;
                    for &j in &uses {
                        let pt = lt.plaintext_qp(j, i, symbolic)?;
                        let _on_chip =
                            lt.plaintexts_on_chip().then(basalt_trace::plaintexts_on_chip);
                        let partial = partials.get_mut(&j).expect("group key");
                        eval.mul_plain_qp_acc(partial, &xi, &pt)?;
                    }
                    for j in &uses {
                        step.writes(partials.get_mut(j).and_then(Option::as_mut).expect("used"));
                    }
                }
                for (j, p) in partials {
                    giant_step(j, p.expect("giant steps are non-empty"))?;
                }
            }
        }
    }
    let acc = out.ok_or(CircuitError::EmptyMatrix)?;
    Ok(eval.mod_down(&acc)?)
}
