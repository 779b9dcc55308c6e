//! The TFHE PBS and key-switch clusters of Strix (§IV-B, Fig. 4): rotator, decomposer, I/FFT,
//! vector multiply-add (VMA), accumulator and the integer key-switch MAC array.
//!
//! `Kernel::Tfhe { step, size, count }` is read as follows — the convention of basalt-tfhe's
//! trace emission (`emit_blind_rotate_trace`, the batch plan of `trace_shape`,
//! `keyswitch_batch`), which the closed-form generator in `synth::tfhe` follows too (except
//! that it writes the key switch's `size` as n):
//!
//! | step | `size` | `count` | cycles per item on one instance |
//! |---|---|---|---|
//! | ModSwitch | LWE size n+1 | LWE ciphertexts | (n+1) / lanes |
//! | Rotate | N | polynomials | N / lanes |
//! | SampleExtract | N | LWE ciphertexts | N / lanes |
//! | Decompose | N | *output* (decomposed) polynomials | N / lanes |
//! | Fft, Ifft | N | polynomials | N/2 / lanes folded, N / lanes unfolded |
//! | MultAdd | N | polynomial products (frequency domain) | N/2 / lanes folded, N / lanes not |
//! | Accumulate | N | input polynomials (IFFT outputs) | N / lanes |
//! | KeySwitch | output LWE size n+1 | decomposed input digits (k·N·l_k per LWE) | (n+1) / lanes |
//!
//! For the FFT `lanes` is CLP (complex lanes): Strix's folded FFT handles a polynomial in
//! N/(2·CLP) cycles (§IV-B, "virtually CLP = 8"); the VMA's `lanes` is complex MACs per cycle.
//! Items spread over the `count` instances; Strix has TvLP = 8 HSCs, so e.g. the FFT group is
//! 8 × PLP = 16 instances.

use basalt_trace::TfheStep;

use crate::machine::{Machine, Unit, UnitClass};
use crate::units::ceil_div;

/// `None` when the unit class does not execute `step`.
pub fn cycles(m: &Machine, u: &Unit, step: TfheStep, size: u32, count: u32) -> Option<f64> {
    let folded = m.switches.folding.unwrap_or(false);
    let points = if folded { size / 2 } else { size };
    let lanes = u.lanes as u64;
    let per_item = match (u.class, step) {
        (UnitClass::TfheRotator, TfheStep::ModSwitch) => size as f64 / lanes as f64,
        (UnitClass::TfheRotator, TfheStep::Rotate | TfheStep::SampleExtract)
        | (UnitClass::TfheDecomposer, TfheStep::Decompose)
        | (UnitClass::TfheAccumulator, TfheStep::Accumulate) => ceil_div(size as u64, lanes),
        (UnitClass::TfheFft, TfheStep::Fft | TfheStep::Ifft)
        | (UnitClass::TfheVma, TfheStep::MultAdd) => ceil_div(points as u64, lanes),
        (UnitClass::TfheKs, TfheStep::KeySwitch) => size as f64 / lanes as f64,
        _ => return None,
    };
    Some(count as f64 / u.count as f64 * per_item)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{Machine, UnitClass};
    use crate::units::tests::unit;

    fn folded(on: bool) -> Machine {
        let mut m = crate::machine::tests::minimal();
        m.switches.folding = Some(on);
        m
    }

    #[test]
    fn strix_fft_iteration_set_i() {
        // Set I (N = 1024, l_b = 2): one core's 2 FFT units take (k+1)·l_b = 4 polys, folded
        // N/8 = 128 cycles each → 256 cycles = l_b·N/8 (Strix §IV-A's parallelism, with FFT
        // folding, §V-A).
        let u = unit(UnitClass::TfheFft, 2, 4);
        assert_eq!(cycles(&folded(true), &u, TfheStep::Fft, 1024, 4), Some(256.0));
        assert_eq!(cycles(&folded(false), &u, TfheStep::Fft, 1024, 4), Some(512.0));
        assert_eq!(cycles(&folded(true), &u, TfheStep::Decompose, 1024, 4), None);
    }

    #[test]
    fn strix_rotator_and_keyswitch() {
        // Rotator: 2 instances × 8 lanes, (k+1) = 2 polys of N = 1024 → 128 cycles (50 % of 256).
        let r = unit(UnitClass::TfheRotator, 2, 8);
        assert_eq!(cycles(&folded(true), &r, TfheStep::Rotate, 1024, 2), Some(128.0));
        // KS: k·N·l_k = 8192 digits × (n + 1 = 501) MACs over 64 MACs/cycle = 64,128 cycles.
        let ks = unit(UnitClass::TfheKs, 1, 64);
        assert_eq!(cycles(&folded(true), &ks, TfheStep::KeySwitch, 501, 8192), Some(64128.0));
    }
}
