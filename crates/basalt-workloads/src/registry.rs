//! Every runnable workload by name, for `basalt workload` and `basalt.workloads`: one entry
//! point that runs a paper's program for real on real data and returns one JSON record
//! (accuracy in the clear and encrypted, their agreement, precision in bits, wall time,
//! bootstraps, evaluation-key bytes).
//!
//! `--quick` runs each workload on an insecure toy ring (N ≤ 2^11) with a small slice of the
//! data, in seconds: that is what CI runs. Without it the workload runs at its paper's preset
//! (or `preset`), which for the bootstrapped ones means N = 2^16 and gigabytes of keys.

use std::time::Instant;

use basalt_circuits::bootstrap::BootstrapConfig;
use basalt_circuits::bootstrap::config::for_preset;
use basalt_circuits::testing::{toy_bootstrap_params, toy_params};
use basalt_ckks::{Parameters, SecretDistribution};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use serde_json::{Value, json};

use crate::classify::{Classifier, RULE, Tally};
use crate::digits::{self, DataError};
use crate::helr_digits::{self, Task, Trainer};
use crate::network::Network;
use crate::{CircuitError, mnist};

/// How to run a workload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// A CKKS preset by name or alias (`basalt_ckks::Parameters::preset`); `None` is the
    /// workload's own (its paper's), or the toy ring with `quick`.
    pub preset: Option<String>,
    /// Toy ring and a few inputs: seconds, insecure, for CI.
    pub quick: bool,
    /// Worker threads (`None`: all cores).
    pub threads: Option<usize>,
    /// A progress bar on stderr.
    pub progress: bool,
    /// Accept a preset estimated below 128-bit security (`basalt security` lists them): some
    /// papers' own sets are (Osiris's set II for LeNet, CraterLake's 80-bit chains).
    pub allow_insecure: bool,
    /// Run even when the memory estimate exceeds what the machine has available (a workload
    /// that counts its keys and plaintexts up front refuses otherwise).
    pub force: bool,
    /// Encrypted inputs to run (the first of the test split): `None` is the workload's own
    /// count (its full run, or a few with `quick`). The record's `images` says how many ran.
    pub images: Option<usize>,
}

impl RunOptions {
    /// The inputs to run: [`RunOptions::images`], else `quick` or `full` by `self.quick`, at
    /// most `available`.
    pub(crate) fn image_count(&self, quick: usize, full: usize, available: usize) -> usize {
        self.images.unwrap_or(if self.quick { quick } else { full }).min(available)
    }
}

/// One registry entry as `list` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkloadInfo {
    pub name: &'static str,
    /// The paper and table the workload reproduces.
    pub paper: &'static str,
    pub description: &'static str,
    /// The preset of a full run.
    pub preset: &'static str,
}

