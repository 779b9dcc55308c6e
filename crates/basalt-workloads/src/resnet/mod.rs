//! ResNet-20 for CIFAR-10 as one encrypted CKKS program: CraterLake Table 3/4/5's "ResNet-20"
//! (§8: Lee et al.'s FHE ResNet-20 \[48\], one inference on one image, all channels packed in one
//! ciphertext before bootstrapping).
//!
//! # Network (He et al. 2016, §4.2; \[48\] keeps it unchanged)
//! conv 3×3 3→16 → ReLU → 3 stages × 3 basic blocks (16, 32, 64 channels on 32×32, 16×16,
//! 8×8; the first block of stages 2 and 3 convolves with stride 2 and its shortcut is a 1×1
//! stride-2 convolution \[GAP: He et al.'s option B\]) → global average pool → dense 64→10. A
//! basic block is `ReLU(conv(ReLU(conv(x))) + shortcut(x))`; batch normalisation is folded into
//! each convolution's weights and bias. 19 ReLUs, 21 convolutions, one dense layer.
//!
//! The structure is written once ([`Arch::run`]) against [`Exec`], which three executors
//! implement: the cleartext twin, the level walk that places bootstraps and fixes each layer's
//! level, and the encrypted run (real ciphertexts, or shapes in trace mode).
//!
//! # Packing \[GAP\]
//! One ciphertext of `slots` slots holds every channel (CraterLake's modification of \[48\]).
//! Stage `s` uses Lee et al.'s *multiplexed* layout (ICML 2022) with gap `g = 2^s` on the
//! 32×32 grid: channel `c`, position `(i, j)` sits at slot
//! `(c / g²)·32² + (g·i + (c mod g²) / g)·32 + g·j + c mod g`, so a stride-2 convolution needs
//! no repacking and every stage fills `16·32² / g` slots. A convolution is then a
//! matrix-vector product over the slots whose generalised diagonal `k` is `W[t][t + k]`; only
//! 162 to 1,575 diagonals are non-zero at full size (92 and 275 for the shortcuts), applied by
//! [`LinearTransform`](basalt_circuits::lintrans::LinearTransform)'s BSGS with a
//! [`ConvStrategy`] (CraterLake's rows: single hoisting in Lattigo's order, as their bootstrap
//! rows; Osiris': the Table III column's hoisting in the GSC order; `n1` the power of two with
//! fewest rotations). The pool sums each
//! channel's positions by `2·log2(8)` rotate-and-adds; the dense layer (the 1/64 of the mean
//! folded in) is one more transform.
//!
//! # ReLU and bootstraps
//! `ReLU(x) = x·(1 + sign(x))/2` with Lee et al.'s composite minimax sign (EUROCRYPT 2021,
//! \[47\]; \[48\] uses degrees 15, 15, 27, depth 4 + 4 + 5; ε = 2^−9, [`SIGN_EPS`]) built by
//! [`basalt_circuits::polynomial::minimax::sign`]; the last stage is evaluated at the scale
//! that brings the product back to the network's scale `Δ`, so residual sums add equal scales.
//! The sign needs inputs in `[−1, 1]`: the trained networks ([`trained()`]) scale every ReLU
//! input to peak at 0.5 on the training split; the seeded ones of the trace fold each batch
//! norm so that its convolution's outputs peak at [`ACTIVATION_BOUND`] on the test image (its
//! statistics, \[GAP\]).
//! A bootstrap refreshes a ciphertext whenever the next operation needs more levels than it has
//! (\[GAP\]: \[48\]'s placement is not in CraterLake): on CraterLake's chain (10 levels after a
//! bootstrap) each 13-level sign is split across two bootstraps.
//!
//! The runs on the digits use weights trained by `scripts/train_weights.py` (`trained.rs`);
//! the trace ([`record_resnet20`]) uses seeded pseudo-random ones, as its time does not depend
//! on them.
//!
//! This file holds the network, its cleartext twin and the level walk; `model.rs` the
//! encrypted run, its bootstraps and the trace recorder; `trained.rs` the trained weights.

