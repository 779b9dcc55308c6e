//! Negacyclic polynomial products in `Z_q[X]/(X^N + 1)` with a *folded* f64 FFT.
//!
//! # Algorithm
//! A real polynomial `a` of degree `< N` is folded into `M = N/2` complex values
//! `z_j = (a_j + i·a_{j+M})·ψ^j`, `ψ = e^{iπ/N}` (the twisted negacyclic embedding), and an
//! `M`-point complex FFT of `z` evaluates `a` at the `M` roots `ψ^{1+4k}` of `X^N + 1` (the other
//! `M` roots are their conjugates, redundant for real `a`). Products are then pointwise; the
//! inverse is the inverse FFT, the conjugate twist `ψ^{-j}/M`, and unfolding real/imaginary parts
//! back to coefficients `j` and `j + M`, rounded and reduced mod `q`.
//!
//! # Source
//! Strix §IV-C ("folding", after Klemsa, CSCML 2021): an `N`-coefficient polynomial through an
//! `N/2`-point FFT, which halves the FFT work; TFHE-rs' FFT64 uses the same embedding. The FFT
//! itself is `tfhe-fft`'s unordered plan (AVX-512/AVX2 at run time): the forward output stays in
//! the plan's permuted order, which is fine because the bootstrapping key is stored in that same
//! order and the inverse consumes it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use dyn_stack::{PodBuffer, PodStack, StackReq};
use pulp::{Simd, WithSimd};
use tfhe_fft::c64;
use tfhe_fft::ordered::FftAlgo;
use tfhe_fft::unordered::{Method, Plan};

use crate::decompose::DigitLevel;
use crate::torus::Torus;

/// Folded negacyclic FFT of size `N` (an `N/2`-point complex plan plus twist tables).
pub struct NegacyclicFft {
    n: usize,
    plan: Plan,
    /// `ψ^j`, real and imaginary parts apart (the loops read them as f64 vectors).
    twist_re: Vec<f64>,
    twist_im: Vec<f64>,
    /// `ψ^{−j}/M`.
    untwist_re: Vec<f64>,
    untwist_im: Vec<f64>,
    arch: pulp::Arch,
}

/// Base size of the inner ordered FFT of the unordered plan. Fixed (not measured) so that the
/// permuted Fourier order, and hence a serialised Fourier key, is reproducible across runs and
/// machines.
fn base_n_for(m: usize) -> usize {
    m.min(256)
}

/// Algorithm of the inner ordered FFT (it does not change the Fourier order): radix-16 DIF
/// where AVX-512 runs (fastest or tied on Zen 4 at M = 1024), radix-4 DIF on AVX2 alone, where
/// sixteen 256-bit registers do not hold a radix-16 butterfly (fastest at base 256 on an AVX2
/// EPYC, 20 % less time per forward + inverse pair than radix-16 there; measured with
/// `tfhe-fft`'s plans at M = 1024). Chosen from the CPU, not timed, so that results are
/// reproducible run to run.
fn base_algo() -> FftAlgo {
    #[cfg(target_arch = "x86_64")]
    if !std::arch::is_x86_feature_detected!("avx512f") && pulp::x86::V3::try_new().is_some() {
        return FftAlgo::Dif4;
    }
    FftAlgo::Dif16
}

impl NegacyclicFft {
    /// Build a plan for polynomial size `n` (power of two, `n >= 64`).
    pub fn new(n: usize) -> Self {
        assert!(n.is_power_of_two() && n >= 64, "polynomial size {n}");
        let m = n / 2;
        let plan =
            Plan::new(m, Method::UserProvided { base_algo: base_algo(), base_n: base_n_for(m) });
        let (mut twist_re, mut twist_im) = (Vec::with_capacity(m), Vec::with_capacity(m));
        let (mut untwist_re, mut untwist_im) = (Vec::with_capacity(m), Vec::with_capacity(m));
        for j in 0..m {
            // Angles from exact integer ratios keep the tables accurate to ~1 ulp.
            let theta = std::f64::consts::PI * j as f64 / n as f64;
            let (s, c) = theta.sin_cos();
            twist_re.push(c);
            twist_im.push(s);
            untwist_re.push(c / m as f64);
            untwist_im.push(-s / m as f64);
        }
        NegacyclicFft {
            n,
            plan,
            twist_re,
            twist_im,
            untwist_re,
            untwist_im,
            arch: pulp::Arch::new(),
        }
    }

