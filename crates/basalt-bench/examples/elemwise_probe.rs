//! Probe: scalar Barrett vs tfhe-ntt's SIMD multiply-accumulate on one 2^16 limb.
use basalt_bench::harness::measure_for as measure;
use basalt_math::primes::ntt_primes;
use basalt_math::{Modulus, ntt::NttTable};
use std::time::Duration;

fn main() {
    let n = 1 << 16;
    for bits in [40u32, 60] {
        let q = ntt_primes(bits, 16, 1, &[]).unwrap()[0];
        let m = Modulus::new(q).unwrap();
        let t = NttTable::new(n, m).unwrap();
        let a: Vec<u64> = (0..n as u64).map(|i| (i * 0x9e3779b97f4a7c15) % q).collect();
        let b: Vec<u64> = (0..n as u64).map(|i| (i * 0xc2b2ae3d27d4eb4f) % q).collect();
        let mut c = a.clone();
        let s1 = measure(Duration::from_millis(300), || {
            c.iter_mut().zip(&b).for_each(|(x, &y)| *x = m.mul(*x, y));
        });
        let mut acc = vec![0u64; n];
        let s2 = measure(Duration::from_millis(300), || {
            acc.fill(0);
            t.mul_acc(&mut acc, &a, &b);
        });
        let s3 = measure(Duration::from_millis(300), || {
            c.iter_mut().zip(&b).for_each(|(x, &y)| *x = m.add(*x, y));
        });
        println!(
            "bits {bits}: scalar mul {:.3} ms, simd fill+mul_acc {:.3} ms, add {:.3} ms",
            s1.median_ms, s2.median_ms, s3.median_ms
        );
    }
}
