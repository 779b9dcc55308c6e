//! Comparison against its cleartext twin on a small (insecure) ring: sign, min/max, and the
//! refresh points of a composition deeper than the chain.

use basalt_circuits::compare::{self, Factor};
use basalt_circuits::testing::{Ctx, precision_bits_real, toy_params};
use basalt_ckks::Ciphertext;

const SLOTS: usize = 64;

/// Values in `[−1, −2^−4] ∪ [2^−4, 1]` (alternating signs), reproducible.
fn spread(n: usize, seed: u64) -> Vec<f64> {
    basalt_circuits::testing::random_values(n, seed, true)
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let m = 2f64.powi(-4) + (1.0 - 2f64.powi(-4)) * v.re.abs();
            if i % 2 == 0 { m } else { -m }
        })
        .collect()
}

fn real(ctx: &Ctx, ct: &Ciphertext) -> Vec<f64> {
    ctx.decrypt(ct).unwrap().iter().take(SLOTS).map(|z| z.re).collect()
}

#[test]
fn sign_and_min_max_match_their_twins() {
    // g_3, g_3, f_3: depth 9; min/max one more.
    let stages = compare::composite(2, 1);
    let params = toy_params(11, 11, 40, 3);
    let ctx = Ctx::new(&params, &[]).unwrap();
    let top = params.max_level();
    let x = spread(SLOTS, 3);
    let ct = ctx.encrypt_real(&x, SLOTS, top).unwrap();
    let s = compare::sign(&ctx.eval, &ct, &stages).unwrap();
    assert_eq!(s.level(), top - 9);
    let twin: Vec<f64> = x.iter().map(|&v| compare::sign_plain(v, &stages)).collect();
    let bits = precision_bits_real(&twin, &real(&ctx, &s));
    eprintln!("sign vs twin: {bits:.1} bits");
    assert!(bits > 14.0, "{bits}");
    // The twin is a sign: |x| >= 2^-4 lands within 2^-6 of ±1 after three stages.
    assert!(x.iter().zip(&twin).all(|(v, t)| (t - v.signum()).abs() < 2f64.powi(-6)));
    // Too deep a list is refused before any work.
    let e = compare::sign(&ctx.eval, &ct, &compare::composite(3, 1)).unwrap_err();
    assert!(e.to_string().contains("levels"), "{e}");

    // min / max of two vectors in (0, 1): exact scales, so both are usable as they come.
    let a: Vec<f64> = spread(SLOTS, 5).iter().map(|v| 0.5 + 0.45 * v).collect();
    let b: Vec<f64> = spread(SLOTS, 6).iter().map(|v| 0.5 - 0.45 * v.abs()).collect();
    let (ca, cb) =
        (ctx.encrypt_real(&a, SLOTS, top).unwrap(), ctx.encrypt_real(&b, SLOTS, top).unwrap());
    let mut never = |_: &Ciphertext| -> basalt_circuits::Result<Ciphertext> {
        panic!("no refresh needed at this depth")
    };
    let (lo, hi) = compare::min_max(&ctx.eval, &ca, &cb, &stages, &mut never).unwrap();
    assert_eq!(lo.level(), top - 10);
    assert!((lo.scale() / ca.scale() - 1.0).abs() < 1e-12);
    let (tlo, thi): (Vec<f64>, Vec<f64>) =
        a.iter().zip(&b).map(|(&p, &q)| compare::min_max_plain(p, q, &stages)).unzip();
    let (blo, bhi) =
        (precision_bits_real(&tlo, &real(&ctx, &lo)), precision_bits_real(&thi, &real(&ctx, &hi)));
    eprintln!("min {blo:.1} bits, max {bhi:.1} bits vs twin");
    assert!(blo > 14.0 && bhi > 14.0);
    let exact_lo: Vec<f64> = a.iter().zip(&b).map(|(p, q)| p.min(*q)).collect();
    assert!(precision_bits_real(&exact_lo, &tlo) > 4.0);
}

/// A composition deeper than the chain: `refresh` (here a decrypt-and-re-encrypt stand-in for a
/// bootstrap, counted) runs exactly where a stage does not fit, and the result still follows
/// the twin.
#[test]
fn deep_compositions_refresh_between_stages() {
    let params = toy_params(11, 7, 40, 2);
    let ctx = Ctx::new(&params, &[]).unwrap();
    let top = params.max_level();
    let stages = compare::composite(3, 2); // depth 15 on a 7-level chain
    let x = spread(SLOTS, 9);
    let ct = ctx.encrypt_real(&x, SLOTS, top).unwrap();
    let mut refreshed = Vec::new();
    let mut refresh = |c: &Ciphertext| -> basalt_circuits::Result<Ciphertext> {
        refreshed.push(c.level());
        ctx.encrypt_real(&real(&ctx, c), SLOTS, top)
    };
    let s = compare::sign_refreshed(&ctx.eval, &ct, &stages, &mut refresh).unwrap();
    // 7 levels hold two depth-3 stages: refresh before the 3rd and the 5th, at level 1.
    assert_eq!(refreshed, vec![1, 1]);
    let twin: Vec<f64> = x.iter().map(|&v| compare::sign_plain(v, &stages)).collect();
    assert!(precision_bits_real(&twin, &real(&ctx, &s)) > 14.0);
    // rescale_to lands on the asked scale exactly, with a per-slot factor.
    let mask: Vec<f64> = (0..SLOTS).map(|i| (i % 2) as f64).collect();
    let m =
        compare::rescale_to(&ctx.eval, &ct, Factor::Slots(&mask), top - 2, 2f64.powi(39)).unwrap();
    assert_eq!(m.level(), top - 2);
    assert!((m.scale() / 2f64.powi(39) - 1.0).abs() < 1e-12);
    let want: Vec<f64> = x.iter().zip(&mask).map(|(v, k)| v * k).collect();
    assert!(precision_bits_real(&want, &real(&ctx, &m)) > 20.0);
}
