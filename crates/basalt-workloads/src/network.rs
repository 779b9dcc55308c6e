//! A small feed-forward network on encrypted slot vectors, written once for real and trace-mode
//! runs.
//!
//! # Packing
//! A layer's input is one ciphertext whose `s` slots (a power of two, sparse packing) hold the
//! activation vector zero-padded to `s`; only the first layer may take several ciphertexts
//! (LoLa's convolution representation). Every layer keeps the padding zero:
//! - [`Layer::Pointwise`]: `y = Σ_k x_k ⊙ w_k + b` over the input ciphertexts (weights and bias
//!   zero in the padding); one level.
//! - [`Layer::Dense`]: `y = W·x + b` for an `m×n` matrix with `n ≤ s`, by Gazelle's hybrid
//!   diagonals (as [`basalt_circuits::lintrans::mxv_hybrid`]): rows padded to `m' =
//!   2^⌈log2 m⌉`, the `m'` diagonals `d_i[t] = W[t mod m'][(t+i) mod s]` applied by one
//!   [`LinearTransform`] (BSGS, any hoisting and loop order), then `log2(s/m')` rotate-and-sum
//!   steps. Afterwards every `m'`-chunk of the `s` slots holds `y` (rows `m..m'` zero), so the
//!   result *is* the `m'`-slot sparse packing of `y`: the next layer reads it with `m'` slots.
//!   The diagonals are stored (pre-encoded at every limb, or one limb each for Osiris'
//!   giant-step-centric order), as an accelerator reads trained weights from memory. One level.
//! - [`Layer::Sparse`]: `y = A·x + b` for a sparse `A` given by its non-zero entries (a
//!   convolution's Toeplitz matrix in Orion's multiplexed layout, [`crate::lenet`]): the same
//!   hybrid diagonals built from the entries, only the present ones applied, `n1` the power of
//!   two with the fewest rotations (as the convolutions of [`crate::resnet`]). One level.
//! - [`Layer::Square`]: `x ⊙ x`, relinearised; one level (CryptoNets' activation).
//!
//! Scales: the products by weights are encoded at the primes the following rescale drops, so
//! the linear layers keep the input's scale; the square's rescale leaves `Δ²/q`, and the next
//! bias is encoded at whatever scale the ciphertext has.

use std::collections::BTreeMap;

use basalt_circuits::lintrans::{Diagonals, GscOrder, LinearTransform, Source, Strategy};
use basalt_circuits::{CircuitError, Result};
use basalt_ckks::{Ciphertext, Evaluator, Parameters, Plaintext};
use num_complex::Complex64;

/// One layer with its cleartext weights (row-major matrices, vectors over the layer's slots).
#[derive(Clone, Debug, PartialEq)]
pub enum Layer {
    /// `Σ_k x_k ⊙ w[k] + b`: one weight vector per input ciphertext.
    Pointwise { w: Vec<Vec<f64>>, b: Vec<f64> },
    /// `W·x + b`, `W` of `rows × cols`.
    Dense { w: Vec<Vec<f64>>, b: Vec<f64> },
    /// `A·x + b`, `A` of `b.len()` rows given by its non-zero entries `(row, column, weight)`.
    Sparse { a: Vec<(usize, usize, f64)>, b: Vec<f64> },
    /// `x ⊙ x`.
    Square,
}

/// A network: its input ciphertexts' slot count and its layers in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    pub name: &'static str,
    /// Slots of the input ciphertexts (and of the first layer).
    pub input_slots: usize,
    pub layers: Vec<Layer>,
}

impl Network {
    /// Levels one inference consumes (one per layer).
    pub fn depth(&self) -> usize {
        self.layers.len()
    }

    /// Input ciphertexts (the first layer's weight vectors if it is pointwise, else one).
    pub fn inputs(&self) -> usize {
        match self.layers.first() {
            Some(Layer::Pointwise { w, .. }) => w.len(),
            _ => 1,
        }
    }

