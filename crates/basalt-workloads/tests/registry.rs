//! Every registry workload in its `--quick` form (insecure toy rings, real data): the encrypted
//! run agrees with its cleartext twin; bad input gets an error naming what is missing.

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper};
use basalt_circuits::testing::{toy_bootstrap_params, toy_params};
use basalt_ckks::encryptor::encrypt_sk;
use basalt_ckks::{Complex64, Encoder, Evaluator, KeyGenerator, SecretDistribution};
use basalt_workloads::classify::{Classifier, RULE};
use basalt_workloads::digits;
use basalt_workloads::network::Model;
use basalt_workloads::registry::{self, RunOptions};
use serde_json::Value;

fn quick(name: &str) -> Value {
    let opts = RunOptions { quick: true, threads: Some(2), ..RunOptions::default() };
    let r = registry::run(name, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    eprintln!("{r}");
    assert_eq!(r["workload"], name);
    assert_eq!(r["security"]["meets_128"], false, "a toy ring must not claim security");
    assert!(r["key_bytes"].as_u64().unwrap() > 0 && r["wall_s"].as_f64().unwrap() > 0.0);
    r
}

fn acc(r: &Value, k: &str) -> f64 {
    r["accuracy"][k].as_f64().unwrap()
}

#[test]
fn the_list_has_every_ckks_workload() {
    let names: Vec<_> = registry::list().iter().map(|w| w.name).collect();
    for n in ["helr", "lola", "mlp", "resnet20", "sort"] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
}

#[test]
fn quick_lola_and_mlp_agree_with_their_twins_on_digits() {
    for name in ["lola", "mlp"] {
        let r = quick(name);
        assert!(r["images"].as_u64().unwrap() >= 8);
        assert!(acc(&r, "agreement") >= 0.99, "{name}: {r}");
        assert!(acc(&r, "plaintext") >= 0.75, "{name}: trained weights classify digits: {r}");
        assert!(r["precision_bits"].as_f64().unwrap() > 15.0, "{name}: {r}");
    }
}

#[test]
fn quick_helr_trains_under_encryption_as_in_the_clear() {
    let r = quick("helr");
    assert!(r["bootstraps"].as_u64().unwrap() >= 2, "{r}");
    assert!(acc(&r, "plaintext") > 0.85, "the twin learns 3-vs-8: {r}");
    assert!((acc(&r, "encrypted") - acc(&r, "plaintext")).abs() <= 0.01, "{r}");
    assert!(acc(&r, "agreement") >= 0.99, "{r}");
    assert!(r["precision_bits"].as_f64().unwrap() > 10.0, "{r}");
}

#[test]
fn quick_sort_matches_its_twin_and_the_exact_sort() {
    let r = quick("sort");
    assert!(r["bootstraps"].as_u64().unwrap() > 0);
    assert!(acc(&r, "agreement") >= 0.99, "{r}");
    assert!(acc(&r, "encrypted") >= 0.9, "{r}");
}

#[test]
fn a_preset_without_bootstrapping_or_levels_is_named() {
    let opts = RunOptions { preset: Some("OSIRIS_SET_I".into()), ..RunOptions::default() };
    let e = registry::run("helr", &opts).unwrap_err().to_string();
    assert!(e.contains("OSIRIS_SET_I") && e.contains("no bootstrapping circuit"), "{e}");
    // Five layers on a three-level chain.
    let net = digits::trained_mlp().unwrap();
    let e = Classifier::new(&toy_params(11, 3, 40, 2), &net, RULE).err().unwrap().to_string();
    assert!(e.contains("needs 5 levels") && e.contains("only 3"), "{e}");
}

#[test]
fn a_model_the_packing_cannot_hold_is_refused() {
    // 784 pixels in the 512 slots of N = 2^10.
    let net = digits::trained_mlp().unwrap();
    let e = Classifier::new(&toy_params(10, 5, 40, 2), &net, RULE).err().unwrap().to_string();
    assert!(e.contains("1024 slots") && e.contains("only 512"), "the packing and the ring: {e}");
}

#[test]
fn a_missing_rotation_key_is_named() {
    let params = toy_params(11, 5, 40, 2);
    let net = digits::trained_lola().unwrap();
    let model = Model::prepare(&params, &net, RULE, false).unwrap();
    let rotations = model.rotations();
    let clf = Classifier::with_rotations(&params, model, &rotations[1..]).unwrap();
    let d = &digits::load().unwrap().test[0];
    let e = clf.scores(&basalt_workloads::mnist::Net::Lola.inputs(&digits::to28(d)), 10);
    let e = e.unwrap_err().to_string();
    assert!(e.contains("missing rotation key") && e.contains(&rotations[0].to_string()), "{e}");
}

#[test]
fn a_missing_bootstrapping_key_is_named() {
    let params = toy_bootstrap_params(10, 4, 1, 2, SecretDistribution::Hamming { h: 64 });
    let cfg =
        BootstrapConfig { cts_levels: 2, stc_levels: 1, ..BootstrapConfig::lattigo_default(4) };
    let bt = Bootstrapper::new(&params, cfg).unwrap();
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let (circuit_keys, encaps) = bt.generate_keys(&sk, false).unwrap();
    // Relinearisation only: none of the bootstrap's rotation or conjugation keys.
    let eval = Evaluator::new(&params, kg.gen_evaluation_keys(&sk, &[], false, false)).unwrap();
    let z = vec![Complex64::new(0.25, 0.0); 16];
    let pt = Encoder::new(&params).encode(&z, 16, 0, params.default_scale()).unwrap();
    let ct = encrypt_sk(&params, &pt, &sk).unwrap();
    let e = bt.bootstrap(&eval, encaps.as_ref(), &ct).unwrap_err().to_string();
    // The error names a rotation step the circuit needs.
    let named: i64 = e
        .split("missing rotation key for rotation by ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|k| k.parse().ok())
        .unwrap_or_else(|| panic!("no rotation named: {e}"));
    assert!(bt.rotations().contains(&named), "{e}");
    // Every rotation and conjugation key, no encapsulation keys: the circuit names them.
    let eval = Evaluator::new(&params, circuit_keys).unwrap();
    let e = bt.bootstrap(&eval, None, &ct).unwrap_err().to_string();
    assert!(e.contains("missing bootstrapping keys") && e.contains("encapsulation keys"), "{e}");
}

/// `images` runs the first N inputs of the test split (the record says how many); none is an
/// error naming the option.
#[test]
fn an_image_count_limits_the_run() {
    let opts =
        RunOptions { quick: true, threads: Some(2), images: Some(2), ..RunOptions::default() };
    let r = registry::run("mlp", &opts).unwrap();
    assert_eq!(r["images"], 2, "{r}");
    let none = RunOptions { images: Some(0), ..opts };
    let e = registry::run("mlp", &none).unwrap_err().to_string();
    assert!(e.contains("images"), "{e}");
}