mod model;
pub mod steps;
mod trained;

pub(crate) use model::fewest_rotations;
pub use model::{Bootstrap, BootstrapMarker, ConvStrategy, Model, Refresh, record_resnet20};
pub use trained::{SplitScore, TOY, image, score_split, trained};

use basalt_circuits::polynomial::Chebyshev;
use basalt_circuits::polynomial::minimax::CompositeSign;
use basalt_circuits::testing::random_matrix;
use basalt_circuits::{CircuitError, Result};
use basalt_ckks::Parameters;

/// Largest |output| of every folded convolution on the test image: three residual additions in
/// a stage stay below 1, the sign's domain.
pub const ACTIVATION_BOUND: f64 = 0.2;

/// Sizes of a ResNet for `side`×`side` images (ResNet-20: [`Arch::RESNET20`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arch {
    pub side: usize,
    pub in_channels: usize,
    /// Channels of stage 1 (doubled at each later stage).
    pub base_channels: usize,
    /// Basic blocks per stage (ResNet-`6n+2`).
    pub blocks: usize,
    pub classes: usize,
    /// Slots of the ciphertext (at least every stage's multiplexed footprint).
    pub slots: usize,
}

impl Arch {
    /// ResNet-20 on CIFAR-10, in the 2^15 slots of CraterLake's packed bootstrapping.
    pub const RESNET20: Arch = Arch {
        side: 32,
        in_channels: 3,
        base_channels: 16,
        blocks: 3,
        classes: 10,
        slots: 1 << 15,
    };

    pub(super) fn stage_layout(&self, stage: usize) -> Layout {
        Layout { side: self.side, gap: 1 << stage, channels: self.base_channels << stage }
    }

    /// Input layout: the image's channels one after the other.
    fn input_layout(&self) -> Layout {
        Layout { side: self.side, gap: 1, channels: self.in_channels }
    }

    /// The shapes of the linear layers in [`Arch::run`] order: stem, then per block conv1,
    /// conv2 and (first block of a later stage) the shortcut.
    fn convs(&self) -> Vec<ConvShape> {
        let mut v = vec![ConvShape {
            cin: self.in_channels,
            cout: self.base_channels,
            k: 3,
            stride: 1,
            lin: self.input_layout(),
            lout: self.stage_layout(0),
        }];
        for s in 0..3 {
            for b in 0..self.blocks {
                let down = s > 0 && b == 0;
                let lin = self.stage_layout(if down { s - 1 } else { s });
                let lout = self.stage_layout(s);
                let stride = if down { 2 } else { 1 };
                let (cin, cout) = (lin.channels, lout.channels);
                v.push(ConvShape { cin, cout, k: 3, stride, lin, lout });
                v.push(ConvShape { cin: cout, cout, k: 3, stride: 1, lin: lout, lout });
                if down {
                    v.push(ConvShape { cin, cout, k: 1, stride: 2, lin, lout });
                }
            }
        }
        v
    }

    /// [`Arch::convs`], each checked to fit the slots.
    fn checked_convs(&self) -> Result<Vec<ConvShape>> {
        let shapes = self.convs();
        if let Some(s) =
            shapes.iter().find(|s| s.lout.footprint().max(s.lin.footprint()) > self.slots)
        {
            return Err(CircuitError::Invalid(format!(
                "a {}-channel stage needs {} slots, the ciphertext has {}",
                s.lout.channels,
                s.lout.footprint(),
                self.slots
            )));
        }
        Ok(shapes)
    }

    /// Bootstraps one inference takes under [`Model::prepare`]'s rule, without weights.
    ///
    /// # Errors
    /// As [`Model::prepare`].
    pub fn bootstraps(
        &self,
        params: &Parameters,
        sign: &CompositeSign,
        input_level: usize,
        refreshed: usize,
        scales: (f64, f64),
    ) -> Result<usize> {
        Ok(Levels::walk(params, self, sign, input_level, refreshed, scales)?.bootstraps)
    }

