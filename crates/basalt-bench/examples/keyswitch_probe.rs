//! Probe: the math kernels of one hybrid key switch at N=2^16, L=24, dnum=5, k=5 (Lattigo's
//! N16QP1546H192H32 shape), single-threaded.
use basalt_bench::harness::{in_pool, measure_for as measure};
use basalt_math::primes::ntt_primes;
use basalt_math::rns::{mod_down, mod_up, rescale};
use basalt_math::{Domain, RingContext, RnsPoly};
use std::time::Duration;

fn main() {
    let q = ntt_primes(60, 16, 25, &[]).unwrap();
    let p = ntt_primes(61, 16, 5, &q).unwrap();
    let ctx = RingContext::new(16, &q, &p).unwrap();
    let coeffs: Vec<i64> = (0..ctx.n() as i64).map(|i| i * 7919 - 3).collect();
    let a = ctx.from_i64(&coeffs, 25, 0);
    let mut a_ntt = a.clone();
    ctx.ntt_assign(&mut a_ntt);
    let x = ctx.from_i64(&coeffs, 25, 5);
    let mut x_ntt = x.clone();
    ctx.ntt_assign(&mut x_ntt);
    let t = Duration::from_millis(500);
    in_pool(1, || {
        let s = measure(t, || drop(mod_up(&ctx, &a, &a_ntt, 0..5, 5)));
        println!(
            "mod_up one digit (5 -> 25 limbs):   {:.2} ms (thread CPU)",
            s.thread_cpu_median_ms
        );
        let s = measure(t, || drop(mod_down(&ctx, &x_ntt)));
        println!(
            "mod_down (30 -> 25 limbs, NTT):     {:.2} ms (thread CPU)",
            s.thread_cpu_median_ms
        );
        let s = measure(t, || drop(rescale(&ctx, &a_ntt, 1)));
        println!(
            "rescale (25 -> 24 limbs, NTT):      {:.2} ms (thread CPU)",
            s.thread_cpu_median_ms
        );
        let s = measure(t, || {
            let mut y = a_ntt.clone();
            ctx.intt_assign(&mut y);
            ctx.ntt_assign(&mut y);
        });
        println!(
            "clone + INTT + NTT, 25 limbs:       {:.2} ms (thread CPU)",
            s.thread_cpu_median_ms
        );
        let s = measure(t, || drop(ctx.automorphism(&x_ntt, 5)));
        println!(
            "automorphism, 30 limbs (NTT):       {:.2} ms (thread CPU)",
            s.thread_cpu_median_ms
        );
        let mut acc = RnsPoly::zero(ctx.n(), 25, 5, Domain::Ntt);
        let s = measure(t, || ctx.mul_acc(&mut acc, &x_ntt, &x_ntt));
        println!(
            "mul_acc, 30 limbs:                  {:.2} ms (thread CPU)",
            s.thread_cpu_median_ms
        );
        let s = measure(t, || {
            let mut y = x_ntt.clone();
            ctx.intt_assign(&mut y);
        });
        println!(
            "clone + INTT, 30 limbs:             {:.2} ms (thread CPU)",
            s.thread_cpu_median_ms
        );
        let from: Vec<usize> = (25..30).collect();
        let to: Vec<usize> = (0..25).collect();
        let conv = ctx.bconv(&from, &to);
        let mut out = vec![vec![0u64; ctx.n()]; 25];
        let s = measure(t, || {
            let input: Vec<&[u64]> = (25..30).map(|i| x.limb(i)).collect();
            let mut o: Vec<&mut [u64]> = out.iter_mut().map(|v| v.as_mut_slice()).collect();
            conv.apply(&input, &mut o);
        });
        println!(
            "BConv 5 -> 25:                      {:.2} ms (thread CPU)",
            s.thread_cpu_median_ms
        );
    });
}
