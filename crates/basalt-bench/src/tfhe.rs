//! Benchmarks the CLI (`basalt bench pbs`) and the `pbs_bench` example call: PBS and KS+PBS
//! latency, batched/unbatched throughput on explicit rayon pools, key sizes, per-stage times and
//! (optionally) a measured failure rate beside the noise model's.
//!
//! Records are flat JSON-friendly structs (one per measurement), so they can be laid beside the
//! TFHE-rs peer bench lines.

use std::time::Instant;

use dyn_stack::PodStack;
use serde::Serialize;
use tfhe_fft::c64;

use basalt_tfhe::batch::{BatchConfig, core_batch_of, sub_batches};
use basalt_tfhe::decompose::StreamingDecomposer;
use basalt_tfhe::error::Result;
use basalt_tfhe::external_product::{mul_acc, mul_acc2};
use basalt_tfhe::fft::fft_for;
use basalt_tfhe::keys::{ClientKey, ServerKey};
use basalt_tfhe::lut::Lut;
use basalt_tfhe::noise::{estimate, failure_rate};
use basalt_tfhe::params::{AtomicPattern, TfheParams};
use basalt_tfhe::random::Csprng;
use basalt_tfhe::torus::Torus;

/// One measurement.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BenchRecord {
    pub library: String,
    pub set: String,
    /// What was measured: `pbs/latency`, `ks/latency`, `ks_pbs/latency` (single thread),
    /// `ks_pbs/throughput`, `pbs/stage` (see `stage`), `keygen`, `key_size` (see `stage`,
    /// `bytes`), `ks_pbs/failure_rate`, `noise/model`.
    pub bench: String,
    pub threads: usize,
    /// Ciphertexts per timed call (throughput runs).
    pub count: usize,
    /// `true`: two-level batched; `false`: one ciphertext at a time per thread (latencies are
    /// always `false`).
    pub batched: bool,
    pub core_batch: Option<usize>,
    pub reps: usize,
    pub median_ms: f64,
    pub min_ms: f64,
    pub per_pbs_ms: Option<f64>,
    /// Median thread CPU time of the timed calls (single-thread latencies): robust to other
    /// processes on a shared machine, where the wall time is not.
    pub thread_cpu_median_ms: Option<f64>,
    pub pbs_per_s: Option<f64>,
    pub bytes: Option<u64>,
    pub stage: Option<String>,
    pub trials: Option<u64>,
    pub failures: Option<u64>,
    pub log2_p_fail_model: Option<f64>,
    /// `failures / trials` (failure-rate records), to be read beside `log2_p_fail_model`.
    pub observed_fail_rate: Option<f64>,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub threads: Vec<usize>,
    pub counts: Vec<usize>,
    /// Repetitions of each latency measurement.
    pub latency_reps: usize,
    /// Repetitions of each throughput measurement (for counts ≤ 64; larger counts run once).
    pub throughput_reps: usize,
    pub stages: bool,
    /// Trials of encrypt → LUT → decrypt for the measured failure rate (0 = skip).
    pub failure_trials: u64,
    /// Explicit core-level batch (None = from this CPU's L2, see `batch::CacheSizes`).
    pub core_batch: Option<usize>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            threads: vec![1, 2],
            counts: vec![1, 8, 64, 512],
            latency_reps: 20,
            throughput_reps: 3,
            stages: true,
            failure_trials: 0,
            core_batch: None,
        }
    }
}

/// The CLI entry point: all measurements on the named preset (see [`basalt_tfhe::preset_names`];
/// secure sets only — use [`run_pbs_bench_named`] with `allow_insecure` for set I) with
/// default options for the given thread counts and throughput batch sizes.
pub fn run_pbs_bench(
    set_name: &str,
    threads: &[usize],
    counts: &[usize],
) -> Result<Vec<BenchRecord>> {
    let opts =
        BenchOptions { threads: threads.to_vec(), counts: counts.to_vec(), ..Default::default() };
    run_pbs_bench_named(set_name, false, &opts, &mut |_| {})
}

