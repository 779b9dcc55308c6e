//! Polynomial evaluation: exact depth ⌈log2(d+1)⌉, exact output scale, precision of the
//! Chebyshev interpolant within 2 bits, odd specialisation, activations, depth errors.

use basalt_circuits::polynomial::approx::{helr_sigmoid3, relu, sign, sign_plain};
use basalt_circuits::polynomial::{Chebyshev, eval::plan, evaluate};
use basalt_circuits::testing::{Ctx, precision_bits_real, toy_params};
use basalt_circuits::{CircuitError, Result};

const SLOTS: usize = 256;

fn grid(a: f64, b: f64) -> Vec<f64> {
    (0..SLOTS).map(|i| a + (b - a) * i as f64 / (SLOTS - 1) as f64).collect()
}

fn run(ctx: &Ctx, p: &Chebyshev, f: impl Fn(f64) -> f64, level: usize) -> Result<(f64, f64, f64)> {
    let xs = grid(p.a, p.b);
    let ct = ctx.encrypt_real(&xs, SLOTS, level)?;
    let out = evaluate(&ctx.eval, &ct, p, None)?;
    let map = usize::from(!(p.a == -1.0 && p.b == 1.0));
    assert_eq!(level - out.level(), p.depth() + map, "degree {}: levels consumed", p.degree());
    assert_eq!(out.scale(), ct.scale(), "degree {}: output scale must be exact", p.degree());
    let have: Vec<f64> = ctx.decrypt(&out)?.iter().map(|z| z.re).collect();
    let interp: Vec<f64> = xs.iter().map(|&x| p.evaluate_plain(x)).collect();
    let exact: Vec<f64> = xs.iter().map(|&x| f(x)).collect();
    Ok((
        precision_bits_real(&interp, &have),
        precision_bits_real(&exact, &interp),
        precision_bits_real(&exact, &have),
    ))
}

#[test]
fn depth_scale_and_precision_across_degrees() -> Result<()> {
    let params = toy_params(11, 8, 40, 3);
    let ctx = Ctx::new(&params, &[])?;
    let f = |x: f64| 1.0 / (1.0 + (-8.0 * x).exp());
    for d in [1, 2, 3, 4, 7, 8, 15, 16, 31, 63, 127] {
        // On [-1, 1] the change of variable is free: exactly ⌈log2(d+1)⌉ levels.
        let p = Chebyshev::interpolate(f, -1.0, 1.0, d)?;
        let (he, interp, total) = run(&ctx, &p, f, 8)?;
        println!(
            "sigmoid d={d}: depth {}, HE vs interpolant {he:.1} b, interpolant {interp:.1} b, HE vs f {total:.1} b",
            p.depth()
        );
        assert!(he > 20.0, "d={d}: {he:.1} bits against the interpolant");
        assert!(total >= interp.min(he) - 2.0, "d={d}: {total:.1} vs {interp:.1}");
    }
    // Any target scale is reached exactly.
    let p = Chebyshev::interpolate(f, -1.0, 1.0, 15)?;
    let ct = ctx.encrypt_real(&grid(-1.0, 1.0), SLOTS, 8)?;
    let out = evaluate(&ctx.eval, &ct, &p, Some(2f64.powi(33)))?;
    assert_eq!(out.scale(), 2f64.powi(33));
    let have: Vec<f64> = ctx.decrypt(&out)?.iter().map(|z| z.re).collect();
    let want: Vec<f64> = grid(-1.0, 1.0).iter().map(|&x| p.evaluate_plain(x)).collect();
    assert!(precision_bits_real(&want, &have) > 20.0);
    // Another interval: one more level for the change of variable.
    let p = Chebyshev::interpolate(f64::exp, -1.0, 2.0, 15)?;
    let (he, interp, total) = run(&ctx, &p, f64::exp, 6)?;
    println!(
        "exp d=15 on [-1,2]: HE vs interpolant {he:.1} b, interpolant {interp:.1} b, HE vs f {total:.1}"
    );
    assert!(he > 18.0 && total >= interp.min(he) - 2.0);
    Ok(())
}

