//! Throughput mode and concurrent use: the batch calls and many threads sharing one
//! evaluator give, ciphertext by ciphertext, exactly the single-call results.

use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{
    Ciphertext, CkksError, Complex64, Encoder, Evaluator, KeyGenerator, Parameters,
    ParametersLiteral,
};

/// Slot values of each ciphertext.
type Values = Vec<Vec<Complex64>>;

fn setup() -> (Evaluator, Vec<Ciphertext>, Values, impl Fn(&Ciphertext) -> Vec<Complex64>) {
    let mut lit = ParametersLiteral::toy(10, 60, 40, 3, 61, 2, 2);
    lit.log_default_scale = 40.0;
    let params = Parameters::new(lit).unwrap();
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let eval =
        Evaluator::new(&params, kg.gen_evaluation_keys(&sk, &[1, 2, 3], false, false)).unwrap();
    let enc = Encoder::new(&params);
    let slots = params.max_slots();
    let vals: Vec<Vec<Complex64>> = (0..6)
        .map(|j| {
            (0..slots)
                .map(|i| Complex64::new(((i + 3 * j) as f64 * 0.37).sin(), 0.25 * j as f64 - 0.5))
                .collect()
        })
        .collect();
    let cts = vals
        .iter()
        .map(|v| {
            let pt = enc.encode(v, slots, params.max_level(), params.default_scale()).unwrap();
            encrypt_sk(&params, &pt, &sk).unwrap()
        })
        .collect();
    let p2 = params.clone();
    let dec = move |c: &Ciphertext| enc.decode(&decrypt(&p2, c, &sk).unwrap()).unwrap();
    (eval, cts, vals, dec)
}

#[test]
fn batch_calls_equal_single_calls_bit_for_bit() {
    let (eval, cts, vals, dec) = setup();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let pairs: Vec<(&Ciphertext, &Ciphertext)> = cts.iter().zip(cts.iter().rev()).collect();
    let products = pool.install(|| eval.mul_relin_batch(&pairs)).unwrap();
    let rotated = pool.install(|| eval.rotate_batch(&cts, 2)).unwrap();
    let hoisted = pool.install(|| eval.rotate_hoisted_batch(&cts, &[1, 3])).unwrap();
    let rescaled = pool.install(|| eval.rescale_batch(&products)).unwrap();
    for (i, (a, b)) in pairs.iter().enumerate() {
        assert_eq!(products[i], eval.mul_relin(a, b).unwrap());
        assert_eq!(rotated[i], eval.rotate(&cts[i], 2).unwrap());
        assert_eq!(hoisted[i], eval.rotate_hoisted(&cts[i], &[1, 3]).unwrap());
        assert_eq!(rescaled[i], eval.rescale(&products[i]).unwrap());
    }
    // And the values are right (independent of the single-call path).
    let n = vals[0].len();
    let got = dec(&rescaled[1]);
    let other = &vals[vals.len() - 2];
    for i in 0..n {
        assert!((got[i] - vals[1][i] * other[i]).norm() < 1e-6, "slot {i}");
    }
    let got = dec(&rotated[4]);
    for i in 0..n {
        assert!((got[i] - vals[4][(i + 2) % n]).norm() < 1e-6, "slot {i}");
    }
}

#[test]
fn batch_reports_the_first_failing_item() {
    let (eval, cts, _, _) = setup();
    let err = eval.rotate_batch(&cts, 5).unwrap_err();
    assert!(matches!(err, CkksError::MissingRotationKey { .. }), "{err}");
    assert!(eval.rotate_batch(&[], 5).unwrap().is_empty());
}

#[test]
fn one_evaluator_shared_by_many_threads() {
    let (eval, cts, _, _) = setup();
    let want: Vec<Ciphertext> = cts.iter().map(|c| eval.mul_relin(c, c).unwrap()).collect();
    let eval = &eval;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let cts = &cts;
                s.spawn(move || {
                    // Each thread works through the batch from its own starting point.
                    (0..cts.len())
                        .map(|k| {
                            let i = (k + t) % cts.len();
                            (i, eval.mul_relin(&cts[i], &cts[i]).unwrap())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            for (i, got) in h.join().unwrap() {
                assert_eq!(got, want[i]);
            }
        }
    });
}
