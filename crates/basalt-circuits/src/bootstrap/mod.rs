//! CKKS bootstrapping: refresh a ciphertext at the last level to a high level, fully packed or
//! sparse, with dense or sparse secrets.
//!
//! # Pipeline
//! 1. **Scale to the message ratio**: multiply by an integer so that `Q_0/Δ = 2^ratio`
//!    (the message must be small against `Q_0` for the sine to be linear; Lattigo's
//!    `LogMessageRatio`).
//! 2. **Encapsulation** (optional): switch to a sparse ephemeral secret `s'` of weight `h'`
//!    (e.g. 32) with a key that lives only modulo `Q_0·P_0` — secure for a sparse secret because
//!    the modulus is small — so that `|I| < K` holds for a small `K` even with a dense secret
//!    (Bossuat et al., CT-RSA 2022).
//! 3. **ModRaise** ([`basalt_ckks::Evaluator::mod_raise`]): reinterpret modulo `Q_L`; the
//!    message becomes `t = m + Q_0·I`. With encapsulation, switch back to `s` at the top level.
//! 4. **SubSum** (sparse only): `log2(N/2n)` rotations that project `t` onto the subring of the
//!    `n`-slot encoding.
//! 5. **CoeffToSlot** ([`dft`]): the inverse special FFT in `cts_levels` BSGS transforms, then
//!    conjugation to split real and imaginary parts (two ciphertexts when fully packed, one of
//!    `2n` slots when sparse). Every slot now holds `x = t_j/(K·Q_0) ∈ [−1, 1]`.
//! 6. **EvalMod** ([`evalmod`]): `sin(2π·K·x) = sin(2π·t_j/Q_0) ≈ 2π·m_j/Q_0`.
//! 7. **SlotToCoeff** ([`dft`]): the special FFT in `stc_levels` transforms; the output
//!    encrypts the input's slots at the input's scale.
//!
//! All constants (the `1/(K·Q_0)`, the SubSum factor, the ½ of the real/imaginary split, the
//! `Q_0/(2πΔ)` of the sine) are folded into the DFT matrices or into exact scale bookkeeping,
//! so no stage spends a level on a constant.
//!
//! # Levels
//! `cts_levels + evalmod.depth() + stc_levels` (each `c` primes with double-prime scaling);
//! with Lattigo's defaults `4 + 8 + 3 = 15`, leaving 9 of `N16QP1546H192H32`'s 24.
//!
//! # Source
//! Cheon, Han, Kim, Kim, Song (EUROCRYPT 2018, SAC 2018); Bossuat, Mouchet, Troncoso-Pastoriza,
//! Hubaux (EUROCRYPT 2021); Lattigo `circuits/ckks/bootstrapping`; FAB §1.5 and Osiris §2 for
//! the parameter choices.

pub mod bench;
pub mod config;
pub mod dft;
pub mod evalmod;
mod keys;
pub mod trace;

use std::borrow::Cow;
use std::time::Instant;

use basalt_ckks::{Ciphertext, Evaluator, Parameters};
use serde::{Deserialize, Serialize};

pub use config::BootstrapConfig;
pub use evalmod::EvalModConfig;
pub use keys::Encapsulation;

use crate::error::{CircuitError, Result};
use crate::lintrans::{self, GscOrder, LinearTransform, Strategy};
use crate::polynomial::Chebyshev;

/// Levels each stage consumes and what is left, for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelBudget {
    pub cts: usize,
    pub evalmod: usize,
    pub stc: usize,
    /// Level of the output (logical levels left for computation).
    pub output_level: usize,
}

/// Wall time per stage of one bootstrap, in milliseconds, and the calling thread's CPU time
/// (`*_cpu_ms`: the robust figure on a shared machine when the pool has one thread, since
/// the work then runs on the calling thread).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageTimes {
    pub mod_raise_ms: f64,
    pub subsum_ms: f64,
    pub cts_ms: f64,
    pub evalmod_ms: f64,
    pub stc_ms: f64,
    pub total_ms: f64,
    pub cts_cpu_ms: f64,
    pub evalmod_cpu_ms: f64,
    pub stc_cpu_ms: f64,
    pub total_cpu_ms: f64,
}