#[test]
fn odd_composite_sign_relu_and_sigmoid() -> Result<()> {
    let params = toy_params(11, 8, 40, 3);
    let ctx = Ctx::new(&params, &[])?;
    let xs = grid(-1.0, 1.0);
    let ct = ctx.encrypt_real(&xs, SLOTS, 8)?;
    let s = sign(&ctx.eval, &ct, 2)?;
    assert_eq!(8 - s.level(), 6, "two depth-3 compositions");
    let have: Vec<f64> = ctx.decrypt(&s)?.iter().map(|z| z.re).collect();
    let want: Vec<f64> = xs.iter().map(|&x| sign_plain(x, 2)).collect();
    let bits = precision_bits_real(&want, &have);
    println!("composite sign (2 steps): {bits:.1} bits vs its twin");
    assert!(bits > 18.0);
    // Away from 0 it is a sign: |x| ≥ 0.5 → within 0.01 of ±1 after 2 steps.
    for (x, y) in xs.iter().zip(&have) {
        if x.abs() >= 0.5 {
            assert!((y - x.signum()).abs() < 0.02, "sign({x}) = {y}");
        }
    }
    let r = relu(&ctx.eval, &ct, 2)?;
    assert_eq!(8 - r.level(), 7);
    let have: Vec<f64> = ctx.decrypt(&r)?.iter().map(|z| z.re).collect();
    let want: Vec<f64> = xs.iter().map(|&x| x * (1.0 + sign_plain(x, 2)) / 2.0).collect();
    assert!(precision_bits_real(&want, &have) > 18.0);
    // HELR's sigmoid: depth 2.
    let p = helr_sigmoid3();
    let xs8 = grid(-8.0, 8.0);
    let ct8 = ctx.encrypt_real(&xs8, SLOTS, 8)?;
    let out = evaluate(&ctx.eval, &ct8, &p, None)?;
    assert_eq!(8 - out.level(), 2 + 1, "depth 2, +1 for [-8, 8] → [-1, 1]");
    let have: Vec<f64> = ctx.decrypt(&out)?.iter().map(|z| z.re).collect();
    let want: Vec<f64> = xs8.iter().map(|&x| 0.5 - 0.0843 * x + 0.0002 * x * x * x).collect();
    assert!(precision_bits_real(&want, &have) > 20.0);
    Ok(())
}

#[test]
fn odd_polynomials_build_only_odd_powers() -> Result<()> {
    let params = toy_params(11, 6, 40, 3);
    let ctx = Ctx::new(&params, &[])?;
    let xs = grid(-1.0, 1.0);
    let ct = ctx.encrypt_real(&xs, SLOTS, 6)?;
    let odd = Chebyshev::interpolate(|x| (3.0 * x).sin(), -1.0, 1.0, 31)?.into_odd();
    let full = Chebyshev::interpolate(|x| (3.0 * x).sin() + 0.1 * x * x, -1.0, 1.0, 31)?;
    let count = |p: &Chebyshev| -> Result<(u64, Vec<f64>)> {
        let (out, c) =
            basalt_circuits::accounting::measure(params.n(), || evaluate(&ctx.eval, &ct, p, None));
        let have = ctx.decrypt(&out?)?.iter().map(|z| z.re).collect();
        Ok((c.key_switches, have))
    };
    let (k_odd, have) = count(&odd)?;
    let (k_full, _) = count(&full)?;
    println!("relinearizations: odd {k_odd}, generic {k_full}");
    assert!(k_odd < k_full, "odd {k_odd} vs generic {k_full}");
    assert_eq!(k_odd as usize, plan(&params, 6, &odd)?.products);
    assert_eq!(k_full as usize, plan(&params, 6, &full)?.products);
    let want: Vec<f64> = xs.iter().map(|&x| odd.evaluate_plain(x)).collect();
    assert!(precision_bits_real(&want, &have) > 20.0);
    Ok(())
}

