//! ResNet-20 encrypted: the network prepared for a parameter set (each transform at the level
//! the walk gives it), run on ciphertexts (real, or shapes in trace mode) with bootstraps, and
//! the trace recorder of the reproduction.

use std::collections::BTreeMap;
use std::sync::Arc;

use basalt_circuits::Result;
use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper, Encapsulation};
use basalt_circuits::lintrans::cost::baby_rotations;
use basalt_circuits::lintrans::{
    DiagonalFn, Diagonals, GscOrder, Hoisting, LinearTransform, Source, Split, Strategy, untraced,
};
use basalt_circuits::polynomial::Chebyshev;
use basalt_circuits::polynomial::eval::{evaluate, plan};
use basalt_circuits::polynomial::minimax::CompositeSign;
use basalt_ckks::{Ciphertext, Encoder, Evaluator, Parameters, Plaintext};
use num_complex::Complex64;

use super::steps::Steps;
use super::{Arch, Exec, Levels, Network, SIGN_DEGREES, SIGN_EPS, levels_left, test_image};

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

/// Trace mode's stand-in for a bootstrap: a [`basalt_trace::Marker::Bootstrap`] event
/// and a shape-only ciphertext at `level` with the input's scale and slots.
pub struct BootstrapMarker {
    pub level: usize,
}

impl Refresh for BootstrapMarker {
    fn output_level(&self) -> usize {
        self.level
    }
    fn refresh(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        basalt_trace::mark(basalt_trace::Marker::Bootstrap);
        let mut out = Ciphertext::symbolic(eval.params(), self.level)?;
        out.set_scale(ct.scale());
        out.set_slots(ct.slots());
        Ok(out)
    }
}

/// How the convolutions' (and the dense layer's) BSGS products run: CraterLake's rows use
/// [`ConvStrategy::LATTIGO`]; Osiris runs every layer as a hoisted BSGS product (Orion's
/// Hybrid++, §VI) with its Table III column's hoisting in the giant-step-centric order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvStrategy {
    pub hoisting: Hoisting,
    pub order: GscOrder,
}

impl ConvStrategy {
    /// Single hoisting in Lattigo's order (the CraterLake bootstrap rows' products).
    pub const LATTIGO: ConvStrategy =
        ConvStrategy { hoisting: Hoisting::Single, order: GscOrder::BabyStepCentric };
}

/// A linear layer prepared at its input level: the transform and its bias, encoded when the
/// layer runs (shapes in trace mode).
#[derive(Debug)]
struct Prepared {
    lt: LinearTransform,
    bias: Vec<f64>,
    bias_level: usize,
}

/// The matrix of a linear layer kept as its weights: its entries (which diagonals are
/// non-zero) and any diagonal on demand, so a real run encodes each diagonal just before its
/// product ([`LinearTransform::encoded_at_use`]) instead of holding every one at every limb.
#[derive(Clone, Debug)]
enum Layer {
    Conv(super::Conv),
    /// The dense layer after the pool: row `o`, column channel `c` at `layout.slot(c, 0, 0)`,
    /// weight `w[o][c]·scale` (the pool's mean folded in).
    Dense {
        layout: super::Layout,
        w: Vec<Vec<f64>>,
        scale: f64,
    },
}

impl Layer {
    fn entries(&self) -> Box<dyn Iterator<Item = (usize, usize, f64)> + '_> {
        match self {
            Layer::Conv(c) => Box::new(c.entries()),
            Layer::Dense { layout, w, scale } => {
                Box::new(w.iter().enumerate().flat_map(move |(o, row)| {
                    row.iter().enumerate().map(move |(c, x)| (o, layout.slot(c, 0, 0), x * scale))
                }))
            }
        }
    }

    /// The non-zero generalised diagonals (column − row mod `slots`), ascending.
    fn indices(&self, slots: usize) -> Vec<usize> {
        let mut present = vec![false; slots];
        self.entries().for_each(|(o, i, _)| present[(i + slots - o) % slots] = true);
        (0..slots).filter(|&k| present[k]).collect()
    }

    /// Diagonal `k` over `slots` slots: at row `o`, the entry of column `o + k` (mod `slots`).
    fn diagonal(&self, k: usize, slots: usize) -> Vec<f64> {
        match self {
            Layer::Conv(c) => c.diagonal(k, slots),
            Layer::Dense { layout, w, scale } => {
                let mut d = vec![0.0; slots];
                for (o, row) in w.iter().enumerate() {
                    if let Some((c, 0, 0)) = layout.position((o + k) % slots) {
                        d[o] = row[c] * scale;
                    }
                }
                d
            }
        }
    }
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
    /// The pool's level (its rotations run there).
    pool_level: usize,
    encoder: Encoder,
}

