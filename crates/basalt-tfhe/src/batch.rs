//! Strix's two-level ciphertext batching as a CPU schedule.
//!
//! # Algorithm
//! * Core level: a sub-batch of `B` ciphertexts walks through the blind rotation *together*:
//!   iteration `i` applies `bsk[i]` to all `B` accumulators before moving to `bsk[i+1]`, so each
//!   GGSW is fetched from memory once per sub-batch and then reused from cache (temporal reuse).
//!   `B` is chosen so that the `B` accumulators, the shared external-product scratch and one
//!   Fourier GGSW fit in the L2 of the CPU it runs on (read at run time, [`CacheSizes`]), or
//!   set explicitly.
//! * Device level: sub-batches are spread over the cores with rayon; all cores stream the same
//!   key (spatial reuse in the shared L3).
//!
//! Scheduling only: every accumulator sees exactly the same operations as in sequential PBS, so
//! results are bit-identical. Key switching of a batch is the tiled matrix–matrix
//! product of [`KeySwitchKey::keyswitch_batch`].
//!
//! # Source
//! Strix §III (two-level batching, Fig. 3), §IV-A (epochs = device × core batch).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::blind_rotate::{init_accumulator, shape_of};
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
use crate::trace_shape::{PbsBatchPlan, PbsShape, emit_keyswitch_batch};

/// How a batch is scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchConfig {
    /// Core-level batch size; `None` = derived from `cache_bytes`. `Some(1)` = unbatched
    /// (each ciphertext runs its whole blind rotation alone, TFHE-rs style).
    pub core_batch: Option<usize>,
    /// Per-core cache budget used to size the core-level batch: by default the L2 of the CPU
    /// this runs on ([`CacheSizes::of_this_cpu`]).
    pub cache_bytes: usize,
    /// Fallback budget (by default a core's share of the last-level cache) when fewer than 4
    /// ciphertexts fit in `cache_bytes` (set IV: one Fourier GGSW alone is 1 MiB).
    pub fallback_cache_bytes: usize,
    /// Ciphertexts per key-switching tile.
    pub ks_tile: usize,
}

impl Default for BatchConfig {
    fn default() -> Self {
        let cache = CacheSizes::of_this_cpu();
        BatchConfig {
            core_batch: None,
            cache_bytes: cache.l2,
            fallback_cache_bytes: cache.llc_share,
            ks_tile: 16,
        }
    }
}

impl BatchConfig {
    pub fn unbatched() -> Self {
        BatchConfig { core_batch: Some(1), ..Self::default() }
    }
}

/// Per-core cache sizes of the CPU this process runs on, as the batch sizing uses them.
///
/// The core-level batch only pays off while its accumulators and the shared GGSW stay in the
/// core's own cache, and that cache differs a lot between CPUs (512 KiB of L2 on AMD Zen 1–3,
/// 1 MiB on Zen 4, 2 MiB on Intel server cores): a size fixed for one CPU overflows another's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheSizes {
    /// L2 (unified or data) available to one hardware thread, in bytes: the cache's size over
    /// the number of CPUs sharing it (two with SMT).
    pub l2: usize,
    /// One hardware thread's share of the last-level cache, in bytes.
    pub llc_share: usize,
    /// Whether the figures were read from the system (`false`: the fallbacks below).
    pub detected: bool,
}

impl CacheSizes {
    /// L2 assumed when the system does not say: the smallest per-core L2 of current x86
    /// server cores (AMD Zen 1–3), so that a batch sized from it fits wherever it runs.
    pub const FALLBACK_L2: usize = 512 << 10;
    /// Last-level-cache share assumed when the system does not say.
    pub const FALLBACK_LLC_SHARE: usize = 4 << 20;

    /// The sizes of this CPU, read once (Linux sysfs, CPU 0), else the fallbacks.
    pub fn of_this_cpu() -> CacheSizes {
        static SIZES: OnceLock<CacheSizes> = OnceLock::new();
        *SIZES.get_or_init(|| {
            CacheSizes::from_sysfs(Path::new("/sys/devices/system/cpu/cpu0/cache")).unwrap_or(
                CacheSizes {
                    l2: Self::FALLBACK_L2,
                    llc_share: Self::FALLBACK_LLC_SHARE,
                    detected: false,
                },
            )
        })
    }