/// [`run_pbs_bench_with`] on a named preset; `allow_insecure` is the explicit opt-in that
/// set I (~80-bit) needs.
pub fn run_pbs_bench_named(
    set_name: &str,
    allow_insecure: bool,
    opts: &BenchOptions,
    sink: &mut dyn FnMut(&BenchRecord),
) -> Result<Vec<BenchRecord>> {
    let params = TfheParams::preset(set_name, allow_insecure)?;
    run_pbs_bench_with(&params, opts, sink)
}

/// All measurements; `sink` sees each record as soon as it is made (for streaming JSON lines).
pub fn run_pbs_bench_with(
    params: &TfheParams,
    opts: &BenchOptions,
    sink: &mut dyn FnMut(&BenchRecord),
) -> Result<Vec<BenchRecord>> {
    match params.torus_bits {
        32 => run::<u32>(params, opts, sink),
        _ => run::<u64>(params, opts, sink),
    }
}

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    (v[v.len() / 2], v[0])
}

fn time_ms(reps: usize, f: impl FnMut()) -> (f64, f64) {
    let (med, min, _) = time_ms_cpu(reps, f);
    (med, min)
}

/// Median and minimum wall time, and median thread CPU time, of `reps` calls after a warm-up.
fn time_ms_cpu(reps: usize, mut f: impl FnMut()) -> (f64, f64, f64) {
    f(); // warm-up
    let (wall, cpu): (Vec<f64>, Vec<f64>) = (0..reps.max(1))
        .map(|_| {
            let (c, t) = (crate::harness::thread_cpu_ms(), Instant::now());
            f();
            (t.elapsed().as_secs_f64() * 1e3, crate::harness::thread_cpu_ms() - c)
        })
        .unzip();
    let (med, min) = stats(wall);
    (med, min, stats(cpu).0)
}

