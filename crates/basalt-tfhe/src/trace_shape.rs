//! The trace of a batched PBS (and of a KS + PBS / PBS + KS batch) from the parameters alone.
//!
//! A Strix-sized batch cannot be recorded by running it: at set IV the keys alone take
//! gigabytes. The batched executor ([`crate::batch`]) therefore decides its schedule as a plan
//! ([`PbsBatchPlan`]: the core-level sub-batches, each walked iteration-major) before it
//! touches any data, and emits the plan's kernels through [`PbsBatchPlan::emit`]; the executor
//! then runs that same plan on the data. A shape-only recording ([`record_lut_batch`]) builds
//! the plan from a [`PbsShape`] made from the [`TfheParams`] and emits it the same way, with no
//! key material and no arithmetic. The two traces are equal event for event (tested against a
//! real execution with real keys below).
//!
//! # Algorithm (per core-level sub-batch of `b` LWEs, as `batch.rs` executes it)
//! Region `PBS`: `ModSwitch` (the `n+1` elements, then the test-vector rotation by `b̄`); then
//! `n` regions `BlindRotate`, one per iteration `i` (iteration `i+1` needs `i`'s accumulators):
//! GGSW `bsk[i]` streamed once for the sub-batch (Strix's temporal reuse), then for the `b`
//! accumulators the CMux's rotate-and-subtract of the `k+1` polynomials, their decomposition
//! into `(k+1)·l` digit polynomials, the FFTs, `(k+1)·l·(k+1)` frequency-domain products, and one
//! IFFT + time-domain accumulation per output column and group of `group` products; finally
//! `SampleExtract`. Key switching streams the whole ksk once per batch
//! ([`crate::trace::emit_keyswitch_trace`]).
//!
//! # Source
//! Strix §III (two-level batching), §IV-A/B (epochs, split accumulation), Alg. 1 and 2.

use std::ops::Range;

use basalt_trace::{Kernel, TfheKey, TfheStep, Trace};

use crate::batch::{BatchConfig, sub_batches};
use crate::blind_rotate::shape_of;
use crate::bsk::FourierBsk;
use crate::params::{AtomicPattern, TfheParams};
use crate::trace::{emit_keyswitch_trace, emit_tfhe};

/// What the schedule and the trace of a blind rotation depend on: dimensions only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PbsShape {
    /// LWE dimension `n` (blind-rotation iterations).
    pub lwe_dim: usize,
    /// GLWE dimension `k`.
    pub k: usize,
    /// Polynomial size `N`.
    pub poly_size: usize,
    /// PBS decomposition levels `l_b`.
    pub level: usize,
    /// Frequency-domain products summed before one IFFT (`(k+1)·l` = one IFFT per output
    /// column, what the CPU executor runs; Strix's VMA adder tree sums PLP = 2).
    pub group: usize,
}

impl PbsShape {
    /// The shape the executor runs with `bsk`.
    pub fn of(bsk: &FourierBsk) -> PbsShape {
        PbsShape {
            lwe_dim: bsk.lwe_dim,
            k: bsk.k,
            poly_size: bsk.n,
            level: bsk.level,
            group: shape_of(bsk).group,
        }
    }

    /// The shape of `params`' bootstrapping key, with the executor's accumulation group.
    pub fn from_params(params: &TfheParams) -> PbsShape {
        let (k, level) = (params.glwe_dimension, params.pbs_level);
        PbsShape {
            lwe_dim: params.lwe_dimension,
            k,
            poly_size: params.polynomial_size,
            level,
            group: (k + 1) * level,
        }
    }

    /// The same shape with `group` products accumulated per IFFT (clamped to `1..=(k+1)·l`,
    /// as the external product clamps it).
    pub fn with_group(self, group: usize) -> PbsShape {
        PbsShape { group: group.clamp(1, self.rows()), ..self }
    }

    /// Decomposed rows of one GLWE: `(k+1)·l`.
    pub fn rows(&self) -> usize {
        (self.k + 1) * self.level
    }

    /// IFFTs per output column of one external product.
    fn iffts_per_column(&self) -> usize {
        self.rows().div_ceil(self.group.clamp(1, self.rows()))
    }

    /// Core-level batch that fits `cache_bytes` on a `torus_bytes`-word torus: one Fourier GGSW,
    /// the shared external-product scratch and `B` accumulators with their mod-switched inputs.
    ///
    /// The whole cache is the budget, not a safety fraction of it: past the knee the
    /// accumulators spill to L3, which costs little next to streaming the key from DRAM, while a
    /// smaller `B` streams the key more often (on the 2+2-bit set with a 512 KiB L2 this gives
    /// `B` = 10; `pbs_batch_probe` in `basalt-bench` sweeps `B` to check the knee).
    pub fn core_batch_for_cache(&self, torus_bytes: usize, cache_bytes: usize) -> usize {
        let (n, k) = (self.poly_size, self.k);
        let ggsw = self.rows() * (k + 1) * (n / 2) * 16;
        let shared = self.rows() * (n / 2) * 16 + (n / 2) * 16;
        let per_ct = (k + 1) * n * torus_bytes + (self.lwe_dim + 1) * std::mem::size_of::<usize>();
        let budget = cache_bytes.saturating_sub(ggsw + shared);
        (budget / per_ct).max(1)
    }

