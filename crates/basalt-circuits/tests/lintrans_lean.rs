//! Linear transforms that hold little: diagonals encoded at use (the same output and the same
//! trace as the pre-encoded transform, nothing stored) and nested giant steps (the same product
//! with fewer distinct Galois keys; counts equal to the closed forms), against a dense matvec.

use basalt_circuits::accounting::measure;
use basalt_circuits::lintrans::{
    Diagonals, GscOrder, Hoisting, LinearTransform, Source, Strategy, dense_matvec,
};
use basalt_circuits::testing::{
    Ctx, precision_bits, random_matrix, random_values, symbolic_like, toy_params,
};
use basalt_circuits::{CircuitError, Result};
use num_complex::Complex64;

const SLOTS: usize = 64;
const LEVEL: usize = 3;

/// A sparse matrix whose diagonals sit at `block·16 + offset` (a multiplexed convolution's
/// shape: a channel-block shift plus a small spatial one) and its dense form.
fn block_matrix(seed: u64) -> (Vec<Vec<f64>>, Diagonals) {
    let w = random_matrix(SLOTS, SLOTS, 1.0, seed);
    let keep = |k: usize| matches!(k % 16, 0 | 1 | 2 | 14 | 15);
    let m: Vec<Vec<f64>> = (0..SLOTS)
        .map(|o| {
            (0..SLOTS).map(|i| if keep((i + SLOTS - o) % SLOTS) { w[o][i] } else { 0.0 }).collect()
        })
        .collect();
    let d = Diagonals::from_dense_real(&m, SLOTS).expect("a square matrix");
    (m, d)
}

fn orders() -> Vec<(Hoisting, GscOrder)> {
    let gsc = GscOrder::GiantStepCentric { max_partials: 2, of_limb: false };
    vec![
        (Hoisting::None, GscOrder::BabyStepCentric),
        (Hoisting::Single, GscOrder::BabyStepCentric),
        (Hoisting::Single, gsc),
        (Hoisting::Double, GscOrder::BabyStepCentric),
    ]
}

#[test]
fn diagonals_encoded_at_use_compute_and_trace_as_pre_encoded_ones() -> Result<()> {
    let params = toy_params(10, LEVEL, 40, 2);
    let (m, diags) = block_matrix(5);
    let x = random_values(SLOTS, 9, true);
    let xr: Vec<f64> = x.iter().map(|z| z.re).collect();
    let want: Vec<Complex64> =
        dense_matvec(&m, &xr).into_iter().map(|v| Complex64::new(v, 0.0)).collect();
    for (hoisting, order) in orders() {
        let s = Strategy::Bsgs { n1: 4, hoisting, order };
        let stored = LinearTransform::new(&params, diags.clone(), s, LEVEL)?;
        let lean =
            LinearTransform::encoded_at_use(&params, Source::Stored(diags.clone()), s, LEVEL, 1.0)?;
        assert_eq!(lean.stored_plaintext_bytes(), 0);
        assert!(stored.stored_plaintext_bytes() > 0);
        let ctx = Ctx::new(&params, &stored.rotations())?;
        let ct = ctx.encrypt(&x, SLOTS, LEVEL)?;
        let (a, t_stored) = basalt_trace::record(|| stored.evaluate(&ctx.eval, &ct));
        let (b, t_lean) = basalt_trace::record(|| lean.evaluate(&ctx.eval, &ct));
        let (a, b) = (ctx.decrypt(&a?)?, ctx.decrypt(&b?)?);
        // Encoding is deterministic: the same plaintexts, the same ciphertext operations.
        assert_eq!(a, b, "{hoisting:?} {order:?}");
        assert!(precision_bits(&want, &b) > 18.0, "{hoisting:?} {order:?}");
        assert_eq!(t_stored, t_lean, "{hoisting:?} {order:?}: the encoding is not traced");
        assert_eq!(lean.predicted_cost(), stored.predicted_cost());
        // The trace of a symbolic input is the shapes' too.
        let sym = symbolic_like(&params, &ct)?;
        let shapes = LinearTransform::shapes(&params, diags.indices(), SLOTS, s, LEVEL, 1.0)?;
        let (_, t_shapes) = basalt_trace::record(|| shapes.evaluate(&ctx.eval, &sym));
        assert_eq!(t_lean, t_shapes, "{hoisting:?} {order:?}");
    }
    // OF-Limb keeps one limb per diagonal already: at-use encoding is refused, named.
    let of_limb = GscOrder::GiantStepCentric { max_partials: 2, of_limb: true };
    let s = Strategy::Bsgs { n1: 4, hoisting: Hoisting::Single, order: of_limb };
    let e = LinearTransform::encoded_at_use(&params, Source::Stored(diags), s, LEVEL, 1.0);
    assert!(matches!(e, Err(CircuitError::Invalid(ref m)) if m.contains("OF-Limb")), "{e:?}");
    Ok(())
}

