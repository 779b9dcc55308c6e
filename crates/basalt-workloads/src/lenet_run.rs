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

use crate::classify::{Classifier, RULE};
use crate::lenet::{self, Shape};
use crate::registry::{RunOptions, WorkloadError, at_preset, classifier_record, tally_test_split};

/// The preset of a full run (Osiris' LeNet set).
pub const PRESET: &str = "OSIRIS_SET_II";

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
    let clf = Classifier::new(&params, &net, RULE).map_err(at_preset(&name))?;
    let setup_s = t_setup.elapsed().as_secs_f64();
    let (tally, infer_s) =
        tally_test_split(opts, bar, &net, &clf, |d| vec![lenet::image(shape, d)])?;
    let data = if shape == Shape::ORION {
        "sklearn digits test split, 8x8 resized to 28x28 (3x3 blocks, 2-pixel padding)"
    } else {
        "sklearn digits test split at 8x8; toy LeNet (8/16 channels, 3x3 kernels)"
    };
    let mut record = classifier_record((&params, &name), data, &clf, &tally, (setup_s, infer_s));
    record["network"] = json!(net.name);
    Ok(record)
}
