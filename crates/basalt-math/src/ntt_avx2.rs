//! A negacyclic NTT for x86-64 CPUs with AVX2 but no AVX-512 (AMD Zen 2/3/4 without IFMA, most
//! Intel client parts), for primes below 2^62.
//!
//! It computes exactly the transform of [`crate::ntt::NttTable`]'s reference (`tfhe-ntt`'s
//! `prime64` plan): same root `ψ`, same bit-reversed slot order, every output fully reduced, so
//! the two are interchangeable bit for bit. What differs is how the work is laid out:
//!
//! - **Harvey butterflies with lazy reduction** (Harvey, "Faster arithmetic for number-theoretic
//!   transforms", 2014): values stay in `[0, 4p)` (forward) or `[0, 2p)` (inverse) between
//!   stages and are reduced once at the end. A conditional subtraction is one `vpsubq` and one
//!   `vblendvpd` on the sign of the difference (valid because `4p < 2^64`).
//! - **A cheaper Shoup quotient.** AVX2 has no 64×64→128 multiply; the high word of `w'·y` is
//!   assembled from 32×32→64 products (`vpmuludq`). We drop the low×low product and the carries
//!   of the middle terms: the quotient is then low by at most 2, so `w·y − q·p` lands in
//!   `[0, 4p)` instead of `[0, 2p)`, and one conditional subtraction restores the bound. Nine
//!   `vpmuludq` per four butterflies instead of ten, and far fewer additions and shifts.
//! - **Radix 4**: two stages per load/store of the data, two vectors of each quarter per
//!   iteration, and the butterflies' steps interleaved across those eight chains (see
//!   `mul_shoup`): one Shoup product is a ~20-cycle dependency chain, and issued one after
//!   another they fill the out-of-order window; interleaved, the multipliers stay busy.
//! - **The last two stages in registers**: four 4-element groups are transposed (4×4 of u64)
//!   so stages `n/4` and `n/2` become vertical butterflies with per-lane twiddles loaded
//!   contiguously from a table laid out for this pass; the final reduction happens there too.
//! - **Depth first**: each radix-4 pass splits the block into four, and the recursion runs
//!   breadth first once a block fits in L1 (see `LEAF`), so a 2^16 limb (512 KiB) makes
//!   three passes through L2 instead of eight.
//! - **The inverse's division by `n` fused** into its last stage (twiddles `n^{-1}` and
//!   `n^{-1}·ω`), instead of a separate pass.
//!
//! `basalt bench ntt` times this beside `tfhe-ntt` on the same data, alternately; the probe
//! `cargo run --release -p basalt-bench --example ntt_ab -- 16 60` does the same for one size.

use core::arch::x86_64::*;

/// Blocks of at most this many coefficients (16 KiB) are finished breadth first: they fit in
/// L1 together with their twiddles.
const LEAF: usize = 1 << 11;

/// Twiddles of one 16-coefficient chunk for the two innermost stages, in the order the pass
/// reads them: the stage-`n/4` twiddles of its four groups, then the stage-`n/2` twiddles of
/// the first (`e`) and second (`o`) half of each group. `*_s` are the Shoup companions
/// `⌊w·2^64/p⌋`.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct LastTwiddles {
    q: [u64; 4],
    q_s: [u64; 4],
    e: [u64; 4],
    e_s: [u64; 4],
    o: [u64; 4],
    o_s: [u64; 4],
}

/// Precomputed tables of the AVX2 NTT for one `(n, p)`.
#[derive(Clone)]
pub struct Avx2Ntt {
    log_n: u32,
    p: u64,
    /// `(ω_k, ⌊ω_k·2^64/p⌋)` for `k < n/4`, where `ω_k = ψ^{bitrev(k)}` (the radix-4 passes).
    fwd: Vec<[u64; 2]>,
    fwd_last: Vec<LastTwiddles>,
    /// The same for the inverse, with `ω_k^{-1}`.
    inv: Vec<[u64; 2]>,
    inv_first: Vec<LastTwiddles>,
    /// `n^{-1}` and `n^{-1}·ω_1^{-1}` with their Shoup companions (the fused last stage).
    n_inv: [u64; 2],
    n_inv_w1: [u64; 2],
}

impl core::fmt::Debug for Avx2Ntt {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Avx2Ntt").field("n", &self.n()).field("p", &self.p).finish()
    }
}

fn mul_mod(a: u64, b: u64, p: u64) -> u64 {
    ((a as u128 * b as u128) % p as u128) as u64
}

fn pow_mod(mut a: u64, mut e: u64, p: u64) -> u64 {
    let mut r = 1 % p;
    while e > 0 {
        if e & 1 == 1 {
            r = mul_mod(r, a, p);
        }
        a = mul_mod(a, a, p);
        e >>= 1;
    }
    r
}

fn shoup(w: u64, p: u64) -> [u64; 2] {
    [w, (((w as u128) << 64) / p as u128) as u64]
}