fn run<T: Torus>(
    params: &TfheParams,
    opts: &BenchOptions,
    sink: &mut dyn FnMut(&BenchRecord),
) -> Result<Vec<BenchRecord>> {
    let mut out = Vec::new();
    let base = BenchRecord {
        library: "basalt-tfhe".into(),
        set: params.name.clone(),
        threads: 1,
        count: 1,
        ..Default::default()
    };
    let mut push = |r: BenchRecord, out: &mut Vec<BenchRecord>| {
        sink(&r);
        out.push(r);
    };
    let model = estimate(params);
    push(
        BenchRecord {
            bench: "noise/model".into(),
            log2_p_fail_model: Some(model.log2_p_fail),
            ..base.clone()
        },
        &mut out,
    );
    let mut rng = Csprng::from_os();
    let ck = ClientKey::<T>::with_rng(params, &mut rng)?;
    let t = Instant::now();
    let sk = ck.server_key_with(&mut rng);
    let ms = t.elapsed().as_secs_f64() * 1e3;
    push(
        BenchRecord { bench: "keygen".into(), median_ms: ms, min_ms: ms, reps: 1, ..base.clone() },
        &mut out,
    );
    for (stage, bytes) in [("bsk_fourier", sk.bsk().size_bytes()), ("ksk", sk.ksk().size_bytes())] {
        push(
            BenchRecord {
                bench: "key_size".into(),
                stage: Some(stage.into()),
                bytes: Some(bytes as u64),
                ..base.clone()
            },
            &mut out,
        );
    }
    let p = params.plaintext_modulus();
    let lut = Lut::from_fn(params, |x| (x + 1) % p);
    let ct = ck.encrypt_with(1, &mut rng)?;
    // Single-thread latencies (PBS alone, KS alone, KS+PBS in the set's order).
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("rayon pool");
    let small = match params.atomic_pattern {
        AtomicPattern::KsPbs => sk.keyswitch(ct.lwe()),
        AtomicPattern::PbsKs => ct.lwe().clone(),
    };
    let big = sk.bootstrap(&small, &lut);
    let reps = opts.latency_reps;
    let (med, min, cpu) = one.install(|| time_ms_cpu(reps, || drop(sk.bootstrap(&small, &lut))));
    push(
        BenchRecord {
            bench: "pbs/latency".into(),
            reps,
            median_ms: med,
            min_ms: min,
            thread_cpu_median_ms: Some(cpu),
            per_pbs_ms: Some(med),
            pbs_per_s: Some(1e3 / med),
            ..base.clone()
        },
        &mut out,
    );
    let (med, min, cpu) = one.install(|| time_ms_cpu(reps, || drop(sk.keyswitch(&big))));
    push(
        BenchRecord {
            bench: "ks/latency".into(),
            reps,
            median_ms: med,
            min_ms: min,
            thread_cpu_median_ms: Some(cpu),
            per_pbs_ms: Some(med),
            pbs_per_s: Some(1e3 / med),
            ..base.clone()
        },
        &mut out,
    );
    let (med, min, cpu) =
        one.install(|| time_ms_cpu(reps, || drop(sk.apply_lut(&ct, &lut).expect("valid"))));
    push(
        BenchRecord {
            bench: "ks_pbs/latency".into(),
            reps,
            median_ms: med,
            min_ms: min,
            thread_cpu_median_ms: Some(cpu),
            per_pbs_ms: Some(med),
            pbs_per_s: Some(1e3 / med),
            ..base.clone()
        },
        &mut out,
    );
    if opts.stages {
        for r in stage_times(&sk) {
            push(
                BenchRecord { bench: "pbs/stage".into(), reps, ..base.clone().merge(r) },
                &mut out,
            );
        }
    }
    // Throughput: KS+PBS of `count` ciphertexts on `threads` cores, unbatched vs batched.
    let cts: Vec<_> = (0..opts.counts.iter().copied().max().unwrap_or(1))
        .map(|i| ck.encrypt_with(i as u64 % p, &mut rng))
        .collect::<Result<_>>()?;
    for &th in opts.threads.iter().filter(|&&t| t > 0) {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(th).build().expect("rayon pool");
        for &count in opts.counts.iter().filter(|&&c| c > 0) {
            for batched in [false, true] {
                let cfg = if batched {
                    BatchConfig { core_batch: opts.core_batch, ..BatchConfig::default() }
                } else {
                    BatchConfig::unbatched()
                };
                let cb = core_batch_of::<T>(sk.bsk(), &cfg);
                let r = if count <= 64 { opts.throughput_reps } else { 1 };
                let batch = &cts[..count];
                let (med, min) = pool.install(|| {
                    time_ms(r, || drop(sk.apply_lut_batch(batch, &lut, &cfg).expect("valid")))
                });
                push(
                    BenchRecord {
                        bench: "ks_pbs/throughput".into(),
                        threads: th,
                        count,
                        batched,
                        // The largest sub-batch the schedule actually runs.
                        core_batch: sub_batches(count, th, cb).iter().map(|r| r.len()).max(),
                        reps: r,
                        median_ms: med,
                        min_ms: min,
                        per_pbs_ms: Some(med / count as f64),
                        pbs_per_s: Some(count as f64 * 1e3 / med),
                        ..base.clone()
                    },
                    &mut out,
                );
            }
        }
    }
    if opts.failure_trials > 0 {
        let r = failure_rate(&ck, &sk, opts.failure_trials, &mut rng)?;
        push(
            BenchRecord {
                bench: "ks_pbs/failure_rate".into(),
                threads: rayon::current_num_threads(),
                trials: Some(opts.failure_trials),
                failures: Some(r),
                observed_fail_rate: Some(r as f64 / opts.failure_trials as f64),
                log2_p_fail_model: Some(model.log2_p_fail),
                ..base.clone()
            },
            &mut out,
        );
    }
    Ok(out)
}