    /// Polynomial size `N`.
    pub fn poly_size(&self) -> usize {
        self.n
    }

    /// Number of complex Fourier coefficients per polynomial (`N/2`).
    pub fn fourier_size(&self) -> usize {
        self.n / 2
    }

    /// Base size of the inner plan (recorded with serialised Fourier keys).
    pub fn base_n(&self) -> usize {
        base_n_for(self.n / 2)
    }

    /// Scratch needed by [`forward`](Self::forward) / [`backward_add`](Self::backward_add).
    pub fn scratch_req(&self) -> StackReq {
        self.plan.fft_scratch()
    }

    /// A scratch buffer sized for this plan.
    pub fn new_scratch(&self) -> PodBuffer {
        PodBuffer::new(self.scratch_req())
    }

    /// Forward transform of a torus (or signed digit) polynomial, read as centred integers.
    pub fn forward<T: Torus>(&self, out: &mut [c64], a: &[T], stack: &mut PodStack) {
        let m = self.n / 2;
        assert!(out.len() == m && a.len() == self.n);
        self.arch.dispatch(TwistIn { re: &self.twist_re, im: &self.twist_im, a, out: &mut *out });
        self.plan.fwd(out, stack);
    }

    /// Forward transform of one level of the gadget decomposition of `a`: the digits are
    /// extracted, converted and twisted in one pass (no digit polynomial is stored).
    /// Equals [`forward`](Self::forward) of that level's digit polynomial.
    pub fn forward_digits<T: Torus>(
        &self,
        out: &mut [c64],
        a: &[T],
        level: DigitLevel<T>,
        stack: &mut PodStack,
    ) {
        let m = self.n / 2;
        assert!(out.len() == m && a.len() == self.n);
        self.arch.dispatch(DigitsIn {
            re: &self.twist_re,
            im: &self.twist_im,
            a,
            level,
            out: &mut *out,
        });
        self.plan.fwd(out, stack);
    }

    /// Forward transform of one decomposition level of `X^t·p − p` (`t ∈ [0, 2N)`), the CMux
    /// input of a blind-rotation step, read straight from `p`: the rotation, the subtraction,
    /// the digit extraction and the twist are one pass. Equals [`forward_digits`] of
    /// [`rotate_minus`](crate::external_product::rotate_minus)`(p, t)`.
    ///
    /// [`forward_digits`]: Self::forward_digits
    pub fn forward_digits_rotated<T: Torus>(
        &self,
        out: &mut [c64],
        p: &[T],
        t: usize,
        level: DigitLevel<T>,
        stack: &mut PodStack,
    ) {
        let n = self.n;
        let m = n / 2;
        assert!(out.len() == m && p.len() == n && t < 2 * n);
        // Coefficient j of X^t·p is ±p[(j − t) mod N], negated when the index wraps an odd
        // number of times. Within [0, M) the low half (j = i) wraps at i = t mod N when that is
        // below M, else the high half (j = i + M) wraps at i = (t mod N) − M: two segments of
        // fixed source offsets and signs.
        let s = t % n;
        let flip = t >= n;
        let cut = if s < m { s } else { s - m };
        let src = |j: usize| -> (usize, bool) {
            // Source index and whether to negate, for output coefficient j.
            if j < s { (j + n - s, !flip) } else { (j - s, flip) }
        };
        for (i0, i1) in [(0, cut), (cut, m)] {
            if i0 == i1 {
                continue;
            }
            let (sx, nx) = src(i0);
            let (sy, ny) = src(i0 + m);
            let len = i1 - i0;
            self.arch.dispatch(RotatedDigitsIn {
                re: &self.twist_re[i0..i1],
                im: &self.twist_im[i0..i1],
                rot_lo: &p[sx..sx + len],
                rot_hi: &p[sy..sy + len],
                neg_lo: nx,
                neg_hi: ny,
                lo: &p[i0..i1],
                hi: &p[i0 + m..i1 + m],
                level,
                out: &mut out[i0..i1],
            });
        }
        self.plan.fwd(out, stack);
    }

