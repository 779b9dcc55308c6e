//! TFHE PBS + key-switch kernel streams in closed form (Strix Algorithms 1 and 2); see the
//! module note in `synth`. The meaning of `size`/`count` per step is fixed in `units::pbs`.

use basalt_trace::{Kernel, TfheKey, TfheStep, Trace};

use crate::synth::Builder;

/// TFHE shape for PBS + KS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PbsParams {
    /// LWE dimension n (blind-rotation iterations).
    pub n: u32,
    /// GLWE dimension k.
    pub k: u32,
    /// Polynomial size N.
    pub big_n: u32,
    /// PBS decomposition levels l_b.
    pub l_b: u32,
    /// KS decomposition levels l_k (not in the paper; see `STRIX_SETS`).
    pub l_k: u32,
}

/// Strix Table IV parameter sets I–IV (n, k, N, l_b as printed). l_k is not in the paper: sets
/// I/II use the TFHE library's `ks_length = 8`, set IV concrete-shortint's `ks_level = 5`, set
/// III is unknown and takes 8 (a gap: no public set matches it).
pub const STRIX_SETS: [(&str, PbsParams); 4] = [
    ("I", PbsParams { n: 500, k: 1, big_n: 1024, l_b: 2, l_k: 8 }),
    ("II", PbsParams { n: 630, k: 1, big_n: 1024, l_b: 3, l_k: 8 }),
    ("III", PbsParams { n: 592, k: 1, big_n: 2048, l_b: 3, l_k: 8 }),
    ("IV", PbsParams { n: 991, k: 1, big_n: 16384, l_b: 2, l_k: 5 }),
];

/// One epoch of `batch` LWE ciphertexts through PBS then key switching.
///
/// # Algorithm (Strix Alg. 1, errata corrected)
/// Loop bounds exclusive, line 9's index read as r, line 10 read as
/// `ACC + BSK_i ⊡ (X^{ā_i}·ACC − ACC)`. ModSwitch the n+1 elements; rotate the test vector by b̄; then n blind-rotation iterations,
/// each: rotate-and-subtract the (k+1) accumulator polynomials, decompose them into (k+1)·l_b
/// polynomials, FFT those, multiply-add with the Fourier-domain bsk\[i\] ((k+1)·l_b·(k+1)
/// products), IFFT and accumulate. Frequency-domain accumulation covers `accum_depth` products
/// (Strix: PLP = 2, §IV-B), so each of the k+1 outputs needs ⌈(k+1)·l_b / accum_depth⌉ IFFTs; a
/// library that accumulates fully in the frequency domain uses `accum_depth = (k+1)·l_b`.
/// Finally sample-extract and key-switch (Alg. 2: k·N·l_k digits × (n+1) MACs per LWE).
///
/// `size`/`count` follow basalt-tfhe's own trace emission (`units::pbs` has the table), so a
/// library trace and this stream time identically.
///
/// Each blind-rotation iteration is its own region, because iteration i+1 depends on i. The
/// iteration's GGSW `bsk[i]` is loaded once and shared by the whole batch (Strix's two-level
/// batching); it is written as a `KeyLoad` of `(k+1)·l_b` digits × 2 polynomials, which is exact
/// for k = 1 (a GGSW row has k+1 = 2 polynomials) — for k > 1 the trace IR needs a TFHE key
/// kernel (proposed), so the load is omitted there. The key-switching key is a `TfheKeyLoad`
/// of the whole ksk per epoch. LWE inputs/outputs and initial test vectors (a few KiB–128 KiB
/// per LWE) are not loaded: they are < 1 % of the key traffic at every Strix set.
///
/// # Cost per LWE per iteration
/// FFTs (k+1)·l_b; IFFTs (k+1)·⌈(k+1)l_b/accum_depth⌉; products (k+1)²·l_b.
pub fn pbs_epoch(p: PbsParams, batch: u32, accum_depth: u32) -> Trace {
    let PbsParams { n, k, big_n, l_b, l_k } = p;
    let t = |step, count| Kernel::Tfhe { step, size: big_n, count };
    let polys = batch * (k + 1);
    let decomposed = polys * l_b;
    let iffts = polys * ((k + 1) * l_b).div_ceil(accum_depth.max(1));
    let mut b = Builder::new();
    b.region("PBS", |b| {
        b.region("ModSwitch", |b| {
            b.k(Kernel::Tfhe { step: TfheStep::ModSwitch, size: n + 1, count: batch });
            b.k(t(TfheStep::Rotate, batch));
        });
        for _ in 0..n {
            b.region("BlindRotate", |b| {
                if k == 1 {
                    let digits = (k + 1) * l_b;
                    b.k(Kernel::KeyLoad { n: big_n, limbs: 1, digits, seeded: false });
                }
                b.k(t(TfheStep::Rotate, polys));
                b.k(t(TfheStep::Decompose, decomposed));
                b.k(t(TfheStep::Fft, decomposed));
                b.k(t(TfheStep::MultAdd, decomposed * (k + 1)));
                b.k(t(TfheStep::Ifft, iffts));
                b.k(t(TfheStep::Accumulate, iffts));
            });
        }
        b.region("SampleExtract", |b| {
            b.k(t(TfheStep::SampleExtract, batch));
        });
    });
    b.region("KeySwitch", |b| {
        // The whole ksk streams once per epoch, tile by tile (Strix §IV-C): k·N·l_k LWE rows
        // of n + 1 words, shared by the batch.
        let rows = (k * big_n * l_k) as u64;
        b.k(Kernel::TfheKeyLoad { key: TfheKey::Ksk, size: n + 1, count: rows });
        b.k(Kernel::Tfhe { step: TfheStep::KeySwitch, size: n, count: batch * k * big_n * l_k });
    });
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_trace::KernelKind;

    #[test]
    fn set_i_counts_per_lwe() {
        let (_, p) = STRIX_SETS[0];
        let t = pbs_epoch(p, 1, 2);
        // 500 iterations × (k+1)·l_b = 4 FFTs; IFFTs 2 · ⌈4/2⌉ = 4 per iteration.
        assert_eq!(t.count(KernelKind::Tfhe(TfheStep::Fft)), 2000);
        assert_eq!(t.count(KernelKind::Tfhe(TfheStep::Ifft)), 2000);
        assert_eq!(t.count(KernelKind::Tfhe(TfheStep::MultAdd)), 4000);
        // Naive frequency-domain accumulation: l_b : 1 FFT:IFFT ratio (Strix §II-E).
        let naive = pbs_epoch(p, 1, 4);
        assert_eq!(naive.count(KernelKind::Tfhe(TfheStep::Ifft)), 1000);
        assert_eq!(t.count(KernelKind::Tfhe(TfheStep::KeySwitch)), 1024 * 8);
        // One GGSW per iteration: (k+1)·l_b rows × (k+1) polynomials.
        assert_eq!(t.count(KernelKind::KeyLoad), 500 * 4 * 2);
        // One ksk per epoch: k·N·l_k rows of n + 1 words.
        let ksk = t.events.iter().find_map(|e| match e {
            basalt_trace::Event::Kernel(Kernel::TfheKeyLoad { key: TfheKey::Ksk, size, count }) => {
                Some((*size, *count))
            }
            _ => None,
        });
        assert_eq!(ksk, Some((501, 1024 * 8)));
    }
}
