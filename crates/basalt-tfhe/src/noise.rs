//! Noise model: variances of fresh encryption, key switching, modulus switching and the
//! blind-rotation output, and the resulting failure probability of one PBS.
//!
//! All variances are in torus units (`q = 1`). Binary keys: `E[s²] = 1/2`. Signed digits of base
//! `B` (uniform on `[−B/2, B/2)`): `E[d²] = B²/12 + 1/6`. Rounding a value to the nearest
//! multiple of `1/B^l` leaves a uniform error of variance `1/(12·B^{2l})`.
//!
//! # Algorithm
//! * external product: `(k+1)·l·N·E[d²]·σ²_bsk + (1 + kN/2)/(12·B^{2l}) + FFT term`;
//! * blind rotation: `n` external products (the accumulator noise adds up);
//! * key switching (`kN → n`): `kN·l_ks·E[d²_ks]·σ²_ksk + (kN/2)/(12·B_ks^{2 l_ks})`, plus on
//!   the 64-bit torus `kN·l_ks·E[d²_ks]·(1 + n/2)·2^{−64}/12` from the key stored in its top 32
//!   bits ([`crate::keyswitch`]);
//! * modulus switching to `2N`: `(1 + n/2)·(1/(2N))²/12`;
//! * FFT (f64, 53-bit mantissa): `(k+1)·l·N·E[d²]·(1/12)·2^{−106}·log2(N)` per external product,
//!   a heuristic of the same form as TFHE-rs's, relevant on the 64-bit torus only;
//! * failure: the phase entering the blind rotation leaves its box of half-width `1/(4p)`:
//!   `p_fail = erfc(1/(4p) / sqrt(2·V))`.
//!
//! # Source
//! CGGI JoC 2019 Thm. 4.3 / Lemma 4.4 (external product, blind rotation), Joye's SoK (2021)
//! §4 (key switching, modulus switching); Strix does not give a noise analysis.

use serde::Serialize;

use crate::params::{AtomicPattern, TfheParams};

/// Variances (torus units) and failure probabilities of one parameter set.
#[derive(Clone, Debug, Serialize)]
pub struct NoiseReport {
    pub set: String,
    pub fresh_var: f64,
    pub external_product_var: f64,
    pub blind_rotate_var: f64,
    pub keyswitch_var: f64,
    pub modswitch_var: f64,
    /// Variance of the phase at the blind-rotation input, in steady state (PBS output feeding
    /// the next PBS), including key and modulus switching.
    pub br_input_var: f64,
    /// Half-width of a message box, `1/(4p)` (a many-LUT test vector's own when it says so).
    pub threshold: f64,
    /// log2 of the failure probability of one LUT evaluation (with the set's modulus-switch
    /// noise reduction when it has one).
    pub log2_p_fail: f64,
    /// log2 of the failure probability with plain modulus switching (no reduction).
    pub log2_p_fail_plain_ms: f64,
    /// The modulus-switch noise reduction's model, when the set uses it.
    pub ms_reduction: Option<MsReductionModel>,
    /// log2 of the worst gate's failure probability (±1/8 encoding, XOR's 2(a+b) included).
    pub log2_p_fail_gate: f64,
}

fn digit_var(base_log: u32) -> f64 {
    let b = 2f64.powi(base_log as i32);
    b * b / 12.0 + 1.0 / 6.0
}

fn rounding_var(base_log: u32, level: usize) -> f64 {
    2f64.powi(-2 * (base_log as i32) * level as i32) / 12.0
}

/// Model of the drift technique ([`crate::ms_noise_reduction`]) on one set.
#[derive(Clone, Debug, Serialize)]
pub struct MsReductionModel {
    /// Probability that one candidate satisfies the bound.
    pub p_accept: f64,
    /// Expected number of measures computed per ciphertext.
    pub expected_checks: f64,
    /// log2 of the probability that no candidate satisfies the bound.
    pub log2_p_none: f64,
    /// log2 of the failure probability given that the chosen candidate satisfied the bound.
    pub log2_p_fail_accepted: f64,
    /// log2 of the failure probability given that none did (the smallest measure is kept).
    pub log2_p_fail_none: f64,
    /// log2 of the failure probability of one blind rotation with the reduction.
    pub log2_p_fail: f64,
    /// Variance of the switching error after the reduction (mean over accepted candidates of
    /// `E² + Σe²/4`), for comparison with the plain `modswitch_var`.
    pub reduced_modswitch_var: f64,
}

