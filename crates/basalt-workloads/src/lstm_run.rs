//! CraterLake's LSTM ([`crate::lstm`]) run for real on the digits: the recurrence trained on
//! the image rows ([`crate::lstm::trained`]), each image encrypted row by row, the server
//! running every step, bootstrapping whenever the state runs out of levels, and a dense
//! 128→10 classifier on the last state (a hybrid-diagonal product, [`crate::network`]'s dense
//! layer); the client decrypts the scores. Against the cleartext twin with the same σ.
//!
//! Full size: width 128 at `CRATERLAKE_80_BOOT` (N = 2^16, a 128-slot sparse bootstrap), 28
//! steps (the rows of the 28×28 image; the paper's inference is 150 steps, 50 bootstraps: the
//! digits give 28 rows). `--quick`: width 16, the 8 rows of the raw 8×8 image, N = 2^10.

use std::collections::BTreeMap;
use std::time::Instant;

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper};
use basalt_circuits::lintrans::LinearTransform;
use basalt_circuits::testing::toy_bootstrap_params;
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{
    Ciphertext, Complex64, Encoder, Evaluator, KeyGenerator, Parameters, Plaintext,
    SecretDistribution,
};
use indicatif::ProgressBar;
use serde_json::{Value, json};

use crate::classify::{RULE, Tally, key_bytes};
use crate::digits;
use crate::lstm::{self, LstmModel, Trained};
use crate::network;
use crate::registry::{RunOptions, WorkloadError, security};
use crate::{CircuitError, Result};

/// The preset of a full run (CraterLake's 80-bit bootstrapping chain).
pub const PRESET: &str = "CRATERLAKE_80_BOOT";

/// Images of a full run (each is `steps / steps_per_bootstrap` bootstraps at N = 2^16, minutes
/// here: 20 keeps the run to about an hour on two threads) and of
/// a `--quick` one.
pub const FULL_IMAGES: usize = 20;
const QUICK_IMAGES: usize = 4;

/// The classifier on the last state, prepared at the level the state arrives with.
struct Readout {
    lt: LinearTransform,
    folds: Vec<i64>,
    /// Where the folds run: the product's output, one rescale below its input.
    fold_level: usize,
    out_slots: usize,
    bias: Plaintext,
}

impl Readout {
    /// `symbolic`: shapes only (trace mode).
    fn prepare(
        params: &Parameters,
        t: &Trained,
        level: usize,
        scale: f64,
        symbolic: bool,
    ) -> Result<Readout> {
        let slots = t.lstm.width();
        let (lt, folds, out_slots) =
            network::dense(params, &t.readout, slots, level, RULE, symbolic)?;
        let drop = params.primes_per_rescale();
        let bias =
            network::encode(params, &t.readout_bias, out_slots, level - drop, scale, symbolic)?;
        Ok(Readout { lt, folds, fold_level: level - drop, out_slots, bias })
    }

    /// Each rotation with the level it runs at: the product's at its input level, the folds'
    /// at its output level.
    fn rotation_levels(&self) -> impl Iterator<Item = (i64, usize)> + '_ {
        let product = self.lt.rotations().into_iter().map(|r| (r, self.lt.level()));
        product.chain(self.folds.iter().map(|&r| (r, self.fold_level)))
    }

    fn evaluate(&self, eval: &Evaluator, h: &Ciphertext) -> Result<Ciphertext> {
        let mut acc = self.lt.evaluate(eval, h)?;
        for &s in &self.folds {
            acc = eval.add(&acc, &eval.rotate(&acc, s)?)?;
        }
        acc.set_slots(self.out_slots);
        Ok(eval.add_plain(&acc, &self.bias)?)
    }
}

/// The Galois keys the network adds to the bootstrap's and the levels each holds the parts of:
/// a rotation of the products runs at the step positions' levels, the readout's at its input
/// and output levels, and a key serves those only (with CraterLake's bands, `P` grows with
/// `Q_l`: a key over every level holds 52 parts). A rotation the bootstrap also makes gets one
/// key with the bootstrap's levels too, which replaces the bootstrap's (one Galois key per
/// element).
fn network_key_levels(
    bt: &Bootstrapper,
    model: &LstmModel,
    readout: &Readout,
) -> BTreeMap<i64, Vec<usize>> {
    let mut m = model.rotation_levels();
    for (r, level) in readout.rotation_levels().filter(|&(r, _)| r != 0) {
        m.entry(r).or_default().push(level);
    }
    let boot = bt.rotation_levels();
    for (r, levels) in &mut m {
        levels.extend(boot.get(r).into_iter().flatten());
        levels.sort_unstable();
        levels.dedup();
    }
    m
}

