//! Probe: the two arithmetic kernels of a key switch besides the NTT, per coefficient, in thread
//! CPU time (one thread): the inner product's limb kernel (`fused::dot_pair`, five digits) with
//! its inputs in cache, as 15 limbs of 2^16 at equal offsets (they share cache sets), and as 30
//! distinct limbs of 2^16 (one inner product over `Q_l ∪ P`); then BConv 5 → 25 limbs (one ModUp
//! digit's conversion) at three ring degrees, fast and centred.
//! `cargo run --release -p basalt-bench --example bconv_probe`.
use basalt_bench::harness::{in_pool, measure_for};
use basalt_math::RingContext;
use basalt_math::primes::ntt_primes;
use basalt_math::rns::BConvMode;
use std::time::Duration;

fn main() {
    dot_probe();
    for log_n in [12u32, 14, 16] {
        let q = ntt_primes(60, log_n, 25, &[]).unwrap();
        let p = ntt_primes(61, log_n, 5, &q).unwrap();
        let ctx = RingContext::new(log_n, &q, &p).unwrap();
        let n = ctx.n();
        let coeffs: Vec<i64> = (0..n as i64).map(|i| i * 7919 - 3).collect();
        let a = ctx.from_i64(&coeffs, 25, 0);
        let from: Vec<usize> = (0..5).collect();
        let to: Vec<usize> = (5..30).collect();
        let conv = ctx.bconv(&from, &to);
        let input: Vec<&[u64]> = (0..5).map(|i| a.limb(i)).collect();
        let mut out = vec![vec![0u64; n]; 25];
        for mode in [BConvMode::Fast, BConvMode::Centered] {
            let prep = conv.prepare_input(&input, mode);
            let s = in_pool(1, || {
                measure_for(Duration::from_millis(700), || {
                    for (j, o) in out.iter_mut().enumerate() {
                        conv.convert_prepared(&prep, j, o);
                    }
                })
            });
            let per = s.thread_cpu_median_ms * 1e6 / (25.0 * n as f64);
            println!(
                "log_n {log_n} {mode:?}: {:.3} ms, {per:.2} ns per output coefficient",
                s.thread_cpu_median_ms
            );
        }
    }
}

/// The key-switching inner product's limb kernel (`fused::dot_pair`, 5 digits) per coefficient.
fn dot_probe() {
    use basalt_math::modular::Modulus;
    let m = Modulus::new(ntt_primes(60, 16, 1, &[]).unwrap()[0]).unwrap();
    for (n, limbs) in [(1usize << 12, 1usize), (1 << 16, 1), (1 << 16, 30)] {
        let mk = |s: u64| -> Vec<Vec<u64>> {
            (0..5 * limbs)
                .map(|j| {
                    (0..n as u64).map(|c| (c * 2654435761 + s + j as u64) % m.value()).collect()
                })
                .collect()
        };
        let (xs, bs, as_) = (mk(1), mk(2), mk(3));
        let mut o0 = vec![vec![0u64; n]; limbs];
        let mut o1 = vec![vec![0u64; n]; limbs];
        let s = in_pool(1, || {
            measure_for(Duration::from_millis(700), || {
                for l in 0..limbs {
                    let x: Vec<&[u64]> = xs[5 * l..5 * l + 5].iter().map(Vec::as_slice).collect();
                    let b: Vec<&[u64]> = bs[5 * l..5 * l + 5].iter().map(Vec::as_slice).collect();
                    let a: Vec<&[u64]> = as_[5 * l..5 * l + 5].iter().map(Vec::as_slice).collect();
                    basalt_math::fused::dot_pair(m, &x, &b, &a, &mut o0[l], &mut o1[l]);
                }
            })
        });
        let per = s.thread_cpu_median_ms * 1e6 / (limbs * n) as f64;
        println!(
            "dot_pair n {n} x {limbs} limbs: {:.3} ms, {per:.2} ns per coefficient",
            s.thread_cpu_median_ms
        );
    }
}
