//! `basalt bench bootstrap`: time one bootstrap of a preset inside a rayon pool of a given size
//! and report what the papers report: stage breakdown, key-switching share, key sizes (full and
//! seeded), precision (mean and worst slot, bits) and the amortised multiplication time per
//! slot `T_mult,a/slot = (T_boot + Σ_{i=1}^{ℓ} T_mult(i)) / (ℓ·n)` (FAB §1.5, after Jung et al.),
//! with `ℓ` the levels left and `T_mult(i)` a measured HMult + relinearise + rescale at level i.

use std::time::Instant;

use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{Encoder, Evaluator, KeyGenerator, Parameters, PrecisionStats};
use serde::{Deserialize, Serialize};

use super::{BootstrapConfig, Bootstrapper, LevelBudget, StageTimes};
use crate::error::{CircuitError, Result};
use crate::testing::random_values;

/// What to run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BootstrapBenchConfig {
    pub preset: String,
    pub config: BootstrapConfig,
    pub threads: usize,
    /// Timed bootstraps (after one warm-up).
    pub reps: usize,
    /// Seeded (KSHGen) rotation keys: half the memory, the `a` halves regenerated per use.
    pub seeded: bool,
    /// Also measure `T_mult(i)` at every level left (for `T_mult,a/slot`).
    pub amortised: bool,
    /// Accept a preset estimated below 128-bit security (the explicit opt-in).
    pub allow_insecure: bool,
}

/// One measurement.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BootstrapRecord {
    pub bench: String,
    pub preset: String,
    pub log_n: u32,
    pub slots: usize,
    pub threads: usize,
    pub seeded: bool,
    pub ephemeral_h: Option<usize>,
    pub levels: LevelBudget,
    pub input_level: usize,
    pub input_log_scale: f64,
    pub rotation_keys: usize,
    /// Bytes of the evaluation keys as generated (seeded or full).
    pub key_bytes: u64,
    /// The same keys in the other form (full if `seeded`, seeded otherwise).
    pub key_bytes_other: u64,
    pub keygen_ms: f64,
    pub setup_ms: f64,
    /// Per-stage wall time of the median bootstrap.
    pub stages: StageTimes,
    pub median_ms: f64,
    pub min_ms: f64,
    /// Share of the bootstrap spent in key switching (from the kernel trace: ModUp, inner
    /// product, ModDown regions), in [0, 1].
    pub keyswitch_share: Option<f64>,
    /// Complex (L2) precision: mean of the per-slot bits (Lattigo's `AVGLog2Prec`), worst and
    /// median slot.
    pub precision_mean_bits: f64,
    pub precision_min_bits: f64,
    pub precision_median_bits: f64,
    /// Every statistic, per component. Lattigo v6.2's "L2" is `√2·|real error|`, so compare
    /// with it on `precision.mean.real` / `precision.min.real` (see `basalt_ckks::precision`).
    pub precision: PrecisionStats,
    /// `T_mult,a/slot` in microseconds, if measured.
    pub t_mult_a_slot_us: Option<f64>,
}

/// Run one configuration.
///
/// # Errors
/// Unknown preset, a config that does not fit, scheme errors.
pub fn run(cfg: &BootstrapBenchConfig) -> Result<BootstrapRecord> {
    run_with(cfg, false, &basalt_ckks::progress::Silent)
}

/// [`run`] reporting key generation and the bootstrap's stages to `progress` (keys beyond the
/// available memory are refused before they are generated, unless `force`).
///
/// # Errors
/// As [`run`]; out of memory; cancelled.
pub fn run_with(
    cfg: &BootstrapBenchConfig,
    force: bool,
    progress: &dyn basalt_ckks::progress::Progress,
) -> Result<BootstrapRecord> {
    let params = Parameters::preset_with(&cfg.preset, cfg.allow_insecure)
        .map_err(|e| CircuitError::Invalid(format!("preset {:?}: {e}", cfg.preset)))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.threads.max(1))
        .build()
        .map_err(|e| CircuitError::Invalid(e.to_string()))?;
    pool.install(|| run_in_pool(&params, cfg, force, progress))
}