    /// Length of the output vector.
    pub fn outputs(&self) -> usize {
        let mut len = self.input_slots;
        for l in &self.layers {
            match l {
                Layer::Pointwise { b, .. } => len = b.len(),
                Layer::Dense { w, .. } => len = w.len(),
                Layer::Sparse { b, .. } => len = b.len(),
                Layer::Square => {}
            }
        }
        len
    }

    /// Rotation steps of every dense layer under `strategy` (their Galois keys).
    ///
    /// # Errors
    /// As [`Model::prepare`].
    pub fn rotations(&self, params: &Parameters, strategy: StrategyRule) -> Result<Vec<i64>> {
        Ok(Model::prepare(params, self, strategy, true)?.rotations())
    }

    /// The cleartext twin: the same layers in f64 on the unpadded vectors (the oracle of the
    /// encrypted run). `inputs` holds one vector per input ciphertext.
    pub fn evaluate_plain(&self, inputs: &[Vec<f64>]) -> Vec<f64> {
        let mut x: Vec<f64> = inputs.first().cloned().unwrap_or_default();
        for l in &self.layers {
            x = match l {
                Layer::Pointwise { w, b } => (0..b.len())
                    .map(|t| b[t] + w.iter().zip(inputs).map(|(wk, xk)| wk[t] * xk[t]).sum::<f64>())
                    .collect(),
                Layer::Dense { w, b } => w
                    .iter()
                    .zip(b)
                    .map(|(row, bi)| bi + row.iter().zip(&x).map(|(a, c)| a * c).sum::<f64>())
                    .collect(),
                Layer::Sparse { a, b } => {
                    let mut y = b.clone();
                    a.iter().for_each(|&(r, c, w)| y[r] += w * x[c]);
                    y
                }
                Layer::Square => x.iter().map(|v| v * v).collect(),
            };
        }
        x
    }
}

/// How the dense layers' BSGS is split: the hoisting and loop order of a paper's column, with
/// the least power-of-two `n1` that leaves at most `max_partials` giant steps. That is the
/// split Osiris' bootstrap rows use (at most four giant-step partial sums on chip, §IV-E; the
/// fewest rotation keys under that cap).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StrategyRule {
    pub hoisting: basalt_circuits::lintrans::Hoisting,
    /// Osiris' giant-step-centric order or Lattigo's baby-step-centric order.
    pub gsc: bool,
    pub max_partials: usize,
    /// In the giant-step-centric order, regenerate each diagonal from one stored limb
    /// (OF-Limb, as Osiris) rather than store it at every limb.
    pub of_limb: bool,
}

impl StrategyRule {
    /// The strategy for a transform with `diagonals` consecutive diagonals.
    pub fn strategy(&self, diagonals: usize) -> Strategy {
        let mut n1 = 1;
        while diagonals.div_ceil(n1) > self.max_partials {
            n1 *= 2;
        }
        Strategy::Bsgs { n1, hoisting: self.hoisting, order: self.order() }
    }

    /// The loop order: giant-step-centric with at most `max_partials` partial sums, or
    /// Lattigo's baby-step-centric one.
    pub fn order(&self) -> GscOrder {
        if self.gsc {
            GscOrder::GiantStepCentric { max_partials: self.max_partials, of_limb: self.of_limb }
        } else {
            GscOrder::BabyStepCentric
        }
    }
}

/// A layer prepared for one parameter set: plaintexts encoded (or shapes only) at the level
/// its input will have.
#[derive(Debug)]
enum Stage {
    Pointwise { w: Vec<Plaintext>, b: Plaintext },
    Dense { lt: Box<LinearTransform>, folds: Vec<i64>, out_slots: usize, b: Plaintext },
    Square,
}

/// A [`Network`] prepared for a parameter set and strategy, for inputs at the top level.
#[derive(Debug)]
pub struct Model {
    stages: Vec<Stage>,
    input_slots: usize,
    level: usize,
}

