//! Timing helpers shared by every `basalt bench` suite, and the math-layer benchmarks (NTT of
//! one limb and of a full RNS polynomial, BConv, ModDown) with `tfhe-ntt` measured beside ours
//! in the same run.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::poly::{Domain, RnsPoly};
use crate::primes::ntt_primes;
use crate::ring::RingContext;
use crate::rns::mod_down;

/// Median, minimum and mean wall time of repeated runs, and the median CPU time of the
/// calling thread (robust to other processes competing for the cores; meaningful for
/// single-threaded runs, where all the work happens on this thread).
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    pub median_ms: f64,
    pub min_ms: f64,
    pub mean_ms: f64,
    pub thread_cpu_median_ms: f64,
    pub samples: usize,
}

/// CPU time consumed by the calling thread, in milliseconds.
pub fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec and CLOCK_THREAD_CPUTIME_ID is supported on
    // Linux; on failure the call leaves `ts` zeroed and we report 0.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 * 1e-6
}

impl Stats {
    pub fn to_json(self) -> Value {
        json!({"median_ms": self.median_ms, "min_ms": self.min_ms, "mean_ms": self.mean_ms,
            "thread_cpu_median_ms": self.thread_cpu_median_ms, "samples": self.samples})
    }
}

/// Run `f` once to warm up, then repeatedly for at least `min_time` (and at least 3 times, at
/// most 10,000).
pub fn measure(min_time: Duration, mut f: impl FnMut()) -> Stats {
    f();
    let mut times = Vec::new();
    let mut cpu = Vec::new();
    let start = Instant::now();
    while (start.elapsed() < min_time || times.len() < 3) && times.len() < 10_000 {
        let (t, c) = (Instant::now(), thread_cpu_ms());
        f();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        cpu.push(thread_cpu_ms() - c);
    }
    times.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    Stats {
        median_ms: times[times.len() / 2],
        min_ms: times[0],
        mean_ms: times.iter().sum::<f64>() / times.len() as f64,
        thread_cpu_median_ms: cpu[cpu.len() / 2],
        samples: times.len(),
    }
}

/// Run `f` inside a rayon pool of `threads` threads.
pub fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("rayon pool").install(f)
}

/// A reproducible pseudo-random polynomial (xorshift; not for secrets) for benchmarks and tests.
pub fn random_poly(ctx: &RingContext, q_limbs: usize, p_limbs: usize, seed: u64) -> RnsPoly {
    let mut a = RnsPoly::zero(ctx.n(), q_limbs, p_limbs, Domain::Coeff);
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    for i in 0..a.limbs() {
        let q = ctx.modulus_of(&a, i).value();
        for v in a.limb_mut(i) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            *v = s % q;
        }
    }
    a
}

/// NTT benchmarks at `log_n`: one limb for several prime sizes (ours and `tfhe-ntt` called
/// directly), then a full polynomial of `limbs` 60-bit limbs and a ModDown, per thread count.
pub fn ntt_suite(log_n: u32, limbs: usize, threads: &[usize], min_time: Duration) -> Vec<Value> {
    let n = 1usize << log_n;
    let mut out = Vec::new();
    for bits in [36u32, 50, 54, 60] {
        let q = ntt_primes(bits, log_n, 1, &[]).expect("primes")[0];
        let ctx = RingContext::new(log_n, &[q], &[]).expect("ring");
        let a = random_poly(&ctx, 1, 0, 1);
        let mut buf = a.limb(0).to_vec();
        let table = ctx.ntt_table(0);
        let ours = in_pool(1, || measure(min_time, || table.forward(&mut buf)));
        let plan = tfhe_ntt::prime64::Plan::try_new(n, q).expect("plan");
        let peer = measure(min_time, || plan.fwd(&mut buf));
        for (imp, s) in [("basalt", ours), ("tfhe-ntt", peer)] {
            out.push(json!({"bench": "ntt/forward", "impl": imp, "n": n, "q_bits": bits,
                "limbs": 1, "threads": 1, "stats": s.to_json()}));
        }
        let inv = in_pool(1, || measure(min_time, || table.inverse(&mut buf)));
        out.push(json!({"bench": "ntt/inverse", "impl": "basalt", "n": n, "q_bits": bits,
            "limbs": 1, "threads": 1, "stats": inv.to_json()}));
    }
    let q = ntt_primes(60, log_n, limbs, &[]).expect("primes");
    let p = ntt_primes(61, log_n, 5, &q).expect("primes");
    let ctx = RingContext::new(log_n, &q, &p).expect("ring");
    let a = random_poly(&ctx, limbs, 0, 2);
    let x = random_poly(&ctx, limbs, 5, 3);
    let mut x_ntt = x.clone();
    ctx.ntt_assign(&mut x_ntt);
    for &t in threads {
        let s = in_pool(t, || {
            measure(min_time, || {
                let mut b = a.clone();
                ctx.ntt_assign(&mut b);
            })
        });
        out.push(json!({"bench": "ntt/forward_poly", "impl": "basalt", "n": n, "q_bits": 60,
            "limbs": limbs, "threads": t, "stats": s.to_json(), "note": "includes one clone of the polynomial"}));
        let s = in_pool(t, || measure(min_time, || drop(mod_down(&ctx, &x_ntt))));
        out.push(json!({"bench": "mod_down", "impl": "basalt", "n": n, "q_limbs": limbs,
            "p_limbs": 5, "threads": t, "stats": s.to_json()}));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn thread_cpu_time_advances_with_work() {
        let t0 = super::thread_cpu_ms();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(super::thread_cpu_ms() > t0);
    }
}