fn run_in_pool(
    params: &Parameters,
    cfg: &BootstrapBenchConfig,
    force: bool,
    progress: &dyn basalt_ckks::progress::Progress,
) -> Result<BootstrapRecord> {
    let t = Instant::now();
    let bt = Bootstrapper::new(params, cfg.config)?;
    let setup_ms = t.elapsed().as_secs_f64() * 1e3;
    let kg = KeyGenerator::new(params);
    let sk = kg.gen_secret_key();
    let t = Instant::now();
    let (keys, encaps) = bt.generate_keys_with(&sk, cfg.seeded, force, progress)?;
    let keygen_ms = t.elapsed().as_secs_f64() * 1e3;
    let key_bytes: u64 = keys.relin.iter().map(|r| r.key.size_bytes() as u64).sum::<u64>()
        + keys.galois.values().map(|g| g.key.size_bytes() as u64).sum::<u64>();
    // A seeded key stores b only: half of a full key's b and a (and vice versa).
    let key_bytes_other = if cfg.seeded { 2 * key_bytes } else { key_bytes / 2 };
    let rotation_keys = keys.galois.len();
    let eval = Evaluator::new(params, keys)?;
    let enc = Encoder::new(params);
    let slots = bt.slots();
    let values = random_values(slots, 1, false);
    // An exhausted input: at the base level (the `q_0` primes; level 0 unless `q_0` is split),
    // at the preset's scale or the largest power of two the message ratio allows.
    let input_level = params.base_primes() - 1;
    let input_scale = params.default_scale().min(bt.max_input_scale());
    let pt = enc.encode(&values, slots, input_level, input_scale)?;
    let ct = encrypt_sk(params, &pt, &sk)?;

    let (out, _) = bt.bootstrap_timed(&eval, encaps.as_ref(), &ct)?; // warm-up
    let mut runs: Vec<(f64, StageTimes)> = Vec::new();
    for _ in 0..cfg.reps.max(1) {
        let (_, st) = bt.bootstrap_timed(&eval, encaps.as_ref(), &ct)?;
        runs.push((st.total_ms, st));
    }
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (median_ms, stages) = runs[runs.len() / 2];
    let min_ms = runs[0].0;
    let have = enc.decode(&decrypt(params, &out, &sk)?)?;
    let p = PrecisionStats::new(&values, &have);

    // Key-switching share from a symbolic run (no arithmetic, the same code path).
    let keyswitch_share = keyswitch_share(params, &bt);

    let t_mult_a_slot_us = if cfg.amortised {
        let levels_left = bt.budget().output_level;
        let mut sum_ms = 0.0;
        for l in 1..=levels_left {
            let a =
                encrypt_sk(params, &enc.encode(&values, slots, l, params.default_scale())?, &sk)?;
            let t = Instant::now();
            let m = eval.mul_relin(&a, &a)?;
            let _ = eval.rescale(&m)?;
            sum_ms += t.elapsed().as_secs_f64() * 1e3;
        }
        Some((median_ms + sum_ms) * 1e3 / (levels_left.max(1) as f64 * slots as f64))
    } else {
        None
    };
    Ok(BootstrapRecord {
        bench: "bootstrap".into(),
        preset: params.name().to_string(),
        log_n: params.log_n(),
        slots,
        threads: cfg.threads,
        seeded: cfg.seeded,
        ephemeral_h: cfg.config.ephemeral_h,
        levels: bt.budget(),
        input_level,
        input_log_scale: input_scale.log2(),
        rotation_keys,
        key_bytes,
        key_bytes_other,
        keygen_ms,
        setup_ms,
        stages,
        median_ms,
        min_ms,
        keyswitch_share,
        precision_mean_bits: p.mean.l2,
        precision_min_bits: p.min.l2,
        precision_median_bits: p.median.l2,
        precision: p,
        t_mult_a_slot_us,
    })
}

/// Fraction of the trace's kernel work (NTT/INTT/BConv/element-wise limb operations,
/// weighted by limbs) that runs inside key-switching regions, from a symbolic bootstrap.
fn keyswitch_share(params: &Parameters, bt: &Bootstrapper) -> Option<f64> {
    let trace = super::trace::record_bootstrap(params, bt).ok()?;
    Some(trace.keyswitch_share)
}