fn bit_reverse(k: usize, bits: u32) -> usize {
    if bits == 0 { 0 } else { k.reverse_bits() >> (usize::BITS - bits) }
}

impl Avx2Ntt {
    /// Tables for the negacyclic NTT of size `n` modulo `p` whose slot 0 evaluates at `psi`
    /// (a primitive `2n`-th root of unity mod `p`). `None` where this NTT does not apply: no
    /// AVX2 on this CPU, `n` not a power of two in `16..=2^20`, `p` even or not below 2^62, or
    /// `psi` not a primitive `2n`-th root.
    pub fn new(n: usize, p: u64, psi: u64) -> Option<Avx2Ntt> {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return None;
        }
        if !n.is_power_of_two()
            || !(16..=1 << 20).contains(&n)
            || p >= 1 << 62
            || p.is_multiple_of(2)
        {
            return None;
        }
        if psi >= p || pow_mod(psi, n as u64, p) != p - 1 {
            return None;
        }
        let log_n = n.trailing_zeros();
        // ω[bitrev(k)] = ψ^k and ω^{-1}[bitrev(k)] = ψ^{-k}.
        let psi_inv = pow_mod(psi, 2 * n as u64 - 1, p);
        let mut w = vec![0u64; n];
        let mut w_inv = vec![0u64; n];
        let (mut a, mut b) = (1u64, 1u64);
        for k in 0..n {
            let j = bit_reverse(k, log_n);
            w[j] = a;
            w_inv[j] = b;
            a = mul_mod(a, psi, p);
            b = mul_mod(b, psi_inv, p);
        }
        let last = |table: &[u64]| -> Vec<LastTwiddles> {
            (0..n / 16)
                .map(|c| {
                    let mut t = LastTwiddles::default();
                    for k in 0..4 {
                        [t.q[k], t.q_s[k]] = shoup(table[n / 4 + 4 * c + k], p);
                        [t.e[k], t.e_s[k]] = shoup(table[n / 2 + 8 * c + 2 * k], p);
                        [t.o[k], t.o_s[k]] = shoup(table[n / 2 + 8 * c + 2 * k + 1], p);
                    }
                    t
                })
                .collect()
        };
        let n_inv = pow_mod(n as u64 % p, p - 2, p);
        Some(Avx2Ntt {
            log_n,
            p,
            fwd: w[..n / 4].iter().map(|&x| shoup(x, p)).collect(),
            fwd_last: last(&w),
            inv: w_inv[..n / 4].iter().map(|&x| shoup(x, p)).collect(),
            inv_first: last(&w_inv),
            n_inv: shoup(n_inv, p),
            n_inv_w1: shoup(mul_mod(n_inv, w_inv[1], p), p),
        })
    }

    pub fn n(&self) -> usize {
        1 << self.log_n
    }

    pub fn modulus(&self) -> u64 {
        self.p
    }

    /// Coefficients (in `[0, 4p)`) → evaluations in bit-reversed order, fully reduced.
    ///
    /// # Panics
    /// If `a.len() != n`.
    pub fn forward(&self, a: &mut [u64]) {
        assert_eq!(a.len(), self.n(), "NTT input length");
        // SAFETY: `new` returns a table only after `is_x86_feature_detected!("avx2")`.
        unsafe { self.forward_avx2(a) }
    }

    /// Evaluations (bit-reversed, in `[0, 2p)`) → coefficients, divided by `n`, fully reduced.
    ///
    /// # Panics
    /// If `a.len() != n`.
    pub fn inverse(&self, a: &mut [u64]) {
        assert_eq!(a.len(), self.n(), "NTT input length");
        // SAFETY: as in `forward`.
        unsafe { self.inverse_avx2(a) }
    }

    #[target_feature(enable = "avx2")]
    fn forward_avx2(&self, a: &mut [u64]) {
        let c = Consts::new(self.p);
        let n = a.len();
        if (self.log_n - 2) % 2 == 1 {
            fwd_radix2(a, splat(self.fwd[1]), c);
            let (lo, hi) = a.split_at_mut(n / 2);
            self.fwd_rec(lo, 1, 0, c);
            self.fwd_rec(hi, 1, 1, c);
        } else {
            self.fwd_rec(a, 0, 0, c);
        }
    }

    /// Stages `s..log n` of a block that is group `g` of stage `s` (`log n − 2 − s` even).
    #[target_feature(enable = "avx2")]
    fn fwd_rec(&self, block: &mut [u64], s: u32, g: usize, c: Consts) {
        let n = self.n();
        let len = block.len();
        if len <= LEAF {
            let mut st = s;
            while st + 2 <= self.log_n - 2 {
                fwd_radix4(block, n >> (st + 1), 1 << st, g << (st - s), &self.fwd, c);
                st += 2;
            }
            fwd_last2(block, &self.fwd_last[g * len / 16..][..len / 16], c);
        } else {
            fwd_radix4(block, n >> (s + 1), 1 << s, g, &self.fwd, c);
            for (q, quarter) in block.chunks_exact_mut(len / 4).enumerate() {
                self.fwd_rec(quarter, s + 2, 4 * g + q, c);
            }
        }
    }

    #[target_feature(enable = "avx2")]
    fn inverse_avx2(&self, a: &mut [u64]) {
        let c = Consts::new(self.p);
        let n = a.len();
        let fused = (splat(self.n_inv), splat(self.n_inv_w1));
        if (self.log_n - 2) % 2 == 1 {
            let (lo, hi) = a.split_at_mut(n / 2);
            self.inv_rec(lo, 1, 0, c, fused);
            self.inv_rec(hi, 1, 1, c, fused);
            inv_radix2_fused(a, fused, c);
        } else {
            self.inv_rec(a, 0, 0, c, fused);
        }
    }

    /// Inverse stages `log n − 1` down to `s` of a block that is group `g` of stage `s`; stage
    /// 0 (when reached) is fused with the division by `n`.
    #[target_feature(enable = "avx2")]
    fn inv_rec(&self, block: &mut [u64], s: u32, g: usize, c: Consts, fused: (Tw, Tw)) {
        let n = self.n();
        let len = block.len();
        if len <= LEAF {
            inv_first2(block, &self.inv_first[g * len / 16..][..len / 16], c);
            let mut st = self.log_n as i64 - 4;
            while st >= s as i64 {
                let u = st as u32;
                let (t, m, g0) = (n >> (u + 1), 1 << u, g << (u - s));
                if u == 0 {
                    inv_radix4::<true>(block, t, m, g0, &self.inv, c, fused);
                } else {
                    inv_radix4::<false>(block, t, m, g0, &self.inv, c, fused);
                }
                st -= 2;
            }
        } else {
            for (q, quarter) in block.chunks_exact_mut(len / 4).enumerate() {
                self.inv_rec(quarter, s + 2, 4 * g + q, c, fused);
            }
            if s == 0 {
                inv_radix4::<true>(block, n >> 1, 1, g, &self.inv, c, fused);
            } else {
                inv_radix4::<false>(block, n >> (s + 1), 1 << s, g, &self.inv, c, fused);
            }
        }
    }
}

