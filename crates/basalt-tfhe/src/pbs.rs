//! Programmable bootstrapping of one ciphertext: ModSwitch → BlindRotate → SampleExtract.
//!
//! # Algorithm
//! Strix Alg. 1 as a whole. The output is an LWE of dimension `kN` under the extracted GLWE key
//! whose phase is `LUT(m)·Δ` plus fresh bootstrapping noise, whatever the input noise was (as
//! long as it stayed inside half a box).
//!
//! # Source
//! Strix §II-B, Alg. 1; CGGI JoC 2019 Alg. 3 (programmable variant: Chillotti–Joye–Paillier 2021).

use basalt_trace::TfheStep;

use crate::blind_rotate::{BlindRotateWorkspace, blind_rotate, emit_blind_rotate_trace};
use crate::bsk::FourierBsk;
use crate::fft::NegacyclicFft;
use crate::sample_extract::sample_extract;
use crate::torus::Torus;
use crate::trace::emit_tfhe;

/// `out = SampleExtract(BlindRotate(lwe, tv))`; `out` has `kN + 1` words.
pub fn programmable_bootstrap<T: Torus>(
    lwe: &[T],
    tv: &[T],
    bsk: &FourierBsk,
    fft: &NegacyclicFft,
    ws: &mut BlindRotateWorkspace<T>,
    out: &mut [T],
) {
    let _r = basalt_trace::region("PBS");
    emit_blind_rotate_trace(bsk, 1);
    blind_rotate(lwe, tv, bsk, fft, ws);
    emit_tfhe(TfheStep::SampleExtract, bsk.n, 1);
    sample_extract(&ws.acc, bsk.k, bsk.n, out);
}
