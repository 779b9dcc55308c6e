//! Linear transforms: every strategy against the cleartext twin and a dense matvec, exact
//! output scale, GSC bit-identity, trace counts equal to the closed forms, errors.

use basalt_circuits::accounting::measure;
use basalt_circuits::lintrans::{
    Diagonals, GscOrder, Hoisting, LinearTransform, Strategy, dense_matvec, rotations_for,
};
use basalt_circuits::testing::{
    Ctx, precision_bits, random_matrix, random_values, symbolic_like, toy_params,
};
use basalt_circuits::{CircuitError, Result};
use basalt_ckks::CkksError;
use num_complex::Complex64;

const SLOTS: usize = 64;
const LEVEL: usize = 3;

fn strategies() -> Vec<(String, Strategy)> {
    let mut v = vec![
        ("diag-nh".to_string(), Strategy::Diagonal { hoisting: Hoisting::None }),
        ("diag-sh".to_string(), Strategy::Diagonal { hoisting: Hoisting::Single }),
    ];
    for h in [Hoisting::None, Hoisting::Single, Hoisting::Double] {
        for (o, order) in [
            ("bsc", GscOrder::BabyStepCentric),
            ("gsc", GscOrder::GiantStepCentric { max_partials: 3, of_limb: true }),
            ("gsc-stored", GscOrder::GiantStepCentric { max_partials: 3, of_limb: false }),
        ] {
            v.push((format!("bsgs8-{h:?}-{o}"), Strategy::Bsgs { n1: 8, hoisting: h, order }));
        }
    }
    v.push(("auto4".to_string(), Strategy::Auto { max_partials: 4 }));
    v
}

#[test]
fn all_strategies_match_twin_and_dense_matvec() -> Result<()> {
    let params = toy_params(10, LEVEL, 40, 2);
    let m = random_matrix(SLOTS, SLOTS, 1.0, 7);
    let diags = Diagonals::from_dense_real(&m, SLOTS)?;
    let mut rots: Vec<i64> = Vec::new();
    for (_, s) in strategies() {
        rots.extend(rotations_for(&params, &diags, s, LEVEL)?);
    }
    rots.sort_unstable();
    rots.dedup();
    let ctx = Ctx::new(&params, &rots)?;
    let x = random_values(SLOTS, 3, true);
    let xr: Vec<f64> = x.iter().map(|z| z.re).collect();
    let want: Vec<Complex64> =
        dense_matvec(&m, &xr).into_iter().map(|v| Complex64::new(v, 0.0)).collect();
    let twin = diags.evaluate_plain(&x)?;
    assert!(precision_bits(&want, &twin) > 40.0, "twin vs dense matvec");
    let ct = ctx.encrypt(&x, SLOTS, LEVEL)?;
    for (name, s) in strategies() {
        let lt = LinearTransform::new(&params, diags.clone(), s, LEVEL)?;
        let (out, counts) = measure(params.n(), || lt.evaluate(&ctx.eval, &ct));
        let out = out?;
        assert_eq!(out.level(), LEVEL - 1, "{name}");
        assert_eq!(out.scale(), ct.scale(), "{name}: output scale must be exact");
        let bits = precision_bits(&twin, &ctx.decrypt(&out)?);
        println!("{name}: plan {:?}, {bits:.1} bits, {counts:?}", lt.plan());
        assert!(bits > 18.0, "{name}: precision {bits:.1} bits");
        assert_eq!(counts, lt.predicted_cost(), "{name}: trace vs closed form");
    }
    Ok(())
}

#[test]
fn rotation_counts_n_versus_n1_plus_n2() -> Result<()> {
    let params = toy_params(10, 2, 40, 1);
    let diags = Diagonals::from_dense_real(&random_matrix(SLOTS, SLOTS, 1.0, 1), SLOTS)?;
    let n = SLOTS as u64;
    let diag = LinearTransform::new(
        &params,
        diags.clone(),
        Strategy::Diagonal { hoisting: Hoisting::None },
        2,
    )?;
    assert_eq!(diag.predicted_cost().rotations, n - 1);
    let b = Strategy::Bsgs { n1: 8, hoisting: Hoisting::Single, order: GscOrder::BabyStepCentric };
    let bsgs = LinearTransform::new(&params, diags.clone(), b, 2)?;
    assert_eq!(bsgs.predicted_cost().rotations, (8 - 1) + (8 - 1));
    // Under the memory bound the automatic plan never keeps more than 4 partial sums.
    let auto = LinearTransform::new(&params, diags, Strategy::Auto { max_partials: 4 }, 2)?;
    assert!(auto.plan().n1 * 4 >= SLOTS, "plan {:?}", auto.plan());
    Ok(())
}