    /// The network, written once: `x` through every layer to the class scores.
    ///
    /// # Errors
    /// The executor's.
    pub fn run<E: Exec>(&self, e: &mut E, x: E::V) -> Result<E::V> {
        let mut layer = 0;
        let mut next = || {
            layer += 1;
            layer - 1
        };
        let y = e.conv(next(), &x)?;
        let mut x = e.relu(&y)?;
        for s in 0..3 {
            for b in 0..self.blocks {
                let y = e.conv(next(), &x)?;
                let y = e.relu(&y)?;
                let y = e.conv(next(), &y)?;
                let short = if s > 0 && b == 0 { e.conv(next(), &x)? } else { x.clone() };
                let sum = e.add(&y, &short)?;
                x = e.relu(&sum)?;
            }
        }
        e.pool_dense(&x)
    }
}

/// The operations of [`Arch::run`], by executor: cleartext, levels, ciphertexts.
pub trait Exec {
    type V: Clone;
    /// Convolution `layer` (folded batch norm, bias included).
    fn conv(&mut self, layer: usize, x: &Self::V) -> Result<Self::V>;
    fn relu(&mut self, x: &Self::V) -> Result<Self::V>;
    fn add(&mut self, a: &Self::V, b: &Self::V) -> Result<Self::V>;
    /// Global average pool and the dense layer.
    fn pool_dense(&mut self, x: &Self::V) -> Result<Self::V>;
}

/// Multiplexed slot layout of one stage (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) side: usize,
    pub(crate) gap: usize,
    pub(crate) channels: usize,
}

impl Layout {
    /// Feature-map side at this stage.
    pub(crate) fn res(&self) -> usize {
        self.side / self.gap
    }
    pub(crate) fn slot(&self, c: usize, i: usize, j: usize) -> usize {
        let (g, s) = (self.gap, self.side);
        (c / (g * g)) * s * s + (g * i + (c % (g * g)) / g) * s + g * j + c % g
    }
    /// The channel and position `(c, i, j)` held at `slot`, if any: [`Layout::slot`] inverted
    /// (the block of `g²` channels, then the row and column of the `side`×`side` grid, each
    /// split into position and channel offset).
    pub(crate) fn position(&self, slot: usize) -> Option<(usize, usize, usize)> {
        let (g, s) = (self.gap, self.side);
        let (block, rest) = (slot / (s * s), slot % (s * s));
        let (row, col) = (rest / s, rest % s);
        let c = block * g * g + (row % g) * g + col % g;
        (c < self.channels).then_some((c, row / g, col / g))
    }
    pub(crate) fn footprint(&self) -> usize {
        self.slot(self.channels - 1, self.res() - 1, self.res() - 1) + 1
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ConvShape {
    pub(crate) cin: usize,
    pub(crate) cout: usize,
    pub(crate) k: usize,
    pub(crate) stride: usize,
    pub(crate) lin: Layout,
    pub(crate) lout: Layout,
}

/// A convolution with folded batch norm: weights `[cout][cin][k][k]`, bias `[cout]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Conv {
    pub(super) shape: ConvShape,
    w: Vec<f64>,
    pub(crate) b: Vec<f64>,
}

impl Conv {
    pub(crate) fn random(shape: ConvShape, seed: u64) -> Conv {
        let fan_in = shape.cin * shape.k * shape.k;
        let a = 1.0 / (fan_in as f64).sqrt();
        let w = random_matrix(1, shape.cout * fan_in, a, seed).remove(0);
        let b = random_matrix(1, shape.cout, 0.1 * a, seed ^ 0xb1a5).remove(0);
        Conv { shape, w, b }
    }

