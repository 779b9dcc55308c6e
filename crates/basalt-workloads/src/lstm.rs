//! CraterLake's LSTM benchmark (§8, \[57\] Podschwadt & Takabi): the recurrence
//! `h_{i+1} = σ(W_0·h_i + W_1·x_i)` over an encrypted sequence, with bootstrapping whenever the
//! hidden state runs out of levels.
//!
//! # What the paper states \[P\]
//! "h_{i+1} = σ(W_0 h_i + W_1 x_i) many times. σ is an activation function approximated by a
//! degree-3 polynomial, and W_0 h_i, W_1 x_i are 128×128 matrix-vector multiplies. This
//! computation is multiplicatively deep and requires 50 bootstrappings per inference." (§8);
//! bootstrapping leaves 22 of 57 levels for the application (§2.3, Fig. 2). The cited work is
//! an Elman network (a "simple RNN"), which is what the formula describes.
//!
//! # Our reading \[GAP\] (data/papers/craterlake/readings.toml)
//! - **Packing**: `h_i` and `x_i` are 128-slot sparse ciphertexts (the vector replicated over
//!   the ring's slots); `x_i` comes from the client at the level its step needs.
//! - **Products**: two products, as the text lists them, each Halevi–Shoup diagonals by BSGS
//!   ([`crate::network`]'s dense layer: 128 diagonals, the CraterLake MNIST row's
//!   single-hoisted Lattigo-order split, n1 = 32), one level, evaluated as one sum
//!   ([`LinearTransform::evaluate_sum`]): CraterLake's compiler orders operations for operand
//!   reuse (§6), so both inputs' rotations by each baby step run back to back on one key read,
//!   and the two partial sums share each giant-step rotation.
//! - **σ**: the degree-3 Chebyshev interpolant of `tanh` (the Elman network's activation) on
//!   `[−B, B]`, `B` = [`INPUT_BOUND`]; the map onto `[−1, 1]` is folded into the weights, so σ
//!   takes 2 levels. A step is 3 levels.
//! - **Bootstrapping**: the chain's circuit at 128 slots, after as many steps as the levels the
//!   bootstrap leaves allow ([`LstmModel::steps_per_bootstrap`]; 3 on `CRATERLAKE_80_BOOT`'s
//!   10 two-residue levels). With the paper's 50 bootstraps, the sequence is `50 × 3 = 150`
//!   steps; every step is followed by its interval's bootstrap once the interval is full, so
//!   the inference ends refreshed for the classifier layer (not modelled: a 128-wide dot
//!   product, against 150 steps).
//!
//! [`Lstm::new`] draws seeded pseudo-random weights (uniform in `±1/√128`), as in
//! [`crate::mnist`]: neither the kernel stream nor the time depends on them. [`trained`] loads
//! the weights `scripts/train_weights.py` trains on the digits read row by row (a sequence
//! task: one image row per step, a constant 1 after the pixels carrying the bias the formula
//! lacks, a dense 128→10 classifier on the last state), by backpropagation through time
//! through the same degree-3 σ; `crate::lstm_run` runs it encrypted with that classifier.

use std::collections::BTreeMap;

use basalt_circuits::bootstrap::{Bootstrapper, Encapsulation};
use basalt_circuits::lintrans::{Hoisting, LinearTransform};
use basalt_circuits::polynomial::{self, Chebyshev};
use basalt_circuits::testing::random_matrix;
use basalt_circuits::{CircuitError, Result};
use basalt_ckks::{Ciphertext, Evaluator, Parameters};

use crate::network::{StrategyRule, dense_at_use};

/// Hidden and input width of the paper's benchmark (§8: 128×128 products).
pub const HIDDEN: usize = 128;

/// Bootstraps per inference (§8).
pub const BOOTSTRAPS: usize = 50;

/// `B`: σ approximates `tanh` on `[−B, B]` \[GAP\]. With weights in `±1/√n` and
/// `|h|, |x| ≤ 1` the pre-activations stay well inside (their spread is about `0.8`).
pub const INPUT_BOUND: f64 = 2.0;

/// Levels of one step: the products (1) and σ (2).
pub const STEP_LEVELS: usize = 3;

/// The recurrence's weights and activation (cleartext).
#[derive(Clone, Debug, PartialEq)]
pub struct Lstm {
    /// `W_0` (state) and `W_1` (input), `n × n`.
    pub w0: Vec<Vec<f64>>,
    pub w1: Vec<Vec<f64>>,
    /// σ on `[−1, 1]`, applied to the pre-activation divided by [`INPUT_BOUND`].
    pub sigma: Chebyshev,
}