#[test]
fn too_deep_polynomial_is_refused_before_any_work() -> Result<()> {
    let params = toy_params(10, 3, 40, 2);
    let ctx = Ctx::new(&params, &[])?;
    let p = Chebyshev::interpolate(f64::sin, -1.0, 1.0, 15)?;
    let ct = ctx.encrypt_real(&[0.5], 64, 3)?;
    let err = evaluate(&ctx.eval, &ct, &p, None).unwrap_err();
    assert_eq!(err, CircuitError::NotEnoughLevels { needed: 4, available: 3, level: 3 });
    assert!(err.to_string().contains("needs 4 levels"));
    // Degree 7 fits exactly in the 3 levels left.
    let q = Chebyshev::interpolate(f64::sin, -1.0, 1.0, 7)?;
    assert_eq!(plan(&params, 3, &q)?.out_level, 0);
    Ok(())
}

#[test]
fn trace_mode_records_the_same_kernels() -> Result<()> {
    let params = toy_params(10, 6, 40, 3);
    let ctx = Ctx::new(&params, &[])?;
    let p = Chebyshev::interpolate(f64::tanh, -2.0, 2.0, 23)?;
    let ct = ctx.encrypt_real(&grid(-2.0, 2.0)[..64], 64, 6)?;
    let mut sym = basalt_ckks::Ciphertext::symbolic(&params, 6)?;
    sym.set_scale(ct.scale());
    let (a, ta) = basalt_trace::record(|| evaluate(&ctx.eval, &ct, &p, None));
    let (b, tb) = basalt_trace::record(|| evaluate(&ctx.eval, &sym, &p, None));
    assert_eq!(a?.level(), b?.level());
    assert_eq!(ta, tb);
    Ok(())
}

#[test]
fn merged_rescales_scope_fuses_every_product_of_an_evaluation() -> Result<()> {
    use basalt_circuits::polynomial::{evaluate_with, merged_rescales, with_merged_rescales};
    use basalt_trace::KernelKind;
    let params = toy_params(10, 8, 40, 3);
    let ctx = Ctx::new(&params, &[])?;
    // Degree 23 builds T_2, T_3, T_4, T_8, T_16 by Chebyshev steps (2·T_a·T_b − T_{a−b},
    // changed before the rescale) besides the giant-step products.
    let p = Chebyshev::interpolate(f64::tanh, -1.0, 1.0, 23)?;
    let xs = grid(-1.0, 1.0);
    let ct = ctx.encrypt_real(&xs, SLOTS, 8)?;
    let (plain, t_plain) = basalt_trace::record(|| evaluate(&ctx.eval, &ct, &p, None));
    let (scoped, t_scoped) =
        basalt_trace::record(|| with_merged_rescales(|| evaluate(&ctx.eval, &ct, &p, None)));
    let (merged, t_merged) = basalt_trace::record(|| evaluate_with(&ctx.eval, &ct, &p, None, true));
    let (plain, scoped, merged) = (plain?, scoped?, merged?);
    // The scope is evaluate_with(.., true), kernel for kernel, and it is left behind.
    assert_eq!(t_scoped, t_merged);
    assert!(!merged_rescales());
    assert!(with_merged_rescales(|| with_merged_rescales(|| true) && merged_rescales()));
    assert!(!merged_rescales());
    // Same level and scale; fewer limb-NTTs (each fused product drops a rescale's chain).
    assert_eq!((scoped.level(), scoped.scale()), (plain.level(), plain.scale()));
    let ntts = |t: &basalt_trace::Trace| t.count(KernelKind::Ntt) + t.count(KernelKind::Intt);
    assert!(ntts(&t_scoped) < ntts(&t_plain), "{} vs {}", ntts(&t_scoped), ntts(&t_plain));
    // The values agree with the interpolant as the unfused evaluation's do.
    let want: Vec<f64> = xs.iter().map(|&x| p.evaluate_plain(x)).collect();
    for out in [&plain, &scoped, &merged] {
        let have: Vec<f64> = ctx.decrypt(out)?.iter().map(|z| z.re).collect();
        assert!(precision_bits_real(&want, &have) > 20.0);
    }
    Ok(())
}