    /// Trained weights `[cout][cin][k][k]` (row-major) and biases `[cout]`.
    ///
    /// # Errors
    /// [`CircuitError::VectorLength`] if a length does not match the shape.
    pub(crate) fn from_weights(shape: ConvShape, w: Vec<f64>, b: Vec<f64>) -> Result<Conv> {
        let n = shape.cout * shape.cin * shape.k * shape.k;
        if w.len() != n {
            return Err(CircuitError::VectorLength { len: w.len(), cols: n });
        }
        if b.len() != shape.cout {
            return Err(CircuitError::VectorLength { len: b.len(), cols: shape.cout });
        }
        Ok(Conv { shape, w, b })
    }

    /// Every non-zero matrix entry `(output slot, input slot, weight)`; zero padding of `k/2`.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        let ConvShape { cin, cout, k, stride, lin, lout } = self.shape;
        let (rin, rout, pad) = (lin.res() as isize, lout.res(), (k / 2) as isize);
        (0..cout).flat_map(move |co| {
            (0..rout * rout).flat_map(move |p| {
                let (i, j) = (p / rout, p % rout);
                (0..cin * k * k).filter_map(move |q| {
                    let (ci, di, dj) = (q / (k * k), (q / k) % k, q % k);
                    let r = (stride * i) as isize + di as isize - pad;
                    let c = (stride * j) as isize + dj as isize - pad;
                    let inside = (0..rin).contains(&r) && (0..rin).contains(&c);
                    inside.then(|| {
                        let w = self.w[co * cin * k * k + q];
                        (lout.slot(co, i, j), lin.slot(ci, r as usize, c as usize), w)
                    })
                })
            })
        })
    }

    /// Generalised diagonal `k` of the matrix of [`Conv::entries`] over `slots` slots: at
    /// output slot `o`, the weight joining it to input slot `o + k` (mod `slots`), zero where
    /// the two are not a kernel tap apart. Computed from the weights in one pass over the slots,
    /// so a transform can build each diagonal when it encodes it instead of holding all of them.
    pub(crate) fn diagonal(&self, k: usize, slots: usize) -> Vec<f64> {
        let ConvShape { cin, k: kk, stride, lin, lout, .. } = self.shape;
        let pad = kk / 2;
        let mut d = vec![0.0; slots];
        for (o, v) in d.iter_mut().enumerate() {
            let Some((co, i, j)) = lout.position(o) else { continue };
            let Some((ci, r, c)) = lin.position((o + k) % slots) else { continue };
            // Tap (di, dj) = (r, c) − stride·(i, j) + pad, inside the kernel.
            let di = (r + pad).wrapping_sub(stride * i);
            let dj = (c + pad).wrapping_sub(stride * j);
            if di < kk && dj < kk {
                *v = self.w[((co * cin + ci) * kk + di) * kk + dj];
            }
        }
        d
    }

    /// Cleartext convolution of a slot vector in the input layout, into the output layout: the
    /// products of [`Conv::entries`] in the same order (bias first), with each channel's slot
    /// base computed once (`slot(c, i, j) = slot(c, 0, 0) + gap·(side·i + j)`), so that the
    /// twin scores a whole test split in minutes.
    fn plain(&self, x: &[f64], slots: usize) -> Vec<f64> {
        let ConvShape { cin, cout, k, stride, lin, lout } = self.shape;
        let (rin, rout, pad) = (lin.res(), lout.res(), k / 2);
        let mut y = vec![0.0; slots];
        for co in 0..cout {
            let w = &self.w[co * cin * k * k..(co + 1) * cin * k * k];
            let out = lout.slot(co, 0, 0);
            for i in 0..rout {
                for j in 0..rout {
                    let mut acc = self.b[co];
                    for ci in 0..cin {
                        let base = lin.slot(ci, 0, 0);
                        for di in 0..k {
                            // Outside the image (zero padding) wraps to at least `rin`.
                            let r = (stride * i + di).wrapping_sub(pad);
                            if r >= rin {
                                continue;
                            }
                            for dj in 0..k {
                                let c = (stride * j + dj).wrapping_sub(pad);
                                if c < rin {
                                    acc += w[(ci * k + di) * k + dj]
                                        * x[base + lin.gap * (lin.side * r + c)];
                                }
                            }
                        }
                    }
                    y[out + lout.gap * (lout.side * i + j)] = acc;
                }
            }
        }
        y
    }