impl Lstm {
    /// Width `n` (a power of two), weights from `seed`.
    ///
    /// # Panics
    /// If `n` is not a power of two (sparse packing needs one).
    pub fn new(n: usize, seed: u64) -> Lstm {
        assert!(n.is_power_of_two(), "the state is a sparse-packed ciphertext: n = {n}");
        let a = 1.0 / (n as f64).sqrt();
        let sigma = Chebyshev::interpolate(|u| (INPUT_BOUND * u).tanh(), -1.0, 1.0, 3)
            .expect("degree 3 on [-1, 1]")
            .into_odd();
        Lstm { w0: random_matrix(n, n, a, seed), w1: random_matrix(n, n, a, seed + 1), sigma }
    }

    /// Trained `n × n` weights `w0` (state) and `w1` (input); the same σ as [`Lstm::new`].
    ///
    /// # Errors
    /// A width that is not a power of two, or matrices that are not both `n × n`.
    pub fn from_weights(w0: Vec<Vec<f64>>, w1: Vec<Vec<f64>>) -> Result<Lstm> {
        let n = w0.len();
        let square = |w: &[Vec<f64>]| w.len() == n && w.iter().all(|r| r.len() == n);
        if !n.is_power_of_two() || !square(&w0) || !square(&w1) {
            return Err(CircuitError::Invalid(format!(
                "the recurrence needs two n x n matrices with n a power of two; got {} x {} and \
                 {} x {}",
                w0.len(),
                w0.first().map_or(0, Vec::len),
                w1.len(),
                w1.first().map_or(0, Vec::len)
            )));
        }
        Ok(Lstm { sigma: Lstm::new(1, 0).sigma, w0, w1 })
    }

    /// Width of the state.
    pub fn width(&self) -> usize {
        self.w0.len()
    }

    /// The cleartext twin of one step.
    pub fn step_plain(&self, h: &[f64], x: &[f64]) -> Vec<f64> {
        let dot = |row: &[f64], v: &[f64]| row.iter().zip(v).map(|(a, b)| a * b).sum::<f64>();
        self.w0
            .iter()
            .zip(&self.w1)
            .map(|(r0, r1)| self.sigma.evaluate_plain((dot(r0, h) + dot(r1, x)) / INPUT_BOUND))
            .collect()
    }

    /// The cleartext twin of a sequence: the state after every input of `xs`.
    pub fn evaluate_plain(&self, h0: &[f64], xs: &[Vec<f64>]) -> Vec<f64> {
        xs.iter().fold(h0.to_vec(), |h, x| self.step_plain(&h, x))
    }

    /// `W / B`: the weights the encrypted products apply (σ's domain map folded in).
    fn scaled(w: &[Vec<f64>]) -> Vec<Vec<f64>> {
        w.iter().map(|r| r.iter().map(|v| v / INPUT_BOUND).collect()).collect()
    }
}

/// The two products of one step position, prepared at that position's level.
#[derive(Debug)]
struct StepProducts {
    w0: LinearTransform,
    w1: LinearTransform,
}

/// An [`Lstm`] prepared for a chain and its bootstrapper: the products of each step position
/// inside a bootstrap interval (the levels differ), encoded or shapes only.
#[derive(Debug)]
pub struct LstmModel {
    sigma: Chebyshev,
    steps: Vec<StepProducts>,
    slots: usize,
    scale: f64,
}

impl LstmModel {
    /// Prepare `lstm` for states at `bt`'s output level. `symbolic` builds shapes only.
    ///
    /// # Errors
    /// [`CircuitError::NotEnoughLevels`] if the bootstrap leaves fewer than [`STEP_LEVELS`];
    /// a bootstrapper whose slots are not the state's width; encoding errors.
    pub fn prepare(
        params: &Parameters,
        lstm: &Lstm,
        bt: &Bootstrapper,
        rule: StrategyRule,
        symbolic: bool,
    ) -> Result<LstmModel> {
        let n = lstm.width();
        if bt.slots() != n {
            return Err(CircuitError::SlotMismatch { expected: n, found: bt.slots() });
        }
        let top = bt.budget().output_level;
        let c = params.primes_per_rescale();
        let levels = (top + 1).saturating_sub(params.base_primes()) / c;
        let per_boot = levels / STEP_LEVELS;
        if per_boot == 0 {
            return Err(CircuitError::NotEnoughLevels {
                needed: STEP_LEVELS,
                available: levels,
                level: top,
            });
        }
        let (w0, w1) = (Lstm::scaled(&lstm.w0), Lstm::scaled(&lstm.w1));
        let steps = (0..per_boot)
            .map(|s| {
                let level = top - s * STEP_LEVELS * c;
                let (w0, ..) = dense_at_use(params, &w0, n, level, rule, symbolic)?;
                let (w1, ..) = dense_at_use(params, &w1, n, level, rule, symbolic)?;
                Ok(StepProducts { w0, w1 })
            })
            .collect::<Result<_>>()?;
        let scale = params.default_scale().min(bt.max_input_scale());
        Ok(LstmModel { sigma: lstm.sigma.clone(), steps, slots: n, scale })
    }