    /// Read the `index*/{level,type,size,shared_cpu_list}` entries of a sysfs cache directory.
    /// `None` when there is no usable L2 entry; a missing last level falls back alone.
    pub fn from_sysfs(dir: &Path) -> Option<CacheSizes> {
        let read = |p: PathBuf| std::fs::read_to_string(p).ok().map(|s| s.trim().to_string());
        let (mut l2, mut llc) = (None, None::<(u32, usize)>);
        for e in std::fs::read_dir(dir).ok()?.flatten() {
            let d = e.path();
            if !d.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("index")) {
                continue;
            }
            let (Some(level), Some(kind), Some(size)) =
                (read(d.join("level")), read(d.join("type")), read(d.join("size")))
            else {
                continue;
            };
            if kind == "Instruction" {
                continue;
            }
            let (Ok(level), Some(size)) = (level.parse::<u32>(), parse_cache_size(&size)) else {
                continue;
            };
            let sharers = read(d.join("shared_cpu_list")).and_then(|l| count_cpus(&l)).unwrap_or(1);
            let share = size / sharers.max(1);
            if level == 2 {
                l2 = Some(share);
            }
            if level >= 3 && llc.is_none_or(|(l, _)| level > l) {
                llc = Some((level, share));
            }
        }
        let l2 = l2.filter(|&b| b > 0)?;
        Some(CacheSizes {
            l2,
            llc_share: llc.map_or(Self::FALLBACK_LLC_SHARE, |(_, b)| b.max(l2)),
            detected: true,
        })
    }
}

/// `"512K"`, `"32768K"`, `"2M"`, `"1G"` or a plain byte count, as sysfs writes cache sizes.
fn parse_cache_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, mult) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1 << 10),
        b'M' | b'm' => (&s[..s.len() - 1], 1 << 20),
        b'G' | b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<usize>().ok()?.checked_mul(mult)
}

/// Number of CPUs in a sysfs CPU list such as `"0-1"` or `"0,2,4-7"`.
fn count_cpus(list: &str) -> Option<usize> {
    let mut n = 0usize;
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        n += match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.trim().parse::<usize>().ok()?, b.trim().parse::<usize>().ok()?);
                b.checked_sub(a)? + 1
            }
            None => {
                part.trim().parse::<usize>().ok()?;
                1
            }
        };
    }
    (n > 0).then_some(n)
}

/// Core-level batch that fits `cache_bytes`: one Fourier GGSW + shared scratch + `B`
/// accumulators (and their mod-switched inputs).
///
/// The whole cache is the budget, not a safety fraction of it: past the knee the accumulators
/// spill to L3, which costs little next to streaming the key from DRAM, while a smaller `B`
/// streams the key more often (on the 2+2-bit set with a 512 KiB L2 this gives `B` = 10;
/// `pbs_batch_probe` in `basalt-bench` sweeps `B` to check where the knee is on a machine).
pub fn core_batch_for_cache<T: Torus>(bsk: &FourierBsk, cache_bytes: usize) -> usize {
    PbsShape::of(bsk).core_batch_for_cache(size_of::<T>(), cache_bytes)
}

/// The core-level batch a config asks for: explicit, else from L2, else from the L3 share.
pub fn core_batch_of<T: Torus>(bsk: &FourierBsk, cfg: &BatchConfig) -> usize {
    PbsShape::of(bsk).core_batch(size_of::<T>(), cfg)
}

