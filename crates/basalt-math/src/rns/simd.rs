//! AVX-512 forms of the RNS kernels' inner loops, eight coefficients per vector: BConv's
//! step 2 for one output limb ([`convert_limb`]), and the Shoup multiplications of BConv's step 1
//! and of ModDown/Rescale's last pass ([`mul_shoup`], [`sub_mul_shoup_add`]). The scalar loops
//! of the latter compile to data-dependent branches (one misprediction in two coefficients).
//!
//! # Why (BConv)
//! The scalar step 2 spends about 20 cycles per output coefficient (a 128-bit multiply-add per
//! input, then a 128-bit Barrett reduction): after key switching stopped streaming its digits
//! through memory, BConv was the largest kernel of a key switch. AVX-512 has no 64×64→128-bit
//! multiply, but a **lazy Shoup sum** needs only the low product and a high product:
//!
//! `r_i = y_i·t_i − ⌊y_i·t'_i / 2^64⌋·p ∈ [0, 1.25p)` for `y_i < 2^62` and
//! `t'_i = ⌊t_i·2^64/p⌋`, so `R = Σ_i r_i < 1.25·F·p`. When that bound (plus room for the exact
//! variant's `u·(−Q)` term) is below 2^64, `R` is computed exactly in wrapping 64-bit lanes as
//! `Σ lo(y_i·t_i) − (Σ q_i)·p`, and a few conditional subtractions of `2^s·p` bring it to
//! `[0, p)`. The result is the canonical residue, hence identical to the scalar path's.
//!
//! The high product is four 32×32→64 multiplies (`vpmuludq`); the low one is `vpmullq`
//! (AVX-512DQ). [`try_convert_limb`] checks the bound per output modulus ([`fits`]) and picks
//! this kernel, or on CPUs without AVX-512 the four-lane AVX2 form of the same arithmetic
//! (`super::avx2`); otherwise the caller stays scalar. [`mul_shoup`] and
//! [`sub_mul_shoup_add`] fall back to AVX2 the same way.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// True when this CPU has AVX-512F and AVX-512DQ (checked once).
pub(super) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *HAS.get_or_init(|| {
            is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512dq")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The smallest `k = 2^s` with `2k·p` above every value the kernel reduces: the lazy sum
/// (`< 1.25·F·p`) and `u·(p − Q mod p)` (`u ≤ F`). Conditional subtractions of `k·p, …, p`
/// then bring any of them to `[0, p)`.
pub(super) fn top_step(inputs: usize) -> u64 {
    let need = (5 * inputs as u64).div_ceil(4);
    let mut k = 1;
    while 2 * k < need {
        k *= 2;
    }
    k
}

/// Whether the lazy sum of `inputs` terms modulo `p` (below `1.25·inputs·p`) and the largest
/// multiple `top_step·p` subtracted from it fit in 64 bits. (Primes "of 61 bits" may lie just
/// above 2^61, as in Lattigo; five inputs still fit.)
pub(super) fn fits(inputs: usize, p: u64) -> bool {
    let p = p as u128;
    (1..=8).contains(&inputs)
        && 5 * inputs as u128 * p < 1u128 << 66
        && top_step(inputs) as u128 * p < 1u128 << 64
}

/// Step 2 for one output limb by the widest kernel this CPU has (AVX-512, else AVX2), or
/// `None` (nothing done) when neither applies: no such CPU, an output modulus that fails
/// [`fits`], or a limb length that is not a multiple of the vector width. Arguments as
/// [`convert_limb`].
#[allow(clippy::too_many_arguments)]
pub(super) fn try_convert_limb(
    y: &[Vec<u64>],
    t: &[u64],
    ts: &[u64],
    p: u64,
    u: &[u64],
    neg_q: u64,
    off: u64,
    out: &mut [u64],
) -> Option<()> {
    if !fits(y.len(), p) {
        return None;
    }
    if available() && out.len().is_multiple_of(8) {
        convert_limb(y, t, ts, p, u, neg_q, off, out);
    } else if super::avx2::available() && out.len().is_multiple_of(4) {
        super::avx2::convert_limb(y, t, ts, p, u, neg_q, off, out);
    } else {
        return None;
    }
    Some(())
}

/// Step 2 for one output limb: `out[c] = (Σ_i y_i[c]·t[i] − u[c]·Q − minus) mod p`, with
/// `neg_q = (−Q) mod p`, `off = (−minus) mod p`, `ts[i] = ⌊t[i]·2^64/p⌋`; `u` empty for the
/// fast variant.
///
/// # Panics
/// If [`available`] is false, [`fits`]`(y.len(), p)` is false, lengths disagree, or the limb
/// length is not a multiple of 8.
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
    assert!(available() && fits(y.len(), p), "rns::simd: unsupported CPU or modulus");
    assert!(y.len() == t.len() && t.len() == ts.len(), "rns::simd: table shape");
    assert!(y.iter().all(|yi| yi.len() >= n) && (u.is_empty() || u.len() >= n));
    assert_eq!(n % 8, 0, "rns::simd: limb length must be a multiple of 8");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU supports AVX-512F/DQ (checked by `available`), and every access below
    // stays inside the slices whose lengths were just checked.
    unsafe {
        kernel(y, t, ts, p, u, neg_q, off, out)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
#[allow(clippy::too_many_arguments)]
fn kernel(
    y: &[Vec<u64>],
    t: &[u64],
    ts: &[u64],
    p: u64,
    u: &[u64],
    neg_q: u64,
    off: u64,
    out: &mut [u64],
) {
    let f = y.len();
    let pv = _mm512_set1_epi64(p as i64);
    let tv: Vec<__m512i> = t.iter().map(|&x| _mm512_set1_epi64(x as i64)).collect();
    let tsv: Vec<(__m512i, __m512i)> = ts.iter().map(|&x| split(x)).collect();
    let mut steps = Vec::new();
    let mut k = top_step(f);
    while k >= 1 {
        steps.push(_mm512_set1_epi64((k * p) as i64));
        k /= 2;
    }
    // Bring `x < 2·top_step·p` to [0, p): `min(x, x − kp)` keeps x when the subtraction wraps
    // (`kp < 2^64`, so a wrapped difference is always above x).
    let reduce = |mut x: __m512i| {
        for &kp in &steps {
            x = _mm512_min_epu64(x, _mm512_sub_epi64(x, kp));
        }
        x
    };
    let (nqv, offv) = (_mm512_set1_epi64(neg_q as i64), _mm512_set1_epi64(off as i64));
    for c in (0..out.len()).step_by(8) {
        let mut sum_lo = _mm512_setzero_si512();
        let mut sum_q = _mm512_setzero_si512();
        for i in 0..f {
            // SAFETY: `c + 8 <= n <= y[i].len()` (checked by the caller).
            let a = unsafe { _mm512_loadu_si512(y[i].as_ptr().add(c).cast()) };
            sum_lo = _mm512_add_epi64(sum_lo, _mm512_mullo_epi64(a, tv[i]));
            let hi = mul_hi(a, tsv[i]);
            sum_q = _mm512_add_epi64(sum_q, hi);
        }
        let mut r = reduce(_mm512_sub_epi64(sum_lo, _mm512_mullo_epi64(sum_q, pv)));
        if !u.is_empty() {
            // SAFETY: `c + 8 <= n <= u.len()` (checked by the caller).
            let uv = unsafe { _mm512_loadu_si512(u.as_ptr().add(c).cast()) };
            let v = reduce(_mm512_mullo_epi64(uv, nqv));
            r = _mm512_add_epi64(r, v);
            r = _mm512_min_epu64(r, _mm512_sub_epi64(r, pv));
        }
        if off != 0 {
            r = _mm512_add_epi64(r, offv);
            r = _mm512_min_epu64(r, _mm512_sub_epi64(r, pv));
        }
        // SAFETY: `c + 8 <= out.len()`.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(c).cast(), r) };
    }
}

/// A constant `b` broadcast as `(b, b >> 32)` for [`mul_hi`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn split(b: u64) -> (__m512i, __m512i) {
    (_mm512_set1_epi64(b as i64), _mm512_set1_epi64((b >> 32) as i64))
}

/// High 64 bits of `a·b` per lane (`b` from [`split`]), from four 32×32→64-bit products.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn mul_hi(a: __m512i, (b, b_hi): (__m512i, __m512i)) -> __m512i {
    let lo32 = _mm512_set1_epi64(0xffff_ffff);
    let a_hi = _mm512_srli_epi64::<32>(a);
    let ll = _mm512_mul_epu32(a, b);
    let lh = _mm512_mul_epu32(a, b_hi);
    let hl = _mm512_mul_epu32(a_hi, b);
    let hh = _mm512_mul_epu32(a_hi, b_hi);
    let mid = _mm512_add_epi64(
        _mm512_srli_epi64::<32>(ll),
        _mm512_add_epi64(_mm512_and_si512(lh, lo32), _mm512_and_si512(hl, lo32)),
    );
    _mm512_add_epi64(
        _mm512_add_epi64(hh, _mm512_srli_epi64::<32>(mid)),
        _mm512_add_epi64(_mm512_srli_epi64::<32>(lh), _mm512_srli_epi64::<32>(hl)),
    )
}

/// `a·w mod p` per lane for `a < 2^64`, `w < p < 2^63`, `ws = ⌊w·2^64/p⌋` (Shoup), reduced.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn shoup_lanes(a: __m512i, w: __m512i, ws: (__m512i, __m512i), p: __m512i) -> __m512i {
    let q = mul_hi(a, ws);
    let r = _mm512_sub_epi64(_mm512_mullo_epi64(a, w), _mm512_mullo_epi64(q, p));
    _mm512_min_epu64(r, _mm512_sub_epi64(r, p))
}