    /// Inverse transform of `buf` (destroyed), rounded and *added* to `acc` mod `q`.
    pub fn backward_add<T: Torus>(&self, acc: &mut [T], buf: &mut [c64], stack: &mut PodStack) {
        assert!(buf.len() == self.n / 2 && acc.len() == self.n);
        self.plan.inv(buf, stack);
        #[cfg(target_arch = "x86_64")]
        if let (Some(simd), Some(acc)) = (pulp::x86::V3::try_new(), T::as_u64s_mut(acc)) {
            let (re, im) = (&self.twist_re[..], &self.twist_im[..]);
            return simd.vectorize(UntwistOutV3 { simd, re, im, buf, acc, add: true });
        }
        let (re, im) = (&self.untwist_re[..], &self.untwist_im[..]);
        self.arch.dispatch(UntwistOut { re, im, buf, acc, add: true });
    }

    /// Inverse transform of `buf` (destroyed), rounded into `out` mod `q`.
    pub fn backward_set<T: Torus>(&self, out: &mut [T], buf: &mut [c64], stack: &mut PodStack) {
        assert!(buf.len() == self.n / 2 && out.len() == self.n);
        self.plan.inv(buf, stack);
        #[cfg(target_arch = "x86_64")]
        if let (Some(simd), Some(acc)) = (pulp::x86::V3::try_new(), T::as_u64s_mut(out)) {
            let (re, im) = (&self.twist_re[..], &self.twist_im[..]);
            return simd.vectorize(UntwistOutV3 { simd, re, im, buf, acc, add: false });
        }
        let (re, im) = (&self.untwist_re[..], &self.untwist_im[..]);
        self.arch.dispatch(UntwistOut { re, im, buf, acc: out, add: false });
    }

    /// `out = a · s` exactly mod `q`, for any torus `a` and a *small* `s` (`|s_j| <= 1`, e.g. a
    /// binary key). `a` is split into 16-bit limbs so that every FFT product stays far below
    /// 2^52 and rounds to the exact integer (error ≤ N·2^16·2^-40 ≪ 1/2).
    pub fn mul_exact_small<T: Torus>(&self, a: &[T], s: &[T], out: &mut [T]) {
        let m = self.n / 2;
        let mut buf = self.new_scratch();
        let stack = PodStack::new(&mut buf);
        let mut fs = vec![c64::default(); m];
        self.forward(&mut fs, s, stack);
        let mut limb = vec![T::ZERO; self.n];
        let mut fl = vec![c64::default(); m];
        let mut part = vec![T::ZERO; self.n];
        out.iter_mut().for_each(|x| *x = T::ZERO);
        for l in 0..(T::BITS / 16) {
            for (d, &x) in limb.iter_mut().zip(a) {
                *d = T::from_u64((x.to_u64() >> (16 * l)) & 0xffff);
            }
            self.forward(&mut fl, &limb, stack);
            for (x, y) in fl.iter_mut().zip(&fs) {
                *x *= *y;
            }
            self.backward_set(&mut part, &mut fl, stack);
            for (o, &p) in out.iter_mut().zip(&part) {
                *o = o.wadd(p.shl(16 * l));
            }
        }
    }
}

struct TwistIn<'a, T> {
    re: &'a [f64],
    im: &'a [f64],
    a: &'a [T],
    out: &'a mut [c64],
}

impl<T: Torus> WithSimd for TwistIn<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        let m = self.out.len();
        let (lo, hi) = self.a.split_at(m);
        let tw = self.re.iter().zip(self.im);
        for ((o, (wr, wi)), (&x, &y)) in self.out.iter_mut().zip(tw).zip(lo.iter().zip(hi)) {
            let re = x.to_signed_f64();
            let im = y.to_signed_f64();
            *o = c64::new(re * wr - im * wi, re * wi + im * wr);
        }
    }
}

/// `2^52` as f64 bits: OR-ing an integer `u < 2^52` into its mantissa gives `2^52 + u` exactly
/// (an int → float conversion in two vector instructions; AVX2 has no 64-bit one).
const TWO_52_BITS: u64 = 0x4330_0000_0000_0000;

struct DigitsIn<'a, T: Torus> {
    re: &'a [f64],
    im: &'a [f64],
    a: &'a [T],
    level: DigitLevel<T>,
    out: &'a mut [c64],
}

impl<T: Torus> WithSimd for DigitsIn<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        let m = self.out.len();
        let (lo, hi) = self.a.split_at(m);
        let lv = self.level;
        // digit = biased − B/2, and biased + 2^52 is read straight from the bits.
        let bias = f64::from_bits(TWO_52_BITS) + lv.half() as f64;
        let out: &mut [f64] = pulp::bytemuck::cast_slice_mut(self.out);
        let tw = self.re.iter().zip(self.im);
        for ((o, (wr, wi)), (&x, &y)) in out.chunks_exact_mut(2).zip(tw).zip(lo.iter().zip(hi)) {
            let re = f64::from_bits(lv.biased(x) | TWO_52_BITS) - bias;
            let im = f64::from_bits(lv.biased(y) | TWO_52_BITS) - bias;
            o[0] = re * wr - im * wi;
            o[1] = re * wi + im * wr;
        }
    }
}