/// Split `count` ciphertexts into core-level sub-batches of at most `max` each for `threads`
/// threads: the ciphertexts are shared out evenly between the threads, and every share into
/// the same number of sub-batches, so that all sizes differ by at most one. Rayon splits the
/// list in halves, so on two threads each starts with exactly its share; a plain
/// `chunks(max)` leaves one thread a whole sub-batch more (64 ciphertexts in sub-batches of 6
/// on 2 threads: 36 against 28).
pub fn sub_batches(count: usize, threads: usize, max: usize) -> Vec<Range<usize>> {
    let threads = threads.max(1);
    let parts = count.div_ceil(threads).div_ceil(max.max(1));
    let mut out = Vec::with_capacity(threads * parts);
    let mut start = 0;
    for t in 0..threads {
        let share = count / threads + usize::from(t < count % threads);
        for p in 0..parts {
            let len = share / parts + usize::from(p < share % parts);
            if len > 0 {
                out.push(start..start + len);
                start += len;
            }
        }
    }
    out
}

/// Blind-rotate a core-level sub-batch iteration-major: iteration `i` applies `bsk[i]` to
/// every accumulator before `bsk[i+1]` is touched. Returns the accumulators, `(k+1)·N` words
/// per input, in input order (each is what [`blind_rotate`](crate::blind_rotate::blind_rotate)
/// leaves for that input alone, bit for bit).
pub fn blind_rotate_batch<T: Torus>(
    inputs: &[&[T]],
    tv: &[T],
    bsk: &FourierBsk,
    fft: &NegacyclicFft,
) -> Vec<T> {
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
    accs
}

/// Two-level batched blind rotation of many LWEs (under the bsk's key) with the same test
/// vector on the current rayon pool: the inputs are cut into core-level sub-batches (the
/// [`PbsBatchPlan`] that `pbs_batch` also traces), each runs [`blind_rotate_batch`] on one
/// thread, and `extract` reads every accumulator into that input's `per_input` consecutive
/// outputs (`outs` holds `per_input` per input). The ordinary PBS extracts one LWE, the many-LUT PBS one per table.
pub(crate) fn blind_rotate_batched<T: Torus>(
    inputs: &[&[T]],
    tv: &[T],
    bsk: &FourierBsk,
    cfg: &BatchConfig,
    outs: &mut [Vec<T>],
    per_input: usize,
    extract: impl Fn(&[T], &mut [Vec<T>]) + Sync,
) {
    assert_eq!(inputs.len() * per_input, outs.len());
    if inputs.is_empty() {
        return;
    }
    let threads = rayon::current_num_threads().max(1);
    let plan = PbsBatchPlan::new(PbsShape::of(bsk), size_of::<T>(), inputs.len(), cfg, threads);
    blind_rotate_over(inputs, tv, bsk, plan.sub_batches, outs, per_input, extract);
}

/// [`blind_rotate_batched`] over given sub-batches (`ranges` cover `inputs` in order).
fn blind_rotate_over<T: Torus>(
    inputs: &[&[T]],
    tv: &[T],
    bsk: &FourierBsk,
    ranges: Vec<Range<usize>>,
    outs: &mut [Vec<T>],
    per_input: usize,
    extract: impl Fn(&[T], &mut [Vec<T>]) + Sync,
) {
    let fft = fft_for(bsk.n);
    let glwe = (bsk.k + 1) * bsk.n;
    // Disjoint output chunks, one per sub-batch, in order.
    let mut chunks = Vec::with_capacity(ranges.len());
    let mut rest = outs;
    for r in &ranges {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(r.len() * per_input);
        chunks.push((head, &inputs[r.clone()]));
        rest = tail;
    }
    chunks.into_par_iter().for_each(|(o, x)| {
        let accs = blind_rotate_batch(x, tv, bsk, &fft);
        for (acc, o) in accs.chunks(glwe).zip(o.chunks_mut(per_input)) {
            extract(acc, o);
        }
    });
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
    // The schedule is decided before any data is touched, and its trace is emitted from it
    // (the same plan a shape-only recording builds from the parameters, `trace_shape`).
    let threads = rayon::current_num_threads().max(1);
    let plan = PbsBatchPlan::new(PbsShape::of(bsk), size_of::<T>(), inputs.len(), cfg, threads);
    plan.emit();
    let (k, n) = (bsk.k, bsk.n);
    blind_rotate_over(inputs, tv, bsk, plan.sub_batches, outs, 1, |acc, o| {
        let out = &mut o[0];
        out.clear();
        out.resize(k * n + 1, T::ZERO);
        sample_extract(acc, k, n, out);
    });
}

