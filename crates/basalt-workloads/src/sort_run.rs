//! Osiris' sorting benchmark run for real ([`crate::sort::BitonicSort`]): `2^k` distinct values
//! in (0, 1) on a shuffled grid of step `2^−k`, encrypted, sorted with bootstraps, decrypted,
//! and scored against an exact sort: a position is right when the output is within half a grid
//! step of the exact sort's value there.

use std::time::Instant;

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper};
use basalt_circuits::compare;
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{Ciphertext, Complex64, Encoder, Evaluator, KeyGenerator};
use indicatif::ProgressBar;
use serde_json::{Value, json};

use crate::classify::key_bytes;
use crate::registry::{RunOptions, WorkloadError};
use crate::sort::BitonicSort;

/// log2 of the values of a full run: 64 values, minutes at N = 2^16 (Osiris sorts 2^14,
/// hundreds of bootstraps: hours on a CPU).
pub const FULL_LOG_LEN: u32 = 6;

/// `2^log_len` distinct values on a shuffled grid in (0, 1).
pub fn values(log_len: u32) -> Vec<f64> {
    let n = 1usize << log_len;
    // 2^log_len and an odd stride are coprime: a permutation of the grid.
    let stride = (n / 2 + 5) | 1;
    (0..n).map(|i| ((i * stride) % n) as f64 / n as f64 + 0.5 / n as f64).collect()
}

/// Positions where `have` is within half a grid step of the exact sort of `x`.
fn right_positions(x: &[f64], have: &[f64]) -> usize {
    let mut exact = x.to_vec();
    exact.sort_by(f64::total_cmp);
    let half = 0.5 / x.len() as f64;
    exact.iter().zip(have).filter(|(e, h)| (*e - *h).abs() < half).count()
}

fn bits(want: &[f64], have: &[f64]) -> f64 {
    let err = want.iter().zip(have).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    -err.max(f64::MIN_POSITIVE).log2()
}

/// Run the sort: the toy ring with a small composite for `--quick`, else the preset's
/// bootstrapping chain with Osiris' comparison (twelve degree-7 polynomials).
///
/// # Errors
/// Unknown presets, a chain too short for a stage, missing keys.
pub fn run(opts: &RunOptions, bar: &ProgressBar) -> Result<Value, WorkloadError> {
    let toy = opts.quick && opts.preset.is_none();
    let log_len = if toy { 5 } else { FULL_LOG_LEN };
    let (params, cfg, name): (_, BootstrapConfig, String) = if toy {
        let params = basalt_circuits::testing::toy_bootstrap_params(
            10,
            10,
            1,
            2,
            basalt_ckks::SecretDistribution::DenseTernary,
        );
        let cfg = BootstrapConfig {
            cts_levels: 2,
            stc_levels: 1,
            ..BootstrapConfig::lattigo_default(log_len)
        };
        let name = params.literal().name.clone();
        (params, cfg, name)
    } else {
        let name = opts.preset.clone().unwrap_or_else(|| "LATTIGO_N16QP1546H192H32".into());
        let params = crate::registry::preset(&name, opts.allow_insecure)?;
        let cfg =
            basalt_circuits::bootstrap::config::for_preset(&name, Some(log_len), params.log_n())
                .ok_or_else(|| WorkloadError::Preset {
                    preset: name.clone(),
                    reason: "has no bootstrapping circuit".into(),
                })?;
        (params, cfg, name)
    };
    let sort = BitonicSort {
        log_len,
        comparison: if toy { compare::composite(2, 1) } else { compare::osiris_sort() },
    };
    let t_setup = Instant::now();
    let bt = Bootstrapper::new(&params, cfg)
        .map_err(|e| WorkloadError::Preset { preset: name.clone(), reason: e.to_string() })?;
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let (mut keys, encaps) = bt.generate_keys(&sk, false)?;
    for r in sort.rotations() {
        keys = keys.with_galois(kg.gen_rotation_key(&sk, r, false));
    }
    let key_bytes = key_bytes(&keys);
    let eval = Evaluator::new(&params, keys).map_err(basalt_circuits::CircuitError::from)?;
    let setup_s = t_setup.elapsed().as_secs_f64();

    let x = values(log_len);
    let enc = Encoder::new(&params);
    let top = bt.budget().output_level;
    let v: Vec<Complex64> = x.iter().map(|&r| Complex64::new(r, 0.0)).collect();
    let encrypt = || -> basalt_circuits::Result<Ciphertext> {
        let pt = enc.encode(&v, x.len(), top, params.default_scale())?;
        Ok(encrypt_sk(&params, &pt, &sk)?)
    };
    let ct = encrypt()?;
    bar.set_length(sort.stages().len() as u64);
    let mut boots = 0;
    let mut refresh = |c: &Ciphertext| {
        boots += 1;
        bar.set_message(format!("sort ({boots} bootstraps)"));
        bt.bootstrap(&eval, encaps.as_ref(), c)
    };
    let t0 = Instant::now();
    let out = sort.evaluate(&eval, &ct, &mut refresh)?;
    let sort_s = t0.elapsed().as_secs_f64();
    bar.set_position(sort.stages().len() as u64);
    let dec = decrypt(&params, &out, &sk).map_err(basalt_circuits::CircuitError::from)?;
    let have: Vec<f64> = enc
        .decode(&dec)
        .map_err(basalt_circuits::CircuitError::from)?
        .iter()
        .map(|z| z.re)
        .collect();
    let twin = sort.sort_plain(&x);
    let mut exact = x.clone();
    exact.sort_by(f64::total_cmp);
    let n = x.len() as f64;
    Ok(json!({
        "preset": name,
        "log_n": params.log_n(),
        "security": crate::registry::security(&params),
        "data": format!("2^{log_len} distinct values on a shuffled grid of step 2^-{log_len} in (0, 1)"),
        "values": x.len(),
        "accuracy": {
            "plaintext": right_positions(&x, &twin) as f64 / n,
            "encrypted": right_positions(&x, &have) as f64 / n,
            "agreement": right_positions(&twin, &have) as f64 / n,
        },
        "precision_bits": bits(&twin, &have),
        "bits_vs_exact_sort": bits(&exact, &have),
        "bootstraps": boots,
        "key_bytes": key_bytes,
        "setup_s": setup_s,
        "sort_s": sort_s,
    }))
}
