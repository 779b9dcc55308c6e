//! The quick form of NN-20 (convolution, two hidden layers, output; N = 1024): the plaintext
//! integer program reproduces numpy's predictions on the whole test split, and encrypted
//! inference agrees with it on two test images.

use basalt_workloads::tfhe_nn::{Network, NnOptions, TestSet, argmax, modelled_failures, run_with};

#[test]
fn nn20_quick_encrypted_agrees_with_plaintext() {
    let opts =
        NnOptions { quick: true, threads: Some(2), images: Some(2), sizes: None, timing: false };
    let v = run_with("nn-20", &opts).unwrap();
    eprintln!("{v}");
    let s = &v["sizes"][0];
    assert_eq!(s["polynomial_size"], 1024);
    assert_eq!(s["agreement_class"].as_f64(), Some(1.0), "{v}");
    assert_eq!(s["agreement_logits"].as_f64(), Some(1.0), "{v}");
    assert!(s["noise"]["expected_failed_pbs_per_inference"].as_f64().unwrap() < 1e-3);
    assert_eq!(v["pbs_per_inference"], 840 + 2 * 92);
}

#[test]
fn unknown_network_is_a_clear_error() {
    let e = basalt_workloads::tfhe_nn::run("nn-7", true, None).unwrap_err();
    assert!(e.contains("nn-7") && e.contains("nn-20"), "{e}");
}

/// The shipped weights of all three depths: Rust's integer program gives numpy's predictions on
/// the whole test split, and they classify digits (the test split, not the training data).
#[test]
fn shipped_networks_classify_the_test_split() {
    let test = TestSet::load().unwrap();
    for name in ["nn-20", "nn-50", "nn-100"] {
        let net = Network::load(name).unwrap();
        let pred: Vec<usize> = test.images.iter().map(|im| argmax(&net.plain_logits(im))).collect();
        assert_eq!(pred, net.reference_predictions, "{name}");
        let acc = pred.iter().zip(&test.labels).filter(|(a, b)| a == b).count() as f64
            / test.labels.len() as f64;
        eprintln!("{name}: plaintext test accuracy {acc:.4}");
        assert!(acc >= 0.85, "{name}: {acc}");
        assert_eq!(net.pbs_count(), 840 + 92 * (net.dense.len() - 1));
        // Per-bootstrap failure at the network's own row norms, at each ring size (noise
        // model, no keys): below the sets' design rating at row 2-norm 32.
        for (set, bound) in [("NN_N1024", -30.0), ("NN_N2048", -60.0), ("NN_N4096", -128.0)] {
            let params = basalt_tfhe::TfheParams::preset(set, false).unwrap();
            let f = modelled_failures(&net, &params);
            eprintln!("{name} {set}: {f}");
            assert!(f["log2_worst_layer_p_fail"].as_f64().unwrap() < bound, "{name} {set}: {f}");
        }
    }
}
