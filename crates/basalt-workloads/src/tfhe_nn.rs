//! NN-20, NN-50 and NN-100: deep networks evaluated with one programmable bootstrap per ReLU,
//! the application benchmark of Strix Fig. 7.
//!
//! # Networks
//! Chillotti, Joye, Paillier, "Programmable bootstrapping enables efficient homomorphic
//! inference of deep neural networks" (CSCML 2021), as Strix Fig. 7 runs them: a 28×28 input, a
//! 10×11 convolution with 2 output channels (stride 1, padding 1: 2×21×20 = 840 outputs) and
//! ReLU, then dense layers of 92 neurons with ReLU, then a dense output layer of 10. NN-d has d
//! weight layers (the convolution, d − 2 hidden dense layers, the output layer), so
//! 840 + 92·(d − 2) bootstraps per inference. Every pixel is one ciphertext.
//!
//! # Data and weights
//! scikit-learn's bundled `load_digits` (8×8) upsampled to 28×28 (each pixel a 3×3 block, zero
//! padding 2), quantised to 2-bit pixels; integer weights trained quantisation-aware in the clear
//! by `scripts/train_tfhe_nn.py` (numpy, fixed seeds) into `data/weights/tfhe_nn_{20,50,100}.json`
//! with the test split in `data/weights/digits_28x28_test.json`.
//!
//! # Arithmetic
//! The integer program is the same in the clear ([`Network::plain_logits`]) and encrypted:
//! pre-activation `z = Σ w·a + b` on 2-bit activations, the ReLU lookup table
//! `a' = min(3, (max(z, 0) + 1) / 2)` applied to `(z + p/2) mod 2p` with `p = 16`, negacyclic in the
//! padding half (`−LUT(v − p)`), logits read modulo `2p` as signed values. The encrypted run
//! agrees with the plaintext one unless a bootstrap fails; the noise model gives the expected
//! number of failures per inference from each layer's largest weight-row 2-norm.
//!
//! # Parameters
//! `NN_N1024` (k = 2), `NN_N2048`, `NN_N4096` (`data/params/tfhe/`), all KS→PBS with the
//! modulus-switch noise reduction. Strix timing (`basalt-repro`'s `strix_nn`, added to the
//! record by `basalt workload run` and `basalt.workloads.run`): the same layer sequence as
//! epochs of PBS + KS on `data/machines/strix.toml`, each layer waiting for the previous one.

use std::path::PathBuf;
use std::time::Instant;

use basalt_tfhe::noise::estimate_with_norm2;
use basalt_tfhe::random::Csprng;
use basalt_tfhe::{BatchConfig, Ciphertext, ClientKey, Lut, ServerKey, TfheParams};
use rayon::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};

/// Input side (pixels).
pub const IMAGE: usize = 28;
/// Width of the hidden dense layers.
pub const WIDTH: usize = 92;

#[derive(Deserialize)]
struct ConvJson {
    kh: usize,
    kw: usize,
    pad: usize,
    out_channels: usize,
    weights: String,
    bias: Vec<i64>,
}

#[derive(Deserialize)]
struct DenseJson {
    inputs: usize,
    outputs: usize,
    weights: String,
    bias: Vec<i64>,
}

#[derive(Deserialize)]
struct NetJson {
    name: String,
    plaintext_modulus: u64,
    activation_max: i64,
    weight_max: i64,
    conv: ConvJson,
    dense: Vec<DenseJson>,
    test_accuracy: f64,
    test_predictions: Vec<usize>,
}

#[derive(Deserialize)]
struct TestJson {
    count: usize,
    pixels: String,
    labels: Vec<usize>,
}

/// A dense layer `outputs × inputs` (row-major) with biases.
#[derive(Clone, Debug)]
pub struct Dense {
    pub inputs: usize,
    pub outputs: usize,
    pub weights: Vec<i64>,
    pub bias: Vec<i64>,
}

impl Dense {
    fn row(&self, o: usize) -> &[i64] {
        &self.weights[o * self.inputs..(o + 1) * self.inputs]
    }
    /// Largest 2-norm of a weight row (noise growth of the layer).
    pub fn max_row_norm(&self) -> f64 {
        (0..self.outputs)
            .map(|o| self.row(o).iter().map(|&w| (w * w) as f64).sum::<f64>().sqrt())
            .fold(0.0, f64::max)
    }
}