struct RotatedDigitsIn<'a, T: Torus> {
    re: &'a [f64],
    im: &'a [f64],
    rot_lo: &'a [T],
    rot_hi: &'a [T],
    neg_lo: bool,
    neg_hi: bool,
    lo: &'a [T],
    hi: &'a [T],
    level: DigitLevel<T>,
    out: &'a mut [c64],
}

impl<T: Torus> WithSimd for RotatedDigitsIn<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        let lv = self.level;
        let bias = f64::from_bits(TWO_52_BITS) + lv.half() as f64;
        // ±v as (v ^ mask) − mask: branch-free, so the loop vectorises.
        let mask = |neg: bool| if neg { T::ZERO.wsub(T::ONE) } else { T::ZERO };
        let (ml, mh) = (mask(self.neg_lo), mask(self.neg_hi));
        let out: &mut [f64] = pulp::bytemuck::cast_slice_mut(self.out);
        let tw = self.re.iter().zip(self.im);
        let xs = self.rot_lo.iter().zip(self.lo);
        let ys = self.rot_hi.iter().zip(self.hi);
        for ((o, (wr, wi)), ((&rx, &x), (&ry, &y))) in
            out.chunks_exact_mut(2).zip(tw).zip(xs.zip(ys))
        {
            let dx = xor(rx, ml).wsub(ml).wsub(x);
            let dy = xor(ry, mh).wsub(mh).wsub(y);
            let re = f64::from_bits(lv.biased(dx) | TWO_52_BITS) - bias;
            let im = f64::from_bits(lv.biased(dy) | TWO_52_BITS) - bias;
            o[0] = re * wr - im * wi;
            o[1] = re * wi + im * wr;
        }
    }
}

/// `a ^ b` through the `u64` view (the [`Torus`] trait has no `BitXor`).
#[inline(always)]
fn xor<T: Torus>(a: T, b: T) -> T {
    T::from_u64(a.to_u64() ^ b.to_u64())
}

struct UntwistOut<'a, T> {
    re: &'a [f64],
    im: &'a [f64],
    buf: &'a [c64],
    acc: &'a mut [T],
    add: bool,
}

impl<T: Torus> WithSimd for UntwistOut<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        let m = self.buf.len();
        let (lo, hi) = self.acc.split_at_mut(m);
        let buf: &[f64] = pulp::bytemuck::cast_slice(self.buf);
        let tw = self.re.iter().zip(self.im);
        let it = buf.chunks_exact(2).zip(tw).zip(lo.iter_mut().zip(hi.iter_mut()));
        if self.add {
            for ((z, (wr, wi)), (x, y)) in it {
                let re = z[0] * wr - z[1] * wi;
                let im = z[0] * wi + z[1] * wr;
                *x = x.wadd(T::from_f64_wrapping(re));
                *y = y.wadd(T::from_f64_wrapping(im));
            }
        } else {
            for ((z, (wr, wi)), (x, y)) in it {
                let re = z[0] * wr - z[1] * wi;
                let im = z[0] * wi + z[1] * wr;
                *x = T::from_f64_wrapping(re);
                *y = T::from_f64_wrapping(im);
            }
        }
    }
}

/// [`UntwistOut`] on the 64-bit torus with AVX2 + FMA written out: four coefficients per step,
/// de-interleaved with two shuffles, the untwist with FMAs, and the float → `u64` reduction of
/// [`f64_to_u64_wrapping`](crate::torus::f64_to_u64_wrapping), each of its two roundings one
/// FMA onto the magic constant (the same result: both round half to even).
///
/// It reads the forward twist `ψ^j` (`re`, `im`), conjugated, instead of the untwist table
/// `ψ^{−j}/M`: the `1/M` is a power of two, so the products are exactly `M` times the
/// scalar kernel's and the reduction divides it out with constants scaled by `M`, to the
/// same bits. The inverse then shares the forward's 16 KiB table (at `N` = 2048) in cache
/// instead of streaming a second one.
#[cfg(target_arch = "x86_64")]
struct UntwistOutV3<'a> {
    simd: pulp::x86::V3,
    re: &'a [f64],
    im: &'a [f64],
    buf: &'a [c64],
    acc: &'a mut [u64],
    add: bool,
}

