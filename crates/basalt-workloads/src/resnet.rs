//! ResNet-20 for CIFAR-10 as one encrypted CKKS program: CraterLake Table 3/4/5's "ResNet-20"
//! (§8: Lee et al.'s FHE ResNet-20 [48], one inference on one image, all channels packed in one
//! ciphertext before bootstrapping).
//!
//! # Network (He et al. 2016, §4.2; [48] keeps it unchanged)
//! conv 3×3 3→16 → ReLU → 3 stages × 3 basic blocks (16, 32, 64 channels on 32×32, 16×16,
//! 8×8; the first block of stages 2 and 3 convolves with stride 2 and its shortcut is a 1×1
//! stride-2 convolution [GAP: He et al.'s option B]) → global average pool → dense 64→10. A
//! basic block is `ReLU(conv(ReLU(conv(x))) + shortcut(x))`; batch normalisation is folded into
//! each convolution's weights and bias. 19 ReLUs, 21 convolutions, one dense layer.
//!
//! The structure is written once ([`Arch::run`]) against [`Exec`], which three executors
//! implement: the cleartext twin, the level walk that places bootstraps and fixes each layer's
//! level, and the encrypted run (real ciphertexts, or shapes in trace mode).
//!
//! # Packing [GAP]
//! One ciphertext of `slots` slots holds every channel (CraterLake's modification of [48]).
//! Stage `s` uses Lee et al.'s *multiplexed* layout (ICML 2022) with gap `g = 2^s` on the
//! 32×32 grid: channel `c`, position `(i, j)` sits at slot
//! `(c / g²)·32² + (g·i + (c mod g²) / g)·32 + g·j + c mod g`, so a stride-2 convolution needs
//! no repacking and every stage fills `16·32² / g` slots. A convolution is then a
//! matrix-vector product over the slots whose generalised diagonal `k` is `W[t][t + k]`; only
//! `(2·blocks − 1)·(2g + 1)²`-ish diagonals are non-zero (279 to 1,575 at full size), and they
//! are applied by [`LinearTransform`]'s BSGS (single hoisting, Lattigo's order, as the
//! CraterLake bootstrap rows; `n1` the power of two with fewest rotations). The pool sums each
//! channel's positions by `2·log2(8)` rotate-and-adds; the dense layer (the 1/64 of the mean
//! folded in) is one more transform.
//!
//! # ReLU and bootstraps
//! `ReLU(x) = x·(1 + sign(x))/2` with Lee et al.'s composite minimax sign (EUROCRYPT 2021,
//! [47]; [48] uses degrees 15, 15, 27, depth 4 + 4 + 5; ε = 2^−9, [`SIGN_EPS`]) built by
//! [`basalt_circuits::polynomial::minimax::sign`]; the last stage is evaluated at the scale
//! that brings the product back to the network's scale `Δ`, so residual sums add equal scales.
//! The sign needs inputs in `[−1, 1]`: each folded batch norm scales its convolution's outputs
//! to at most [`ACTIVATION_BOUND`] on the test image (its statistics, [GAP]).
//! A bootstrap refreshes a ciphertext whenever the next operation needs more levels than it has
//! ([GAP]: [48]'s placement is not in CraterLake): on CraterLake's chain (10 levels after a
//! bootstrap) each 13-level sign is split across two bootstraps.
//!
//! Weights are seeded pseudo-random (no trained model offline); the time does not depend on them.

