//! LoLa-CIFAR (CraterLake Table 3/4 "CIFAR Unencryp. Wghts.", taken from F1): one 32×32×3
//! CIFAR-10 image through LoLa's CIFAR network with unencrypted weights.
//!
//! # The network (Brutzkus, Elisha, Gilad-Bachrach, ICML 2019, §5 CIFAR-10) \[GAP\]
//! conv 83 maps 8×8×3 stride 2 (13×13 outputs) → square → conv 163 maps 6×6×83 stride 2
//! (4×4 outputs) → square → dense 2608→10; depth 5. CraterLake only says "a 6-layer network
//! (similar in computation to MobileNet v3)"; the layer list is our reading of LoLa's (recalled,
//! not checked against its text offline), counting five arithmetic layers (the "6" may count
//! the input or the flattening).
//!
//! # Packing (LoLa's representations, CKKS, `slots` per ciphertext)
//! - Input in LoLa's *convolution representation*, as the MNIST network
//!   ([`crate::mnist::convolution_representation`]): one vector per kernel offset `(c, di, dj)`
//!   holding pixel `(c, 2i+di, 2j+dj)` for output position `(i, j)`, repeated for every map.
//!   83 maps × 169 positions exceed a ring's slots, so the maps are split into *blocks* of
//!   `⌊slots/169⌋` maps (48 + 35 at 8192 slots), one input ciphertext per (block, offset):
//!   384 ciphertexts. The first convolution is then `Σ_offsets x ⊙ w` per block, no rotation.
//! - The activations stay in LoLa's *dense representation*, one ciphertext per block.
//! - The second convolution is linear, so it is applied as a dense `2608 × 14027` matrix on
//!   the blocks (LoLa treats it as a dense layer): Gazelle's hybrid diagonals per block, summed
//!   in one BSGS pass over both blocks ([`LinearTransform::evaluate_sum`]), the split as the
//!   MNIST rows' (single hoisting, Lattigo's order, ≤ 4 giant steps), then the rotate-and-sum
//!   steps down to `m' = 4096` slots. Only the diagonals the convolution's sparsity touches
//!   exist (a diagonal `i` holds `(r, c)` iff `c − r ≡ i (mod m')`).
//! - The last dense layer as [`crate::network`]'s.
//!
//! Weights are seeded pseudo-random (as the MNIST networks); [`Cifar::evaluate_plain`] is the
//! cleartext twin (direct strided convolutions). [`Shape`] scales the network down for the
//! small-ring tests.

use std::collections::{BTreeMap, BTreeSet};

use basalt_circuits::lintrans::{Diagonals, LinearTransform};
use basalt_circuits::testing::random_matrix;
use basalt_circuits::{CircuitError, Result};
use basalt_ckks::{Ciphertext, Evaluator, Parameters, Plaintext};
use num_complex::Complex64;

use crate::network::{self, StrategyRule};
use crate::trace::{Inputs, record_shapes};

/// The layer sizes of a LoLa-CIFAR-style network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Image side and channels.
    pub side: usize,
    pub channels: usize,
    /// First convolution: kernel side, stride, maps.
    pub k1: usize,
    pub s1: usize,
    pub maps1: usize,
    /// Second convolution: kernel side, stride, maps.
    pub k2: usize,
    pub s2: usize,
    pub maps2: usize,
    pub classes: usize,
    /// Slots of every ciphertext of the first two layers.
    pub slots: usize,
}

/// LoLa's CIFAR-10 network \[GAP\] at 8192 slots (N = 2^14, F1's ring).
pub const LOLA_CIFAR: Shape = Shape {
    side: 32,
    channels: 3,
    k1: 8,
    s1: 2,
    maps1: 83,
    k2: 6,
    s2: 2,
    maps2: 163,
    classes: 10,
    slots: 8192,
};

