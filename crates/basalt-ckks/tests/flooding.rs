//! Noise-flooded decryption: the added noise has the stated size (measured slot error against
//! the predicted `σ_f·√N/Δ`), each flooded decryption is fresh, and bad sizes are refused.

mod common;
use basalt_ckks::encryptor::decrypt;
use basalt_ckks::flooding::{FloodingNoise, decrypt_flooded};
use basalt_ckks::*;
use common::*;

#[test]
fn flooding_costs_the_predicted_precision_and_is_fresh() {
    let c = setup(toy(11, 2, 1, 3), &[], false);
    let slots = c.params.max_slots();
    let v = random_values(slots, 7);
    let ct = c.encrypt(&v, 2);
    let plain =
        PrecisionStats::new(&v, &c.enc.decode(&decrypt(&c.params, &ct, &c.sk).unwrap()).unwrap());
    let noise = FloodingNoise::for_error_bound(5.0, 15.0); // σ_f = 2^20
    let a = c.enc.decode(&decrypt_flooded(&c.params, &ct, &c.sk, noise).unwrap()).unwrap();
    let b = c.enc.decode(&decrypt_flooded(&c.params, &ct, &c.sk, noise).unwrap()).unwrap();
    assert!(a.iter().zip(&b).any(|(x, y)| x != y), "two flooded decryptions must differ");
    // Measured RMS slot error (real parts) against σ_f·√(N/2)/Δ (the plain error is far below).
    let scale = ct.scale();
    let rms =
        (a.iter().zip(&v).map(|(x, y)| (x.re - y.re).powi(2)).sum::<f64>() / slots as f64).sqrt();
    let predicted = noise.log2_std_dev.exp2() * (c.params.n() as f64 / 2.0).sqrt() / scale;
    let ratio = rms / predicted;
    println!("flooded rms {rms:.3e}, predicted {predicted:.3e} (ratio {ratio:.2}), plain {plain}");
    assert!((0.8..1.25).contains(&ratio), "ratio {ratio}");
    let flooded = PrecisionStats::new(&v, &a);
    let left = noise.precision_left(scale.log2(), c.params.log_n());
    assert!(flooded.mean.real < plain.mean.real - 5.0, "{flooded} vs {plain}");
    assert!((flooded.mean.real - left).abs() < 3.0, "{flooded}: predicted {left:.1} bits");
    for bad in [-1.0, 59.0, f64::NAN] {
        let r = decrypt_flooded(&c.params, &ct, &c.sk, FloodingNoise { log2_std_dev: bad });
        assert!(matches!(r, Err(CkksError::BadFlooding(_))));
    }
}
