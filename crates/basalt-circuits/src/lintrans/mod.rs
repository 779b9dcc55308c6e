//! Linear transforms `y = M·x` on encrypted slot vectors, behind one API.
//!
//! A plaintext matrix ([`Diagonals`], built from a dense matrix or a map of non-zero
//! diagonals) and a [`Strategy`] make a [`LinearTransform`]; [`LinearTransform::evaluate`]
//! applies it to a ciphertext and rescales once, so the output has the input's scale exactly
//! (diagonals are encoded at the scale of the prime(s) the rescale drops, as Lattigo does).
//! [`LinearTransform::unrescaled`] leaves that rescale to the caller (Lattigo's contract), so a
//! product can also sit at the base level.
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

pub mod bench;
pub mod bsgs;
pub mod cost;
pub mod diagonals;
pub mod double;
pub mod gsc;
pub mod mxv_hybrid;
pub mod of_limb;
pub mod plan;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use num_complex::Complex64;

use basalt_ckks::{Ciphertext, CkksError, Encoder, Evaluator, Parameters, Plaintext, PlaintextQP};
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
    /// Bossuat et al.'s full double hoisting: baby steps lazy in `Q∪P`, products with `Q∪P`
    /// diagonals, giant rotations kept in `Q∪P`, one ModDown per transform ([`double`]).
    Double,
}

impl std::str::FromStr for Hoisting {
    type Err = String;

    /// `none`, `single` or `double`, as the CLI, Python and the paper's NH / SH / DH name them.
    fn from_str(s: &str) -> std::result::Result<Hoisting, String> {
        match s {
            "none" => Ok(Hoisting::None),
            "single" => Ok(Hoisting::Single),
            "double" => Ok(Hoisting::Double),
            h => Err(format!("hoisting must be none, single or double, not {h:?}")),
        }
    }
}

/// Loop order of a BSGS transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GscOrder {
    /// Lattigo's order: all baby-step rotations first, then one giant step at a time; the
    /// diagonals are encoded beforehand at every limb.
    BabyStepCentric,
    /// Osiris' giant-step-centric order: one baby-step rotation at a time, feeding at most
    /// `max_partials` giant-step partial sums, so only one rotation and the partials are alive.
    /// With `of_limb` (Osiris, §IV-E) each diagonal is stored as one limb and regenerated at
    /// every use; without it the diagonals are encoded beforehand at every limb, as in the
    /// baby-step-centric order, so the loop order's effect can be measured alone (a machine
    /// without OF-Limb, e.g. CraterLake, running the GSC order).
    GiantStepCentric {
        max_partials: usize,
        #[serde(default = "of_limb_by_default")]
        of_limb: bool,
    },
}

/// Plans serialised before `of_limb` existed meant OF-Limb.
fn of_limb_by_default() -> bool {
    true
}

impl GscOrder {
    /// Whether the diagonals are stored as one limb and regenerated at each use (OF-Limb).
    pub fn of_limb(&self) -> bool {
        matches!(self, GscOrder::GiantStepCentric { of_limb: true, .. })
    }
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
    /// Encoded once over `Q_l ∪ P` (full double hoisting, baby-step-centric).
    EncodedQP(BTreeMap<(usize, usize), PlaintextQP>),
    /// One limb's worth per diagonal, extended from its stored `q_0` limb at every use (OF-Limb).
    OfLimb(BTreeMap<(usize, usize), of_limb::OfLimbDiagonal>),
    /// Nothing stored: each diagonal is computed from its generator and encoded at use.
    OnTheFly,
    /// Nothing encoded: each diagonal is built from the source and encoded (at every limb, or
    /// over `Q_l ∪ P` with double hoisting) just before its product and dropped after it,
    /// outside the trace ([`LinearTransform::encoded_at_use`]). The kernel stream is that of
    /// [`DiagStore::Encoded`] / [`DiagStore::EncodedQP`]: the traced machine holds the
    /// encodings, the host that runs the program for real makes them when they are read so
    /// that at most one is alive.
    AtUse,
    /// Trace mode only: shapes of the diagonals the encoded transform would hold — stored at
    /// every limb, or (`of_limb`, the giant-step-centric order) one limb each as
    /// [`DiagStore::OfLimb`] — so that a symbolic run records what the encoded transform
    /// executes without encoding anything ([`LinearTransform::shapes`]).
    Shapes { of_limb: bool },
}