/// `out[c] = x[c]·w mod p` (`w < p < 2^62`, `ws` its Shoup constant); without AVX-512F/DQ or
/// for a length that is not a multiple of 8, the AVX2 form ([`super::avx2::mul_shoup`]), whose
/// `None` leaves the caller scalar.
pub(super) fn mul_shoup(x: &[u64], w: u64, ws: u64, p: u64, out: &mut [u64]) -> Option<()> {
    if !available() || x.len() != out.len() || !x.len().is_multiple_of(8) || p >= 1 << 62 {
        return super::avx2::mul_shoup(x, w, ws, p, out);
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: AVX-512F/DQ present (checked above); `x` and `out` have the same length, a
    // multiple of 8, so every 8-lane access is in bounds.
    unsafe {
        mul_shoup_kernel(x, w, ws, p, out)
    }
    Some(())
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn mul_shoup_kernel(x: &[u64], w: u64, ws: u64, p: u64, out: &mut [u64]) {
    let (wv, wsv, pv) = (_mm512_set1_epi64(w as i64), split(ws), _mm512_set1_epi64(p as i64));
    for c in (0..x.len()).step_by(8) {
        // SAFETY: `c + 8 <= x.len() == out.len()` (checked by `mul_shoup`).
        unsafe {
            let a = _mm512_loadu_si512(x.as_ptr().add(c).cast());
            let r = shoup_lanes(a, wv, wsv, pv);
            _mm512_storeu_si512(out.as_mut_ptr().add(c).cast(), r);
        }
    }
}

/// `y[c] = (x[c] − y[c])·w mod p (+ add[c])`, all inputs reduced modulo `p < 2^62`, `ws` the
/// Shoup constant of `w`: ModDown's and Rescale's last pass. Without AVX-512F/DQ or for a
/// length that is not a multiple of 8, the AVX2 form ([`super::avx2::sub_mul_shoup_add`]);
/// `None` (nothing done) when that does not apply either.
pub(super) fn sub_mul_shoup_add(
    x: &[u64],
    y: &mut [u64],
    (w, ws): (u64, u64),
    p: u64,
    add: Option<&[u64]>,
) -> Option<()> {
    let n = y.len();
    if !available() || x.len() != n || add.is_some_and(|a| a.len() != n) || !n.is_multiple_of(8) {
        return super::avx2::sub_mul_shoup_add(x, y, (w, ws), p, add);
    }
    if p >= 1 << 62 {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: AVX-512F/DQ present (checked above); all slices have length `n`, a multiple of 8.
    unsafe {
        sub_mul_shoup_add_kernel(x, y, w, ws, p, add)
    }
    Some(())
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn sub_mul_shoup_add_kernel(
    x: &[u64],
    y: &mut [u64],
    w: u64,
    ws: u64,
    p: u64,
    add: Option<&[u64]>,
) {
    let (wv, wsv, pv) = (_mm512_set1_epi64(w as i64), split(ws), _mm512_set1_epi64(p as i64));
    for c in (0..y.len()).step_by(8) {
        // SAFETY: `c + 8 <= n`, the common length of `x`, `y` and `add` (checked by the caller).
        unsafe {
            let xv = _mm512_loadu_si512(x.as_ptr().add(c).cast());
            let yv = _mm512_loadu_si512(y.as_ptr().add(c).cast());
            // x − y mod p: the wrapped difference plus p is the smaller of the two when x < y.
            let d = _mm512_sub_epi64(xv, yv);
            let d = _mm512_min_epu64(d, _mm512_add_epi64(d, pv));
            let mut r = shoup_lanes(d, wv, wsv, pv);
            if let Some(a) = add {
                r = _mm512_add_epi64(r, _mm512_loadu_si512(a.as_ptr().add(c).cast()));
                r = _mm512_min_epu64(r, _mm512_sub_epi64(r, pv));
            }
            _mm512_storeu_si512(y.as_mut_ptr().add(c).cast(), r);
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

    /// The largest prime below `2^bits` (not NTT-friendly: this kernel does not care).
    fn prime_below(bits: u32) -> u64 {
        (1..).map(|k| (1u64 << bits) - k).find(|&q| is_prime(q)).unwrap()
    }

    /// The smallest prime above `2^bits`.
    fn prime_above(bits: u32) -> u64 {
        (1..).map(|k| (1u64 << bits) + k).find(|&q| is_prime(q)).unwrap()
    }

    #[test]
    fn lazy_shoup_sum_matches_u128_arithmetic() {
        if !available() {
            return; // nothing to compare on this CPU
        }
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (bits, above) in [
            (20u32, false),
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
                if !fits(f, p) {
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
                        v
                    })
                    .collect();
                let t: Vec<u64> =
                    (0..f).map(|i| if i == 0 { p - 1 } else { rng.random_range(0..p) }).collect();
                let ts: Vec<u64> = t.iter().map(|&x| m.shoup(x)).collect();
                let u: Vec<u64> = (0..n).map(|c| (c % (f + 1)) as u64).collect();
                let neg_q = rng.random_range(0..p);
                for (exact, minus) in [(false, 0u64), (true, 0), (false, p - 1), (true, 12345 % p)]
                {
                    let uu: &[u64] = if exact { &u } else { &[] };
                    let mut out = vec![0u64; n];
                    convert_limb(&y, &t, &ts, p, uu, neg_q, m.neg(minus), &mut out);
                    for c in 0..n {
                        let mut s: u128 = 0;
                        for i in 0..f {
                            s += y[i][c] as u128 * t[i] as u128;
                        }
                        let mut want = m.reduce_u128(s);
                        if exact {
                            want = m.add(want, m.mul(u[c], neg_q));
                        }
                        want = m.sub(want, minus);
                        assert_eq!(out[c], want, "p={p} f={f} exact={exact} c={c}");
                    }
                }
            }
        }
    }

    #[test]
    fn shoup_kernels_match_scalar() {
        if !available() {
            return;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for bits in [20u32, 40, 61, 62] {
            let p = if bits == 62 { prime_below(62) } else { prime_below(bits) };
            let m = Modulus::new(p).unwrap();
            let n = 64;
            let mut x: Vec<u64> = (0..n).map(|_| rng.random_range(0..p)).collect();
            let mut y: Vec<u64> = (0..n).map(|_| rng.random_range(0..p)).collect();
            let c: Vec<u64> = (0..n).map(|_| rng.random_range(0..p)).collect();
            (x[0], y[0], x[1], y[1], x[2], y[2]) = (0, p - 1, p - 1, 0, 5, 5);
            for w in [0, 1, p - 1, rng.random_range(0..p)] {
                let ws = m.shoup(w);
                let mut out = vec![0u64; n];
                assert_eq!(mul_shoup(&x, w, ws, p, &mut out), Some(()));
                let want: Vec<u64> = x.iter().map(|&v| m.mul_shoup(v, w, ws)).collect();
                assert_eq!(out, want, "mul_shoup bits={bits} w={w}");
                for add in [None, Some(c.as_slice())] {
                    let mut got = y.clone();
                    assert_eq!(sub_mul_shoup_add(&x, &mut got, (w, ws), p, add), Some(()));
                    for k in 0..n {
                        let mut v = m.mul_shoup(m.sub(x[k], y[k]), w, ws);
                        if let Some(a) = add {
                            v = m.add(a[k], v);
                        }
                        assert_eq!(got[k], v, "sub_mul_shoup_add bits={bits} w={w} k={k}");
                    }
                }
            }
        }
    }

    #[test]
    fn bound_check_refuses_what_could_overflow() {
        assert!(fits(5, prime_below(61)));
        assert!(fits(5, prime_above(61)));
        assert!(fits(6, prime_above(61)));
        assert!(!fits(7, prime_above(61)));
        assert!(fits(8, prime_below(60)));
        assert!(!fits(8, prime_below(62)));
        assert!(!fits(9, 97));
        assert!(!fits(0, 97));
    }
}
