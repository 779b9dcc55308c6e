//! Overflow-safe emission of `basalt_trace::Kernel::Tfhe` records.
//!
//! `Kernel::Tfhe` carries `size` and `count` as `u32`. Counts are products such as
//! `kN · l_k · batch` (key switching) or `batch · (k+1)·l_b · (k+1)` (multiply-add); at set IV
//! (`kN · l_k = 81,920`) a plain `as u32` wraps beyond ~52K ciphertexts and the simulator would
//! silently see a tiny workload. Here every count is computed in `u64` and, if it does not fit,
//! emitted as several records whose counts add up exactly, so totals never wrap.
//!
//! # Algorithm
//! `count = q · u32::MAX + r`: `q` records of `u32::MAX`, then one of `r` (if `r > 0`). A zero
//! count emits nothing. `size` (a dimension, validated ≤ 2^16·8 by [`crate::params`]) saturates.
//!
//! # Source
//! `Kernel::Tfhe`'s `u32` fields; `keyswitch_batch`'s counts at set IV (Strix Table IV) are
//! the ones that exceed them.

use basalt_trace::{Kernel, TfheStep, emit};

/// The `u32` pieces `count` is emitted as (each ≥ 1, summing to `count`).
pub fn split_count(count: u64) -> impl Iterator<Item = u32> {
    let max = u64::from(u32::MAX);
    let full = count / max;
    let rest = count % max;
    (0..full).map(|_| u32::MAX).chain((rest > 0).then_some(rest as u32))
}

/// Emit `count` kernels of `step` on polynomials/vectors of `size`, split so nothing wraps.
pub fn emit_tfhe(step: TfheStep, size: usize, count: u64) {
    let size = u32::try_from(size).unwrap_or(u32::MAX);
    for c in split_count(count) {
        emit(Kernel::Tfhe { step, size, count: c });
    }
}

/// Trace of key switching `batch` ciphertexts of dimension `in_dim` with `level` digits into
/// dimension `out_dim`: `in_dim · level · batch` row subtractions of length `out_dim + 1`.
pub fn emit_keyswitch_trace(in_dim: usize, level: usize, out_dim: usize, batch: usize) {
    if !basalt_trace::is_recording() {
        return;
    }
    // The ksk streams once per call (per batch), `in_dim · level` rows of `out_dim + 1` words.
    emit(Kernel::TfheKeyLoad {
        key: basalt_trace::TfheKey::Ksk,
        size: u32::try_from(out_dim + 1).unwrap_or(u32::MAX),
        count: (in_dim as u64).saturating_mul(level as u64),
    });
    let count = (in_dim as u64).saturating_mul(level as u64).saturating_mul(batch as u64);
    emit_tfhe(TfheStep::KeySwitch, out_dim + 1, count);
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_trace::{KernelKind, record};

    #[test]
    fn split_count_sums_exactly_and_fits() {
        let m = u64::from(u32::MAX);
        for c in [0, 1, m - 1, m, m + 1, 3 * m + 7, 16384 * 5 * 60_000] {
            let parts: Vec<u32> = split_count(c).collect();
            assert_eq!(parts.iter().map(|&x| u64::from(x)).sum::<u64>(), c, "{c}");
            assert!(parts.iter().all(|&x| x > 0));
            assert_eq!(parts.len() as u64, c.div_ceil(m));
        }
    }

    #[test]
    fn set_iv_keyswitch_of_60k_lwes_does_not_wrap() {
        // Set IV: kN = 16384, l_k = 5, n = 991. 60,000 LWEs → 4.9e9 rows > u32::MAX.
        let batch = 60_000usize;
        let (_, trace) = record(|| emit_keyswitch_trace(16384, 5, 991, batch));
        let want = 16384u64 * 5 * batch as u64;
        assert!(want > u64::from(u32::MAX));
        assert_eq!(trace.count(KernelKind::Tfhe(TfheStep::KeySwitch)), want);
        assert!(trace.kernels().all(|k| matches!(
            k,
            Kernel::Tfhe { size: 992, .. } | Kernel::TfheKeyLoad { size: 992, count: 81_920, .. }
        )));
    }
}
