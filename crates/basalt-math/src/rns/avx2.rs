//! AVX2 forms of the RNS kernels of [`super::simd`], four coefficients per vector, for x86 CPUs
//! without AVX-512: BConv's step 2 for one output limb ([`convert_limb`]), and the Shoup
//! multiplications of BConv's step 1 and of ModDown/Rescale's last pass ([`mul_shoup`],
//! [`sub_mul_shoup_add`]).
//!
//! # Why
//! Without these, such CPUs run the scalar loops: step 2 sums 128-bit products and reduces each
//! sum by a 128-bit Barrett reduction (about seven multiplications), so a one-limb Rescale
//! spent more time in BConv than in its NTTs.
//!
//! # How
//! The arithmetic is [`super::simd`]'s lazy Shoup sum, with the same bounds ([`super::simd::fits`])
//! and the same canonical results. AVX2 has neither a 64×64-bit multiply nor unsigned 64-bit
//! comparisons, so:
//! - the low product `a·b mod 2^64` is three 32×32→64-bit products (`vpmuludq`) and the high
//!   product `⌊a·b/2^64⌋` four;
//! - a conditional subtraction `x ≥ k ? x − k : x` is a select on the sign bit of `x − k`
//!   when `x, k < 2^63`, and an unsigned minimum (sign bits flipped, then a signed compare)
//!   for the lazy sums of BConv, which may exceed 2^63.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// True when this CPU has AVX2 (checked once).
pub(super) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *HAS.get_or_init(|| is_x86_feature_detected!("avx2"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// BConv's step 2 for one output limb, as [`super::simd::convert_limb`] (same arguments, same
/// result), four coefficients at a time, by a kernel specialised to the input count.
///
/// # Panics
/// If [`available`] is false, [`super::simd::fits`]`(y.len(), p)` is false, lengths disagree,
/// or the limb length is not a multiple of 4.
#[allow(clippy::too_many_arguments)]
pub(super) fn convert_limb(
    y: &[Vec<u64>],
    t: &[u64],
    ts: &[u64],
    p: u64,
    u: &[u64],
    neg_q: u64,
    off: u64,
    out: &mut [u64],
) {
    let n = out.len();
    assert!(available() && super::simd::fits(y.len(), p), "rns::avx2: unsupported CPU or modulus");
    assert!(y.len() == t.len() && t.len() == ts.len(), "rns::avx2: table shape");
    assert!(y.iter().all(|yi| yi.len() >= n) && (u.is_empty() || u.len() >= n));
    assert_eq!(n % 4, 0, "rns::avx2: limb length must be a multiple of 4");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU supports AVX2 (checked by `available`), and every access below stays
    // inside the slices whose lengths were just checked.
    unsafe {
        let a = (neg_q, off);
        match y.len() {
            1 => convert_kernel::<1>(y, t, ts, p, u, a, out),
            2 => convert_kernel::<2>(y, t, ts, p, u, a, out),
            3 => convert_kernel::<3>(y, t, ts, p, u, a, out),
            4 => convert_kernel::<4>(y, t, ts, p, u, a, out),
            5 => convert_kernel::<5>(y, t, ts, p, u, a, out),
            6 => convert_kernel::<6>(y, t, ts, p, u, a, out),
            7 => convert_kernel::<7>(y, t, ts, p, u, a, out),
            8 => convert_kernel::<8>(y, t, ts, p, u, a, out),
            f => unreachable!("fits() admits 1 to 8 inputs, not {f}"),
        }
    }
}

/// The kernel for `F` inputs (a constant: the input loop unrolls and the table constants stay
/// in registers).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn convert_kernel<const F: usize>(
    y: &[Vec<u64>],
    t: &[u64],
    ts: &[u64],
    p: u64,
    u: &[u64],
    (neg_q, off): (u64, u64),
    out: &mut [u64],
) {
    let n = out.len();
    let pv = split(p);
    let tv: [(__m256i, __m256i); F] = std::array::from_fn(|i| split(t[i]));
    let tsv: [(__m256i, __m256i); F] = std::array::from_fn(|i| split(ts[i]));
    let mut steps = Vec::new();
    let mut k = super::simd::top_step(F);
    while k >= 1 {
        steps.push(_mm256_set1_epi64x((k * p) as i64));
        k /= 2;
    }
    // Bring `x < 2·top_step·p` (below 2^64, not always below 2^63) to [0, p).
    let reduce = |mut x: __m256i| {
        for &kp in &steps {
            x = min_u64(x, _mm256_sub_epi64(x, kp));
        }
        x
    };
    let (nqv, offv) = (split(neg_q), _mm256_set1_epi64x(off as i64));
    let rows: [&[u64]; F] = std::array::from_fn(|i| &y[i][..n]);
    for c in (0..n).step_by(4) {
        let mut sum_lo = _mm256_setzero_si256();
        let mut sum_q = _mm256_setzero_si256();
        for i in 0..F {
            // SAFETY: `c + 4 <= n == rows[i].len()`.
            let a = unsafe { _mm256_loadu_si256(rows[i].as_ptr().add(c).cast()) };
            let a_hi = _mm256_srli_epi64::<32>(a);
            sum_lo = _mm256_add_epi64(sum_lo, mul_lo(a, a_hi, tv[i]));
            sum_q = _mm256_add_epi64(sum_q, mul_hi(a, a_hi, tsv[i]));
        }
        let qp = mul_lo(sum_q, _mm256_srli_epi64::<32>(sum_q), pv);
        let mut r = reduce(_mm256_sub_epi64(sum_lo, qp));
        if !u.is_empty() {
            // SAFETY: `c + 4 <= n <= u.len()` (checked by the caller).
            let uv = unsafe { _mm256_loadu_si256(u.as_ptr().add(c).cast()) };
            // `u ≤ f < 2^32`: its high half is zero.
            let v = reduce(mul_lo(uv, _mm256_setzero_si256(), nqv));
            r = sub_if_ge(_mm256_add_epi64(r, v), pv.0);
        }
        if off != 0 {
            r = sub_if_ge(_mm256_add_epi64(r, offv), pv.0);
        }
        // SAFETY: `c + 4 <= n == out.len()`.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(c).cast(), r) };
    }
}

/// A constant `b` broadcast as `(b, b >> 32)` for [`mul_lo`] and [`mul_hi`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn split(b: u64) -> (__m256i, __m256i) {
    (_mm256_set1_epi64x(b as i64), _mm256_set1_epi64x((b >> 32) as i64))
}