/// Noise analysis of `params` in steady state (a PBS output, 2-norm 1, feeding the next PBS).
pub fn estimate(params: &TfheParams) -> NoiseReport {
    estimate_with_norm2(params, 1.0)
}

/// Noise analysis when the blind-rotation input is a linear combination `Σ w_i c_i` of PBS
/// outputs with `sqrt(Σ w_i²) = norm2` (TFHE-rs's "2-norm"; a dense layer's weight row).
pub fn estimate_with_norm2(params: &TfheParams, norm2: f64) -> NoiseReport {
    estimate_with_half_width(params, norm2, 1.0 / (4.0 * params.plaintext_modulus() as f64))
}

/// Noise analysis of a blind rotation whose test vector reads the right value as long as the
/// input's phase error stays within `half_width` (torus units) on either side. An ordinary
/// lookup table gives every message a box of `N/p` coefficients, `half_width = 1/(4p)`
/// ([`estimate_with_norm2`]); a many-LUT test vector states its own ([`crate::many_lut`]), and
/// the same variances then give its failure probability.
pub fn estimate_with_half_width(params: &TfheParams, norm2: f64, half_width: f64) -> NoiseReport {
    let w = params.torus_bits;
    let (n, k, big_n) =
        (params.lwe_dimension as f64, params.glwe_dimension as f64, params.polynomial_size as f64);
    let l = params.pbs_level as f64;
    let var_bsk = params.glwe_noise.variance(w);
    let var_ksk = params.lwe_noise.variance(w);
    let dv = digit_var(params.pbs_base_log);
    let ep_key = (k + 1.0) * l * big_n * dv * var_bsk;
    let ep_round = (1.0 + k * big_n / 2.0) * rounding_var(params.pbs_base_log, params.pbs_level);
    let ep_fft = (k + 1.0) * l * big_n * dv / 12.0 * 2f64.powi(-106) * big_n.log2();
    let external_product_var = ep_key + ep_round + ep_fft;
    let blind_rotate_var = n * external_product_var;
    let kn = k * big_n;
    let ks_terms = kn * params.ks_level as f64 * digit_var(params.ks_base_log);
    // Every key word rounded to a multiple of 2^-32 (exact on the 32-bit torus).
    let ksk_storage_var = if w > 32 { 2f64.powi(-64) / 12.0 } else { 0.0 };
    let keyswitch_var = ks_terms * var_ksk
        + ks_terms * (1.0 + n / 2.0) * ksk_storage_var
        + kn / 2.0 * rounding_var(params.ks_base_log, params.ks_level);
    let modswitch_var = (1.0 + n / 2.0) / (2.0 * big_n).powi(2) / 12.0;
    let fresh_var = match params.atomic_pattern {
        AtomicPattern::KsPbs => params.glwe_noise.variance(w),
        AtomicPattern::PbsKs => params.lwe_noise.variance(w),
    };
    // Steady state: PBS output (+ KS, in either order) then modulus switching.
    let ct_var = norm2 * norm2 * blind_rotate_var.max(fresh_var) + keyswitch_var;
    let br_input_var = ct_var + modswitch_var;
    let threshold = half_width;
    let log2_p_fail_plain_ms = log2_erfc(threshold / (2.0 * br_input_var).sqrt());
    let ms_reduction = params.ms_noise_reduction.map(|m| {
        // The chosen zero adds one fresh small-key encryption's noise.
        let v_in = ct_var + params.lwe_noise.variance(w);
        drift_model(params.lwe_dimension, 2 * params.polynomial_size, threshold, v_in, &m)
    });
    let log2_p_fail = ms_reduction.as_ref().map_or(log2_p_fail_plain_ms, |r| r.log2_p_fail);
    // Gates: NAND/AND/OR add two ciphertexts (distance 1/8); XOR doubles the sum (distance 1/4).
    let g1 = log2_erfc(0.125 / (2.0 * (2.0 * ct_var + modswitch_var)).sqrt());
    let g2 = log2_erfc(0.25 / (2.0 * (8.0 * ct_var + modswitch_var)).sqrt());
    NoiseReport {
        set: params.name.clone(),
        fresh_var,
        external_product_var,
        blind_rotate_var,
        keyswitch_var,
        modswitch_var,
        br_input_var,
        threshold,
        log2_p_fail,
        log2_p_fail_plain_ms,
        ms_reduction,
        log2_p_fail_gate: g1.max(g2),
    }
}

/// `Q(x) = P(N(0,1) > x)`.
fn gauss_tail(x: f64) -> f64 {
    0.5 * ln_erfc(x / std::f64::consts::SQRT_2).exp()
}

