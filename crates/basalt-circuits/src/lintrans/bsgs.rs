//! Baby-step giant-step evaluation of a diagonal transform (baby-step-centric order), with no,
//! single or double hoisting.
//!
//! # Algorithm
//! Write every non-zero diagonal index as `k = n1·j + i` (`0 ≤ i < n1`). Then
//! `M·x = Σ_j rot_{n1 j}( Σ_i rot_{−n1 j}(d_k) ⊙ rot_i(x) )`: the diagonals are pre-rotated
//! in the clear, so only the `|B|−1` distinct baby-step rotations of `x` and the `|G|−1`
//! giant-step rotations of the partial sums are homomorphic (`n1 + n2 − 2` at most, instead
//! of `n − 1` for the diagonal method, which is the case `n1 = slots`).
//! 1. baby steps: `x_i = rot_i(x)` for every baby index `i` — plain rotations, or with
//!    hoisting all from one Decompose + ModUp of `x` ([`Evaluator::decompose`]);
//! 2. per giant index `j`: `p_j = Σ_i x_i ⊙ pt_{j,i}`;
//! 3. `y = p_0 + Σ_{j≠0} rot_{n1 j}(p_j)`;
//! 4. one rescale (done by the caller).
//!
//! [`Hoisting::Double`] (Bossuat et al.'s full double hoisting: everything between the one
//! decomposition and the one ModDown stays in `Q∪P`) runs in [`super::double`].
//!
//! # Source
//! Halevi & Shoup, CRYPTO 2018 (BSGS, hoisting); Bossuat, Mouchet, Troncoso-Pastoriza,
//! Hubaux, EUROCRYPT 2021, §3 (double hoisting); Osiris Alg. 2.
//!
//! # Cost
//! See [`super::cost::predict`]: `|B|−1` baby and `|G|−1` giant rotations, `n` plaintext
//! products, one rescale.

use std::collections::BTreeMap;

use basalt_ckks::{Ciphertext, CkksError, Encoder, Evaluator, HoistedDecomp};
use num_complex::Complex64;

use super::diagonals::rotate_slots;
use super::of_limb::OfLimbDiagonal;
use super::plan::Plan;
use super::{DiagStore, Hoisting, LinearTransform, Source};
use crate::error::{CircuitError, Result};

/// The BSGS index split of a set of diagonals: giant index `j` → its baby indices `i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    pub n1: usize,
    pub giant: BTreeMap<usize, Vec<usize>>,
    /// Outer giant stride `n12` (a multiple of `n1`), if the giant steps are nested
    /// ([`Split::with_outer`]).
    pub outer: Option<usize>,
}

impl Split {
    /// Split `indices` (in `[0, slots)`) with `n1` baby steps.
    ///
    /// # Errors
    /// [`CircuitError::BadBabySteps`] unless `1 ≤ n1 ≤ slots`.
    pub fn new(indices: &[usize], n1: usize, slots: usize) -> Result<Split> {
        if n1 == 0 || n1 > slots {
            return Err(CircuitError::BadBabySteps { n1, slots });
        }
        let mut giant: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for &k in indices {
            giant.entry(k / n1).or_default().push(k % n1);
        }
        giant.values_mut().for_each(|v| v.sort_unstable());
        Ok(Split { n1, giant, outer: None })
    }

    /// Nest the giant steps with outer stride `n12`: write each giant shift as
    /// `n1·j = n12·J + m` (`0 ≤ m < n12`), sum the partials of one `J` each rotated by `m`,
    /// then rotate that sum by `n12·J`:
    /// `M·x = Σ_J rot_{n12 J}( Σ_m rot_m( Σ_i pt_{J,m,i} ⊙ rot_i(x) ) )` (rotations are
    /// linear, so this is the same sum). It costs one rotation per non-zero `J` more (or fewer,
    /// where `m = 0`), and the keys are the distinct `m` and `n12·J` instead of every `n1·j`:
    /// for a convolution whose shifts are a channel block times a spatial offset, the sum of
    /// the two counts instead of their product.
    ///
    /// # Errors
    /// [`CircuitError::Invalid`] unless `n12` is a multiple of `n1` above it, at most the slot
    /// count `slots`.
    pub fn with_outer(mut self, n12: usize, slots: usize) -> Result<Split> {
        if n12 <= self.n1 || !n12.is_multiple_of(self.n1) || n12 > slots {
            return Err(CircuitError::Invalid(format!(
                "an outer giant stride {n12} must be a multiple of n1 = {} above it, at most \
                 {slots}",
                self.n1
            )));
        }
        self.outer = Some(n12);
        Ok(self)
    }

