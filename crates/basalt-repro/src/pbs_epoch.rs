//! Strix's PBS epochs as basalt-tfhe records them: the trace of one batch of PBS + key
//! switching, built from the parameter set alone by the library's shape-only recording
//! (`basalt_tfhe::trace_shape`), so no row needs the keys (gigabytes at set IV) and none is
//! timed from a hand-written stream.
//!
//! # Algorithm
//! An epoch of `b` LWEs is recorded as one core-level batch of `b` on one thread: Strix's
//! device level shares each GGSW between its TvLP cores (§III, spatial reuse), which one
//! sub-batch walking the blind rotation iteration-major expresses (one GGSW load per iteration
//! for the whole epoch). The external products accumulate `group` products in the frequency
//! domain per IFFT: Strix's VMA adder tree spans PLP = 2 (§IV-B), which the library's split
//! accumulation (`basalt_tfhe::external_product`, `group`) implements; the CPU executor itself
//! runs the full group. Key switching and PBS come in the set's atomic-pattern order.
//!
//! # Source
//! Strix §III, §IV-A/B, Table IV (sets I–IV, `data/params/tfhe/strix_*.toml`).

use basalt_tfhe::BatchConfig;
use basalt_tfhe::TfheParams;
use basalt_tfhe::trace_shape::{PbsShape, record_lut_batch};
use basalt_trace::Trace;

/// Frequency-domain accumulation depth of Strix's VMA adder tree: PLP = 2 (§IV-B).
pub const PLP: usize = 2;

/// Strix Table IV's sets, as the library's presets.
pub const STRIX_SETS: [(&str, &str); 4] =
    [("I", "STRIX_I"), ("II", "STRIX_II"), ("III", "STRIX_III"), ("IV", "STRIX_IV")];

/// How a row says where its epoch trace came from.
pub const PROVENANCE: &str = "library trace (basalt-tfhe shape-only PBS batch)";

/// The library preset `name` (a paper's set: accepted below 128 bits, it protects nothing).
///
/// # Errors
/// An unknown preset, as text.
pub fn preset(name: &str) -> Result<TfheParams, String> {
    TfheParams::preset(name, true).map_err(|e| e.to_string())
}

/// The trace of one epoch of `batch` PBS + KS of `params`, `group` products per IFFT.
pub fn record(params: &TfheParams, batch: usize, group: usize) -> Trace {
    let cfg = BatchConfig { core_batch: Some(batch.max(1)), ..BatchConfig::default() };
    record_lut_batch(params, PbsShape::from_params(params).with_group(group), batch, &cfg, 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_sim::synth::tfhe::{PbsParams, pbs_epoch};
    use basalt_trace::{Kernel, KernelKind, TfheKey, TfheStep};

    /// The library's epoch has the kernel counts of the paper's Algorithms 1 and 2 as the
    /// closed-form stream writes them down (`basalt_sim::synth::tfhe`), at every set, for a
    /// lone LWE and an epoch of 24, with Strix's PLP and with full accumulation; one GGSW per
    /// iteration and one ksk per epoch.
    #[test]
    fn library_epochs_have_the_closed_form_kernel_counts() {
        for (name, preset_name) in STRIX_SETS {
            let p = preset(preset_name).unwrap();
            let closed_params = PbsParams {
                n: p.lwe_dimension as u32,
                k: p.glwe_dimension as u32,
                big_n: p.polynomial_size as u32,
                l_b: p.pbs_level as u32,
                l_k: p.ks_level as u32,
            };
            let full = (p.glwe_dimension + 1) * p.pbs_level;
            for batch in [1, 24] {
                for group in [PLP, full] {
                    let lib = record(&p, batch, group);
                    let closed = pbs_epoch(closed_params, batch as u32, group as u32);
                    for step in [
                        TfheStep::ModSwitch,
                        TfheStep::Rotate,
                        TfheStep::Decompose,
                        TfheStep::Fft,
                        TfheStep::MultAdd,
                        TfheStep::Ifft,
                        TfheStep::Accumulate,
                        TfheStep::SampleExtract,
                        TfheStep::KeySwitch,
                    ] {
                        let kind = KernelKind::Tfhe(step);
                        assert_eq!(
                            lib.count(kind),
                            closed.count(kind),
                            "set {name}, batch {batch}, group {group}, {step:?}"
                        );
                    }
                    let loads =
                        |t: &Trace, f: fn(&Kernel) -> bool| t.kernels().filter(|k| f(k)).count();
                    let ggsw =
                        |k: &Kernel| matches!(k, Kernel::TfheKeyLoad { key: TfheKey::Ggsw, .. });
                    let key = |k: &Kernel| matches!(k, Kernel::KeyLoad { .. });
                    let ksk =
                        |k: &Kernel| matches!(k, Kernel::TfheKeyLoad { key: TfheKey::Ksk, .. });
                    assert_eq!(loads(&lib, ggsw), loads(&closed, key), "set {name}");
                    assert_eq!(loads(&lib, ggsw), p.lwe_dimension);
                    assert_eq!((loads(&lib, ksk), loads(&closed, ksk)), (1, 1), "set {name}");
                }
            }
        }
    }
}