impl Model {
    /// Prepare `net` for an input at `input_level` and the network's scale `scale`, bootstraps
    /// taking `boot_scale` and returning to `refreshed`, the linear layers run with `conv`.
    /// `symbolic` builds shapes only (trace mode).
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
        conv: ConvStrategy,
        symbolic: bool,
    ) -> Result<Model> {
        let scales = (scale, boot_scale);
        let levels = (input_level, refreshed);
        Self::build(params, net, sign, levels, scales, conv, false, symbolic)
    }

    /// As [`Model::prepare`], with the linear layers' BSGS steps chosen across the network so
    /// that few Galois key parts serve it ([`super::steps`]: nested giant steps, groups of
    /// layers sharing shifts): what a CPU run holds in memory. [`Model::prepare`]'s per-layer
    /// choice is the reproduction's. Double hoisting keeps the per-layer choice (its giant
    /// steps do not nest).
    ///
    /// # Errors
    /// As [`Model::prepare`].
    #[allow(clippy::too_many_arguments)]
    pub fn prepare_sharing_keys(
        params: &Parameters,
        net: &Network,
        sign: &CompositeSign,
        input_level: usize,
        refreshed: usize,
        scales: (f64, f64),
        conv: ConvStrategy,
        symbolic: bool,
    ) -> Result<Model> {
        let levels = (input_level, refreshed);
        Self::build(params, net, sign, levels, scales, conv, true, symbolic)
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        params: &Parameters,
        net: &Network,
        sign: &CompositeSign,
        (input_level, refreshed): (usize, usize),
        (scale, boot_scale): (f64, f64),
        conv: ConvStrategy,
        share_keys: bool,
        symbolic: bool,
    ) -> Result<Model> {
        let walk =
            Levels::walk(params, &net.arch, sign, input_level, refreshed, (scale, boot_scale))?;
        let slots = net.arch.slots;
        let mut layers: Vec<(Layer, Vec<f64>, usize)> = net
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
                (Layer::Conv(c.clone()), bias, level)
            })
            .collect();
        let l3 = net.arch.stage_layout(2);
        let r = l3.res();
        let inv = 1.0 / (r * r) as f64;
        let mut bias = net.dense_b.clone();
        bias.resize(slots, 0.0);
        let dense_level = walk.dense_level.expect("run ends in pool_dense");
        let dense = Layer::Dense { layout: l3, w: net.dense.clone(), scale: inv };
        layers.push((dense, bias, dense_level));
        let pool_steps: Vec<i64> = (0..r.trailing_zeros())
            .flat_map(|t| [(l3.gap << t) * l3.side, l3.gap << t])
            .map(|s| s as i64)
            .collect();
        let indexed: Vec<(Vec<usize>, usize)> =
            layers.iter().map(|(layer, _, level)| (layer.indices(slots), *level)).collect();
        let mut steps = indexed
            .iter()
            .map(|(idx, _)| Ok(Steps { n1: fewest_rotations_n1(idx, slots, conv)?, outer: None }))
            .collect::<Result<Vec<_>>>()?;
        if share_keys && conv.hoisting != Hoisting::Double {
            let pool: Vec<(i64, usize)> = pool_steps.iter().map(|&k| (k, dense_level)).collect();
            steps = super::steps::shared_steps(params, &indexed, slots, conv, &pool, &steps)?;
        }
        let mut prepared = layers
            .into_iter()
            .zip(indexed)
            .zip(steps)
            .map(|(((layer, bias, level), (indices, _)), steps)| {
                prepare(params, (layer, indices, steps), bias, slots, level, conv, symbolic)
            })
            .collect::<Result<Vec<_>>>()?;
        let dense = prepared.pop().expect("the dense layer");
        let convs = prepared;
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
            pool_level: dense_level,
            encoder: Encoder::new(params),
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

    /// Bytes of the encoded diagonals the transforms hold: none in a real run, which encodes
    /// each diagonal just before its product ([`LinearTransform::encoded_at_use`]); the
    /// pre-encoded transform's (every limb of its level) in trace mode, which is what the
    /// traced machine holds.
    pub fn stored_plaintext_bytes(&self) -> u64 {
        self.convs.iter().chain([&self.dense]).map(|p| p.lt.stored_plaintext_bytes()).sum()
    }

    /// Bytes a real run holds for its plaintexts at any time: one diagonal encoded at every
    /// limb of the highest transform's level (with its cleartext and pre-rotated copies), and
    /// the transforms' biases in the clear.
    pub fn plaintext_bytes_at_use(&self, params: &Parameters) -> u64 {
        let n = params.n() as u64;
        let top = self.convs.iter().chain([&self.dense]).map(|p| p.lt.level()).max().unwrap_or(0);
        let slots = self.arch.slots as u64;
        let biases = (self.convs.len() as u64 + 1) * slots * 8;
        (top as u64 + 1) * n * 8 + 2 * slots * 16 + slots * 8 + biases
    }

    /// The levels each rotation runs at (its transforms' input levels, the pool's): a Galois key
    /// needs the parts of these levels only.
    pub fn rotation_levels(&self) -> BTreeMap<i64, Vec<usize>> {
        let mut m: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        for p in self.convs.iter().chain([&self.dense]) {
            for r in p.lt.rotations() {
                m.entry(r).or_default().push(p.lt.level());
            }
        }
        for &r in &self.pool_steps {
            m.entry(r).or_default().push(self.pool_level);
        }
        m.remove(&0);
        m.values_mut().for_each(|v| {
            v.sort_unstable();
            v.dedup();
        });
        m
    }

    /// The stages of the ReLU's composite sign, in the order applied.
    pub fn sign_stages(&self) -> &[Chebyshev] {
        &self.sign
    }

    /// The linear layers' transforms, in order (the dense layer last).
    pub fn transforms(&self) -> impl Iterator<Item = &LinearTransform> {
        self.convs.iter().chain([&self.dense]).map(|p| &p.lt)
    }

    /// Non-zero diagonals of every transform.
    pub fn diagonals(&self) -> usize {
        self.convs.iter().chain([&self.dense]).map(|p| p.lt.source().indices().len()).sum()
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
        let mut run = Encrypted { model: self, eval, refresh };
        self.arch.run(&mut run, ct.clone())
    }
}

