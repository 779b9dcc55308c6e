//! One iteration of HELR: logistic-regression training by mini-batch Nesterov accelerated
//! gradient on encrypted data, as FAB (§5.5, Table 8) runs it on MNIST 3-vs-8.
//!
//! # Packing
//! Each sample's features are padded to `2^log_features` slots (196 → 256) and a ciphertext
//! holds `2^log_samples` samples, one block each (2^15 / 256 = 128 at FAB's N = 2^16); the label
//! is folded into the sample (`z_k = y_k·x_k`) as HELR does. The weights `v` and `w` are
//! replicated in every block. A 1024-image mini-batch is 1024 / 128 = 8 ciphertexts.
//!
//! # Algorithm
//! [`gradient`], per data ciphertext `z` (FAB-2 gives each of its 8 FPGAs one):
//! 1. `ip = z ⊙ v`, then a rotate-and-sum over the block (`log_features` left rotations) puts
//!    `⟨z_k, v⟩` in the block's first slot;
//! 2. a mask keeps that slot, and `log_features` right rotations replicate it over the block;
//! 3. `γ·z·σ3(ip)` with `σ3(x) = c0 + c1·x + c3·x³` as `c3γ·(z·ip)·(ip² + c1/c3) + c0γ·z`
//!    (the constants ride on `z`, which has levels to spare).
//!
//! [`update`], once per iteration on the summed gradients (on FAB-2 the master FPGA):
//! 4. a rotate-and-sum over the `log_samples` blocks sums the batch;
//! 5. NAG: `w⁺ = v + g`, `v⁺ = (1 − η)·w⁺ + η·w`.
//!
//! # Cost
//! `gradient`: 4 relinearised products, 2·`log_features` rotations, 1 plaintext product,
//! 4 levels. `update`: `log_samples` rotations, no relinearisation, 1 level — 5 levels per
//! iteration, FAB's count (§5.5: "depth of 150" for 30 iterations), so one bootstrap of `v⁺`
//! per iteration. The circuit follows the structure of the FAB authors' public cost model
//! (SimFHE's `logistic_regression.py`: inner product, sigmoid product, rotate-and-sum,
//! Nesterov update); FAB itself gives no operation list.
//!
//! # Source
//! Han, Hong, Cheon, Park, "Efficient logistic regression on large encrypted data", ePrint
//! 2018/662 (packing, NAG); `σ3` is [`crate::polynomial::approx::helr_sigmoid3`]'s polynomial.

use basalt_ckks::{Ciphertext, Complex64, Evaluator, Plaintext};

use crate::error::Result;

/// HELR's degree-3 sigmoid on `[−8, 8]`: `c0`, `c1`, `c3` (no `x²` term).
pub const SIGMOID3: [f64; 3] = [0.5, -0.0843, 0.0002];

/// Blocks and steps of one HELR iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Helr {
    /// log2 of the padded feature count (slots per sample block).
    pub log_features: u32,
    /// log2 of the samples (blocks) per ciphertext.
    pub log_samples: u32,
    /// Learning rate γ (folded into the gradient's constants).
    pub gamma: f64,
    /// NAG mixing weight η.
    pub eta: f64,
}

impl Helr {
    /// FAB's task: 196 features → 256, 2^15 slots → 128 samples per ciphertext. The step
    /// constants are our choice (FAB gives none): `γ = 10 / batch` and the NAG weight
    /// `η = (1 − α0)/α1` with α0 = 0.01, `α1 = (1 + √(1 + 4α0²))/2` of a public port of HELR's
    /// reference code (Han et al., ePrint 2018/662); they change no kernel of the trace.
    pub fn fab() -> Helr {
        let alpha0: f64 = 0.01;
        let alpha1 = (1.0 + (1.0 + 4.0 * alpha0 * alpha0).sqrt()) / 2.0;
        Helr { log_features: 8, log_samples: 7, gamma: 10.0 / 1024.0, eta: (1.0 - alpha0) / alpha1 }
    }

    /// The rotation steps both functions use (their Galois keys).
    pub fn rotations(&self) -> Vec<i64> {
        let lf = self.log_features;
        let feature = (0..lf).flat_map(|i| [1i64 << i, -(1i64 << i)]);
        feature.chain((0..self.log_samples).map(|j| 1i64 << (lf + j))).collect()
    }
}

/// `ct + rot(ct, s)` for each step `s` in turn.
fn rotate_sum(
    eval: &Evaluator,
    ct: &Ciphertext,
    steps: impl Iterator<Item = i64>,
) -> Result<Ciphertext> {
    let mut acc = ct.clone();
    for s in steps {
        acc = eval.add(&acc, &eval.rotate(&acc, s)?)?;
    }
    Ok(acc)
}

/// The product of the primes a rescale at `level` drops (one, or two on double-prime chains).
fn dropped(eval: &Evaluator, level: usize) -> f64 {
    let c = eval.params().primes_per_rescale();
    eval.params().q()[level + 1 - c..=level].iter().map(|&q| q as f64).product()
}