/// The modulus in the forms the butterflies use.
#[derive(Clone, Copy)]
struct Consts {
    p: __m256i,
    p_hi: __m256i,
    two_p: __m256i,
}

impl Consts {
    #[target_feature(enable = "avx2")]
    fn new(p: u64) -> Consts {
        Consts {
            p: _mm256_set1_epi64x(p as i64),
            p_hi: _mm256_set1_epi64x((p >> 32) as i64),
            two_p: _mm256_set1_epi64x((2 * p) as i64),
        }
    }
}

/// A twiddle `w` and its Shoup companion `s = ⌊w·2^64/p⌋`, with their high 32-bit halves in
/// the low half of each lane (what `vpmuludq` reads).
#[derive(Clone, Copy)]
struct Tw {
    w: __m256i,
    w_hi: __m256i,
    s: __m256i,
    s_hi: __m256i,
}

/// One twiddle in every lane.
#[inline]
#[target_feature(enable = "avx2")]
fn splat(e: [u64; 2]) -> Tw {
    // The high halves are broadcast as 32-bit values: `vpmuludq` reads only the low half of
    // each lane, and the load of the high half alone folds into `vpbroadcastd`.
    Tw {
        w: _mm256_set1_epi64x(e[0] as i64),
        w_hi: _mm256_set1_epi32((e[0] >> 32) as i32),
        s: _mm256_set1_epi64x(e[1] as i64),
        s_hi: _mm256_set1_epi32((e[1] >> 32) as i32),
    }
}

/// One twiddle per lane.
#[inline]
#[target_feature(enable = "avx2")]
fn lanes(w: &[u64; 4], s: &[u64; 4]) -> Tw {
    let (w, s) = (load(w), load(s));
    Tw { w, w_hi: _mm256_srli_epi64::<32>(w), s, s_hi: _mm256_srli_epi64::<32>(s) }
}