#[test]
fn gsc_order_is_bit_identical_to_baby_step_centric() -> Result<()> {
    let params = toy_params(10, 2, 40, 2);
    let mut map = std::collections::BTreeMap::new();
    for (t, k) in [0i64, 1, 2, 5, 9, 17, 30, 33, -1, -7].into_iter().enumerate() {
        map.insert(k, random_values(SLOTS, 100 + t as u64, false));
    }
    let diags = Diagonals::from_map(SLOTS, map)?;
    let bsc = |h| Strategy::Bsgs { n1: 4, hoisting: h, order: GscOrder::BabyStepCentric };
    let gsc = |h| Strategy::Bsgs {
        n1: 4,
        hoisting: h,
        order: GscOrder::GiantStepCentric { max_partials: 2, of_limb: true },
    };
    let rots = rotations_for(&params, &diags, bsc(Hoisting::Single), 2)?;
    let ctx = Ctx::new(&params, &rots)?;
    let x = random_values(SLOTS, 5, false);
    let ct = ctx.encrypt(&x, SLOTS, 2)?;
    for h in [Hoisting::None, Hoisting::Single, Hoisting::Double] {
        let a =
            LinearTransform::new(&params, diags.clone(), bsc(h), 2)?.evaluate(&ctx.eval, &ct)?;
        let g = LinearTransform::new(&params, diags.clone(), gsc(h), 2)?;
        // One limb stored per diagonal vs all 3 Q limbs (plus the k P limbs for Q∪P diagonals).
        let limbs = 3 + if h == Hoisting::Double { params.k() as u64 } else { 0 };
        assert!(
            g.stored_plaintext_bytes() * limbs
                == LinearTransform::new(&params, diags.clone(), bsc(h), 2)?
                    .stored_plaintext_bytes()
        );
        let b = g.evaluate(&ctx.eval, &ct)?;
        assert_eq!(a, b, "{h:?}: GSC must be bit-identical");
        // The GSC loop with every limb of every diagonal stored (no OF-Limb): the same bytes
        // as the baby-step-centric store, no regeneration NTTs, the same result.
        let stored = Strategy::Bsgs {
            n1: 4,
            hoisting: h,
            order: GscOrder::GiantStepCentric { max_partials: 2, of_limb: false },
        };
        let s = LinearTransform::new(&params, diags.clone(), stored, 2)?;
        assert_eq!(s.stored_plaintext_bytes(), g.stored_plaintext_bytes() * limbs);
        let (c, counts) = measure(params.n(), || s.evaluate(&ctx.eval, &ct));
        assert_eq!(c?, a, "{h:?}: GSC with stored diagonals must be bit-identical");
        let (_, of_limb_counts) = measure(params.n(), || g.evaluate(&ctx.eval, &ct));
        // OF-Limb regenerates each of the 10 diagonals at its one use: l + 1 (+ k) NTTs each.
        assert_eq!(of_limb_counts.ntt_limbs - counts.ntt_limbs, 10 * limbs, "{h:?}");
        let bits = precision_bits(&diags.evaluate_plain(&x)?, &ctx.decrypt(&b)?);
        assert!(bits > 18.0, "{h:?}: {bits:.1} bits");
    }
    Ok(())
}

#[test]
fn missing_key_and_bad_inputs_are_named() -> Result<()> {
    let params = toy_params(10, 2, 40, 1);
    let diags = Diagonals::from_dense_real(&random_matrix(8, 8, 1.0, 2), SLOTS)?;
    let s = Strategy::Bsgs { n1: 4, hoisting: Hoisting::Single, order: GscOrder::BabyStepCentric };
    let lt = LinearTransform::new(&params, diags, s, 2)?;
    let mut rots = lt.rotations();
    let dropped = rots.pop().expect("needs rotations");
    let ctx = Ctx::new(&params, &rots)?;
    let ct = ctx.encrypt(&random_values(SLOTS, 1, true), SLOTS, 2)?;
    let g = params.ring().galois_element_for_rotation(dropped);
    let err = lt.evaluate(&ctx.eval, &ct).unwrap_err();
    assert_eq!(
        err,
        CircuitError::Ckks(CkksError::MissingRotationKey { rotation: dropped, galois: g })
    );
    assert!(err.to_string().contains(&format!("rotation by {dropped}")));
    // Wrong level, wrong slot count, level 0.
    let low = ctx.eval.drop_level(&ct, 1)?;
    assert!(matches!(
        lt.evaluate(&ctx.eval, &low),
        Err(CircuitError::Ckks(CkksError::LevelMismatch { .. }))
    ));
    let other = ctx.encrypt(&random_values(32, 1, true), 32, 2)?;
    assert!(matches!(lt.evaluate(&ctx.eval, &other), Err(CircuitError::SlotMismatch { .. })));
    let d = Diagonals::from_dense_real(&random_matrix(8, 8, 1.0, 2), SLOTS)?;
    assert!(matches!(
        LinearTransform::new(&params, d, s, 0),
        Err(CircuitError::NotEnoughLevels { .. })
    ));
    let too_big = Diagonals::from_dense_real(&random_matrix(4, 8, 1.0, 2), 1024)?;
    assert!(LinearTransform::new(&params, too_big, s, 2).is_err(), "1024 slots > N/2 = 512");
    Ok(())
}

