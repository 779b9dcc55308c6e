//! The HE-MxV benchmark suite: the seven fully connected layers of the HE-MxV paper
//! (Table IV) on its parameter sets A/B/C, encrypted for real, checked against a plain f64
//! matrix-vector product, timed and counted.
//!
//! Each record runs: key generation for the rotations the plan needs, encryption of the
//! column blocks of a random input, [`MxvHybrid::evaluate`] under a kernel recorder (timed),
//! decryption and comparison with `M·x` in f64. Weights are uniform in `±1/√n` and inputs in
//! `±1`, so outputs are `O(1)`.
//!
//! # Source
//! HE-MxV (probably Yang et al., FPT 2022), Tables II and IV; presets `MXV_SET_{A,B,C}`.

use std::sync::Arc;
use std::time::Instant;

use basalt_ckks::{Ciphertext, Evaluator, Parameters};
use basalt_trace::Trace;
use serde::{Deserialize, Serialize};

use crate::accounting::{OpCounts, measure};
use crate::error::{CircuitError, Result};
use crate::lintrans::diagonals::dense_matvec;
use crate::lintrans::mxv_hybrid::MxvHybrid;
use crate::lintrans::{Plan, Strategy};
use crate::testing::{Ctx, precision_bits_real, random_matrix, random_values};

/// HE-MxV parameter set (Table II).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MxvSet {
    A,
    B,
    C,
}

impl MxvSet {
    /// Preset alias in `data/params/ckks`.
    pub fn preset(self) -> &'static str {
        match self {
            MxvSet::A => "MXV_SET_A",
            MxvSet::B => "MXV_SET_B",
            MxvSet::C => "MXV_SET_C",
        }
    }
    /// Parse `A`/`B`/`C` or `set-a` etc.
    pub fn parse(s: &str) -> Option<MxvSet> {
        match s
            .trim()
            .trim_start_matches("set-")
            .trim_start_matches("set_")
            .to_ascii_uppercase()
            .as_str()
        {
            "A" => Some(MxvSet::A),
            "B" => Some(MxvSet::B),
            "C" => Some(MxvSet::C),
            _ => None,
        }
    }
}

/// One fully connected layer `m×n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layer {
    pub name: &'static str,
    pub m: usize,
    pub n: usize,
}

/// The seven layers of HE-MxV Table IV.
pub const LAYERS: [Layer; 7] = [
    Layer { name: "Alex-6", m: 4096, n: 9216 },
    Layer { name: "Alex-7", m: 4096, n: 4096 },
    Layer { name: "Alex-8", m: 1000, n: 4096 },
    Layer { name: "VGG-6", m: 4096, n: 25088 },
    Layer { name: "RNNT-LSTM", m: 1024, n: 2048 },
    Layer { name: "RNNT-FCO", m: 512, n: 1344 },
    Layer { name: "DS2-GRU", m: 1600, n: 1600 },
];

/// Look a layer up by name (case-insensitive).
pub fn layer(name: &str) -> Option<Layer> {
    LAYERS.iter().copied().find(|l| l.name.eq_ignore_ascii_case(name))
}

/// One measured run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MxvRecord {
    pub layer: String,
    pub set: String,
    pub m: usize,
    pub n: usize,
    pub log_n: u32,
    pub slots: usize,
    pub level: usize,
    pub input_cts: usize,
    pub output_cts: usize,
    pub plaintexts: usize,
    pub rotation_keys: usize,
    /// Bytes of rotation-key material held (seeded keys on Set-C).
    pub key_bytes: u64,
    pub plan: Plan,
    pub threads: usize,
    pub keygen_s: f64,
    pub eval_s: f64,
    /// CPU time of the whole process (all worker threads) during the evaluation: robust to
    /// other processes on a shared machine; `eval_s × threads` at perfect scaling.
    pub eval_cpu_s: f64,
    pub precision_bits: f64,
    pub max_abs_err: f64,
    pub measured: OpCounts,
    pub predicted: OpCounts,
}

/// CPU time consumed by all threads of this process, in seconds.
pub fn process_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec and CLOCK_PROCESS_CPUTIME_ID is supported on
    // Linux; on failure the call leaves `ts` zeroed and we report 0.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Run one layer on `params` (full slots, top level) with `strategy`.
