//! Validation of the noise model by counting failures: small, deliberately unreliable sets
//! (failure probabilities between about 2^-6 and 2^-16, one per dominant noise source) on which
//! the measured failure rate of a steady-state LUT evaluation is compared with
//! [`crate::noise::estimate`] inside a Wilson confidence interval.
//!
//! # Why these sets
//! A model that predicts 2^-130 cannot be checked by counting; the same formulas on sets where
//! one noise source is pushed up until failures are countable can. Each set isolates one term
//! of the model: plain modulus switching, modulus switching with the drift-technique reduction
//! ([`crate::ms_noise_reduction`]), key switching, and the blind rotation. All are insecure toys
//! (`security_bits = 0`) and are only built here.
//!
//! # Measurement
//! One trial is `encrypt(m) → PBS(identity) → c`, then `PBS(f)` on `c`: the second bootstrap
//! sees a PBS output (key switch, reduction and modulus switch included), which is the model's
//! steady state. A failure is `decrypt(PBS(f)(c)) ≠ f(decrypt(c))`, so a failure of the first
//! bootstrap is not counted twice.

use serde::Serialize;

use crate::batch::BatchConfig;
use crate::error::Result;
use crate::keys::ClientKey;
use crate::lut::Lut;
use crate::noise::estimate;
use crate::params::{AtomicPattern, MsNoiseReductionParams, NoiseDistribution, TfheParams, toy};
use crate::random::Csprng;

/// A validation set and the trial count that makes its failures countable.
#[derive(Clone, Debug)]
pub struct ValidationSet {
    pub params: TfheParams,
    /// Which term of the model dominates.
    pub dominant: &'static str,
    /// Default number of trials (≈ 40+ expected failures).
    pub trials: u64,
}

fn set(
    name: &str,
    n: usize,
    big_n: usize,
    p: u64,
    lwe: NoiseDistribution,
    glwe: NoiseDistribution,
    msnr: Option<MsNoiseReductionParams>,
) -> TfheParams {
    let mut lit = toy::literal(64, n, big_n, (16, 2), (4, 5), p, 1, AtomicPattern::KsPbs);
    lit.name = name.into();
    lit.description = "noise-model validation set: INSECURE, fails often on purpose".into();
    lit.lwe_noise = lwe;
    lit.glwe_noise = glwe;
    lit.ms_noise_reduction = msnr;
    TfheParams::from_literal(lit, true).expect("validation literal is valid")
}

/// The validation sets, highest failure probability first.
pub fn validation_sets() -> Vec<ValidationSet> {
    let tu = |b| NoiseDistribution::TUniform { bound_log2: b };
    let g = |s| NoiseDistribution::Gaussian { std_dev: s };
    // Drift technique on the MS-dominated shape: bound = the box half-width 1/(4p), few zeros
    // and a small r so that its residual failures are countable.
    let drift = MsNoiseReductionParams {
        modulus_switch_zeros_count: 8,
        ms_bound: 1.0 / 64.0,
        ms_r_sigma_factor: 3.0,
        ms_input_variance: 0.0,
    };
    // N = 256 with n = 352: r·σ at the typical Σe²/4 is about the bound, so the selection
    // really selects (about a third of the ciphertexts need a zero).
    vec![
        ValidationSet {
            params: set("VAL_KS", 256, 512, 16, g(2.0e-5), tu(17), None),
            dominant: "keyswitch",
            trials: 1 << 13,
        },
        ValidationSet {
            params: set("VAL_BR", 256, 512, 16, tu(40), g(3.5e-10), None),
            dominant: "blind_rotate",
            trials: 1 << 13,
        },
        ValidationSet {
            params: set("VAL_MS", 512, 512, 16, tu(40), tu(17), None),
            dominant: "modswitch",
            trials: 1 << 17,
        },
        ValidationSet {
            params: set("VAL_MS_DRIFT", 352, 256, 16, tu(40), tu(17), Some(drift)),
            dominant: "modswitch_reduced",
            trials: 1 << 14,
        },
        ValidationSet {
            params: set(
                "VAL_MS_DRIFT_N224",
                224,
                256,
                16,
                tu(40),
                tu(17),
                Some(MsNoiseReductionParams {
                    modulus_switch_zeros_count: 16,
                    ms_r_sigma_factor: 3.6,
                    ..drift
                }),
            ),
            dominant: "modswitch_reduced",
            trials: 1 << 18,
        },
    ]
}

