//! External product `GGSW ⊡ GLWE → GLWE` with split accumulation, and CMux.
//!
//! # Algorithm
//! `C ⊡ c = Dec(c)ᵀ · C`: decompose the `k+1` input polynomials into `(k+1)·l` small-digit
//! polynomials, forward-FFT each once, multiply-accumulate against the Fourier GGSW row by row
//! *in the frequency domain*, inverse-FFT each partial sum, and add it to the output in the time
//! domain. With `group = (k+1)·l` (the default) every output column takes exactly one IFFT:
//! `(k+1)·l` FFTs and `k+1` IFFTs per product, the CPU optimum. Smaller groups reproduce Strix's
//! PLP-wide VMA adder tree (partial sums over `group` products, one IFFT each, then time-domain
//! accumulation); the result is the same up to FFT rounding.
//!
//! # Source
//! Strix Alg. 1 lines 7–10 (line 10 corrected, as printed it reads `etv[j] + …`:
//! `otv[j] = tv[j] + Σ_r IFFT(FFT(etv[r])·bsk[i][r][j])`) and §IV-B (VMA + Accumulator split
//! accumulation).

use dyn_stack::{PodBuffer, PodStack};
use pulp::{Simd, WithSimd};
use tfhe_fft::c64;

use crate::decompose::StreamingDecomposer;
use crate::fft::NegacyclicFft;
use crate::torus::Torus;

/// Reusable buffers for one external product (no allocation in the blind-rotation loop).
pub struct ExternalProductWorkspace<T: Torus> {
    pub(crate) fdig: Vec<c64>,
    pub(crate) facc: Vec<c64>,
    pub(crate) fft_mem: PodBuffer,
    torus: std::marker::PhantomData<T>,
}

impl<T: Torus> ExternalProductWorkspace<T> {
    pub fn new(fft: &NegacyclicFft, k: usize, level: usize) -> Self {
        let m = fft.poly_size() / 2;
        ExternalProductWorkspace {
            fdig: vec![c64::default(); (k + 1) * level * m],
            facc: vec![c64::default(); m],
            fft_mem: fft.new_scratch(),
            torus: std::marker::PhantomData,
        }
    }
}

/// Shape of one external product.
#[derive(Clone, Copy, Debug)]
pub struct ExternalProductShape {
    pub k: usize,
    pub decomposer: StreamingDecomposer,
    /// Rows summed in the frequency domain before one IFFT (`(k+1)·l` = one IFFT per column).
    pub group: usize,
}

/// `out += ggsw ⊡ input` (`input`, `out`: GLWE of `(k+1)·N` words; `ggsw`: Fourier GGSW).
/// `next_ggsw` (or empty) is prefetched while this product runs.
pub fn external_product_add<T: Torus>(
    out: &mut [T],
    ggsw: &[c64],
    input: &[T],
    shape: ExternalProductShape,
    fft: &NegacyclicFft,
    ws: &mut ExternalProductWorkspace<T>,
    next_ggsw: &[c64],
) {
    let n = fft.poly_size();
    let m = n / 2;
    let k = shape.k;
    let l = shape.decomposer.level;
    let stack = PodStack::new(&mut ws.fft_mem);
    // Decompose the (k+1) polynomials into (k+1)·l digit polynomials (row r = c·l + j) and
    // forward-FFT each once; digits go straight into the FFT input.
    for c in 0..=k {
        let poly = &input[c * n..(c + 1) * n];
        for j in 0..l {
            let r = c * l + j;
            let level = shape.decomposer.digit_level::<T>(j + 1);
            fft.forward_digits(&mut ws.fdig[r * m..(r + 1) * m], poly, level, stack);
        }
    }
    accumulate(out, ggsw, shape, fft, ws, next_ggsw);
}

