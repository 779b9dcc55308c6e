//! Orion's LeNet ([`crate::lenet`], Osiris Table III(a) Set II) run for real on the digits:
//! trained weights ([`crate::lenet::trained`]), every test image encrypted, classified by the
//! server and decrypted by the client, against the cleartext twin with the same squares.
//!
//! Full size: [`Shape::ORION`] on 28×28 images at `OSIRIS_SET_II` (N = 2^14, seven levels),
//! the whole test split. `--quick`: [`Shape::TOY`] on the raw 8×8 images on a seven-level
//! N = 2^11 test ring, a few images.

use std::time::Instant;

use basalt_circuits::testing::toy_params;
use indicatif::ProgressBar;
use serde_json::{Value, json};

use crate::CircuitError;
use crate::classify::{Classifier, RULE, Tally};
use crate::digits;
use crate::lenet::{self, Shape};
use crate::registry::{RunOptions, WorkloadError, security};

/// The preset of a full run (Osiris' LeNet set).
pub const PRESET: &str = "OSIRIS_SET_II";

/// Images of a `--quick` run.
const QUICK_IMAGES: usize = 8;

/// A circuit error about levels names the preset (the user chose it).
pub(crate) fn at_preset(preset: &str, e: CircuitError) -> WorkloadError {
    match e {
        CircuitError::NotEnoughLevels { .. } => {
            WorkloadError::Preset { preset: preset.to_string(), reason: e.to_string() }
        }
        other => WorkloadError::Circuit(other),
    }
}

/// Run: the toy LeNet with `--quick`, Orion's otherwise.
///
/// # Errors
/// An unknown preset or one with fewer than seven levels, a ring whose slots cannot hold the
/// multiplexed layers, scheme errors.
pub fn run(opts: &RunOptions, bar: &ProgressBar) -> Result<Value, WorkloadError> {
    let shape = if opts.quick { Shape::TOY } else { Shape::ORION };
    let (params, name) = crate::registry::params(opts, PRESET, || toy_params(11, 7, 40, 2))?;
    let net = lenet::trained(shape)?;
    let t_setup = Instant::now();
    let clf = Classifier::new(&params, &net, RULE).map_err(|e| at_preset(&name, e))?;
    let setup_s = t_setup.elapsed().as_secs_f64();
    let data = digits::load()?;
    let n = if opts.quick { QUICK_IMAGES } else { data.test.len() };
    bar.set_length(n as u64);
    let mut tally = Tally::default();
    let t0 = Instant::now();
    for d in data.test.iter().take(n) {
        let inputs = vec![lenet::image(shape, d)];
        let plain = net.evaluate_plain(&inputs);
        let enc = clf.scores(&inputs, net.outputs())?;
        tally.add(usize::from(d.label), &plain, &enc);
        bar.inc(1);
    }
    let infer_s = t0.elapsed().as_secs_f64();
    let data = if shape == Shape::ORION {
        "sklearn digits test split, 8x8 resized to 28x28 (3x3 blocks, 2-pixel padding)"
    } else {
        "sklearn digits test split at 8x8; toy LeNet (8/16 channels, 3x3 kernels)"
    };
    Ok(json!({
        "preset": name,
        "log_n": params.log_n(),
        "security": security(&params),
        "data": data,
        "network": net.name,
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
    }))
}