use std::collections::BTreeMap;

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper, Encapsulation};
use basalt_circuits::lintrans::{Diagonals, GscOrder, Hoisting, LinearTransform, Split, Strategy};
use basalt_circuits::polynomial::Chebyshev;
use basalt_circuits::polynomial::eval::{evaluate, plan};
use basalt_circuits::polynomial::minimax::CompositeSign;
use basalt_circuits::testing::random_matrix;
use basalt_circuits::{CircuitError, Result};
use basalt_ckks::{Ciphertext, Encoder, Evaluator, Parameters, Plaintext};
use num_complex::Complex64;

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

    fn stage_layout(&self, stage: usize) -> Layout {
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
struct Layout {
    side: usize,
    gap: usize,
    channels: usize,
}

impl Layout {
    /// Feature-map side at this stage.
    fn res(&self) -> usize {
        self.side / self.gap
    }
    fn slot(&self, c: usize, i: usize, j: usize) -> usize {
        let (g, s) = (self.gap, self.side);
        (c / (g * g)) * s * s + (g * i + (c % (g * g)) / g) * s + g * j + c % g
    }
    fn footprint(&self) -> usize {
        self.slot(self.channels - 1, self.res() - 1, self.res() - 1) + 1
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ConvShape {
    cin: usize,
    cout: usize,
    k: usize,
    stride: usize,
    lin: Layout,
    lout: Layout,
}

/// A convolution with folded batch norm: weights `[cout][cin][k][k]`, bias `[cout]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Conv {
    shape: ConvShape,
    w: Vec<f64>,
    b: Vec<f64>,
}

impl Conv {
    fn random(shape: ConvShape, seed: u64) -> Conv {
        let fan_in = shape.cin * shape.k * shape.k;
        let a = 1.0 / (fan_in as f64).sqrt();
        let w = random_matrix(1, shape.cout * fan_in, a, seed).remove(0);
        let b = random_matrix(1, shape.cout, 0.1 * a, seed ^ 0xb1a5).remove(0);
        Conv { shape, w, b }
    }

    /// Every non-zero matrix entry `(output slot, input slot, weight)`; zero padding of `k/2`.
    fn entries(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
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

    /// Cleartext convolution of a slot vector in the input layout, into the output layout.
    fn plain(&self, x: &[f64], slots: usize) -> Vec<f64> {
        let mut y = vec![0.0; slots];
        let (lout, r) = (self.shape.lout, self.shape.lout.res());
        for co in 0..self.shape.cout {
            for p in 0..r * r {
                y[lout.slot(co, p / r, p % r)] = self.b[co];
            }
        }
        for (o, i, w) in self.entries() {
            y[o] += w * x[i];
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
    convs: Vec<Conv>,
    dense: Vec<Vec<f64>>,
    dense_b: Vec<f64>,
}

impl Network {
    /// Pseudo-random weights from `seed`, each batch norm folded so that its convolution's
    /// outputs on `image` peak at [`ACTIVATION_BOUND`].
    ///
    /// # Errors
    /// [`CircuitError::Invalid`] if a stage does not fit the slots or a ReLU input on `image`
    /// leaves `[−1, 1]`.
    pub fn build(arch: Arch, seed: u64, image: &[f64]) -> Result<Network> {
        let shapes = arch.convs();
        if let Some(s) =
            shapes.iter().find(|s| s.lout.footprint().max(s.lin.footprint()) > arch.slots)
        {
            return Err(CircuitError::Invalid(format!(
                "a {}-channel stage needs {} slots, the ciphertext has {}",
                s.lout.channels,
                s.lout.footprint(),
                arch.slots
            )));
        }
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
        let mut fold = Plain { net: &mut net, relu: &|x: f64| x.max(0.0), fold: true };
        arch.run(&mut fold, encode_image(&arch, image)?)?;
        Ok(net)
    }

    /// The cleartext twin with ReLU through `sign` (the encrypted run's oracle) or exact
    /// (`None`): the class scores.
    pub fn evaluate_plain(&self, image: &[f64], sign: Option<&CompositeSign>) -> Result<Vec<f64>> {
        let relu = |x: f64| match sign {
            Some(s) => x * (1.0 + s.evaluate_plain(x)) / 2.0,
            None => x.max(0.0),
        };
        let mut net = self.clone();
        let mut twin = Plain { net: &mut net, relu: &relu, fold: false };
        let out = self.arch.run(&mut twin, encode_image(&self.arch, image)?)?;
        Ok(out[..self.arch.classes].to_vec())
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

/// Levels left above the base primes (each `primes_per_rescale` primes), less `reserve`.
fn levels_left(params: &Parameters, level: usize, reserve: usize) -> usize {
    ((level + 1).saturating_sub(params.base_primes()) / params.primes_per_rescale())
        .saturating_sub(reserve)
}

/// The level walk: the input level of every linear layer and the number of bootstraps, by the
/// same rule as [`Model::evaluate`] (refresh when the next operation needs more levels).
struct Levels<'a> {
    params: &'a Parameters,
    refreshed: usize,
    reserve: usize,
    sign_depths: Vec<usize>,
    conv_levels: Vec<usize>,
    dense_level: Option<usize>,
    bootstraps: usize,
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
    fn walk(
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

/// Refreshes a ciphertext's levels: a bootstrap, or in trace mode a placeholder that records
/// where one goes (its kernels are timed from one cached bootstrap trace).
pub trait Refresh {
    /// Level of a refreshed ciphertext.
    fn output_level(&self) -> usize;
    /// # Errors
    /// The bootstrap's.
    fn refresh(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext>;
}

/// A real (or symbolic) bootstrap with its encapsulation keys.
pub struct Bootstrap<'a> {
    pub bt: &'a Bootstrapper,
    pub encaps: Option<&'a Encapsulation>,
}

impl Refresh for Bootstrap<'_> {
    fn output_level(&self) -> usize {
        self.bt.budget().output_level
    }
    fn refresh(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        self.bt.bootstrap(eval, self.encaps, ct)
    }
}

/// Trace mode's stand-in for a bootstrap: an empty region named [`basalt_sim::BOOTSTRAP_REGION`]
/// and a shape-only ciphertext at `level` with the input's scale and slots.
pub struct BootstrapMarker {
    pub level: usize,
}

impl Refresh for BootstrapMarker {
    fn output_level(&self) -> usize {
        self.level
    }
    fn refresh(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        let _r = basalt_trace::region(basalt_sim::BOOTSTRAP_REGION);
        let mut out = Ciphertext::symbolic(eval.params(), self.level)?;
        out.set_scale(ct.scale());
        out.set_slots(ct.slots());
        Ok(out)
    }
}

/// A linear layer prepared at its input level: the transform and its bias.
#[derive(Debug)]
struct Prepared {
    lt: LinearTransform,
    bias: Plaintext,
}

/// [`Network`] prepared for one parameter set: every transform at the level the walk gives it.
#[derive(Debug)]
pub struct Model {
    arch: Arch,
    convs: Vec<Prepared>,
    pool_steps: Vec<i64>,
    dense: Prepared,
    sign: Vec<Chebyshev>,
    input_level: usize,
    scale: f64,
    boot_scale: f64,
    bootstraps: usize,
}

impl Model {
    /// Prepare `net` for an input at `input_level` and the network's scale `scale`, bootstraps
    /// taking `boot_scale` and returning to `refreshed`. `symbolic` builds shapes only (trace
    /// mode).
    ///
    /// The polynomials need `scale` near the primes a rescale drops; a bootstrap needs its input
    /// scale below `Q_0` by the message ratio. If `boot_scale < scale`, every ciphertext keeps
    /// one level in reserve for the product by 1 (at scale `q·boot_scale/scale`) that lowers
    /// its scale before a bootstrap; the output is raised back by an integer product (free).
    ///
    /// # Errors
    /// A stage deeper than the levels a bootstrap leaves; `scale / boot_scale` not an integer;
    /// encoding errors.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare(
        params: &Parameters,
        net: &Network,
        sign: &CompositeSign,
        input_level: usize,
        refreshed: usize,
        (scale, boot_scale): (f64, f64),
        symbolic: bool,
    ) -> Result<Model> {
        let walk =
            Levels::walk(params, &net.arch, sign, input_level, refreshed, (scale, boot_scale))?;
        let slots = net.arch.slots;
        let convs = net
            .convs
            .iter()
            .zip(&walk.conv_levels)
            .map(|(c, &level)| {
                let mut bias = vec![0.0; slots];
                let l = c.shape.lout;
                for co in 0..l.channels {
                    for p in 0..l.res() * l.res() {
                        bias[l.slot(co, p / l.res(), p % l.res())] = c.b[co];
                    }
                }
                prepare(params, c.entries(), &bias, slots, level, scale, symbolic)
            })
            .collect::<Result<Vec<_>>>()?;
        let l3 = net.arch.stage_layout(2);
        let r = l3.res();
        let inv = 1.0 / (r * r) as f64;
        let entries = net.dense.iter().enumerate().flat_map(|(o, row)| {
            row.iter().enumerate().map(move |(c, w)| (o, l3.slot(c, 0, 0), w * inv))
        });
        let mut bias = net.dense_b.clone();
        bias.resize(slots, 0.0);
        let dense_level = walk.dense_level.expect("run ends in pool_dense");
        let dense = prepare(params, entries, &bias, slots, dense_level, scale, symbolic)?;
        let pool_steps = (0..r.trailing_zeros())
            .flat_map(|t| [(l3.gap << t) * l3.side, l3.gap << t])
            .map(|s| s as i64)
            .collect();
        Ok(Model {
            arch: net.arch,
            convs,
            pool_steps,
            dense,
            sign: sign.stages.clone(),
            input_level,
            scale,
            boot_scale,
            bootstraps: walk.bootstraps,
        })
    }

    /// Bootstraps one inference takes.
    pub fn bootstraps(&self) -> usize {
        self.bootstraps
    }
    pub fn input_level(&self) -> usize {
        self.input_level
    }
    pub fn slots(&self) -> usize {
        self.arch.slots
    }

    /// Every rotation of the transforms and the pool.
    pub fn rotations(&self) -> Vec<i64> {
        let mut r: Vec<i64> =
            self.convs.iter().chain([&self.dense]).flat_map(|p| p.lt.rotations()).collect();
        r.extend(&self.pool_steps);
        r.sort_unstable();
        r.dedup();
        r.retain(|&k| k != 0);
        r
    }

    /// One inference of the encrypted image `ct` (the input slot vector at
    /// [`Model::input_level`], scale as prepared): the class scores in the first slots.
    /// Symbolic inputs run the same code on shapes (trace mode).
    ///
    /// # Errors
    /// Missing keys; a ciphertext off the prepared levels or scale; the refresh's errors.
    pub fn evaluate(
        &self,
        eval: &Evaluator,
        refresh: &dyn Refresh,
        ct: &Ciphertext,
    ) -> Result<Ciphertext> {
        let n = eval.params().n() as u32;
        let shape = |ct: &Ciphertext| (ct.level() as u32 + 1, ct.degree() as u32 + 1);
        let (limbs, polys) = shape(ct);
        basalt_trace::emit(basalt_trace::Kernel::CtLoad { n, limbs, polys, id: 0 });
        let mut run = Encrypted { model: self, eval, refresh };
        let out = self.arch.run(&mut run, ct.clone())?;
        let (limbs, polys) = shape(&out);
        basalt_trace::emit(basalt_trace::Kernel::CtStore { n, limbs, polys, id: 1 });
        Ok(out)
    }
}

/// The transform of a sparse matrix (entries `(row slot, column slot, weight)`) and its bias,
/// at `level`.
fn prepare(
    params: &Parameters,
    entries: impl Iterator<Item = (usize, usize, f64)>,
    bias: &[f64],
    slots: usize,
    level: usize,
    scale: f64,
    symbolic: bool,
) -> Result<Prepared> {
    let diagonal = |o: usize, i: usize| (i + slots - o) % slots;
    let bias_level = level - params.primes_per_rescale();
    if symbolic {
        let mut present = vec![false; slots];
        entries.for_each(|(o, i, _)| present[diagonal(o, i)] = true);
        let indices: Vec<usize> = (0..slots).filter(|&k| present[k]).collect();
        let strategy = fewest_rotations(&indices, slots)?;
        let lt = LinearTransform::shapes(params, indices, slots, strategy, level, 1.0)?;
        let mut bias = Plaintext::symbolic(params, bias_level)?;
        bias.set_scale(scale);
        return Ok(Prepared { lt, bias });
    }
    let mut map: BTreeMap<i64, Vec<Complex64>> = BTreeMap::new();
    for (o, i, w) in entries {
        let d = map
            .entry(diagonal(o, i) as i64)
            .or_insert_with(|| vec![Complex64::new(0.0, 0.0); slots]);
        d[o].re += w;
    }
    let diags = Diagonals::from_map(slots, map)?;
    let strategy = fewest_rotations(&diags.indices(), slots)?;
    let lt = LinearTransform::new(params, diags, strategy, level)?;
    let b: Vec<Complex64> = bias.iter().map(|&x| Complex64::new(x, 0.0)).collect();
    let bias = Encoder::new(params).encode(&b, slots, bias_level, scale)?;
    Ok(Prepared { lt, bias })
}

/// The product of the primes a rescale at `level` drops.
fn dropped(params: &Parameters, level: usize) -> f64 {
    let c = params.primes_per_rescale();
    params.q()[level + 1 - c..=level].iter().map(|&q| q as f64).product()
}

/// BSGS with single hoisting in Lattigo's order, `n1` the power of two with the fewest
/// rotations (baby plus giant steps) for these diagonals.
fn fewest_rotations(indices: &[usize], slots: usize) -> Result<Strategy> {
    let mut best = (usize::MAX, 1);
    let mut n1 = 1;
    while n1 <= slots {
        let s = Split::new(indices, n1, slots)?;
        let rotations = s.babies().iter().filter(|&&b| b != 0).count()
            + s.giant.keys().filter(|&&g| g != 0).count();
        if rotations < best.0 {
            best = (rotations, n1);
        }
        n1 *= 2;
    }
    Ok(Strategy::Bsgs { n1: best.1, hoisting: Hoisting::Single, order: GscOrder::BabyStepCentric })
}

/// The encrypted executor.
struct Encrypted<'a> {
    model: &'a Model,
    eval: &'a Evaluator,
    refresh: &'a dyn Refresh,
}

impl Encrypted<'_> {
    /// `ct` itself if it has `need` levels (beyond the reserve), else bootstrapped: its scale
    /// lowered to the bootstrap's on the reserved level, and raised back after.
    fn ensure(&self, ct: &Ciphertext, need: usize) -> Result<Ciphertext> {
        let m = self.model;
        let reserve = usize::from(m.boot_scale < m.scale);
        if levels_left(self.eval.params(), ct.level(), reserve) >= need {
            return Ok(ct.clone());
        }
        let mut x = ct.clone();
        if reserve == 1 {
            let q = dropped(self.eval.params(), x.level());
            let one = self.eval.mul_const_scaled(&x, 1.0, q * m.boot_scale / m.scale)?;
            x = self.eval.rescale(&one)?;
            x.set_scale(m.boot_scale);
        }
        let mut y = self.refresh.refresh(self.eval, &x)?;
        if reserve == 1 {
            y = self.eval.mul_integer(&y, (m.scale / m.boot_scale) as i64)?;
            y.set_scale(m.scale);
        }
        Ok(y)
    }
    fn linear(&self, p: &Prepared, x: &Ciphertext) -> Result<Ciphertext> {
        let x = self.ensure(x, 1)?;
        let y = p.lt.evaluate(self.eval, &x)?;
        Ok(self.eval.add_plain(&y, &p.bias)?)
    }
    fn to_level(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        Ok(self.eval.drop_level(ct, ct.level() - level)?)
    }
}

impl Exec for Encrypted<'_> {
    type V = Ciphertext;
    fn conv(&mut self, layer: usize, x: &Ciphertext) -> Result<Ciphertext> {
        self.linear(&self.model.convs[layer], x)
    }
    /// `x·(1 + sign(x))/2`: the sign's last stage at scale `q/2` (`q` the primes the product's
    /// rescale drops), so that `(1 + s)/2` read at scale `q` times `x` at `Δ` rescales to `Δ`.
    fn relu(&mut self, x: &Ciphertext) -> Result<Ciphertext> {
        let params = self.eval.params();
        let x = self.ensure(x, 1)?;
        let mut s = x.clone();
        let (last, first) = self.model.sign.split_last().expect("a sign has stages");
        for p in first {
            s = self.ensure(&s, p.depth())?;
            s = evaluate(self.eval, &s, p, None)?;
        }
        // The last stage leaves a level for the product.
        s = self.ensure(&s, last.depth() + 1)?;
        let out = plan(params, s.level(), last)?.out_level.min(x.level());
        s = evaluate(self.eval, &s, last, Some(dropped(params, out) / 2.0))?;
        let mut half = self.eval.add_const(&s, Complex64::new(1.0, 0.0))?;
        half.set_scale(half.scale() * 2.0);
        let (half, x) = (self.to_level(&half, out)?, self.to_level(&x, out)?);
        let mut y = self.eval.rescale(&self.eval.mul_relin(&x, &half)?)?;
        // `Δ·q/q`: equal to Δ up to the rounding of the primes' product in f64.
        if (y.scale() / self.model.scale - 1.0).abs() < 1e-12 {
            y.set_scale(self.model.scale);
        }
        Ok(y)
    }
    fn add(&mut self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let l = a.level().min(b.level());
        Ok(self.eval.add(&self.to_level(a, l)?, &self.to_level(b, l)?)?)
    }
    fn pool_dense(&mut self, x: &Ciphertext) -> Result<Ciphertext> {
        let mut acc = self.ensure(x, 1)?;
        for &k in &self.model.pool_steps {
            acc = self.eval.add(&acc, &self.eval.rotate(&acc, k)?)?;
        }
        self.linear(&self.model.dense, &acc)
    }
}

/// Lee et al.'s composite sign degrees for ResNet-20 ([48], from [47]'s α = 13 table).
pub const SIGN_DEGREES: [usize; 3] = [15, 15, 27];
/// The sign's `ε` [GAP]: the smallest power of two at which our Remez composite of
/// [`SIGN_DEGREES`] reaches [47]'s α = 13 (error ≤ 2^−13 on `[ε, 1]`; at `ε = 2^−13` it only
/// reaches 0.44). The time does not depend on it.
pub const SIGN_EPS: f64 = 1.0 / 512.0;

/// Record one ResNet-20 inference at `params` in trace mode: the image at the top level, every
/// bootstrap of circuit `cfg` a [`BootstrapMarker`] (time it from one bootstrap trace per
/// marker: recording the dozens of full bootstraps inline would repeat one identical kernel
/// stream), seeded keys or not. Returns the trace and the number of bootstraps.
///
/// # Errors
/// A chain whose bootstrap leaves fewer levels than a sign stage; scheme errors.
pub fn record_resnet20(
    params: &Parameters,
    cfg: &BootstrapConfig,
    seeded: bool,
) -> Result<(basalt_trace::Trace, usize)> {
    let arch = Arch { slots: 1 << cfg.log_slots, ..Arch::RESNET20 };
    let net = Network::build(arch, 0, &test_image(&arch, 0))?;
    let sign = basalt_circuits::polynomial::minimax::sign(&SIGN_DEGREES, SIGN_EPS)?;
    let scale = params.default_scale();
    let scales = (scale, scale.min(cfg.max_input_scale(params)));
    let refreshed = cfg.budget(params)?.output_level;
    let model = Model::prepare(params, &net, &sign, params.max_level(), refreshed, scales, true)?;
    let keys = basalt_ckks::KeyGenerator::new(params).gen_symbolic_evaluation_keys(
        &model.rotations(),
        false,
        seeded,
    );
    let eval = Evaluator::new(params, keys)?;
    let mut ct = Ciphertext::symbolic(params, model.input_level())?;
    ct.set_slots(model.slots());
    ct.set_scale(scale);
    let marker = BootstrapMarker { level: refreshed };
    let (out, t) = basalt_trace::record(|| model.evaluate(&eval, &marker, &ct));
    out?;
    Ok((t, model.bootstraps()))
}