/// Why a workload could not run.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("no workload named `{name}`; known: {known}")]
    Unknown { name: String, known: String },
    #[error("preset `{preset}`: {reason}")]
    Preset { preset: String, reason: String },
    #[error("{0}")]
    Circuit(#[from] CircuitError),
    #[error("{0}")]
    Data(#[from] DataError),
    #[error("threads: {0}")]
    Threads(String),
    #[error("images: {0}")]
    Images(String),
    #[error("{0}")]
    Tfhe(String),
}

type Runner = fn(&RunOptions, &ProgressBar) -> Result<Value, WorkloadError>;

/// The table: name, paper, description, full-size preset, runner.
const TABLE: &[(WorkloadInfo, Runner)] = &[
    (
        WorkloadInfo {
            name: "helr",
            paper: "FAB §7 / Table 8 (HELR on MNIST 3-vs-8); Osiris HELR-1024; CraterLake LogReg",
            description: "encrypted logistic-regression training (NAG, degree-3 sigmoid, \
                          bootstraps) on digits 3-vs-8 at 14x14",
            preset: "FAB",
        },
        run_helr,
    ),
    (
        WorkloadInfo {
            name: "lola",
            paper: "Osiris Table III(a) Set I; CraterLake Table 3 (LoLa-CryptoNets MNIST)",
            description: "LoLa-CryptoNets inference (conv 5x5x5 s2, square, 845-100, square, \
                          100-10) on digits at 28x28, trained weights",
            preset: "OSIRIS_SET_I",
        },
        run_lola,
    ),
    (
        WorkloadInfo {
            name: "mlp",
            paper: "Osiris Table III(a) Set I (SecureML MLP)",
            description: "SecureML's MLP (784-128-128-10, squares) on digits at 28x28, trained \
                          weights",
            preset: "OSIRIS_SET_I",
        },
        run_mlp,
    ),
    (
        WorkloadInfo {
            name: "lenet",
            paper: "Osiris Table III(a) Set II (Orion's LeNet)",
            description: "Orion's LeNet (conv 5x5 1->32 s2, square, conv 5x5 32->64 s2, square, \
                          3136-512, square, 512-10) on digits at 28x28, trained weights",
            preset: "OSIRIS_SET_II",
        },
        run_lenet,
    ),
    (
        WorkloadInfo {
            name: "lstm",
            paper: "CraterLake Table 3 (LSTM, Podschwadt & Takabi)",
            description: "the recurrence h <- sigma(W0 h + W1 x), 128 wide, degree-3 sigma, \
                          bootstraps, trained on digits read row by row (28 steps), dense \
                          128->10 on the last state",
            preset: "CRATERLAKE_80_BOOT",
        },
        run_lstm,
    ),
    (
        WorkloadInfo {
            name: "sort",
            paper: "Osiris Table III(b) Set IV (bitonic sort of 2^14 values)",
            description: "bitonic sort of encrypted values in (0, 1) with composite-polynomial \
                          comparisons and bootstraps, against an exact sort",
            preset: "LATTIGO_N16QP1546H192H32",
        },
        run_sort,
    ),
    (
        WorkloadInfo {
            name: "resnet20",
            paper: "CraterLake Table 3; Osiris Table III Set IV (ResNet-20)",
            description: "ResNet-20 (composite minimax ReLU, bootstraps) on digits as 32x32x3, \
                          trained weights: accuracy and agreement with the plaintext twin",
            preset: "CRATERLAKE_80_BOOT",
        },
        run_resnet20,
    ),
    (
        WorkloadInfo {
            name: "nn-20",
            paper: "Strix Fig. 7 (Chillotti-Joye-Paillier NN-20)",
            description: "TFHE deep network: 10x11 convolution (2 channels), dense layers of 92 \
                          ReLUs, one PBS per ReLU, on digits upsampled to 28x28, N = 1024/2048/4096",
            preset: "NN_N1024",
        },
        run_nn_20,
    ),
    (
        WorkloadInfo {
            name: "nn-50",
            paper: "Strix Fig. 7 (Chillotti-Joye-Paillier NN-50)",
            description: "TFHE deep network: 10x11 convolution (2 channels), dense layers of 92 \
                          ReLUs, one PBS per ReLU, on digits upsampled to 28x28, N = 1024/2048/4096",
            preset: "NN_N1024",
        },
        run_nn_50,
    ),
    (
        WorkloadInfo {
            name: "nn-100",
            paper: "Strix Fig. 7 (Chillotti-Joye-Paillier NN-100)",
            description: "TFHE deep network: 10x11 convolution (2 channels), dense layers of 92 \
                          ReLUs, one PBS per ReLU, on digits upsampled to 28x28, N = 1024/2048/4096",
            preset: "NN_N1024",
        },
        run_nn_100,
    ),
];

/// Every workload.
pub fn list() -> Vec<WorkloadInfo> {
    TABLE.iter().map(|(i, _)| i.clone()).collect()
}

/// Run workload `name`; the JSON record of the run.
///
/// # Errors
/// An unknown name, an unknown preset or one too short for the workload, a model the packing
/// cannot hold, a missing key, a thread-pool failure.
pub fn run(name: &str, opts: &RunOptions) -> Result<Value, WorkloadError> {
    let Some((info, runner)) = TABLE.iter().find(|(i, _)| i.name == name) else {
        let known = TABLE.iter().map(|(i, _)| i.name).collect::<Vec<_>>().join(", ");
        return Err(WorkloadError::Unknown { name: name.to_string(), known });
    };
    let bar = if opts.progress { ProgressBar::new(0) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} [{elapsed_precise} < {eta}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(info.name);
    if opts.images == Some(0) {
        return Err(WorkloadError::Images("at least one image must run".into()));
    }
    let threads = opts.threads.unwrap_or_else(rayon::current_num_threads);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| WorkloadError::Threads(e.to_string()))?;
    let t0 = Instant::now();
    let mut record = pool.install(|| runner(opts, &bar))?;
    bar.finish_and_clear();
    if let Value::Object(m) = &mut record {
        m.insert("workload".into(), json!(info.name));
        m.insert("paper".into(), json!(info.paper));
        m.insert("quick".into(), json!(opts.quick));
        m.insert("threads".into(), json!(threads));
        m.insert("wall_s".into(), json!(t0.elapsed().as_secs_f64()));
    }
    Ok(record)
}

/// The parameters of a run: `opts.preset`, else the toy ring with `quick`, else `full`.
pub(crate) fn params(
    opts: &RunOptions,
    full: &str,
    toy: impl FnOnce() -> Parameters,
) -> Result<(Parameters, String), WorkloadError> {
    match (&opts.preset, opts.quick) {
        (Some(p), _) => Ok((preset(p, opts.allow_insecure)?, p.clone())),
        (None, true) => {
            let p = toy();
            let name = p.literal().name.clone();
            Ok((p, name))
        }
        (None, false) => Ok((preset(full, opts.allow_insecure)?, full.to_string())),
    }
}

/// A named preset, with the explicit opt-in for one below 128 bits.
pub(crate) fn preset(name: &str, allow_insecure: bool) -> Result<Parameters, WorkloadError> {
    let open = if allow_insecure { Parameters::preset_insecure } else { Parameters::preset };
    open(name)
        .map_err(|e| WorkloadError::Preset { preset: name.to_string(), reason: e.to_string() })
}

/// Name the preset in a circuit error about levels (the user chose it).
pub(crate) fn at_preset(preset: &str) -> impl Fn(CircuitError) -> WorkloadError + '_ {
    move |e| match e {
        CircuitError::NotEnoughLevels { .. } => {
            WorkloadError::Preset { preset: preset.to_string(), reason: e.to_string() }
        }
        other => WorkloadError::Circuit(other),
    }
}