/// What a run holds at its peak, counted from shapes before anything is generated or encoded
/// (the transforms' shapes, the bootstrap's, the keys' gadgets), each term from the code that
/// allocates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    /// The bootstrap's keys ([`Bootstrapper::key_bytes`], full: relinearisation, conjugation,
    /// each rotation with the parts of the levels it runs at, the encapsulation keys).
    pub bootstrap_keys: u64,
    /// What the products' and the readout's rotations add: each key with the parts of the
    /// levels it runs at (`network_key_levels`); where the bootstrap has the same rotation
    /// the parts its key lacks.
    pub network_keys: u64,
    /// The bootstrap's DFT diagonals, encoded at every limb of their levels
    /// ([`Bootstrapper::new`]), and in the clear as the transforms keep them.
    pub bootstrap_diagonals: u64,
    /// The weight diagonals: the products' in the clear and one of them encoded at a time
    /// ([`LstmModel::plaintext_bytes_at_use`]), the readout's encoded and in the clear, and its
    /// bias.
    pub diagonals: u64,
    /// The client's secret key (one polynomial over `Q ∪ P`) and the ring's NTT tables.
    pub fixed: u64,
    /// Ciphertexts: the client's whole encrypted sequence and the initial state (encrypted
    /// before the first step, held until the end), the state, and the largest of a step's
    /// summed products, its σ, and a bootstrap ([`crate::memory`]).
    pub working: u64,
}

impl Memory {
    /// The memory of `steps` steps of `model` (shapes suffice) with the bootstrap `bt` and the
    /// `readout` on `params`.
    ///
    /// # Errors
    /// σ deeper than the levels a step has (as the run itself would fail).
    fn of(
        params: &Parameters,
        bt: &Bootstrapper,
        model: &LstmModel,
        readout: &Readout,
        steps: usize,
    ) -> Result<Memory> {
        use crate::memory::{bootstrap, ciphertext, galois_key, polynomial, transform};
        let boot = bt.rotation_levels();
        let network_keys = network_key_levels(bt, model, readout)
            .iter()
            .map(|(r, levels)| {
                galois_key(params, levels) - boot.get(r).map_or(0, |own| galois_key(params, own))
            })
            .sum();
        let circuit: u64 = bt
            .coeff_to_slot()
            .iter()
            .chain(bt.slot_to_coeff())
            .map(|lt| lt.stored_plaintext_bytes() + crate::memory::clear_diagonals(lt))
            .sum();
        let bias = (readout.bias.level() as u64 + 1) * params.n() as u64 * 8;
        let clear: u64 = model
            .products()
            .flat_map(|(w0, w1)| [w0, w1])
            .chain([&readout.lt])
            .map(crate::memory::clear_diagonals)
            .sum();
        let diagonals = model.plaintext_bytes_at_use(params)
            + readout.lt.stored_plaintext_bytes()
            + bias
            + clear;
        let c = params.primes_per_rescale();
        let first = model.level(0);
        let held = (0..steps).map(|i| ciphertext(params, model.level(i))).sum::<u64>()
            + 2 * ciphertext(params, first);
        let product = model.products().map(|(w0, _)| transform(params, w0, 2)).max().unwrap_or(0);
        let sigma = polynomial(params, first - c, model.sigma())? + ciphertext(params, first - c);
        let working = held + bootstrap(params, bt)?.max(product).max(sigma);
        Ok(Memory {
            bootstrap_keys: bt.key_bytes(false),
            network_keys,
            bootstrap_diagonals: circuit,
            diagonals,
            fixed: crate::memory::secret_key(params) + crate::memory::ntt_tables(params),
            working,
        })
    }

    pub fn total(&self) -> u64 {
        self.bootstrap_keys
            + self.network_keys
            + self.bootstrap_diagonals
            + self.diagonals
            + self.fixed
            + self.working
    }