    fn scale(&mut self, a: f64) {
        self.w.iter_mut().chain(self.b.iter_mut()).for_each(|v| *v *= a);
    }
}

/// ResNet weights: the convolutions in [`Arch::run`] order and the dense layer.
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    pub arch: Arch,
    pub(super) convs: Vec<Conv>,
    pub(super) dense: Vec<Vec<f64>>,
    pub(super) dense_b: Vec<f64>,
}

impl Network {
    /// Pseudo-random weights from `seed`, each batch norm folded so that its convolution's
    /// outputs on `image` peak at [`ACTIVATION_BOUND`].
    ///
    /// # Errors
    /// [`CircuitError::Invalid`] if a stage does not fit the slots or a ReLU input on `image`
    /// leaves `[−1, 1]`.
    pub fn build(arch: Arch, seed: u64, image: &[f64]) -> Result<Network> {
        let shapes = arch.checked_convs()?;
        let convs =
            shapes.iter().enumerate().map(|(i, &s)| Conv::random(s, seed + i as u64)).collect();
        let c3 = arch.base_channels << 2;
        let a = 1.0 / (c3 as f64).sqrt();
        let mut net = Network {
            arch,
            convs,
            dense: random_matrix(arch.classes, c3, a, seed ^ 0xfc),
            dense_b: random_matrix(1, arch.classes, a, seed ^ 0xfcb).remove(0),
        };
        let mut fold = Plain { net: &mut net, relu: &|x: f64| x.max(0.0), fold: true, peak: 0.0 };
        arch.run(&mut fold, encode_image(&arch, image)?)?;
        Ok(net)
    }

    /// Trained weights: each convolution's `[cout][cin][k][k]` weights and `[cout]` biases in
    /// [`Arch::run`] order, the dense layer's `classes` rows of `4·base_channels` and its
    /// biases. No batch norm is folded here: the weights are used as given.
    ///
    /// # Errors
    /// [`CircuitError::Invalid`] if a stage does not fit the slots or the count of
    /// convolutions is not the architecture's; [`CircuitError::VectorLength`] for an array of
    /// the wrong length.
    pub fn from_weights(
        arch: Arch,
        convs: Vec<(Vec<f64>, Vec<f64>)>,
        dense: Vec<Vec<f64>>,
        dense_b: Vec<f64>,
    ) -> Result<Network> {
        let shapes = arch.checked_convs()?;
        if convs.len() != shapes.len() {
            return Err(CircuitError::Invalid(format!(
                "{} convolutions for an architecture of {}",
                convs.len(),
                shapes.len()
            )));
        }
        let convs = shapes
            .into_iter()
            .zip(convs)
            .map(|(s, (w, b))| Conv::from_weights(s, w, b))
            .collect::<Result<Vec<_>>>()?;
        let c3 = arch.base_channels << 2;
        if dense.len() != arch.classes {
            return Err(CircuitError::VectorLength { len: dense.len(), cols: arch.classes });
        }
        if let Some(row) = dense.iter().find(|r| r.len() != c3) {
            return Err(CircuitError::VectorLength { len: row.len(), cols: c3 });
        }
        if dense_b.len() != arch.classes {
            return Err(CircuitError::VectorLength { len: dense_b.len(), cols: arch.classes });
        }
        Ok(Network { arch, convs, dense, dense_b })
    }

    /// The cleartext twin with ReLU through `sign` (the encrypted run's oracle) or exact
    /// (`None`): the class scores.
    ///
    /// # Errors
    /// A wrong image length; a ReLU input outside `[−1, 1]` (the sign's domain).
    pub fn evaluate_plain(&self, image: &[f64], sign: Option<&CompositeSign>) -> Result<Vec<f64>> {
        Ok(self.evaluate_plain_peak(image, sign)?.0)
    }