/// `c·ct` at `level` with exactly `scale` (one rescale): `ct` is first dropped to one rescale
/// above `level`.
///
/// # Errors
/// `ct` below that level, or a scheme error.
pub fn scaled_to(
    eval: &Evaluator,
    ct: &Ciphertext,
    c: f64,
    level: usize,
    scale: f64,
) -> Result<Ciphertext> {
    let above = level + eval.params().primes_per_rescale();
    let ct = eval.drop_level(ct, ct.level() - above)?;
    let q = dropped(eval, above);
    Ok(eval.rescale(&eval.mul_const_scaled(&ct, c, scale * q / ct.scale())?)?)
}

/// The mask keeping the first slot of every block, at `ct`'s level and at the scale the next
/// rescale divides by (so it restores `ct`'s scale).
fn block_mask(eval: &Evaluator, ct: &Ciphertext, h: &Helr) -> Result<Plaintext> {
    let level = ct.level();
    let q = dropped(eval, level);
    let mut pt = if ct.is_symbolic() {
        Plaintext::symbolic(eval.params(), level)?
    } else {
        let block = 1usize << h.log_features;
        let values: Vec<Complex64> = (0..ct.slots())
            .map(|i| Complex64::new(if i % block == 0 { 1.0 } else { 0.0 }, 0.0))
            .collect();
        // A constant of the program, encoded ahead of time (its reads are the product's
        // `PlainLoad`): unrecorded, so the real run's kernels are the trace mode's.
        basalt_trace::record(|| eval.encoder().encode(&values, ct.slots(), level, q)).0?
    };
    pt.set_scale(q);
    Ok(pt)
}

/// `γ·Σ_k z_k·σ3(⟨z_k, v⟩)` per block of one data ciphertext `z` (both operands at the same
/// level ≥ 4 above the base); 4 levels.
///
/// # Errors
/// Missing rotation keys ([`Helr::rotations`]), too few levels, or a scheme error.
pub fn gradient(eval: &Evaluator, z: &Ciphertext, v: &Ciphertext, h: &Helr) -> Result<Ciphertext> {
    let [c0, c1, c3] = SIGMOID3;
    let lf = h.log_features;
    let ip = eval.rescale(&eval.mul_relin(z, v)?)?;
    let ip = rotate_sum(eval, &ip, (0..lf).map(|i| 1i64 << i))?;
    let ip = eval.rescale(&eval.mul_plain(&ip, &block_mask(eval, &ip, h)?)?)?;
    let t = rotate_sum(eval, &ip, (0..lf).map(|i| -(1i64 << i)))?;
    let t2 = eval.rescale(&eval.mul_relin(&t, &t)?)?;
    let t2 = eval.add_const(&t2, Complex64::new(c1 / c3, 0.0))?;
    let zc = scaled_to(eval, z, c3 * h.gamma, t.level(), z.scale())?;
    let zt = eval.rescale(&eval.mul_relin(&zc, &t)?)?;
    let g = eval.rescale(&eval.mul_relin(&zt, &t2)?)?;
    let z0 = scaled_to(eval, z, c0 * h.gamma, g.level(), g.scale())?;
    Ok(eval.add(&g, &z0)?)
}

/// Sum the batch's gradients `g` (the sum of [`gradient`] over the data ciphertexts) over the
/// blocks and take one NAG step from `(v, w)`; `w` is the `w⁺` of the previous iteration (at
/// `g`'s level and scale), `v` has a level to spare above `g`. Returns `(w⁺, v⁺)`, `v⁺` one
/// level below `g` — the ciphertext to bootstrap.
///
/// # Errors
/// Missing rotation keys, too few levels, or a scheme error.
pub fn update(
    eval: &Evaluator,
    g: &Ciphertext,
    v: &Ciphertext,
    w: &Ciphertext,
    h: &Helr,
) -> Result<(Ciphertext, Ciphertext)> {
    update_to(eval, g, v, w, h, g.scale())
}

/// [`update`] with `v⁺` at `scale` instead of the gradient's: the NAG step's constant
/// products set it at no extra level (a bootstrap's input scale, say).
///
/// # Errors
/// As [`update`].
pub fn update_to(
    eval: &Evaluator,
    g: &Ciphertext,
    v: &Ciphertext,
    w: &Ciphertext,
    h: &Helr,
    scale: f64,
) -> Result<(Ciphertext, Ciphertext)> {
    let lf = h.log_features;
    let g = rotate_sum(eval, g, (0..h.log_samples).map(|j| 1i64 << (lf + j)))?;
    let w_next = eval.add(&scaled_to(eval, v, 1.0, g.level(), g.scale())?, &g)?;
    let q = dropped(eval, w_next.level()) * (scale / g.scale());
    let a = eval.mul_const_scaled(&w_next, 1.0 - h.eta, q)?;
    let b = eval.mul_const_scaled(w, h.eta, q)?;
    let v_next = eval.rescale(&eval.add(&a, &b)?)?;
    Ok((w_next, v_next))
}