    /// Giant shift `n1·j` as (outer shift `n12·J`, inner shift `m`); `(0, n1·j)` unnested.
    pub fn giant_parts(&self, j: usize) -> (usize, usize) {
        let shift = j * self.n1;
        match self.outer {
            None => (0, shift),
            Some(n12) => (shift / n12 * n12, shift % n12),
        }
    }

    /// Giant-step rotations one evaluation makes: the non-zero shifts `n1·j`, or nested, the
    /// non-zero inner shifts plus one per non-zero outer shift.
    pub fn giant_rotations(&self) -> usize {
        let parts: Vec<(usize, usize)> = self.giant.keys().map(|&j| self.giant_parts(j)).collect();
        let mut outer: Vec<usize> = parts.iter().map(|p| p.0).filter(|&o| o != 0).collect();
        outer.dedup();
        parts.iter().filter(|p| p.1 != 0).count() + outer.len()
    }
    /// Distinct baby indices, ascending.
    pub fn babies(&self) -> Vec<usize> {
        let mut b: Vec<usize> = self.giant.values().flatten().copied().collect();
        b.sort_unstable();
        b.dedup();
        b
    }
    /// Number of giant steps `n2` (partial sums).
    /// The giant steps of `group` whose inner sum uses baby step `i` (the partial sums one
    /// GSC step updates).
    pub fn giants_using(&self, group: &[usize], i: usize) -> Vec<usize> {
        group.iter().copied().filter(|j| self.giant[j].binary_search(&i).is_ok()).collect()
    }
    pub fn n2(&self) -> usize {
        self.giant.len()
    }
    /// Number of diagonals.
    pub fn diagonals(&self) -> usize {
        self.giant.values().map(Vec::len).sum()
    }
    /// Rotation amounts needed: non-zero baby indices and non-zero giant shifts `n1·j` (nested:
    /// their non-zero outer and inner parts).
    pub fn rotations(&self) -> Vec<i64> {
        let mut r: Vec<i64> =
            self.babies().into_iter().filter(|&i| i != 0).map(|i| i as i64).collect();
        for &j in self.giant.keys() {
            let (outer, inner) = self.giant_parts(j);
            r.extend([outer, inner].into_iter().filter(|&s| s != 0).map(|s| s as i64));
        }
        r.sort_unstable();
        r.dedup();
        r
    }
}

/// `rot_{−n1 j}(d_{n1 j + i})`: the pre-rotated diagonal of the (giant, baby) pair.
pub(crate) fn prerotated(source: &Source, n1: usize, j: usize, i: usize) -> Vec<Complex64> {
    rotate_slots(&source.diagonal(n1 * j + i), -((n1 * j) as i64))
}