/// A generator of diagonal `k` (values over the slots), for matrices too large to store
/// as diagonals (the HE-MxV layers).
pub type DiagonalFn = Arc<dyn Fn(usize) -> Vec<Complex64> + Send + Sync>;

/// The matrix of a transform: stored diagonals, or a generator with its non-zero indices.
#[derive(Clone)]
pub enum Source {
    Stored(Diagonals),
    Generated { slots: usize, indices: Vec<usize>, f: DiagonalFn },
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Stored(d) => write!(f, "Stored({} diagonals)", d.len()),
            Source::Generated { slots, indices, .. } => {
                write!(f, "Generated({} diagonals over {slots} slots)", indices.len())
            }
        }
    }
}

impl Source {
    pub fn slots(&self) -> usize {
        match self {
            Source::Stored(d) => d.slots(),
            Source::Generated { slots, .. } => *slots,
        }
    }
    pub fn indices(&self) -> Vec<usize> {
        match self {
            Source::Stored(d) => d.indices(),
            Source::Generated { indices, .. } => indices.clone(),
        }
    }
    /// Diagonal `k` (zeros if absent).
    pub fn diagonal(&self, k: usize) -> Vec<Complex64> {
        match self {
            Source::Stored(d) => d
                .get(k)
                .map(<[Complex64]>::to_vec)
                .unwrap_or_else(|| vec![Complex64::new(0.0, 0.0); d.slots()]),
            Source::Generated { f, .. } => f(k),
        }
    }
}

