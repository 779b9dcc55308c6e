//! Signed gadget decomposition with rounding: `a ≈ Σ_{i=1..l} d_i · q/B^i`, `d_i ∈ [-B/2, B/2)`,
//! `|a - Σ d_i q/B^i| ≤ q/(2B^l)`.
//!
//! Implementations that must agree bit for bit:
//! * [`decompose_reference`]: the TFHE-library "offset" method (add the rounding half-step and
//!   `Σ (B/2)·q/B^i`, read unsigned digits, subtract `B/2`);
//! * [`StreamingDecomposer`]: Strix's multiplier-free streaming decomposer;
//! * [`DigitLevel`]: the offset method for one level at a time, which the blind rotation's
//!   forward transforms use to read digits straight from the accumulator.
//!
//! Both produce the balanced base-`B` representation of the rounded value; it is unique for the
//! digit set `[-B/2, B/2)`, so they must agree everywhere, ties included.

use crate::torus::Torus;

/// Reference decomposition of one word; `digits[i]` has weight `q/B^(i+1)` (most significant
/// first).
pub fn decompose_reference<T: Torus>(a: T, base_log: u32, level: usize) -> Vec<i64> {
    let w = T::BITS;
    let total = base_log * level as u32;
    let shift = w - total;
    let half_b = 1u64 << (base_log - 1);
    let mut x = a;
    if shift > 0 {
        x = x.wadd(T::ONE.shl(shift - 1));
    }
    for i in 1..=level as u32 {
        x = x.wadd(T::from_u64(half_b).shl(w - i * base_log));
    }
    (1..=level as u32)
        .map(|i| {
            let u = x.shr(w - i * base_log).to_u64() & ((1u64 << base_log) - 1);
            u as i64 - half_b as i64
        })
        .collect()
}

/// `Σ d_i · q/B^i` mod `q` (recomposition, for tests and the noise model).
pub fn recompose<T: Torus>(digits: &[i64], base_log: u32) -> T {
    let w = T::BITS;
    digits.iter().enumerate().fold(T::ZERO, |acc, (i, &d)| {
        acc.wadd(T::from_i64(d).wmul(T::ONE.shl(w - (i as u32 + 1) * base_log)))
    })
}

/// Strix's streaming decomposer (Strix §V-B, Fig. 6): no multiplier, only masks, shifts
/// and a one-bit carry.
///
/// # Algorithm
/// 1. Rounding: keep the top `l·β` bits, adding the bit just below them (`mask` + `carry`).
/// 2. Extraction, least-significant digit first: `t = (v & (B-1)) + carry; v >>= β`; if
///    `t ≥ B/2` emit `t - B` and carry 1, else emit `t` and carry 0.
///
/// # Source
/// Strix §IV-B, Decomposer unit ("masking, shifting, and adding"; rounding then extraction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamingDecomposer {
    pub base_log: u32,
    pub level: usize,
}

impl StreamingDecomposer {
    pub fn new(base_log: u32, level: usize) -> Self {
        StreamingDecomposer { base_log, level }
    }

    /// Rounding step: the closest multiple of `q/B^l`, as an integer in `[0, B^l)`.
    #[inline(always)]
    fn round_top<T: Torus>(&self, a: T) -> u64 {
        let total = self.base_log * self.level as u32;
        let shift = T::BITS - total;
        let v = if shift == 0 {
            a.to_u64()
        } else {
            (a.shr(shift).to_u64()) + (a.shr(shift - 1).to_u64() & 1)
        };
        if total >= 64 { v } else { v & ((1u64 << total) - 1) }
    }

    /// Decompose one word; `out[i]` has weight `q/B^(i+1)`.
    pub fn decompose_one<T: Torus>(&self, a: T, out: &mut [i64]) {
        let b = self.base_log;
        let mask = (1u64 << b) - 1;
        let half = 1u64 << (b - 1);
        let mut v = self.round_top(a);
        let mut carry = 0u64;
        for i in (0..self.level).rev() {
            let t = (v & mask) + carry;
            v >>= b;
            carry = (t >= half) as u64;
            out[i] = t as i64 - ((carry << b) as i64);
        }
    }