#[test]
fn trace_mode_records_the_same_kernels_as_the_real_run() -> Result<()> {
    let params = toy_params(10, 3, 40, 2);
    let diags = Diagonals::from_dense_real(&random_matrix(SLOTS, SLOTS, 1.0, 4), SLOTS)?;
    for s in [
        Strategy::Auto { max_partials: 2 },
        Strategy::Bsgs { n1: 8, hoisting: Hoisting::Double, order: GscOrder::BabyStepCentric },
        Strategy::Bsgs {
            n1: 8,
            hoisting: Hoisting::Double,
            order: GscOrder::GiantStepCentric { max_partials: 2, of_limb: false },
        },
    ] {
        let lt = LinearTransform::new(&params, diags.clone(), s, LEVEL)?;
        // A shape-only transform records what the encoded one runs, whatever its store.
        let shapes = LinearTransform::shapes(&params, diags.indices(), SLOTS, s, LEVEL, 1.0)?;
        let ctx = Ctx::new(&params, &lt.rotations())?;
        let ct = ctx.encrypt(&random_values(SLOTS, 8, true), SLOTS, LEVEL)?;
        let sym = symbolic_like(&params, &ct)?;
        let (real, t_real) = basalt_trace::record(|| lt.evaluate(&ctx.eval, &ct));
        let (shape, t_sym) = basalt_trace::record(|| lt.evaluate(&ctx.eval, &sym));
        assert!(shape?.is_symbolic() && !real?.is_symbolic());
        assert_eq!(t_real, t_sym, "{s:?}: the trace must not depend on the data");
        let (_, t_shape) = basalt_trace::record(|| shapes.evaluate(&ctx.eval, &sym));
        assert_eq!(t_real, t_shape, "{s:?}: shapes must record what the encoded transform runs");
    }
    Ok(())
}

#[test]
fn shape_only_gsc_transforms_trace_of_limb_loads_like_the_encoded_ones() -> Result<()> {
    use basalt_trace::{Event, Kernel};
    let params = toy_params(10, 3, 40, 2);
    let diags = Diagonals::from_dense_real(&random_matrix(SLOTS, SLOTS, 1.0, 4), SLOTS)?;
    for h in [Hoisting::Single, Hoisting::Double] {
        let order = GscOrder::GiantStepCentric { max_partials: 4, of_limb: true };
        let s = Strategy::Bsgs { n1: 8, hoisting: h, order };
        let lt = LinearTransform::new(&params, diags.clone(), s, LEVEL)?;
        let shapes = LinearTransform::shapes(&params, diags.indices(), SLOTS, s, LEVEL, 1.0)?;
        let ctx = Ctx::new(&params, &lt.rotations())?;
        let ct = ctx.encrypt(&random_values(SLOTS, 8, true), SLOTS, LEVEL)?;
        let sym = symbolic_like(&params, &ct)?;
        let (real, t_real) = basalt_trace::record(|| lt.evaluate(&ctx.eval, &ct));
        let (_, t_shape) = basalt_trace::record(|| shapes.evaluate(&ctx.eval, &sym));
        real?;
        assert_eq!(t_real, t_shape, "{h:?}: shapes must record what the encoded transform runs");
        // OF-Limb: one stored limb per diagonal use, nothing else loaded as plaintext.
        let loads: Vec<u32> = t_shape
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Kernel(Kernel::PlainLoad { limbs, .. }) => Some(*limbs),
                _ => None,
            })
            .collect();
        assert_eq!(loads.len(), diags.len(), "{h:?}");
        assert!(loads.iter().all(|&l| l == 1), "{h:?}: {loads:?}");
        assert_eq!(shapes.stored_plaintext_bytes(), lt.stored_plaintext_bytes());
    }
    Ok(())
}