    /// The record's `memory_estimate_bytes`.
    pub fn to_json(&self) -> Value {
        json!({
            "bootstrap_keys": self.bootstrap_keys,
            "network_keys": self.network_keys,
            "bootstrap_diagonals": self.bootstrap_diagonals,
            "encoded_diagonals": self.diagonals,
            "secret_key_and_tables": self.fixed,
            "working_ciphertexts": self.working,
            "total": self.total(),
        })
    }
}

/// What a run with `opts` sets up before anything is generated: the trained recurrence, the
/// parameters, the bootstrapping circuit, the preset's name.
fn setup(
    opts: &RunOptions,
) -> std::result::Result<(Trained, Parameters, BootstrapConfig, String), WorkloadError> {
    let width = if opts.quick { 16 } else { lstm::HIDDEN };
    let trained = lstm::trained(width)?;
    let log_slots = width.trailing_zeros();
    let (params, cfg, name): (Parameters, BootstrapConfig, String) = match &opts.preset {
        None if opts.quick => {
            // Lattigo's chain shape on N = 2^10 with six levels after the bootstrap (two steps).
            let p = toy_bootstrap_params(10, 6, 1, 2, SecretDistribution::Hamming { h: 64 });
            let cfg = BootstrapConfig {
                cts_levels: 2,
                stc_levels: 1,
                ..BootstrapConfig::lattigo_default(log_slots)
            };
            let name = p.literal().name.clone();
            (p, cfg, name)
        }
        p => {
            let name = p.clone().unwrap_or_else(|| PRESET.to_string());
            let params = crate::registry::preset(&name, opts.allow_insecure)?;
            let cfg = basalt_circuits::bootstrap::config::for_preset(
                &name,
                Some(log_slots),
                params.log_n(),
            )
            .ok_or_else(|| WorkloadError::Preset {
                preset: name.clone(),
                reason: "has no bootstrapping circuit (the recurrence bootstraps its state)".into(),
            })?;
            (params, cfg, name)
        }
    };
    Ok((trained, params, cfg, name))
}

/// The shapes of a run (its circuit and products, nothing encoded but the small readout) and
/// what it will hold, counted from them.
fn shapes(
    trained: &Trained,
    params: &Parameters,
    cfg: BootstrapConfig,
    name: &str,
) -> std::result::Result<(Readout, Memory, usize), WorkloadError> {
    let shapes = Bootstrapper::symbolic(params, cfg).map_err(crate::registry::at_preset(name))?;
    let shape_model = LstmModel::prepare(params, &trained.lstm, &shapes, RULE, true)
        .map_err(crate::registry::at_preset(name))?;
    let per_boot = shape_model.steps_per_bootstrap();
    let out_level = shape_model.level(trained.steps % per_boot);
    // The readout is small (10 outputs at one level): prepared once, counted, then used.
    let readout = Readout::prepare(params, trained, out_level, shape_model.scale(), false)?;
    let memory = Memory::of(params, &shapes, &shape_model, &readout, trained.steps)
        .map_err(crate::registry::at_preset(name))?;
    Ok((readout, memory, per_boot))
}

/// What a run with `opts` will hold ([`Memory`]), from shapes: what [`run`] checks against
/// the memory available before it generates anything (seconds at N = 2^16).
///
/// # Errors
/// As [`run`]'s setup.
pub fn memory(opts: &RunOptions) -> std::result::Result<Memory, WorkloadError> {
    let (trained, params, cfg, name) = setup(opts)?;
    Ok(shapes(&trained, &params, cfg, &name)?.1)
}