/// One row of the table (a JSON line).
#[derive(Clone, Debug, Serialize)]
pub struct ValidationRow {
    pub set: String,
    pub dominant: String,
    pub lwe_dimension: usize,
    pub polynomial_size: usize,
    pub plaintext_modulus: u64,
    pub ms_noise_reduction: bool,
    pub trials: u64,
    pub failures: u64,
    pub measured: f64,
    /// Wilson score interval of the measured rate at `confidence`.
    pub ci_low: f64,
    pub ci_high: f64,
    pub confidence: f64,
    pub model: f64,
    pub log2_model: f64,
    pub log2_measured: f64,
    /// The model's probability lies inside the interval.
    pub model_within_ci: bool,
}

/// Wilson score interval for `k` successes in `n` trials with normal quantile `z`.
pub fn wilson_interval(k: u64, n: u64, z: f64) -> (f64, f64) {
    let (k, n) = (k as f64, n as f64);
    let ph = k / n;
    let d = 1.0 + z * z / n;
    let c = (ph + z * z / (2.0 * n)) / d;
    let h = z * (ph * (1.0 - ph) / n + z * z / (4.0 * n * n)).sqrt() / d;
    ((c - h).max(0.0), (c + h).min(1.0))
}

/// Count steady-state failures over `trials` (batched on the current rayon pool).
pub fn count_failures(params: &TfheParams, trials: u64, seed: u64) -> Result<u64> {
    let mut rng = Csprng::from_seed(seed);
    let ck = ClientKey::<u64>::with_rng(params, &mut rng)?;
    let sk = ck.server_key_with(&mut rng);
    let p = params.plaintext_modulus();
    let id = Lut::from_fn(params, |x| x);
    let f = Lut::from_fn(params, |x| (x * 5 + 3) % p);
    let cfg = BatchConfig::default();
    let (mut failures, mut done) = (0, 0);
    while done < trials {
        let count = (trials - done).min(512) as usize;
        let cts = (0..count)
            .map(|_| ck.encrypt_with(rng.next_u64() % p, &mut rng))
            .collect::<Result<Vec<_>>>()?;
        let mid = sk.apply_lut_batch(&cts, &id, &cfg)?;
        let out = sk.apply_lut_batch(&mid, &f, &cfg)?;
        for (c, o) in mid.iter().zip(&out) {
            let m = ck.decrypt(c)?;
            failures += (ck.decrypt(o)? != (m * 5 + 3) % p) as u64;
        }
        done += count as u64;
    }
    Ok(failures)
}

/// Measure one set and compare with the model (`z` = normal quantile of the interval).
pub fn validate(set: &ValidationSet, trials: u64, seed: u64, z: f64) -> Result<ValidationRow> {
    let params = &set.params;
    let model = estimate(params).log2_p_fail.exp2();
    let failures = count_failures(params, trials, seed)?;
    let (lo, hi) = wilson_interval(failures, trials, z);
    let measured = failures as f64 / trials as f64;
    Ok(ValidationRow {
        set: params.name.clone(),
        dominant: set.dominant.into(),
        lwe_dimension: params.lwe_dimension,
        polynomial_size: params.polynomial_size,
        plaintext_modulus: params.plaintext_modulus(),
        ms_noise_reduction: params.ms_noise_reduction.is_some(),
        trials,
        failures,
        measured,
        ci_low: lo,
        ci_high: hi,
        confidence: confidence_of(z),
        model,
        log2_model: model.log2(),
        log2_measured: measured.log2(),
        model_within_ci: (lo..=hi).contains(&model),
    })
}

/// Two-sided confidence of the normal quantile `z`.
pub fn confidence_of(z: f64) -> f64 {
    1.0 - 2.0 * 0.5 * crate::noise::ln_erfc(z / std::f64::consts::SQRT_2).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_known_values() {
        // 10 of 100 at 95 %: [0.0552, 0.1744].
        let (lo, hi) = wilson_interval(10, 100, 1.959_964);
        assert!((lo - 0.0552).abs() < 1e-3 && (hi - 0.1744).abs() < 1e-3, "{lo} {hi}");
        assert!((confidence_of(2.575_829) - 0.99).abs() < 1e-4);
    }

    #[test]
    fn sets_span_countable_failure_rates() {
        let mut bad = Vec::new();
        for s in validation_sets() {
            let r = estimate(&s.params);
            let expected = r.log2_p_fail.exp2() * s.trials as f64;
            eprintln!(
                "{} {}: log2 p_fail {:.2} (plain MS {:.2}), {expected:.0} expected failures",
                s.params.name, s.dominant, r.log2_p_fail, r.log2_p_fail_plain_ms
            );
            if !(-17.0..-6.0).contains(&r.log2_p_fail) || expected < 30.0 {
                bad.push(s.params.name.clone());
            }
        }
        assert!(bad.is_empty(), "{bad:?}");
    }
}
