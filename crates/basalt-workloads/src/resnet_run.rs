//! ResNet-20 ([`crate::resnet`]: all channels in one ciphertext, convolutions as BSGS
//! products, the composite minimax ReLU, bootstraps where the levels run out) run for real on
//! digits images against its cleartext twin with the same ReLU approximation.
//!
//! The weights are trained on the digits ([`crate::resnet::trained`], numpy, exact ReLU, every
//! ReLU input scaled into the sign's domain). Besides the encrypted images, the record scores
//! the whole test split in the clear ([`crate::resnet::score_split`]): the exact network
//! against the twin with the encrypted run's ReLU, which is what the approximation costs.
//!
//! Images: the digits' 8×8 grey levels as 32×32×3 (each pixel a 4×4 block, the grey plane in
//! all three channels); on the toy ring, 4×4×3 (2×2 means) through [`crate::resnet::TOY`].

use std::time::Instant;

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper};
use basalt_circuits::lintrans::LinearTransform;
use basalt_circuits::polynomial::minimax::{self, CompositeSign};
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{Complex64, Encoder, Evaluator, KeyGenerator, Parameters, SecretDistribution};
use indicatif::ProgressBar;
use serde_json::{Value, json};

use crate::CircuitError;
use crate::classify::{Tally, key_bytes};
use crate::digits;
use crate::registry::{RunOptions, WorkloadError, security};
use crate::resnet::{
    Arch, Bootstrap, ConvStrategy, Model, SIGN_DEGREES, SIGN_EPS, TOY, image, score_split, trained,
};

/// Images of a full run (agreement over at least 100) and of a `--quick` one.
pub const FULL_IMAGES: usize = 100;
const QUICK_IMAGES: usize = 3;

/// What a run holds, counted from shapes before anything is generated or encoded. The
/// transforms (the network's and the bootstrap's) encode each diagonal just before its product,
/// and every Galois key holds the parts of the levels its rotation runs at only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    /// The bootstrap's keys ([`Bootstrapper::key_bytes`], full).
    pub bootstrap_keys: u64,
    /// What the network's rotations add to them: for a rotation of its own, a key with the
    /// parts of the levels it runs at ([`Model::rotation_levels`]); for one the bootstrap also
    /// makes, the parts the bootstrap's key lacks.
    pub network_keys: u64,
    /// The network's plaintexts: one diagonal encoded at a time and the biases in the clear
    /// ([`Model::plaintext_bytes_at_use`]).
    pub diagonals: u64,
    /// The bootstrap's DFT diagonals in the clear and one of them encoded at its level.
    pub bootstrap_diagonals: u64,
    /// The client's secret key (one polynomial over `Q ∪ P`) and the ring's NTT tables.
    pub fixed: u64,
    /// Ciphertexts at the peak: those the network holds, bounded by eleven at the bootstrap's
    /// output level (in a residual block its input, the first convolution's and ReLU's outputs
    /// and the second convolution's, the shortcut and the sum stay bound until the block ends;
    /// in a ReLU its input's copy, the sign's running value and the bootstrap's input; the
    /// encrypted image and the copy the inference starts from), plus the largest of a
    /// bootstrap, a network transform and a sign stage ([`crate::memory`]).
    pub working: u64,
    /// Distinct rotations (Galois keys besides conjugation): the network's and the bootstrap's.
    pub rotation_keys: usize,
    /// The rotations the network and the bootstrap share.
    pub shared_rotations: usize,
}

impl Memory {
    /// The memory of `model` (shapes suffice) with the bootstrap `bt` on `params`.
    ///
    /// # Errors
    /// A sign stage deeper than the levels a bootstrap leaves (as the run would fail).
    pub fn of(
        params: &Parameters,
        bt: &Bootstrapper,
        model: &Model,
    ) -> Result<Memory, CircuitError> {
        use crate::memory::{bootstrap, ciphertext, galois_key, polynomial, transform};
        let boot = bt.rotation_levels();
        let mut network_keys = 0;
        let mut shared = 0;
        for (r, levels) in model.rotation_levels() {
            let own = boot.get(&r).cloned().unwrap_or_default();
            shared += usize::from(!own.is_empty());
            let both: Vec<usize> = own.iter().chain(&levels).copied().collect();
            network_keys += galois_key(params, &both) - galois_key(params, &own);
        }
        let rotation_keys = model.rotation_levels().len() + boot.len() - shared;
        let n = params.n() as u64;
        let transforms: Vec<&LinearTransform> =
            bt.coeff_to_slot().iter().chain(bt.slot_to_coeff()).collect();
        let clear: u64 = transforms
            .iter()
            .map(|lt| lt.source().indices().len() as u64 * lt.source().slots() as u64 * 16)
            .sum();
        let top = transforms.iter().map(|lt| lt.level()).max().unwrap_or(0) as u64;
        let out = bt.budget().output_level;
        let held = 11 * ciphertext(params, out);
        let network = model.transforms().map(|lt| transform(params, lt, 1)).max().unwrap_or(0);
        let mut sign = 0;
        for stage in model.sign_stages() {
            sign = sign.max(polynomial(params, out, stage)?);
        }
        let working = held + bootstrap(params, bt)?.max(network).max(sign);
        Ok(Memory {
            bootstrap_keys: bt.key_bytes(false),
            network_keys,
            diagonals: model.plaintext_bytes_at_use(params),
            bootstrap_diagonals: clear + (top + 1) * n * 8,
            fixed: crate::memory::secret_key(params) + crate::memory::ntt_tables(params),
            working,
            rotation_keys,
            shared_rotations: shared,
        })
    }

