//! The CKKS suite on a toy ring: records for every operation and thread count, speed-ups
//! relative to one thread, outputs identical across thread counts and between batch and
//! single calls, precision measured.

use basalt_bench::ckks::{BenchConfig, BenchOp, run_with_params};
use basalt_bench::{Pools, Timing};
use basalt_ckks::{Parameters, ParametersLiteral};

#[test]
fn records_on_a_toy_ring() {
    let mut lit = ParametersLiteral::toy(10, 60, 40, 3, 61, 2, 2);
    lit.log_default_scale = 40.0;
    let p = Parameters::new(lit).unwrap();
    let pools = Pools::new(&[1, 2]);
    let cfg = BenchConfig { timing: Timing::quick(), batch: 3, ..Default::default() };
    let recs = run_with_params(&p, &cfg, &pools).unwrap();
    let single: Vec<_> = recs.iter().filter(|r| r.batch.is_none()).collect();
    let batch: Vec<_> = recs.iter().filter(|r| r.batch.is_some()).collect();
    assert_eq!(single.len(), BenchOp::ALL.len() * 2);
    // mul_relin, rescale and rotate have a batch form.
    assert_eq!(batch.len(), 3 * 2);
    for r in &recs {
        assert!(r.identical_across_threads, "{}: outputs differ across threads", r.bench);
        assert!(r.stats.min_ms <= r.stats.median_ms && r.stats.samples == 3, "{}", r.bench);
        assert_eq!((r.dnum, r.limbs), (2, 4));
        let sp = r.speedup.expect("a 1-thread pool ran");
        if r.threads == 1 {
            assert_eq!(sp, 1.0);
        }
        assert!(sp > 0.0 && (r.efficiency.unwrap() - sp / r.threads as f64).abs() < 1e-12);
        match r.op.as_str() {
            "ntt" | "keyswitch" => assert!(r.precision.is_none()),
            "mul_relin" if r.level == 0 => {}
            _ => {
                let prec = r.precision.as_ref().expect("precision measured");
                assert!(prec.min.l2 > 20.0, "{}: {prec}", r.bench);
            }
        }
    }
    let fj = |b: &str| recs.iter().find(|r| r.bench == b).unwrap().fork_join_points;
    // A key switch runs several kernels; mul + relinearise runs more (tensor + key switch).
    assert!(fj("ckks/keyswitch") > 4 && fj("ckks/mul_relin") > fj("ckks/keyswitch"));
    assert_eq!(fj("ckks/mul_relin_batch"), 1);
    let hoisted = recs.iter().find(|r| r.bench == "ckks/rotate_hoisted_8").unwrap();
    assert!((hoisted.per_op_ms - hoisted.stats.median_ms / 8.0).abs() < 1e-12);
    let s = serde_json::to_string(&recs[0]).unwrap();
    assert!(s.contains("\"variant\":\"hybrid\"") && s.contains("\"median_ms\""), "{s}");
}