/// Second half of an external product, once `ws.fdig` holds the Fourier digit rows: the
/// frequency-domain multiply-accumulate against `ggsw`, then one IFFT per column (per group)
/// added into `out`.
fn accumulate<T: Torus>(
    out: &mut [T],
    ggsw: &[c64],
    shape: ExternalProductShape,
    fft: &NegacyclicFft,
    ws: &mut ExternalProductWorkspace<T>,
    next_ggsw: &[c64],
) {
    let n = fft.poly_size();
    let m = n / 2;
    let k = shape.k;
    let rows = (k + 1) * shape.decomposer.level;
    let stack = PodStack::new(&mut ws.fft_mem);
    // Multiply-accumulate per output column, IFFT per group, accumulate in time domain.
    let group = shape.group.clamp(1, rows);
    if group == rows {
        // One IFFT per column: all rows summed in the frequency domain, two rows per pass.
        for c in 0..=k {
            let nx = |r: usize| {
                let off = (r * (k + 1) + c) * m;
                next_ggsw.get(off..off + m).unwrap_or(&[])
            };
            let g = |r: usize| &ggsw[(r * (k + 1) + c) * m..(r * (k + 1) + c + 1) * m];
            let f = |r: usize| &ws.fdig[r * m..(r + 1) * m];
            let mut r = 0;
            while r + 1 < rows {
                let pair = [(f(r), g(r)), (f(r + 1), g(r + 1))];
                mul_acc2(&mut ws.facc, pair, r == 0, [nx(r), nx(r + 1)]);
                r += 2;
            }
            if r < rows {
                mul_acc(&mut ws.facc, f(r), g(r), r == 0, nx(r));
            }
            fft.backward_add(&mut out[c * n..(c + 1) * n], &mut ws.facc, stack);
        }
        return;
    }
    for c in 0..=k {
        let mut r0 = 0;
        while r0 < rows {
            let r1 = (r0 + group).min(rows);
            for r in r0..r1 {
                let off = (r * (k + 1) + c) * m;
                let g = &ggsw[off..off + m];
                let a = &ws.fdig[r * m..(r + 1) * m];
                let nx = next_ggsw.get(off..off + m).unwrap_or(&[]);
                mul_acc(&mut ws.facc, a, g, r == r0, nx);
            }
            fft.backward_add(&mut out[c * n..(c + 1) * n], &mut ws.facc, stack);
            r0 = r1;
        }
    }
}

/// Hint the CPU to bring the cache line at `p` into L2. A no-op off x86-64.
#[inline(always)]
fn prefetch_l2(p: &c64) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T1, _mm_prefetch};
        // SAFETY: a prefetch is only a hint: it never faults and has no architectural effect,
        // and the address comes from a reference into a live slice. Exercised by every PBS test.
        unsafe { _mm_prefetch::<_MM_HINT_T1>(p as *const c64 as *const i8) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `acc = a·b` (if `first`) or `acc += a·b`, element-wise complex, vectorised at run time.
/// `next` (same length, or empty) is prefetched into L2 along the way: in blind rotation it is
/// the same block of the *next* GGSW, whose DRAM latency then hides behind this iteration.
#[inline]
pub fn mul_acc(acc: &mut [c64], a: &[c64], b: &[c64], first: bool, next: &[c64]) {
    struct Impl<'a> {
        acc: &'a mut [c64],
        a: &'a [c64],
        b: &'a [c64],
        first: bool,
        next: &'a [c64],
    }
    impl WithSimd for Impl<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: Simd>(self, simd: S) {
            const CHUNK: usize = 64; // 1 KiB of c64 = 16 cache lines
            let chunks =
                self.acc.chunks_mut(CHUNK).zip(self.a.chunks(CHUNK)).zip(self.b.chunks(CHUNK));
            for (ci, ((acc, a), b)) in chunks.enumerate() {
                if let Some(nx) = self.next.get(ci * CHUNK..) {
                    for z in nx.iter().take(CHUNK).step_by(4) {
                        prefetch_l2(z);
                    }
                }
                let (acc_h, acc_t) = S::as_mut_simd_c64s(acc);
                let (a_h, a_t) = S::as_simd_c64s(a);
                let (b_h, b_t) = S::as_simd_c64s(b);
                if self.first {
                    for ((x, &y), &z) in acc_h.iter_mut().zip(a_h).zip(b_h) {
                        *x = simd.mul_c64s(y, z);
                    }
                    for ((x, &y), &z) in acc_t.iter_mut().zip(a_t).zip(b_t) {
                        *x = y * z;
                    }
                } else {
                    for ((x, &y), &z) in acc_h.iter_mut().zip(a_h).zip(b_h) {
                        *x = simd.mul_add_c64s(y, z, *x);
                    }
                    for ((x, &y), &z) in acc_t.iter_mut().zip(a_t).zip(b_t) {
                        *x += y * z;
                    }
                }
            }
        }
    }
    pulp::Arch::new().dispatch(Impl { acc, a, b, first, next });
}