/// The precomputed circuit for one parameter set and slot count.
#[derive(Clone, Debug)]
pub struct Bootstrapper {
    params: Parameters,
    cfg: BootstrapConfig,
    slots: usize,
    cts: Vec<LinearTransform>,
    stc: Vec<LinearTransform>,
    sine: Chebyshev,
    budget: LevelBudget,
    /// Level CoeffToSlot starts at.
    cts_level: usize,
    /// The nominal `Q_0/(2π·Δ_m)` folded into SlotToCoeff.
    a0: f64,
    /// SlotToCoeff's output scale over its input scale.
    stc_scale: f64,
    /// EvalMod's scale `S_e`: see [`evalmod_scale`].
    s_e: f64,
}

/// `Q_0`: the product of the base primes (ModRaise's modulus).
fn base_modulus(params: &Parameters) -> f64 {
    params.q()[..params.base_primes()].iter().map(|&q| q as f64).product()
}

/// EvalMod's scale `S_e`: the product of the primes its first rescale drops (at `level`), not
/// the nominal `2^evalmod.log_scale`. The Chebyshev powers square their scale at every level
/// (`S_{2k} = S_k²/D`), so an input scale off by `2^δ` from the dropped primes `D` puts `T_16`
/// off by `2^{16δ}`, and the giant-step quotients are then asked for scales `2^{16δ}` below
/// `S_e`, where the rescale noise is that much larger relative to their values. CraterLake's
/// two-residue levels (primes of 27.67–28 bits) are `2^{−0.56}` below `2^56` at the top of
/// EvalMod: `T_16` sat at `2^{64.3}` and the bootstrap lost 7 bits at N = 2^12, 10 at 2^16
/// (`examples/btp_stages.rs`, docs/bootstrapping.md).
fn evalmod_scale(params: &Parameters, level: usize) -> f64 {
    let c = params.primes_per_rescale();
    params.q()[level + 1 - c..=level].iter().map(|&q| q as f64).product()
}

/// log2 `Q_0/Δ` for `slots` slots: the config's ratio (meant for full packing) plus half of
/// `log2(N/2n)`. A coefficient of `n` slots of magnitude ≤ 1 is about `1/√n`, so fewer slots
/// mean larger coefficients; the extra ratio keeps them as small against `Q_0` as with full
/// packing, where `sin(2πε) ≈ 2πε` is accurate to `(2πε)²/6`.
fn message_ratio(params: &Parameters, cfg: &BootstrapConfig, slots: usize) -> f64 {
    let sparsity = (params.max_slots() / slots).trailing_zeros() as f64;
    cfg.log_message_ratio + sparsity / 2.0
}

/// The largest power-of-two input scale `ratio` allows at level 0.
fn max_input_scale(params: &Parameters, ratio: f64) -> f64 {
    (base_modulus(params).log2() - ratio).floor().exp2()
}

struct Layout {
    skip: usize,
    cts_levels: usize,
    stc_levels: usize,
    budget: LevelBudget,
}

/// Where the stages sit in the chain; checks that they fit.
fn layout(params: &Parameters, cfg: &BootstrapConfig) -> Result<Layout> {
    let c = params.primes_per_rescale();
    let log_n = cfg.log_slots as usize;
    let cts_levels = cfg.cts_levels.clamp(1, log_n.max(1));
    let stc_levels = cfg.stc_levels.clamp(1, log_n.max(1));
    let em_depth = cfg.evalmod.depth();
    // The chain is laid out for cfg.cts_levels CoeffToSlot levels: with fewer DFT stages than
    // that (few slots), the unused top levels are skipped so that EvalMod still runs on its
    // own primes (a scale far from the primes would drift through the powers).
    let skip = cfg.cts_levels.saturating_sub(cts_levels);
    let need = skip + cts_levels + em_depth + stc_levels;
    let top = params.max_level();
    let available = (top + 1 - params.base_primes()) / c;
    if need > available {
        return Err(CircuitError::NotEnoughLevels { needed: need, available, level: top });
    }
    let budget = LevelBudget {
        cts: cts_levels,
        evalmod: em_depth,
        stc: stc_levels,
        output_level: top - need * c,
    };
    Ok(Layout { skip, cts_levels, stc_levels, budget })
}