impl BenchRecord {
    fn merge(mut self, o: BenchRecord) -> BenchRecord {
        self.stage = o.stage;
        self.median_ms = o.median_ms;
        self.min_ms = o.min_ms;
        self
    }
}

/// Per-stage time of one PBS, measured stage by stage on the real kernels and scaled to the
/// `n` blind-rotation iterations (ms per PBS): rotation, decomposition and forward FFT (one
/// fused pass), multiply-add, IFFT (with its time-domain accumulation), and key switching.
pub fn stage_times<T: Torus>(sk: &ServerKey<T>) -> Vec<BenchRecord> {
    let bsk = sk.bsk();
    let (k, n, l) = (bsk.glwe_dimension(), bsk.poly_size(), bsk.level());
    let rows = (k + 1) * l;
    let m = n / 2;
    let fft = fft_for(n);
    let mut mem = fft.new_scratch();
    let stack = PodStack::new(&mut mem);
    let mut rng = Csprng::from_seed(9);
    let mut acc = vec![T::ZERO; (k + 1) * n];
    rng.fill_uniform(&mut acc);
    let mut fdig = vec![c64::default(); rows * m];
    let mut facc = vec![c64::default(); m];
    let dec = StreamingDecomposer::new(bsk.base_log(), l);
    let iters = bsk.lwe_dimension();
    let reps = 200;
    let per_pbs = |(med, min): (f64, f64)| {
        (med / reps as f64 * iters as f64, min / reps as f64 * iters as f64)
    };
    let mut recs = Vec::new();
    let mut rec = |name: &str, t: (f64, f64)| {
        recs.push(BenchRecord {
            stage: Some(name.into()),
            median_ms: t.0,
            min_ms: t.1,
            ..Default::default()
        })
    };
    rec(
        "rotate_decompose_fft",
        per_pbs(time_ms(5, || {
            for r0 in 0..reps {
                for c in 0..=k {
                    for j in 0..l {
                        let r = c * l + j;
                        fft.forward_digits_rotated(
                            &mut fdig[r * m..(r + 1) * m],
                            &acc[c * n..(c + 1) * n],
                            (r0 * 37) % (2 * n),
                            dec.digit_level::<T>(j + 1),
                            stack,
                        );
                    }
                }
            }
        })),
    );
    let g = bsk.ggsw(0);
    rec(
        "mult_add",
        per_pbs(time_ms(5, || {
            for _ in 0..reps {
                for c in 0..=k {
                    let gg = |r: usize| &g[(r * (k + 1) + c) * m..(r * (k + 1) + c + 1) * m];
                    let f = |r: usize| &fdig[r * m..(r + 1) * m];
                    let mut r = 0;
                    while r + 1 < rows {
                        mul_acc2(
                            &mut facc,
                            [(f(r), gg(r)), (f(r + 1), gg(r + 1))],
                            r == 0,
                            [&[]; 2],
                        );
                        r += 2;
                    }
                    if r < rows {
                        mul_acc(&mut facc, f(r), gg(r), r == 0, &[]);
                    }
                }
            }
        })),
    );
    rec(
        "ifft_accumulate",
        per_pbs(time_ms(5, || {
            for _ in 0..reps {
                for c in 0..=k {
                    facc.copy_from_slice(&fdig[..m]);
                    fft.backward_add(&mut acc[c * n..(c + 1) * n], &mut facc, stack);
                }
            }
        })),
    );
    let mut input = vec![T::ZERO; sk.ksk().input_dimension() + 1];
    rng.fill_uniform(&mut input);
    let mut o = vec![T::ZERO; sk.ksk().output_dimension() + 1];
    rec("keyswitch", time_ms(5, || sk.ksk().keyswitch(&input, &mut o)));
    recs
}
