//! Measured failure rates against the noise model on the validation sets, one JSON line per
//! set: `cargo run --release -p basalt-tfhe --example noise_table [-- --scale S] [--seed X]`.
//! `--scale` multiplies every set's default trial count (e.g. 0.25 for a quick look).

use basalt_tfhe::noise_validation::{validate, validation_sets};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get =
        |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let scale: f64 =
        get("--scale").map(|v| v.parse().expect("--scale takes a number")).unwrap_or(1.0);
    let seed: u64 = get("--seed").map(|v| v.parse().expect("--seed takes an integer")).unwrap_or(1);
    let only = get("--set");
    for (i, s) in validation_sets().iter().enumerate() {
        if only.as_deref().is_some_and(|o| !s.params.name.eq_ignore_ascii_case(o)) {
            continue;
        }
        let trials = ((s.trials as f64 * scale).round() as u64).max(1);
        // 99 % two-sided interval (z = 2.5758).
        let row = validate(s, trials, seed + i as u64, 2.575_829).expect("validation run");
        println!("{}", serde_json::to_string(&row).expect("row serialises"));
    }
}