/// `P(|N(0, σ²)| ≤ a)`.
fn gauss_within(a: f64, sigma: f64) -> f64 {
    (1.0 - 2.0 * gauss_tail(a / sigma)).max(0.0)
}

/// Failure model of the drift technique.
///
/// With `s = 1/(2N)`, the rounding errors are uniform on `[−s/2, s/2]`. For one candidate the
/// public mean `E = e_b − Σe_i/2` is close to `N(0, s²(1 + n/4)/12)` and `S = Σe_i²/4` to
/// `N(n·s²/48, n·s⁴/2880)` (`Var(e²) = s⁴/180`), independent of each other (`e` symmetric).
/// Its measure is `|E| + r·sqrt(S + V_key)` (`V_key = ms_input_variance`). Given `(E, S)` the
/// blind-rotation input phase is off by `N(E, S + V_in)` (key bits uniform from the server's
/// view, `V_in` = this model's input variance), so it leaves its box of half-width `t` with
/// probability `F = Q((t − E)/σ) + Q((t + E)/σ)`. Candidates are independent (each zero's mask
/// is uniform). The kept candidate is the first with measure `≤ B` — distributed as one
/// candidate conditioned on that region — or, when none of the `M + 1` is, the one with the
/// smallest measure: `P(min ∈ [τ, τ+dτ), all > B) = d(G(τ)^{M+1})` with `G(τ) = P(measure ≥ τ)`,
/// and `F` averaged over the candidates of that measure. Both parts are integrated on a grid in
/// `(S, E)`.
pub fn drift_model(
    n: usize,
    two_n: usize,
    threshold: f64,
    v_in: f64,
    m: &crate::params::MsNoiseReductionParams,
) -> MsReductionModel {
    let s = 1.0 / two_n as f64;
    let nf = n as f64;
    let sigma_e = (s * s * (1.0 + nf / 4.0) / 12.0).sqrt();
    let mu_s = nf * s * s / 48.0;
    let sd_s = (nf * s.powi(4) / 2880.0).sqrt();
    let (r, b) = (m.ms_r_sigma_factor, m.ms_bound);
    let dens_e = |e: f64| {
        (-0.5 * (e / sigma_e).powi(2)).exp() / (sigma_e * (2.0 * std::f64::consts::PI).sqrt())
    };
    let (ns, ne, nr, nb) = (241usize, 801usize, 1601usize, 600usize);
    // Rejected candidates, binned by measure from B to B + 10σ_E + r·(sqrt(S_max + V) − ...).
    let s_max = mu_s + 7.0 * sd_s;
    let t_max = 8.0 * sigma_e + r * (s_max + m.ms_input_variance).sqrt();
    let dt = (t_max - b).max(1e-300) / nb as f64;
    let (mut mass, mut fmass) = (vec![0.0f64; nb + 1], vec![0.0f64; nb + 1]);
    let (mut p_acc, mut fail, mut var_acc) = (0.0f64, 0.0f64, 0.0f64);
    let mut wsum = 0.0;
    for i in 0..ns {
        let z = -7.0 + 14.0 * i as f64 / (ns - 1) as f64;
        let w_s = (-0.5 * z * z).exp();
        wsum += w_s;
        let sv = (mu_s + z * sd_s).max(0.0);
        let sigma = (sv + v_in).sqrt();
        let fail_at =
            |e: f64| gauss_tail((threshold - e) / sigma) + gauss_tail((threshold + e) / sigma);
        let slack = b - r * (sv + m.ms_input_variance).sqrt();
        if slack > 0.0 {
            p_acc += w_s * gauss_within(slack, sigma_e);
            let h = 2.0 * slack / (ne - 1) as f64;
            let (mut f_sum, mut v_sum) = (0.0, 0.0);
            for j in 0..ne {
                let e = -slack + h * j as f64;
                let tw = if j == 0 || j == ne - 1 { 0.5 } else { 1.0 };
                f_sum += tw * h * dens_e(e) * fail_at(e);
                v_sum += tw * h * dens_e(e) * (e * e + sv);
            }
            fail += w_s * f_sum;
            var_acc += w_s * v_sum;
        }
        // Rejected part: |E| > max(slack, 0), both signs (F is even in E).
        let lo = slack.max(0.0);
        let hi = 8.0 * sigma_e;
        if hi > lo {
            let h = (hi - lo) / (nr - 1) as f64;
            for j in 0..nr {
                let e = lo + h * j as f64;
                let tw = if j == 0 || j == nr - 1 { 0.5 } else { 1.0 };
                let w = 2.0 * w_s * tw * h * dens_e(e);
                let meas = e + r * (sv + m.ms_input_variance).sqrt();
                let k = (((meas - b) / dt).max(0.0) as usize).min(nb);
                mass[k] += w;
                fmass[k] += w * fail_at(e);
            }
        }
    }
    let (p_acc, fail, var_acc) = (p_acc / wsum, fail / wsum, var_acc / wsum);
    let tries = (m.modulus_switch_zeros_count + 1) as i32;
    let log2_p_none =
        if p_acc < 1.0 { tries as f64 * (1.0 - p_acc).log2() } else { f64::NEG_INFINITY };
    let p_none = log2_p_none.exp2();
    // Scale the binned rejected mass to 1 − p_acc (grid truncation), then the minimum's law.
    let total: f64 = mass.iter().sum();
    let scale = if total > 0.0 { (1.0 - p_acc) / total } else { 0.0 };
    let mut fail_none = 0.0;
    let mut g_above = 0.0f64; // P(measure ≥ upper edge of bin k)
    for k in (0..=nb).rev() {
        let g_here = g_above + mass[k] * scale;
        if mass[k] > 0.0 {
            let p_min_here = g_here.powi(tries) - g_above.powi(tries);
            fail_none += p_min_here * fmass[k] / mass[k];
        }
        g_above = g_here;
    }
    let f_acc = if p_acc > 0.0 { fail / p_acc } else { 0.0 };
    let p_fail = f_acc * (1.0 - p_none) + fail_none;
    MsReductionModel {
        p_accept: p_acc,
        expected_checks: if p_acc > 0.0 { (1.0 - p_none) / p_acc } else { tries as f64 },
        log2_p_none,
        log2_p_fail_accepted: f_acc.log2(),
        log2_p_fail_none: if p_none > 0.0 {
            (fail_none / p_none).log2()
        } else {
            f64::NEG_INFINITY
        },
        log2_p_fail: p_fail.log2(),
        reduced_modswitch_var: if p_acc > 0.0 { var_acc / p_acc } else { f64::NAN },
    }
}

