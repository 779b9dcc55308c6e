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
    Arch, Bootstrap, ConvStrategy, Model, SIGN_DEGREES, SIGN_EPS, TOY, image, network_levels,
    score_split, trained,
};

/// Images of a full run (agreement over at least 100) and of a `--quick` one.
pub const FULL_IMAGES: usize = 100;
const QUICK_IMAGES: usize = 3;

/// What a run holds besides its working ciphertexts, counted from shapes before anything is
/// generated or encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    /// The bootstrap's keys ([`Bootstrapper::key_bytes`], full).
    pub bootstrap_keys: u64,
    /// The network's rotation keys as [`run`] makes them: parts at [`network_levels`], every
    /// level for a rotation the bootstrap also makes (counted in both: an upper bound).
    pub network_keys: u64,
    /// The transforms' diagonals, encoded at every limb of their levels
    /// ([`Model::stored_plaintext_bytes`]).
    pub diagonals: u64,
}

impl Memory {
    /// The memory of `model` (shapes suffice) with the bootstrap `bt` on `params`.
    pub fn of(params: &Parameters, bt: &Bootstrapper, model: &Model) -> Memory {
        let out = bt.budget().output_level;
        let boot = bt.rotations();
        let network_keys = model
            .rotations()
            .iter()
            .map(|r| {
                if boot.contains(r) {
                    galois_key_bytes(params, 0..=params.max_level())
                } else {
                    galois_key_bytes(params, network_levels(params, out))
                }
            })
            .sum();
        Memory {
            bootstrap_keys: bt.key_bytes(false),
            network_keys,
            diagonals: model.stored_plaintext_bytes(),
        }
    }

    pub fn total(&self) -> u64 {
        self.bootstrap_keys + self.network_keys + self.diagonals
    }
}

/// Bytes of one full Galois key with parts for `levels` (as `KeyGenerator::for_levels` makes
/// it): per gadget, digits × 2 halves × limbs of `Q_top ∪ P` × N words.
fn galois_key_bytes(params: &Parameters, levels: impl Iterator<Item = usize>) -> u64 {
    let mut wanted = vec![false; params.gadgets().len()];
    levels.for_each(|l| wanted[params.gadget_index(l)] = true);
    let words: u64 = params
        .gadgets()
        .iter()
        .zip(wanted)
        .filter(|(_, w)| *w)
        .map(|(g, _)| g.digits() as u64 * 2 * (g.top_level + 1 + g.p_limbs) as u64)
        .sum();
    words * params.n() as u64 * 8
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
    let n = if opts.quick { QUICK_IMAGES } else { FULL_IMAGES }.min(data.test.len());
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
        Model::prepare(&params, &net, &sign, out_level, out_level, scales, lattigo, symbolic)
    };
    let memory = Memory::of(&params, &shapes, &prepare(true).map_err(at_preset)?);
    let what = format!("ResNet-20's keys and encoded diagonals at {name}");
    basalt_ckks::progress::check_memory(&what, memory.total(), false)
        .map_err(|e| at_preset(e.into()))?;
    let split = score_split(&net, &sign, &data.test)?;
    let t_setup = Instant::now();
    let bt = Bootstrapper::new(&params, cfg).map_err(at_preset)?;
    let model = prepare(false).map_err(at_preset)?;
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let (mut keys, encaps) = bt.generate_keys(&sk, false)?;
    // The network runs at the levels a bootstrap leaves: its own rotation keys need parts for
    // those levels only (at N = 2^16 a fraction of a key for every level). A rotation the
    // bootstrap also makes gets every level, so that neither loses a part.
    let boot_rotations = bt.rotations();
    let at_network_levels = kg.clone().for_levels(network_levels(&params, out_level));
    for r in model.rotations() {
        let key = if boot_rotations.contains(&r) {
            kg.gen_rotation_key(&sk, r, false)
        } else {
            at_network_levels.gen_rotation_key(&sk, r, false)
        };
        keys = keys.with_galois(key);
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
        "memory_estimate_bytes": {
            "bootstrap_keys": memory.bootstrap_keys,
            "network_keys": memory.network_keys,
            "encoded_diagonals": memory.diagonals,
        },
        "setup_s": setup_s,
        "per_image_s": infer_s / tally.n.max(1) as f64,
    }))
}