#[cfg(target_arch = "x86_64")]
impl pulp::NullaryFnOnce for UntwistOutV3<'_> {
    type Output = ();
    #[inline(always)]
    fn call(self) {
        use core::arch::x86_64::__m256d;
        let UntwistOutV3 { simd, re, im, buf, acc, add } = self;
        let (avx, avx2, fma) = (simd.avx, simd.avx2, simd.fma);
        let m = buf.len();
        let scale = m as f64;
        let (lo, hi) = acc.split_at_mut(m);
        let buf: &[f64] = pulp::bytemuck::cast_slice(buf);
        let (buf, buf_t) = pulp::as_arrays::<8, f64>(buf);
        let (re, _) = pulp::as_arrays::<4, f64>(re);
        let (im, _) = pulp::as_arrays::<4, f64>(im);
        let (lo4, lo_t) = pulp::as_arrays_mut::<4, u64>(lo);
        let (hi4, hi_t) = pulp::as_arrays_mut::<4, u64>(hi);
        for ((((z, wr), wi), x), y) in
            buf.iter().zip(re).zip(im).zip(lo4.iter_mut()).zip(hi4.iter_mut())
        {
            let a: __m256d = pulp::cast([z[0], z[1], z[2], z[3]]);
            let b: __m256d = pulp::cast([z[4], z[5], z[6], z[7]]);
            // unpack gives lanes (0, 2, 1, 3); the permute puts them back in order.
            let zr = avx2._mm256_permute4x64_pd::<0b11_01_10_00>(avx._mm256_unpacklo_pd(a, b));
            let zi = avx2._mm256_permute4x64_pd::<0b11_01_10_00>(avx._mm256_unpackhi_pd(a, b));
            let (wr, wi): (__m256d, __m256d) = (pulp::cast(*wr), pulp::cast(*wi));
            // (zr + i·zi)·conj(ψ^j): M times the untwisted value, whose 1/M the rounding
            // takes (the same bits as multiplying by the tables ψ^{−j}/M first).
            let vr = fma._mm256_fmadd_pd(zr, wr, avx._mm256_mul_pd(zi, wi));
            let vi = fma._mm256_fnmadd_pd(zr, wi, avx._mm256_mul_pd(zi, wr));
            let (vr, vi) = (to_u64_v3(simd, vr, scale), to_u64_v3(simd, vi, scale));
            if add {
                *x = pulp::cast(avx2._mm256_add_epi64(vr, pulp::cast(*x)));
                *y = pulp::cast(avx2._mm256_add_epi64(vi, pulp::cast(*y)));
            } else {
                *x = pulp::cast(vr);
                *y = pulp::cast(vi);
            }
        }
        // M = N/2 >= 32 is a multiple of 4 (NegacyclicFft::new).
        debug_assert!(lo_t.is_empty() && hi_t.is_empty() && buf_t.is_empty());
    }
}

/// [`f64_to_u64_wrapping`](crate::torus::f64_to_u64_wrapping) of four lanes (a function, not
/// a closure, so that it is always inlined into the AVX2 code and its intrinsics with it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn to_u64_v3(
    simd: pulp::x86::V3,
    x: core::arch::x86_64::__m256d,
    scale: f64,
) -> core::arch::x86_64::__m256i {
    let (avx, avx2, fma) = (simd.avx, simd.avx2, simd.fma);
    let magic = avx._mm256_set1_pd(6_755_399_441_055_744.0); // 1.5 · 2^52
    let magic_bits = avx._mm256_castpd_si256(magic);
    // `x` is `scale` times the value to round (`scale` a power of two), so every constant
    // carries the same factor and the results are those of the unscaled value, bit for bit.
    let q64 = avx._mm256_set1_pd(18_446_744_073_709_551_616.0 * scale);
    let inv_q64 = avx._mm256_set1_pd(1.0 / (18_446_744_073_709_551_616.0 * scale));
    let q32 = avx._mm256_set1_pd(4_294_967_296.0 * scale);
    let inv_q32 = avx._mm256_set1_pd(1.0 / (4_294_967_296.0 * scale));
    let inv_scale = avx._mm256_set1_pd(1.0 / scale);
    // `v·2^-k + M` in one FMA: the scaling by a power of two is exact, so its single rounding
    // is `round(v/2^k)` (ties to even), and that integer sits in the low mantissa bits.
    let rm = fma._mm256_fmadd_pd(x, inv_q64, magic);
    let y = fma._mm256_fnmadd_pd(avx._mm256_sub_pd(rm, magic), q64, x);
    let hm = fma._mm256_fmadd_pd(y, inv_q32, magic);
    let l = fma._mm256_fnmadd_pd(avx._mm256_sub_pd(hm, magic), q32, y);
    let h = avx2._mm256_sub_epi64(avx._mm256_castpd_si256(hm), magic_bits);
    let l = avx2._mm256_sub_epi64(
        avx._mm256_castpd_si256(fma._mm256_fmadd_pd(l, inv_scale, magic)),
        magic_bits,
    );
    avx2._mm256_add_epi64(avx2._mm256_slli_epi64::<32>(h), l)
}