#[test]
fn sparse_strided_diagonals_at_full_slots_n4096() -> Result<()> {
    // A CoeffsToSlots-like factor: 15 diagonals at offsets ±stride·{0..7} on 2048 slots.
    let params = toy_params(12, 3, 40, 2);
    let slots = params.max_slots();
    let mut map = std::collections::BTreeMap::new();
    for t in -7i64..=7 {
        map.insert(t * 64, random_values(slots, (500 + t) as u64, false));
    }
    let diags = Diagonals::from_map(slots, map)?;
    let s = Strategy::Auto { max_partials: 4 };
    let lt = LinearTransform::new(&params, diags.clone(), s, 3)?;
    assert!(lt.plan().n1 > 1 && lt.split_n2() <= 4, "{:?}", lt.plan());
    let ctx = Ctx::new(&params, &lt.rotations())?;
    let x = random_values(slots, 9, false);
    let ct = ctx.encrypt(&x, slots, 3)?;
    let (y, counts) = measure(params.n(), || lt.evaluate(&ctx.eval, &ct));
    let bits = precision_bits(&diags.evaluate_plain(&x)?, &ctx.decrypt(&y?)?);
    println!(
        "N=4096, 15 strided diagonals: plan {:?}, {bits:.1} bits, {} rotations",
        lt.plan(),
        counts.rotations
    );
    assert!(bits > 20.0);
    assert_eq!(counts, lt.predicted_cost());
    assert!(counts.rotations < 14, "BSGS must beat 14 rotations");
    Ok(())
}

/// Full double hoisting changes rounding (the key-switching error is multiplied by the diagonal
/// before the single ModDown), so it is compared in bits against the cleartext twin: it must
/// stay within 1 bit of single hoisting, in both loop orders, and its counts must equal the
/// closed form (and undercut single hoisting in modular multiplications).
#[test]
fn full_double_hoisting_is_precision_equal_to_single_hoisting() -> Result<()> {
    for (log_n, dnum, n1) in [(10, 2, 8), (10, 1, 4), (11, 3, 16)] {
        let params = toy_params(log_n, LEVEL, 40, dnum);
        let slots = SLOTS;
        let diags = Diagonals::from_dense_real(&random_matrix(slots, slots, 1.0, 40), slots)?;
        let s = |hoisting, order| Strategy::Bsgs { n1, hoisting, order };
        let bsc = GscOrder::BabyStepCentric;
        let gsc = GscOrder::GiantStepCentric { max_partials: 3, of_limb: true };
        let ctx =
            Ctx::new(&params, &rotations_for(&params, &diags, s(Hoisting::Single, bsc), LEVEL)?)?;
        let x = random_values(slots, 41, false);
        let ct = ctx.encrypt(&x, slots, LEVEL)?;
        let twin = diags.evaluate_plain(&x)?;
        let run = |h, o| -> Result<(f64, basalt_circuits::OpCounts, basalt_circuits::OpCounts)> {
            let lt = LinearTransform::new(&params, diags.clone(), s(h, o), LEVEL)?;
            let (y, counts) = measure(params.n(), || lt.evaluate(&ctx.eval, &ct));
            let y = y?;
            assert_eq!(y.scale(), ct.scale());
            Ok((precision_bits(&twin, &ctx.decrypt(&y)?), counts, lt.predicted_cost()))
        };
        let (single, sc, _) = run(Hoisting::Single, bsc)?;
        for o in [bsc, gsc] {
            let (double, dc, pred) = run(Hoisting::Double, o)?;
            println!(
                "N=2^{log_n} dnum {dnum} n1 {n1} {o:?}: single {single:.2} bits, full double {double:.2} bits; modmults {} vs {}",
                sc.modmults, dc.modmults
            );
            assert!(double >= single - 1.0, "{o:?}: {double:.2} < {single:.2} − 1");
            assert_eq!(dc, pred, "{o:?}: trace vs closed form");
            if o == bsc {
                assert!(dc.modmults < sc.modmults);
                assert_eq!(dc.rotations, sc.rotations);
            }
        }
    }
    Ok(())
}