    /// As [`Network::evaluate_plain`], with the largest |ReLU input| of the inference (how
    /// close the image comes to leaving the sign's domain).
    ///
    /// # Errors
    /// As [`Network::evaluate_plain`].
    pub fn evaluate_plain_peak(
        &self,
        image: &[f64],
        sign: Option<&CompositeSign>,
    ) -> Result<(Vec<f64>, f64)> {
        let relu = |x: f64| match sign {
            Some(s) => x * (1.0 + s.evaluate_plain(x)) / 2.0,
            None => x.max(0.0),
        };
        let mut net = self.clone();
        let mut twin = Plain { net: &mut net, relu: &relu, fold: false, peak: 0.0 };
        let out = self.arch.run(&mut twin, encode_image(&self.arch, image)?)?;
        Ok((out[..self.arch.classes].to_vec(), twin.peak))
    }
}

/// The image (`in_channels` planes of `side`², row-major) as the input slot vector.
///
/// # Errors
/// A wrong length.
pub fn encode_image(arch: &Arch, image: &[f64]) -> Result<Vec<f64>> {
    let l = arch.input_layout();
    let n = arch.side * arch.side;
    if image.len() != arch.in_channels * n {
        return Err(CircuitError::VectorLength { len: image.len(), cols: arch.in_channels * n });
    }
    let mut v = vec![0.0; arch.slots];
    for (t, &px) in image.iter().enumerate() {
        v[l.slot(t / n, (t % n) / arch.side, t % arch.side)] = px;
    }
    Ok(v)
}

/// A reproducible stand-in image: values in [0, 1], smooth blobs per channel.
pub fn test_image(arch: &Arch, seed: u64) -> Vec<f64> {
    let n = arch.side * arch.side;
    let noise = random_matrix(1, arch.in_channels * n, 0.5, seed).remove(0);
    let h = arch.side as f64 / 2.0;
    (0..arch.in_channels * n)
        .map(|t| {
            let (r, c) = (((t % n) / arch.side) as f64 - h, (t % arch.side) as f64 - h);
            let blob = (-(r * r + c * c) / (arch.side as f64 * 2.0)).exp();
            (0.5 * blob + 0.5 * (noise[t] + 0.5)).clamp(0.0, 1.0)
        })
        .collect()
}

/// The cleartext executor on slot vectors; with `fold`, each convolution is rescaled (its
/// batch norm folded) to peak at [`ACTIVATION_BOUND`] before its output is used.
struct Plain<'a> {
    net: &'a mut Network,
    relu: &'a dyn Fn(f64) -> f64,
    fold: bool,
    /// Largest |ReLU input| so far.
    peak: f64,
}

impl Exec for Plain<'_> {
    type V = Vec<f64>;
    fn conv(&mut self, layer: usize, x: &Vec<f64>) -> Result<Vec<f64>> {
        let slots = self.net.arch.slots;
        let conv = &mut self.net.convs[layer];
        let mut y = conv.plain(x, slots);
        if self.fold {
            let peak = y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let a = ACTIVATION_BOUND / peak.max(f64::MIN_POSITIVE);
            conv.scale(a);
            y.iter_mut().for_each(|v| *v *= a);
        }
        Ok(y)
    }
    fn relu(&mut self, x: &Vec<f64>) -> Result<Vec<f64>> {
        if let Some(v) = x.iter().find(|v| v.abs() > 1.0) {
            return Err(CircuitError::Invalid(format!("a ReLU input {v} leaves [-1, 1]")));
        }
        self.peak = x.iter().fold(self.peak, |m, v| m.max(v.abs()));
        Ok(x.iter().map(|&v| (self.relu)(v)).collect())
    }
    fn add(&mut self, a: &Vec<f64>, b: &Vec<f64>) -> Result<Vec<f64>> {
        Ok(a.iter().zip(b).map(|(x, y)| x + y).collect())
    }
    fn pool_dense(&mut self, x: &Vec<f64>) -> Result<Vec<f64>> {
        let l = self.net.arch.stage_layout(2);
        let r = l.res();
        let mean =
            |c: usize| (0..r * r).map(|p| x[l.slot(c, p / r, p % r)]).sum::<f64>() / (r * r) as f64;
        let m: Vec<f64> = (0..l.channels).map(mean).collect();
        let mut y: Vec<f64> = self
            .net
            .dense
            .iter()
            .zip(&self.net.dense_b)
            .map(|(row, b)| b + row.iter().zip(&m).map(|(w, v)| w * v).sum::<f64>())
            .collect();
        y.resize(self.net.arch.slots, 0.0);
        Ok(y)
    }
}