/// The security estimate of a parameter set (the HE Standard's table; toy rings are below it).
pub(crate) fn security(params: &Parameters) -> Value {
    let s = params.security();
    json!({ "estimated_bits": s.bits, "meets_128": s.meets.is_some_and(|b| b >= 128) })
}

fn run_lola(opts: &RunOptions, bar: &ProgressBar) -> Result<Value, WorkloadError> {
    classify(opts, bar, &digits::trained_lola()?, mnist::Net::Lola)
}

fn run_mlp(opts: &RunOptions, bar: &ProgressBar) -> Result<Value, WorkloadError> {
    classify(opts, bar, &digits::trained_mlp()?, mnist::Net::Mlp)
}

/// Images of a `--quick` classification run.
pub(crate) const QUICK_IMAGES: usize = 8;

/// Classify the test split (the first [`QUICK_IMAGES`] with `quick`, the first
/// [`RunOptions::images`] if given) encrypted and in the clear.
fn classify(
    opts: &RunOptions,
    bar: &ProgressBar,
    net: &Network,
    kind: mnist::Net,
) -> Result<Value, WorkloadError> {
    let (params, name) = params(opts, "OSIRIS_SET_I", || toy_params(11, 5, 40, 2))?;
    let t_setup = Instant::now();
    let clf = Classifier::new(&params, net, RULE).map_err(at_preset(&name))?;
    let setup_s = t_setup.elapsed().as_secs_f64();
    let (tally, infer_s) =
        tally_test_split(opts, bar, net, &clf, |d| kind.inputs(&digits::to28(d)))?;
    let data = "sklearn digits test split, 8x8 resized to 28x28 (3x3 blocks, 2-pixel padding)";
    Ok(classifier_record((&params, &name), data, &clf, &tally, (setup_s, infer_s)))
}

/// Classify the digits' test split (the first [`QUICK_IMAGES`] with `opts.quick`, the first
/// `opts.images` if given): each image
/// as `inputs` makes it, encrypted through `clf` and in the clear through `net`'s twin. The
/// tally and the inference time in seconds.
///
/// # Errors
/// A malformed embedded data file; scheme errors.
pub(crate) fn tally_test_split(
    opts: &RunOptions,
    bar: &ProgressBar,
    net: &Network,
    clf: &Classifier,
    inputs: impl Fn(&digits::Digit) -> Vec<Vec<f64>>,
) -> Result<(Tally, f64), WorkloadError> {
    let data = digits::load()?;
    let n = opts.image_count(QUICK_IMAGES, data.test.len(), data.test.len());
    bar.set_length(n as u64);
    let mut tally = Tally::default();
    let t0 = Instant::now();
    for d in data.test.iter().take(n) {
        let x = inputs(d);
        let plain = net.evaluate_plain(&x);
        let enc = clf.scores(&x, net.outputs())?;
        tally.add(usize::from(d.label), &plain, &enc);
        bar.inc(1);
    }
    Ok((tally, t0.elapsed().as_secs_f64()))
}