    /// Decompose a polynomial: `out` holds `level` polynomials of `inp.len()` digits each,
    /// most significant level first, digits stored as wrapped torus words (ready for the FFT).
    ///
    /// Same mask/shift/carry steps as [`decompose_one`](Self::decompose_one), organised level by
    /// level over the whole polynomial (one pass per level, like the hardware's `N/CLP × l_b`
    /// cycles) and with the carry folded into the shifted remainder (`v ← (v >> β) + carry`),
    /// which keeps one state word per coefficient and lets the loop vectorise. The remainder
    /// lives in the level-0 output slot until that digit is produced.
    #[inline]
    pub fn decompose_poly<T: Torus>(&self, inp: &[T], out: &mut [T]) {
        struct Impl<'a, T> {
            d: StreamingDecomposer,
            inp: &'a [T],
            out: &'a mut [T],
        }
        impl<T: Torus> pulp::WithSimd for Impl<'_, T> {
            type Output = ();
            #[inline(always)]
            fn with_simd<S: pulp::Simd>(self, _simd: S) {
                let Impl { d, inp, out } = self;
                let n = inp.len();
                let l = d.level;
                debug_assert_eq!(out.len(), n * l);
                let b = d.base_log;
                let mask = T::ONE.shl(b).wsub(T::ONE);
                let half = T::ONE.shl(b - 1);
                let (state, rest) = out.split_at_mut(n);
                for (v, &a) in state.iter_mut().zip(inp) {
                    *v = T::from_u64(d.round_top(a));
                }
                for i in (1..l).rev() {
                    let digits = &mut rest[(i - 1) * n..i * n];
                    for (v, o) in state.iter_mut().zip(digits) {
                        let t = *v & mask;
                        let c = if t >= half { T::ONE } else { T::ZERO };
                        *o = t.wsub(c.shl(b));
                        *v = v.shr(b).wadd(c);
                    }
                }
                for v in state.iter_mut() {
                    let t = *v & mask;
                    let c = if t >= half { T::ONE } else { T::ZERO };
                    *v = t.wsub(c.shl(b));
                }
            }
        }
        pulp::Arch::new().dispatch(Impl { d: *self, inp, out });
    }
}

/// One level of the decomposition computed on its own, by the offset method of
/// [`decompose_reference`]: `digit_i(a) = ((a + C) >> (w − i·β)) mod B − B/2` with the constant
/// `C = q/(2B^l) + Σ_i (B/2)·q/B^i`. Every level reads only its own bits of `a + C`, so a
/// level's digits come out in one pass with no carry chain; they equal
/// [`StreamingDecomposer`]'s (the balanced representation is unique). Used by the external
/// product to decompose straight into the FFT input.
#[derive(Clone, Copy, Debug)]
pub struct DigitLevel<T: Torus> {
    offset: T,
    shift: u32,
    mask: u64,
    half: u64,
}

impl<T: Torus> DigitLevel<T> {
    /// `digit + B/2 ∈ [0, B)`.
    #[inline(always)]
    pub fn biased(&self, a: T) -> u64 {
        a.wadd(self.offset).shr(self.shift).to_u64() & self.mask
    }

    /// `B/2`, the bias of [`biased`](Self::biased).
    #[inline(always)]
    pub fn half(&self) -> u64 {
        self.half
    }

    /// The signed digit.
    #[inline(always)]
    pub fn digit(&self, a: T) -> i64 {
        self.biased(a) as i64 - self.half as i64
    }
}