impl Model {
    /// Prepare `net` for inputs at `params`' top level. `symbolic` builds shapes only (trace
    /// mode: nothing is encoded, evaluating real ciphertexts is an error).
    ///
    /// # Errors
    /// [`CircuitError::Invalid`] if the input packing needs more slots than the ring has;
    /// [`CircuitError::NotEnoughLevels`] if the network is deeper than the chain; a dense
    /// layer wider than its input's slots or with more rows than its padded columns; encoding
    /// errors.
    pub fn prepare(
        params: &Parameters,
        net: &Network,
        rule: StrategyRule,
        symbolic: bool,
    ) -> Result<Model> {
        if net.input_slots > params.max_slots() {
            // The packing puts each input vector in one ciphertext: it must fit its slots.
            return Err(CircuitError::Invalid(format!(
                "{}: its input is packed in {} slots, but N = {} holds only {}; pick a \
                 preset with a larger ring",
                net.name,
                net.input_slots,
                params.n(),
                params.max_slots()
            )));
        }
        let top = params.max_level();
        let drop = params.primes_per_rescale();
        let available = (top + 1 - params.base_primes()) / drop;
        if net.depth() > available {
            return Err(CircuitError::NotEnoughLevels {
                needed: net.depth(),
                available,
                level: top,
            });
        }
        // The scale of the activation after each layer: the linear layers keep it exactly
        // (weights at the dropped primes), a square leaves `Δ²/q`. Biases are encoded here at
        // that scale, so that evaluation encodes nothing.
        let (mut level, mut slots, mut scale) = (top, net.input_slots, params.default_scale());
        let mut stages = Vec::with_capacity(net.layers.len());
        for layer in &net.layers {
            let q = dropped_scale(params, level);
            let stage = match layer {
                Layer::Pointwise { w, b } => {
                    let w = w
                        .iter()
                        .map(|wk| encode(params, wk, slots, level, q, symbolic))
                        .collect::<Result<_>>()?;
                    let b = encode(params, b, slots, level - drop, scale, symbolic)?;
                    Stage::Pointwise { w, b }
                }
                Layer::Dense { w, b } => {
                    let (lt, folds, out) = dense(params, w, slots, level, rule, symbolic)?;
                    slots = out;
                    let b = encode(params, b, slots, level - drop, scale, symbolic)?;
                    Stage::Dense { lt: Box::new(lt), folds, out_slots: out, b }
                }
                Layer::Sparse { a, b } => {
                    let m = b.len();
                    let (lt, folds, out) = sparse(params, a, m, slots, level, rule, symbolic)?;
                    slots = out;
                    let b = encode(params, b, slots, level - drop, scale, symbolic)?;
                    Stage::Dense { lt: Box::new(lt), folds, out_slots: out, b }
                }
                Layer::Square => {
                    scale = scale * scale / q;
                    Stage::Square
                }
            };
            stages.push(stage);
            level -= drop;
        }
        Ok(Model { stages, input_slots: net.input_slots, level: top })
    }

    /// Level of the input ciphertexts.
    pub fn input_level(&self) -> usize {
        self.level
    }
    /// Slots of the input ciphertexts.
    pub fn input_slots(&self) -> usize {
        self.input_slots
    }

    /// Every rotation the dense layers need.
    pub fn rotations(&self) -> Vec<i64> {
        let mut r: Vec<i64> = self
            .stages
            .iter()
            .flat_map(|s| match s {
                Stage::Dense { lt, folds, .. } => {
                    let mut v = lt.rotations();
                    v.extend(folds);
                    v
                }
                _ => Vec::new(),
            })
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    }

