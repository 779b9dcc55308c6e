//! Linear transforms `y = M·x` on encrypted slot vectors, behind one API.
//!
//! A plaintext matrix ([`Diagonals`], built from a dense matrix or a map of non-zero
//! diagonals) and a [`Strategy`] make a [`LinearTransform`]; [`LinearTransform::evaluate`]
//! applies it to a ciphertext and rescales once, so the output has the input's scale exactly
//! (diagonals are encoded at the scale of the prime(s) the rescale drops, as Lattigo does).
//!
//! Strategies:
//! - [`Strategy::Diagonal`]: Halevi–Shoup, one rotation per non-zero diagonal (optionally all
//!   sharing one hoisted decomposition);
//! - [`Strategy::Bsgs`]: baby-step giant-step with a chosen `n1` ([`bsgs`]), no / single /
//!   double hoisting ([`Hoisting`]), in baby-step-centric or Osiris' giant-step-centric loop
//!   order ([`GscOrder`], [`gsc`]) with diagonals regenerated from one limb ([`of_limb`]);
//! - [`Strategy::Auto`]: the cheapest plan (closed-form modular multiplications, [`cost`])
//!   whose giant-step partial sums fit a memory bound ([`plan`]).
//!
//! Every strategy computes the same function; the cleartext twin
//! [`Diagonals::evaluate_plain`] is the oracle of the tests.

pub mod bsgs;
pub mod cost;
pub mod diagonals;
pub mod gsc;
pub mod mxv_hybrid;
pub mod of_limb;
pub mod plan;

use std::collections::BTreeMap;

use basalt_ckks::{Ciphertext, CkksError, Encoder, Evaluator, Parameters, Plaintext};
use serde::{Deserialize, Serialize};

pub use bsgs::Split;
pub use diagonals::{Diagonals, dense_matvec, rotate_slots};
pub use plan::Plan;

use crate::accounting::OpCounts;
use crate::error::{CircuitError, Result};

/// How rotations share key-switching work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hoisting {
    /// Every rotation decomposes its own input.
    None,
    /// Baby-step rotations share one Decompose + ModUp of the input.
    Single,
    /// Single hoisting, and the giant-step rotations are left in `Q∪P` and summed before one
    /// ModDown (see [`bsgs`] for what of Bossuat et al.'s scheme this covers).
    Double,
}

/// Loop order of a BSGS transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GscOrder {
    /// Lattigo's order: all baby-step rotations first, then one giant step at a time; the
    /// diagonals are encoded beforehand at every limb.
    BabyStepCentric,
    /// Osiris' giant-step-centric order: one baby-step rotation at a time, feeding at most
    /// `max_partials` giant-step partial sums; diagonals regenerated from one limb per use.
    GiantStepCentric { max_partials: usize },
}

/// How to evaluate a transform.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// One rotation per non-zero diagonal (`Hoisting::Double` is treated as `Single`).
    Diagonal { hoisting: Hoisting },
    /// Baby-step giant-step with `n1` baby steps (`1 ≤ n1 ≤ slots`).
    Bsgs { n1: usize, hoisting: Hoisting, order: GscOrder },
    /// The plan of least predicted modular multiplications with at most `max_partials`
    /// giant-step partial sums alive (Osiris keeps `n2 ≤ 4` on chip).
    Auto { max_partials: usize },
}

/// Where the plaintext diagonals come from at evaluation time.
#[derive(Clone, Debug)]
pub(crate) enum DiagStore {
    /// Encoded once at every limb of the transform's level, keyed by (giant j, baby i).
    Encoded(BTreeMap<(usize, usize), Plaintext>),
    /// One limb's worth per diagonal, re-encoded at every use (OF-Limb).
    OfLimb(BTreeMap<(usize, usize), of_limb::OfLimbDiagonal>),
}

/// A plaintext matrix prepared for one parameter set, level and strategy.
#[derive(Clone, Debug)]
pub struct LinearTransform {
    pub(crate) diags: Diagonals,
    pub(crate) plan: Plan,
    pub(crate) split: Split,
    pub(crate) level: usize,
    pub(crate) pt_scale: f64,
    pub(crate) store: DiagStore,
    pub(crate) params: Parameters,
    pub(crate) encoder: Encoder,
}