impl StreamingDecomposer {
    /// Level `i` (`1..=level`, weight `q/B^i`) as a [`DigitLevel`].
    pub fn digit_level<T: Torus>(&self, i: usize) -> DigitLevel<T> {
        assert!((1..=self.level).contains(&i), "level {i} of {}", self.level);
        let w = T::BITS;
        let b = self.base_log;
        let shift = w - b * self.level as u32;
        let half = 1u64 << (b - 1);
        let mut offset = if shift > 0 { T::ONE.shl(shift - 1) } else { T::ZERO };
        for j in 1..=self.level as u32 {
            offset = offset.wadd(T::from_u64(half).shl(w - j * b));
        }
        DigitLevel { offset, shift: w - i as u32 * b, mask: (1u64 << b) - 1, half }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check<T: Torus>(a: T, base_log: u32, level: usize) {
        let r = decompose_reference(a, base_log, level);
        let mut s = vec![0i64; level];
        StreamingDecomposer::new(base_log, level).decompose_one(a, &mut s);
        assert_eq!(r, s, "a={a:?} B=2^{base_log} l={level}");
        let half = 1i64 << (base_log - 1);
        assert!(s.iter().all(|&d| (-half..half).contains(&d)));
        // |a - recompose| <= q / (2 B^l)
        let err = a.wsub(recompose::<T>(&s, base_log)).to_signed().unsigned_abs() as u128;
        let bound = 1u128 << (T::BITS - base_log * level as u32 - 1);
        assert!(err <= bound, "err {err} > {bound}");
        // Polynomial path agrees with the scalar path.
        let mut poly = vec![T::ZERO; level];
        StreamingDecomposer::new(base_log, level).decompose_poly(&[a], &mut poly);
        let poly: Vec<i64> = poly.iter().map(|d| d.to_signed()).collect();
        assert_eq!(poly, s);
        // Each level on its own agrees too.
        let dec = StreamingDecomposer::new(base_log, level);
        for (i, &d) in s.iter().enumerate() {
            assert_eq!(dec.digit_level::<T>(i + 1).digit(a), d, "level {}", i + 1);
        }
    }

    proptest! {
        #[test]
        fn streaming_equals_reference_u64(a in any::<u64>(), b in 1u32..=23, l in 1usize..=6) {
            prop_assume!(b * l as u32 <= 64);
            check(a, b, l);
        }

        #[test]
        fn streaming_equals_reference_u32(a in any::<u32>(), b in 1u32..=16, l in 1usize..=8) {
            prop_assume!(b * l as u32 <= 32);
            check(a, b, l);
        }
    }

    #[test]
    fn polynomial_path_equals_reference_per_coefficient() {
        let mut rng = crate::random::Csprng::from_seed(4);
        for (b, l) in [(23u32, 1usize), (15, 2), (12, 3), (4, 4), (10, 2), (7, 3)] {
            let n = 256;
            let mut a = vec![0u64; n];
            rng.fill_uniform(&mut a);
            let mut out = vec![0u64; n * l];
            StreamingDecomposer::new(b, l).decompose_poly(&a, &mut out);
            for j in 0..n {
                let want = decompose_reference(a[j], b, l);
                let got: Vec<i64> = (0..l).map(|i| out[i * n + j].to_signed()).collect();
                assert_eq!(got, want, "B=2^{b} l={l} j={j}");
            }
            if b * (l as u32) <= 32 {
                let a32: Vec<u32> = a.iter().map(|&x| x as u32).collect();
                let mut out = vec![0u32; n * l];
                StreamingDecomposer::new(b, l).decompose_poly(&a32, &mut out);
                for j in 0..n {
                    let want = decompose_reference(a32[j], b, l);
                    let got: Vec<i64> = (0..l).map(|i| out[i * n + j].to_signed()).collect();
                    assert_eq!(got, want);
                }
            }
        }
    }

    #[test]
    fn ties_and_edges_agree() {
        for (b, l) in [(2u32, 8usize), (4, 4), (10, 2), (7, 3), (23, 1), (16, 4), (32, 2)] {
            let shift = 64 - b * l as u32;
            let edges: Vec<u64> = vec![
                0,
                u64::MAX,
                1u64 << 63,
                (1u64 << 63) - 1,
                if shift > 0 { 1u64 << (shift - 1) } else { 1 },
                if shift > 0 { (1u64 << (shift - 1)).wrapping_mul(3) } else { 3 },
                0x5555_5555_5555_5555,
                0xaaaa_aaaa_aaaa_aaaa,
            ];
            for a in edges {
                check(a, b, l);
            }
        }
        for (b, l) in [(2u32, 8usize), (10, 2), (7, 3), (8, 4)] {
            for a in [0u32, u32::MAX, 1 << 31, 0x8000_0001, 0x5555_5555] {
                check(a, b, l);
            }
        }
    }
}
