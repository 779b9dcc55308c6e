//! Blind-rotation fragmentation (Strix §III, Fig. 2, Eqs. 1–2): why device-level batching on a
//! GPU stops scaling, and why Strix batches at two levels.
//!
//! A GPU running NuFHE gives each streaming multiprocessor (SM) one LWE ciphertext and lets
//! all SMs walk the blind-rotation iterations together, sharing each iteration's bootstrapping
//! key (device-level batching). A batch therefore holds as many ciphertexts as there are SMs;
//! more ciphertexts run as further *fragments*, one after the other:
//!
//! ```text
//! fragments   = ⌈ ciphertexts / batch ⌉                      (Eq. 2, plus the first)
//! total time  = fragments × BR time per core                 (Eq. 1)
//! ```
//!
//! Core-level batching (several ciphertexts per SM) does not help on a GPU: an SM is already
//! compute-bound on one ciphertext, so the BR time per core grows with the core batch and the
//! total stays the same (§III, "the time … increases accordingly"). Strix instead gives each
//! core a pipeline that one ciphertext cannot fill (the FFT's initial latency, §IV-B), so its
//! core batch raises throughput; that side is timed from traces in `reproduce::strix`.

use serde::{Deserialize, Serialize};

/// Number of sequential fragments for `ciphertexts` LWEs when `batch` run together (Eq. 2 + 1).
/// No ciphertexts take no fragment.
pub fn fragments(ciphertexts: u32, batch: u32) -> u32 {
    ciphertexts.div_ceil(batch.max(1))
}

/// A GPU with device-level batching, as Strix §III models NuFHE on a Titan RTX.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceBatchedGpu {
    /// Streaming multiprocessors: one ciphertext each per fragment (Titan RTX: 72, §III).
    pub sms: u32,
    /// Blind-rotation time of one ciphertext on one SM, in seconds.
    pub br_seconds: f64,
}

impl DeviceBatchedGpu {
    /// Blind-rotation time of `ciphertexts` LWEs with `core_batch` of them per SM: an SM is
    /// compute-bound, so `core_batch` ciphertexts take `core_batch` times as long on it.
    pub fn br_time(&self, ciphertexts: u32, core_batch: u32) -> f64 {
        let core_batch = core_batch.max(1);
        let per_fragment = self.br_seconds * f64::from(core_batch);
        f64::from(fragments(ciphertexts, self.sms * core_batch)) * per_fragment
    }

    /// Ciphertexts per second of a long stream (full fragments).
    pub fn throughput(&self) -> f64 {
        f64::from(self.sms) / self.br_seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TITAN: DeviceBatchedGpu = DeviceBatchedGpu { sms: 72, br_seconds: 0.036 };

    #[test]
    fn fragments_count_whole_batches() {
        assert_eq!(fragments(0, 72), 0);
        assert_eq!(fragments(1, 72), 1);
        assert_eq!(fragments(72, 72), 1);
        assert_eq!(fragments(73, 72), 2);
        assert_eq!(fragments(145, 72), 3);
    }

    #[test]
    fn time_is_a_staircase_of_fragments() {
        let t = |w| TITAN.br_time(w, 1);
        assert_eq!(t(1), t(72));
        assert_eq!(t(73), 2.0 * t(72));
        assert_eq!(t(144), t(73));
        assert_eq!(t(145), 3.0 * t(1));
    }

    #[test]
    fn core_batching_does_not_pay_on_a_gpu() {
        for w in [72, 144, 288, 1000] {
            let one = TITAN.br_time(w, 1);
            let two = TITAN.br_time(w, 2);
            // Never faster; equal whenever the core batch divides the work evenly.
            assert!(two >= one, "{w}: {two} < {one}");
        }
        assert_eq!(TITAN.br_time(144, 2), TITAN.br_time(144, 1));
        assert!((TITAN.throughput() - 2000.0).abs() < 1e-9);
    }
}