/// A plaintext matrix prepared for one parameter set, level and strategy.
#[derive(Clone, Debug)]
pub struct LinearTransform {
    pub(crate) source: Source,
    pub(crate) plan: Plan,
    pub(crate) split: Split,
    pub(crate) level: usize,
    pub(crate) pt_scale: f64,
    /// Whether `evaluate` ends with the rescale (false: [`LinearTransform::unrescaled`]).
    pub(crate) rescale: bool,
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
        Self::from_source(params, Source::Stored(diags), strategy, level)
    }

    /// As [`LinearTransform::new`] for any [`Source`]; a generated source stores nothing and
    /// encodes each diagonal when it is used.
    ///
    /// # Errors
    /// As [`LinearTransform::new`]; [`CircuitError::DiagonalOutOfRange`] for a generator index
    /// outside the slots.
    pub fn from_source(
        params: &Parameters,
        source: Source,
        strategy: Strategy,
        level: usize,
    ) -> Result<LinearTransform> {
        Self::from_source_scaled(params, source, strategy, level, 1.0)
    }

    /// As [`LinearTransform::from_source`], but the output scale is the input's times
    /// `scale_ratio` (the diagonals are encoded at the dropped primes times `scale_ratio`):
    /// how bootstrapping's SlotToCoeff brings EvalMod's large scale down to the output scale
    /// without a separate constant product.
    ///
    /// # Errors
    /// As [`LinearTransform::new`]; [`CircuitError::Invalid`] for a non-positive ratio.
    pub fn from_source_scaled(
        params: &Parameters,
        source: Source,
        strategy: Strategy,
        level: usize,
        scale_ratio: f64,
    ) -> Result<LinearTransform> {
        check_scale_ratio(scale_ratio)?;
        Self::build(params, source, strategy, level, Output::Rescaled { scale_ratio })
    }

    /// As [`LinearTransform::from_source_scaled`], but no diagonal is encoded beforehand: each
    /// is built from `source` and encoded just before its product and dropped after it, so the
    /// transform holds its source alone (a generator: a few weights) instead of every diagonal
    /// at every limb of its level (ResNet-20 at N = 2^16: tens of GiB). The encoding runs
    /// outside the trace: a recording reads as the pre-encoded transform's (the machine the
    /// trace models holds the encodings; the host encodes what it reads when it reads it).
    /// Each use costs an embedding and an `l+1`-limb NTT per diagonal.
    ///
    /// # Errors
    /// As [`LinearTransform::from_source_scaled`]; [`CircuitError::Invalid`] for an OF-Limb
    /// order (it regenerates each diagonal from one stored limb already: `from_source`).
    pub fn encoded_at_use(
        params: &Parameters,
        source: Source,
        strategy: Strategy,
        level: usize,
        scale_ratio: f64,
    ) -> Result<LinearTransform> {
        check_scale_ratio(scale_ratio)?;
        let lt = Self::build_with(
            params,
            source,
            strategy,
            level,
            Output::Rescaled { scale_ratio },
            true,
        )?;
        if lt.plan.order.of_limb() {
            return Err(CircuitError::Invalid(
                "OF-Limb regenerates its diagonals from one stored limb already; build it with \
                 from_source"
                    .into(),
            ));
        }
        Ok(lt)
    }

    /// A transform that leaves the rescale to the caller, as Lattigo's
    /// `EvaluateLinearTransformation` does: [`LinearTransform::evaluate`] returns the sum of
    /// products at the input's level with scale `input × pt_scale`. Unlike a rescaled transform
    /// it may sit at the base level (`q_0` alone), where no rescale is possible — Osiris'
    /// Eq. (1) times a product at every level `0 ≤ ℓ ≤ L_eff`.
    ///
    /// # Errors
    /// As [`LinearTransform::from_source`], except the level needs no prime to drop;
    /// [`CircuitError::Invalid`] for a non-positive `pt_scale`.
    pub fn unrescaled(
        params: &Parameters,
        source: Source,
        strategy: Strategy,
        level: usize,
        pt_scale: f64,
    ) -> Result<LinearTransform> {
        if !(pt_scale.is_finite() && pt_scale > 0.0) {
            return Err(CircuitError::Invalid(format!("plaintext scale {pt_scale} must be > 0")));
        }
        Self::build(params, source, strategy, level, Output::Unrescaled { pt_scale })
    }

    fn build(
        params: &Parameters,
        source: Source,
        strategy: Strategy,
        level: usize,
        output: Output,
    ) -> Result<LinearTransform> {
        Self::build_with(params, source, strategy, level, output, false)
    }

    /// [`LinearTransform::build`]; `at_use` leaves the store to [`DiagStore::AtUse`].
    fn build_with(
        params: &Parameters,
        source: Source,
        strategy: Strategy,
        level: usize,
        output: Output,
        at_use: bool,
    ) -> Result<LinearTransform> {
        let slots = source.slots();
        if let Some(&k) = source.indices().iter().find(|&&k| k >= slots) {
            return Err(CircuitError::DiagonalOutOfRange { index: k as i64, slots });
        }
        if source.indices().is_empty() {
            return Err(CircuitError::EmptyMatrix);
        }
        if slots > params.max_slots() {
            return Err(CkksError::BadSlots { slots, max: params.max_slots() }.into());
        }
        let drop = params.primes_per_rescale();
        if level > params.max_level() {
            return Err(
                CkksError::LevelTooHigh { requested: level, max: params.max_level() }.into()
            );
        }
        let pt_scale = match output {
            Output::Rescaled { scale_ratio } => {
                if level + 1 < drop + params.base_primes() {
                    return Err(CircuitError::NotEnoughLevels { needed: 1, available: 0, level });
                }
                let dropped: f64 =
                    params.q()[level + 1 - drop..=level].iter().map(|&q| q as f64).product();
                dropped * scale_ratio
            }
            Output::Unrescaled { pt_scale } => pt_scale,
        };
        let plan = plan::resolve(params, &source.indices(), slots, strategy, level)?;
        let split = Split::new(&source.indices(), plan.n1, slots)?;
        let encoder = Encoder::new(params);
        let store = if at_use {
            DiagStore::AtUse
        } else {
            bsgs::prepare_store(&encoder, &source, &split, &plan, level, pt_scale)?
        };
        Ok(LinearTransform {
            source,
            plan,
            split,
            level,
            pt_scale,
            rescale: matches!(output, Output::Rescaled { .. }),
            store,
            params: params.clone(),
            encoder,
        })
    }

    /// A shape-only transform for trace mode: the plan, split and kernel stream of the
    /// pre-encoded transform with these non-zero diagonal `indices`, built in microseconds (no
    /// diagonal is computed or encoded). Evaluating it on a real ciphertext is an error.
    ///
    /// # Errors
    /// As [`LinearTransform::from_source_scaled`].
    pub fn shapes(
        params: &Parameters,
        indices: Vec<usize>,
        slots: usize,
        strategy: Strategy,
        level: usize,
        scale_ratio: f64,
    ) -> Result<LinearTransform> {
        let source = zeros(slots, indices);
        Ok(Self::from_source_scaled(params, source, strategy, level, scale_ratio)?.shape_only())
    }

    /// As [`LinearTransform::shapes`] for [`LinearTransform::unrescaled`], the diagonals at
    /// the parameters' default scale.
    ///
    /// # Errors
    /// As [`LinearTransform::unrescaled`].
    pub fn shapes_unrescaled(
        params: &Parameters,
        indices: Vec<usize>,
        slots: usize,
        strategy: Strategy,
        level: usize,
    ) -> Result<LinearTransform> {
        let source = zeros(slots, indices);
        let scale = params.default_scale();
        Ok(Self::unrescaled(params, source, strategy, level, scale)?.shape_only())
    }

    fn shape_only(mut self) -> LinearTransform {
        // `prepare_store` keeps one limb per diagonal exactly when the order asks for OF-Limb.
        let of_limb = self.plan.order.of_limb();
        self.store = DiagStore::Shapes { of_limb };
        self
    }

    /// Apply the transform to `ct` (at the transform's level) and rescale: the result encrypts
    /// `M·x` at level `level − 1` with the scale of `ct` (times the scale ratio of
    /// [`LinearTransform::from_source_scaled`], if any); an [`LinearTransform::unrescaled`]
    /// transform stops before the rescale. A symbolic (trace-mode) `ct` runs the same code on
    /// shapes and records the same kernels.
    ///
    /// # Example
    /// ```
    /// use basalt_circuits::lintrans::{Diagonals, LinearTransform, Strategy, dense_matvec};
    /// use basalt_circuits::testing::{Ctx, random_matrix, toy_params};
    /// let params = toy_params(10, 2, 40, 3); // insecure toy ring
    /// let m = random_matrix(16, 16, 1.0, 1);
    /// let diags = Diagonals::from_dense_real(&m, 16)?;
    /// let lt = LinearTransform::new(&params, diags, Strategy::Auto { max_partials: 4 }, 2)?;
    /// let ctx = Ctx::new(&params, &lt.rotations())?;
    /// let x: Vec<f64> = (0..16).map(|i| i as f64 / 16.0).collect();
    /// let y = lt.evaluate(&ctx.eval, &ctx.encrypt_real(&x, 16, 2)?)?;
    /// let have = ctx.decrypt(&y)?;
    /// for (w, h) in dense_matvec(&m, &x).iter().zip(&have) {
    ///     assert!((w - h.re).abs() < 1e-4);
    /// }
    /// # Ok::<(), basalt_circuits::CircuitError>(())
    /// ```
    ///
    /// # Errors
    /// A missing rotation key (named, before any work), a slot or level mismatch.
    pub fn evaluate(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        if ct.slots() != self.source.slots() {
            return Err(CircuitError::SlotMismatch {
                expected: self.source.slots(),
                found: ct.slots(),
            });
        }
        if ct.level() != self.level {
            return Err(CkksError::LevelMismatch { left: ct.level(), right: self.level }.into());
        }
        bsgs::check_keys(eval, &self.rotations())?;
        let acc = match self.plan.order {
            GscOrder::BabyStepCentric => bsgs::eval_baby_step_centric(self, eval, ct)?,
            GscOrder::GiantStepCentric { max_partials, .. } => {
                gsc::eval_giant_step_centric(self, eval, ct, max_partials)?
            }
        };
        if self.rescale { Ok(eval.rescale(&acc)?) } else { Ok(acc) }
    }

    /// `Σ_k M_k·x_k` for transforms with the same level, slots and plan (e.g. an RNN step's
    /// `W_0·h + W_1·x`), rescaled once. The baby-step rotations of every input by `i` run back
    /// to back, so a machine that keeps the Galois key on chip reads it once for all inputs
    /// (CraterLake's compiler orders operations for operand reuse, §6), and the inputs' partial
    /// sums share each giant-step rotation (rotations are linear): `n2 − 1` giant rotations
    /// instead of `k·(n2 − 1)`. The result equals the sum of the [`LinearTransform::evaluate`]s
    /// up to rounding.
    ///
    /// # Errors
    /// [`CircuitError::Invalid`] for no terms, transforms that differ in level, slots or plan,
    /// or double hoisting (either loop order with no or single hoisting is summed; in the
    /// giant-step-centric order each baby step rotates every input in one pass); as
    /// [`LinearTransform::evaluate`].
    pub fn evaluate_sum(
        eval: &Evaluator,
        terms: &[(&LinearTransform, &Ciphertext)],
    ) -> Result<Ciphertext> {
        let Some(&(first, _)) = terms.first() else {
            return Err(CircuitError::Invalid("a sum of no transforms".into()));
        };
        let plan = first.plan;
        if plan.hoisting == Hoisting::Double {
            return Err(CircuitError::Invalid(format!(
                "summed transforms need no or single hoisting, got {plan:?}"
            )));
        }
        for &(lt, ct) in terms {
            if lt.plan != plan || lt.split != first.split || lt.level != first.level {
                return Err(CircuitError::Invalid(
                    "summed transforms must share level, plan and split".into(),
                ));
            }
            if ct.slots() != lt.source.slots() {
                return Err(CircuitError::SlotMismatch {
                    expected: lt.source.slots(),
                    found: ct.slots(),
                });
            }
            if ct.level() != lt.level {
                return Err(CkksError::LevelMismatch { left: ct.level(), right: lt.level }.into());
            }
        }
        bsgs::check_keys(eval, &first.rotations())?;
        let sum = match plan.order {
            GscOrder::BabyStepCentric => bsgs::eval_sum_baby_step_centric(eval, terms)?,
            GscOrder::GiantStepCentric { max_partials, .. } => {
                gsc::eval_sum_giant_step_centric(eval, terms, max_partials)?
            }
        };
        Ok(eval.rescale(&sum)?)
    }

    /// Rotations (slot shifts, left) whose Galois keys the evaluation needs.
    pub fn rotations(&self) -> Vec<i64> {
        self.split.rotations()
    }
    /// Nest the giant steps with outer stride `n12` ([`Split::with_outer`]): the same product,
    /// with the distinct inner and outer shifts as Galois keys instead of every giant shift.
    ///
    /// # Errors
    /// [`CircuitError::Invalid`] for a stride [`Split::with_outer`] refuses, or with double
    /// hoisting (its giant steps stay in `Q∪P`, one lazy key switch each).
    pub fn with_outer_giant_steps(mut self, n12: usize) -> Result<LinearTransform> {
        if self.plan.hoisting == Hoisting::Double {
            return Err(CircuitError::Invalid(
                "nested giant steps need no or single hoisting".into(),
            ));
        }
        self.split = self.split.clone().with_outer(n12, self.source.slots())?;
        Ok(self)
    }

    /// The BSGS split of the diagonals (baby and giant indices).
    pub fn split(&self) -> &Split {
        &self.split
    }
    /// Number of giant steps (live partial sums without grouping).
    pub fn split_n2(&self) -> usize {
        self.split.n2()
    }
    /// The resolved plan.
    pub fn plan(&self) -> Plan {
        self.plan
    }
    pub fn source(&self) -> &Source {
        &self.source
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
        let n = self.split.diagonals() as u64;
        match &self.store {
            DiagStore::Encoded(_) => n * (self.level as u64 + 1) * per_limb,
            DiagStore::EncodedQP(_) => {
                n * (self.level as u64 + 1 + self.params.k_at(self.level) as u64) * per_limb
            }
            DiagStore::OfLimb(_) | DiagStore::Shapes { of_limb: true } => n * per_limb,
            DiagStore::OnTheFly | DiagStore::AtUse => 0,
            DiagStore::Shapes { of_limb: false } => {
                let k = if self.plan.hoisting == Hoisting::Double {
                    self.params.k_at(self.level)
                } else {
                    0
                };
                n * (self.level as u64 + 1 + k as u64) * per_limb
            }
        }
    }

    /// The plaintext of pre-rotated diagonal `(j, i)` at the transform's level; shape-only
    /// (emitting the regeneration NTTs a real one would run) for a symbolic input.
    pub(crate) fn plaintext(
        &self,
        j: usize,
        i: usize,
        symbolic: bool,
    ) -> Result<Cow<'_, Plaintext>> {
        if symbolic {
            if self.regenerates() {
                self.load_stored_limb();
                basalt_trace::emit(basalt_trace::Kernel::Ntt {
                    n: self.params.n() as u32,
                    limbs: self.level as u32 + 1,
                });
            }
            let mut pt = Plaintext::symbolic(&self.params, self.level)?;
            pt.set_scale(self.pt_scale);
            return Ok(Cow::Owned(pt));
        }
        match &self.store {
            DiagStore::Encoded(m) => Ok(Cow::Borrowed(&m[&(j, i)])),
            DiagStore::OfLimb(m) => {
                self.load_stored_limb();
                Ok(Cow::Owned(m[&(j, i)].regenerate(&self.params, self.level)?))
            }
            DiagStore::OnTheFly => {
                let v = bsgs::prerotated(&self.source, self.split.n1, j, i);
                let slots = self.source.slots();
                Ok(Cow::Owned(self.encoder.encode(&v, slots, self.level, self.pt_scale)?))
            }
            DiagStore::AtUse => {
                let v = bsgs::prerotated(&self.source, self.split.n1, j, i);
                let slots = self.source.slots();
                let pt = untraced(|| self.encoder.encode(&v, slots, self.level, self.pt_scale));
                Ok(Cow::Owned(pt?))
            }
            DiagStore::EncodedQP(_) => Err(CircuitError::NoFeasiblePlan(
                "diagonals are stored over Q∪P; use the double-hoisted path".into(),
            )),
            DiagStore::Shapes { .. } => Err(CkksError::Symbolic.into()),
        }
    }

    /// As [`LinearTransform::plaintext`], over `Q_l ∪ P` (full double hoisting): stored,
    /// extended from the stored `q_0` limb (`l+1+k` NTTs), or encoded from the generator.
    pub(crate) fn plaintext_qp(
        &self,
        j: usize,
        i: usize,
        symbolic: bool,
    ) -> Result<Cow<'_, PlaintextQP>> {
        if symbolic {
            if self.regenerates() {
                self.load_stored_limb();
                basalt_trace::emit(basalt_trace::Kernel::Ntt {
                    n: self.params.n() as u32,
                    limbs: (self.level + 1 + self.params.k_at(self.level)) as u32,
                });
            }
            let mut pt = PlaintextQP::symbolic(&self.params, self.level)?;
            pt.set_scale(self.pt_scale);
            return Ok(Cow::Owned(pt));
        }
        match &self.store {
            DiagStore::EncodedQP(m) => Ok(Cow::Borrowed(&m[&(j, i)])),
            DiagStore::OfLimb(m) => {
                self.load_stored_limb();
                Ok(Cow::Owned(m[&(j, i)].regenerate_qp(&self.params, self.level)?))
            }
            DiagStore::OnTheFly => {
                let v = bsgs::prerotated(&self.source, self.split.n1, j, i);
                let slots = self.source.slots();
                Ok(Cow::Owned(self.encoder.encode_qp(&v, slots, self.level, self.pt_scale)?))
            }
            DiagStore::AtUse => {
                let v = bsgs::prerotated(&self.source, self.split.n1, j, i);
                let slots = self.source.slots();
                let pt = untraced(|| self.encoder.encode_qp(&v, slots, self.level, self.pt_scale));
                Ok(Cow::Owned(pt?))
            }
            DiagStore::Encoded(_) => Err(CircuitError::NoFeasiblePlan(
                "diagonals are stored over Q only; the double-hoisted path needs Q∪P".into(),
            )),
            DiagStore::Shapes { .. } => Err(CkksError::Symbolic.into()),
        }
    }

    /// Closed-form counts of [`LinearTransform::evaluate`] (see [`cost`]).
    pub fn predicted_cost(&self) -> OpCounts {
        let mut c = cost::predict(
            &self.params,
            &self.split,
            &self.plan,
            self.level,
            self.regenerates(),
            self.rescale,
        );
        if self.plaintexts_on_chip() {
            // OF-Limb: each use loads the one stored limb, the product loads nothing.
            c.plaintext_bytes = self.split.diagonals() as u64 * self.params.n() as u64 * 8;
        }
        c
    }

    /// Whether each use builds its plaintext (NTTs) rather than reading a stored encoding.
    fn regenerates(&self) -> bool {
        !matches!(
            self.store,
            DiagStore::Encoded(_)
                | DiagStore::EncodedQP(_)
                | DiagStore::AtUse
                | DiagStore::Shapes { of_limb: false }
        )
    }

    /// Whether the plaintexts products read were built on chip from one stored limb (OF-Limb):
    /// the product then loads nothing, the generator loaded that limb
    /// ([`basalt_trace::plaintexts_on_chip`]).
    pub(crate) fn plaintexts_on_chip(&self) -> bool {
        matches!(self.store, DiagStore::OfLimb(_) | DiagStore::Shapes { of_limb: true })
    }

    /// Record the load of a diagonal's one stored limb (OF-Limb, Osiris §IV-E: `N` words).
    fn load_stored_limb(&self) {
        if self.plaintexts_on_chip() {
            basalt_trace::emit(basalt_trace::Kernel::PlainLoad {
                n: self.params.n() as u32,
                limbs: 1,
            });
        }
    }
}