impl Shape {
    /// Output side of the first convolution (13).
    pub fn out1(&self) -> usize {
        (self.side - self.k1) / self.s1 + 1
    }
    /// Output side of the second convolution (4).
    pub fn out2(&self) -> usize {
        (self.out1() - self.k2) / self.s2 + 1
    }
    /// Kernel offsets of the first convolution: input ciphertexts per block (192).
    pub fn offsets(&self) -> usize {
        self.channels * self.k1 * self.k1
    }
    /// Maps per block (48).
    pub fn maps_per_block(&self) -> usize {
        self.slots / (self.out1() * self.out1())
    }
    /// Blocks of the first layers' activations (2).
    pub fn blocks(&self) -> usize {
        self.maps1.div_ceil(self.maps_per_block())
    }
    /// Outputs of the second convolution (2608).
    pub fn hidden(&self) -> usize {
        self.maps2 * self.out2() * self.out2()
    }
    /// Maps of block `b`.
    fn block_maps(&self, b: usize) -> std::ops::Range<usize> {
        let per = self.maps_per_block();
        b * per..((b + 1) * per).min(self.maps1)
    }
}

/// The network with its cleartext weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Cifar {
    pub shape: Shape,
    /// `maps1 × offsets`, offset `(c, di, dj)` at `(c·k1 + di)·k1 + dj`.
    conv1: Vec<Vec<f64>>,
    bias1: Vec<f64>,
    /// `maps2 × (maps1·k2·k2)`, input `(m, di, dj)` at `(m·k2 + di)·k2 + dj`.
    conv2: Vec<Vec<f64>>,
    bias2: Vec<f64>,
    /// `classes × hidden`, hidden `(o, i, j)` at `(o·out2 + i)·out2 + j`.
    dense: Vec<Vec<f64>>,
    bias3: Vec<f64>,
}

impl Cifar {
    /// Weights uniform in `±1/√fan_in` from `seed`.
    pub fn new(shape: Shape, seed: u64) -> Cifar {
        let fan2 = shape.maps1 * shape.k2 * shape.k2;
        let u = |n: usize| 1.0 / (n as f64).sqrt();
        let bias = |n: usize, s: u64| random_matrix(1, n, 0.1, s).remove(0);
        Cifar {
            shape,
            conv1: random_matrix(shape.maps1, shape.offsets(), u(shape.offsets()), seed),
            bias1: bias(shape.maps1, seed ^ 0xb1),
            conv2: random_matrix(shape.maps2, fan2, u(fan2), seed + 1),
            bias2: bias(shape.maps2, seed ^ 0xb2),
            dense: random_matrix(shape.classes, shape.hidden(), u(shape.hidden()), seed + 2),
            bias3: bias(shape.classes, seed ^ 0xb3),
        }
    }

    /// The client's input vectors for `image` (`channels × side × side`, channel-major):
    /// block-major, then offset-major (see the module doc).
    pub fn inputs(&self, image: &[f64]) -> Vec<Vec<f64>> {
        let s = self.shape;
        let (o1, side) = (s.out1(), s.side);
        assert_eq!(image.len(), s.channels * side * side, "a channels x side x side image");
        let mut out = Vec::with_capacity(s.blocks() * s.offsets());
        for b in 0..s.blocks() {
            let maps = s.block_maps(b).len();
            for o in 0..s.offsets() {
                let (c, di, dj) = (o / (s.k1 * s.k1), (o / s.k1) % s.k1, o % s.k1);
                out.push(
                    (0..maps * o1 * o1)
                        .map(|t| {
                            let (i, j) = ((t % (o1 * o1)) / o1, t % o1);
                            image[(c * side + s.s1 * i + di) * side + s.s1 * j + dj]
                        })
                        .collect(),
                );
            }
        }
        out
    }