/// `acc = a₀·b₀ + a₁·b₁` (if `first`) or `acc += a₀·b₀ + a₁·b₁`, element-wise complex: two rows
/// of a GGSW column per pass over `acc` (half its loads and stores against two [`mul_acc`]s,
/// which is what bounds this loop). `next` as in [`mul_acc`], one per row.
#[inline]
pub fn mul_acc2(acc: &mut [c64], ab: [(&[c64], &[c64]); 2], first: bool, next: [&[c64]; 2]) {
    struct Impl<'a> {
        acc: &'a mut [c64],
        ab: [(&'a [c64], &'a [c64]); 2],
        first: bool,
        next: [&'a [c64]; 2],
    }
    impl WithSimd for Impl<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: Simd>(self, simd: S) {
            const CHUNK: usize = 64;
            let [(a0, b0), (a1, b1)] = self.ab;
            let chunks = self
                .acc
                .chunks_mut(CHUNK)
                .zip(a0.chunks(CHUNK).zip(b0.chunks(CHUNK)))
                .zip(a1.chunks(CHUNK).zip(b1.chunks(CHUNK)));
            for (ci, ((acc, (a0, b0)), (a1, b1))) in chunks.enumerate() {
                for nx in self.next {
                    if let Some(nx) = nx.get(ci * CHUNK..) {
                        for z in nx.iter().take(CHUNK).step_by(4) {
                            prefetch_l2(z);
                        }
                    }
                }
                let (acc_h, acc_t) = S::as_mut_simd_c64s(acc);
                let (a0h, a0t) = S::as_simd_c64s(a0);
                let (b0h, b0t) = S::as_simd_c64s(b0);
                let (a1h, a1t) = S::as_simd_c64s(a1);
                let (b1h, b1t) = S::as_simd_c64s(b1);
                let head = acc_h.iter_mut().zip(a0h.iter().zip(b0h)).zip(a1h.iter().zip(b1h));
                let tail = acc_t.iter_mut().zip(a0t.iter().zip(b0t)).zip(a1t.iter().zip(b1t));
                if self.first {
                    for ((x, (&p, &q)), (&u, &v)) in head {
                        *x = simd.mul_add_c64s(u, v, simd.mul_c64s(p, q));
                    }
                    for ((x, (&p, &q)), (&u, &v)) in tail {
                        *x = p * q + u * v;
                    }
                } else {
                    for ((x, (&p, &q)), (&u, &v)) in head {
                        *x = simd.mul_add_c64s(u, v, simd.mul_add_c64s(p, q, *x));
                    }
                    for ((x, (&p, &q)), (&u, &v)) in tail {
                        *x = *x + p * q + u * v;
                    }
                }
            }
        }
    }
    pulp::Arch::new().dispatch(Impl { acc, ab, first, next });
}

/// `X^t · p` for a polynomial `p` of size `N` in `Z_q[X]/(X^N+1)`, `t ∈ [0, 2N)`, minus `p`:
/// writes `X^t·p - p` into `out` (the CMux input of one blind-rotation step).
#[inline]
pub fn rotate_minus<T: Torus>(out: &mut [T], p: &[T], t: usize) {
    let n = p.len();
    let (neg, s) = if t >= n { (true, t - n) } else { (false, t) };
    // Coefficient j of X^s·p is -p[j-s+N] for j < s and p[j-s] for j >= s (signs swap when
    // t >= N). Two straight loops per sign, so that each vectorises.
    let (out_lo, out_hi) = out.split_at_mut(s);
    let (p_lo, p_hi) = p.split_at(s);
    let (head, tail) = p.split_at(n - s); // tail wraps round to the low coefficients
    if neg {
        for ((o, &v), &x) in out_lo.iter_mut().zip(tail).zip(p_lo) {
            *o = v.wsub(x);
        }
        for ((o, &v), &x) in out_hi.iter_mut().zip(head).zip(p_hi) {
            *o = v.wneg().wsub(x);
        }
    } else {
        for ((o, &v), &x) in out_lo.iter_mut().zip(tail).zip(p_lo) {
            *o = v.wneg().wsub(x);
        }
        for ((o, &v), &x) in out_hi.iter_mut().zip(head).zip(p_hi) {
            *o = v.wsub(x);
        }
    }
}

/// `X^t · p` into `out` (no subtraction), `t ∈ [0, 2N)`.
pub fn rotate<T: Torus>(out: &mut [T], p: &[T], t: usize) {
    let n = p.len();
    let (neg, s) = if t >= n { (true, t - n) } else { (false, t) };
    for j in 0..s {
        let v = p[j + n - s];
        out[j] = if neg { v } else { v.wneg() };
    }
    for j in s..n {
        let v = p[j - s];
        out[j] = if neg { v.wneg() } else { v };
    }
}