/// The JSON record of an encrypted classification without bootstraps (LoLa, the MLP, LeNet):
/// the parameters and preset name, the data described by `data`, the accuracy of `tally`,
/// `clf`'s keys, and the setup and inference seconds.
pub(crate) fn classifier_record(
    (params, preset): (&Parameters, &str),
    data: &str,
    clf: &Classifier,
    tally: &Tally,
    (setup_s, infer_s): (f64, f64),
) -> Value {
    json!({
        "preset": preset,
        "log_n": params.log_n(),
        "security": security(params),
        "data": data,
        "images": tally.n,
        "accuracy": {
            "plaintext": tally.rate(tally.plain_correct),
            "encrypted": tally.rate(tally.enc_correct),
            "agreement": tally.rate(tally.agree),
        },
        "precision_bits": tally.min_bits,
        "bootstraps": 0,
        "key_bytes": clf.key_bytes(),
        "rotations": clf.rotations().len(),
        "setup_s": setup_s,
        "per_image_s": infer_s / tally.n.max(1) as f64,
    })
}

/// The toy bootstrapping ring of the `--quick` runs: N = 2^10, Lattigo's chain shape with
/// `residual` 40-bit levels, CoeffToSlot in 2 levels, SlotToCoeff in 1, 2^`log_slots` slots.
fn toy_bootstrapping(residual: usize, log_slots: u32) -> (Parameters, BootstrapConfig) {
    let params = toy_bootstrap_params(10, residual, 1, 2, SecretDistribution::Hamming { h: 64 });
    let cfg = BootstrapConfig {
        cts_levels: 2,
        stc_levels: 1,
        ..BootstrapConfig::lattigo_default(log_slots)
    };
    (params, cfg)
}

/// The bootstrapping circuit of a named preset at 2^`log_slots` slots.
fn preset_bootstrapping(
    name: &str,
    params: &Parameters,
    log_slots: u32,
) -> Result<BootstrapConfig, WorkloadError> {
    for_preset(name, Some(log_slots), params.log_n()).ok_or_else(|| WorkloadError::Preset {
        preset: name.to_string(),
        reason: "has no bootstrapping circuit (use FAB, LATTIGO_N16QP1546H192H32, \
                 OSIRIS_SET_III_BOOT, OSIRIS_SET_IV_BOOT or CRATERLAKE_*_BOOT)"
            .into(),
    })
}

fn run_helr(opts: &RunOptions, bar: &ProgressBar) -> Result<Value, WorkloadError> {
    let task = if opts.quick && opts.preset.is_none() { Task::quick() } else { Task::fab() };
    let log_slots = task.lr.slots().trailing_zeros();
    let (params, cfg, name) = match (&opts.preset, opts.quick) {
        (None, true) => {
            let (p, c) = toy_bootstrapping(10, log_slots);
            let name = p.literal().name.clone();
            (p, c, name)
        }
        (p, _) => {
            let name = p.clone().unwrap_or_else(|| "FAB".to_string());
            let params = preset(&name, opts.allow_insecure)?;
            let cfg = preset_bootstrapping(&name, &params, log_slots)?;
            (params, cfg, name)
        }
    };
    if task.lr.slots() > params.max_slots() {
        return Err(WorkloadError::Preset {
            preset: name,
            reason: format!(
                "packs at most {} slots; HELR's packing needs {}",
                params.max_slots(),
                task.lr.slots()
            ),
        });
    }
    let t_setup = Instant::now();
    let trainer = Trainer::new(&params, cfg, &task).map_err(at_preset(&name))?;
    let setup_s = t_setup.elapsed().as_secs_f64();
    let (train, test) = task.data(&digits::load()?)?;
    let batches = task.batches(&train);
    bar.set_length(task.iterations as u64);
    let t0 = Instant::now();
    let (w_enc, boots) = trainer.train(&task, &batches, &mut || bar.inc(1))?;
    let train_s = t0.elapsed().as_secs_f64();
    let w_plain = task.train_plain(&batches);
    let (acc_plain, p_plain) = helr_digits::predict(&w_plain, &test);
    let (acc_enc, p_enc) = helr_digits::predict(&w_enc, &test);
    let agree = p_plain.iter().zip(&p_enc).filter(|(a, b)| a == b).count();
    let err = w_plain.iter().zip(&w_enc).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    Ok(json!({
        "preset": name,
        "log_n": params.log_n(),
        "security": security(&params),
        "data": format!(
            "sklearn digits 3-vs-8: {} train / {} test images, 8x8 resized to {s}x{s} ({})",
            train.len(),
            test.len(),
            if task.side == 14 { "2x2 blocks, outer ring cropped" } else { "2x2 means" },
            s = task.side
        ),
        "iterations": task.iterations,
        "samples_per_batch": task.lr.cts << task.lr.helr.log_samples,
        "images": test.len(),
        "accuracy": {
            "plaintext": acc_plain,
            "encrypted": acc_enc,
            "agreement": agree as f64 / test.len().max(1) as f64,
        },
        "precision_bits": -err.max(f64::MIN_POSITIVE).log2(),
        "bootstraps": boots,
        "key_bytes": trainer.key_bytes(),
        "setup_s": setup_s,
        "per_iteration_s": train_s / task.iterations as f64,
    }))
}

