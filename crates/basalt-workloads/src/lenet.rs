//! LeNet for MNIST as Osiris Table III(a) runs it (Set II): "a four-layer CNN for MNIST (two
//! strided convolution and two fully connected layers) adopted from Orion \[23\] and the CHET
//! \[22\] and EVA \[21\] FHE compilers" (§VI), convolutions as matrix-vector products with
//! Orion's Hybrid++ packing so that the column's hoisting applies to every layer (§III).
//!
//! # Network (Orion's open-source `models/lenet.py`, "LeNet Large" in its `configs/lenet.yaml`)
//! conv 5×5 1→32, stride 2, padding 2 (28×28 → 14×14) → BN → square → conv 5×5 32→64, stride 2,
//! padding 2 (→ 7×7) → BN → square → dense 3136→512 → BN → square → dense 512→10. Orion's
//! activation is `Quad` (`x²`); depth 7, which is Set II's `L_eff` (Orion's config: `LogN` 14,
//! seven 35-bit levels, conjugate-invariant ring). Batch norms are folded into the layer
//! before them: \[GAP\] with no trained model offline, each folded layer is scaled so that its
//! outputs peak at 1 on the test image (the activations stay in the range trained batch norms
//! give). [`lenet`] builds it with seeded pseudo-random weights (the trace and the time do
//! not depend on them); [`trained`] with the weights `scripts/train_weights.py` trains on the
//! digits (28×28, square activations; no batch norm is trained: a data-dependent
//! initialisation keeps the squares in range, and each layer is scaled to peak at 1 on the
//! training split, compensated exactly by the next layer, `(k·a)² = k²·a²`).
//!
//! # Packing (Orion's "advanced" packing and "hybrid" embedding)
//! The image is one ciphertext, row-major. A stride-2 convolution doubles the multiplexing gap
//! ([`crate::resnet`]'s layout, Orion's single-shot multiplexing): 32 channels of 14×14 in
//! 8 blocks of 28×28 (6,272 slots), then 64 of 7×7 in 4 blocks (3,136 slots), which the first
//! dense layer reads in place. Every layer is one hybrid-diagonal BSGS product built from its
//! matrix's non-zero entries ([`crate::network::Layer::Sparse`], `n1` by one rule for all four):
//! 288, 1,649, 512 and 16 non-zero diagonals (tests). \[GAP\] Orion leaves its last layer
//! unfolded (all 512 diagonals, no rotate-and-sum); we fold it like the others, as the MLP and
//! LoLa rows do. Basalt packs `N/2 = 8192` complex slots where Orion and Osiris use `N` real
//! ones; every layer still fits, with the same diagonals.

use basalt_circuits::CircuitError;

use crate::digits::{self, DataError};
use crate::mnist;
use crate::network::{Layer, Network};
use crate::resnet::{Conv, ConvShape, Layout};

/// LeNet's sizes; [`Shape::ORION`] is the benchmark, smaller ones run for real in tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Image side (a multiple of 4: two stride-2 convolutions).
    pub side: usize,
    /// Output channels of the two convolutions.
    pub channels: [usize; 2],
    /// Odd kernel side; padding `kernel / 2`.
    pub kernel: usize,
    pub hidden: usize,
    pub classes: usize,
}

impl Shape {
    /// Orion's LeNet on 28×28 MNIST images.
    pub const ORION: Shape =
        Shape { side: 28, channels: [32, 64], kernel: 5, hidden: 512, classes: 10 };

    /// Slot layouts of the image and of the two convolutions' outputs.
    fn layouts(&self) -> [Layout; 3] {
        let [c1, c2] = self.channels;
        [
            Layout { side: self.side, gap: 1, channels: 1 },
            Layout { side: self.side, gap: 2, channels: c1 },
            Layout { side: self.side, gap: 4, channels: c2 },
        ]
    }

    /// Slots of the input ciphertext: the first convolution's output padded to a power of two
    /// (the hybrid method needs its padded rows within the input's slots).
    pub fn input_slots(&self) -> usize {
        self.layouts()[1].footprint().next_power_of_two()
    }
}

/// The network with weights from `seed`, batch norms folded on `image` (`side²` pixels).
pub fn lenet(shape: Shape, seed: u64, image: &[f64]) -> Network {
    let l = shape.layouts();
    let conv = |k: usize| Conv::random(conv_shape(&shape, k), seed + k as u64);
    let dense = |rows, cols, seed| {
        let Layer::Dense { w, b } = mnist::dense(rows, cols, seed) else {
            unreachable!("mnist::dense builds a dense layer")
        };
        (w, b)
    };
    let r = l[2].res();
    let mut net = assemble(
        shape,
        [conv(0), conv(1)],
        dense(shape.hidden, l[2].channels * r * r, seed + 2),
        dense(shape.classes, shape.hidden, seed + 3),
    );
    fold_batch_norms(&mut net, image);
    net
}

/// The shape of convolution `k` (0 or 1) in the multiplexed layouts.
fn conv_shape(shape: &Shape, k: usize) -> ConvShape {
    let l = shape.layouts();
    let (lin, lout) = (l[k], l[k + 1]);
    ConvShape { cin: lin.channels, cout: lout.channels, k: shape.kernel, stride: 2, lin, lout }
}

