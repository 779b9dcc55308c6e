//! Strix's two-level ciphertext batching as a CPU schedule.
//!
//! # Algorithm
//! * Core level: a sub-batch of `B` ciphertexts walks through the blind rotation *together*:
//!   iteration `i` applies `bsk[i]` to all `B` accumulators before moving to `bsk[i+1]`, so each
//!   GGSW is fetched from memory once per sub-batch and then reused from cache (temporal reuse).
//!   `B` is chosen so that the `B` accumulators, the shared external-product scratch and one
//!   Fourier GGSW fit in the per-core L2 (2 MiB here), or set explicitly.
//! * Device level: sub-batches are spread over the cores with rayon; all cores stream the same
//!   key (spatial reuse in the shared L3).
//!
//! Scheduling only: every accumulator sees exactly the same operations as in sequential PBS, so
//! results are bit-identical. Key switching of a batch is the tiled matrix–matrix
//! product of [`KeySwitchKey::keyswitch_batch`].
//!
//! # Source
//! Strix §III (two-level batching, Fig. 3), §IV-A (epochs = device × core batch).

use basalt_trace::TfheStep;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::blind_rotate::{emit_blind_rotate_trace, init_accumulator, shape_of};
use crate::bsk::FourierBsk;
use crate::error::Result;
use crate::external_product::{ExternalProductWorkspace, cmux_rotate};
use crate::fft::{NegacyclicFft, fft_for};
use crate::keys::{Ciphertext, ServerKey};
use crate::keyswitch::KeySwitchKey;
use crate::lut::Lut;
use crate::lwe::LweCiphertext;
use crate::modswitch::mod_switch_lwe;
use crate::params::AtomicPattern;
use crate::sample_extract::sample_extract;
use crate::torus::Torus;
use crate::trace::{emit_keyswitch_trace, emit_tfhe};

/// How a batch is scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchConfig {
    /// Core-level batch size; `None` = derived from `cache_bytes`. `Some(1)` = unbatched
    /// (each ciphertext runs its whole blind rotation alone, TFHE-rs style).
    pub core_batch: Option<usize>,
    /// Per-core cache budget used to size the core-level batch (L2 = 2 MiB on the target).
    pub cache_bytes: usize,
    /// Fallback budget (a core's share of L3, 32 MiB / 2 here) when fewer than 4 ciphertexts
    /// fit in `cache_bytes` (set IV: one Fourier GGSW alone is 1 MiB).
    pub fallback_cache_bytes: usize,
    /// Ciphertexts per key-switching tile.
    pub ks_tile: usize,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            core_batch: None,
            cache_bytes: 2 << 20,
            fallback_cache_bytes: 16 << 20,
            ks_tile: 16,
        }
    }
}

impl BatchConfig {
    pub fn unbatched() -> Self {
        BatchConfig { core_batch: Some(1), ..Self::default() }
    }
}

/// Core-level batch that fits `cache_bytes`: one Fourier GGSW + shared scratch + `B`
/// accumulators, using 3/4 of the cache (the rest for FFT twiddles and the stack).
pub fn core_batch_for_cache<T: Torus>(bsk: &FourierBsk, cache_bytes: usize) -> usize {
    let n = bsk.n;
    let k = bsk.k;
    let t = std::mem::size_of::<T>();
    let ggsw = bsk.ggsw_len() * 16;
    let rows = (k + 1) * bsk.level;
    let shared = rows * (n / 2) * 16 + (n / 2) * 16;
    let per_ct = (k + 1) * n * t + (bsk.lwe_dim + 1) * std::mem::size_of::<usize>();
    let budget = (cache_bytes * 3 / 4).saturating_sub(ggsw + shared);
    (budget / per_ct).max(1)
}

/// The core-level batch a config asks for: explicit, else from L2, else from the L3 share.
pub fn core_batch_of<T: Torus>(bsk: &FourierBsk, cfg: &BatchConfig) -> usize {
    cfg.core_batch.unwrap_or_else(|| {
        let b = core_batch_for_cache::<T>(bsk, cfg.cache_bytes);
        if b >= 4 { b } else { core_batch_for_cache::<T>(bsk, cfg.fallback_cache_bytes) }
    })
}

/// Blind-rotate + sample-extract a core-level sub-batch, iteration-major.
fn pbs_core_batch<T: Torus>(
    inputs: &[&[T]],
    tv: &[T],
    bsk: &FourierBsk,
    fft: &NegacyclicFft,
    outs: &mut [Vec<T>],
) {
    let (k, n) = (bsk.k, bsk.n);
    let glwe = (k + 1) * n;
    let b = inputs.len();
    let mut accs = vec![T::ZERO; b * glwe];
    let mut ms: Vec<Vec<usize>> = vec![Vec::new(); b];
    for ((acc, ms), x) in accs.chunks_mut(glwe).zip(ms.iter_mut()).zip(inputs) {
        mod_switch_lwe(x, n, ms);
        init_accumulator(acc, tv, k, ms[bsk.lwe_dim]);
    }
    let shape = shape_of(bsk);
    let mut ws = ExternalProductWorkspace::new(fft, k, bsk.level);
    for i in 0..bsk.lwe_dim {
        let g = bsk.ggsw(i);
        let next = if i + 1 < bsk.lwe_dim { bsk.ggsw(i + 1) } else { &[] };
        for (j, (acc, ms)) in accs.chunks_mut(glwe).zip(&ms).enumerate() {
            // The next GGSW is prefetched once per iteration, during the last ciphertext.
            let nx = if j + 1 == b { next } else { &[] };
            cmux_rotate(acc, g, ms[i], shape, fft, &mut ws, nx);
        }
    }
    for (acc, out) in accs.chunks(glwe).zip(outs.iter_mut()) {
        out.clear();
        out.resize(k * n + 1, T::ZERO);
        sample_extract(acc, k, n, out);
    }
}

