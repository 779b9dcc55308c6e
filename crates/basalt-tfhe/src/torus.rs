//! The discretised torus `Z_q`, `q = 2^w`, as a machine word (`u32` or `u64`).
//!
//! Every TFHE object in this crate is generic over [`Torus`] so the same code runs the 32-bit
//! TFHE-library sets (Strix I/II) and the 64-bit TFHE-rs/concrete sets (Strix III/IV, TFHE-rs
//! 2_2). Arithmetic is native wrapping arithmetic: the modulus is the word size, so reduction is
//! free.

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A torus word: wrapping ring `Z_{2^BITS}` plus the conversions the FFT and samplers need.
pub trait Torus:
    Copy
    + Default
    + Debug
    + Eq
    + Ord
    + Send
    + Sync
    + Serialize
    + DeserializeOwned
    + std::ops::BitAnd<Output = Self>
    + 'static
{
    /// Word width `w` (`q = 2^w`).
    const BITS: u32;
    const ZERO: Self;
    const ONE: Self;

    fn wadd(self, o: Self) -> Self;
    fn wsub(self, o: Self) -> Self;
    fn wmul(self, o: Self) -> Self;
    fn wneg(self) -> Self;
    fn shl(self, s: u32) -> Self;
    fn shr(self, s: u32) -> Self;
    /// Truncating cast from `u64` (keeps the low `w` bits).
    fn from_u64(v: u64) -> Self;
    fn to_u64(self) -> u64;
    /// Wrapping cast from a signed integer (`-1` becomes `q - 1`).
    fn from_i64(v: i64) -> Self;
    /// The centred representative in `[-q/2, q/2)`, as an `i64`.
    fn to_signed(self) -> i64;
    /// The centred representative as `f64` (exact for `u32`; nearest for `u64`).
    fn to_signed_f64(self) -> f64;
    /// Round `x` to the nearest integer and reduce it mod `q`. `x` may be far larger than `q`
    /// (FFT outputs are); the reduction is exact for any finite `x`.
    fn from_f64_wrapping(x: f64) -> Self;
    /// The words as `u64`s when the torus is 64 bits wide (for kernels written for that width).
    fn as_u64s_mut(words: &mut [Self]) -> Option<&mut [u64]>;
}

macro_rules! impl_torus {
    ($t:ty, $s:ty, $bits:expr, $as_u64:expr) => {
        impl Torus for $t {
            const BITS: u32 = $bits;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)]
            fn wadd(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn wsub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn wmul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            #[inline(always)]
            fn wneg(self) -> Self {
                self.wrapping_neg()
            }
            #[inline(always)]
            fn shl(self, s: u32) -> Self {
                self.checked_shl(s).unwrap_or(0)
            }
            #[inline(always)]
            fn shr(self, s: u32) -> Self {
                self.checked_shr(s).unwrap_or(0)
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_signed(self) -> i64 {
                self as $s as i64
            }
            #[inline(always)]
            fn to_signed_f64(self) -> f64 {
                self as $s as f64
            }
            #[inline(always)]
            fn from_f64_wrapping(x: f64) -> Self {
                f64_to_u64_wrapping(x) as $t
            }
            #[inline(always)]
            fn as_u64s_mut(words: &mut [Self]) -> Option<&mut [u64]> {
                $as_u64(words)
            }
        }
    };
}

impl_torus!(u32, i32, 32, |_: &mut [u32]| None);
impl_torus!(u64, i64, 64, Some);

/// `round(x) mod 2^64` (ties to even) for finite `|x| < 2^115`, far above any FFT output here.
///
/// Why this shape: it uses only f64 add/FMA and one integer add per half, all of which
/// vectorise (a saturating float→int cast of values up to 2^100 does not). The magic constant
/// `M = 1.5·2^52` rounds to an integer by addition and exposes it in the low mantissa bits.
/// 1. `r = round(x/2^64)`, `y = x − r·2^64` (exact; `|y| ≤ 2^63`, `y ≡ x mod 2^64`);
/// 2. `h = round(y/2^32)`, `lo = y − h·2^32` (exact; `|lo| ≤ 2^31`);
/// 3. result `= h·2^32 + round(lo)` mod 2^64, both read from the mantissa of `v + M`.
///
/// `r·2^64` and `h·2^32` are even, so rounding `lo` to even rounds `x` to even. Truncating the
/// result gives the correct value mod 2^32 too.
#[inline(always)]
pub fn f64_to_u64_wrapping(x: f64) -> u64 {
    const M: f64 = 6_755_399_441_055_744.0; // 1.5 · 2^52
    const Q64: f64 = 18_446_744_073_709_551_616.0; // 2^64
    const Q32: f64 = 4_294_967_296.0; // 2^32
    let r = (x * (1.0 / Q64) + M) - M;
    let y = r.mul_add(-Q64, x);
    let h = (y * (1.0 / Q32) + M) - M;
    let lo = h.mul_add(-Q32, y);
    let hi = (h + M).to_bits().wrapping_sub(M.to_bits());
    let lo = (lo + M).to_bits().wrapping_sub(M.to_bits());
    (hi << 32).wrapping_add(lo)
}

/// Maps a torus element to a real in `[-1/2, 1/2)` (for noise measurements).
pub fn to_real<T: Torus>(x: T) -> f64 {
    x.to_signed_f64() / 2f64.powi(T::BITS as i32)
}

/// Maps a real torus value (mod 1) to the nearest torus word.
pub fn from_real<T: Torus>(x: f64) -> T {
    let frac = x - x.floor();
    T::from_f64_wrapping(frac * 2f64.powi(T::BITS as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64_wrapping_matches_i128_reduction() {
        let cases: [f64; 15] = [
            0.0,
            -1.0,
            1.5,
            -2.5,
            0.49,
            -0.5,
            4503599627370497.0,
            1.0e33,
            -4.0e34,
            -1.0e-300,
            3.0e19,
            -3.0e19,
            1.2345e25,
            -9.87e30,
            9.223_372_036_854_776e18, // 2^63
        ];
        for &x in &cases {
            let r = x.round_ties_even() as i128;
            let want64 = (r.rem_euclid(1i128 << 64)) as u64;
            let want32 = (r.rem_euclid(1i128 << 32)) as u32;
            if x.abs() < 1.0e38 {
                assert_eq!(u64::from_f64_wrapping(x), want64, "x = {x}");
                assert_eq!(u32::from_f64_wrapping(x), want32, "x = {x}");
            }
        }
    }

    #[test]
    fn f64_wrapping_random_magnitudes() {
        let mut rng = crate::random::Csprng::from_seed(3);
        for i in 0..20000i32 {
            let e = i % 112;
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            let x = u * 2f64.powi(e);
            let want = (x.round_ties_even() as i128).rem_euclid(1i128 << 64) as u64;
            assert_eq!(f64_to_u64_wrapping(x), want, "x = {x:e}");
        }
    }

    #[test]
    fn signed_roundtrip() {
        for v in [-5i64, 0, 7, -(1 << 31), (1 << 31) - 1] {
            assert_eq!(u32::from_i64(v).to_signed(), v);
            assert_eq!(u64::from_i64(v).to_signed(), v);
        }
        assert_eq!(from_real::<u32>(0.25), 1 << 30);
        assert!((to_real(from_real::<u64>(-0.125)) + 0.125).abs() < 1e-15);
    }
}
