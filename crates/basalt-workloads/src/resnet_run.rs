//! ResNet-20 ([`crate::resnet`]: all channels in one ciphertext, convolutions as BSGS
//! products, the composite minimax ReLU, bootstraps where the levels run out) run for real on
//! digits images against its cleartext twin with the same ReLU approximation.
//!
//! The weights are **seeded pseudo-random, not trained** (batch norms folded on the first
//! image, as [`crate::resnet::Network::build`] does): training ResNet-20 needs a deep-learning
//! framework this repository does not require. The run therefore measures what encryption
//! changes — the agreement of the encrypted arg-max with the twin's and the precision of the
//! scores — and reports the accuracy of the untrained network only for completeness.
//!
//! Images: the digits' 8×8 grey levels as 32×32×3 (each pixel a 4×4 block, the grey plane in
//! all three channels); on the toy ring, 4×4×3 (2×2 means).

use std::time::Instant;

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper};
use basalt_circuits::polynomial::minimax;
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{Complex64, Encoder, Evaluator, KeyGenerator, SecretDistribution};
use indicatif::ProgressBar;
use serde_json::{Value, json};

use crate::CircuitError;
use crate::classify::{Tally, key_bytes};
use crate::digits::{self, Digit};
use crate::registry::{RunOptions, WorkloadError, security};
use crate::resnet::{Arch, Bootstrap, ConvStrategy, Model, Network, SIGN_DEGREES, SIGN_EPS};

/// ResNet-20's structure at toy size: 4×4 images, 2/4/8 channels, one block per stage.
const TINY: Arch =
    Arch { side: 4, in_channels: 3, base_channels: 2, blocks: 1, classes: 4, slots: 64 };

/// Images of a full run (agreement over at least 100) and of a `--quick` one.
pub const FULL_IMAGES: usize = 100;
const QUICK_IMAGES: usize = 3;

/// The image as `3 × side²` values in `[0, 1]`.
fn image(d: &Digit, side: usize) -> Vec<f64> {
    let plane = if side == 4 {
        digits::to4(d)
    } else {
        let k = side / 8;
        (0..side * side)
            .map(|t| f64::from(d.pixels[(t / side) / k * 8 + (t % side) / k]) / 16.0)
            .collect()
    };
    plane.repeat(3)
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
        (params, cfg, name, TINY, minimax::sign(&[7, 7], 0.05)?)
    } else {
        let name = opts.preset.clone().unwrap_or_else(|| "CRATERLAKE_80_BOOT".into());
        let params = crate::registry::preset(&name, opts.allow_insecure)?;
        let cfg = basalt_circuits::bootstrap::config::for_preset(&name, Some(15), params.log_n())
            .ok_or_else(|| WorkloadError::Preset {
            preset: name.clone(),
            reason: "has no bootstrapping circuit".into(),
        })?;
        (
            params,
            cfg,
            name,
            Arch { slots: 1 << 15, ..Arch::RESNET20 },
            minimax::sign(&SIGN_DEGREES, SIGN_EPS)?,
        )
    };
    let data = digits::load()?;
    let n = if opts.quick { QUICK_IMAGES } else { FULL_IMAGES }.min(data.test.len());
    let t_setup = Instant::now();
    let net = Network::build(arch, 11, &image(&data.test[0], arch.side))?;
    let bt = Bootstrapper::new(&params, cfg)
        .map_err(|e| WorkloadError::Preset { preset: name.clone(), reason: e.to_string() })?;
    let scale = params.default_scale();
    let scales = (scale, scale.min(bt.max_input_scale()));
    let out_level = bt.budget().output_level;
    let model = Model::prepare(
        &params,
        &net,
        &sign,
        out_level,
        out_level,
        scales,
        ConvStrategy::LATTIGO,
        false,
    )
    .map_err(|e| WorkloadError::Preset { preset: name.clone(), reason: e.to_string() })?;
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let (mut keys, encaps) = bt.generate_keys(&sk, false)?;
    for r in model.rotations() {
        keys = keys.with_galois(kg.gen_rotation_key(&sk, r, false));
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
        let img = image(d, arch.side);
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
        tally.add(usize::from(d.label) % arch.classes, &want, &have);
        bar.inc(1);
    }
    let infer_s = t0.elapsed().as_secs_f64();
    Ok(json!({
        "preset": name,
        "log_n": params.log_n(),
        "security": security(&params),
        "data": format!(
            "sklearn digits test split as {s}x{s}x3; seeded untrained weights ({} classes)",
            arch.classes, s = arch.side
        ),
        "weights": "seeded pseudo-random (untrained): no accuracy, only agreement",
        "images": tally.n,
        // Untrained weights: no accuracy to report, only the agreement of the predictions.
        "accuracy": {
            "plaintext": null,
            "encrypted": null,
            "agreement": tally.rate(tally.agree),
        },
        "precision_bits": tally.min_bits,
        "bootstraps": model.bootstraps() * tally.n,
        "bootstraps_per_image": model.bootstraps(),
        "key_bytes": key_bytes,
        "setup_s": setup_s,
        "per_image_s": infer_s / tally.n.max(1) as f64,
    }))
}