/// Encode the diagonals the plan stores: one limb's worth (the giant-step-centric order with
/// OF-Limb), all limbs (over `Q∪P` with double hoisting), or nothing (generated sources).
pub(crate) fn prepare_store(
    encoder: &Encoder,
    source: &Source,
    split: &Split,
    plan: &Plan,
    level: usize,
    pt_scale: f64,
) -> Result<DiagStore> {
    if matches!(source, Source::Generated { .. }) {
        return Ok(DiagStore::OnTheFly);
    }
    let slots = source.slots();
    let pairs = split.giant.iter().flat_map(|(&j, is)| is.iter().map(move |&i| (j, i)));
    Ok(match plan.order {
        order if order.of_limb() => DiagStore::OfLimb(
            pairs
                .map(|(j, i)| {
                    let v = prerotated(source, split.n1, j, i);
                    Ok(((j, i), OfLimbDiagonal::new(encoder, &v, slots, level, pt_scale)?))
                })
                .collect::<Result<_>>()?,
        ),
        _ if plan.hoisting == Hoisting::Double => DiagStore::EncodedQP(
            pairs
                .map(|(j, i)| {
                    let v = prerotated(source, split.n1, j, i);
                    Ok(((j, i), encoder.encode_qp(&v, slots, level, pt_scale)?))
                })
                .collect::<Result<_>>()?,
        ),
        _ => DiagStore::Encoded(
            pairs
                .map(|(j, i)| {
                    let v = prerotated(source, split.n1, j, i);
                    Ok(((j, i), encoder.encode(&v, slots, level, pt_scale)?))
                })
                .collect::<Result<_>>()?,
        ),
    })
}

/// Fail early, naming the first rotation whose key is missing.
pub(crate) fn check_keys(eval: &Evaluator, rotations: &[i64]) -> Result<()> {
    let ring = eval.params().ring();
    for &k in rotations {
        let g = ring.galois_element_for_rotation(k);
        if !eval.keys().galois.contains_key(&g) {
            return Err(CkksError::MissingRotationKey { rotation: k, galois: g }.into());
        }
    }
    Ok(())
}

/// Produces baby-step rotations of one ciphertext, sharing a decomposition when hoisted.
pub(crate) struct BabyRotator<'a> {
    eval: &'a Evaluator,
    ct: &'a Ciphertext,
    decomp: Option<HoistedDecomp>,
}

impl<'a> BabyRotator<'a> {
    pub(crate) fn new(eval: &'a Evaluator, ct: &'a Ciphertext, hoisting: Hoisting) -> Result<Self> {
        let decomp = match hoisting {
            Hoisting::None => None,
            Hoisting::Single | Hoisting::Double => Some(eval.decompose(ct)?),
        };
        Ok(BabyRotator { eval, ct, decomp })
    }

    /// What producing a rotation reads: the ciphertext and its shared decomposition.
    pub(crate) fn reads(&self, step: &basalt_ckks::FusedOperation) {
        step.reads(self.ct);
        if let Some(d) = &self.decomp {
            step.reads(d);
        }
    }

    pub(crate) fn rotate(&self, i: usize) -> Result<Ciphertext> {
        if i == 0 {
            return Ok(self.ct.clone());
        }
        let k = i as i64;
        match &self.decomp {
            None => Ok(self.eval.rotate(self.ct, k)?),
            Some(d) => Ok(self.eval.rotate_hoisted_with(self.ct, d, k)?),
        }
    }
}

/// `acc += x` (or `acc = x`).
pub(crate) fn accumulate(
    eval: &Evaluator,
    acc: &mut Option<Ciphertext>,
    x: Ciphertext,
) -> Result<()> {
    match acc {
        None => *acc = Some(x),
        Some(a) => eval.add_assign(a, &x)?,
    }
    Ok(())
}

/// Sums the giant steps `rot_{n1 j}(p_j)` in `Q` (no or single hoisting); nested
/// ([`Split::with_outer`]), the partials of one outer shift first, each rotated by its inner
/// shift, then that sum by the outer shift. Giant indices arrive in ascending order.
pub(crate) struct GiantAccumulator<'a> {
    acc: Option<Ciphertext>,
    split: &'a Split,
    /// The outer shift being summed and its inner sum.
    inner: Option<(usize, Ciphertext)>,
}

impl<'a> GiantAccumulator<'a> {
    pub(crate) fn new(split: &'a Split) -> Self {
        GiantAccumulator { acc: None, split, inner: None }
    }

    pub(crate) fn add(&mut self, eval: &Evaluator, j: usize, partial: Ciphertext) -> Result<()> {
        let (outer, shift) = self.split.giant_parts(j);
        let r = if shift == 0 { partial } else { eval.rotate(&partial, shift as i64)? };
        if self.split.outer.is_none() {
            return accumulate(eval, &mut self.acc, r);
        }
        match &mut self.inner {
            Some((o, sum)) if *o == outer => eval.add_assign(sum, &r)?,
            _ => {
                self.flush(eval)?;
                self.inner = Some((outer, r));
            }
        }
        Ok(())
    }

