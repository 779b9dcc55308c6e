//! The integer bench on an insecure toy 2+2 set: one checked record per (threads, bits, op).

use basalt_bench::tfhe_integer::{IntOp, IntegerBenchOptions, run_integer_bench};
use basalt_tfhe::integer::CarryPropagation;
use basalt_tfhe::params::{AtomicPattern, TfheParams, toy};

#[test]
fn records_for_every_op_width_and_pool() {
    let lit = toy::literal(64, 256, 1024, (23, 1), (4, 4), 4, 4, AtomicPattern::KsPbs);
    let params = TfheParams::from_literal(lit, true).unwrap();
    let opts = IntegerBenchOptions {
        threads: vec![1, 2],
        bits: vec![8],
        ops: vec![IntOp::Add, IntOp::Mul, IntOp::Lt, IntOp::Eq],
        reps: 1,
        carry: CarryPropagation::Auto,
    };
    let mut streamed = 0;
    let recs = run_integer_bench(&params, &opts, &mut |_| streamed += 1).unwrap();
    assert_eq!(recs.len(), 8);
    assert_eq!(streamed, 8);
    for r in &recs {
        assert!(r.min_ms > 0.0 && r.min_ms <= r.median_ms, "{r:?}");
        assert!(["Ripple", "Scan"].contains(&r.carry.as_str()));
    }
    assert_eq!(recs[0].bench, "uint8_add");
    assert_eq!(recs[7].bench, "uint8_eq");
    assert!(IntOp::parse("div").is_none());
}