/// `a·b mod 2^64` per lane (`a_hi = a >> 32`, `b` from [`split`]): three 32×32→64-bit products
/// (the high halves' product only affects bits above 2^64).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn mul_lo(a: __m256i, a_hi: __m256i, (b, b_hi): (__m256i, __m256i)) -> __m256i {
    let ll = _mm256_mul_epu32(a, b);
    let cross = _mm256_add_epi64(_mm256_mul_epu32(a, b_hi), _mm256_mul_epu32(a_hi, b));
    _mm256_add_epi64(ll, _mm256_slli_epi64::<32>(cross))
}

/// `⌊a·b / 2^64⌋` per lane (`a_hi = a >> 32`, `b` from [`split`]), from four 32×32→64-bit
/// products; the middle column's carries are summed below 2^34 and shifted in.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn mul_hi(a: __m256i, a_hi: __m256i, (b, b_hi): (__m256i, __m256i)) -> __m256i {
    let lo32 = _mm256_set1_epi64x(0xffff_ffff);
    let ll = _mm256_mul_epu32(a, b);
    let lh = _mm256_mul_epu32(a, b_hi);
    let hl = _mm256_mul_epu32(a_hi, b);
    let hh = _mm256_mul_epu32(a_hi, b_hi);
    let mid = _mm256_add_epi64(
        _mm256_srli_epi64::<32>(ll),
        _mm256_add_epi64(_mm256_and_si256(lh, lo32), _mm256_and_si256(hl, lo32)),
    );
    _mm256_add_epi64(
        _mm256_add_epi64(hh, _mm256_srli_epi64::<32>(mid)),
        _mm256_add_epi64(_mm256_srli_epi64::<32>(lh), _mm256_srli_epi64::<32>(hl)),
    )
}