/// Run: width 16 on the test ring with `--quick`, width 128 at [`PRESET`] (or `--preset`).
///
/// # Errors
/// An unknown preset or one without a bootstrapping circuit, a chain that leaves fewer than a
/// step's levels after a bootstrap, scheme errors.
pub fn run(opts: &RunOptions, bar: &ProgressBar) -> std::result::Result<Value, WorkloadError> {
    let (trained, params, cfg, name) = setup(opts)?;
    let width = trained.lstm.width();
    // Shapes first: a run that cannot hold its keys and plaintexts is refused before anything
    // is generated or encoded (CraterLake's 80-bit chain holds 112 limbs per key part).
    let (readout, memory, per_boot) = shapes(&trained, &params, cfg, &name)?;
    let what = format!("the LSTM's keys, plaintexts and working ciphertexts at {name}");
    basalt_ckks::progress::check_memory(&what, memory.total(), opts.force)
        .map_err(|e| crate::registry::at_preset(&name)(e.into()))?;
    let t_setup = Instant::now();
    let bt = Bootstrapper::new(&params, cfg).map_err(crate::registry::at_preset(&name))?;
    let model = LstmModel::prepare(&params, &trained.lstm, &bt, RULE, false)
        .map_err(crate::registry::at_preset(&name))?;
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let (mut keys, encaps) = bt.generate_keys(&sk, false)?;
    for (r, levels) in network_key_levels(&bt, &model, &readout) {
        keys = keys.with_galois(kg.clone().for_levels(levels).gen_rotation_key(&sk, r, false));
    }
    let key_bytes = key_bytes(&keys);
    let eval = Evaluator::new(&params, keys).map_err(CircuitError::from)?;
    let enc = Encoder::new(&params);
    let setup_s = t_setup.elapsed().as_secs_f64();
    let encrypt = |v: &[f64], level: usize| -> Result<Ciphertext> {
        let z: Vec<Complex64> = v.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        let pt = enc.encode(&z, model.slots(), level, model.scale())?;
        Ok(encrypt_sk(&params, &pt, &sk)?)
    };

    let data = digits::load()?;
    let n = opts.image_count(QUICK_IMAGES, FULL_IMAGES, data.test.len());
    bar.set_length(n as u64);
    let mut tally = Tally::default();
    let mut max_pre = 0.0f64;
    let t0 = Instant::now();
    for d in data.test.iter().take(n) {
        let xs = trained.sequence(d);
        let h0 = encrypt(&vec![0.0; width], model.level(0))?;
        let cts = xs
            .iter()
            .enumerate()
            .map(|(i, x)| encrypt(x, model.level(i)))
            .collect::<Result<Vec<_>>>()?;
        let h = model.evaluate(&eval, &bt, encaps.as_ref(), &h0, &cts)?;
        let out = readout.evaluate(&eval, &h)?;
        let dec = decrypt(&params, &out, &sk).and_then(|pt| enc.decode(&pt));
        let dec = dec.map_err(CircuitError::from)?;
        let have: Vec<f64> = dec.iter().take(10).map(|c| c.re).collect();
        let want = trained.scores_plain(&xs);
        max_pre = max_pre.max(max_pre_activation(&trained, &xs));
        tally.add(usize::from(d.label), &want, &have);
        bar.inc(1);
    }
    let infer_s = t0.elapsed().as_secs_f64();
    let bootstraps_per_image = trained.steps / per_boot;
    Ok(json!({
        "preset": name,
        "log_n": params.log_n(),
        "security": security(&params),
        "data": format!(
            "sklearn digits test split as sequences of {s} rows ({}), width {width}",
            if trained.steps == 28 { "28x28: 3x3 blocks, 2-pixel padding" } else { "raw 8x8" },
            s = trained.steps
        ),
        "steps": trained.steps,
        "steps_per_bootstrap": per_boot,
        "images": tally.n,
        "accuracy": {
            "plaintext": tally.rate(tally.plain_correct),
            "encrypted": tally.rate(tally.enc_correct),
            "agreement": tally.rate(tally.agree),
        },
        "precision_bits": tally.min_bits,
        "max_pre_activation": max_pre,
        "sigma_domain": lstm::INPUT_BOUND,
        "bootstraps": bootstraps_per_image * tally.n,
        "bootstraps_per_image": bootstraps_per_image,
        "key_bytes": key_bytes,
        "encapsulation_key_bytes": encaps.as_ref().map_or(0, |e| e.size_bytes()),
        "memory_estimate_bytes": memory.to_json(),
        "setup_s": setup_s,
        "per_image_s": infer_s / tally.n.max(1) as f64,
    }))
}

