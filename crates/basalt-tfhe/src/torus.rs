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
}

macro_rules! impl_torus {
    ($t:ty, $s:ty, $bits:expr) => {
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
        }
    };
}

impl_torus!(u32, i32, 32);
impl_torus!(u64, i64, 64);

/// `round(x) mod 2^64` for any finite `x`, by reading the IEEE-754 fields: `|x| = m·2^e` with a
/// 53-bit `m`, so the result is `m << e` (mod 2^64) or `m >> −e` rounded (half away from zero),
/// negated for negative `x`. Integer shifts and selects only, so the FFT output loop vectorises
/// (a float→int cast of values up to 2^100 would not). Reducing mod 2^64 then truncating also
/// gives the correct value mod 2^32.
#[inline(always)]
pub fn f64_to_u64_wrapping(x: f64) -> u64 {
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let shift = exp - 1075;
    let up = if shift < 64 {
        mant.wrapping_shl(shift as u32)
    } else {
        0
    };
    let s = (-shift).clamp(1, 63) as u32;
    let down = if -shift <= 54 {
        ((mant >> (s - 1)) + 1) >> 1
    } else {
        0
    };
    let v = if shift >= 0 { up } else { down };
    let v = if exp == 0 { 0 } else { v };
    if (bits >> 63) != 0 {
        v.wrapping_neg()
    } else {
        v
    }
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
        let cases: [f64; 13] = [
            0.0,
            -1.0,
            1.5,
            -2.5,
            0.49,
            -0.5,
            4503599627370497.5,
            -1.0e-300,
            3.0e19,
            -3.0e19,
            1.2345e25,
            -9.87e30,
            9.223_372_036_854_776e18, // 2^63
        ];
        for &x in &cases {
            let r = x.round() as i128;
            let want64 = (r.rem_euclid(1i128 << 64)) as u64;
            let want32 = (r.rem_euclid(1i128 << 32)) as u32;
            if x.abs() < 1.0e38 {
                assert_eq!(u64::from_f64_wrapping(x), want64, "x = {x}");
                assert_eq!(u32::from_f64_wrapping(x), want32, "x = {x}");
            }
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
