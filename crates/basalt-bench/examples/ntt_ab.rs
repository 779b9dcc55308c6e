//! Probe: our AVX2 NTT against `tfhe-ntt`'s prime64 plan on one limb, timed alternately
//! (A B A B …) in thread CPU time, medians. Usage: `ntt_ab [LOG_N] [BITS] [ROUNDS]`
//! (defaults 16 60 400).
use basalt_math::bench::thread_cpu_ms;
use basalt_math::primes::ntt_primes;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let log_n = args.first().copied().unwrap_or(16) as u32;
    let bits = args.get(1).copied().unwrap_or(60) as u32;
    let rounds = args.get(2).copied().unwrap_or(400) as usize;
    let n = 1usize << log_n;
    let q = ntt_primes(bits, log_n, 1, &[]).expect("primes")[0];
    let plan = tfhe_ntt::prime64::Plan::try_new(n, q).expect("plan");
    let mut x = vec![0u64; n];
    x[1] = 1;
    plan.fwd(&mut x);
    let ours = basalt_math::ntt_avx2::Avx2Ntt::new(n, q, x[0]).expect("AVX2");
    let mut a: Vec<u64> = (0..n as u64).map(|i| (i * 0x9E37_79B9_7F4A_7C15) % q).collect();
    let mut b = a.clone();
    let mut t = [vec![], vec![], vec![], vec![]];
    let time = |f: &mut dyn FnMut()| {
        let c = thread_cpu_ms();
        f();
        thread_cpu_ms() - c
    };
    for r in 0..rounds + 20 {
        let s = [
            time(&mut || plan.fwd(&mut a)),
            time(&mut || ours.forward(&mut b)),
            time(&mut || {
                plan.inv(&mut a);
                plan.normalize(&mut a);
            }),
            time(&mut || ours.inverse(&mut b)),
        ];
        assert_eq!(a, b);
        if r >= 20 {
            for (v, x) in t.iter_mut().zip(s) {
                v.push(x);
            }
        }
    }
    let [tf, of, ti, oi] = t.map(median);
    println!(
        "n=2^{log_n} q_bits={bits}: forward tfhe-ntt {tf:.4} ms, basalt-avx2 {of:.4} ms ({:.2}x); \
         inverse tfhe-ntt {ti:.4} ms, basalt-avx2 {oi:.4} ms ({:.2}x)",
        tf / of,
        ti / oi
    );
}
