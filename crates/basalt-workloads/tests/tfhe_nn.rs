//! The quick form of NN-20 (convolution, two hidden layers, output; N = 1024): the plaintext
//! integer program reproduces numpy's predictions on the whole test split, and encrypted
//! inference agrees with it on two test images.

use basalt_tfhe::TfheParams;
use basalt_workloads::tfhe_nn::{
    Dense, Network, NnOptions, TestSet, WIDTH, argmax, modelled_failures, run_with, security,
};

#[test]
fn nn20_quick_encrypted_agrees_with_plaintext() {
    let opts = NnOptions {
        quick: true,
        threads: Some(2),
        images: Some(2),
        sizes: None,
        timing: false,
        progress: true,
    };
    let v = run_with("nn-20", &opts).unwrap();
    eprintln!("{v}");
    let s = &v["sizes"][0];
    assert_eq!(s["polynomial_size"], 1024);
    assert_eq!(s["agreement_class"].as_f64(), Some(1.0), "{v}");
    assert_eq!(s["agreement_logits"].as_f64(), Some(1.0), "{v}");
    assert!(s["noise"]["expected_failed_pbs_per_inference"].as_f64().unwrap() < 1e-3);
    assert_eq!(v["pbs_per_inference"], 840 + 2 * 92);
    assert_eq!(s["security"], security(&TfheParams::preset("NN_N1024", false).unwrap()));
    assert!(s.get("security_source").is_none(), "{s}");
}

/// The network sets' records carry the lattice estimator's figures, those `basalt security`
/// prints in docs/security.md (its rows: set, n, LWE bits, k·N, GLWE bits, set bits, claim).
#[test]
fn the_records_security_is_the_estimate_of_docs_security() {
    let page = include_str!("../../../docs/security.md");
    for n in [1024, 2048, 4096] {
        let name = format!("NN_N{n}");
        let v = security(&TfheParams::preset(&name, false).unwrap());
        let row: Vec<&str> = page
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
            .unwrap_or_else(|| panic!("{name} is not in docs/security.md"))
            .split('|')
            .map(str::trim)
            .collect();
        let f = |k: &str| format!("{:.1}", v[k].as_f64().unwrap());
        let have = [f("lwe_bits"), f("glwe_bits"), f("estimated_bits")];
        assert_eq!(have, [row[3], row[5], row[6]], "{name}: {v}");
        assert_eq!(v["meets_128"], true, "{name}: {v}");
    }
}

#[test]
fn unknown_network_is_a_clear_error() {
    let e = basalt_workloads::tfhe_nn::run("nn-7", true, None).unwrap_err();
    assert!(e.contains("nn-7") && e.contains("nn-20"), "{e}");
}

/// The shipped weights of all three depths: Rust's integer program gives numpy's predictions on
/// the whole test split, they classify digits (the test split, not the training data), and their
/// hidden layers are trained layers: none is the identity `2I` that the table maps back, and
/// replacing them all by `2I` changes the predictions.
#[test]
fn shipped_networks_classify_the_test_split() {
    let test = TestSet::load().unwrap();
    let accuracy = |net: &Network| {
        let pred: Vec<usize> = test.images.iter().map(|im| argmax(&net.plain_logits(im))).collect();
        let acc = pred.iter().zip(&test.labels).filter(|(a, b)| a == b).count() as f64
            / test.labels.len() as f64;
        (pred, acc)
    };
    // Lowest accepted plaintext test accuracy per depth (chance is 10 %).
    for (name, floor) in [("nn-20", 0.85), ("nn-50", 0.80), ("nn-100", 0.70)] {
        let net = Network::load(name).unwrap();
        let (pred, acc) = accuracy(&net);
        assert_eq!(pred, net.reference_predictions, "{name}");
        eprintln!("{name}: plaintext test accuracy {acc:.4}");
        assert!(acc >= floor, "{name}: {acc}");
        assert_eq!(net.pbs_count(), 840 + 92 * (net.dense.len() - 1));

        let hidden = &net.dense[1..net.dense.len() - 1];
        let mut differ = 0;
        for (i, d) in hidden.iter().enumerate() {
            assert_eq!((d.inputs, d.outputs), (WIDTH, WIDTH));
            let n = (0..WIDTH * WIDTH)
                .filter(|&x| d.weights[x] != if x / WIDTH == x % WIDTH { 2 } else { 0 })
                .count();
            assert!(n > 0 || d.bias.iter().any(|&b| b != 0), "{name}: hidden layer {i} is 2I");
            differ += n;
        }
        let frac = differ as f64 / (hidden.len() * WIDTH * WIDTH) as f64;
        let identity = Dense {
            inputs: WIDTH,
            outputs: WIDTH,
            weights: (0..WIDTH * WIDTH).map(|x| 2 * (x / WIDTH == x % WIDTH) as i64).collect(),
            bias: vec![0; WIDTH],
        };
        let mut bypass = net.clone();
        for d in &mut bypass.dense[1..net.dense.len() - 1] {
            *d = identity.clone();
        }
        let (bypass_pred, bypass_acc) = accuracy(&bypass);
        let changed = bypass_pred.iter().zip(&pred).filter(|(a, b)| a != b).count();
        eprintln!(
            "{name}: {:.1} % of hidden weights differ from 2I; with every hidden layer replaced by \
             2I: test accuracy {bypass_acc:.4}, {changed} of {} predictions change",
            100.0 * frac,
            pred.len()
        );
        assert!(changed > 0, "{name}: the hidden layers do not change any prediction");

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

/// Why the N = 4096 figure does not move with the weights: there the blind-rotation output
/// noise (base 2^15, 2 levels) is a few 10^-7 of the key-switching noise (kN = 4096 inputs,
/// 4 levels of base 2^4 under TUniform 2^45), so the phase entering the next blind rotation is
/// the key switch's for any row norm up to ~100. At N = 1024 and 2048 (base 2^23, 1 level) the
/// blind rotation adds ~1 % of the key switch per unit of squared norm and the figure moves.
/// The model has no clamp: it is monotone in the norm at every size.
#[test]
fn n4096_failure_is_set_by_key_switching() {
    use basalt_tfhe::noise::estimate_with_norm2;
    for set in ["NN_N1024", "NN_N2048", "NN_N4096"] {
        let params = basalt_tfhe::TfheParams::preset(set, false).unwrap();
        let r: Vec<_> =
            [1.0, 4.36, 32.0, 256.0].iter().map(|&n| estimate_with_norm2(&params, n)).collect();
        for w in r.windows(2) {
            assert!(w[1].br_input_var > w[0].br_input_var, "{set}");
            assert!(w[1].log2_p_fail >= w[0].log2_p_fail - 1e-6, "{set}");
        }
        let ratio = r[0].keyswitch_var / r[0].blind_rotate_var;
        eprintln!(
            "{set}: key switch / blind rotation variance {ratio:.3e}; log2 p_fail at row norms \
             1, 4.36, 32, 256: {:.1}, {:.1}, {:.1}, {:.1}",
            r[0].log2_p_fail, r[1].log2_p_fail, r[2].log2_p_fail, r[3].log2_p_fail
        );
        if set == "NN_N4096" {
            assert!(ratio > 32.0 * 32.0 * 1000.0, "{set}: {ratio}");
            assert!((r[2].log2_p_fail - r[1].log2_p_fail).abs() < 1.0, "{set}");
            // Far enough (norm 256) the blind rotation shows.
            assert!(r[3].log2_p_fail > r[2].log2_p_fail + 1.0, "{set}");
        } else {
            assert!(r[2].log2_p_fail > r[1].log2_p_fail + 4.0, "{set}");
        }
    }
}