/// A trained quantised network.
#[derive(Clone, Debug)]
pub struct Network {
    pub name: String,
    pub p: u64,
    pub act_max: i64,
    /// Convolution as a dense map from the 784 pixels to the 840 outputs (channel-major,
    /// then row, then column), zero padding folded in.
    pub conv: Dense,
    /// Hidden dense layers, then the output layer.
    pub dense: Vec<Dense>,
    /// The training script's test-split predictions (numpy's integer program).
    pub reference_predictions: Vec<usize>,
    pub reference_accuracy: f64,
}

/// The quantised test split.
#[derive(Clone, Debug)]
pub struct TestSet {
    pub images: Vec<Vec<i64>>,
    pub labels: Vec<usize>,
}

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/weights")
}

fn weights_of(s: &str, wmax: i64, want: usize, what: &str) -> Result<Vec<i64>, String> {
    let w: Vec<i64> = s.bytes().map(|b| b as i64 - b'0' as i64 - wmax).collect();
    if w.len() != want || w.iter().any(|v| v.abs() > wmax) {
        return Err(format!("{what}: {} weights in [-{wmax}, {wmax}] expected", want));
    }
    Ok(w)
}

/// Depth of `nn-20` / `nn-50` / `nn-100`.
pub fn depth_of(name: &str) -> Result<usize, String> {
    match name.to_ascii_lowercase().as_str() {
        "nn-20" => Ok(20),
        "nn-50" => Ok(50),
        "nn-100" => Ok(100),
        _ => Err(format!("unknown network `{name}` (known: nn-20, nn-50, nn-100)")),
    }
}

impl Network {
    /// Load `data/weights/tfhe_nn_<depth>.json`, validating every shape.
    pub fn load(name: &str) -> Result<Network, String> {
        let depth = depth_of(name)?;
        let path = data_dir().join(format!("tfhe_nn_{depth}.json"));
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!("{}: {e} (generate it with scripts/train_tfhe_nn.py)", path.display())
        })?;
        let j: NetJson =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let c = &j.conv;
        let (ho, wo) = (IMAGE + 2 * c.pad + 1 - c.kh, IMAGE + 2 * c.pad + 1 - c.kw);
        let k = c.kh * c.kw;
        let cw = weights_of(&c.weights, j.weight_max, c.out_channels * k, "conv")?;
        if c.bias.len() != c.out_channels {
            return Err("conv: one bias per channel expected".into());
        }
        // Unfold the convolution into a dense 784 → out_channels·ho·wo map.
        let outs = c.out_channels * ho * wo;
        let mut conv = Dense {
            inputs: IMAGE * IMAGE,
            outputs: outs,
            weights: vec![0; outs * IMAGE * IMAGE],
            bias: vec![0; outs],
        };
        for ch in 0..c.out_channels {
            for i in 0..ho {
                for jj in 0..wo {
                    let o = ch * ho * wo + i * wo + jj;
                    conv.bias[o] = c.bias[ch];
                    for di in 0..c.kh {
                        for dj in 0..c.kw {
                            let (y, x) = (
                                (i + di) as isize - c.pad as isize,
                                (jj + dj) as isize - c.pad as isize,
                            );
                            if (0..IMAGE as isize).contains(&y) && (0..IMAGE as isize).contains(&x)
                            {
                                conv.weights[o * IMAGE * IMAGE + y as usize * IMAGE + x as usize] =
                                    cw[ch * k + di * c.kw + dj];
                            }
                        }
                    }
                }
            }
        }
        let mut dense = Vec::new();
        let mut prev = outs;
        for (i, d) in j.dense.iter().enumerate() {
            if d.inputs != prev || d.bias.len() != d.outputs {
                return Err(format!(
                    "dense layer {i}: shape {}x{} does not chain",
                    d.outputs, d.inputs
                ));
            }
            let w = weights_of(&d.weights, j.weight_max, d.inputs * d.outputs, "dense")?;
            dense.push(Dense {
                inputs: d.inputs,
                outputs: d.outputs,
                weights: w,
                bias: d.bias.clone(),
            });
            prev = d.outputs;
        }
        if dense.len() != depth - 1 || prev != 10 {
            return Err(format!("{}: {} dense layers ending in {prev}", j.name, dense.len()));
        }
        Ok(Network {
            name: j.name,
            p: j.plaintext_modulus,
            act_max: j.activation_max,
            conv,
            dense,
            reference_predictions: j.test_predictions,
            reference_accuracy: j.test_accuracy,
        })
    }

    /// The quick form: the convolution, the first and the last hidden layer and the output layer.
    pub fn truncated(&self) -> Network {
        let mut n = self.clone();
        let l = n.dense.len();
        if l > 3 {
            n.dense =
                vec![self.dense[0].clone(), self.dense[l - 2].clone(), self.dense[l - 1].clone()];
        }
        n.name = format!("{}-quick", self.name);
        n
    }

    /// Layers that end in a bootstrap (convolution and hidden dense layers).
    pub fn relu_layers(&self) -> Vec<&Dense> {
        std::iter::once(&self.conv).chain(&self.dense[..self.dense.len() - 1]).collect()
    }

    /// Bootstraps per inference.
    pub fn pbs_count(&self) -> usize {
        self.relu_layers().iter().map(|d| d.outputs).sum()
    }

    /// The ReLU table on the phase index `v ∈ [0, p)` (`z = v − p/2`).
    pub fn relu_table(&self, v: u64) -> u64 {
        let z = v as i64 - (self.p / 2) as i64;
        (z.max(0) + 1).div_euclid(2).min(self.act_max) as u64
    }

    /// LUT on `(z + p/2) mod 2p`, negacyclic: the integer the ciphertext holds afterwards
    /// (modulo 2p).
    fn lut_mod(&self, z: i64) -> i64 {
        let two_p = 2 * self.p as i64;
        let v = (z + (self.p / 2) as i64).rem_euclid(two_p);
        if v < self.p as i64 {
            self.relu_table(v as u64) as i64
        } else {
            (-(self.relu_table((v - self.p as i64) as u64) as i64)).rem_euclid(two_p)
        }
    }

    /// The integer program in the clear: logits modulo 2p, signed.
    pub fn plain_logits(&self, image: &[i64]) -> Vec<i64> {
        let mut a = image.to_vec();
        for layer in self.relu_layers() {
            a = (0..layer.outputs)
                .map(|o| {
                    let z: i64 = layer.row(o).iter().zip(&a).map(|(w, x)| w * x).sum::<i64>()
                        + layer.bias[o];
                    self.lut_mod(z)
                })
                .collect();
        }
        let last = self.dense.last().expect("output layer");
        let two_p = 2 * self.p as i64;
        (0..last.outputs)
            .map(|o| {
                let z = last.row(o).iter().zip(&a).map(|(w, x)| w * x).sum::<i64>() + last.bias[o];
                (z + self.p as i64).rem_euclid(two_p) - self.p as i64
            })
            .collect()
    }
}