/// `ln erfc(x)` for `x ≥ 0`, valid far into the tail (no underflow): Numerical Recipes'
/// Chebyshev fit `erfc(x) = t·exp(−x² + P(t))`, `t = 1/(1 + x/2)`, relative error < 1.2e-7.
pub fn ln_erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let ln = t.ln() - z * z + poly;
    if x >= 0.0 { ln } else { (2.0 - ln.exp()).ln() }
}

/// `log2 erfc(x)`.
pub fn log2_erfc(x: f64) -> f64 {
    ln_erfc(x) / std::f64::consts::LN_2
}

/// Count wrong decryptions over `trials` encrypt → random LUT → decrypt round trips (batched on
/// the current pool).
///
/// # Errors
/// Encryption, LUT or decryption errors.
pub fn failure_rate<T: crate::torus::Torus>(
    ck: &crate::keys::ClientKey<T>,
    sk: &crate::keys::ServerKey<T>,
    trials: u64,
    rng: &mut crate::random::Csprng,
) -> crate::error::Result<u64> {
    use crate::batch::BatchConfig;
    let p = ck.params().plaintext_modulus();
    let lut = crate::lut::Lut::from_fn(ck.params(), |x| (x * 5 + 3) % p);
    let mut failures = 0;
    let mut done = 0;
    while done < trials {
        let n = (trials - done).min(256) as usize;
        let msgs: Vec<u64> = (0..n).map(|_| rng.next_u64() % p).collect();
        let cts = msgs
            .iter()
            .map(|&m| ck.encrypt_with(m, rng))
            .collect::<crate::error::Result<Vec<_>>>()?;
        let outs = sk.apply_lut_batch(&cts, &lut, &BatchConfig::default())?;
        for (o, &m) in outs.iter().zip(&msgs) {
            failures += (ck.decrypt(o)? != (m * 5 + 3) % p) as u64;
        }
        done += n as u64;
    }
    Ok(failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_matches_known_values() {
        // erfc(0) = 1, erfc(1) = 0.157299207, erfc(3) = 2.20904970e-5, erfc(10) = 2.08848758e-45
        for (x, want) in
            [(0.0, 1.0), (1.0, 0.157_299_207), (3.0, 2.209_049_70e-5), (10.0, 2.088_487_58e-45)]
        {
            let got = ln_erfc(x).exp();
            assert!((got / want - 1.0).abs() < 1e-6, "erfc({x}) = {got}, want {want}");
        }
        assert!((ln_erfc(-1.0).exp() - 1.842_700_79).abs() < 1e-6);
    }

    use crate::keys::ClientKey;
    use crate::lut::{Lut, delta};
    use crate::params::{AtomicPattern, NoiseDistribution, toy};
    use crate::random::Csprng;
    use crate::torus::{Torus, to_real};

    /// The blind-rotation output variance predicted by the model matches the measured one.
    #[test]
    fn blind_rotation_variance_matches_measurement() {
        let params = toy::u64_small();
        let model = estimate(&params);
        let mut rng = Csprng::from_seed(51);
        let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng);
        let p = params.plaintext_modulus();
        let lut = Lut::from_fn(&params, |x| x);
        let big = ck.glwe_sk.as_lwe_key();
        let trials = 400;
        let mut sum2 = 0.0;
        for t in 0..trials {
            let m = t as u64 % p;
            let mu = m.wmul(delta::<u64>(p));
            let small = ck.lwe_sk.encrypt(mu, params.lwe_noise, &mut rng);
            let out = sk.bootstrap(&small, &lut);
            let e = to_real(big.phase(&out).wsub(mu));
            sum2 += e * e;
        }
        let measured = sum2 / trials as f64;
        let ratio = measured / model.blind_rotate_var;
        eprintln!(
            "BR variance: measured {measured:e}, model {:e}, ratio {ratio:.3}",
            model.blind_rotate_var
        );
        assert!(
            (0.75..1.33).contains(&ratio),
            "measured {measured:e} model {:e}",
            model.blind_rotate_var
        );
    }

    /// With deliberately large key-switching noise (p_fail of a few percent), the measured
    /// failure rate of KS → PBS agrees with the model's erfc.
    #[test]
    fn failure_rate_matches_model_on_a_noisy_set() {
        let mut lit = toy::literal(64, 128, 512, (16, 2), (4, 5), 4, 2, AtomicPattern::KsPbs);
        lit.lwe_noise = NoiseDistribution::Gaussian { std_dev: 6.0e-5 };
        let params = TfheParams::from_literal(lit, true).unwrap();
        let model = estimate(&params);
        let expected = model.log2_p_fail.exp2();
        assert!((0.01..0.2).contains(&expected), "p_fail {expected}");
        let mut rng = Csprng::from_seed(52);
        let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng);
        let trials = 1500u64;
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let fails = pool.install(|| failure_rate(&ck, &sk, trials, &mut rng)).unwrap();
        let rate = fails as f64 / trials as f64;
        eprintln!("failure rate: measured {rate} ({fails}/{trials}), model {expected}");
        assert!(
            rate > expected / 2.0 && rate < expected * 2.0,
            "measured {rate}, model {expected}"
        );
    }

    #[test]
    fn presets_have_finite_reports_and_2_2_is_reliable() {
        for name in crate::params::preset_names() {
            let p = TfheParams::preset(name, true).unwrap();
            let r = estimate(&p);
            assert!(r.br_input_var > 0.0 && r.log2_p_fail.is_finite(), "{r:?}");
        }
        let r = estimate(&TfheParams::preset("2_2", false).unwrap());
        eprintln!("{}", serde_json::to_string(&r).unwrap());
        // Plain modulus switching dominates; the drift technique brings the set to TFHE-rs's
        // 128-bit failure target.
        assert!(r.modswitch_var > r.blind_rotate_var);
        assert!((-80.0..-60.0).contains(&r.log2_p_fail_plain_ms), "{r:?}");
        assert!(r.log2_p_fail <= -128.0, "{r:?}");
        let m = r.ms_reduction.as_ref().unwrap();
        assert!(m.reduced_modswitch_var < 0.6 * r.modswitch_var, "{m:?}");
        // TFHE-rs rates the set at its worst 2-norm (max noise level 5).
        let r5 = estimate_with_norm2(&TfheParams::preset("2_2", false).unwrap(), 5.0);
        eprintln!("2-norm 5: {} (plain {})", r5.log2_p_fail, r5.log2_p_fail_plain_ms);
        assert!(r5.log2_p_fail <= -128.0, "{r5:?}");
        for (name, bound) in [("NN_N1024", -30.0), ("NN_N2048", -60.0), ("NN_N4096", -128.0)] {
            let r = estimate_with_norm2(&TfheParams::preset(name, false).unwrap(), 32.0);
            eprintln!("{name} 2-norm 32: {} (plain {})", r.log2_p_fail, r.log2_p_fail_plain_ms);
            assert!(r.log2_p_fail < bound, "{r:?}");
        }
    }
}