#[inline]
#[target_feature(enable = "avx2")]
fn load(a: &[u64; 4]) -> __m256i {
    // SAFETY: `a` is 32 readable bytes; the unaligned load has no alignment requirement.
    unsafe { _mm256_loadu_si256(a.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx2")]
fn store(a: &mut [u64; 4], v: __m256i) {
    // SAFETY: `a` is 32 writable bytes; the unaligned store has no alignment requirement.
    unsafe { _mm256_storeu_si256(a.as_mut_ptr().cast(), v) }
}

/// `x − c` if `x ≥ c`, else `x`, for `x < 2c` and `c ≤ 2^63`: the difference has its sign bit
/// set exactly when it wrapped.
#[inline]
#[target_feature(enable = "avx2")]
fn csub(x: __m256i, c: __m256i) -> __m256i {
    let d = _mm256_sub_epi64(x, c);
    _mm256_castpd_si256(_mm256_blendv_pd(
        _mm256_castsi256_pd(d),
        _mm256_castsi256_pd(x),
        _mm256_castsi256_pd(d),
    ))
}

/// `[0, 4p)` → `[0, p)`.
#[inline]
#[target_feature(enable = "avx2")]
fn reduce(x: __m256i, c: Consts) -> __m256i {
    csub(csub(x, c.two_p), c.p)
}

/// `vpmuludq`: the products of the low 32-bit halves of each lane. Written as inline assembly
/// because LLVM rewrites the intrinsic as a generic 64-bit multiply with masked operands and,
/// in this kernel, lowers some of those back to two or three multiplies.
#[inline]
#[target_feature(enable = "avx2")]
fn mul32(a: __m256i, b: __m256i) -> __m256i {
    let r: __m256i;
    // SAFETY: a register-only AVX2 instruction (this function requires AVX2): no memory, no
    // stack, no flags.
    unsafe {
        core::arch::asm!(
            "vpmuludq {r}, {a}, {b}",
            a = in(ymm_reg) a,
            b = in(ymm_reg) b,
            r = lateout(ymm_reg) r,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    r
}

/// `w·y mod p` in `[0, 4p)` for any `y < 2^64` (Shoup, with the quotient estimated low by at
/// most 2; see the module doc), for `K` independent vectors at once. The `K` computations are
/// interleaved step by step: one alone is a long dependency chain, and the out-of-order window
/// fills with its waiting instructions before the next butterfly's are seen.
#[inline]
#[target_feature(enable = "avx2")]
fn mul_shoup<const K: usize>(y: [__m256i; K], t: [Tw; K], c: Consts) -> [__m256i; K] {
    let mut out = y;
    let mut y_hi = y;
    let mut q = y;
    for i in 0..K {
        y_hi[i] = _mm256_srli_epi64::<32>(y[i]);
    }
    // q = s_hi·y_hi + ⌊s_hi·y_lo / 2^32⌋ + ⌊s_lo·y_hi / 2^32⌋ ∈ [⌊s·y/2^64⌋ − 2, ⌊s·y/2^64⌋].
    for i in 0..K {
        let m1 = mul32(t[i].s_hi, y_hi[i]);
        let m2 = mul32(t[i].s_hi, y[i]);
        let m3 = mul32(t[i].s, y_hi[i]);
        q[i] = _mm256_add_epi64(
            m1,
            _mm256_add_epi64(_mm256_srli_epi64::<32>(m2), _mm256_srli_epi64::<32>(m3)),
        );
    }
    // w·y − q·p mod 2^64: the low×low products, plus the cross products shifted up by 32.
    for i in 0..K {
        let q_hi = _mm256_srli_epi64::<32>(q[i]);
        let lo = _mm256_sub_epi64(mul32(t[i].w, y[i]), mul32(q[i], c.p));
        let cross = _mm256_sub_epi64(
            _mm256_add_epi64(mul32(t[i].w_hi, y[i]), mul32(t[i].w, y_hi[i])),
            _mm256_add_epi64(mul32(q_hi, c.p), mul32(q[i], c.p_hi)),
        );
        out[i] = _mm256_add_epi64(lo, _mm256_slli_epi64::<32>(cross));
    }
    out
}

/// `K` Cooley–Tukey butterflies: `(x, y)` in `[0, 4p)` → `(x + w·y, x − w·y)` in `[0, 4p)`.
#[inline]
#[target_feature(enable = "avx2")]
fn fwd_bf<const K: usize>(
    x: [__m256i; K],
    y: [__m256i; K],
    t: [Tw; K],
    c: Consts,
) -> ([__m256i; K], [__m256i; K]) {
    let wy = mul_shoup(y, t, c);
    let (mut u, mut v) = (x, x);
    for i in 0..K {
        let x = csub(x[i], c.two_p);
        let wy = csub(wy[i], c.two_p);
        u[i] = _mm256_add_epi64(x, wy);
        v[i] = _mm256_add_epi64(_mm256_sub_epi64(x, wy), c.two_p);
    }
    (u, v)
}

/// `K` Gentleman–Sande butterflies: `(x, y)` in `[0, 2p)` → `(x + y, (x − y)·w)` in `[0, 2p)`.
#[inline]
#[target_feature(enable = "avx2")]
fn inv_bf<const K: usize>(
    x: [__m256i; K],
    y: [__m256i; K],
    t: [Tw; K],
    c: Consts,
) -> ([__m256i; K], [__m256i; K]) {
    let (mut u, mut d) = (x, x);
    for i in 0..K {
        u[i] = csub(_mm256_add_epi64(x[i], y[i]), c.two_p);
        d[i] = _mm256_add_epi64(_mm256_sub_epi64(x[i], y[i]), c.two_p);
    }
    let mut v = mul_shoup(d, t, c);
    for v in &mut v {
        *v = csub(*v, c.two_p);
    }
    (u, v)
}

/// The inverse's last butterflies with the division by `n`: `((x + y)/n, (x − y)·w/n)`, fully
/// reduced.
#[inline]
#[target_feature(enable = "avx2")]
fn inv_bf_fused<const K: usize>(
    x: [__m256i; K],
    y: [__m256i; K],
    f: (Tw, Tw),
    c: Consts,
) -> ([__m256i; K], [__m256i; K]) {
    let (mut s, mut d) = (x, x);
    for i in 0..K {
        s[i] = _mm256_add_epi64(x[i], y[i]);
        d[i] = _mm256_add_epi64(_mm256_sub_epi64(x[i], y[i]), c.two_p);
    }
    let (mut u, mut v) = (mul_shoup(s, [f.0; K], c), mul_shoup(d, [f.1; K], c));
    for i in 0..K {
        u[i] = reduce(u[i], c);
        v[i] = reduce(v[i], c);
    }
    (u, v)
}

/// 4×4 transpose of u64: row `i` lane `j` → row `j` lane `i` (its own inverse).
#[inline]
#[target_feature(enable = "avx2")]
fn transpose(r: [__m256i; 4]) -> [__m256i; 4] {
    let t0 = _mm256_unpacklo_epi64(r[0], r[1]);
    let t1 = _mm256_unpackhi_epi64(r[0], r[1]);
    let t2 = _mm256_unpacklo_epi64(r[2], r[3]);
    let t3 = _mm256_unpackhi_epi64(r[2], r[3]);
    [
        _mm256_permute2x128_si256::<0x20>(t0, t2),
        _mm256_permute2x128_si256::<0x20>(t1, t3),
        _mm256_permute2x128_si256::<0x31>(t0, t2),
        _mm256_permute2x128_si256::<0x31>(t1, t3),
    ]
}

/// The four quarters of a radix-4 group as vectors, all of the first one's length (so the
/// loops index them without further checks).
#[allow(clippy::type_complexity)]
fn quarters<'a>(
    a: &'a mut [u64],
    b: &'a mut [u64],
    c: &'a mut [u64],
    d: &'a mut [u64],
) -> (&'a mut [[u64; 4]], &'a mut [[u64; 4]], &'a mut [[u64; 4]], &'a mut [[u64; 4]]) {
    let a = a.as_chunks_mut::<4>().0;
    let len = a.len();
    let b = &mut b.as_chunks_mut::<4>().0[..len];
    let c = &mut c.as_chunks_mut::<4>().0[..len];
    let d = &mut d.as_chunks_mut::<4>().0[..len];
    (a, b, c, d)
}

/// Forward stage 0 alone (when the radix-4 passes would leave one stage over).
#[target_feature(enable = "avx2")]
fn fwd_radix2(a: &mut [u64], t: Tw, c: Consts) {
    let (x, y) = a.split_at_mut(a.len() / 2);
    for (x, y) in x.as_chunks_mut::<4>().0.iter_mut().zip(y.as_chunks_mut::<4>().0) {
        let ([u], [v]) = fwd_bf([load(x)], [load(y)], [t], c);
        store(x, u);
        store(y, v);
    }
}

/// Forward stages `s` and `s + 1` (`m = 2^s` groups of half-size `t`) over the groups of
/// `block`, the first being group `g0` of stage `s`.
#[target_feature(enable = "avx2")]
fn fwd_radix4(block: &mut [u64], t: usize, m: usize, g0: usize, tw: &[[u64; 2]], c: Consts) {
    for (i, grp) in block.chunks_exact_mut(2 * t).enumerate() {
        let g = g0 + i;
        let w1 = splat(tw[m + g]);
        let w2a = splat(tw[2 * m + 2 * g]);
        let w2b = splat(tw[2 * m + 2 * g + 1]);
        let (ab, cd) = grp.split_at_mut(t);
        let (a, b) = ab.split_at_mut(t / 2);
        let (cc, d) = cd.split_at_mut(t / 2);
        let (a, b, cc, d) = quarters(a, b, cc, d);
        // Two vectors of each quarter per iteration: eight independent chains per layer.
        let mut j = 0;
        while j + 2 <= a.len() {
            let (k, l) = (j, j + 1);
            let ([x0, x0l, x1, x1l], [x2, x2l, x3, x3l]) = fwd_bf(
                [load(&a[k]), load(&a[l]), load(&b[k]), load(&b[l])],
                [load(&cc[k]), load(&cc[l]), load(&d[k]), load(&d[l])],
                [w1; 4],
                c,
            );
            let ([y0, y0l, y2, y2l], [y1, y1l, y3, y3l]) =
                fwd_bf([x0, x0l, x2, x2l], [x1, x1l, x3, x3l], [w2a, w2a, w2b, w2b], c);
            store(&mut a[k], y0);
            store(&mut a[l], y0l);
            store(&mut b[k], y1);
            store(&mut b[l], y1l);
            store(&mut cc[k], y2);
            store(&mut cc[l], y2l);
            store(&mut d[k], y3);
            store(&mut d[l], y3l);
            j += 2;
        }
        if j < a.len() {
            let ([x0, x1], [x2, x3]) =
                fwd_bf([load(&a[j]), load(&b[j])], [load(&cc[j]), load(&d[j])], [w1, w1], c);
            let ([y0, y2], [y1, y3]) = fwd_bf([x0, x2], [x1, x3], [w2a, w2b], c);
            store(&mut a[j], y0);
            store(&mut b[j], y1);
            store(&mut cc[j], y2);
            store(&mut d[j], y3);
        }
    }
}

/// Forward stages `log n − 2` and `log n − 1`, then the final reduction, over 16-coefficient
/// chunks (one entry of `tw` each), two chunks per iteration where it can.
#[target_feature(enable = "avx2")]
fn fwd_last2(block: &mut [u64], tw: &[LastTwiddles], c: Consts) {
    let (pairs, rest) = block.as_chunks_mut::<32>();
    for (pair, t) in pairs.iter_mut().zip(tw.chunks_exact(2)) {
        let (rows, _) = pair.as_chunks_mut::<4>();
        let [c0, c1, c2, c3] = transpose(load4(&rows[..4]));
        let [d0, d1, d2, d3] = transpose(load4(&rows[4..]));
        let (tq, uq) = (lanes(&t[0].q, &t[0].q_s), lanes(&t[1].q, &t[1].q_s));
        let ([c0, c1, d0, d1], [c2, c3, d2, d3]) =
            fwd_bf([c0, c1, d0, d1], [c2, c3, d2, d3], [tq, tq, uq, uq], c);
        let (te, to) = (lanes(&t[0].e, &t[0].e_s), lanes(&t[0].o, &t[0].o_s));
        let (ue, uo) = (lanes(&t[1].e, &t[1].e_s), lanes(&t[1].o, &t[1].o_s));
        let ([c0, c2, d0, d2], [c1, c3, d1, d3]) =
            fwd_bf([c0, c2, d0, d2], [c1, c3, d1, d3], [te, to, ue, uo], c);
        let r = transpose([reduce(c0, c), reduce(c1, c), reduce(c2, c), reduce(c3, c)]);
        let s = transpose([reduce(d0, c), reduce(d1, c), reduce(d2, c), reduce(d3, c)]);
        for (row, v) in rows.iter_mut().zip(r.into_iter().chain(s)) {
            store(row, v);
        }
    }
    let done = 2 * pairs.len();
    for (ch, t) in rest.as_chunks_mut::<16>().0.iter_mut().zip(&tw[done..]) {
        let (rows, _) = ch.as_chunks_mut::<4>();
        let [c0, c1, c2, c3] = transpose(load4(rows));
        let tq = lanes(&t.q, &t.q_s);
        let ([c0, c1], [c2, c3]) = fwd_bf([c0, c1], [c2, c3], [tq, tq], c);
        let (te, to) = (lanes(&t.e, &t.e_s), lanes(&t.o, &t.o_s));
        let ([c0, c2], [c1, c3]) = fwd_bf([c0, c2], [c1, c3], [te, to], c);
        let r = transpose([reduce(c0, c), reduce(c1, c), reduce(c2, c), reduce(c3, c)]);
        for (row, v) in rows.iter_mut().zip(r) {
            store(row, v);
        }
    }
}

/// Inverse stages `log n − 1` and `log n − 2` over 16-coefficient chunks, two per iteration
/// where it can.
#[target_feature(enable = "avx2")]
fn inv_first2(block: &mut [u64], tw: &[LastTwiddles], c: Consts) {
    let (pairs, rest) = block.as_chunks_mut::<32>();
    for (pair, t) in pairs.iter_mut().zip(tw.chunks_exact(2)) {
        let (rows, _) = pair.as_chunks_mut::<4>();
        let [c0, c1, c2, c3] = transpose(load4(&rows[..4]));
        let [d0, d1, d2, d3] = transpose(load4(&rows[4..]));
        let (te, to) = (lanes(&t[0].e, &t[0].e_s), lanes(&t[0].o, &t[0].o_s));
        let (ue, uo) = (lanes(&t[1].e, &t[1].e_s), lanes(&t[1].o, &t[1].o_s));
        let ([c0, c2, d0, d2], [c1, c3, d1, d3]) =
            inv_bf([c0, c2, d0, d2], [c1, c3, d1, d3], [te, to, ue, uo], c);
        let (tq, uq) = (lanes(&t[0].q, &t[0].q_s), lanes(&t[1].q, &t[1].q_s));
        let ([c0, c1, d0, d1], [c2, c3, d2, d3]) =
            inv_bf([c0, c1, d0, d1], [c2, c3, d2, d3], [tq, tq, uq, uq], c);
        let (r, s) = (transpose([c0, c1, c2, c3]), transpose([d0, d1, d2, d3]));
        for (row, v) in rows.iter_mut().zip(r.into_iter().chain(s)) {
            store(row, v);
        }
    }
    let done = 2 * pairs.len();
    for (ch, t) in rest.as_chunks_mut::<16>().0.iter_mut().zip(&tw[done..]) {
        let (rows, _) = ch.as_chunks_mut::<4>();
        let [c0, c1, c2, c3] = transpose(load4(rows));
        let (te, to) = (lanes(&t.e, &t.e_s), lanes(&t.o, &t.o_s));
        let ([c0, c2], [c1, c3]) = inv_bf([c0, c2], [c1, c3], [te, to], c);
        let tq = lanes(&t.q, &t.q_s);
        let ([c0, c1], [c2, c3]) = inv_bf([c0, c1], [c2, c3], [tq, tq], c);
        for (row, v) in rows.iter_mut().zip(transpose([c0, c1, c2, c3])) {
            store(row, v);
        }
    }
}

/// The first four rows of `rows` as vectors.
#[inline]
#[target_feature(enable = "avx2")]
fn load4(rows: &[[u64; 4]]) -> [__m256i; 4] {
    [load(&rows[0]), load(&rows[1]), load(&rows[2]), load(&rows[3])]
}

/// Inverse stages `s + 1` then `s` (`m = 2^s` groups of half-size `t`) over the groups of
/// `block`, the first being group `g0` of stage `s`. With `LAST` (stage 0) the second stage
/// also divides by `n` and reduces fully.
#[target_feature(enable = "avx2")]
fn inv_radix4<const LAST: bool>(
    block: &mut [u64],
    t: usize,
    m: usize,
    g0: usize,
    tw: &[[u64; 2]],
    c: Consts,
    fused: (Tw, Tw),
) {
    for (i, grp) in block.chunks_exact_mut(2 * t).enumerate() {
        let g = g0 + i;
        let w1 = splat(tw[m + g]);
        let w2a = splat(tw[2 * m + 2 * g]);
        let w2b = splat(tw[2 * m + 2 * g + 1]);
        let (ab, cd) = grp.split_at_mut(t);
        let (a, b) = ab.split_at_mut(t / 2);
        let (cc, d) = cd.split_at_mut(t / 2);
        let (a, b, cc, d) = quarters(a, b, cc, d);
        let mut j = 0;
        while j + 2 <= a.len() {
            let (k, l) = (j, j + 1);
            let ([x0, x0l, x2, x2l], [x1, x1l, x3, x3l]) = inv_bf(
                [load(&a[k]), load(&a[l]), load(&cc[k]), load(&cc[l])],
                [load(&b[k]), load(&b[l]), load(&d[k]), load(&d[l])],
                [w2a, w2a, w2b, w2b],
                c,
            );
            let (x, y) = ([x0, x0l, x1, x1l], [x2, x2l, x3, x3l]);
            let ([y0, y0l, y1, y1l], [y2, y2l, y3, y3l]) =
                if LAST { inv_bf_fused(x, y, fused, c) } else { inv_bf(x, y, [w1; 4], c) };
            store(&mut a[k], y0);
            store(&mut a[l], y0l);
            store(&mut b[k], y1);
            store(&mut b[l], y1l);
            store(&mut cc[k], y2);
            store(&mut cc[l], y2l);
            store(&mut d[k], y3);
            store(&mut d[l], y3l);
            j += 2;
        }
        if j < a.len() {
            let ([x0, x2], [x1, x3]) =
                inv_bf([load(&a[j]), load(&cc[j])], [load(&b[j]), load(&d[j])], [w2a, w2b], c);
            let ([y0, y1], [y2, y3]) = if LAST {
                inv_bf_fused([x0, x1], [x2, x3], fused, c)
            } else {
                inv_bf([x0, x1], [x2, x3], [w1, w1], c)
            };
            store(&mut a[j], y0);
            store(&mut b[j], y1);
            store(&mut cc[j], y2);
            store(&mut d[j], y3);
        }
    }
}

/// Inverse stage 0 alone, fused with the division by `n`.
#[target_feature(enable = "avx2")]
fn inv_radix2_fused(a: &mut [u64], fused: (Tw, Tw), c: Consts) {
    let (x, y) = a.split_at_mut(a.len() / 2);
    for (x, y) in x.as_chunks_mut::<4>().0.iter_mut().zip(y.as_chunks_mut::<4>().0) {
        let ([u], [v]) = inv_bf_fused([load(x)], [load(y)], fused, c);
        store(x, u);
        store(y, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::ntt_primes;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use tfhe_ntt::prime64::Plan;

    /// The reference plan and ours for the same `(n, q)`, ours built from the plan's root.
    fn pair(n: usize, q: u64) -> Option<(Plan, Avx2Ntt)> {
        let plan = Plan::try_new(n, q).expect("plan");
        let mut x = vec![0u64; n];
        x[1] = 1;
        plan.fwd(&mut x);
        Avx2Ntt::new(n, q, x[0]).map(|ours| (plan, ours))
    }

    /// Schoolbook negacyclic product, O(n^2), exact in u128.
    fn naive_negacyclic(a: &[u64], b: &[u64], q: u64) -> Vec<u64> {
        let n = a.len();
        let mut out = vec![0u128; n];
        let q = q as u128;
        for (i, &x) in a.iter().enumerate() {
            for (j, &y) in b.iter().enumerate() {
                let p = x as u128 * y as u128 % q;
                let k = (i + j) % n;
                out[k] = if i + j < n { (out[k] + p) % q } else { (out[k] + q - p) % q };
            }
        }
        out.into_iter().map(|v| v as u64).collect()
    }

    fn random(n: usize, q: u64, rng: &mut ChaCha8Rng) -> Vec<u64> {
        (0..n).map(|_| rng.random_range(0..q)).collect()
    }

    /// Every size 2^4..2^13 (odd and even stage counts, leaf and recursive paths) and prime
    /// sizes up to 61 bits: forward and inverse equal `tfhe-ntt`'s bit for bit.
    #[test]
    fn equals_tfhe_ntt_bit_for_bit() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for log_n in 4..=13u32 {
            let n = 1usize << log_n;
            for bits in [30u32, 50, 55, 59, 60, 61] {
                for q in ntt_primes(bits, log_n, 2, &[]).unwrap() {
                    let (plan, ours) = pair(n, q).expect("avx2 table");
                    for input in [random(n, q, &mut rng), vec![q - 1; n], vec![0; n]] {
                        let (mut a, mut b) = (input.clone(), input.clone());
                        plan.fwd(&mut a);
                        ours.forward(&mut b);
                        assert_eq!(a, b, "forward n={n} q={q}");
                        plan.inv(&mut a);
                        plan.normalize(&mut a);
                        ours.inverse(&mut b);
                        assert_eq!(a, b, "inverse n={n} q={q}");
                        assert_eq!(b, input, "round trip n={n} q={q}");
                    }
                }
            }
        }
    }

    /// Primes just below 2^62 (the top of the supported range), where `4p` nearly fills a u64.
    #[test]
    fn equals_tfhe_ntt_for_62_bit_primes() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        for log_n in [4u32, 9, 12] {
            let n = 1usize << log_n;
            let step = 2 * n as u64;
            let mut q = ((1u64 << 62) - 1) / step * step + 1;
            let mut found = 0;
            while found < 3 {
                if crate::primes::is_prime(q) {
                    found += 1;
                    let (plan, ours) = pair(n, q).expect("avx2 table");
                    let input = random(n, q, &mut rng);
                    let (mut a, mut b) = (input.clone(), input.clone());
                    plan.fwd(&mut a);
                    ours.forward(&mut b);
                    assert_eq!(a, b, "forward n={n} q={q}");
                    ours.inverse(&mut b);
                    assert_eq!(b, input, "round trip n={n} q={q}");
                }
                q -= step;
            }
        }
    }

    #[test]
    fn product_equals_naive_negacyclic_product() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for (bits, log_n) in [(60u32, 4u32), (61, 5), (60, 8), (59, 9), (40, 7)] {
            let n = 1usize << log_n;
            let q = ntt_primes(bits, log_n, 1, &[]).unwrap()[0];
            let (_, ours) = pair(n, q).expect("avx2 table");
            let (a, b) = (random(n, q, &mut rng), random(n, q, &mut rng));
            let (mut fa, mut fb) = (a.clone(), b.clone());
            ours.forward(&mut fa);
            ours.forward(&mut fb);
            let mut prod: Vec<u64> = fa.iter().zip(&fb).map(|(&x, &y)| mul_mod(x, y, q)).collect();
            ours.inverse(&mut prod);
            assert_eq!(prod, naive_negacyclic(&a, &b, q), "n={n} q={q}");
        }
    }

    #[test]
    fn rejects_what_it_cannot_do() {
        let q = ntt_primes(60, 4, 1, &[]).unwrap()[0];
        assert!(Avx2Ntt::new(8, q, 1).is_none(), "n below 16");
        assert!(Avx2Ntt::new(16, q, 1).is_none(), "1 is not a primitive root");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Random sizes, 55–61-bit primes and inputs: identical to `tfhe-ntt`.
        #[test]
        fn matches_tfhe_ntt_on_random_inputs(log_n in 4u32..=11, bits in 55u32..=61, seed in any::<u64>()) {
            prop_assume!(std::arch::is_x86_feature_detected!("avx2"));
            let n = 1usize << log_n;
            let q = ntt_primes(bits, log_n, 1, &[]).unwrap()[0];
            let (plan, ours) = pair(n, q).expect("avx2 table");
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let input = random(n, q, &mut rng);
            let (mut a, mut b) = (input.clone(), input.clone());
            plan.fwd(&mut a);
            ours.forward(&mut b);
            prop_assert_eq!(&a, &b);
            plan.inv(&mut a);
            plan.normalize(&mut a);
            ours.inverse(&mut b);
            prop_assert_eq!(a, b);
        }
    }
}
