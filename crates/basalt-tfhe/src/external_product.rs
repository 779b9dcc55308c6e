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
    pub(crate) digits: Vec<T>,
    pub(crate) fdig: Vec<c64>,
    pub(crate) facc: Vec<c64>,
    pub(crate) fft_mem: PodBuffer,
}

impl<T: Torus> ExternalProductWorkspace<T> {
    pub fn new(fft: &NegacyclicFft, k: usize, level: usize) -> Self {
        let n = fft.poly_size();
        let m = n / 2;
        ExternalProductWorkspace {
            digits: vec![T::ZERO; (k + 1) * level * n],
            fdig: vec![c64::default(); (k + 1) * level * m],
            facc: vec![c64::default(); m],
            fft_mem: fft.new_scratch(),
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
    let rows = (k + 1) * l;
    let stack = PodStack::new(&mut ws.fft_mem);
    // Decompose: (k+1) polynomials -> (k+1)·l digit polynomials (row r = c·l + j).
    for c in 0..=k {
        shape
            .decomposer
            .decompose_poly(&input[c * n..(c + 1) * n], &mut ws.digits[c * l * n..(c + 1) * l * n]);
    }
    // Forward FFT of every digit polynomial, once.
    for r in 0..rows {
        fft.forward(&mut ws.fdig[r * m..(r + 1) * m], &ws.digits[r * n..(r + 1) * n], stack);
    }
    // Multiply-accumulate per output column, IFFT per group, accumulate in time domain.
    let group = shape.group.clamp(1, rows);
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

/// `X^t · p` for a polynomial `p` of size `N` in `Z_q[X]/(X^N+1)`, `t ∈ [0, 2N)`, minus `p`:
/// writes `X^t·p - p` into `out` (the CMux input of one blind-rotation step).
#[inline]
pub fn rotate_minus<T: Torus>(out: &mut [T], p: &[T], t: usize) {
    let n = p.len();
    let (neg, s) = if t >= n { (true, t - n) } else { (false, t) };
    // Coefficient j of X^s·p is p[j-s] for j >= s and -p[j-s+N] for j < s.
    for j in 0..s {
        let v = p[j + n - s];
        let v = if neg { v } else { v.wneg() };
        out[j] = v.wsub(p[j]);
    }
    for j in s..n {
        let v = p[j - s];
        let v = if neg { v.wneg() } else { v };
        out[j] = v.wsub(p[j]);
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
/// `b ∈ {0,1}`. `diff` is caller scratch of `(k+1)·N` words; `next_ggsw` is prefetched.
#[allow(clippy::too_many_arguments)]
pub fn cmux_rotate<T: Torus>(
    acc: &mut [T],
    diff: &mut [T],
    ggsw: &[c64],
    t: usize,
    shape: ExternalProductShape,
    fft: &NegacyclicFft,
    ws: &mut ExternalProductWorkspace<T>,
    next_ggsw: &[c64],
) {
    let n = fft.poly_size();
    for c in 0..=shape.k {
        rotate_minus(&mut diff[c * n..(c + 1) * n], &acc[c * n..(c + 1) * n], t);
    }
    external_product_add(acc, ggsw, diff, shape, fft, ws, next_ggsw);
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
}