    /// One inference: `inputs` (one ciphertext per input vector, at [`Model::input_level`]
    /// with [`Model::input_slots`] slots) to the output ciphertext, whose first slots hold the
    /// network's outputs. Symbolic inputs run the same code on shapes (trace mode).
    ///
    /// # Errors
    /// A wrong number of inputs; missing keys; level, scale or slot mismatches.
    ///
    /// The evaluator records what each operation reads and writes (`CtLoad` / `CtStore`, see
    /// `basalt_trace::operation`): the client's inputs are loaded on first use (LoLa's 25 are
    /// as many bytes as its weights) and every intermediate is named for the on-chip store.
    pub fn evaluate(&self, eval: &Evaluator, inputs: &[Ciphertext]) -> Result<Ciphertext> {
        let mut x = inputs.first().ok_or(CircuitError::EmptyMatrix)?.clone();
        for stage in &self.stages {
            x = match stage {
                Stage::Pointwise { w, b } => {
                    if inputs.len() != w.len() {
                        return Err(CircuitError::VectorLength {
                            len: inputs.len(),
                            cols: w.len(),
                        });
                    }
                    let mut acc = eval.mul_plain(&inputs[0], &w[0])?;
                    for (xk, wk) in inputs.iter().zip(w).skip(1) {
                        acc = eval.add(&acc, &eval.mul_plain(xk, wk)?)?;
                    }
                    eval.add_plain(&eval.rescale(&acc)?, b)?
                }
                Stage::Dense { lt, folds, out_slots, b } => {
                    let mut acc = lt.evaluate(eval, &x)?;
                    for &s in folds {
                        acc = eval.add(&acc, &eval.rotate(&acc, s)?)?;
                    }
                    acc.set_slots(*out_slots);
                    eval.add_plain(&acc, b)?
                }
                Stage::Square => eval.rescale(&eval.mul_relin(&x, &x)?)?,
            };
        }
        Ok(x)
    }
}

/// The product of the primes a rescale at `level` drops: the scale at which a weight keeps
/// the ciphertext's scale through the rescale.
pub(crate) fn dropped_scale(params: &Parameters, level: usize) -> f64 {
    let drop = params.primes_per_rescale();
    params.q()[level + 1 - drop..=level].iter().map(|&q| q as f64).product()
}

/// `values` (zero-padded to `slots`) encoded at `level` and `scale`, or its shape.
pub(crate) fn encode(
    params: &Parameters,
    values: &[f64],
    slots: usize,
    level: usize,
    scale: f64,
    symbolic: bool,
) -> Result<Plaintext> {
    if values.len() > slots {
        return Err(CircuitError::VectorLength { len: values.len(), cols: slots });
    }
    let mut pt = if symbolic {
        Plaintext::symbolic(params, level)?
    } else {
        let mut v: Vec<Complex64> = values.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        v.resize(slots, Complex64::new(0.0, 0.0));
        basalt_ckks::Encoder::new(params).encode(&v, slots, level, scale)?
    };
    pt.set_scale(scale);
    Ok(pt)
}

/// The transform of `w`'s hybrid diagonals (`m×n`, `n ≤ slots`), the rotate-and-sum shifts
/// and the output slot count `m'`; `n1` by `rule` (consecutive diagonals).
pub(crate) fn dense(
    params: &Parameters,
    w: &[Vec<f64>],
    slots: usize,
    level: usize,
    rule: StrategyRule,
    symbolic: bool,
) -> Result<(LinearTransform, Vec<i64>, usize)> {
    dense_encoded(params, w, slots, level, rule, symbolic, false)
}

/// [`dense`] whose diagonals are encoded just before each product and dropped after it
/// ([`LinearTransform::encoded_at_use`]): the transform keeps the diagonals in the clear only,
/// not at every limb of its level. The products are bit for bit those of [`dense`] (the same
/// plaintexts, encoded later). An OF-Limb rule keeps its one stored limb ([`dense`]).
pub(crate) fn dense_at_use(
    params: &Parameters,
    w: &[Vec<f64>],
    slots: usize,
    level: usize,
    rule: StrategyRule,
    symbolic: bool,
) -> Result<(LinearTransform, Vec<i64>, usize)> {
    dense_encoded(params, w, slots, level, rule, symbolic, !rule.of_limb)
}