/// Run `f` with its kernels kept out of any open recording: host-side preparation (encoding a
/// plaintext the traced machine would hold already encoded), not part of the program's trace.
pub fn untraced<R>(f: impl FnOnce() -> R) -> R {
    if basalt_trace::is_recording() { basalt_trace::record(f).0 } else { f() }
}

/// A source of zero diagonals at `indices` (shape-only transforms).
fn zeros(slots: usize, indices: Vec<usize>) -> Source {
    let f: DiagonalFn = Arc::new(move |_| vec![Complex64::new(0.0, 0.0); slots]);
    Source::Generated { slots, indices, f }
}

/// How a transform ends: rescaled (the diagonals at the dropped primes times a ratio) or left
/// to the caller (the diagonals at a given scale).
#[derive(Clone, Copy)]
enum Output {
    Rescaled { scale_ratio: f64 },
    Unrescaled { pt_scale: f64 },
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
    let plan = plan::resolve(params, &diags.indices(), diags.slots(), strategy, level)?;
    Ok(Split::new(&diags.indices(), plan.n1, diags.slots())?.rotations())
}

/// A transform's output-scale ratio must be a positive finite number.
fn check_scale_ratio(scale_ratio: f64) -> Result<()> {
    if scale_ratio.is_finite() && scale_ratio > 0.0 {
        Ok(())
    } else {
        Err(CircuitError::Invalid(format!("scale ratio {scale_ratio} must be > 0")))
    }
}