impl BootstrapConfig {
    /// [`Bootstrapper::max_input_scale`] without building the circuit (a program that only
    /// places bootstraps needs it, not the DFT matrices).
    pub fn max_input_scale(&self, params: &Parameters) -> f64 {
        max_input_scale(params, message_ratio(params, self, 1 << self.log_slots))
    }

    /// The levels each stage takes on `params` and the output level, without building the
    /// circuit.
    ///
    /// # Errors
    /// [`CircuitError::NotEnoughLevels`] if the stages do not fit the chain.
    pub fn budget(&self, params: &Parameters) -> Result<LevelBudget> {
        Ok(layout(params, self)?.budget)
    }
}

/// A fixed BSGS split counts its baby steps along the matrix's diagonal stride: a DFT factor
/// of late butterfly stages has diagonals only at multiples of `2^s`, and `n1` baby steps one
/// slot apart would put every diagonal in its own giant step (one rotation per diagonal, no
/// baby-step sharing). Lattigo's split does the same (`FindBestBSGSRatio` searches `N1` in
/// slot units, so it lands on multiples of the stride). In the giant-step-centric order `n1`
/// is then doubled until the giant steps fit the on-chip partial sums: Osiris reduces `n2`
/// rather than spilling partials (§IV-E).
fn along_stride(s: Strategy, indices: &[usize], slots: usize) -> Result<Strategy> {
    let Strategy::Bsgs { n1, hoisting, order } = s else { return Ok(s) };
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let stride = indices.iter().fold(slots, |g, &k| gcd(g, k)).max(1);
    let mut n1 = n1.saturating_mul(stride).min(slots);
    if let GscOrder::GiantStepCentric { max_partials, .. } = order {
        while n1 > 0 && n1 < slots && lintrans::Split::new(indices, n1, slots)?.n2() > max_partials
        {
            n1 = (2 * n1).min(slots);
        }
    }
    Ok(Strategy::Bsgs { n1, hoisting, order })
}

/// How a [`Bootstrapper`]'s transforms hold their diagonals.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Store {
    /// Encoded once at every limb of their level.
    Encoded,
    /// In the clear, encoded at each use.
    AtUse,
    /// Shapes only (trace mode).
    Shapes,
}

impl Bootstrapper {
    /// Build CoeffToSlot, SlotToCoeff and the EvalMod polynomial for `params` and `cfg`.
    ///
    /// # Errors
    /// [`CircuitError::NotEnoughLevels`] if the three stages do not fit the chain,
    /// [`CircuitError::Invalid`] for a slot count the ring cannot pack or a bad config.
    pub fn new(params: &Parameters, cfg: BootstrapConfig) -> Result<Bootstrapper> {
        Self::build(params, cfg, Store::Encoded)
    }

    /// The same circuit holding its DFT diagonals in the clear and encoding each just before
    /// its product ([`LinearTransform::encoded_at_use`]): at N = 2^16 with 2^15 slots a few
    /// hundred MiB instead of GiBs of plaintexts at the top levels, for a few NTTs per diagonal
    /// at every bootstrap. It computes what [`Bootstrapper::new`]'s does and records the same
    /// trace (the encoding is host-side, outside it).
    ///
    /// # Errors
    /// As [`Bootstrapper::new`].
    pub fn encoded_at_use(params: &Parameters, cfg: BootstrapConfig) -> Result<Bootstrapper> {
        Self::build(params, cfg, Store::AtUse)
    }

    /// The same circuit with shape-only transforms, for trace mode: the plans and the kernel
    /// stream of [`Bootstrapper::new`]'s circuit without encoding a diagonal (a second at
    /// N = 2^16 instead of ~15 s and GBs). Bootstrapping a real ciphertext with it is an error.
    ///
    /// # Errors
    /// As [`Bootstrapper::new`].
    pub fn symbolic(params: &Parameters, cfg: BootstrapConfig) -> Result<Bootstrapper> {
        Self::build(params, cfg, Store::Shapes)
    }