fn run_lenet(opts: &RunOptions, bar: &ProgressBar) -> Result<Value, WorkloadError> {
    crate::lenet_run::run(opts, bar)
}

fn run_lstm(opts: &RunOptions, bar: &ProgressBar) -> Result<Value, WorkloadError> {
    crate::lstm_run::run(opts, bar)
}

fn run_resnet20(opts: &RunOptions, bar: &ProgressBar) -> Result<Value, WorkloadError> {
    crate::resnet_run::run(opts, bar)
}

fn run_sort(opts: &RunOptions, bar: &ProgressBar) -> Result<Value, WorkloadError> {
    crate::sort_run::run(opts, bar)
}

/// The TFHE networks run at every ring size of their parameter sets (`--quick`: the smallest,
/// a few images, the first layers); `--preset` does not apply.
fn run_nn(name: &str, opts: &RunOptions) -> Result<Value, WorkloadError> {
    // The networks run on their own TFHE sets; `--preset NN_N<size>` picks one ring size.
    let sizes = match opts.preset.as_deref() {
        None => None,
        Some(p) => {
            let n = p
                .strip_prefix("NN_N")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| [1024, 2048, 4096].contains(n))
                .ok_or_else(|| WorkloadError::Preset {
                    preset: p.to_string(),
                    reason: format!(
                        "{name} runs on its own TFHE parameter sets: NN_N1024, NN_N2048 or NN_N4096"
                    ),
                })?;
            Some(vec![n])
        }
    };
    let o = crate::tfhe_nn::NnOptions {
        quick: opts.quick,
        threads: opts.threads,
        images: opts.images,
        sizes,
        timing: true,
        progress: opts.progress,
    };
    crate::tfhe_nn::run_with(name, &o).map_err(WorkloadError::Tfhe)
}

fn run_nn_20(opts: &RunOptions, _bar: &ProgressBar) -> Result<Value, WorkloadError> {
    run_nn("nn-20", opts)
}

fn run_nn_50(opts: &RunOptions, _bar: &ProgressBar) -> Result<Value, WorkloadError> {
    run_nn("nn-50", opts)
}

fn run_nn_100(opts: &RunOptions, _bar: &ProgressBar) -> Result<Value, WorkloadError> {
    run_nn("nn-100", opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_and_presets_are_named() {
        let e = run("resnet-2000", &RunOptions::default()).unwrap_err().to_string();
        assert!(e.contains("resnet-2000") && e.contains("helr"), "{e}");
        let opts = RunOptions { preset: Some("NO_SUCH".into()), ..RunOptions::default() };
        let e = run("mlp", &opts).unwrap_err().to_string();
        assert!(e.contains("NO_SUCH"), "{e}");
    }

    #[test]
    fn the_deep_networks_take_only_their_own_sets() {
        for p in ["N16QP1546H192H32", "NN_N512", "NN_Nx"] {
            let opts = RunOptions { preset: Some(p.into()), quick: true, ..RunOptions::default() };
            let e = run("nn-20", &opts).unwrap_err().to_string();
            assert!(e.contains(p) && e.contains("NN_N2048"), "{e}");
        }
    }
}
