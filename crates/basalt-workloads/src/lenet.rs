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
//! give). Weights are seeded pseudo-random; the time does not depend on them.
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
    let conv = |k: usize| {
        let (lin, lout) = (l[k], l[k + 1]);
        let s = ConvShape {
            cin: lin.channels,
            cout: lout.channels,
            k: shape.kernel,
            stride: 2,
            lin,
            lout,
        };
        let c = Conv::random(s, seed + k as u64);
        let mut b = vec![0.0; lout.footprint()];
        let r = lout.res();
        for co in 0..lout.channels {
            for p in 0..r * r {
                b[lout.slot(co, p / r, p % r)] = c.b[co];
            }
        }
        Layer::Sparse { a: c.entries().collect(), b }
    };
    // The first dense layer reads the multiplexed 7×7 maps in place (PyTorch's flatten order
    // `c, i, j` mapped to the slots).
    let l2 = l[2];
    let r = l2.res();
    let column = |q: usize| l2.slot(q / (r * r), (q % (r * r)) / r, q % r);
    let fc1 = fully_connected(shape.hidden, l2.channels * r * r, column, seed + 2);
    let mut net = Network {
        name: "LeNet (Orion)",
        input_slots: shape.input_slots(),
        layers: vec![
            conv(0),
            Layer::Square,
            conv(1),
            Layer::Square,
            fc1,
            Layer::Square,
            fully_connected(shape.classes, shape.hidden, |q| q, seed + 3),
        ],
    };
    fold_batch_norms(&mut net, image);
    net
}

/// A `rows × cols` fully connected layer ([`mnist`]'s weights) whose input `q` sits at slot
/// `column(q)`, as a sparse layer: every LeNet layer is split by the same rule.
fn fully_connected(rows: usize, cols: usize, column: impl Fn(usize) -> usize, seed: u64) -> Layer {
    let Layer::Dense { w, b } = mnist::dense(rows, cols, seed) else {
        unreachable!("mnist::dense builds a dense layer")
    };
    let a = w
        .iter()
        .enumerate()
        .flat_map(|(o, row)| row.iter().enumerate().map(move |(q, &v)| (o, q, v)))
        .map(|(o, q, v)| (o, column(q), v))
        .collect();
    Layer::Sparse { a, b }
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
