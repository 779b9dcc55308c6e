//! Two functions the layers above share: the calling thread's CPU clock (the bootstrapping
//! stages report CPU beside wall time) and a reproducible pseudo-random polynomial for tests
//! and examples. The benchmarks themselves live in the `basalt-bench` crate.

use crate::poly::{Domain, RnsPoly};
use crate::ring::RingContext;

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
