//! CKKS bootstrapping: one set of keys, every thread count timed interleaved, the output
//! checked bit for bit across thread counts, and the peak resident memory of the keys plus the
//! bootstrap.
//!
//! Memory: the process's peak resident set is reset (Linux `clear_refs`) before the keys are
//! generated, and read after the timed bootstraps: `peak_rss_bytes` is what a process that
//! generates these keys and bootstraps needs, with the binary and its tables
//! (`rss_before_keys_bytes`) included. Full and seeded keys are run one after the other, each
//! with its own reset, the previous keys dropped first.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use basalt_circuits::bootstrap::config::for_preset;
use basalt_circuits::bootstrap::{Bootstrapper, LevelBudget, StageTimes};
use basalt_circuits::testing::random_values;
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{Encoder, Evaluator, KeyGenerator, Parameters, PrecisionStats};
use serde::Serialize;

use crate::harness::{
    Pools, Stats, Timing, measure_interleaved, peak_rss_bytes, reset_peak_rss, rss_bytes,
};

/// What to run.
#[derive(Clone, Debug)]
pub struct BootstrapBenchConfig {
    pub preset: String,
    /// log2 of the slot count (default: fully packed).
    pub log_slots: Option<u32>,
    /// Timed bootstraps per thread count (after one warm-up each).
    pub reps: usize,
    /// Key forms to run, in order: `false` full, `true` seeded.
    pub seeded: Vec<bool>,
    /// Run the preset's chain on a ring of 2^`log_n` instead (below the preset's ring that is
    /// insecure, allowed here for quick runs of the benchmark's machinery only; the records
    /// name the ring).
    pub log_n: Option<u32>,
    /// Allow a preset estimated below 128-bit security.
    pub allow_insecure: bool,
    /// Generate keys even when their estimate exceeds the share of available memory that key
    /// generation may take.
    pub force: bool,
}

/// One thread count of one key form.
#[derive(Clone, Debug, Serialize)]
pub struct BootstrapRecord {
    pub library: String,
    pub bench: String,
    pub preset: String,
    pub log_n: u32,
    pub slots: usize,
    pub threads: usize,
    pub seeded: bool,
    pub levels: LevelBudget,
    pub input_level: usize,
    pub rotation_keys: usize,
    /// Bytes of the evaluation keys as generated (seeded or full).
    pub key_bytes: u64,
    pub keygen_ms: f64,
    pub setup_ms: f64,
    #[serde(flatten)]
    pub stats: Stats,
    /// Per-stage times of the median bootstrap at this thread count.
    pub stages: StageTimes,
    pub speedup: Option<f64>,
    pub efficiency: Option<f64>,
    /// Every thread count produced the same ciphertext, bit for bit.
    pub identical_across_threads: bool,
    /// Complex (L2) precision: mean of the per-slot bits and the worst slot; per component in
    /// `precision` (compare with Lattigo on `precision.mean.real` / `precision.min.real`).
    pub precision_mean_bits: f64,
    pub precision_min_bits: f64,
    pub precision: PrecisionStats,
    /// Resident set before the keys were generated.
    pub rss_before_keys_bytes: u64,
    /// Peak resident set over key generation and every timed bootstrap of this key form.
    pub peak_rss_bytes: u64,
    /// Whether the peak could be reset before this key form (false: it is the process's
    /// peak so far).
    pub peak_rss_reset: bool,
}

/// Run `cfg` in every pool of `pools`, once per key form.
///
/// # Errors
/// Unknown preset, a preset without a bootstrapping circuit, scheme errors.
pub fn run(
    cfg: &BootstrapBenchConfig,
    pools: &Pools,
    progress: &dyn basalt_ckks::progress::Progress,
    sink: &mut dyn FnMut(&BootstrapRecord),
) -> Result<Vec<BootstrapRecord>, String> {
    let mut lit = basalt_ckks::params::presets::literal(&cfg.preset).map_err(|e| e.to_string())?;
    lit.allow_insecure |= cfg.allow_insecure;
    if let Some(log_n) = cfg.log_n.filter(|&l| l != lit.log_n) {
        lit.name = format!("{}@N=2^{log_n}", lit.name);
        lit.aliases.clear();
        lit.log_n = log_n;
        lit.allow_insecure = true;
    }
    let params = Parameters::new(lit).map_err(|e| e.to_string())?;
    let config = for_preset(&cfg.preset, cfg.log_slots, params.log_n()).ok_or(format!(
        "preset {:?} has no bootstrapping circuit (see docs/bootstrapping.md, Presets)",
        cfg.preset
    ))?;
    let t = Instant::now();
    let bt = Bootstrapper::new(&params, config).map_err(|e| e.to_string())?;
    let setup_ms = t.elapsed().as_secs_f64() * 1e3;
    let mut out = Vec::new();
    for &seeded in &cfg.seeded {
        let recs = run_keys(&params, &bt, setup_ms, seeded, cfg, pools, progress)?;
        for r in recs {
            sink(&r);
            out.push(r);
        }
    }
    Ok(out)
}