/// Key-switch a batch (trace emitted on the calling thread). `tile` is an upper bound: tiles
/// are shrunk so that every rayon thread gets at least one.
pub fn keyswitch_batch<T: Torus>(
    ksk: &KeySwitchKey<T>,
    inputs: &[&[T]],
    tile: usize,
    outs: &mut [Vec<T>],
) {
    // Counts are u64 and split into u32 records: at set IV a u32 product wraps beyond ~52K LWEs.
    emit_keyswitch_batch(ksk.in_dim, ksk.level, ksk.out_dim, inputs.len());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_and_cpu_lists_parse_as_sysfs_writes_them() {
        assert_eq!(parse_cache_size("512K"), Some(512 << 10));
        assert_eq!(parse_cache_size("32768K"), Some(32 << 20));
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("1G"), Some(1 << 30));
        assert_eq!(parse_cache_size("65536"), Some(65536));
        assert_eq!(parse_cache_size("K"), None);
        assert_eq!(parse_cache_size("lots"), None);
        assert_eq!(count_cpus("0"), Some(1));
        assert_eq!(count_cpus("0-1"), Some(2));
        assert_eq!(count_cpus("0,2,4-7\n"), Some(6));
        assert_eq!(count_cpus("3-1"), None);
        assert_eq!(count_cpus(""), None);
    }

    /// A fake sysfs tree: an SMT pair sharing a 2 MiB L2 and 8 CPUs sharing a 32 MiB L3.
    #[test]
    fn sysfs_tree_gives_each_hardware_thread_its_share() {
        let dir = std::env::temp_dir().join(format!("basalt-cache-{}", std::process::id()));
        let entries = [
            ("index0", "1", "Data", "48K", "0,8"),
            ("index1", "1", "Instruction", "32K", "0,8"),
            ("index2", "2", "Unified", "2048K", "0,8"),
            ("index3", "3", "Unified", "32768K", "0-7"),
        ];
        for (name, level, kind, size, cpus) in entries {
            let d = dir.join(name);
            std::fs::create_dir_all(&d).unwrap();
            for (f, v) in
                [("level", level), ("type", kind), ("size", size), ("shared_cpu_list", cpus)]
            {
                std::fs::write(d.join(f), format!("{v}\n")).unwrap();
            }
        }
        let got = CacheSizes::from_sysfs(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(got, Some(CacheSizes { l2: 1 << 20, llc_share: 4 << 20, detected: true }));
        assert_eq!(CacheSizes::from_sysfs(Path::new("/nonexistent/cache")), None);
    }

    #[test]
    fn sub_batches_cover_the_batch_evenly_per_thread() {
        for count in 0..80 {
            for threads in 1..5 {
                for max in 1..20 {
                    let r = sub_batches(count, threads, max);
                    // Contiguous, in order, covering 0..count, none empty, none above max.
                    let mut next = 0;
                    for x in &r {
                        assert_eq!(x.start, next);
                        assert!(!x.is_empty() && x.len() <= max, "{count} {threads} {max}");
                        next = x.end;
                    }
                    assert_eq!(next, count);
                    // Sizes differ by at most one.
                    let lens = r.iter().map(|x| x.len());
                    if let (Some(lo), Some(hi)) = (lens.clone().min(), lens.max()) {
                        assert!(hi - lo <= 1, "{count} {threads} {max}: {r:?}");
                    }
                }
            }
        }
        let lens = |r: Vec<Range<usize>>| r.iter().map(|x| x.len()).collect::<Vec<_>>();
        assert_eq!(lens(sub_batches(64, 2, 6)), [6, 6, 5, 5, 5, 5, 6, 6, 5, 5, 5, 5]);
        assert_eq!(lens(sub_batches(13, 2, 6)), [4, 3, 3, 3]);
        assert_eq!(sub_batches(64, 2, 36), [0..32, 32..64]);
    }
}