    fn build(params: &Parameters, cfg: BootstrapConfig, store: Store) -> Result<Bootstrapper> {
        let slots = 1usize << cfg.log_slots;
        if slots > params.max_slots() {
            return Err(CircuitError::Invalid(format!(
                "{slots} slots exceed the {} of N = {}",
                params.max_slots(),
                params.n()
            )));
        }
        let c = params.primes_per_rescale();
        let Layout { skip, cts_levels, stc_levels, budget } = layout(params, &cfg)?;
        let em_depth = budget.evalmod;
        let top = params.max_level();
        let sine = cfg.evalmod.polynomial()?;
        let q0 = base_modulus(params);
        let sparse = slots < params.max_slots();
        let subsum = (params.max_slots() / slots) as f64;
        // CoeffToSlot maps decode(t)/S_e to t/(K·Q_0): the factor S_e/(K·Q_0), divided by the
        // SubSum's N/2n and by the 2 of `ct ± conj(ct)`.
        let s_e = evalmod_scale(params, top - (skip + cts_levels) * c);
        let c_cts = s_e / (cfg.evalmod.k * q0 * subsum * 2.0);
        let mut cts_m = dft::coeff_to_slot(slots, cts_levels, c_cts);
        // SlotToCoeff multiplies by the sine's nominal Q_0/(2π·Δ_m) = 2^ratio/2π and brings
        // EvalMod's scale S_e down to the default scale: the EvalMod output stays at a scale
        // near its primes, where its rounding noise is negligible against the small
        // 2π·m/Q_0 it carries (relabelling it down to Δ first costs ~6 bits at N = 2^16).
        let ratio = message_ratio(params, &cfg, slots);
        let a0 = ratio.exp2() / (2.0 * std::f64::consts::PI);
        // The output scale the circuit is built for: the set's default, or the largest input
        // scale the message ratio allows if that is lower (FAB: Δ = q_0 = 2^54).
        let out_nominal = params.default_scale().min(max_input_scale(params, ratio));
        let stc_scale = out_nominal / s_e;
        let mut stc_m = dft::slot_to_coeff(slots, stc_levels, a0);
        let mut cts_slots = vec![slots; cts_m.len()];
        let mut stc_slots = vec![slots; stc_m.len()];
        if sparse {
            let last = cts_m.len() - 1;
            cts_m[last] = dft::lift_masked(&cts_m[last]);
            cts_slots[last] = 2 * slots;
            stc_m[0] = dft::lift_recombine(&stc_m[0]);
            stc_slots[0] = 2 * slots;
        }
        let strategy = |level: usize, d: &lintrans::Diagonals| -> Result<Strategy> {
            if let Some(s) = cfg.strategy {
                return along_stride(s, &d.indices(), d.slots());
            }
            // `cfg.hoisting` (by default double hoisting, the fastest on a CPU, which has the
            // memory Osiris' on-the-fly limbs save) in Lattigo's loop order with pre-encoded
            // diagonals. The split: among the
            // n1 whose predicted modular multiplications are within KEY_SLACK of the cheapest
            // (and whose giant steps fit the bound), the one with the fewest rotations — each
            // rotation is a Galois key of ~150 MB at N = 2^16.
            const KEY_SLACK: f64 = 1.5;
            let (idx, slots) = (d.indices(), d.slots());
            let mut cands = Vec::new();
            let mut n1 = 1;
            while n1 <= slots {
                let split = lintrans::Split::new(&idx, n1, slots)?;
                if split.n2() <= cfg.max_giant_steps.max(1) {
                    let plan = lintrans::plan::Plan {
                        n1,
                        hoisting: cfg.hoisting,
                        order: GscOrder::BabyStepCentric,
                    };
                    let cost = lintrans::cost::predict(params, &split, &plan, level, false, true);
                    cands.push((cost.modmults as f64, split.rotations().len(), n1));
                }
                n1 *= 2;
            }
            let best = cands.iter().map(|c| c.0).fold(f64::INFINITY, f64::min);
            let pick = cands
                .iter()
                .filter(|c| c.0 <= best * KEY_SLACK)
                .min_by(|a, b| a.1.cmp(&b.1).then(a.0.total_cmp(&b.0)))
                .ok_or_else(|| CircuitError::NoFeasiblePlan("no BSGS split fits".into()))?;
            Ok(Strategy::Bsgs {
                n1: pick.2,
                hoisting: cfg.hoisting,
                order: GscOrder::BabyStepCentric,
            })
        };
        let mut level = top - skip * c;
        let mut cts = Vec::new();
        for m in &cts_m {
            let d = m.to_diagonals()?;
            let s = strategy(level, &d)?;
            cts.push(match store {
                Store::Shapes => {
                    LinearTransform::shapes(params, d.indices(), d.slots(), s, level, 1.0)?
                }
                Store::Encoded => LinearTransform::new(params, d, s, level)?,
                Store::AtUse => LinearTransform::encoded_at_use(
                    params,
                    lintrans::Source::Stored(d),
                    s,
                    level,
                    1.0,
                )?,
            });
            level -= c;
        }
        debug_assert_eq!(cts.iter().map(|t| t.source().slots()).collect::<Vec<_>>(), cts_slots);
        level -= em_depth * c;
        let mut stc = Vec::new();
        for m in &stc_m {
            let d = m.to_diagonals()?;
            let s = strategy(level, &d)?;
            let per = stc_scale.powf(1.0 / stc_m.len() as f64);
            let source = lintrans::Source::Stored(d);
            stc.push(match store {
                Store::Shapes => {
                    let (idx, slots) = (source.indices(), source.slots());
                    LinearTransform::shapes(params, idx, slots, s, level, per)?
                }
                Store::Encoded => {
                    LinearTransform::from_source_scaled(params, source, s, level, per)?
                }
                Store::AtUse => LinearTransform::encoded_at_use(params, source, s, level, per)?,
            });
            level -= c;
        }
        debug_assert_eq!(stc.iter().map(|t| t.source().slots()).collect::<Vec<_>>(), stc_slots);
        debug_assert_eq!(budget.output_level, level);
        let cts_level = top - skip * c;
        Ok(Bootstrapper {
            params: params.clone(),
            cfg,
            slots,
            cts,
            stc,
            sine,
            budget,
            cts_level,
            a0,
            stc_scale,
            s_e,
        })
    }