/// The largest |pre-activation| of the twin over a sequence (σ approximates `tanh` on
/// `[−B, B]`; trained weights keep it near that range, and the encrypted run evaluates the
/// same polynomial wherever it lands).
fn max_pre_activation(t: &Trained, xs: &[Vec<f64>]) -> f64 {
    let dot = |row: &[f64], v: &[f64]| row.iter().zip(v).map(|(a, b)| a * b).sum::<f64>();
    let mut h = vec![0.0; t.lstm.width()];
    let mut peak = 0.0f64;
    for x in xs {
        for (r0, r1) in t.lstm.w0.iter().zip(&t.lstm.w1) {
            peak = peak.max((dot(r0, &h) + dot(r1, x)).abs());
        }
        h = t.lstm.step_plain(&h, x);
    }
    peak
}

#[cfg(test)]
mod tests {
    use basalt_circuits::bootstrap::Encapsulation;

    use super::*;

    type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

    /// A whole full-size inference runs on the network keys the run makes, each with the parts
    /// of [`network_key_levels`] only: in trace mode (shape-only circuit, keys and ciphertexts,
    /// seconds at N = 2^16), with the bootstrap's keys over every level except where a network
    /// key replaces one, so that a level missing from a key fails the evaluation
    /// (`CkksError::KeyNotForLevel`) and a shared key that lost the bootstrap's levels fails
    /// the bootstrap.
    #[test]
    fn per_level_network_keys_serve_a_full_size_inference() -> TestResult {
        let opts = RunOptions { allow_insecure: true, ..RunOptions::default() };
        let (trained, params, cfg, _) = setup(&opts)?;
        // CraterLake's bands: a key part per band of levels, so per-level keys are smaller.
        assert!(params.gadgets().len() > 1, "{} has one key part", params.name());
        let bt = Bootstrapper::symbolic(&params, cfg)?;
        let model = LstmModel::prepare(&params, &trained.lstm, &bt, RULE, true)?;
        let out_level = model.level(trained.steps % model.steps_per_bootstrap());
        let readout = Readout::prepare(&params, &trained, out_level, model.scale(), true)?;
        let levels = network_key_levels(&bt, &model, &readout);
        let every: Vec<usize> = (0..=params.max_level()).collect();
        let full = crate::memory::galois_key(&params, &every);
        assert!(levels.values().all(|l| crate::memory::galois_key(&params, l) < full));

        let kg = KeyGenerator::new(&params);
        let mut keys = bt.symbolic_keys(false);
        for (&r, l) in &levels {
            let one = kg.clone().for_levels(l.iter().copied());
            keys.galois.extend(one.gen_symbolic_evaluation_keys(&[r], false, false).galois);
        }
        let eval = Evaluator::new(&params, keys)?;
        let encaps = cfg.ephemeral_h.map(|h| Encapsulation::symbolic(&params, h)).transpose()?;
        let ct = |level: usize| -> Result<Ciphertext> {
            let mut c = Ciphertext::symbolic(&params, level).map_err(CircuitError::from)?;
            c.set_slots(model.slots());
            c.set_scale(model.scale());
            Ok(c)
        };
        let h0 = ct(model.level(0))?;
        let xs = (0..trained.steps).map(|i| ct(model.level(i))).collect::<Result<Vec<_>>>()?;
        let h = model.evaluate(&eval, &bt, encaps.as_ref(), &h0, &xs)?;
        let out = readout.evaluate(&eval, &h)?;
        assert_eq!(out.slots(), readout.out_slots);

        // The control: the same keys with one product rotation's key over the top level only
        // (another band than the step's) fail the first step, naming the level.
        let (&r, _) = model.rotation_levels().iter().next().ok_or("no product rotation")?;
        let top = params.max_level();
        assert_ne!(params.gadget_index(top), params.gadget_index(model.level(0)));
        let mut keys = eval.keys().clone();
        let one = kg.clone().for_levels([top]).gen_symbolic_evaluation_keys(&[r], false, false);
        keys.galois.extend(one.galois);
        let eval = Evaluator::new(&params, keys)?;
        let (w0, w1) = model.products().next().ok_or("no step")?;
        let e = LinearTransform::evaluate_sum(&eval, &[(w0, &h0), (w1, &xs[0])]).unwrap_err();
        assert!(e.to_string().contains("no part for level"), "{e}");
        Ok(())
    }
}
