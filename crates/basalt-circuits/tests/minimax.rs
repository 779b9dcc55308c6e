//! Minimax sign (Remez exchange): equioscillation of the error, better than the composed
//! fixed polynomial at equal depth, and the homomorphic result within the plain error plus
//! CKKS noise on a toy ring.

use basalt_circuits::polynomial::approx::{self, SignApprox};
use basalt_circuits::polynomial::minimax::{self, remez_sign};
use basalt_circuits::testing::{Ctx, random_values, toy_params};
use basalt_circuits::{CircuitError, Result};

/// A grid of `[lo, hi]` clustered towards both ends.
fn grid(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    (0..=n)
        .map(|i| {
            let t = std::f64::consts::PI * i as f64 / n as f64;
            lo + (hi - lo) * (1.0 - t.cos()) / 2.0
        })
        .collect()
}

/// Sign alternations among the local extrema of `e` whose magnitude is within `tol` of `emax`.
fn alternations(e: &[f64], emax: f64, tol: f64) -> usize {
    let mut signs: Vec<f64> = Vec::new();
    for i in 0..e.len() {
        let y = e[i];
        let l = if i == 0 { 0.0 } else { e[i - 1] };
        let r = if i + 1 == e.len() { 0.0 } else { e[i + 1] };
        let ext = (i == 0 || y.abs() >= l.abs() || y.signum() != l.signum())
            && (i + 1 == e.len() || y.abs() >= r.abs() || y.signum() != r.signum());
        if ext && y.abs() >= (1.0 - tol) * emax && signs.last() != Some(&y.signum()) {
            signs.push(y.signum());
        }
    }
    signs.len()
}

fn max_err(f: impl Fn(f64) -> f64, eps: f64) -> f64 {
    grid(eps, 1.0, 20_000).into_iter().map(|x| (f(x) - 1.0).abs()).fold(0.0, f64::max)
}

#[test]
fn remez_error_equioscillates() {
    for &eps in &[0.1, 0.02, 1.0 / 256.0, 1.0 / 1024.0] {
        for &d in &[3usize, 7, 15, 31, 63, 127] {
            let mm = remez_sign(d, eps).unwrap();
            let xs = grid(eps, 1.0, 200_000);
            let e: Vec<f64> = xs.iter().map(|&x| mm.poly.evaluate_plain(x) - 1.0).collect();
            let emax = e.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let m = d.div_ceil(2);
            let alt = alternations(&e, emax, 1e-6);
            println!(
                "d = {d:2}, eps = {eps:.4}: E = {:.6e} (levelled {:.6e}), {} iterations, {alt} alternations (need {})",
                mm.error,
                mm.levelled,
                mm.iterations,
                m + 1
            );
            assert!(alt > m, "d = {d}, eps = {eps}: {alt} alternations < {}", m + 1);
            assert!((emax - mm.error).abs() <= 1e-6 * emax, "grid {emax} vs {}", mm.error);
            assert!((mm.levelled - mm.error).abs() <= 1e-6 * emax);
            // Odd: sign on the negative side too.
            let p = &mm.poly;
            assert!((p.evaluate_plain(-0.5) + p.evaluate_plain(0.5)).abs() < 1e-12);
        }
    }
}

#[test]
fn minimax_beats_the_chebyshev_interpolant_of_the_same_degree() {
    // The minimax error is the least possible: any other odd polynomial of the same degree
    // (here, the best-fit Chebyshev interpolant of a smoothed sign) does worse on [ε, 1].
    let eps = 0.05;
    for d in [7usize, 15, 31] {
        let mm = remez_sign(d, eps).unwrap();
        let k = 2.0 / eps;
        let ip =
            basalt_circuits::polynomial::Chebyshev::interpolate(|x| (k * x).tanh(), -1.0, 1.0, d)
                .unwrap()
                .into_odd();
        let e_ip = max_err(|x| ip.evaluate_plain(x), eps);
        println!("d = {d}: minimax {:.4e}, interpolant of tanh({k}x) {e_ip:.4e}", mm.error);
        assert!(mm.error < e_ip);
    }
}

