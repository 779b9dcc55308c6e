//! The bench library function the CLI calls: record names, fields and sanity of the numbers on a
//! tiny (insecure, test-only) set.

use basalt_bench::tfhe::{BenchOptions, BenchRecord, run_pbs_bench, run_pbs_bench_with};
use basalt_tfhe::TfheError;
use basalt_tfhe::params::toy;

#[test]
fn records_cover_latency_throughput_stages_and_failures() {
    let params = toy::u64_small();
    let opts = BenchOptions {
        threads: vec![1, 2],
        counts: vec![1, 5],
        latency_reps: 2,
        throughput_reps: 1,
        stages: true,
        failure_trials: 64,
        core_batch: None,
    };
    let mut streamed = 0;
    let recs = run_pbs_bench_with(&params, &opts, &mut |_| streamed += 1).unwrap();
    assert_eq!(streamed, recs.len());
    let find = |b: &str| -> Vec<&BenchRecord> { recs.iter().filter(|r| r.bench == b).collect() };
    for b in ["pbs/latency", "ks/latency", "ks_pbs/latency"] {
        let r = find(b);
        assert_eq!(r.len(), 1, "{b}");
        assert!(r[0].min_ms > 0.0 && r[0].min_ms <= r[0].median_ms, "{b}");
        assert!((r[0].pbs_per_s.unwrap() * r[0].per_pbs_ms.unwrap() - 1e3).abs() < 1e-6);
    }
    // 2 thread counts × 2 counts × {unbatched, batched}.
    let tp = find("ks_pbs/throughput");
    assert_eq!(tp.len(), 8);
    assert_eq!(tp.iter().filter(|r| r.batched).count(), 4);
    for r in &tp {
        let per = r.median_ms / r.count as f64;
        assert!((r.per_pbs_ms.unwrap() - per).abs() < 1e-9);
    }
    let stages: Vec<_> = find("pbs/stage").iter().map(|r| r.stage.clone().unwrap()).collect();
    for s in ["rotate_decompose_fft", "mult_add", "ifft_accumulate", "keyswitch"] {
        assert!(stages.iter().any(|x| x == s), "stage {s}");
    }
    for b in ["pbs/latency", "ks/latency", "ks_pbs/latency"] {
        let cpu = find(b)[0].thread_cpu_median_ms.expect("thread CPU time of a latency");
        assert!(cpu > 0.0, "{b}: thread CPU time {cpu}");
    }
    assert_eq!(find("key_size").len(), 2);
    let f = find("ks_pbs/failure_rate");
    assert_eq!(f[0].trials, Some(64));
    assert!(f[0].observed_fail_rate.unwrap() <= 1.0);
    assert!(f[0].log2_p_fail_model.is_some());
    let line = serde_json::to_string(tp[0]).unwrap();
    for key in ["\"bench\"", "\"set\"", "\"threads\"", "\"batched\"", "\"count\""] {
        assert!(line.contains(key), "{key} in {line}");
    }
}

#[test]
fn named_entry_point_rejects_unknown_and_insecure_sets() {
    assert!(matches!(run_pbs_bench("NOPE", &[1], &[1]), Err(TfheError::UnknownSet(_))));
    assert!(matches!(run_pbs_bench("STRIX_I", &[1], &[1]), Err(TfheError::Insecure(..))));
}