/// [`dense`] and [`dense_at_use`]: `at_use` picks when the diagonals are encoded.
fn dense_encoded(
    params: &Parameters,
    w: &[Vec<f64>],
    slots: usize,
    level: usize,
    rule: StrategyRule,
    symbolic: bool,
    at_use: bool,
) -> Result<(LinearTransform, Vec<i64>, usize)> {
    let (m, n) = (w.len(), w.first().map_or(0, Vec::len));
    if m == 0 || n == 0 {
        return Err(CircuitError::EmptyMatrix);
    }
    let entries = w.iter().enumerate().flat_map(|(r, row)| {
        row.iter().enumerate().filter(|(_, v)| **v != 0.0).map(move |(c, &v)| (r, c, v))
    });
    let mp = m.next_power_of_two();
    hybrid(params, (m, n), entries, slots, level, |_| Ok(rule.strategy(mp)), symbolic, at_use)
}

/// [`dense`] for the non-zero entries `a` of an `m`-row matrix: only the present diagonals,
/// `n1` the power of two with the fewest rotations for them (the convolutions' rule,
/// [`crate::resnet::fewest_rotations`]).
fn sparse(
    params: &Parameters,
    a: &[(usize, usize, f64)],
    m: usize,
    slots: usize,
    level: usize,
    rule: StrategyRule,
    symbolic: bool,
) -> Result<(LinearTransform, Vec<i64>, usize)> {
    let n = a.iter().map(|e| e.1 + 1).max().ok_or(CircuitError::EmptyMatrix)?;
    let conv = crate::resnet::ConvStrategy { hoisting: rule.hoisting, order: rule.order() };
    let strategy = |indices: &[usize]| crate::resnet::fewest_rotations(indices, slots, conv);
    hybrid(params, (m, n), a.iter().copied(), slots, level, strategy, symbolic, false)
}

/// Gazelle's hybrid diagonals of an `m×n` matrix given by its non-zero `entries` over `slots`
/// input slots: rows padded to `m' = 2^⌈log2 m⌉`, entry `(r, c)` on diagonal `(c − r) mod m'`
/// at slot `(c − i) mod slots`, so that slot `t` of the product sums row `t mod m'` over one
/// `m'`-chunk of the columns; then `log2(slots/m')` rotate-and-sum steps. Returns the
/// transform (split by `strategy` of the present diagonal indices), the shifts and `m'`.
#[allow(clippy::too_many_arguments)] // the matrix, its ring placement and how to store it
fn hybrid(
    params: &Parameters,
    (m, n): (usize, usize),
    entries: impl Iterator<Item = (usize, usize, f64)>,
    slots: usize,
    level: usize,
    strategy: impl FnOnce(&[usize]) -> Result<Strategy>,
    symbolic: bool,
    at_use: bool,
) -> Result<(LinearTransform, Vec<i64>, usize)> {
    let mp = m.next_power_of_two();
    if n > slots || mp > slots {
        return Err(CircuitError::Invalid(format!(
            "a {m}x{n} dense layer needs at most {slots} columns and padded rows"
        )));
    }
    let diagonal = |r: usize, c: usize| (c + mp - r % mp) % mp;
    let lt = if symbolic {
        let mut present = vec![false; mp];
        entries.for_each(|(r, c, _)| present[diagonal(r, c)] = true);
        let indices: Vec<usize> = (0..mp).filter(|&i| present[i]).collect();
        let strategy = strategy(&indices)?;
        LinearTransform::shapes(params, indices, slots, strategy, level, 1.0)?
    } else {
        let mut map: BTreeMap<i64, Vec<Complex64>> = BTreeMap::new();
        for (r, c, w) in entries {
            let i = diagonal(r, c);
            let d = map.entry(i as i64).or_insert_with(|| vec![Complex64::new(0.0, 0.0); slots]);
            d[(c + slots - i) % slots].re += w;
        }
        let diags = Diagonals::from_map(slots, map)?;
        let strategy = strategy(&diags.indices())?;
        if at_use {
            LinearTransform::encoded_at_use(params, Source::Stored(diags), strategy, level, 1.0)?
        } else {
            LinearTransform::new(params, diags, strategy, level)?
        }
    };
    Ok((lt, folds(slots, mp), mp))
}