#[test]
fn minimax_composite_beats_the_composed_polynomial_at_equal_depth() -> Result<()> {
    let eps = 1.0 / 32.0;
    // Each f_2 step is degree 5, depth 3; a minimax stage of degree 7 has the same depth.
    for (steps, degrees) in [(2, vec![7, 7]), (3, vec![7, 7, 7]), (4, vec![15, 15, 15])] {
        let base = SignApprox::Composed { steps };
        let mm = minimax::sign(&degrees, eps)?;
        let mmx = SignApprox::Minimax(mm.clone());
        assert_eq!(base.depth(), mmx.depth(), "{degrees:?}");
        let e_base = max_err(|x| base.evaluate_plain(x), eps);
        let e_mm = max_err(|x| mmx.evaluate_plain(x), eps);
        println!(
            "depth {}: composed f_2^{steps} {e_base:.3e} ({:.1} bits), minimax {degrees:?} {e_mm:.3e} ({:.1} bits), predicted {:.3e}",
            base.depth(),
            -e_base.log2(),
            -e_mm.log2(),
            mm.error()
        );
        assert!(e_mm < e_base, "{degrees:?}: {e_mm} vs {e_base}");
        assert!((e_mm - mm.error()).abs() <= 1e-6 + 1e-3 * mm.error(), "{e_mm} vs {}", mm.error());
    }
    Ok(())
}

#[test]
fn homomorphic_minimax_sign_and_relu_within_plain_error_plus_noise() -> Result<()> {
    let eps = 1.0 / 32.0;
    let mm = minimax::sign(&[7, 7, 7], eps)?;
    let approx = SignApprox::Minimax(mm.clone());
    let depth = approx.depth();
    assert_eq!(depth, 9);
    let params = toy_params(11, depth + 1, 40, 2);
    let ctx = Ctx::new(&params, &[])?;
    let slots = 256;
    // Values in [−1, −ε] ∪ [ε, 1].
    let x: Vec<f64> = random_values(slots, 11, true)
        .iter()
        .map(|z| z.re.signum() * (eps + (1.0 - eps) * z.re.abs()))
        .collect();
    let top = depth + 1;
    let ct = ctx.encrypt_real(&x, slots, top)?;
    let s = approx::sign_with(&ctx.eval, &ct, &approx)?;
    assert_eq!((s.level(), s.scale()), (top - depth, ct.scale()));
    let have = ctx.decrypt(&s)?;
    let (mut dev_plain, mut dev_sign) = (0.0f64, 0.0f64);
    for (xi, h) in x.iter().zip(&have) {
        dev_plain = dev_plain.max((h.re - mm.evaluate_plain(*xi)).abs());
        dev_sign = dev_sign.max((h.re - xi.signum()).abs());
    }
    println!(
        "minimax [7,7,7] on N=2^11: |hom − plain| = {dev_plain:.2e} ({:.1} bits), |hom − sign| = {dev_sign:.3e}, plain error {:.3e}",
        -dev_plain.log2(),
        mm.error()
    );
    let noise = 2f64.powi(-15);
    assert!(dev_plain < noise, "CKKS noise {dev_plain}");
    assert!(dev_sign <= mm.error() + noise, "{dev_sign} > {} + noise", mm.error());
    // ReLU: one more level.
    let r = approx::relu_with(&ctx.eval, &ct, &approx)?;
    assert_eq!(r.level(), 0);
    let have = ctx.decrypt(&r)?;
    for (xi, h) in x.iter().zip(&have) {
        let want = xi * (1.0 + mm.evaluate_plain(*xi)) / 2.0;
        assert!((h.re - want).abs() < noise, "relu({xi}) = {} vs {want}", h.re);
    }
    // Not enough levels: named before any work.
    let low = ctx.encrypt_real(&x, slots, depth - 1)?;
    assert!(matches!(
        approx::sign_with(&ctx.eval, &low, &approx),
        Err(CircuitError::NotEnoughLevels { needed: 9, .. })
    ));
    Ok(())
}

#[test]
fn bad_minimax_inputs_are_errors() {
    assert_eq!(remez_sign(8, 0.1).unwrap_err(), CircuitError::BadDegree(8));
    assert!(matches!(remez_sign(7, 0.0), Err(CircuitError::Invalid(_))));
    assert!(matches!(minimax::sign(&[], 0.1), Err(CircuitError::Invalid(_))));
    assert!(matches!(minimax::sign(&[7, 6], 0.1), Err(CircuitError::BadDegree(6))));
}