    /// Bytes of encoded weight diagonals the model stores: none for a real model, which
    /// encodes each diagonal just before its product ([`LinearTransform::encoded_at_use`]);
    /// for shapes (`symbolic`), what a pre-encoded model would store (both products at each
    /// step position of a bootstrap interval, every limb of its level), as a trace reads it.
    pub fn stored_plaintext_bytes(&self) -> u64 {
        self.steps
            .iter()
            .map(|s| s.w0.stored_plaintext_bytes() + s.w1.stored_plaintext_bytes())
            .sum()
    }

    /// Bytes a real model holds for encoded diagonals at any time: one diagonal at every limb
    /// of the highest step position's level (of `Q_l ∪ P` under double hoisting) and the
    /// cleartext and pre-rotated copies it is encoded from. Shapes or real, the same count.
    pub fn plaintext_bytes_at_use(&self, params: &Parameters) -> u64 {
        let n = params.n() as u64;
        let slots = self.slots as u64;
        self.products()
            .flat_map(|(w0, w1)| [w0, w1])
            .map(|lt| {
                let l = lt.level();
                let k = if lt.plan().hoisting == Hoisting::Double { params.k_at(l) } else { 0 };
                (l + 1 + k) as u64 * n * 8
            })
            .max()
            .unwrap_or(0)
            + 2 * slots * 16
            + slots * 8
    }

    /// Steps between two bootstraps: the whole steps the bootstrap's output levels hold.
    pub fn steps_per_bootstrap(&self) -> usize {
        self.steps.len()
    }

    /// Slots of the state and input ciphertexts.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Scale of every state and input: the bootstrap's largest input scale, which the products
    /// (diagonals at the dropped primes) and σ (evaluated to this target) keep.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Level of the state entering step `i` (and of the input `x_i` the client sends).
    pub fn level(&self, i: usize) -> usize {
        let s = &self.steps[i % self.steps.len()];
        s.w0.level()
    }

    /// The recurrence's activation σ (a Chebyshev interpolant), evaluated on every product.
    pub fn sigma(&self) -> &Chebyshev {
        &self.sigma
    }

    /// The products of each step position, `(W_0, W_1)`, summed over one split
    /// ([`LinearTransform::evaluate_sum`]).
    pub fn products(&self) -> impl Iterator<Item = (&LinearTransform, &LinearTransform)> {
        self.steps.iter().map(|s| (&s.w0, &s.w1))
    }

    /// The levels each rotation of the products runs at (the step positions' levels, where
    /// both products rotate their inputs and share the giant steps): a Galois key needs the
    /// parts of these levels only.
    pub fn rotation_levels(&self) -> BTreeMap<i64, Vec<usize>> {
        let mut m: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        for s in &self.steps {
            for lt in [&s.w0, &s.w1] {
                for r in lt.rotations() {
                    m.entry(r).or_default().push(lt.level());
                }
            }
        }
        m.remove(&0);
        m.values_mut().for_each(|v| {
            v.sort_unstable();
            v.dedup();
        });
        m
    }

    /// Every rotation the products need (the bootstrap's come from the bootstrapper).
    pub fn rotations(&self) -> Vec<i64> {
        let mut r: Vec<i64> = self
            .steps
            .iter()
            .flat_map(|s| [s.w0.rotations(), s.w1.rotations()])
            .flatten()
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    }

