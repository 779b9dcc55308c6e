//! The quick form of NN-20 (convolution, two hidden layers, output; N = 1024): the plaintext
//! integer program reproduces numpy's predictions on the whole test split, and encrypted
//! inference agrees with it on two test images.

use basalt_workloads::tfhe_nn::{NnOptions, run_with};

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