/// The levels a ciphertext of the network can be at when it enters at `top` (a bootstrap's
/// output level): the base primes plus whole rescales of primes (with two primes per rescale
/// the odd limb counts are never reached). The levels its rotation keys need.
pub fn network_levels(params: &Parameters, top: usize) -> impl Iterator<Item = usize> {
    let (base, c) = (params.base_primes(), params.primes_per_rescale());
    (0..=top).filter(move |&l| l + 1 >= base && (l + 1 - base) % c == 0)
}

/// Levels left above the base primes (each `primes_per_rescale` primes), less `reserve`.
pub(super) fn levels_left(params: &Parameters, level: usize, reserve: usize) -> usize {
    ((level + 1).saturating_sub(params.base_primes()) / params.primes_per_rescale())
        .saturating_sub(reserve)
}

/// The level walk: the input level of every linear layer and the number of bootstraps, by the
/// same rule as [`Model::evaluate`] (refresh when the next operation needs more levels).
pub(super) struct Levels<'a> {
    params: &'a Parameters,
    refreshed: usize,
    reserve: usize,
    sign_depths: Vec<usize>,
    pub(super) conv_levels: Vec<usize>,
    pub(super) dense_level: Option<usize>,
    pub(super) bootstraps: usize,
}

impl Levels<'_> {
    fn ensure(&mut self, level: usize, need: usize) -> usize {
        if levels_left(self.params, level, self.reserve) < need {
            self.bootstraps += 1;
            self.refreshed
        } else {
            level
        }
    }
}

impl<'a> Levels<'a> {
    /// Walk `arch` from `input_level` (checks the scales and that every sign stage fits the
    /// levels a bootstrap leaves).
    pub(super) fn walk(
        params: &'a Parameters,
        arch: &Arch,
        sign: &CompositeSign,
        input_level: usize,
        refreshed: usize,
        (scale, boot_scale): (f64, f64),
    ) -> Result<Levels<'a>> {
        let ratio = scale / boot_scale;
        if ratio < 1.0 || ratio.fract() != 0.0 || ratio > i64::MAX as f64 {
            return Err(CircuitError::Invalid(format!(
                "the network scale 2^{:.2} must be an integer multiple of the bootstrap's 2^{:.2}",
                scale.log2(),
                boot_scale.log2()
            )));
        }
        let reserve = usize::from(ratio > 1.0);
        let depths: Vec<usize> = sign.stages.iter().map(Chebyshev::depth).collect();
        let left = levels_left(params, refreshed, reserve);
        let last = depths.last().map_or(0, |d| d + 1);
        if let Some(&d) = depths.iter().chain([&last]).find(|&&d| d > left) {
            return Err(CircuitError::NotEnoughLevels {
                needed: d,
                available: left,
                level: refreshed,
            });
        }
        let mut walk = Levels {
            params,
            refreshed,
            reserve,
            sign_depths: depths,
            conv_levels: Vec::new(),
            dense_level: None,
            bootstraps: 0,
        };
        arch.run(&mut walk, input_level)?;
        Ok(walk)
    }
}