/// Index of the largest logit (first on ties, as numpy's argmax).
pub fn argmax(v: &[i64]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

impl TestSet {
    pub fn load() -> Result<TestSet, String> {
        let path = data_dir().join("digits_28x28_test.json");
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!("{}: {e} (generate it with scripts/train_tfhe_nn.py)", path.display())
        })?;
        let j: TestJson =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let px = IMAGE * IMAGE;
        if j.pixels.len() != j.count * px || j.labels.len() != j.count {
            return Err(format!("{}: {} images of {px} pixels expected", path.display(), j.count));
        }
        let images = j
            .pixels
            .as_bytes()
            .chunks(px)
            .map(|c| c.iter().map(|&b| b as i64 - b'0' as i64).collect())
            .collect();
        Ok(TestSet { images, labels: j.labels })
    }
}

/// How the bootstraps of a layer are scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// One ciphertext after the other (per-ciphertext KS + PBS, spread over the pool's threads).
    Unbatched,
    /// Strix's two-level batching of the whole layer (`apply_lut_batch`).
    Batched,
}

/// Encrypted inference: logits (decrypted) and the seconds spent in each layer.
pub fn encrypted_logits(
    net: &Network,
    ck: &ClientKey<u64>,
    sk: &ServerKey<u64>,
    lut: &Lut<u64>,
    image: &[i64],
    schedule: Schedule,
    rng: &mut Csprng,
) -> Result<(Vec<i64>, Vec<f64>), String> {
    let e = |x: basalt_tfhe::TfheError| x.to_string();
    let mut a: Vec<Ciphertext<u64>> = image
        .iter()
        .map(|&v| ck.encrypt_with(v as u64, rng))
        .collect::<Result<_, _>>()
        .map_err(e)?;
    let half = (net.p / 2) as i64;
    let mut times = Vec::new();
    let linear = |layer: &Dense, a: &[Ciphertext<u64>], offset: i64| {
        let refs: Vec<&Ciphertext<u64>> = a.iter().collect();
        (0..layer.outputs)
            .into_par_iter()
            .map(|o| sk.dot_plain(&refs, layer.row(o), layer.bias[o] + offset))
            .collect::<Result<Vec<_>, _>>()
    };
    for layer in net.relu_layers() {
        let t = Instant::now();
        let z = linear(layer, &a, half).map_err(e)?;
        a = match schedule {
            Schedule::Batched => sk.apply_lut_batch(&z, lut, &BatchConfig::default()).map_err(e)?,
            Schedule::Unbatched => z
                .par_iter()
                .with_max_len(1)
                .map(|c| sk.apply_lut(c, lut))
                .collect::<Result<_, _>>()
                .map_err(e)?,
        };
        times.push(t.elapsed().as_secs_f64());
    }
    let t = Instant::now();
    let out = linear(net.dense.last().expect("output layer"), &a, 0).map_err(e)?;
    let logits = out.iter().map(|c| ck.decrypt_signed(c)).collect::<Result<_, _>>().map_err(e)?;
    times.push(t.elapsed().as_secs_f64());
    Ok((logits, times))
}