    /// The cleartext twin: both convolutions computed directly on the image, squares, the
    /// dense layer.
    pub fn evaluate_plain(&self, image: &[f64]) -> Vec<f64> {
        let s = self.shape;
        let (o1, o2, side) = (s.out1(), s.out2(), s.side);
        let h1: Vec<f64> = (0..s.maps1 * o1 * o1)
            .map(|t| {
                let (m, i, j) = (t / (o1 * o1), (t / o1) % o1, t % o1);
                let conv: f64 = (0..s.offsets())
                    .map(|o| {
                        let (c, di, dj) = (o / (s.k1 * s.k1), (o / s.k1) % s.k1, o % s.k1);
                        self.conv1[m][o] * image[(c * side + s.s1 * i + di) * side + s.s1 * j + dj]
                    })
                    .sum();
                (conv + self.bias1[m]).powi(2)
            })
            .collect();
        let h2: Vec<f64> = (0..s.hidden())
            .map(|t| {
                let (m2, i, j) = (t / (o2 * o2), (t / o2) % o2, t % o2);
                let conv: f64 = (0..s.maps1 * s.k2 * s.k2)
                    .map(|q| {
                        let (m, di, dj) = (q / (s.k2 * s.k2), (q / s.k2) % s.k2, q % s.k2);
                        self.conv2[m2][q] * h1[(m * o1 + s.s2 * i + di) * o1 + s.s2 * j + dj]
                    })
                    .sum();
                (conv + self.bias2[m2]).powi(2)
            })
            .collect();
        self.dense
            .iter()
            .zip(&self.bias3)
            .map(|(row, b)| b + row.iter().zip(&h2).map(|(w, x)| w * x).sum::<f64>())
            .collect()
    }

    /// The second convolution as a matrix entry: output `r` (hidden index) and column `c` of
    /// block `b`'s dense representation (`m·out1² + i·out1 + j`); `None` where the kernel does
    /// not reach (a structural zero).
    fn conv2_entry(&self, b: usize, r: usize, c: usize) -> Option<f64> {
        let s = self.shape;
        let (o1, o2) = (s.out1(), s.out2());
        let m = s.block_maps(b).start + c / (o1 * o1);
        if r >= s.hidden() || m >= s.block_maps(b).end {
            return None;
        }
        let (m2, y, x) = (r / (o2 * o2), (r / o2) % o2, r % o2);
        let (py, px) = ((c % (o1 * o1)) / o1, c % o1);
        let (dy, dx) = (py.checked_sub(s.s2 * y)?, px.checked_sub(s.s2 * x)?);
        (dy < s.k2 && dx < s.k2).then(|| self.conv2[m2][(m * s.k2 + dy) * s.k2 + dx])
    }

    /// Hybrid-diagonal indices (rows padded to `mp`) the second convolution touches in block
    /// `b`: `(c − r) mod mp` over its structural non-zeros.
    fn conv2_indices(&self, b: usize, mp: usize) -> Vec<usize> {
        let s = self.shape;
        let (o1, o2) = (s.out1(), s.out2());
        let mut set = BTreeSet::new();
        for r in 0..s.hidden() {
            let (y, x) = ((r / o2) % o2, r % o2);
            for m in 0..s.block_maps(b).len() {
                for (dy, dx) in (0..s.k2 * s.k2).map(|d| (d / s.k2, d % s.k2)) {
                    let c = m * o1 * o1 + (s.s2 * y + dy) * o1 + s.s2 * x + dx;
                    set.insert((c + mp - r % mp) % mp);
                }
            }
        }
        set.into_iter().collect()
    }

    /// Block `b`'s hybrid diagonals at `indices` (`d_i[t] = W_b[t mod mp][(t+i) mod slots]`).
    fn conv2_diagonals(&self, b: usize, mp: usize, indices: &[usize]) -> Result<Diagonals> {
        let slots = self.shape.slots;
        let map: BTreeMap<i64, Vec<Complex64>> = indices
            .iter()
            .map(|&i| {
                let d = (0..slots)
                    .map(|t| {
                        let w = self.conv2_entry(b, t % mp, (t + i) % slots).unwrap_or(0.0);
                        Complex64::new(w, 0.0)
                    })
                    .collect();
                (i as i64, d)
            })
            .collect();
        Diagonals::from_map(slots, map)
    }
}