    /// The core-level batch `cfg` asks for: explicit, else from L2, else from the L3 share.
    pub fn core_batch(&self, torus_bytes: usize, cfg: &BatchConfig) -> usize {
        cfg.core_batch.unwrap_or_else(|| {
            let b = self.core_batch_for_cache(torus_bytes, cfg.cache_bytes);
            if b >= 4 {
                b
            } else {
                self.core_batch_for_cache(torus_bytes, cfg.fallback_cache_bytes)
            }
        })
    }
}

/// The schedule of one PBS batch: which LWEs go through the blind rotation together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PbsBatchPlan {
    pub shape: PbsShape,
    /// Core-level sub-batches, in order, covering the batch.
    pub sub_batches: Vec<Range<usize>>,
}

impl PbsBatchPlan {
    /// Plan `count` LWEs on `threads` threads (sub-batches as [`sub_batches`] shares them out).
    pub fn new(
        shape: PbsShape,
        torus_bytes: usize,
        count: usize,
        cfg: &BatchConfig,
        threads: usize,
    ) -> PbsBatchPlan {
        let max = shape.core_batch(torus_bytes, cfg);
        PbsBatchPlan { shape, sub_batches: sub_batches(count, threads, max) }
    }

    /// Emit the plan's kernels (module note) into the current recording; a no-op unless one is
    /// open. Counts are `u64` and split by [`emit_tfhe`] so they never wrap.
    pub fn emit(&self) {
        if !basalt_trace::is_recording() {
            return;
        }
        let s = &self.shape;
        let (n, k1, rows) = (s.poly_size, (s.k + 1) as u64, s.rows() as u64);
        let ggsw_polys = rows * k1;
        let iffts = k1 * s.iffts_per_column() as u64;
        for r in &self.sub_batches {
            let b = r.len() as u64;
            let _pbs = basalt_trace::region("PBS");
            {
                let _g = basalt_trace::region("ModSwitch");
                emit_tfhe(TfheStep::ModSwitch, s.lwe_dim + 1, b);
                emit_tfhe(TfheStep::Rotate, n, b);
            }
            for _ in 0..s.lwe_dim {
                let _g = basalt_trace::region("BlindRotate");
                basalt_trace::emit(Kernel::TfheKeyLoad {
                    key: TfheKey::Ggsw,
                    size: u32::try_from(n).unwrap_or(u32::MAX),
                    count: ggsw_polys,
                });
                emit_tfhe(TfheStep::Rotate, n, b * k1);
                emit_tfhe(TfheStep::Decompose, n, b * rows);
                emit_tfhe(TfheStep::Fft, n, b * rows);
                emit_tfhe(TfheStep::MultAdd, n, b * rows * k1);
                emit_tfhe(TfheStep::Ifft, n, b * iffts);
                emit_tfhe(TfheStep::Accumulate, n, b * iffts);
            }
            let _g = basalt_trace::region("SampleExtract");
            emit_tfhe(TfheStep::SampleExtract, n, b);
        }
    }
}

/// Emit the key switching of a batch of `count` LWEs, as [`crate::batch::keyswitch_batch`]
/// issues it: the ksk once, then `in_dim · level · count` row subtractions.
pub fn emit_keyswitch_batch(in_dim: usize, level: usize, out_dim: usize, count: usize) {
    let _r = basalt_trace::region("KeySwitch");
    emit_keyswitch_trace(in_dim, level, out_dim, count);
}

/// Emit, without keys or data, what [`crate::keys::ServerKey::apply_lut_batch`] records for
/// `count` ciphertexts of `params` on `threads` threads: key switching and the PBS batch in
/// the set's atomic-pattern order. `shape` is `params`' (possibly with another accumulation
/// group, [`PbsShape::with_group`]).
pub fn emit_lut_batch(
    params: &TfheParams,
    shape: PbsShape,
    count: usize,
    cfg: &BatchConfig,
    threads: usize,
) {
    if count == 0 {
        return;
    }
    let torus_bytes = params.torus_bits as usize / 8;
    let plan = PbsBatchPlan::new(shape, torus_bytes, count, cfg, threads);
    let (big, small) = (params.glwe_dimension * params.polynomial_size, params.lwe_dimension);
    match params.atomic_pattern {
        AtomicPattern::KsPbs => {
            emit_keyswitch_batch(big, params.ks_level, small, count);
            plan.emit();
        }
        AtomicPattern::PbsKs => {
            plan.emit();
            emit_keyswitch_batch(big, params.ks_level, small, count);
        }
    }
}