/// The network from its two convolutions and two dense layers (`(rows, bias)`, the first
/// reading PyTorch's flatten order `c, i, j` of the second convolution's maps).
fn assemble(
    shape: Shape,
    convs: [Conv; 2],
    fc1: (Vec<Vec<f64>>, Vec<f64>),
    fc2: (Vec<Vec<f64>>, Vec<f64>),
) -> Network {
    let l = shape.layouts();
    let sparse = |c: Conv, lout: Layout| {
        let mut b = vec![0.0; lout.footprint()];
        let r = lout.res();
        for co in 0..lout.channels {
            for p in 0..r * r {
                b[lout.slot(co, p / r, p % r)] = c.b[co];
            }
        }
        Layer::Sparse { a: c.entries().collect(), b }
    };
    // The first dense layer reads the multiplexed 7×7 maps in place.
    let l2 = l[2];
    let r = l2.res();
    let column = |q: usize| l2.slot(q / (r * r), (q % (r * r)) / r, q % r);
    let [c0, c1] = convs;
    Network {
        name: "LeNet (Orion)",
        input_slots: shape.input_slots(),
        layers: vec![
            sparse(c0, l[1]),
            Layer::Square,
            sparse(c1, l[2]),
            Layer::Square,
            fully_connected(fc1, column),
            Layer::Square,
            fully_connected(fc2, |q| q),
        ],
    }
}

/// A fully connected layer (`rows`, bias) whose input `q` sits at slot `column(q)`, as a
/// sparse layer: every LeNet layer is split by the same rule.
fn fully_connected((w, b): (Vec<Vec<f64>>, Vec<f64>), column: impl Fn(usize) -> usize) -> Layer {
    let a = w
        .iter()
        .enumerate()
        .flat_map(|(o, row)| row.iter().enumerate().map(move |(q, &v)| (o, q, v)))
        .map(|(o, q, v)| (o, column(q), v))
        .collect();
    Layer::Sparse { a, b }
}

const ORION_WEIGHTS: &[u8] = include_bytes!("../../../data/weights/lenet.bin");
const TOY_WEIGHTS: &[u8] = include_bytes!("../../../data/weights/lenet_toy.bin");

impl Shape {
    /// The toy LeNet of the `--quick` runs and tests: the raw 8×8 digits, 8 and 16 channels,
    /// 3×3 kernels, 16 hidden units.
    pub const TOY: Shape = Shape { side: 8, channels: [8, 16], kernel: 3, hidden: 16, classes: 10 };
}

/// The network with the weights `scripts/train_weights.py` trained on the digits (square
/// activations, each layer scaled to peak at 1 on the training split, the logits bounded by
/// 16): [`Shape::ORION`] on 28×28 images, or [`Shape::TOY`] on the raw 8×8 ones.
///
/// # Errors
/// Another shape (no weights are trained for it), or a malformed weight file.
pub fn trained(shape: Shape) -> Result<Network, DataError> {
    let (file, bytes) = match shape {
        Shape::ORION => ("data/weights/lenet.bin", ORION_WEIGHTS),
        Shape::TOY => ("data/weights/lenet_toy.bin", TOY_WEIGHTS),
        other => {
            return Err(DataError {
                file: "data/weights",
                reason: format!("no trained LeNet of shape {other:?}"),
            });
        }
    };
    let a = digits::parse_weights(file, bytes)?;
    let [c1, c2] = shape.channels;
    let k = shape.kernel;
    let r = shape.side / 4;
    let want: [&[usize]; 8] = [
        &[c1, 1, k, k],
        &[c1],
        &[c2, c1, k, k],
        &[c2],
        &[shape.hidden, c2 * r * r],
        &[shape.hidden],
        &[shape.classes, shape.hidden],
        &[shape.classes],
    ];
    let have: Vec<&[usize]> = a.iter().map(|x| x.shape.as_slice()).collect();
    if have != want {
        return Err(DataError { file, reason: format!("shapes {have:?}, expected {want:?}") });
    }
    let bad = |e: CircuitError| DataError { file, reason: e.to_string() };
    let conv = |i: usize| {
        Conv::from_weights(
            conv_shape(&shape, i),
            a[2 * i].values.clone(),
            a[2 * i + 1].values.clone(),
        )
        .map_err(bad)
    };
    let dense = |i: usize| {
        let rows = a[i].values.chunks(a[i].shape[1]).map(<[f64]>::to_vec).collect();
        (rows, a[i + 1].values.clone())
    };
    let mut net = assemble(shape, [conv(0)?, conv(1)?], dense(4), dense(6));
    net.name = if shape == Shape::ORION {
        "LeNet (Orion), trained on digits"
    } else {
        "LeNet (toy), trained on digits"
    };
    Ok(net)
}

/// The image a trained [`Shape`] reads: 28×28 ([`digits::to28`]) or the raw 8×8 grey levels,
/// in `[0, 1]`.
pub fn image(shape: Shape, d: &digits::Digit) -> Vec<f64> {
    if shape.side == 28 {
        digits::to28(d)
    } else {
        d.pixels.iter().map(|&p| f64::from(p) / 16.0).collect()
    }
}

/// Scale every linear layer (weights and bias: a batch norm's affine map folded in) so that
/// its outputs on `image` peak at 1.
fn fold_batch_norms(net: &mut Network, image: &[f64]) {
    let (name, input_slots) = (net.name, net.input_slots);
    let mut x = image.to_vec();
    for layer in &mut net.layers {
        let one = Network { name, input_slots, layers: vec![layer.clone()] };
        let mut y = one.evaluate_plain(&[x]);
        if let Layer::Sparse { a, b } = layer {
            let peak = y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let k = 1.0 / peak.max(f64::MIN_POSITIVE);
            a.iter_mut().for_each(|e| e.2 *= k);
            b.iter_mut().chain(y.iter_mut()).for_each(|v| *v *= k);
        }
        x = y;
    }
}

/// [`mnist::test_image`] resampled to `side`×`side` (nearest pixel).
pub fn test_image(side: usize, seed: u64) -> Vec<f64> {
    let img = mnist::test_image(seed);
    let at = |k: usize| k * 28 / side;
    (0..side * side).map(|t| img[at(t / side) * 28 + at(t % side)]).collect()
}