#[test]
fn nested_giant_steps_compute_the_product_with_fewer_keys() -> Result<()> {
    let params = toy_params(10, LEVEL, 40, 2);
    let (m, diags) = block_matrix(6);
    let x = random_values(SLOTS, 10, true);
    let xr: Vec<f64> = x.iter().map(|z| z.re).collect();
    let want: Vec<Complex64> =
        dense_matvec(&m, &xr).into_iter().map(|v| Complex64::new(v, 0.0)).collect();
    for (hoisting, order) in orders().into_iter().filter(|(h, _)| *h != Hoisting::Double) {
        let s = Strategy::Bsgs { n1: 2, hoisting, order };
        let flat = LinearTransform::new(&params, diags.clone(), s, LEVEL)?;
        let nested = flat.clone().with_outer_giant_steps(16)?;
        // Giant shifts 2j = 16·J + m: keys for the inner m and outer 16·J, not every 2j.
        let (fr, nr) = (flat.rotations(), nested.rotations());
        assert!(nr.len() < fr.len(), "{fr:?} vs {nr:?}");
        assert!(nr.iter().all(|&r| r % 16 == 0 || r < 16), "{nr:?}");
        let mut keys = fr.clone();
        keys.extend(&nr);
        let ctx = Ctx::new(&params, &keys)?;
        let ct = ctx.encrypt(&x, SLOTS, LEVEL)?;
        let (out, counts) = measure(params.n(), || nested.evaluate(&ctx.eval, &ct));
        let out = out?;
        assert_eq!((out.level(), out.scale()), (LEVEL - 1, ct.scale()));
        let bits = precision_bits(&want, &ctx.decrypt(&out)?);
        assert!(bits > 18.0, "{hoisting:?} {order:?}: {bits:.1} bits");
        assert_eq!(counts, nested.predicted_cost(), "{hoisting:?} {order:?}: trace vs closed form");
        // The nested transform runs with its own keys alone.
        let own = Ctx::new(&params, &nr)?;
        let ct = own.encrypt(&x, SLOTS, LEVEL)?;
        let bits = precision_bits(&want, &own.decrypt(&nested.evaluate(&own.eval, &ct)?)?);
        assert!(bits > 18.0, "{bits:.1} bits with the nested keys alone");
    }
    // Strides that do not nest, and double hoisting, are refused.
    let s = Strategy::Bsgs { n1: 4, hoisting: Hoisting::Single, order: GscOrder::BabyStepCentric };
    let lt = LinearTransform::new(&params, diags.clone(), s, LEVEL)?;
    for bad in [4, 6, 2 * SLOTS] {
        assert!(lt.clone().with_outer_giant_steps(bad).is_err(), "{bad}");
    }
    let s = Strategy::Bsgs { n1: 4, hoisting: Hoisting::Double, order: GscOrder::BabyStepCentric };
    let lt = LinearTransform::new(&params, diags, s, LEVEL)?;
    assert!(lt.with_outer_giant_steps(16).is_err());
    Ok(())
}