    pub fn total(&self) -> u64 {
        self.bootstrap_keys
            + self.network_keys
            + self.diagonals
            + self.bootstrap_diagonals
            + self.fixed
            + self.working
    }

    /// The record's `memory_estimate_bytes`.
    pub fn to_json(&self) -> Value {
        json!({
            "bootstrap_keys": self.bootstrap_keys,
            "network_keys": self.network_keys,
            "encoded_diagonals": self.diagonals,
            "bootstrap_diagonals": self.bootstrap_diagonals,
            "secret_key_and_tables": self.fixed,
            "working_ciphertexts": self.working,
            "total": self.total(),
        })
    }
}

/// The ReLU's composite sign of a run: \[48\]'s degrees 15, 15, 27 at full size
/// ([`SIGN_DEGREES`], [`SIGN_EPS`]); on the toy ring, whose bootstrap leaves five levels,
/// degrees 7 and 7 on `[0.05, 1]`.
///
/// # Errors
/// The Remez construction's.
pub fn relu_sign(quick: bool) -> Result<CompositeSign, CircuitError> {
    if quick { minimax::sign(&[7, 7], 0.05) } else { minimax::sign(&SIGN_DEGREES, SIGN_EPS) }
}

/// Run: the toy ring with `--quick`, else `CRATERLAKE_80_BOOT` (or `--preset`) at 2^15 slots.
///
/// # Errors
/// Unknown presets or ones without a bootstrapping circuit, a chain too short for a sign stage,
/// scheme errors.
pub fn run(opts: &RunOptions, bar: &ProgressBar) -> Result<Value, WorkloadError> {
    let toy = opts.quick && opts.preset.is_none();
    let (params, cfg, name, arch, sign) = if toy {
        let params = basalt_circuits::testing::toy_bootstrap_params(
            10,
            5,
            2,
            3,
            SecretDistribution::Hamming { h: 64 },
        );
        let cfg = BootstrapConfig {
            cts_levels: 3,
            stc_levels: 2,
            log_message_ratio: 24.0,
            ..BootstrapConfig::lattigo_default(6)
        };
        let name = params.literal().name.clone();
        (params, cfg, name, TOY, relu_sign(true)?)
    } else {
        let name = opts.preset.clone().unwrap_or_else(|| "CRATERLAKE_80_BOOT".into());
        let params = crate::registry::preset(&name, opts.allow_insecure)?;
        let cfg = basalt_circuits::bootstrap::config::for_preset(&name, Some(15), params.log_n())
            .ok_or_else(|| WorkloadError::Preset {
            preset: name.clone(),
            reason: "has no bootstrapping circuit".into(),
        })?;
        (params, cfg, name, Arch { slots: 1 << 15, ..Arch::RESNET20 }, relu_sign(false)?)
    };
    let data = digits::load()?;
    let n = opts.image_count(QUICK_IMAGES, FULL_IMAGES, data.test.len());
    let net = trained(arch)?;
    let at_preset =
        |e: CircuitError| WorkloadError::Preset { preset: name.clone(), reason: e.to_string() };
    // Shapes first (a shape-only bootstrap and model): a run that cannot hold its keys and
    // diagonals is refused before anything is computed or generated.
    let shapes = Bootstrapper::symbolic(&params, cfg).map_err(at_preset)?;
    let scale = params.default_scale();
    let scales = (scale, scale.min(shapes.max_input_scale()));
    let out_level = shapes.budget().output_level;
    let prepare = |symbolic| {
        let lattigo = ConvStrategy::LATTIGO;
        Model::prepare_sharing_keys(
            &params, &net, &sign, out_level, out_level, scales, lattigo, symbolic,
        )
    };
    let memory =
        Memory::of(&params, &shapes, &prepare(true).map_err(at_preset)?).map_err(at_preset)?;
    let what = format!("ResNet-20's keys, plaintexts and working ciphertexts at {name}");
    basalt_ckks::progress::check_memory(&what, memory.total(), opts.force)
        .map_err(|e| at_preset(e.into()))?;
    let split = score_split(&net, &sign, &data.test)?;
    let t_setup = Instant::now();
    // Both the bootstrap and the network hold their diagonals as sources (the DFT's in the
    // clear, the convolutions' as weights) and encode each just before its product.
    let bt = Bootstrapper::encoded_at_use(&params, cfg).map_err(at_preset)?;
    let model = prepare(false).map_err(at_preset)?;
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let (mut keys, encaps) = bt.generate_keys(&sk, false)?;
    // Each network rotation runs at the levels of its layers only: its key holds those parts
    // (and, for a rotation the bootstrap also makes, the bootstrap's: one key serves both).
    let boot = bt.rotation_levels();
    for (r, levels) in model.rotation_levels() {
        let both = boot.get(&r).into_iter().flatten().chain(&levels).copied();
        keys = keys.with_galois(kg.clone().for_levels(both).gen_rotation_key(&sk, r, false));
    }
    let key_bytes = key_bytes(&keys);
    let eval = Evaluator::new(&params, keys).map_err(CircuitError::from)?;
    let enc = Encoder::new(&params);
    let refresh = Bootstrap { bt: &bt, encaps: encaps.as_ref() };
    let setup_s = t_setup.elapsed().as_secs_f64();

    bar.set_length(n as u64);
    let mut tally = Tally::default();
    let t0 = Instant::now();
    for d in data.test.iter().take(n) {
        let img = image(&arch, d);
        let x: Vec<Complex64> = crate::resnet::encode_image(&arch, &img)?
            .iter()
            .map(|&v| Complex64::new(v, 0.0))
            .collect();
        let pt = enc
            .encode(&x, arch.slots, model.input_level(), scales.0)
            .map_err(CircuitError::from)?;
        let ct = encrypt_sk(&params, &pt, &sk).map_err(CircuitError::from)?;
        let out = model.evaluate(&eval, &refresh, &ct)?;
        let dec = decrypt(&params, &out, &sk).map_err(CircuitError::from)?;
        let have: Vec<f64> = enc
            .decode(&dec)
            .map_err(CircuitError::from)?
            .iter()
            .take(arch.classes)
            .map(|c| c.re)
            .collect();
        let want = net.evaluate_plain(&img, Some(&sign))?;
        tally.add(usize::from(d.label), &want, &have);
        bar.inc(1);
    }
    let infer_s = t0.elapsed().as_secs_f64();
    Ok(json!({
        "preset": name,
        "log_n": params.log_n(),
        "security": security(&params),
        "data": if arch == TOY {
            "sklearn digits test split, 8x8 as 4x4x3 (2x2 means, grey in all 3 channels); toy \
             ResNet (4/8/16 channels, 1 block per stage)"
        } else {
            "sklearn digits test split, 8x8 resized to 32x32x3 (4x4 blocks, grey in all 3 \
             channels)"
        },
        "weights": "trained on the digits (scripts/train_weights.py), exact ReLU; the \
                    encrypted run and its twin use the composite minimax ReLU",
        "relu_sign_degrees": sign.degrees(),
        "images": tally.n,
        "accuracy": {
            "plaintext": tally.rate(tally.plain_correct),
            "encrypted": tally.rate(tally.enc_correct),
            "agreement": tally.rate(tally.agree),
        },
        // The whole test split in the clear: exact ReLU against the encrypted run's.
        "test_split_plaintext": {
            "images": split.images,
            "exact_relu": split.exact,
            "approx_relu": split.approx,
            "agreement": split.agreement,
            "max_relu_input": split.max_relu_input,
        },
        "precision_bits": tally.min_bits,
        "bootstraps": model.bootstraps() * tally.n,
        "bootstraps_per_image": model.bootstraps(),
        "key_bytes": key_bytes,
        "encapsulation_key_bytes": encaps.as_ref().map_or(0, |e| e.size_bytes()),
        "rotation_keys": memory.rotation_keys,
        "rotation_keys_shared_with_bootstrap": memory.shared_rotations,
        "memory_estimate_bytes": memory.to_json(),
        "setup_s": setup_s,
        "per_image_s": infer_s / tally.n.max(1) as f64,
    }))
}
