//! The noise model against counted failures on the validation sets that fail most often
//! (blind-rotation-dominated, and modulus switching with the drift-technique reduction): the
//! model's probability must lie in the 99.9 % Wilson interval of the measured rate. The full
//! table (all sets, more trials) is `cargo run --release -p basalt-tfhe --example noise_table`.

use basalt_tfhe::noise_validation::{validate, validation_sets};

fn check(name: &str, trials: u64, seed: u64) {
    let set = validation_sets().into_iter().find(|s| s.params.name == name).expect("known set");
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let row = pool.install(|| validate(&set, trials, seed, 3.290_527)).unwrap();
    eprintln!("{}", serde_json::to_string(&row).unwrap());
    assert!(row.failures > 0, "{row:?}");
    assert!(row.model_within_ci, "{row:?}");
}

#[test]
fn blind_rotation_dominated_set_fails_as_modelled() {
    check("VAL_BR", 4096, 11);
}

#[test]
fn drift_reduced_set_fails_as_modelled() {
    check("VAL_MS_DRIFT", 2048, 12);
}
