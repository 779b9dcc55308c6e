//! Math-layer benchmarks: the NTT of one limb for several prime sizes (ours and `tfhe-ntt`
//! called directly, in the same run), then the NTT of a full RNS polynomial and a ModDown at
//! every thread count, interleaved, with the speed-up over one thread.

use basalt_math::bench::random_poly;
use basalt_math::primes::ntt_primes;
use basalt_math::ring::RingContext;
use basalt_math::rns::mod_down;
use serde_json::{Value, json};

use crate::harness::{Pools, Stats, Timing, measure_alternating, measure_interleaved};

/// Our AVX2 NTT for the same `(n, q)` and root as `plan`, where this CPU has AVX2.
#[cfg(target_arch = "x86_64")]
fn own_avx2(n: usize, plan: &tfhe_ntt::prime64::Plan) -> Option<basalt_math::ntt_avx2::Avx2Ntt> {
    let mut x = vec![0u64; n];
    x[1] = 1;
    plan.fwd(&mut x);
    basalt_math::ntt_avx2::Avx2Ntt::new(n, plan.modulus(), x[0])
}

/// One implementation's run, timed by [`measure_alternating`].
type Timed<'a> = Box<dyn FnMut() + Send + 'a>;

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
    for bits in [36u32, 50, 54, 60, 61] {
        let q = ntt_primes(bits, log_n, 1, &[]).expect("primes")[0];
        let ctx = RingContext::new(log_n, &[q], &[]).expect("ring");
        let a = random_poly(&ctx, 1, 0, 1);
        let table = ctx.ntt_table(0);
        let plan = tfhe_ntt::prime64::Plan::try_new(n, q).expect("plan");
        // Same data for every implementation, timed alternately (A B A B …) on one thread.
        let buf = || a.limb(0).to_vec();
        let (mut b1, mut b2, mut b3, mut b4, mut b5) = (buf(), buf(), buf(), buf(), buf());
        #[cfg(target_arch = "x86_64")]
        let own = own_avx2(n, &plan).filter(|_| table.backend() != "basalt-avx2");
        let mut runs: Vec<(&str, &str, Timed<'_>)> = vec![
            ("ntt/forward", table.backend(), Box::new(|| table.forward(&mut b1))),
            ("ntt/forward", "tfhe-ntt", Box::new(|| plan.fwd(&mut b2))),
            ("ntt/inverse", table.backend(), Box::new(|| table.inverse(&mut b3))),
            (
                "ntt/inverse",
                "tfhe-ntt",
                Box::new(|| {
                    plan.inv(&mut b4);
                    plan.normalize(&mut b4);
                }),
            ),
        ];
        // Where the default is tfhe-ntt but our AVX2 transform exists, time it too.
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = &own {
            runs.push(("ntt/forward", "basalt-avx2", Box::new(|| t.forward(&mut b5))));
        }
        #[cfg(not(target_arch = "x86_64"))]
        drop(b5);
        let stats = pools.install(1, || {
            let mut fs: Vec<&mut dyn FnMut()> =
                runs.iter_mut().map(|(_, _, f)| f.as_mut() as &mut dyn FnMut()).collect();
            measure_alternating(timing, &mut fs)
        });
        let tfhe_median = |bench: &str| {
            runs.iter()
                .zip(&stats)
                .find(|((b, i, _), _)| *b == bench && *i == "tfhe-ntt")
                .map(|(_, s)| s.median_ms)
        };
        for ((bench, imp, _), s) in runs.iter().zip(&stats) {
            let vs = tfhe_median(bench).map(|t| t / s.median_ms);
            out.push(json!({"bench": bench, "impl": imp, "n": n, "q_bits": bits,
                "limbs": 1, "threads": 1, "stats": stats_json(s),
                "speedup_vs_tfhe_ntt": vs}));
        }
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