/// A transform that leaves the rescale to the caller computes the same sum of products: its
/// output, rescaled, equals the rescaled transform's bit for bit (diagonals at the same scale),
/// for every hoisting; at level 0, where no rescale exists, it still decrypts to `M·x`.
#[test]
fn unrescaled_transform_is_the_rescaled_one_before_its_rescale() -> Result<()> {
    let params = toy_params(10, LEVEL, 40, 2);
    let m = random_matrix(SLOTS, SLOTS, 1.0, 11);
    let diags = Diagonals::from_dense_real(&m, SLOTS)?;
    let x = random_values(SLOTS, 5, true);
    let twin = diags.evaluate_plain(&x)?;
    let order = GscOrder::GiantStepCentric { max_partials: 3, of_limb: true };
    let plans: Vec<Strategy> = [Hoisting::None, Hoisting::Single, Hoisting::Double]
        .into_iter()
        .map(|hoisting| Strategy::Bsgs { n1: 8, hoisting, order })
        .collect();
    let mut rots: Vec<i64> = plans
        .iter()
        .map(|&s| rotations_for(&params, &diags, s, LEVEL))
        .flat_map(|r| r.unwrap())
        .collect();
    rots.sort_unstable();
    rots.dedup();
    let ctx = Ctx::new(&params, &rots)?;
    let ct = ctx.encrypt(&x, SLOTS, LEVEL)?;
    for s in plans {
        let lt = LinearTransform::new(&params, diags.clone(), s, LEVEL)?;
        let source = lt.source().clone();
        let lazy = LinearTransform::unrescaled(&params, source, s, LEVEL, lt.plaintext_scale())?;
        let sum = lazy.evaluate(&ctx.eval, &ct)?;
        assert_eq!(sum.level(), LEVEL, "{s:?}: no level consumed");
        assert_eq!(ctx.eval.rescale(&sum)?, lt.evaluate(&ctx.eval, &ct)?, "{s:?}");
        // The closed form leaves the rescale out too.
        let (_, counts) = measure(params.n(), || lazy.evaluate(&ctx.eval, &ct));
        assert_eq!(counts, lazy.predicted_cost(), "{s:?}");
        // At level 0 (q_0 alone, 60 bits) with diagonals at 2^14: the scale grows to 2^54.
        let low = ctx.encrypt(&x, SLOTS, 0)?;
        let s0 = lt.source().clone();
        let at0 = LinearTransform::unrescaled(&params, s0, s, 0, 2f64.powi(14))?;
        assert!(LinearTransform::new(&params, diags.clone(), s, 0).is_err());
        let y = at0.evaluate(&ctx.eval, &low)?;
        assert_eq!((y.level(), y.scale()), (0, low.scale() * 2f64.powi(14)));
        assert!(precision_bits(&twin, &ctx.decrypt(&y)?) > 8.0, "{s:?} at level 0");
    }
    Ok(())
}

/// Level-dependent key switching (`key_switch_bands`): every strategy, double hoisting's
/// `Q∪P` diagonals included, decrypts and traces its closed form at levels whose digit size
/// and special modulus differ.
#[test]
fn banded_key_switching_matches_twin_and_closed_forms_at_every_band() -> Result<()> {
    use basalt_ckks::params::KeySwitchBand;
    let mut lit = basalt_ckks::ParametersLiteral::toy(10, 60, 40, 7, 61, 3, 1);
    lit.dnum = None;
    lit.log_default_scale = 40.0;
    lit.key_switch_bands = vec![
        KeySwitchBand { below_q_limbs: Some(4), digits: 1 },
        KeySwitchBand { below_q_limbs: Some(7), digits: 2 },
        KeySwitchBand { below_q_limbs: None, digits: 3 },
    ];
    let params = basalt_ckks::Parameters::new(lit).expect("valid banded set");
    let m = random_matrix(SLOTS, SLOTS, 1.0, 8);
    let diags = Diagonals::from_dense_real(&m, SLOTS)?;
    let levels = [7usize, 5, 3, 2];
    let mut rots: Vec<i64> = Vec::new();
    for (_, s) in strategies() {
        for &level in &levels {
            rots.extend(rotations_for(&params, &diags, s, level)?);
        }
    }
    rots.sort_unstable();
    rots.dedup();
    let ctx = Ctx::new(&params, &rots)?;
    let x = random_values(SLOTS, 4, true);
    let twin = diags.evaluate_plain(&x)?;
    for level in levels {
        let ct = ctx.encrypt(&x, SLOTS, level)?;
        for (name, s) in strategies() {
            let lt = LinearTransform::new(&params, diags.clone(), s, level)?;
            let (out, counts) = measure(params.n(), || lt.evaluate(&ctx.eval, &ct));
            let bits = precision_bits(&twin, &ctx.decrypt(&out?)?);
            assert!(bits > 18.0, "{name} at level {level}: precision {bits:.1} bits");
            assert_eq!(
                counts,
                lt.predicted_cost(),
                "{name} at level {level}: trace vs closed form"
            );
        }
    }
    Ok(())
}
