//! LeNet and the LSTM with their trained weights, in their `--quick` forms (insecure test
//! rings, the digits' test split): the encrypted predictions agree with the cleartext twins'
//! (same squares, same σ), the twins classify digits, and bad input is named.

use basalt_workloads::lenet::{self, Shape};
use basalt_workloads::lstm;
use basalt_workloads::registry::{self, RunOptions};
use serde_json::Value;

fn quick(name: &str) -> Value {
    let opts = RunOptions { quick: true, threads: Some(2), ..RunOptions::default() };
    let r = registry::run(name, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    eprintln!("{r}");
    assert_eq!(r["workload"], name);
    assert_eq!(r["security"]["meets_128"], false, "a toy ring must not claim security");
    assert!(r["key_bytes"].as_u64().unwrap() > 0);
    r
}

fn acc(r: &Value, k: &str) -> f64 {
    r["accuracy"][k].as_f64().unwrap()
}

#[test]
fn the_list_has_lenet_and_the_lstm() {
    let names: Vec<_> = registry::list().iter().map(|w| w.name).collect();
    assert!(names.contains(&"lenet") && names.contains(&"lstm"), "{names:?}");
}

#[test]
fn quick_lenet_agrees_with_its_twin_on_digits() {
    let r = quick("lenet");
    assert_eq!(r["images"], 8);
    assert!(acc(&r, "agreement") >= 0.99, "{r}");
    assert!(acc(&r, "plaintext") >= 0.75, "trained weights classify digits: {r}");
    assert!(r["precision_bits"].as_f64().unwrap() > 10.0, "{r}");
}

#[test]
fn quick_lstm_agrees_with_its_twin_through_bootstraps() {
    let r = quick("lstm");
    assert_eq!(r["steps"], 8);
    assert!(r["bootstraps_per_image"].as_u64().unwrap() >= 2, "{r}");
    assert!(acc(&r, "agreement") >= 0.99, "{r}");
    assert!(acc(&r, "plaintext") >= 0.5, "trained weights classify digits: {r}");
    assert!(r["precision_bits"].as_f64().unwrap() > 8.0, "{r}");
}

/// The twins over the whole test split: the shipped weights are the trained ones (the accuracy
/// `scripts/train_weights.py` records, far above the 10 % of chance).
#[test]
fn the_trained_twins_classify_the_test_split() {
    let data = basalt_workloads::digits::load().unwrap();
    let rate = |f: &dyn Fn(&basalt_workloads::digits::Digit) -> Vec<f64>| {
        let ok = data
            .test
            .iter()
            .filter(|d| basalt_workloads::classify::argmax(&f(d)) == usize::from(d.label))
            .count();
        ok as f64 / data.test.len() as f64
    };
    let toy = lenet::trained(Shape::TOY).unwrap();
    let a = rate(&|d| toy.evaluate_plain(&[lenet::image(Shape::TOY, d)]));
    assert!(a > 0.9, "toy LeNet: {a}");
    for width in [16, 128] {
        let t = lstm::trained(width).unwrap();
        let a = rate(&|d| t.scores_plain(&t.sequence(d)));
        assert!(a > 0.85, "LSTM {width}: {a}");
    }
}

#[test]
fn orion_lenet_has_the_benchmark_shape() {
    let net = lenet::trained(Shape::ORION).unwrap();
    assert_eq!(net.depth(), 7, "Set II's L_eff");
    assert_eq!(net.input_slots, 8192);
    let x = lenet::image(Shape::ORION, &basalt_workloads::digits::load().unwrap().test[0]);
    assert_eq!(net.evaluate_plain(&[x]).len(), 10);
}

#[test]
fn shapes_without_weights_and_short_chains_are_named() {
    let other = Shape { side: 12, ..Shape::TOY };
    let e = lenet::trained(other).unwrap_err().to_string();
    assert!(e.contains("no trained LeNet"), "{e}");
    let e = lstm::trained(64).unwrap_err().to_string();
    assert!(e.contains("width 64"), "{e}");
    // LeNet is seven squares and products deep; OSIRIS_SET_I has five levels.
    let opts = RunOptions {
        quick: true,
        preset: Some("OSIRIS_SET_I".into()),
        threads: Some(1),
        ..RunOptions::default()
    };
    let e = registry::run("lenet", &opts).unwrap_err().to_string();
    assert!(e.contains("OSIRIS_SET_I") && e.contains("7"), "{e}");
    // The recurrence bootstraps: a chain without a bootstrapping circuit is refused by name.
    let e = registry::run("lstm", &opts).unwrap_err().to_string();
    assert!(e.contains("OSIRIS_SET_I") && e.contains("bootstrapping"), "{e}");
}