/// Hybrid diagonal `i` of `w` (rows padded to `mp`): `d_i[t] = w[t mod mp][(t+i) mod slots]`,
/// zero outside `w`.
pub(crate) fn hybrid_diagonal(w: &[Vec<f64>], mp: usize, slots: usize, i: usize) -> Vec<Complex64> {
    let n = w.first().map_or(0, Vec::len);
    (0..slots)
        .map(|t| {
            let (r, c) = (t % mp, (t + i) % slots);
            Complex64::new(if r < w.len() && c < n { w[r][c] } else { 0.0 }, 0.0)
        })
        .collect()
}

/// The rotate-and-sum shifts that fold `slots` hybrid-diagonal outputs onto the first `mp`.
pub(crate) fn folds(slots: usize, mp: usize) -> Vec<i64> {
    std::iter::successors(Some(slots / 2), |s| Some(s / 2))
        .take_while(|&s| s >= mp)
        .map(|s| s as i64)
        .collect()
}

#[cfg(test)]
mod at_use_tests {
    use super::*;
    use basalt_circuits::lintrans::Hoisting;
    use basalt_circuits::testing::{random_matrix, toy_bootstrap_params};
    use basalt_ckks::encryptor::encrypt_sk;
    use basalt_ckks::{Encoder, KeyGenerator, SecretDistribution};

    /// A dense layer encoded at use computes bit for bit what the pre-encoded one does, and
    /// stores no encoded diagonal.
    #[test]
    fn a_dense_layer_encoded_at_use_is_bit_identical() -> Result<()> {
        let params = toy_bootstrap_params(10, 6, 1, 2, SecretDistribution::Hamming { h: 64 });
        let slots = 16;
        let rule = StrategyRule {
            hoisting: Hoisting::Single,
            gsc: false,
            max_partials: 16,
            of_limb: false,
        };
        let w = random_matrix(slots, slots, 0.5, 7);
        let level = params.max_level();
        let (stored, ..) = dense(&params, &w, slots, level, rule, false)?;
        let (at_use, ..) = dense_at_use(&params, &w, slots, level, rule, false)?;
        assert!(stored.stored_plaintext_bytes() > 0);
        assert_eq!(at_use.stored_plaintext_bytes(), 0);
        let sk = KeyGenerator::new(&params).gen_secret_key();
        let keys =
            KeyGenerator::new(&params).gen_evaluation_keys(&sk, &stored.rotations(), false, false);
        let eval = Evaluator::new(&params, keys)?;
        let x: Vec<Complex64> = (0..slots).map(|i| Complex64::new(i as f64 / 20.0, 0.0)).collect();
        let pt = Encoder::new(&params).encode(&x, slots, level, params.default_scale())?;
        let ct = encrypt_sk(&params, &pt, &sk)?;
        assert_eq!(stored.evaluate(&eval, &ct)?, at_use.evaluate(&eval, &ct)?);
        // The LSTM's summed products (one split, shared giant steps) as well.
        let y = ct.clone();
        let sum =
            |lt: &LinearTransform| LinearTransform::evaluate_sum(&eval, &[(lt, &ct), (lt, &y)]);
        assert_eq!(sum(&stored)?, sum(&at_use)?);
        Ok(())
    }
}