/// Shared plans, one per polynomial size (building a plan costs far more than one transform).
pub fn fft_for(n: usize) -> Arc<NegacyclicFft> {
    static CACHE: OnceLock<Mutex<HashMap<usize, Arc<NegacyclicFft>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut g = cache.lock().unwrap_or_else(|e| e.into_inner());
    g.entry(n).or_insert_with(|| Arc::new(NegacyclicFft::new(n))).clone()
}

/// Exact negacyclic product with wrapping arithmetic, O(N²): the independent reference.
pub fn schoolbook_negacyclic<T: Torus>(a: &[T], b: &[T]) -> Vec<T> {
    let n = a.len();
    assert_eq!(b.len(), n);
    let mut out = vec![T::ZERO; n];
    for (i, &x) in a.iter().enumerate() {
        if x == T::ZERO {
            continue;
        }
        for (j, &y) in b.iter().enumerate() {
            let p = x.wmul(y);
            let k = i + j;
            if k < n {
                out[k] = out[k].wadd(p);
            } else {
                out[k - n] = out[k - n].wsub(p);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::torus::f64_to_u64_wrapping;

    /// The AVX2 output stage of the inverse transform equals the scalar formula: untwist with
    /// FMAs, then [`f64_to_u64_wrapping`], added to the accumulator.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn backward_output_stage_equals_the_scalar_formula() {
        if pulp::x86::V3::try_new().is_none() {
            return; // the portable kernel runs: nothing AVX2-specific to check
        }
        let n = 256;
        let m = n / 2;
        let fft = NegacyclicFft::new(n);
        let mut rng = crate::random::Csprng::from_seed(41);
        let mut raw = vec![0u64; 2 * m];
        rng.fill_uniform(&mut raw);
        // Magnitudes up to ~2^90, as FFT outputs of 64-bit products reach (the AVX2 stage
        // carries them scaled by M, the reference does not).
        let spec: Vec<c64> = raw
            .chunks(2)
            .map(|p| {
                let e = (p[0] % 91) as i32;
                let f = |x: u64| ((x >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2f64.powi(e);
                c64::new(f(p[0]), f(p[1]))
            })
            .collect();
        // The reference runs the same inverse plan, then the scalar output stage.
        let mut buf = spec.clone();
        let mut mem = fft.new_scratch();
        let stack = PodStack::new(&mut mem);
        let mut acc = vec![0u64; n];
        rng.fill_uniform(&mut acc);
        let start = acc.clone();
        let mut inv = spec.clone();
        fft.plan.inv(&mut inv, stack);
        fft.backward_add(&mut acc, &mut buf, stack);
        for j in 0..m {
            let (z, wr, wi) = (inv[j], fft.untwist_re[j], fft.untwist_im[j]);
            let re = z.re.mul_add(wr, -(z.im * wi));
            let im = z.re.mul_add(wi, z.im * wr);
            let (want_lo, want_hi) = (
                start[j].wrapping_add(f64_to_u64_wrapping(re)),
                start[j + m].wrapping_add(f64_to_u64_wrapping(im)),
            );
            assert_eq!((acc[j], acc[j + m]), (want_lo, want_hi), "j={j}");
        }
        // The overwriting form: the same values, not added.
        let mut buf = spec.clone();
        let mut out = vec![0u64; n];
        fft.backward_set(&mut out, &mut buf, stack);
        for j in 0..m {
            let (lo, hi) = (acc[j].wrapping_sub(start[j]), acc[j + m].wrapping_sub(start[j + m]));
            assert_eq!((out[j], out[j + m]), (lo, hi), "j={j}");
        }
    }
}