/// The record's `security`: the set as `basalt security` estimates it (the lattice estimator
/// on both LWE problems its keys rest on, the weaker one the set's; docs/security.md), with the
/// parameter file's claim beside it for comparison.
pub fn security(params: &TfheParams) -> Value {
    let s = params.security();
    json!({
        "estimated_bits": s.bits(),
        "lwe_bits": s.lwe_bits,
        "lwe_attack": s.lwe_attack,
        "glwe_bits": s.glwe_bits,
        "glwe_attack": s.glwe_attack,
        "meets_128": !params.is_insecure(),
        "claimed_bits": params.security_bits,
    })
}

/// Modelled failure probability of one inference: each bootstrap with its layer's worst row.
pub fn modelled_failures(net: &Network, params: &TfheParams) -> Value {
    let mut expected = 0.0;
    let mut worst = f64::NEG_INFINITY;
    for layer in net.relu_layers() {
        // Every layer is rated as if it read bootstrap outputs; the convolution reads fresh
        // encryptions, whose noise (GLWE noise under the extracted key) is below a bootstrap
        // output's, so its rating is an upper bound.
        let norm = layer.max_row_norm();
        let r = estimate_with_norm2(params, norm);
        expected += layer.outputs as f64 * r.log2_p_fail.exp2();
        worst = worst.max(r.log2_p_fail);
    }
    json!({
        "expected_failed_pbs_per_inference": expected,
        "log2_worst_layer_p_fail": worst,
        "largest_row_norm": net.dense.iter().map(Dense::max_row_norm).fold(0.0, f64::max),
    })
}

/// Options of [`run_with`].
#[derive(Clone, Debug)]
pub struct NnOptions {
    pub quick: bool,
    /// Rayon threads for the agreement run (default 2).
    pub threads: Option<usize>,
    /// Test images for agreement (default: 2 quick, 20 full; `usize::MAX` = the whole split).
    pub images: Option<usize>,
    /// Polynomial sizes (default: 1024 quick, all three full).
    pub sizes: Option<Vec<usize>>,
    /// Time one inference with each schedule on 1 and 2 threads (four more inferences per
    /// size, two of them on one thread).
    pub timing: bool,
    /// Report each key generation, image and timing run on stderr as it ends.
    pub progress: bool,
}

/// `basalt workload run nn-20|nn-50|nn-100 [--quick] [--threads T]`.
pub fn run(name: &str, quick: bool, threads: Option<usize>) -> Result<Value, String> {
    run_with(
        name,
        &NnOptions { quick, threads, images: None, sizes: None, timing: true, progress: false },
    )
}

fn pool(t: usize) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new().num_threads(t).build().map_err(|e| e.to_string())
}

