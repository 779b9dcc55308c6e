//! `basalt sim calibrate`: measure this CPU's per-kernel costs with Basalt's own kernels and
//! write them as a machine file, so the simulator predicts Basalt's CPU time.
//!
//! The sim's unit models count cycles of integer-lane units; a CPU kernel is turned into one by
//! a virtual clock of 50 MHz (20 ns per cycle): `lanes` is then the number of elements the CPU
//! retires per 20 ns, large enough that rounding to an integer costs < 5%. Memory is modelled as
//! free (a very high bandwidth): DRAM traffic is already inside the measured kernel times.

use std::time::Duration;

use basalt_math::bench::{in_pool, measure, random_poly};
use basalt_math::primes::ntt_primes;
use basalt_math::rns::BConv;
use basalt_math::sampler::{Xof, uniform_ntt};
use basalt_math::{Domain, RingContext};

const CYCLE_S: f64 = 20e-9;

/// Per-element costs in seconds, measured at N = 2^16 with 60-bit primes on one thread.
pub struct KernelCosts {
    pub ntt_limb: f64,
    pub elem_limb: f64,
    pub bconv_mac: f64,
    pub automorph_limb: f64,
    pub keygen_limb: f64,
}

pub fn measure_costs(min_time: Duration) -> KernelCosts {
    in_pool(1, || {
        let log_n = 16;
        let q = ntt_primes(60, log_n, 25, &[]).expect("primes");
        let p = ntt_primes(61, log_n, 5, &q).expect("primes");
        let ctx = RingContext::new(log_n, &q, &p).expect("ring");
        let n = ctx.n() as f64;
        let limbs = 25usize;
        let a = random_poly(&ctx, limbs, 0, 1);
        let mut x = a.clone();
        let ms = |s: basalt_math::bench::Stats| s.median_ms * 1e-3;
        let ntt = ms(measure(min_time, || {
            ctx.ntt_assign(&mut x);
            ctx.intt_assign(&mut x);
        })) / (2 * limbs) as f64;
        let mut y = a.clone();
        y.set_domain(Domain::Ntt);
        let mut z = y.clone();
        let add = ms(measure(min_time, || ctx.add_assign(&mut z, &y)));
        let mul_acc = ms(measure(min_time, || ctx.mul_acc(&mut z, &y, &y)));
        let scalars = vec![12345u64; limbs];
        let mul_scalar = ms(measure(min_time, || ctx.mul_scalar_assign(&mut z, &scalars)));
        let elem = (add + mul_acc + mul_scalar) / 3.0 / limbs as f64;
        let auto = ms(measure(min_time, || drop(ctx.automorphism(&y, 5)))) / limbs as f64;
        let from: Vec<usize> = (0..5).collect();
        let to: Vec<usize> = (5..30).collect();
        let conv = BConv::new(&ctx, &from, &to);
        let mut out = vec![vec![0u64; ctx.n()]; to.len()];
        let bconv = ms(measure(min_time, || {
            let input: Vec<&[u64]> = (0..5).map(|i| a.limb(i)).collect();
            let mut o: Vec<&mut [u64]> = out.iter_mut().map(|v| v.as_mut_slice()).collect();
            conv.apply(&input, &mut o);
        })) / (n * 5.0 * 25.0);
        let keygen = ms(measure(min_time, || {
            drop(uniform_ntt(&ctx, &mut Xof::new([1; 32], b"cal"), limbs, 0));
        })) / limbs as f64;
        KernelCosts {
            ntt_limb: ntt,
            elem_limb: elem,
            bconv_mac: bconv,
            automorph_limb: auto,
            keygen_limb: keygen,
        }
    })
}

/// The machine file for the measured costs.
pub fn machine_toml(c: &KernelCosts, date: &str, cpu: &str) -> String {
    let n = 65536.0f64;
    let lanes = |x: f64| (x.round() as u64).max(1);
    let ntt = lanes(16.0 * n * CYCLE_S / c.ntt_limb);
    let elem = lanes(n * CYCLE_S / c.elem_limb);
    let bconv = lanes(CYCLE_S / c.bconv_mac);
    let auto = lanes(n * CYCLE_S / c.automorph_limb);
    let keygen = lanes(n * CYCLE_S / c.keygen_limb);
    let us = |s: f64| s * 1e6;
    format!(
        r#"# Basalt's own CPU kernels on this machine, one thread: written by `basalt sim calibrate`.
# Measured {date} on {cpu}, N = 2^16, 60-bit primes (medians):
#   NTT/INTT per limb {ntt_us:.1} us; element-wise per limb {elem_us:.1} us (mean of add, mul_acc,
#   mul_scalar); BConv {bconv_ns:.3} ns per multiply-add; automorphism per limb {auto_us:.1} us;
#   XOF key regeneration per limb {keygen_us:.1} us.
# Virtual clock 50 MHz (20 ns cycles): `lanes` = elements retired per cycle. Memory is free here
# because DRAM traffic is inside the measured times.
schema_version = 1
name = "basalt_cpu"
paper = "none"
description = "Basalt on this CPU, single thread, calibrated by basalt sim calibrate"
clock_ghz = 0.05
clock_source = "virtual clock of the calibration (20 ns per cycle)"
word_bits = 64
max_ring_degree = 131072

[memory]
hbm_gbps = 1000000.0
onchip_mib = 1000000.0
eviction = "lru"
source = "calibration: memory effects are inside the per-kernel times"

[schedule]
overlap = "serial"
prefetch_windows = 0

[[units]]
name = "ntt"
class = "ntt"
style = "iterative"
count = 1
lanes = {ntt}
source = "calibrated: {ntt_us:.1} us per limb at N = 2^16"

[[units]]
name = "elem"
class = "elem"
count = 1
lanes = {elem}
source = "calibrated: {elem_us:.1} us per limb"

[[units]]
name = "bconv"
class = "bconv"
style = "mac"
count = 1
lanes = {bconv}
source = "calibrated: {bconv_ns:.3} ns per multiply-add"

[[units]]
name = "automorph"
class = "automorph"
count = 1
lanes = {auto}
source = "calibrated: {auto_us:.1} us per limb"

[[units]]
name = "kshgen"
class = "kshgen"
count = 1
lanes = {keygen}
source = "calibrated: {keygen_us:.1} us per limb of XOF regeneration"
"#,
        ntt_us = us(c.ntt_limb),
        elem_us = us(c.elem_limb),
        bconv_ns = c.bconv_mac * 1e9,
        auto_us = us(c.automorph_limb),
        keygen_us = us(c.keygen_limb),
    )
}