/// PBS of many LWEs (under the bsk's key) with the same test vector, two-level batched on the
/// current rayon pool. Outputs have `kN + 1` words.
pub fn pbs_batch<T: Torus>(
    inputs: &[&[T]],
    tv: &[T],
    bsk: &FourierBsk,
    cfg: &BatchConfig,
    outs: &mut [Vec<T>],
) {
    assert_eq!(inputs.len(), outs.len());
    if inputs.is_empty() {
        return;
    }
    let fft = fft_for(bsk.n);
    let _r = basalt_trace::region("PBS");
    emit_blind_rotate_trace(bsk, inputs.len());
    emit_tfhe(TfheStep::SampleExtract, bsk.n, inputs.len() as u64);
    let threads = rayon::current_num_threads().max(1);
    let per_thread = inputs.len().div_ceil(threads);
    let cb = core_batch_of::<T>(bsk, cfg);
    let cb = cb.min(per_thread).max(1);
    outs.par_chunks_mut(cb)
        .zip(inputs.par_chunks(cb))
        .for_each(|(o, x)| pbs_core_batch(x, tv, bsk, &fft, o));
}

/// Key-switch a batch (trace emitted on the calling thread). `tile` is an upper bound: tiles
/// are shrunk so that every rayon thread gets at least one.
pub fn keyswitch_batch<T: Torus>(
    ksk: &KeySwitchKey<T>,
    inputs: &[&[T]],
    tile: usize,
    outs: &mut [Vec<T>],
) {
    let _r = basalt_trace::region("KeySwitch");
    // Counts are u64 and split into u32 records: at set IV a u32 product wraps beyond ~52K LWEs.
    emit_keyswitch_trace(ksk.in_dim, ksk.level, ksk.out_dim, inputs.len());
    // Never fewer tiles than threads: a small batch (8 LWEs, tile 16) would otherwise key-switch
    // on one core while the other idles.
    let threads = rayon::current_num_threads().max(1);
    let tile = tile.min(inputs.len().div_ceil(threads)).max(1);
    ksk.keyswitch_batch(inputs, outs, tile);
}

impl<T: Torus> ServerKey<T> {
    /// Evaluate `lut` on every ciphertext, two-level batched on the current rayon pool.
    /// Bit-identical to calling [`ServerKey::apply_lut`] on each.
    pub fn apply_lut_batch(
        &self,
        cts: &[Ciphertext<T>],
        lut: &Lut<T>,
        cfg: &BatchConfig,
    ) -> Result<Vec<Ciphertext<T>>> {
        for c in cts {
            self.check(c)?;
            crate::keys::check_encoding(c, crate::keys::Encoding::Integer)?;
        }
        self.check_lut(lut)?;
        let inputs: Vec<&[T]> = cts.iter().map(|c| c.lwe.as_slice()).collect();
        let mut mid = vec![Vec::new(); cts.len()];
        let mut out = vec![Vec::new(); cts.len()];
        match self.params.atomic_pattern {
            AtomicPattern::KsPbs => {
                keyswitch_batch(&self.ksk, &inputs, cfg.ks_tile, &mut mid);
                if self.msnr.is_some() {
                    mid.par_iter_mut().for_each(|v| self.reduce_ms_noise(v));
                }
                let m: Vec<&[T]> = mid.iter().map(|v| v.as_slice()).collect();
                pbs_batch(&m, &lut.tv, &self.bsk, cfg, &mut out);
            }
            AtomicPattern::PbsKs => {
                let reduced: Vec<Vec<T>>;
                let inputs = if self.msnr.is_some() {
                    reduced = inputs
                        .par_iter()
                        .map(|x| {
                            let mut v = x.to_vec();
                            self.reduce_ms_noise(&mut v);
                            v
                        })
                        .collect();
                    reduced.iter().map(|v| v.as_slice()).collect()
                } else {
                    inputs
                };
                pbs_batch(&inputs, &lut.tv, &self.bsk, cfg, &mut mid);
                let m: Vec<&[T]> = mid.iter().map(|v| v.as_slice()).collect();
                keyswitch_batch(&self.ksk, &m, cfg.ks_tile, &mut out);
            }
        }
        Ok(cts
            .iter()
            .zip(out)
            .map(|(c, v)| Ciphertext {
                params_id: c.params_id,
                key_id: c.key_id,
                encoding: c.encoding,
                lwe: LweCiphertext::from_vec(v),
            })
            .collect())
    }
}