    /// log2 `Q_0/Δ` for this circuit's slot count: the config's ratio plus half of `log2(N/2n)`
    /// (fewer slots have larger coefficients; this keeps them as small against `Q_0`).
    pub fn message_ratio(&self) -> f64 {
        message_ratio(&self.params, &self.cfg, self.slots)
    }

    /// The largest power-of-two input scale the message ratio allows at level 0.
    pub fn max_input_scale(&self) -> f64 {
        max_input_scale(&self.params, self.message_ratio())
    }

    /// EvalMod's scale: the product of the primes its first rescale drops (the config's
    /// `evalmod.log_scale` is only nominal).
    pub fn evalmod_scale(&self) -> f64 {
        self.s_e
    }

    pub fn config(&self) -> &BootstrapConfig {
        &self.cfg
    }
    pub fn slots(&self) -> usize {
        self.slots
    }
    pub fn budget(&self) -> LevelBudget {
        self.budget
    }
    /// EvalMod's polynomial (the scaled sine or cosine before the double angles), evaluated
    /// on each CoeffToSlot output.
    pub fn evalmod_polynomial(&self) -> &Chebyshev {
        &self.sine
    }
    /// Level of CoeffToSlot's outputs, EvalMod's input.
    pub fn evalmod_level(&self) -> usize {
        let c = self.params.primes_per_rescale();
        self.cts.last().map_or(self.cts_level, |lt| lt.level() - c)
    }
    /// How many ciphertexts CoeffToSlot hands to EvalMod: two halves (real and imaginary
    /// parts) when fully packed, one when sparse.
    pub fn evalmod_inputs(&self) -> usize {
        if self.slots < self.params.max_slots() { 1 } else { 2 }
    }
    pub fn coeff_to_slot(&self) -> &[LinearTransform] {
        &self.cts
    }
    pub fn slot_to_coeff(&self) -> &[LinearTransform] {
        &self.stc
    }