/// The transform of `layer` (its non-zero diagonal `indices`, run with `steps` and `conv`'s
/// hoisting and order) and its bias, at `level`: shapes in trace mode; else diagonals built
/// from the weights and encoded at use (OF-Limb orders keep their one stored limb per
/// diagonal).
fn prepare(
    params: &Parameters,
    (layer, indices, steps): (Layer, Vec<usize>, Steps),
    bias: Vec<f64>,
    slots: usize,
    level: usize,
    conv: ConvStrategy,
    symbolic: bool,
) -> Result<Prepared> {
    let bias_level = level - params.primes_per_rescale();
    let strategy = Strategy::Bsgs { n1: steps.n1, hoisting: conv.hoisting, order: conv.order };
    let lt = if symbolic {
        LinearTransform::shapes(params, indices, slots, strategy, level, 1.0)?
    } else if conv.order.of_limb() {
        let map: BTreeMap<i64, Vec<Complex64>> =
            indices.iter().map(|&k| (k as i64, complex(&layer.diagonal(k, slots)))).collect();
        LinearTransform::new(params, Diagonals::from_map(slots, map)?, strategy, level)?
    } else {
        let f: DiagonalFn = Arc::new(move |k: usize| complex(&layer.diagonal(k, slots)));
        let source = Source::Generated { slots, indices, f };
        LinearTransform::encoded_at_use(params, source, strategy, level, 1.0)?
    };
    let lt = match steps.outer {
        Some(n12) => lt.with_outer_giant_steps(n12)?,
        None => lt,
    };
    Ok(Prepared { lt, bias, bias_level })
}

