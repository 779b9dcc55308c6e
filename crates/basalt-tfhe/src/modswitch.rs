//! Modulus switching `Z_q → Z_{2N}`: `ā = round(a · 2N / q) mod 2N`.
//!
//! # Source
//! Strix Alg. 1 lines 2–3 (`ModSwitch`); CGGI JoC 2019 §4. With `q = 2^w` and `2N = 2^L` it is a
//! rounding right shift by `w − L` bits.

use crate::torus::Torus;

/// Switch one word to `Z_{2N}` (`log2_2n = log2(2N)`).
#[inline(always)]
pub fn mod_switch<T: Torus>(a: T, log2_2n: u32) -> usize {
    let shift = T::BITS - log2_2n;
    let v = (a.shr(shift - 1).to_u64() + 1) >> 1;
    (v & ((1u64 << log2_2n) - 1)) as usize
}

/// Switch a whole LWE ciphertext (`a_1..a_n, b`) into `out`.
pub fn mod_switch_lwe<T: Torus>(ct: &[T], poly_size: usize, out: &mut Vec<usize>) {
    let l = (2 * poly_size).trailing_zeros();
    out.clear();
    out.extend(ct.iter().map(|&a| mod_switch(a, l)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_real_rounding() {
        let n = 1024usize;
        for a in
            [0u64, 1, 1 << 52, (1 << 52) - 1, 3 << 51, u64::MAX, 1 << 63, 0x1234_5678_9abc_def0]
        {
            let want = ((a as f64 / 2f64.powi(64) * 2048.0).round() as usize) % 2048;
            assert_eq!(mod_switch(a, 11), want, "a={a:#x}");
        }
        for a in [0u32, 1 << 20, (1 << 20) - 1, u32::MAX, 0x8765_4321] {
            let want = ((a as f64 / 2f64.powi(32) * (2 * n) as f64).round() as usize) % (2 * n);
            assert_eq!(mod_switch(a, 11), want);
        }
    }
}