/// The workload with explicit options.
pub fn run_with(name: &str, o: &NnOptions) -> Result<Value, String> {
    let full = Network::load(name)?;
    let net = if o.quick { full.truncated() } else { full.clone() };
    let test = TestSet::load()?;
    let images = o.images.unwrap_or(if o.quick { 2 } else { 20 }).min(test.images.len());
    let sizes =
        o.sizes.clone().unwrap_or(if o.quick { vec![1024] } else { vec![1024, 2048, 4096] });
    let threads = o.threads.unwrap_or(2).max(1);
    // Plaintext twin on the whole split, checked against numpy's predictions.
    let plain: Vec<usize> = test.images.iter().map(|im| argmax(&net.plain_logits(im))).collect();
    let plain_acc = plain.iter().zip(&test.labels).filter(|(a, b)| a == b).count() as f64
        / test.labels.len() as f64;
    let full_plain: Vec<usize> = if o.quick {
        test.images.iter().map(|im| argmax(&full.plain_logits(im))).collect()
    } else {
        plain.clone()
    };
    if full_plain != full.reference_predictions {
        return Err(format!(
            "{}: the plaintext program disagrees with the training script's",
            full.name
        ));
    }
    let mut per_size = Vec::new();
    for &n in &sizes {
        let params = TfheParams::preset(&format!("NN_N{n}"), false).map_err(|e| e.to_string())?;
        if params.plaintext_modulus() != net.p {
            return Err(format!("NN_N{n}: plaintext modulus differs from the network's"));
        }
        let say = |msg: String| {
            if o.progress {
                eprintln!("{}: {msg}", params.name);
            }
        };
        let t = Instant::now();
        let mut rng = Csprng::from_os();
        let ck = ClientKey::<u64>::with_rng(&params, &mut rng).map_err(|e| e.to_string())?;
        let sk = ck.server_key_with(&mut rng);
        let keygen_seconds = t.elapsed().as_secs_f64();
        say(format!("keys in {keygen_seconds:.1} s"));
        let lut = Lut::from_fn(&params, |v| net.relu_table(v));
        let mut agree_logits = 0;
        let mut agree_class = 0;
        let mut correct = 0;
        let t = Instant::now();
        pool(threads)?.install(|| -> Result<(), String> {
            for (i, (im, &label)) in test.images.iter().zip(&test.labels).take(images).enumerate() {
                let (logits, times) =
                    encrypted_logits(&net, &ck, &sk, &lut, im, Schedule::Batched, &mut rng)?;
                let want = net.plain_logits(im);
                agree_logits += (logits == want) as usize;
                agree_class += (argmax(&logits) == argmax(&want)) as usize;
                correct += (argmax(&logits) == label) as usize;
                say(format!(
                    "image {}/{images}: {:.1} s ({threads} threads, batched), logits {}",
                    i + 1,
                    times.iter().sum::<f64>(),
                    if logits == want { "agree" } else { "DIFFER" }
                ));
            }
            Ok(())
        })?;
        let agreement_seconds = t.elapsed().as_secs_f64();
        let mut timing = Vec::new();
        if o.timing {
            let im = &test.images[0];
            for th in [1usize, 2] {
                for sched in [Schedule::Unbatched, Schedule::Batched] {
                    let (_, times) = pool(th)?
                        .install(|| encrypted_logits(&net, &ck, &sk, &lut, im, sched, &mut rng))?;
                    say(format!(
                        "timing, {th} thread(s), {sched:?}: {:.1} s",
                        times.iter().sum::<f64>()
                    ));
                    timing.push(json!({
                        "threads": th,
                        "schedule": if sched == Schedule::Batched { "batched" } else { "unbatched" },
                        "seconds": times.iter().sum::<f64>(),
                        "layer_seconds": times,
                    }));
                }
            }
        }
        per_size.push(json!({
            "set": params.name,
            "polynomial_size": n,
            "glwe_dimension": params.glwe_dimension,
            "lwe_dimension": params.lwe_dimension,
            "security": security(&params),
            "noise": modelled_failures(&net, &params),
            "images": images,
            "encrypted_accuracy": correct as f64 / images.max(1) as f64,
            "agreement_class": agree_class as f64 / images.max(1) as f64,
            "agreement_logits": agree_logits as f64 / images.max(1) as f64,
            "agreement_threads": threads,
            "agreement_seconds_per_image": agreement_seconds / images.max(1) as f64,
            "keygen_seconds": keygen_seconds,
            "timing": timing,
        }));
    }
    Ok(json!({
        "workload": full.name,
        "quick": o.quick,
        "network": net.name,
        "pbs_per_inference": net.pbs_count(),
        "layers": net.relu_layers().len() + 1,
        "data": "scikit-learn load_digits test split, 8x8 upsampled to 28x28 (3x3 blocks, zero padding 2), 2-bit pixels",
        "plaintext_accuracy": plain_acc,
        "plaintext_test_images": test.labels.len(),
        "sizes": per_size,
        "paper_fig7": {
            "source": "Strix Fig. 7 text: 33-38x faster than the CPU times of Chillotti-Joye-Paillier 2021, 8-17x than their GPU times",
            "speedup_vs_cpu": [33.0, 38.0],
            "speedup_vs_gpu": [8.0, 17.0]
        }
    }))
}