/// The unsigned minimum per lane: flipping the sign bits turns the signed comparison
/// (the only one AVX2 has) into an unsigned one.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn min_u64(x: __m256i, y: __m256i) -> __m256i {
    let sign = _mm256_set1_epi64x(i64::MIN);
    let x_gt_y = _mm256_cmpgt_epi64(_mm256_xor_si256(x, sign), _mm256_xor_si256(y, sign));
    _mm256_blendv_epi8(x, y, x_gt_y)
}

/// `x ≥ k ? x − k : x` per lane for `x, k < 2^63`: `x − k` is then negative exactly when
/// `x < k`, and the select reads its sign bit.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sub_if_ge(x: __m256i, k: __m256i) -> __m256i {
    let d = _mm256_sub_epi64(x, k);
    _mm256_castpd_si256(_mm256_blendv_pd(
        _mm256_castsi256_pd(d),
        _mm256_castsi256_pd(x),
        _mm256_castsi256_pd(d),
    ))
}

/// `a·w mod p` per lane for `a < 2^64`, `w < p < 2^62`, `ws = ⌊w·2^64/p⌋` (Shoup), reduced:
/// `a·w − ⌊a·ws/2^64⌋·p` lies in `[0, 2p)`, below 2^63.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn shoup_lanes(
    a: __m256i,
    w: (__m256i, __m256i),
    ws: (__m256i, __m256i),
    p: (__m256i, __m256i),
) -> __m256i {
    let a_hi = _mm256_srli_epi64::<32>(a);
    let q = mul_hi(a, a_hi, ws);
    let r = _mm256_sub_epi64(mul_lo(a, a_hi, w), mul_lo(q, _mm256_srli_epi64::<32>(q), p));
    sub_if_ge(r, p.0)
}

