//! Depth and precision of minimax composite sign approximations against the composed fixed
//! polynomial `f_2` at equal depth (plain, f64; the homomorphic error adds the CKKS noise).
//!
//! `cargo run --release -p basalt-circuits --example minimax_sign`
//! prints one JSON line per (ε, degrees): depth, max |p(x) − sign(x)| on [ε, 1] (20,001-point
//! grid clustered at both ends), bits = −log2 of that, and f_2 composed to the same depth when
//! the depth is a multiple of 3.

use basalt_circuits::polynomial::approx::SignApprox;
use basalt_circuits::polynomial::minimax;

fn max_err(a: &SignApprox, eps: f64) -> f64 {
    let n = 20_000;
    (0..=n)
        .map(|i| {
            let t = std::f64::consts::PI * i as f64 / n as f64;
            eps + (1.0 - eps) * (1.0 - t.cos()) / 2.0
        })
        .map(|x| (a.evaluate_plain(x) - 1.0).abs())
        .fold(0.0, f64::max)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let configs: [&[usize]; 8] =
        [&[7, 7], &[7, 7, 7], &[15, 15], &[15, 15, 15], &[7, 15, 27], &[31, 31], &[63], &[63, 63]];
    for log_eps in [5, 8, 10] {
        let eps = 2f64.powi(-log_eps);
        for degrees in configs {
            let c = match minimax::sign(degrees, eps) {
                Ok(c) => c,
                Err(e) => {
                    println!(
                        "{{\"eps\": \"2^-{log_eps}\", \"degrees\": {degrees:?}, \"error\": \"{e}\"}}"
                    );
                    continue;
                }
            };
            let a = SignApprox::Minimax(c.clone());
            let depth = a.depth();
            let e = max_err(&a, eps);
            let base = depth
                .is_multiple_of(3)
                .then(|| max_err(&SignApprox::Composed { steps: depth / 3 }, eps));
            println!(
                "{{\"eps\": \"2^-{log_eps}\", \"degrees\": {degrees:?}, \"depth\": {depth}, \"max_err\": {e:.3e}, \"bits\": {:.1}, \"stage_errors\": {:?}, \"composed_f2_same_depth_err\": {}}}",
                -e.max(f64::MIN_POSITIVE).log2(),
                c.stage_errors.iter().map(|v| format!("{v:.2e}")).collect::<Vec<_>>(),
                base.map_or("null".to_string(), |b| format!("{b:.3e}"))
            );
        }
    }
    Ok(())
}