impl LinearTransform {
    /// Resolve `strategy` and encode the diagonals for inputs at `level`.
    ///
    /// # Errors
    /// [`CircuitError::NotEnoughLevels`] at level 0, [`CircuitError::BadBabySteps`], slot
    /// counts the parameters cannot pack, encoding errors.
    pub fn new(
        params: &Parameters,
        diags: Diagonals,
        strategy: Strategy,
        level: usize,
    ) -> Result<LinearTransform> {
        let slots = diags.slots();
        if slots > params.max_slots() {
            return Err(CkksError::BadSlots { slots, max: params.max_slots() }.into());
        }
        let drop = params.primes_per_rescale();
        if level > params.max_level() {
            return Err(CkksError::LevelTooHigh { requested: level, max: params.max_level() }.into());
        }
        if level + 1 < drop + params.base_primes() {
            return Err(CircuitError::NotEnoughLevels { needed: 1, available: 0, level });
        }
        let plan = plan::resolve(params, &diags, strategy, level)?;
        let split = Split::new(&diags.indices(), plan.n1, slots)?;
        let pt_scale: f64 = params.q()[level + 1 - drop..=level].iter().map(|&q| q as f64).product();
        let encoder = Encoder::new(params);
        let store = bsgs::prepare_store(&encoder, &diags, &split, &plan, level, pt_scale)?;
        Ok(LinearTransform {
            diags,
            plan,
            split,
            level,
            pt_scale,
            store,
            params: params.clone(),
            encoder,
        })
    }

    /// Apply the transform to `ct` (at the transform's level) and rescale: the result encrypts
    /// `M·x` at level `level − 1` with the scale of `ct`.
    ///
    /// # Errors
    /// A missing rotation key (named, before any work), a slot or level mismatch.
    pub fn evaluate(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        if ct.slots() != self.diags.slots() {
            return Err(CircuitError::SlotMismatch { expected: self.diags.slots(), found: ct.slots() });
        }
        if ct.level() != self.level {
            return Err(CkksError::LevelMismatch { left: ct.level(), right: self.level }.into());
        }
        bsgs::check_keys(eval, &self.rotations())?;
        let acc = match self.plan.order {
            GscOrder::BabyStepCentric => bsgs::eval_baby_step_centric(self, eval, ct)?,
            GscOrder::GiantStepCentric { max_partials } => {
                gsc::eval_giant_step_centric(self, eval, ct, max_partials)?
            }
        };
        Ok(eval.rescale(&acc)?)
    }

    /// Rotations (slot shifts, left) whose Galois keys the evaluation needs.
    pub fn rotations(&self) -> Vec<i64> {
        self.split.rotations()
    }
    /// The resolved plan.
    pub fn plan(&self) -> Plan {
        self.plan
    }
    pub fn diagonals(&self) -> &Diagonals {
        &self.diags
    }
    pub fn level(&self) -> usize {
        self.level
    }
    /// Scale of the encoded diagonals (the primes the final rescale drops).
    pub fn plaintext_scale(&self) -> f64 {
        self.pt_scale
    }
    /// Bytes of plaintext the transform stores (all limbs, or one limb per diagonal with
    /// OF-Limb).
    pub fn stored_plaintext_bytes(&self) -> u64 {
        let per_limb = self.params.n() as u64 * 8;
        let n = self.diags.len() as u64;
        match &self.store {
            DiagStore::Encoded(_) => n * (self.level as u64 + 1) * per_limb,
            DiagStore::OfLimb(_) => n * per_limb,
        }
    }
    /// Closed-form counts of [`LinearTransform::evaluate`] (see [`cost`]).
    pub fn predicted_cost(&self) -> OpCounts {
        cost::predict(&self.params, &self.split, &self.plan, self.level)
    }
}

/// Rotations needed by `strategy` on `diags` (to generate keys before building an evaluator).
///
/// # Errors
/// As [`LinearTransform::new`].
pub fn rotations_for(
    params: &Parameters,
    diags: &Diagonals,
    strategy: Strategy,
    level: usize,
) -> Result<Vec<i64>> {
    let plan = plan::resolve(params, diags, strategy, level)?;
    Ok(Split::new(&diags.indices(), plan.n1, diags.slots())?.rotations())
}