impl Exec for Levels<'_> {
    type V = usize;
    fn conv(&mut self, layer: usize, &x: &usize) -> Result<usize> {
        let x = self.ensure(x, 1);
        debug_assert_eq!(self.conv_levels.len(), layer);
        self.conv_levels.push(x);
        Ok(x - self.params.primes_per_rescale())
    }
    fn relu(&mut self, &x: &usize) -> Result<usize> {
        let c = self.params.primes_per_rescale();
        let x = self.ensure(x, 1);
        let mut s = x;
        let depths = self.sign_depths.clone();
        let (&last, first) = depths.split_last().expect("a sign has stages");
        for &d in first {
            s = self.ensure(s, d) - c * d;
        }
        // The last stage leaves a level for the product.
        s = self.ensure(s, last + 1) - c * last;
        Ok(s.min(x) - c)
    }
    fn add(&mut self, &a: &usize, &b: &usize) -> Result<usize> {
        Ok(a.min(b))
    }
    fn pool_dense(&mut self, &x: &usize) -> Result<usize> {
        let x = self.ensure(x, 1);
        self.dense_level = Some(x);
        Ok(x - self.params.primes_per_rescale())
    }
}

/// Lee et al.'s composite sign degrees for ResNet-20 (\[48\], from \[47\]'s α = 13 table).
pub const SIGN_DEGREES: [usize; 3] = [15, 15, 27];
/// The sign's `ε` \[GAP\]: the smallest power of two at which our Remez composite of
/// [`SIGN_DEGREES`] reaches \[47\]'s α = 13 (error ≤ 2^−13 on `[ε, 1]`; at `ε = 2^−13` it only
/// reaches 0.44). The time does not depend on it.
pub const SIGN_EPS: f64 = 1.0 / 512.0;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Diagonal `k` of `conv`'s matrix from its entries (the independent reference).
    fn from_entries(conv: &Conv, ks: &[usize], slots: usize) -> BTreeMap<usize, Vec<f64>> {
        let mut m: BTreeMap<usize, Vec<f64>> = ks.iter().map(|&k| (k, vec![0.0; slots])).collect();
        for (o, i, w) in conv.entries() {
            if let Some(d) = m.get_mut(&((i + slots - o) % slots)) {
                d[o] += w;
            }
        }
        m
    }

    /// Every slot of a layout maps back to its channel and position, and no other slot does.
    #[test]
    fn positions_invert_slots() {
        for arch in [TOY, Arch::RESNET20] {
            for l in [arch.input_layout(), arch.stage_layout(0), arch.stage_layout(2)] {
                let mut seen = 0;
                for s in 0..arch.slots {
                    if let Some((c, i, j)) = l.position(s) {
                        assert_eq!(l.slot(c, i, j), s, "{l:?}");
                        assert!(i < l.res() && j < l.res());
                        seen += 1;
                    }
                }
                assert_eq!(seen, l.channels * l.res() * l.res(), "{l:?}");
            }
        }
    }

    /// The diagonals a transform builds at use from the weights are the matrix's: every
    /// convolution of the toy network in full, and at full size a sample of the non-zero
    /// diagonals (and some zero ones) of the stem, a stride-2 convolution, a shortcut and a
    /// stage-3 convolution.
    #[test]
    fn diagonals_from_weights_match_the_entries() {
        let toy = TOY.convs();
        let full = Arch::RESNET20.convs();
        let cases = toy
            .iter()
            .map(|&s| (s, TOY.slots, 1))
            .chain([0, 7, 9, 17].map(|i| (full[i], Arch::RESNET20.slots, 37)));
        for (n, (shape, slots, every)) in cases.enumerate() {
            let conv = Conv::random(shape, 3 + n as u64);
            let mut present = vec![false; slots];
            conv.entries().for_each(|(o, i, _)| present[(i + slots - o) % slots] = true);
            let nonzero: Vec<usize> = (0..slots).filter(|&k| present[k]).collect();
            let zero: Vec<usize> = (0..slots).filter(|&k| !present[k]).take(5).collect();
            let ks: Vec<usize> = nonzero.iter().step_by(every).chain(&zero).copied().collect();
            let want = from_entries(&conv, &ks, slots);
            for k in ks {
                assert_eq!(conv.diagonal(k, slots), want[&k], "{shape:?}, diagonal {k}");
            }
        }
    }
}