fn run_keys(
    params: &Parameters,
    bt: &Bootstrapper,
    setup_ms: f64,
    seeded: bool,
    cfg: &BootstrapBenchConfig,
    pools: &Pools,
    progress: &dyn basalt_ckks::progress::Progress,
) -> Result<Vec<BootstrapRecord>, String> {
    let reps = cfg.reps;
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let peak_rss_reset = reset_peak_rss();
    let rss_before_keys_bytes = rss_bytes();
    let kg = KeyGenerator::new(params);
    let sk = kg.gen_secret_key();
    let t = Instant::now();
    let (keys, encaps) = pools
        .largest()
        .install(|| bt.generate_keys_with(&sk, seeded, cfg.force, progress))
        .map_err(|e| err(&e))?;
    let keygen_ms = t.elapsed().as_secs_f64() * 1e3;
    let key_bytes: u64 = keys.relin.iter().map(|r| r.key.size_bytes() as u64).sum::<u64>()
        + keys.galois.values().map(|g| g.key.size_bytes() as u64).sum::<u64>();
    let rotation_keys = keys.galois.len();
    let eval = Evaluator::new(params, keys).map_err(|e| err(&e))?;
    let enc = Encoder::new(params);
    let slots = bt.slots();
    let values = random_values(slots, 1, false);
    let input_level = params.base_primes() - 1;
    let input_scale = params.default_scale().min(bt.max_input_scale());
    let pt = enc.encode(&values, slots, input_level, input_scale).map_err(|e| err(&e))?;
    let ct = encrypt_sk(params, &pt, &sk).map_err(|e| err(&e))?;

    let (first, _) = bt.bootstrap_timed(&eval, encaps.as_ref(), &ct).map_err(|e| err(&e))?;
    let runs: Mutex<BTreeMap<usize, Vec<StageTimes>>> = Mutex::new(BTreeMap::new());
    let identical = Mutex::new(true);
    let stats = measure_interleaved(pools, Timing::reps(reps), || {
        match bt.bootstrap_timed(&eval, encaps.as_ref(), &ct) {
            Ok((c, st)) => {
                if c != first {
                    *identical.lock().expect("flag") = false;
                }
                runs.lock()
                    .expect("runs")
                    .entry(rayon::current_num_threads())
                    .or_default()
                    .push(st);
            }
            Err(_) => *identical.lock().expect("flag") = false,
        }
    });
    let peak = peak_rss_bytes();
    let identical = *identical.lock().expect("flag");
    let mut runs = runs.into_inner().expect("runs");
    let have =
        enc.decode(&decrypt(params, &first, &sk).map_err(|e| err(&e))?).map_err(|e| err(&e))?;
    let p = PrecisionStats::new(&values, &have);
    Ok(crate::math::with_speedups(&stats)
        .into_iter()
        .map(|(threads, s, speedup)| {
            let mut st = runs.remove(&threads).unwrap_or_default();
            st.sort_by(|a, b| a.total_ms.total_cmp(&b.total_ms));
            BootstrapRecord {
                library: "basalt".into(),
                bench: "bootstrap".into(),
                preset: params.name().to_string(),
                log_n: params.log_n(),
                slots,
                threads,
                seeded,
                levels: bt.budget(),
                input_level,
                rotation_keys,
                key_bytes,
                keygen_ms,
                setup_ms,
                stats: s,
                stages: st.get(st.len() / 2).copied().unwrap_or_default(),
                speedup,
                efficiency: speedup.map(|x| x / threads as f64),
                identical_across_threads: identical,
                precision_mean_bits: p.mean.l2,
                precision_min_bits: p.min.l2,
                precision: p,
                rss_before_keys_bytes,
                peak_rss_bytes: peak,
                peak_rss_reset,
            }
        })
        .collect())
}