    /// Every rotation the circuit uses (SubSum, the DFTs, the sparse repacking); conjugation
    /// is needed too.
    pub fn rotations(&self) -> Vec<i64> {
        let mut r: Vec<i64> =
            self.cts.iter().chain(&self.stc).flat_map(|t| t.rotations()).collect();
        let mut k = self.slots;
        while k < self.params.max_slots() {
            r.push(k as i64); // SubSum steps; the first one (the slot count) also repacks.
            k *= 2;
        }
        r.sort_unstable();
        r.dedup();
        r.retain(|&k| k != 0);
        r
    }

    /// Bootstrap `ct` (any level; its slot count must be the bootstrapper's). The output has
    /// the input's scale and slots at level [`LevelBudget::output_level`].
    ///
    /// # Errors
    /// [`CircuitError::SlotMismatch`]; [`CircuitError::Invalid`] if the input scale is too
    /// large for the message ratio or encapsulation keys are missing/unexpected; scheme errors
    /// (a missing key names itself).
    pub fn bootstrap(
        &self,
        eval: &Evaluator,
        enc: Option<&Encapsulation>,
        ct: &Ciphertext,
    ) -> Result<Ciphertext> {
        Ok(self.bootstrap_timed(eval, enc, ct)?.0)
    }

    /// [`Bootstrapper::bootstrap`] with the wall time of each stage.
    ///
    /// # Errors
    /// As [`Bootstrapper::bootstrap`].
    pub fn bootstrap_timed(
        &self,
        eval: &Evaluator,
        enc: Option<&Encapsulation>,
        ct: &Ciphertext,
    ) -> Result<(Ciphertext, StageTimes)> {
        self.bootstrap_with(eval, enc, ct, &basalt_ckks::progress::Silent)
    }

    /// [`Bootstrapper::bootstrap_timed`] reporting its five stages (ModRaise, SubSum,
    /// CoeffToSlot, EvalMod, SlotToCoeff) to `progress`, and stopping between stages when it
    /// cancels.
    ///
    /// # Errors
    /// As [`Bootstrapper::bootstrap`]; cancelled.
    pub fn bootstrap_with(
        &self,
        eval: &Evaluator,
        enc: Option<&Encapsulation>,
        ct: &Ciphertext,
        progress: &dyn basalt_ckks::progress::Progress,
    ) -> Result<(Ciphertext, StageTimes)> {
        let step = |done: u64| progress.step(done).map_err(basalt_ckks::CkksError::from);
        progress.stage("bootstrap", 5);
        let mut times = StageTimes::default();
        let t_all = Instant::now();
        let cpu = basalt_math::bench::thread_cpu_ms;
        let c_all = cpu();
        let out_scale = ct.scale();
        let _r = basalt_trace::region("Bootstrap");
        // Each stage takes its input by value where it can, so that no stage's output outlives
        // the next stage: ModRaise's becomes SubSum's running sum, SubSum's is dropped once
        // CoeffToSlot has dropped it to its level, EvalMod's inputs once it has run (two
        // ciphertexts at the top level, 112 MiB at `CRATERLAKE_80_BOOT`, were otherwise bound
        // until the bootstrap returned).
        let t = Instant::now();
        let (raised, msg_scale) = self.mod_raise(eval, enc, ct)?;
        times.mod_raise_ms = ms(t);
        step(1)?;
        let t = Instant::now();
        let summed = self.sub_sum_into(eval, raised)?;
        times.subsum_ms = ms(t);
        step(2)?;
        let (t, c) = (Instant::now(), cpu());
        let halves = self.coeffs_to_slots_from(eval, Cow::Owned(summed))?;
        (times.cts_ms, times.cts_cpu_ms) = (ms(t), cpu() - c);
        step(3)?;
        let (t, c) = (Instant::now(), cpu());
        let reduced = self.eval_mod(eval, &halves, msg_scale, out_scale)?;
        drop(halves);
        (times.evalmod_ms, times.evalmod_cpu_ms) = (ms(t), cpu() - c);
        step(4)?;
        let (t, c) = (Instant::now(), cpu());
        let x = self.slots_to_coeffs(eval, &reduced)?;
        (times.stc_ms, times.stc_cpu_ms) = (ms(t), cpu() - c);
        step(5)?;
        (times.total_ms, times.total_cpu_ms) = (ms(t_all), cpu() - c_all);
        Ok((x, times))
    }