/// `out[c] = x[c]·w mod p` (`w < p < 2^62`, `ws` its Shoup constant), or `None` without AVX2
/// or for a length that is not a multiple of 4 (the caller then stays scalar).
pub(super) fn mul_shoup(x: &[u64], w: u64, ws: u64, p: u64, out: &mut [u64]) -> Option<()> {
    if !available() || x.len() != out.len() || !x.len().is_multiple_of(4) || p >= 1 << 62 {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: AVX2 present (checked above); `x` and `out` have the same length, a multiple of
    // 4, so every 4-lane access is in bounds.
    unsafe {
        mul_shoup_kernel(x, w, ws, p, out)
    }
    Some(())
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn mul_shoup_kernel(x: &[u64], w: u64, ws: u64, p: u64, out: &mut [u64]) {
    let (wv, wsv, pv) = (split(w), split(ws), split(p));
    for c in (0..x.len()).step_by(4) {
        // SAFETY: `c + 4 <= x.len() == out.len()` (checked by `mul_shoup`).
        unsafe {
            let a = _mm256_loadu_si256(x.as_ptr().add(c).cast());
            let r = shoup_lanes(a, wv, wsv, pv);
            _mm256_storeu_si256(out.as_mut_ptr().add(c).cast(), r);
        }
    }
}

/// `y[c] = (x[c] − y[c])·w mod p (+ add[c])`, all inputs reduced modulo `p < 2^62`, `ws` the
/// Shoup constant of `w`: ModDown's and Rescale's last pass. `None` (nothing done) without
/// AVX2 or for lengths that differ or are not a multiple of 4.
pub(super) fn sub_mul_shoup_add(
    x: &[u64],
    y: &mut [u64],
    (w, ws): (u64, u64),
    p: u64,
    add: Option<&[u64]>,
) -> Option<()> {
    let n = y.len();
    if !available() || x.len() != n || add.is_some_and(|a| a.len() != n) || !n.is_multiple_of(4) {
        return None;
    }
    if p >= 1 << 62 {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: AVX2 present (checked above); all slices have length `n`, a multiple of 4.
    unsafe {
        sub_mul_shoup_add_kernel(x, y, w, ws, p, add)
    }
    Some(())
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sub_mul_shoup_add_kernel(
    x: &[u64],
    y: &mut [u64],
    w: u64,
    ws: u64,
    p: u64,
    add: Option<&[u64]>,
) {
    let (wv, wsv, pv) = (split(w), split(ws), split(p));
    let zero = _mm256_setzero_si256();
    for c in (0..y.len()).step_by(4) {
        // SAFETY: `c + 4 <= n`, the common length of `x`, `y` and `add` (checked by the caller).
        unsafe {
            let xv = _mm256_loadu_si256(x.as_ptr().add(c).cast());
            let yv = _mm256_loadu_si256(y.as_ptr().add(c).cast());
            // x − y mod p: add p back where the difference went negative (it lies in (−p, p)).
            let d = _mm256_sub_epi64(xv, yv);
            let d = _mm256_add_epi64(d, _mm256_and_si256(_mm256_cmpgt_epi64(zero, d), pv.0));
            let mut r = shoup_lanes(d, wv, wsv, pv);
            if let Some(a) = add {
                let av = _mm256_loadu_si256(a.as_ptr().add(c).cast());
                r = sub_if_ge(_mm256_add_epi64(r, av), pv.0);
            }
            _mm256_storeu_si256(y.as_mut_ptr().add(c).cast(), r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modular::Modulus;
    use crate::primes::is_prime;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The largest prime below `2^bits`.
    fn prime_below(bits: u32) -> u64 {
        (1..).map(|k| (1u64 << bits) - k).find(|&q| is_prime(q)).unwrap()
    }

    /// The smallest prime above `2^bits`.
    fn prime_above(bits: u32) -> u64 {
        (1..).map(|k| (1u64 << bits) + k).find(|&q| is_prime(q)).unwrap()
    }

    #[test]
    fn lane_products_match_u128() {
        if !available() {
            return; // nothing to compare on this CPU
        }
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let edges = [0u64, 1, 0xffff_ffff, 1 << 32, (1 << 62) - 1, 1 << 63, u64::MAX];
        let mut vals: Vec<u64> = edges.to_vec();
        vals.extend((0..200).map(|_| rng.random::<u64>()));
        for &b in &vals {
            for a4 in vals.chunks(4).filter(|c| c.len() == 4) {
                let mut lo = [0u64; 4];
                let mut hi = [0u64; 4];
                let mut mn = [0u64; 4];
                // SAFETY: AVX2 is present (checked above); the arrays hold four u64 each.
                unsafe { lanes(a4, b, &mut lo, &mut hi, &mut mn) };
                for k in 0..4 {
                    let prod = a4[k] as u128 * b as u128;
                    assert_eq!(lo[k], prod as u64, "lo {:#x}·{b:#x}", a4[k]);
                    assert_eq!(hi[k], (prod >> 64) as u64, "hi {:#x}·{b:#x}", a4[k]);
                    assert_eq!(mn[k], a4[k].min(b), "min {:#x}, {b:#x}", a4[k]);
                }
            }
        }
    }

    /// Low product, high product and unsigned minimum of four lanes by one constant.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn lanes(a: &[u64], b: u64, lo: &mut [u64; 4], hi: &mut [u64; 4], mn: &mut [u64; 4]) {
        // SAFETY: `a` has four elements (the caller passes chunks of 4); the outputs are arrays
        // of four.
        unsafe {
            let av = _mm256_loadu_si256(a.as_ptr().cast());
            let a_hi = _mm256_srli_epi64::<32>(av);
            _mm256_storeu_si256(lo.as_mut_ptr().cast(), mul_lo(av, a_hi, split(b)));
            _mm256_storeu_si256(hi.as_mut_ptr().cast(), mul_hi(av, a_hi, split(b)));
            _mm256_storeu_si256(mn.as_mut_ptr().cast(), min_u64(av, _mm256_set1_epi64x(b as i64)));
        }
    }

    #[test]
    fn lazy_shoup_sum_matches_u128_arithmetic() {
        if !available() {
            return;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (bits, above) in [
            (20u32, false),
            (36, false),
            (40, false),
            (52, false),
            (60, false),
            (60, true),
            (61, false),
            (61, true),
            (62, false),
        ] {
            let p = if above { prime_above(bits) } else { prime_below(bits) };
            let m = Modulus::new(p).unwrap();
            for f in 1..=8usize {
                if !super::super::simd::fits(f, p) {
                    continue;
                }
                let n = 64;
                // Inputs below 2^62 (their own moduli may exceed p), extremes included.
                let y: Vec<Vec<u64>> = (0..f)
                    .map(|_| {
                        let mut v: Vec<u64> =
                            (0..n).map(|_| rng.random_range(0..1 << 62)).collect();
                        v[0] = 0;
                        v[1] = (1 << 62) - 1;
                        v[2] = p - 1;
                        v[3] = p;
                        v
                    })
                    .collect();
                let t: Vec<u64> =
                    (0..f).map(|i| if i == 0 { p - 1 } else { rng.random_range(0..p) }).collect();
                let ts: Vec<u64> = t.iter().map(|&x| m.shoup(x)).collect();
                // `u` up to `f` (the centred mode rounds up to it).
                let u: Vec<u64> = (0..n).map(|c| (c % (f + 1)) as u64).collect();
                for neg_q in [0, p - 1, rng.random_range(0..p)] {
                    for (exact, minus) in
                        [(false, 0u64), (true, 0), (false, p - 1), (true, 12345 % p), (true, p - 1)]
                    {
                        let uu: &[u64] = if exact { &u } else { &[] };
                        let mut out = vec![0u64; n];
                        convert_limb(&y, &t, &ts, p, uu, neg_q, m.neg(minus), &mut out);
                        for c in 0..n {
                            let mut s: u128 = 0;
                            for i in 0..f {
                                s += y[i][c] as u128 * t[i] as u128;
                            }
                            if exact {
                                s += u[c] as u128 * neg_q as u128;
                            }
                            let want = ((s + p as u128 - minus as u128) % p as u128) as u64;
                            assert_eq!(out[c], want, "p={p} f={f} exact={exact} c={c}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn shoup_kernels_match_scalar_and_u128() {
        if !available() {
            return;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for bits in [20u32, 36, 40, 50, 55, 60, 61, 62] {
            let p = prime_below(bits);
            let m = Modulus::new(p).unwrap();
            let n = 64;
            let mut x: Vec<u64> = (0..n).map(|_| rng.random_range(0..p)).collect();
            let mut y: Vec<u64> = (0..n).map(|_| rng.random_range(0..p)).collect();
            let mut c: Vec<u64> = (0..n).map(|_| rng.random_range(0..p)).collect();
            (x[0], y[0], x[1], y[1], x[2], y[2], x[3], y[3]) = (0, p - 1, p - 1, 0, 5, 5, 0, 0);
            (c[0], c[1]) = (p - 1, p - 1);
            for w in [0, 1, p - 1, rng.random_range(0..p)] {
                let ws = m.shoup(w);
                let mut out = vec![0u64; n];
                assert_eq!(mul_shoup(&x, w, ws, p, &mut out), Some(()));
                let want: Vec<u64> =
                    x.iter().map(|&v| (v as u128 * w as u128 % p as u128) as u64).collect();
                assert_eq!(out, want, "mul_shoup bits={bits} w={w}");
                let scalar: Vec<u64> = x.iter().map(|&v| m.mul_shoup(v, w, ws)).collect();
                assert_eq!(out, scalar, "mul_shoup vs scalar bits={bits} w={w}");
                for add in [None, Some(c.as_slice())] {
                    let mut got = y.clone();
                    assert_eq!(sub_mul_shoup_add(&x, &mut got, (w, ws), p, add), Some(()));
                    for k in 0..n {
                        let d = (x[k] as u128 + p as u128 - y[k] as u128) % p as u128;
                        let mut v = d * w as u128 % p as u128;
                        if let Some(a) = add {
                            v = (v + a[k] as u128) % p as u128;
                        }
                        assert_eq!(got[k], v as u64, "sub_mul_shoup_add bits={bits} w={w} k={k}");
                    }
                }
            }
        }
    }

    #[test]
    fn refuses_lengths_it_cannot_cover() {
        let p = prime_below(40);
        let mut out = vec![0u64; 6];
        assert_eq!(mul_shoup(&[1; 6], 1, 1, p, &mut out), None);
        assert_eq!(sub_mul_shoup_add(&[1; 6], &mut out, (1, 1), p, None), None);
        let mut out = vec![0u64; 8];
        assert_eq!(mul_shoup(&[1; 4], 1, 1, p, &mut out), None);
    }
}