/// One block's first convolution: a weight vector per offset and the bias.
#[derive(Debug)]
struct Conv1Block {
    w: Vec<Plaintext>,
    b: Plaintext,
}

/// [`Cifar`] prepared for a parameter set, for inputs at its top level (encoded weights for a
/// real run, shapes only for trace mode).
#[derive(Debug)]
pub struct CifarModel {
    conv1: Vec<Conv1Block>,
    conv2: Vec<LinearTransform>,
    conv2_folds: Vec<i64>,
    conv2_slots: usize,
    bias2: Plaintext,
    dense: LinearTransform,
    dense_folds: Vec<i64>,
    dense_slots: usize,
    bias3: Plaintext,
    shape: Shape,
    level: usize,
}

impl CifarModel {
    /// Prepare `net` at `params`' top level; `symbolic` builds shapes only.
    ///
    /// # Errors
    /// A chain shorter than the network's five levels; slots above the ring's; encoding errors.
    pub fn prepare(
        params: &Parameters,
        net: &Cifar,
        rule: StrategyRule,
        symbolic: bool,
    ) -> Result<CifarModel> {
        let s = net.shape;
        let drop = params.primes_per_rescale();
        let top = params.max_level();
        let available = (top + 1 - params.base_primes()) / drop;
        if available < 5 {
            return Err(CircuitError::NotEnoughLevels { needed: 5, available, level: top });
        }
        let (mut level, mut scale) = (top, params.default_scale());
        let enc = |v: &[f64], slots, level, scale| {
            network::encode(params, v, slots, level, scale, symbolic)
        };
        // Layer 1: per block, Σ_offsets x ⊙ w + b.
        let q = network::dropped_scale(params, level);
        let o1sq = s.out1() * s.out1();
        let conv1 = (0..s.blocks())
            .map(|b| {
                let maps = s.block_maps(b);
                let spread = |f: &dyn Fn(usize) -> f64| -> Vec<f64> {
                    (0..maps.len() * o1sq).map(|t| f(maps.start + t / o1sq)).collect()
                };
                let w = (0..s.offsets())
                    .map(|o| enc(&spread(&|m| net.conv1[m][o]), s.slots, level, q))
                    .collect::<Result<_>>()?;
                let b = enc(&spread(&|m| net.bias1[m]), s.slots, level - drop, scale)?;
                Ok(Conv1Block { w, b })
            })
            .collect::<Result<_>>()?;
        level -= drop;
        // Layer 2: square.
        scale = scale * scale / network::dropped_scale(params, level);
        level -= drop;
        // Layer 3: the second convolution as one BSGS pass over the blocks.
        let mp = s.hidden().next_power_of_two();
        if mp > s.slots {
            return Err(CircuitError::Invalid(format!("{mp} rows exceed {} slots", s.slots)));
        }
        // One BSGS pass over all blocks needs one split: the blocks must touch the same
        // diagonals (they do at LoLa's sizes and the test shapes; checked, not assumed).
        let indices = net.conv2_indices(0, mp);
        if (1..s.blocks()).any(|b| net.conv2_indices(b, mp) != indices) {
            return Err(CircuitError::Invalid("the blocks touch different diagonals".into()));
        }
        let strategy = rule.strategy(mp);
        let conv2 = (0..s.blocks())
            .map(|b| {
                if symbolic {
                    LinearTransform::shapes(params, indices.clone(), s.slots, strategy, level, 1.0)
                } else {
                    let diags = net.conv2_diagonals(b, mp, &indices)?;
                    LinearTransform::new(params, diags, strategy, level)
                }
            })
            .collect::<Result<_>>()?;
        let bias2: Vec<f64> =
            (0..s.hidden()).map(|t| net.bias2[t / (s.out2() * s.out2())]).collect();
        let bias2 = enc(&bias2, mp, level - drop, scale)?;
        level -= drop;
        // Layer 4: square.
        scale = scale * scale / network::dropped_scale(params, level);
        level -= drop;
        // Layer 5: dense.
        let (dense, dense_folds, dense_slots) =
            network::dense(params, &net.dense, mp, level, rule, symbolic)?;
        let bias3 = enc(&net.bias3, dense_slots, level - drop, scale)?;
        Ok(CifarModel {
            conv1,
            conv2,
            conv2_folds: network::folds(s.slots, mp),
            conv2_slots: mp,
            bias2,
            dense,
            dense_folds,
            dense_slots,
            bias3,
            shape: s,
            level: top,
        })
    }