fn complex(v: &[f64]) -> Vec<Complex64> {
    v.iter().map(|&x| Complex64::new(x, 0.0)).collect()
}

/// The product of the primes a rescale at `level` drops.
fn dropped(params: &Parameters, level: usize) -> f64 {
    let c = params.primes_per_rescale();
    params.q()[level + 1 - c..=level].iter().map(|&q| q as f64).product()
}

/// BSGS with `conv`'s hoisting and order, `n1` the power of two with the fewest rotations
/// (baby steps, recomputed per group of giant steps in the giant-step-centric order, plus giant
/// steps) for these diagonals.
pub(crate) fn fewest_rotations(
    indices: &[usize],
    slots: usize,
    conv: ConvStrategy,
) -> Result<Strategy> {
    let n1 = fewest_rotations_n1(indices, slots, conv)?;
    Ok(Strategy::Bsgs { n1, hoisting: conv.hoisting, order: conv.order })
}

/// [`fewest_rotations`]' `n1`.
fn fewest_rotations_n1(indices: &[usize], slots: usize, conv: ConvStrategy) -> Result<usize> {
    let mut best = (usize::MAX, 1);
    let mut n1 = 1;
    while n1 <= slots {
        let s = Split::new(indices, n1, slots)?;
        let rotations =
            baby_rotations(&s, conv.order) as usize + s.giant.keys().filter(|&&g| g != 0).count();
        if rotations < best.0 {
            best = (rotations, n1);
        }
        n1 *= 2;
    }
    Ok(best.1)
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
        let bias = if x.is_symbolic() {
            let mut b = Plaintext::symbolic(self.eval.params(), p.bias_level)?;
            b.set_scale(self.model.scale);
            b
        } else {
            let b = complex(&p.bias);
            let (enc, slots, scale) =
                (&self.model.encoder, self.model.arch.slots, self.model.scale);
            untraced(|| enc.encode(&b, slots, p.bias_level, scale))?
        };
        Ok(self.eval.add_plain(&y, &bias)?)
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

/// Record one ResNet-20 inference at `params` in trace mode: the image at the top level, every
/// bootstrap a [`BootstrapMarker`] (time it from one bootstrap trace per marker: recording the
/// dozens of full bootstraps inline would repeat one identical kernel stream), the linear layers
/// run with `conv`, seeded keys or not. Returns the trace and the number of bootstraps.
///
/// The bootstrap is circuit `cfg` of chain `boot_params`: `params` itself (CraterLake), or a
/// chain whose bootstrap ends at `params`' top limb count (Osiris' Set IV runs its residual
/// levels one prime each on `OSIRIS_SET_IV` and bootstraps on `OSIRIS_SET_IV_BOOT`, whose
/// bootstrap returns 11 limbs, that set's top). Traces see limb counts only, so the join is
/// exact.
///
/// # Errors
/// A bootstrap that does not end at a level of `params`; a chain whose bootstrap leaves fewer
/// levels than a sign stage; scheme errors.
pub fn record_resnet20(
    params: &Parameters,
    (boot_params, cfg): (&Parameters, &BootstrapConfig),
    conv: ConvStrategy,
    seeded: bool,
) -> Result<(basalt_trace::Trace, usize)> {
    let arch = Arch { slots: 1 << cfg.log_slots, ..Arch::RESNET20 };
    let net = Network::build(arch, 0, &test_image(&arch, 0))?;
    let sign = basalt_circuits::polynomial::minimax::sign(&SIGN_DEGREES, SIGN_EPS)?;
    let scale = params.default_scale();
    let scales = (scale, scale.min(cfg.max_input_scale(boot_params)));
    let refreshed = cfg.budget(boot_params)?.output_level;
    if refreshed > params.max_level() {
        return Err(basalt_circuits::CircuitError::Invalid(format!(
            "the bootstrap ends at level {refreshed}, above the network chain's top {}",
            params.max_level()
        )));
    }
    let top = params.max_level();
    let model = Model::prepare(params, &net, &sign, top, refreshed, scales, conv, true)?;
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