    /// Steps 1–3: scale to the message ratio, encapsulate, ModRaise (and switch back). The
    /// result is at the top level with scale [`Bootstrapper::evalmod_scale`] (the label
    /// CoeffToSlot's constant expects); also returns the message scale `Δ_m` (input scale × the integer
    /// factor).
    ///
    /// # Errors
    /// As [`Bootstrapper::bootstrap`].
    pub fn mod_raise(
        &self,
        eval: &Evaluator,
        enc: Option<&Encapsulation>,
        ct: &Ciphertext,
    ) -> Result<(Ciphertext, f64)> {
        if ct.slots() != self.slots {
            return Err(CircuitError::SlotMismatch { expected: self.slots, found: ct.slots() });
        }
        match (self.cfg.ephemeral_h, enc) {
            (Some(h), None) => {
                return Err(CircuitError::Invalid(format!(
                    "missing bootstrapping keys: this circuit switches to a sparse ephemeral \
                     secret (weight {h}) and needs its encapsulation keys"
                )));
            }
            (None, Some(_)) => {
                return Err(CircuitError::Invalid(
                    "encapsulation keys given to a circuit without an ephemeral secret".into(),
                ));
            }
            _ => {}
        }
        let params = &self.params;
        if ct.level() + 1 < params.base_primes() {
            return Err(CircuitError::Invalid(format!(
                "a ciphertext at level {} is below the base modulus q_0 ({} primes): it cannot \
                 be bootstrapped",
                ct.level(),
                params.base_primes()
            )));
        }
        let q0 = self.q0();
        let mut x = eval.drop_level(ct, ct.level() + 1 - params.base_primes())?;
        let factor = (q0 / (ct.scale() * 2f64.powf(self.message_ratio()))).round();
        if factor < 1.0 {
            return Err(CircuitError::Invalid(format!(
                "input scale 2^{:.1} is too large: bootstrapping needs Q_0/Δ ≥ 2^{} (log Q_0 = {:.1})",
                ct.scale().log2(),
                self.message_ratio(),
                q0.log2()
            )));
        }
        if factor > 1.0 {
            if factor > i64::MAX as f64 / 4.0 {
                return Err(CircuitError::Invalid("input scale too small to bootstrap".into()));
            }
            x = eval.mul_integer(&x, factor as i64)?;
        }
        let msg_scale = ct.scale() * factor;
        if let Some(e) = enc {
            x = e.to_sparse(params, &x)?;
        }
        x = eval.mod_raise(&x)?;
        if let Some(e) = enc {
            x = eval.switch_key(&x, &e.to_dense)?;
        }
        x.set_scale(self.s_e);
        Ok((x, msg_scale))
    }

    fn q0(&self) -> f64 {
        base_modulus(&self.params)
    }

    /// Step 4 (sparse packing only): project onto the subring of the `n`-slot encoding with
    /// `log2(N/2n)` rotations (the result is `N/2n` times the projection).
    ///
    /// # Errors
    /// A missing rotation key.
    pub fn sub_sum(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        self.sub_sum_into(eval, ct.clone())
    }

