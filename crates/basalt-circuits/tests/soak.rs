//! Soak test (outside CI: `cargo test --release -p basalt-circuits --test soak -- --ignored`,
//! or `scripts/soak.sh`): 1,000 chained bootstraps on a toy ring (N = 2^10, sparse secret),
//! each followed by a ciphertext product, an addition and a subtraction. Each bootstrap's own
//! precision (output against its input) must stay within one bit of the first one's, and the
//! values must stay on the unit circle: no drift, no blow-up, no slow corruption of keys or state.

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper};
use basalt_circuits::testing::random_values;
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{Encoder, Evaluator, KeyGenerator, PrecisionStats, SecretDistribution};
use num_complex::Complex64;

#[test]
#[ignore = "soak: 1,000 bootstraps take minutes; run with --ignored (scripts/soak.sh)"]
fn a_thousand_chained_bootstraps_keep_their_precision() {
    let rounds: usize =
        std::env::var("BASALT_SOAK_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let params = basalt_circuits::testing::toy_bootstrap_params(
        10,
        2,
        1,
        2,
        SecretDistribution::Hamming { h: 64 },
    );
    let cfg =
        BootstrapConfig { cts_levels: 2, stc_levels: 1, ..BootstrapConfig::lattigo_default(9) };
    let bt = Bootstrapper::new(&params, cfg).unwrap();
    let sk = KeyGenerator::new(&params).gen_secret_key();
    let (keys, encaps) = bt.generate_keys(&sk, false).unwrap();
    let eval = Evaluator::new(&params, keys).unwrap();
    let enc = Encoder::new(&params);
    let slots = bt.slots();
    let encrypt = |v: &[Complex64], level: usize| {
        let pt = enc.encode(v, slots, level, params.default_scale()).unwrap();
        encrypt_sk(&params, &pt, &sk).unwrap()
    };
    let dec = |ct: &basalt_ckks::Ciphertext| -> Vec<Complex64> {
        enc.decode(&decrypt(&params, ct, &sk).unwrap()).unwrap()
    };
    // Unit-magnitude values: products by i keep them on the unit circle.
    let start: Vec<Complex64> =
        random_values(slots, 5, false).iter().map(|z| z / z.norm().max(1e-3)).collect();
    let ones_i = vec![Complex64::i(); slots];
    let mut ct = encrypt(&start, 0);
    let mut first = None;
    let mut worst: f64 = f64::INFINITY;
    for round in 0..rounds {
        let input = dec(&ct);
        ct = bt.bootstrap(&eval, encaps.as_ref(), &ct).unwrap();
        let have = dec(&ct);
        let own = PrecisionStats::new(&input, &have).mean.l2;
        let f = *first.get_or_insert(own);
        worst = worst.min(own);
        assert!((own - f).abs() < 1.0, "round {round}: {own:.2} bits vs {f:.2} at the start");
        let max_dev = have.iter().map(|z| (z.norm() - 1.0).abs()).fold(0.0, f64::max);
        assert!(max_dev < 0.05, "round {round}: values left the unit circle by {max_dev:.3}");
        // Operations between bootstraps: p = ct · i (rescaled), then (p + p) − p, down to level 0.
        let unit = encrypt(&ones_i, ct.level());
        let prod = eval.rescale(&eval.mul_relin(&ct, &unit).unwrap()).unwrap();
        let sum = eval.add(&prod, &prod).unwrap();
        ct = eval.sub(&sum, &prod).unwrap();
        ct = eval.drop_level(&ct, ct.level()).unwrap();
        if round % 100 == 0 {
            eprintln!("round {round}: {own:.2} bits (first {f:.2}, worst {worst:.2})");
        }
    }
    eprintln!("{rounds} bootstraps: first {:.2} bits, worst {worst:.2}", first.unwrap_or(0.0));
}