///
/// # Errors
/// Scheme and circuit errors (e.g. a layer with more padded rows than slots per block is
/// blocked automatically; a parameter set with no level left is refused).
pub fn mxv_run(
    params: &Parameters,
    set: &str,
    layer: Layer,
    strategy: Strategy,
    seed: u64,
) -> Result<MxvRecord> {
    let slots = params.max_slots();
    let level = params.max_level();
    let a = 1.0 / (layer.n as f64).sqrt();
    let w = Arc::new(random_matrix(layer.m, layer.n, a, seed));
    let x: Vec<f64> = random_values(layer.n, seed + 1, true).iter().map(|z| z.re).collect();
    let mxv = MxvHybrid::new(params, Arc::clone(&w), slots, strategy, level)?;
    let t0 = Instant::now();
    let rots = mxv.rotations();
    // Set-C keys (dnum = 14, N = 2^15) are 110 MB each: keep them seeded.
    let ctx = Ctx::with_keys(params, &rots, params.log_n() >= 15)?;
    let keygen_s = t0.elapsed().as_secs_f64();
    let inputs = mxv
        .input_vectors(&x)?
        .iter()
        .map(|v| ctx.encrypt_real(v, slots, level))
        .collect::<Result<Vec<_>>>()?;
    let (t1, c1) = (Instant::now(), process_cpu_s());
    let (out, measured) = measure(params.n(), || mxv.evaluate(&ctx.eval, &inputs));
    let eval_s = t1.elapsed().as_secs_f64();
    let eval_cpu_s = process_cpu_s() - c1;
    let out = out?;
    let mut have = Vec::with_capacity(layer.m);
    for ct in &out {
        let d = ctx.decrypt(ct)?;
        have.extend(d.iter().take(slots).map(|z| z.re));
    }
    have.truncate(layer.m);
    let want = dense_matvec(&w, &x);
    let max_abs_err = want.iter().zip(&have).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    let plan = out.first().map(|_| mxv.plan()).ok_or(CircuitError::EmptyMatrix)?;
    Ok(MxvRecord {
        layer: layer.name.to_string(),
        set: set.to_string(),
        m: layer.m,
        n: layer.n,
        log_n: params.log_n(),
        slots,
        level,
        input_cts: mxv.input_blocks(),
        output_cts: mxv.output_blocks(),
        plaintexts: mxv.plaintexts(),
        rotation_keys: rots.len(),
        key_bytes: ctx.eval.keys().galois.values().map(|g| g.key.size_bytes() as u64).sum(),
        plan,
        threads: rayon::current_num_threads(),
        keygen_s,
        eval_s,
        eval_cpu_s,
        precision_bits: precision_bits_real(&want, &have),
        max_abs_err,
        measured,
        predicted: mxv.predicted_cost(params),
    })
}

/// Kernel trace of one layer in trace mode: symbolic inputs, no arithmetic, the same kernels a
/// real run records (for `basalt trace` / the simulator). `eval` must hold the keys of
/// [`MxvHybrid::rotations`] (real keys: `basalt-ckks` has no symbolic keys yet).
///
/// # Errors
/// As [`mxv_run`].
pub fn mxv_trace(eval: &Evaluator, mxv: &MxvHybrid) -> Result<Trace> {
    let params = eval.params();
    let level = mxv.level();
    let inputs = (0..mxv.input_blocks())
        .map(|_| {
            let mut ct = Ciphertext::symbolic(params, level)?;
            ct.set_slots(mxv.slots());
            Ok(ct)
        })
        .collect::<Result<Vec<_>>>()?;
    let (out, trace) = basalt_trace::record(|| mxv.evaluate(eval, &inputs));
    out?;
    Ok(trace)
}

/// The default CPU strategy: the cheapest plan with at most 64 live partial sums.
pub const DEFAULT_STRATEGY: Strategy = Strategy::Auto { max_partials: 64 };

/// Run `layers` on parameter set `set` with `threads` worker threads (0: rayon's default).
///
/// # Errors
/// Preset loading, thread-pool creation, and the errors of [`mxv_run`].
pub fn mxv_suite(set: MxvSet, layers: &[Layer], threads: usize) -> Result<Vec<MxvRecord>> {
    mxv_suite_with(set, layers, threads, DEFAULT_STRATEGY)
}

/// [`mxv_suite`] with an explicit strategy.
///
/// # Errors
/// As [`mxv_suite`].
pub fn mxv_suite_with(
    set: MxvSet,
    layers: &[Layer],
    threads: usize,
    strategy: Strategy,
) -> Result<Vec<MxvRecord>> {
    let params = Parameters::preset(set.preset()).map_err(basalt_ckks::CkksError::from)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CircuitError::Invalid(format!("thread pool: {e}")))?;
    pool.install(|| {
        layers
            .iter()
            .enumerate()
            .map(|(i, &l)| mxv_run(&params, set.preset(), l, strategy, 1000 + i as u64))
            .collect()
    })
}
