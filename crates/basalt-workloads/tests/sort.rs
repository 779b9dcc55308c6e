//! Bitonic sort of 32 encrypted values on a small (insecure) ring with real bootstraps, against
//! its cleartext twin; the trace-mode recording refreshes where the real run bootstraps.

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper};
use basalt_circuits::compare;
use basalt_circuits::testing::{precision_bits_real, toy_bootstrap_params};
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{Ciphertext, Encoder, Evaluator, KeyGenerator, SecretDistribution};
use basalt_workloads::sort::{BitonicSort, record_sort};
use num_complex::Complex64;

#[test]
fn thirty_two_values_sort_for_real_with_bootstraps() {
    // Ten 40-bit residual levels over Lattigo's chain shape at N = 2^10; 32-slot sparse
    // bootstrap (CtS 2, StC 1 levels). A small composite (g_3, g_3, f_3: depth 9) keeps the
    // test fast: each stage needs 12 levels, so about one bootstrap per stage.
    let params = toy_bootstrap_params(10, 10, 1, 2, SecretDistribution::DenseTernary);
    let sort = BitonicSort { log_len: 5, comparison: compare::composite(2, 1) };
    let cfg =
        BootstrapConfig { cts_levels: 2, stc_levels: 1, ..BootstrapConfig::lattigo_default(5) };
    let bt = Bootstrapper::new(&params, cfg).unwrap();
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let mut rotations = bt.rotations();
    rotations.extend(sort.rotations());
    let eval =
        Evaluator::new(&params, kg.gen_evaluation_keys(&sk, &rotations, true, false)).unwrap();
    let (_, encaps) = bt.generate_keys(&sk, false).unwrap();
    let top = bt.budget().output_level;

    // 32 distinct values on a shuffled grid of step 1/32 in (0, 1).
    let x: Vec<f64> = (0..32).map(|i| ((i * 13) % 32) as f64 / 32.0 + 1.0 / 64.0).collect();
    let enc = Encoder::new(&params);
    let v: Vec<Complex64> = x.iter().map(|&r| Complex64::new(r, 0.0)).collect();
    let pt = enc.encode(&v, 32, top, params.default_scale()).unwrap();
    let ct = encrypt_sk(&params, &pt, &sk).unwrap();
    let mut boots = 0;
    let mut refresh = |c: &Ciphertext| {
        boots += 1;
        bt.bootstrap(&eval, encaps.as_ref(), c)
    };
    let out = sort.evaluate(&eval, &ct, &mut refresh).unwrap();
    let have: Vec<f64> =
        enc.decode(&decrypt(&params, &out, &sk).unwrap()).unwrap().iter().map(|z| z.re).collect();
    let twin = sort.sort_plain(&x);
    let bits = precision_bits_real(&twin, &have);
    let mut exact = x.clone();
    exact.sort_by(f64::total_cmp);
    let vs_exact = precision_bits_real(&exact, &have);
    eprintln!("{boots} bootstraps; vs twin {bits:.1} bits, vs the exact sort {vs_exact:.1} bits");
    assert!(bits > 10.0, "{bits}");
    // The order is right: every output within half a grid step of the sorted input.
    assert!(vs_exact > 6.0, "{vs_exact}: {have:?}");
    // Trace mode refreshes exactly where the real run bootstrapped (same levels, same policy).
    let (trace, refreshes) = record_sort(&params_at_top(&params, top), &sort, false).unwrap();
    assert_eq!(refreshes, boots);
    assert!(trace.kernels().count() > 0);
}

/// The residual chain below the bootstrap's output: the same primes, cut at `top` (what the
/// real run's comparisons see).
fn params_at_top(params: &basalt_ckks::Parameters, top: usize) -> basalt_ckks::Parameters {
    let mut lit = params.literal().clone();
    lit.q = params.q()[..=top].to_vec();
    lit.log_q = vec![];
    lit.p = params.p().to_vec();
    lit.log_p = vec![];
    lit.name = format!("{}_RESIDUAL", lit.name);
    lit.aliases = vec![];
    basalt_ckks::Parameters::new(lit).unwrap()
}