    /// Level and slots of the input ciphertexts.
    pub fn input_level(&self) -> usize {
        self.level
    }
    pub fn input_slots(&self) -> usize {
        self.shape.slots
    }
    /// Input ciphertexts (blocks × offsets).
    pub fn inputs(&self) -> usize {
        self.shape.blocks() * self.shape.offsets()
    }

    /// Every rotation the linear layers need.
    pub fn rotations(&self) -> Vec<i64> {
        let mut r = self.conv2[0].rotations();
        r.extend(&self.conv2_folds);
        r.extend(self.dense.rotations());
        r.extend(&self.dense_folds);
        r.sort_unstable();
        r.dedup();
        r
    }

    /// One inference: `inputs` as [`Cifar::inputs`] orders them, encrypted at
    /// [`CifarModel::input_level`], to the ciphertext whose first slots hold the class scores.
    /// The evaluator records the loads of the inputs and of every intermediate (as
    /// [`network::Model::evaluate`]). Symbolic inputs give the trace.
    ///
    /// # Errors
    /// A wrong number of inputs; missing keys; level, scale or slot mismatches.
    pub fn evaluate(&self, eval: &Evaluator, inputs: &[Ciphertext]) -> Result<Ciphertext> {
        if inputs.len() != self.inputs() {
            return Err(CircuitError::VectorLength { len: inputs.len(), cols: self.inputs() });
        }
        let square =
            |x: &Ciphertext| -> Result<Ciphertext> { Ok(eval.rescale(&eval.mul_relin(x, x)?)?) };
        let offsets = self.shape.offsets();
        let h1 = self
            .conv1
            .iter()
            .zip(inputs.chunks(offsets))
            .map(|(blk, xs)| {
                let mut acc = eval.mul_plain(&xs[0], &blk.w[0])?;
                for (x, w) in xs.iter().zip(&blk.w).skip(1) {
                    eval.add_assign(&mut acc, &eval.mul_plain(x, w)?)?;
                }
                square(&eval.add_plain(&eval.rescale(&acc)?, &blk.b)?)
            })
            .collect::<Result<Vec<_>>>()?;
        let terms: Vec<_> = self.conv2.iter().zip(&h1).collect();
        let mut h2 = LinearTransform::evaluate_sum(eval, &terms)?;
        for &f in &self.conv2_folds {
            h2 = eval.add(&h2, &eval.rotate(&h2, f)?)?;
        }
        h2.set_slots(self.conv2_slots);
        let h2 = square(&eval.add_plain(&h2, &self.bias2)?)?;
        let mut y = self.dense.evaluate(eval, &h2)?;
        for &f in &self.dense_folds {
            y = eval.add(&y, &eval.rotate(&y, f)?)?;
        }
        y.set_slots(self.dense_slots);
        let y = eval.add_plain(&y, &self.bias3)?;
        Ok(y)
    }
}

/// Record one LoLa-CIFAR inference at `params` in trace mode (seed-0 weights, shapes only).
///
/// # Errors
/// As [`CifarModel::prepare`] and [`CifarModel::evaluate`].
pub fn record(
    params: &Parameters,
    rule: StrategyRule,
    seeded: bool,
) -> Result<basalt_trace::Trace> {
    let model = CifarModel::prepare(params, &Cifar::new(LOLA_CIFAR, 0), rule, true)?;
    let inputs =
        Inputs { count: model.inputs(), level: model.input_level(), slots: model.input_slots() };
    record_shapes(params, &model.rotations(), seeded, inputs, |eval, cts| model.evaluate(eval, cts))
}
