//! `LinearTransform::evaluate_sum`: `M_0·x + M_1·y` in one BSGS pass equals the two products
//! added, reads each baby-step key for both inputs back to back and shares the giant steps.

use basalt_circuits::lintrans::{Diagonals, GscOrder, Hoisting, LinearTransform, Strategy};
use basalt_circuits::testing::{Ctx, precision_bits_real, random_matrix, toy_params};
use basalt_circuits::{CircuitError, Result};
use basalt_trace::{Event, Kernel};

const SLOTS: usize = 16;
const LEVEL: usize = 2;

fn bsgs(hoisting: Hoisting) -> Strategy {
    Strategy::Bsgs { n1: 4, hoisting, order: GscOrder::BabyStepCentric }
}

/// Key loads in a trace (one per key switch).
fn key_loads(t: &basalt_trace::Trace) -> usize {
    t.events.iter().filter(|e| matches!(e, Event::Kernel(Kernel::KeyLoad { .. }))).count()
}

#[test]
fn a_summed_pass_equals_the_two_products_with_shared_giant_steps() -> Result<()> {
    let params = toy_params(10, LEVEL, 40, 2);
    let (a, b) = (random_matrix(SLOTS, SLOTS, 0.5, 1), random_matrix(SLOTS, SLOTS, 0.5, 2));
    let lt = |m: &[Vec<f64>], h| {
        LinearTransform::new(&params, Diagonals::from_dense_real(m, SLOTS)?, bsgs(h), LEVEL)
    };
    let (la, lb) = (lt(&a, Hoisting::Single)?, lt(&b, Hoisting::Single)?);
    let ctx = Ctx::new(&params, &la.rotations())?;
    let x = random_matrix(1, SLOTS, 1.0, 3).remove(0);
    let y = random_matrix(1, SLOTS, 1.0, 4).remove(0);
    let (cx, cy) = (ctx.encrypt_real(&x, SLOTS, LEVEL)?, ctx.encrypt_real(&y, SLOTS, LEVEL)?);

    let (sum, t_sum) = basalt_trace::record(|| {
        LinearTransform::evaluate_sum(&ctx.eval, &[(&la, &cx), (&lb, &cy)])
    });
    let (sep, t_sep) = basalt_trace::record(|| -> Result<_> {
        Ok(ctx.eval.add(&la.evaluate(&ctx.eval, &cx)?, &lb.evaluate(&ctx.eval, &cy)?)?)
    });
    let (sum, sep) = (sum?, sep?);
    assert_eq!((sum.level(), sum.scale()), (sep.level(), sep.scale()));
    let want: Vec<f64> =
        (0..SLOTS).map(|r| (0..SLOTS).map(|c| a[r][c] * x[c] + b[r][c] * y[c]).sum()).collect();
    let re = |v: Vec<num_complex::Complex64>| v[..SLOTS].iter().map(|z| z.re).collect::<Vec<_>>();
    let (have, have_sep) = (re(ctx.decrypt(&sum)?), re(ctx.decrypt(&sep)?));
    assert!(precision_bits_real(&want, &have) > 20.0);
    assert!(precision_bits_real(&want, &have_sep) > 20.0);
    // 16 diagonals, n1 = 4: 3 baby rotations per input, 3 giant rotations shared (6 apart).
    assert_eq!((key_loads(&t_sum), key_loads(&t_sep)), (2 * 3 + 3, 2 * 3 + 2 * 3));
    // Both inputs' rotations by each baby step run back to back (one key read on a machine
    // that keeps it): the automorphisms come in equal pairs.
    let galois: Vec<u64> = t_sum
        .kernels()
        .filter_map(|k| match *k {
            Kernel::Automorph { galois, .. } => Some(galois),
            _ => None,
        })
        .collect();
    assert!(galois[..12].chunks(2).all(|p| p[0] == p[1]), "{galois:?}");
    // Each pair's key is named (the simulator's on-chip store can then serve the second read).
    let named = t_sum.events.iter().filter(|e| matches!(e, Event::Key { .. })).count();
    assert_eq!(named, 2 * 3 + 3, "every key load named");
    Ok(())
}

#[test]
fn only_matching_single_hoisted_transforms_are_summed() -> Result<()> {
    let params = toy_params(10, LEVEL, 40, 2);
    let m = random_matrix(SLOTS, SLOTS, 0.5, 1);
    let lt = |s| LinearTransform::new(&params, Diagonals::from_dense_real(&m, SLOTS)?, s, LEVEL);
    let (single, double) = (lt(bsgs(Hoisting::Single))?, lt(bsgs(Hoisting::Double))?);
    let other_split =
        lt(Strategy::Bsgs { n1: 8, hoisting: Hoisting::Single, order: GscOrder::BabyStepCentric })?;
    let mut rots = single.rotations();
    rots.extend(other_split.rotations());
    let ctx = Ctx::new(&params, &rots)?;
    let ct = ctx.encrypt_real(&[0.5; SLOTS], SLOTS, LEVEL)?;
    let invalid = |r: Result<_>| matches!(r, Err(CircuitError::Invalid(_)));
    assert!(invalid(LinearTransform::evaluate_sum(&ctx.eval, &[])));
    assert!(invalid(LinearTransform::evaluate_sum(&ctx.eval, &[(&double, &ct)])));
    assert!(invalid(LinearTransform::evaluate_sum(
        &ctx.eval,
        &[(&single, &ct), (&other_split, &ct)]
    )));
    Ok(())
}

/// The giant-step-centric sum (each baby step rotates both inputs in one pass, at most
/// `max_partials` partial sums at once) is bit-identical to the baby-step-centric one.
#[test]
fn a_giant_step_centric_sum_is_bit_identical() -> Result<()> {
    let params = toy_params(10, LEVEL, 40, 2);
    let (a, b) = (random_matrix(SLOTS, SLOTS, 0.5, 5), random_matrix(SLOTS, SLOTS, 0.5, 6));
    let x = random_matrix(1, SLOTS, 1.0, 7).remove(0);
    let y = random_matrix(1, SLOTS, 1.0, 8).remove(0);
    for h in [Hoisting::None, Hoisting::Single] {
        let lt = |m: &[Vec<f64>], order| {
            let s = Strategy::Bsgs { n1: 4, hoisting: h, order };
            LinearTransform::new(&params, Diagonals::from_dense_real(m, SLOTS)?, s, LEVEL)
        };
        let gsc = GscOrder::GiantStepCentric { max_partials: 3, of_limb: true };
        let (ga, gb) = (lt(&a, gsc)?, lt(&b, gsc)?);
        let (ba, bb) = (lt(&a, GscOrder::BabyStepCentric)?, lt(&b, GscOrder::BabyStepCentric)?);
        let ctx = Ctx::new(&params, &ga.rotations())?;
        let (cx, cy) = (ctx.encrypt_real(&x, SLOTS, LEVEL)?, ctx.encrypt_real(&y, SLOTS, LEVEL)?);
        let g = LinearTransform::evaluate_sum(&ctx.eval, &[(&ga, &cx), (&gb, &cy)])?;
        let bsc = LinearTransform::evaluate_sum(&ctx.eval, &[(&ba, &cx), (&bb, &cy)])?;
        assert_eq!(g, bsc, "{h:?}");
    }
    Ok(())
}