/// One layer at a time, for callers that split a layer's neurons over several machines
/// (`basalt.distributed`): every output depends on its own weight row only, so the outputs of
/// any split of the rows are those of the whole layer.
impl Network {
    /// The weight layers in order: the convolution (as a dense map), the hidden dense layers,
    /// the output layer. All but the last end in a ReLU bootstrap.
    pub fn layers(&self) -> Vec<&Dense> {
        std::iter::once(&self.conv).chain(&self.dense).collect()
    }

    /// The integer program in the clear, layer by layer: the activations after each ReLU
    /// layer (modulo 2p, as the ciphertexts hold them), then the signed logits.
    pub fn plain_activations(&self, image: &[i64]) -> Vec<Vec<i64>> {
        let mut a = image.to_vec();
        let mut out = Vec::new();
        for layer in self.relu_layers() {
            a = (0..layer.outputs)
                .map(|o| {
                    let z: i64 = layer.row(o).iter().zip(&a).map(|(w, x)| w * x).sum::<i64>()
                        + layer.bias[o];
                    self.lut_mod(z)
                })
                .collect();
            out.push(a.clone());
        }
        out.push(self.plain_logits(image));
        out
    }

    /// Rows `rows` of weight layer `layer` ([`Network::layers`]) on the encrypted activations
    /// `a`: the pre-activations `Σ w·a + b` and, for a ReLU layer, the bootstrap of the ReLU
    /// table `lut` (Strix's two-level batching on the current rayon pool), as
    /// [`encrypted_logits`] runs the layer.
    ///
    /// # Errors
    /// A layer or rows out of range, inputs of another count, key or set.
    pub fn encrypted_layer(
        &self,
        sk: &ServerKey<u64>,
        lut: &Lut<u64>,
        layer: usize,
        rows: std::ops::Range<usize>,
        a: &[Ciphertext<u64>],
    ) -> Result<Vec<Ciphertext<u64>>, String> {
        let layers = self.layers();
        let d = layers
            .get(layer)
            .ok_or_else(|| format!("{}: no layer {layer} (it has {})", self.name, layers.len()))?;
        if rows.start > rows.end || rows.end > d.outputs {
            return Err(format!("layer {layer}: rows {rows:?} outside 0..{}", d.outputs));
        }
        if a.len() != d.inputs {
            return Err(format!("layer {layer}: {} inputs, {} given", d.inputs, a.len()));
        }
        let relu = layer + 1 < layers.len();
        let offset = if relu { (self.p / 2) as i64 } else { 0 };
        let refs: Vec<&Ciphertext<u64>> = a.iter().collect();
        let z = rows
            .into_par_iter()
            .map(|o| sk.dot_plain(&refs, d.row(o), d.bias[o] + offset))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        if !relu {
            return Ok(z);
        }
        sk.apply_lut_batch(&z, lut, &BatchConfig::default()).map_err(|e| e.to_string())
    }

    /// The ReLU table of the network on the parameter set of `sk`.
    ///
    /// # Errors
    /// A set whose plaintext modulus is not the network's.
    pub fn relu_lut(&self, sk: &ServerKey<u64>) -> Result<Lut<u64>, String> {
        if sk.params().plaintext_modulus() != self.p {
            return Err(format!(
                "{}: the set's plaintext modulus {} is not the network's {}",
                sk.params().name,
                sk.params().plaintext_modulus(),
                self.p
            ));
        }
        Ok(Lut::from_fn(sk.params(), |v| self.relu_table(v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lut_is_negacyclic_and_relu_in_range() {
        let n = Network {
            name: "t".into(),
            p: 16,
            act_max: 3,
            conv: Dense { inputs: 1, outputs: 1, weights: vec![1], bias: vec![0] },
            dense: vec![],
            reference_predictions: vec![],
            reference_accuracy: 0.0,
        };
        // a = min(3, (max(z, 0) + 1) div 2): halves round up, as the training script does.
        let want = [0, 1, 1, 2, 2, 3, 3, 3];
        for z in -8..8 {
            let r = n.lut_mod(z);
            assert_eq!(r, if z < 0 { 0 } else { want[z as usize] }, "z={z}");
        }
        // Beyond the range the phase wraps into the padding half: −LUT(z + 8 − 16).
        assert_eq!(n.lut_mod(20), 30);
        assert_eq!(n.lut_mod(13), 0);
    }
}