/// [`emit_lut_batch`] into a trace of its own.
pub fn record_lut_batch(
    params: &TfheParams,
    shape: PbsShape,
    count: usize,
    cfg: &BatchConfig,
    threads: usize,
) -> Trace {
    basalt_trace::record(|| emit_lut_batch(params, shape, count, cfg, threads)).1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::ClientKey;
    use crate::params::toy;
    use crate::torus::Torus;
    use basalt_trace::KernelKind;

    /// A real batch with real keys records exactly the shape-only trace, for both atomic
    /// patterns, several core-level batch sizes and thread counts (uneven sub-batches
    /// included), and decrypts correctly (the recorded run is a real one).
    fn real_equals_shape<T: Torus>(params: TfheParams) {
        let ck = ClientKey::<T>::new(&params).unwrap();
        let sk = ck.server_key();
        let msgs: Vec<u64> = (0..7).map(|i| i % params.message_modulus).collect();
        let cts: Vec<_> = msgs.iter().map(|&m| ck.encrypt(m).unwrap()).collect();
        let lut = sk.lut(|x| (x + 1) % params.message_modulus);
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for core in [None, Some(1), Some(3), Some(7)] {
                let cfg = BatchConfig { core_batch: core, ..BatchConfig::default() };
                let (out, real) = pool.install(|| {
                    basalt_trace::record(|| sk.apply_lut_batch(&cts, &lut, &cfg).unwrap())
                });
                for (o, &m) in out.iter().zip(&msgs) {
                    assert_eq!(ck.decrypt(o).unwrap(), (m + 1) % params.message_modulus);
                }
                let shape = PbsShape::from_params(&params);
                let only = record_lut_batch(&params, shape, cts.len(), &cfg, threads);
                assert!(!real.events.is_empty());
                assert_eq!(real.events, only.events, "threads {threads}, core {core:?}");
            }
        }
    }

    #[test]
    fn shape_only_trace_equals_a_real_ks_pbs_batch() {
        real_equals_shape::<u64>(toy::u64_small());
    }

    #[test]
    fn shape_only_trace_equals_a_real_pbs_ks_batch() {
        real_equals_shape::<u32>(toy::u32_small());
    }

    /// Closed-form kernel counts of a batch (Strix Alg. 1 and 2), independent of the plan: per
    /// LWE and iteration `(k+1)·l` FFTs, `(k+1)·⌈(k+1)l/group⌉` IFFTs, `(k+1)²·l` products;
    /// per LWE `k·N·l_k` key-switch rows; one GGSW per iteration per sub-batch.
    #[test]
    fn kernel_counts_match_the_closed_form() {
        let p = TfheParams::preset("STRIX_I", true).unwrap();
        let cfg = BatchConfig { core_batch: Some(3), ..BatchConfig::default() };
        let (n, rows, b) = (500u64, 4u64, 24u64);
        for (group, ifft_per_col) in [(4, 1u64), (2, 2)] {
            let shape = PbsShape::from_params(&p).with_group(group);
            let t = record_lut_batch(&p, shape, b as usize, &cfg, 8);
            assert_eq!(t.count(KernelKind::Tfhe(TfheStep::Fft)), b * n * rows);
            assert_eq!(t.count(KernelKind::Tfhe(TfheStep::Ifft)), b * n * 2 * ifft_per_col);
            assert_eq!(t.count(KernelKind::Tfhe(TfheStep::MultAdd)), b * n * rows * 2);
            assert_eq!(t.count(KernelKind::Tfhe(TfheStep::SampleExtract)), b);
            assert_eq!(t.count(KernelKind::Tfhe(TfheStep::KeySwitch)), b * 1024 * 8);
            let ggsw = t
                .kernels()
                .filter(|k| matches!(k, Kernel::TfheKeyLoad { key: TfheKey::Ggsw, .. }))
                .count();
            assert_eq!(ggsw as u64, 8 * n, "8 sub-batches of 3, one GGSW each per iteration");
        }
    }

    /// Set IV's batch is recorded without keys (they would take gigabytes) and its counts do
    /// not wrap at a large batch.
    #[test]
    fn set_iv_records_without_keys() {
        let p = TfheParams::preset("STRIX_IV", true).unwrap();
        let cfg = BatchConfig { core_batch: Some(60_000), ..BatchConfig::default() };
        let t = record_lut_batch(&p, PbsShape::from_params(&p), 60_000, &cfg, 1);
        assert_eq!(t.count(KernelKind::Tfhe(TfheStep::KeySwitch)), 16384 * 5 * 60_000);
        assert_eq!(t.count(KernelKind::Tfhe(TfheStep::Fft)), 60_000 * 991 * 4);
    }
}
