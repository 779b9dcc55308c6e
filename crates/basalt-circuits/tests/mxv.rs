//! Hybrid-packed rectangular products: blocks for n > slots, padding for m not a power of
//! two, batches, op counts against the closed forms, the suite runner on a toy set.

use std::sync::Arc;

use basalt_circuits::accounting::measure;
use basalt_circuits::lintrans::mxv_hybrid::MxvHybrid;
use basalt_circuits::lintrans::{Hoisting, Strategy, dense_matvec};
use basalt_circuits::mxv_suite::{Layer, mxv_run};
use basalt_circuits::testing::{
    Ctx, precision_bits_real, random_matrix, random_values, toy_params,
};
use basalt_circuits::{CircuitError, Result};

#[test]
fn hybrid_blocks_padding_and_batches_match_dense_matvec() -> Result<()> {
    let params = toy_params(10, 2, 40, 3);
    let slots = 128;
    // m = 20 (padded to 32, k = 4 chunks), n = 300 > slots (3 column blocks); and m > slots.
    for (m, n, strategy) in [
        (20, 300, Strategy::Diagonal { hoisting: Hoisting::None }),
        (20, 300, Strategy::Auto { max_partials: 4 }),
        (200, 90, Strategy::Auto { max_partials: 8 }),
    ] {
        let w = Arc::new(random_matrix(m, n, 1.0 / (n as f64).sqrt(), 9));
        let mxv = MxvHybrid::new(&params, Arc::clone(&w), slots, strategy, 2)?;
        let ctx = Ctx::new(&params, &mxv.rotations())?;
        let batch: Vec<Vec<f64>> =
            (0..2).map(|s| random_values(n, 40 + s, true).iter().map(|z| z.re).collect()).collect();
        let cts: Vec<Vec<_>> = batch
            .iter()
            .map(|x| {
                mxv.input_vectors(x)?
                    .iter()
                    .map(|v| ctx.encrypt_real(v, slots, 2))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<_>>()?;
        let (outs, counts) = measure(params.n(), || mxv.evaluate_batch(&ctx.eval, &cts));
        let outs = outs?;
        let mut one = mxv.predicted_cost(&params);
        let single = one;
        one.add_scaled(&single, 1);
        assert_eq!(counts, one.finish(params.n()), "{m}x{n} {strategy:?}: trace vs closed form");
        for (x, out) in batch.iter().zip(&outs) {
            let mut have = Vec::new();
            for ct in out {
                have.extend(ctx.decrypt(ct)?.iter().map(|z| z.re));
            }
            let want = dense_matvec(&w, x);
            let bits = precision_bits_real(&want, &have[..m]);
            println!("{m}x{n} {strategy:?}: {bits:.1} bits, plan {:?}", mxv.plan());
            assert!(bits > 18.0, "{m}x{n}: {bits:.1} bits");
        }
        assert_eq!(mxv.input_blocks(), n.div_ceil(slots));
        assert_eq!(mxv.output_blocks(), m.div_ceil(slots));
    }
    Ok(())
}

#[test]
fn suite_runner_on_a_toy_set_and_errors() -> Result<()> {
    let params = toy_params(10, 2, 40, 3);
    let rec = mxv_run(
        &params,
        "toy",
        Layer { name: "toy-100x700", m: 100, n: 700 },
        Strategy::Auto { max_partials: 4 },
        3,
    )?;
    println!("{}", serde_json::to_string(&rec).unwrap());
    assert!(rec.precision_bits > 18.0);
    assert_eq!(rec.measured, rec.predicted);
    assert_eq!(rec.input_cts, 2);
    assert_eq!(rec.plaintexts, 128 * 2);
    // Trace mode: same counts as the real run, no data.
    let w = Arc::new(random_matrix(100, 700, 0.1, 3));
    let s = Strategy::Auto { max_partials: 4 };
    let mxv = MxvHybrid::new(&params, w, params.max_slots(), s, 2)?;
    let ctx = Ctx::new(&params, &mxv.rotations())?;
    let trace = basalt_circuits::mxv_suite::mxv_trace(&ctx.eval, &mxv)?;
    let counts = basalt_circuits::OpCounts::from_trace(&trace, params.n());
    assert_eq!(counts, mxv.predicted_cost(&params));
    let w = Arc::new(vec![vec![1.0; 3], vec![1.0; 2]]);
    assert!(matches!(
        MxvHybrid::new(&params, w, 64, Strategy::Auto { max_partials: 4 }, 2),
        Err(CircuitError::RaggedMatrix { .. })
    ));
    Ok(())
}