    /// One inference: `h0` at [`LstmModel::level`]`(0)`, one input per step (`xs[i]` at
    /// `level(i)`), a bootstrap after every [`LstmModel::steps_per_bootstrap`] steps (and so
    /// after the last one when the sequence fills its interval). Symbolic ciphertexts and a
    /// symbolic bootstrapper run the same code on shapes (trace mode).
    ///
    /// The evaluator records the loads of the state, of each input when its step first reads
    /// it (the client's inputs arrive one per step) and of every intermediate.
    ///
    /// # Errors
    /// Level, slot or scale mismatches; missing keys; bootstrapping errors.
    pub fn evaluate(
        &self,
        eval: &Evaluator,
        bt: &Bootstrapper,
        encaps: Option<&Encapsulation>,
        h0: &Ciphertext,
        xs: &[Ciphertext],
    ) -> Result<Ciphertext> {
        let mut h = h0.clone();
        for (i, x) in xs.iter().enumerate() {
            let _r = basalt_trace::region("LstmStep");
            let s = &self.steps[i % self.steps.len()];
            let z = LinearTransform::evaluate_sum(eval, &[(&s.w0, &h), (&s.w1, x)])?;
            h = polynomial::evaluate(eval, &z, &self.sigma, Some(self.scale))?;
            if (i + 1) % self.steps.len() == 0 {
                h = bt.bootstrap(eval, encaps, &h)?;
            }
        }
        Ok(h)
    }
}

const WEIGHTS_128: &[u8] = include_bytes!("../../../data/weights/lstm.bin");
const WEIGHTS_16: &[u8] = include_bytes!("../../../data/weights/lstm_toy.bin");

/// A trained recurrence and its classifier (`rows × width` weights and `rows` biases).
#[derive(Clone, Debug, PartialEq)]
pub struct Trained {
    pub lstm: Lstm,
    pub readout: Vec<Vec<f64>>,
    pub readout_bias: Vec<f64>,
    /// Steps of a sequence: the image rows.
    pub steps: usize,
}

impl Trained {
    /// The input sequence of a digit: one row per step (its pixels in `[0, 1]`, then a
    /// constant 1, then zeros up to the width), on 28×28 images at width 128 or on the raw
    /// 8×8 ones at width 16.
    pub fn sequence(&self, d: &crate::digits::Digit) -> Vec<Vec<f64>> {
        let img = if self.steps == 28 {
            crate::digits::to28(d)
        } else {
            d.pixels.iter().map(|&p| f64::from(p) / 16.0).collect()
        };
        img.chunks(self.steps)
            .map(|row| {
                let mut x = row.to_vec();
                x.push(1.0);
                x.resize(self.lstm.width(), 0.0);
                x
            })
            .collect()
    }

    /// The cleartext twin: the class scores of a sequence from a zero state.
    pub fn scores_plain(&self, xs: &[Vec<f64>]) -> Vec<f64> {
        let h = self.lstm.evaluate_plain(&vec![0.0; self.lstm.width()], xs);
        self.readout
            .iter()
            .zip(&self.readout_bias)
            .map(|(row, b)| b + row.iter().zip(&h).map(|(w, v)| w * v).sum::<f64>())
            .collect()
    }
}

/// The recurrence trained on the digits' rows: width 128 (the paper's, 28 steps of 28×28
/// rows) or 16 (the `--quick` runs', 8 steps of the raw 8×8 rows).
///
/// # Errors
/// Another width, or a malformed weight file.
pub fn trained(width: usize) -> std::result::Result<Trained, crate::digits::DataError> {
    use crate::digits::{DataError, parse_weights};
    let (file, bytes, steps) = match width {
        128 => ("data/weights/lstm.bin", WEIGHTS_128, 28),
        16 => ("data/weights/lstm_toy.bin", WEIGHTS_16, 8),
        w => {
            return Err(DataError {
                file: "data/weights",
                reason: format!("no trained recurrence of width {w} (128 or 16)"),
            });
        }
    };
    let a = parse_weights(file, bytes)?;
    let want: [&[usize]; 4] = [&[width, width], &[width, width], &[10, width], &[10]];
    let have: Vec<&[usize]> = a.iter().map(|x| x.shape.as_slice()).collect();
    if have != want {
        return Err(DataError { file, reason: format!("shapes {have:?}, expected {want:?}") });
    }
    let rows = |k: usize| a[k].values.chunks(width).map(<[f64]>::to_vec).collect::<Vec<_>>();
    let lstm = Lstm::from_weights(rows(0), rows(1))
        .map_err(|e| DataError { file, reason: e.to_string() })?;
    Ok(Trained { lstm, readout: rows(2), readout_bias: a[3].values.clone(), steps })
}