/// CMux: `acc ← acc + ggsw ⊡ (X^t·acc − acc)`, i.e. `X^{t·b}·acc` for `ggsw = GGSW(b)`,
/// `b ∈ {0,1}`. The rotated difference is never stored: each digit row's forward transform
/// reads it from `acc` ([`NegacyclicFft::forward_digits_rotated`]), all of them before `acc` is
/// updated. `next_ggsw` is prefetched.
pub fn cmux_rotate<T: Torus>(
    acc: &mut [T],
    ggsw: &[c64],
    t: usize,
    shape: ExternalProductShape,
    fft: &NegacyclicFft,
    ws: &mut ExternalProductWorkspace<T>,
    next_ggsw: &[c64],
) {
    let n = fft.poly_size();
    let m = n / 2;
    let l = shape.decomposer.level;
    {
        let stack = PodStack::new(&mut ws.fft_mem);
        for c in 0..=shape.k {
            let poly = &acc[c * n..(c + 1) * n];
            for j in 0..l {
                let r = c * l + j;
                let level = shape.decomposer.digit_level::<T>(j + 1);
                fft.forward_digits_rotated(&mut ws.fdig[r * m..(r + 1) * m], poly, t, level, stack);
            }
        }
    }
    accumulate(acc, ggsw, shape, fft, ws, next_ggsw);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fft::schoolbook_negacyclic;

    #[test]
    fn rotate_matches_monomial_product() {
        let n = 16;
        let p: Vec<u64> = (1..=n as u64).map(|x| x * 1000 + 7).collect();
        for t in 0..2 * n {
            let mut mono = vec![0u64; n];
            if t < n {
                mono[t] = 1;
            } else {
                mono[t - n] = u64::MAX; // -1
            }
            let want = schoolbook_negacyclic(&p, &mono);
            let mut got = vec![0u64; n];
            rotate(&mut got, &p, t);
            assert_eq!(got, want, "t={t}");
            let mut diff = vec![0u64; n];
            rotate_minus(&mut diff, &p, t);
            let want_diff: Vec<u64> =
                want.iter().zip(&p).map(|(a, b)| a.wrapping_sub(*b)).collect();
            assert_eq!(diff, want_diff);
        }
    }

    /// The fused CMux (rotation read inside the forward transforms) equals rotating into a
    /// buffer and running the external product on it, bit for bit, on both halves' wrap points.
    #[test]
    fn fused_cmux_equals_rotate_then_external_product() {
        fn check<T: Torus>(n: usize, base_log: u32, level: usize) {
            let k = 1;
            let fft = NegacyclicFft::new(n);
            let m = n / 2;
            let mut rng = crate::random::Csprng::from_seed(12);
            let mut acc = vec![T::ZERO; (k + 1) * n];
            rng.fill_uniform(&mut acc);
            let mut raw = vec![0u64; 2 * (k + 1) * level * (k + 1) * m];
            rng.fill_uniform(&mut raw);
            let ggsw: Vec<c64> = raw
                .chunks(2)
                .map(|p| c64::new((p[0] >> 20) as f64, (p[1] >> 20) as f64 - 8e12))
                .collect();
            let shape = ExternalProductShape {
                k,
                decomposer: StreamingDecomposer::new(base_log, level),
                group: (k + 1) * level,
            };
            let mut ws = ExternalProductWorkspace::<T>::new(&fft, k, level);
            for t in [0, 1, m - 1, m, m + 1, n - 1, n, n + 1, n + m, n + m + 3, 2 * n - 1] {
                let mut diff = vec![T::ZERO; (k + 1) * n];
                for c in 0..=k {
                    rotate_minus(&mut diff[c * n..(c + 1) * n], &acc[c * n..(c + 1) * n], t);
                }
                let mut want = acc.clone();
                external_product_add(&mut want, &ggsw, &diff, shape, &fft, &mut ws, &[]);
                let mut got = acc.clone();
                cmux_rotate(&mut got, &ggsw, t, shape, &fft, &mut ws, &[]);
                assert_eq!(got, want, "t={t}");
            }
        }
        check::<u64>(128, 12, 2);
        check::<u64>(256, 23, 1);
        check::<u32>(128, 8, 2);
    }
}
