//! Math-layer benchmarks: the NTT of one limb for several prime sizes (ours and `tfhe-ntt`
//! called directly, in the same run), then the NTT of a full RNS polynomial and a ModDown at
//! every thread count, interleaved, with the speed-up over one thread.

use basalt_math::bench::random_poly;
use basalt_math::primes::ntt_primes;
use basalt_math::ring::RingContext;
use basalt_math::rns::mod_down;
use serde_json::{Value, json};

use crate::harness::{Pools, Stats, Timing, measure, measure_interleaved};

fn stats_json(s: &Stats) -> Value {
    serde_json::to_value(s).unwrap_or(Value::Null)
}

/// Attach `speedup` (median at one thread ÷ median here) to interleaved results.
pub(crate) fn with_speedups(runs: &[(usize, Stats)]) -> Vec<(usize, Stats, Option<f64>)> {
    let one = runs.iter().find(|(t, _)| *t == 1).map(|(_, s)| s.median_ms);
    runs.iter().map(|(t, s)| (*t, *s, one.map(|o| o / s.median_ms))).collect()
}

/// NTT benchmarks at `log_n`: one limb per prime size, then `limbs` 60-bit limbs (forward
/// NTT in place, and a ModDown from 5 special primes) in every pool.
pub fn ntt_suite(log_n: u32, limbs: usize, pools: &Pools, timing: Timing) -> Vec<Value> {
    let n = 1usize << log_n;
    let mut out = Vec::new();
    for bits in [36u32, 50, 54, 60] {
        let q = ntt_primes(bits, log_n, 1, &[]).expect("primes")[0];
        let ctx = RingContext::new(log_n, &[q], &[]).expect("ring");
        let a = random_poly(&ctx, 1, 0, 1);
        let mut buf = a.limb(0).to_vec();
        let table = ctx.ntt_table(0);
        let ours = pools.install(1, || measure(timing, || table.forward(&mut buf)));
        let plan = tfhe_ntt::prime64::Plan::try_new(n, q).expect("plan");
        let peer = pools.install(1, || measure(timing, || plan.fwd(&mut buf)));
        for (imp, s) in [("basalt", ours), ("tfhe-ntt", peer)] {
            out.push(json!({"bench": "ntt/forward", "impl": imp, "n": n, "q_bits": bits,
                "limbs": 1, "threads": 1, "stats": stats_json(&s)}));
        }
        let inv = pools.install(1, || measure(timing, || table.inverse(&mut buf)));
        out.push(json!({"bench": "ntt/inverse", "impl": "basalt", "n": n, "q_bits": bits,
            "limbs": 1, "threads": 1, "stats": stats_json(&inv)}));
    }
    let q = ntt_primes(60, log_n, limbs, &[]).expect("primes");
    let p = ntt_primes(61, log_n, 5, &q).expect("primes");
    let ctx = RingContext::new(log_n, &q, &p).expect("ring");
    let a = random_poly(&ctx, limbs, 0, 2);
    let x = random_poly(&ctx, limbs, 5, 3);
    let mut x_ntt = x.clone();
    ctx.ntt_assign(&mut x_ntt);
    // The NTT is timed in place on one buffer per pool (forward, then inverse to restore the
    // domain, both timed as one pair): no allocation inside the timed region.
    let bufs: Vec<std::sync::Mutex<basalt_math::RnsPoly>> =
        pools.threads().iter().map(|_| std::sync::Mutex::new(a.clone())).collect();
    let idx = |t: usize| pools.threads().iter().position(|&x| x == t).unwrap_or(0);
    let ntt = measure_interleaved(pools, timing, || {
        let mut b = bufs[idx(rayon::current_num_threads())].lock().expect("buffer");
        ctx.ntt_assign(&mut b);
        ctx.intt_assign(&mut b);
    });
    for (t, s, sp) in with_speedups(&ntt) {
        out.push(json!({"bench": "ntt/forward_inverse_poly", "impl": "basalt", "n": n,
            "q_bits": 60, "limbs": limbs, "threads": t, "stats": stats_json(&s),
            "speedup": sp}));
    }
    let md = measure_interleaved(pools, timing, || drop(mod_down(&ctx, &x_ntt)));
    for (t, s, sp) in with_speedups(&md) {
        out.push(json!({"bench": "mod_down", "impl": "basalt", "n": n, "q_limbs": limbs,
            "p_limbs": 5, "threads": t, "stats": stats_json(&s), "speedup": sp}));
    }
    out
}
