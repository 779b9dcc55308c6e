//! The MNIST networks of Osiris Table III(a) (Set I: MLP, LoLa) and CraterLake Table 3
//! ("MNIST Unencryp. Wghts.", LoLa), one 28×28 image per inference.
//!
//! Weights are pseudo-random from a seed ([`basalt_circuits::testing::random_matrix`], uniform
//! in `±1/√fan_in`): no trained model is available offline, and neither the kernel stream nor
//! the time depends on the values. Every layer keeps its paper's shape.
//!
//! # LoLa-CryptoNets (Brutzkus, Elisha, Gilad-Bachrach, ICML 2019, §5 MNIST)
//! conv 5 maps 5×5 stride 2 (image padded to 29×29, 5×13×13 = 845 outputs) → square →
//! dense 845→100 → square → dense 100→10; depth 5 (= Osiris Set I's `L_eff`).
//! Packing as LoLa describes it: the client sends the image in *convolution representation*,
//! one vector per kernel offset `(di, dj)` holding pixel `(2i+di, 2j+dj)` at slot
//! `m·169 + 13i + j` for each map `m` (25 ciphertexts of 845 values in 1024 slots), so the
//! convolution is 25 plaintext products and no rotation. \[GAP\] LoLa's dense layers use its
//! stacked/interleaved representations; we use hybrid diagonals with BSGS (Osiris' own
//! matrix-vector method, whose NH/SH/DH variants Table III times): 845→100 is 128 diagonals
//! over 1024 slots + 3 rotate-and-sum steps, 100→10 is 16 diagonals over 128 slots + 3.
//!
//! # SecureML MLP (Mohassel, Zhang, S&P 2017, §V)
//! dense 784→128 → square → dense 128→128 → square → dense 128→10; depth 5. The image is one
//! ciphertext (784 pixels in 1024 slots). \[GAP\] SecureML's activation is ReLU (in MPC); under
//! CKKS at depth 5 we use the square, as CryptoNets and LoLa do.

use basalt_circuits::testing::random_matrix;

use crate::lenet;
use crate::network::{Layer, Network};

/// Image side, padded side (CryptoNets adds a zero row and column), kernel, stride, maps.
const SIDE: usize = 28;
const PADDED: usize = 29;
const KERNEL: usize = 5;
const STRIDE: usize = 2;
const MAPS: usize = 5;
/// Output positions per map: 13×13.
const OUT: usize = (PADDED - KERNEL) / STRIDE + 1;

/// The networks of the reproduced rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Net {
    Mlp,
    Lola,
    /// Orion's LeNet ([`crate::lenet`], Osiris Set II).
    Lenet,
}

impl Net {
    /// The network with weights from `seed`.
    pub fn build(self, seed: u64) -> Network {
        match self {
            Net::Mlp => mlp(seed),
            Net::Lola => lola(seed),
            Net::Lenet => lenet::lenet(lenet::Shape::ORION, seed, &test_image(seed)),
        }
    }

    /// The client's input vectors for `image` (28×28, row-major, values in [0, 1]).
    pub fn inputs(self, image: &[f64]) -> Vec<Vec<f64>> {
        match self {
            Net::Mlp | Net::Lenet => vec![image.to_vec()],
            Net::Lola => convolution_representation(image),
        }
    }
}

/// `rows × cols` weights and `rows` biases, uniform in `±1/√cols`.
pub(crate) fn dense(rows: usize, cols: usize, seed: u64) -> Layer {
    let a = 1.0 / (cols as f64).sqrt();
    let b = random_matrix(1, rows, a, seed ^ 0xb1a5).remove(0);
    Layer::Dense { w: random_matrix(rows, cols, a, seed), b }
}

/// SecureML's three fully connected layers with square activations.
pub fn mlp(seed: u64) -> Network {
    Network {
        name: "MLP (SecureML)",
        input_slots: 1024,
        layers: vec![
            dense(128, SIDE * SIDE, seed),
            Layer::Square,
            dense(128, 128, seed + 1),
            Layer::Square,
            dense(10, 128, seed + 2),
        ],
    }
}

/// LoLa-CryptoNets' MNIST network.
pub fn lola(seed: u64) -> Network {
    let k = random_matrix(MAPS, KERNEL * KERNEL, 1.0 / KERNEL as f64, seed);
    let bias = random_matrix(1, MAPS, 0.2, seed ^ 0xb1a5).remove(0);
    // Weight vector of offset o: map m's kernel weight at o on every output position of m.
    let w = (0..KERNEL * KERNEL)
        .map(|o| (0..MAPS * OUT * OUT).map(|t| k[t / (OUT * OUT)][o]).collect())
        .collect();
    let b = (0..MAPS * OUT * OUT).map(|t| bias[t / (OUT * OUT)]).collect();
    Network {
        name: "LoLa-CryptoNets MNIST",
        input_slots: 1024,
        layers: vec![
            Layer::Pointwise { w, b },
            Layer::Square,
            dense(100, MAPS * OUT * OUT, seed + 1),
            Layer::Square,
            dense(10, 100, seed + 2),
        ],
    }
}

/// LoLa's convolution representation of a 28×28 image: for each kernel offset `(di, dj)`,
/// pixel `(2i+di, 2j+dj)` of the zero-padded 29×29 image at slot `m·169 + 13i + j`, for every
/// map `m`.
pub fn convolution_representation(image: &[f64]) -> Vec<Vec<f64>> {
    assert_eq!(image.len(), SIDE * SIDE, "a 28x28 image");
    let px = |r: usize, c: usize| if r < SIDE && c < SIDE { image[r * SIDE + c] } else { 0.0 };
    (0..KERNEL * KERNEL)
        .map(|o| {
            let (di, dj) = (o / KERNEL, o % KERNEL);
            (0..MAPS * OUT * OUT)
                .map(|t| {
                    let p = t % (OUT * OUT);
                    px(STRIDE * (p / OUT) + di, STRIDE * (p % OUT) + dj)
                })
                .collect()
        })
        .collect()
}

/// The first layer of [`lola`] computed directly on the image (a strided convolution), to
/// check the packing: it must equal the pointwise layer on the convolution representation.
pub fn lola_conv_direct(net: &Network, image: &[f64]) -> Vec<f64> {
    let Some(Layer::Pointwise { w, b }) = net.layers.first() else { panic!("not a LoLa network") };
    let px = |r: usize, c: usize| if r < SIDE && c < SIDE { image[r * SIDE + c] } else { 0.0 };
    (0..MAPS * OUT * OUT)
        .map(|t| {
            let (i, j) = ((t % (OUT * OUT)) / OUT, t % OUT);
            let sum: f64 = (0..KERNEL * KERNEL)
                .map(|o| w[o][t] * px(STRIDE * i + o / KERNEL, STRIDE * j + o % KERNEL))
                .sum();
            sum + b[t]
        })
        .collect()
}

/// A reproducible stand-in image: values in [0, 1] with a blob in the middle, like a digit.
pub fn test_image(seed: u64) -> Vec<f64> {
    let noise = random_matrix(1, SIDE * SIDE, 0.5, seed).remove(0);
    (0..SIDE * SIDE)
        .map(|t| {
            let (r, c) = ((t / SIDE) as f64 - 13.5, (t % SIDE) as f64 - 13.5);
            let blob = (-(r * r + c * c) / 40.0).exp();
            (0.6 * blob + 0.4 * (noise[t] + 0.5) * blob).clamp(0.0, 1.0)
        })
        .collect()
}