    /// [`Bootstrapper::sub_sum`] on its input's own buffers: the running sum starts as `x`.
    fn sub_sum_into(&self, eval: &Evaluator, mut x: Ciphertext) -> Result<Ciphertext> {
        if self.slots < self.params.max_slots() {
            let _r = basalt_trace::region("SubSum");
            let mut k = self.slots;
            while k < self.params.max_slots() {
                let rot = eval.rotate(&x, k as i64)?;
                x = eval.add(&x, &rot)?;
                k *= 2;
            }
        }
        Ok(x)
    }

    /// Step 5: CoeffToSlot and the real/imaginary split: two ciphertexts (real, imaginary
    /// parts of the packed coefficients, bit-reversed) when fully packed, one of `2n` slots
    /// when sparse; every slot holds `t_j/(K·Q_0)`.
    ///
    /// # Errors
    /// A missing rotation or conjugation key.
    pub fn coeffs_to_slots(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Vec<Ciphertext>> {
        self.coeffs_to_slots_from(eval, Cow::Borrowed(ct))
    }

    /// [`Bootstrapper::coeffs_to_slots`] that frees an owned input once it has the input's
    /// copy at CoeffToSlot's level.
    fn coeffs_to_slots_from(
        &self,
        eval: &Evaluator,
        ct: Cow<'_, Ciphertext>,
    ) -> Result<Vec<Ciphertext>> {
        let _r = basalt_trace::region("CoeffToSlot");
        let mut x = eval.drop_level(&ct, ct.level() - self.cts_level)?;
        drop(ct);
        for lt in &self.cts {
            x.set_slots(lt.source().slots());
            x = lt.evaluate(eval, &x)?;
        }
        let conj = eval.conjugate(&x)?;
        let re = eval.add(&x, &conj)?;
        let im = eval.mul_by_i(&eval.sub(&x, &conj)?, true)?;
        Ok(if self.slots < self.params.max_slots() {
            // [2·Re, 0] + [0, 2·Im] over 2n slots.
            let im = eval.rotate(&im, self.slots as i64)?;
            vec![eval.add(&re, &im)?]
        } else {
            vec![re, im]
        })
    }

    /// Step 6: EvalMod on each half: `sin(2π·t_j/Q_0)`, labelled so that after SlotToCoeff
    /// (which multiplies by the nominal `Q_0/(2πΔ_m)`) the slots read the input's values at
    /// scale `out_scale`.
    ///
    /// # Errors
    /// Scheme errors.
    pub fn eval_mod(
        &self,
        eval: &Evaluator,
        halves: &[Ciphertext],
        msg_scale: f64,
        out_scale: f64,
    ) -> Result<Vec<Ciphertext>> {
        let _r = basalt_trace::region("EvalMod");
        // SlotToCoeff multiplies the values by a0 and the scale by stc_scale; the remaining
        // a/a0 (≈ 1: Δ_m is not exactly Q_0/2^ratio) is exact relabelling.
        let a = self.q0() / (2.0 * std::f64::consts::PI * msg_scale);
        let target = out_scale * a / (self.a0 * self.stc_scale);
        let cfg = EvalModConfig { log_scale: self.s_e.log2(), ..self.cfg.evalmod };
        halves
            .iter()
            .map(|h| {
                let mut y =
                    evalmod::eval_mod(eval, h, &cfg, &self.sine, target, self.cfg.merge_rescale)?;
                y.set_scale(out_scale / self.stc_scale);
                Ok(y)
            })
            .collect()
    }

    /// Step 7: SlotToCoeff: recombine the halves and apply the special FFT.
    ///
    /// # Errors
    /// A missing rotation key.
    pub fn slots_to_coeffs(&self, eval: &Evaluator, halves: &[Ciphertext]) -> Result<Ciphertext> {
        let mut x = match halves {
            [re, im] => eval.add(re, &eval.mul_by_i(im, false)?)?,
            [one] => one.clone(),
            _ => return Err(CircuitError::Invalid("SlotToCoeff takes one or two halves".into())),
        };
        let _r = basalt_trace::region("SlotToCoeff");
        for lt in &self.stc {
            x.set_slots(lt.source().slots());
            x = lt.evaluate(eval, &x)?;
        }
        x.set_slots(self.slots);
        Ok(x)
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