    /// Rotate the inner sum by its outer shift into the total.
    fn flush(&mut self, eval: &Evaluator) -> Result<()> {
        match self.inner.take() {
            None => Ok(()),
            Some((0, sum)) => accumulate(eval, &mut self.acc, sum),
            Some((outer, sum)) => {
                let r = eval.rotate(&sum, outer as i64)?;
                accumulate(eval, &mut self.acc, r)
            }
        }
    }

    pub(crate) fn finish(mut self, eval: &Evaluator) -> Result<Ciphertext> {
        self.flush(eval)?;
        self.acc.ok_or(CircuitError::EmptyMatrix)
    }
}

/// Baby-step-centric evaluation (all baby steps first), before the final rescale.
pub(crate) fn eval_baby_step_centric(
    lt: &LinearTransform,
    eval: &Evaluator,
    ct: &Ciphertext,
) -> Result<Ciphertext> {
    if lt.plan.hoisting == Hoisting::Double {
        return super::double::eval_double(lt, eval, ct, None);
    }
    let rot = BabyRotator::new(eval, ct, lt.plan.hoisting)?;
    let babies: BTreeMap<usize, Ciphertext> =
        lt.split.babies().into_iter().map(|i| Ok((i, rot.rotate(i)?))).collect::<Result<_>>()?;
    let mut giant = GiantAccumulator::new(&lt.split);
    for (&j, is) in &lt.split.giant {
        let mut partial = None;
        for &i in is {
            let prod =
                eval.mul_plain(&babies[&i], lt.plaintext(j, i, ct.is_symbolic())?.as_ref())?;
            accumulate(eval, &mut partial, prod)?;
        }
        giant.add(eval, j, partial.expect("giant steps are non-empty"))?;
    }
    giant.finish(eval)
}

/// [`eval_baby_step_centric`] for `Σ_k M_k·x_k` (no or single hoisting, one split): each
/// input decomposed once, the baby rotations by `i` of all inputs back to back, one partial
/// sum per giant step over all inputs, one giant rotation each (see
/// [`LinearTransform::evaluate_sum`]).
pub(crate) fn eval_sum_baby_step_centric(
    eval: &Evaluator,
    terms: &[(&LinearTransform, &Ciphertext)],
) -> Result<Ciphertext> {
    let split = &terms[0].0.split;
    let rots = terms
        .iter()
        .map(|&(lt, ct)| BabyRotator::new(eval, ct, lt.plan.hoisting))
        .collect::<Result<Vec<_>>>()?;
    let mut babies: Vec<BTreeMap<usize, Ciphertext>> = vec![BTreeMap::new(); terms.len()];
    let ring = eval.params().ring();
    for i in split.babies() {
        // The key is named so that the simulator sees one Galois key read back to back by the
        // terms' rotations. Every evaluator rotation names its own key too (since 9299f56);
        // the scopes nest and agree, so this one only states the intent at the loop.
        let g = ring.galois_element_for_rotation(i as i64);
        let _k = basalt_trace::key_scope(basalt_trace::KeyId::Galois { element: g });
        for (b, rot) in babies.iter_mut().zip(&rots) {
            b.insert(i, rot.rotate(i)?);
        }
    }
    let mut giant = GiantAccumulator::new(split);
    for (&j, is) in &split.giant {
        let mut partial = None;
        for (&(lt, ct), b) in terms.iter().zip(&babies) {
            for &i in is {
                let prod =
                    eval.mul_plain(&b[&i], lt.plaintext(j, i, ct.is_symbolic())?.as_ref())?;
                accumulate(eval, &mut partial, prod)?;
            }
        }
        giant.add(eval, j, partial.expect("giant steps are non-empty"))?;
    }
    giant.finish(eval)
}
