//! CKKS operation benchmarks: NTT, key switching, mul + relinearise, rescale, rotation and 8
//! hoisted rotations of one preset at one level, timed in every pool of a [`Pools`]
//! interleaved (see [`crate::harness`]), with the speed-up over one thread, the fork-join
//! points each operation has, and the throughput mode (a batch of independent ciphertexts,
//! one per task) beside it.
//!
//! Keys are generated once, in the largest pool, only those the requested operations need
//! (relinearisation for `keyswitch`, `mul_relin`, `rescale`; rotation 1 for `rotate`, 1..=8 for
//! `rotate_hoisted_8`). Every thread count computes the same result bit for bit; the records
//! say so (`identical_across_threads`), checked on the outputs of the timed code.

use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::keys::{EvaluationKeys, KeyGenerator};
use basalt_ckks::{
    Ciphertext, CkksError, Complex64, Encoder, Evaluator, KsVariant, Parameters, PrecisionStats,
    Result,
};
use basalt_math::RnsPoly;
use serde::{Deserialize, Serialize};

use crate::harness::{Pools, Stats, Timing, measure_interleaved};

/// An operation to time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchOp {
    /// Forward then inverse NTT of both polynomials of a ciphertext, in place
    /// (`2·2(l+1)` limb transforms).
    Ntt,
    /// One hybrid key switch of a polynomial with the relinearisation key (ModUp, inner
    /// product, ModDown): the kernel under every relinearisation and rotation.
    Keyswitch,
    /// ct × ct tensor + relinearisation (no rescale), as Lattigo's `MulRelin`.
    MulRelin,
    /// ct × ct, relinearisation and rescale with the rescale merged into relinearisation's
    /// ModDown (`Evaluator::mul_relin_rescale`): what Poulpy's product does in one call.
    MulRelinRescale,
    /// Rescale of a degree-1 ciphertext.
    Rescale,
    /// One rotation by 1 slot (automorphism + key switch).
    Rotate,
    /// Rotations by 1..=8 sharing one decomposition (single hoisting).
    RotateHoisted8,
}

impl BenchOp {
    pub const ALL: [BenchOp; 7] = [
        BenchOp::Ntt,
        BenchOp::Keyswitch,
        BenchOp::MulRelin,
        BenchOp::MulRelinRescale,
        BenchOp::Rescale,
        BenchOp::Rotate,
        BenchOp::RotateHoisted8,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BenchOp::Ntt => "ntt",
            BenchOp::Keyswitch => "keyswitch",
            BenchOp::MulRelin => "mul_relin",
            BenchOp::MulRelinRescale => "mul_relin_rescale",
            BenchOp::Rescale => "rescale",
            BenchOp::Rotate => "rotate",
            BenchOp::RotateHoisted8 => "rotate_hoisted_8",
        }
    }

    /// Parse a name as printed by [`BenchOp::name`].
    pub fn parse(s: &str) -> Option<BenchOp> {
        BenchOp::ALL.into_iter().find(|o| o.name() == s)
    }

    /// Operations with a batch (throughput-mode) form.
    fn batchable(self) -> bool {
        matches!(self, BenchOp::MulRelin | BenchOp::Rotate | BenchOp::Rescale)
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Preset name or alias.
    pub preset: String,
    /// Level to run at (default: the top level).
    pub level: Option<usize>,
    pub timing: Timing,
    pub variant: KsVariant,
    /// Use seeded (KSHGen) keys.
    pub seeded: bool,
    pub ops: Vec<BenchOp>,
    /// Ciphertexts per throughput-mode batch (0: skip the throughput runs).
    pub batch: usize,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            preset: "LATTIGO_RESIDUAL".into(),
            level: None,
            timing: Timing::standard(),
            variant: KsVariant::Hybrid,
            seeded: false,
            ops: BenchOp::ALL.to_vec(),
            batch: 0,
        }
    }
}

/// One measured operation at one thread count.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BenchRecord {
    pub library: String,
    /// `ckks/<op>` for one operation at a time, `ckks/<op>_batch` for throughput mode.
    pub bench: String,
    pub op: String,
    pub preset: String,
    pub log_n: u32,
    pub level: usize,
    /// Q limbs at this level.
    pub limbs: usize,
    /// Special primes.
    pub k: usize,
    /// Digits at this level.
    pub dnum: usize,
    pub alpha: usize,
    pub log_qp: f64,
    pub variant: KsVariant,
    pub seeded_keys: bool,
    pub threads: usize,
    #[serde(flatten)]
    pub stats: Stats,
    /// Time per elementary operation: `median / 8` for `rotate_hoisted_8`, `median / batch`
    /// for a batch.
    pub per_op_ms: f64,
    /// Elementary operations per second at the median.
    pub ops_per_s: f64,
    /// Median at one thread ÷ median here, from the same interleaved run.
    pub speedup: Option<f64>,
    /// `speedup / threads`.
    pub efficiency: Option<f64>,
    /// Ciphertexts per batch (throughput mode).
    pub batch: Option<usize>,
    /// Kernels the operation runs, each one fork-join point of the per-limb parallelism
    /// (a batch runs one fork-join in all).
    pub fork_join_points: u64,
    /// Every thread count produced the same output, bit for bit.
    pub identical_across_threads: bool,
    pub keygen_ms: f64,
    /// Precision of the operation's result (None for `ntt` and `keyswitch`).
    pub precision: Option<PrecisionStats>,
}

/// Run `config` on the named preset in every pool of `pools`.
///
/// # Errors
/// Unknown preset, bad level, or an evaluator error.
pub fn run(config: &BenchConfig, pools: &Pools) -> Result<Vec<BenchRecord>> {
    let params = Parameters::preset(&config.preset)?;
    run_with_params(&params, config, pools)
}

/// The values every benchmark encrypts: smooth, of modulus below 1.
fn values(slots: usize, phase: f64) -> Vec<Complex64> {
    (0..slots)
        .map(|i| {
            let t = i as f64 / slots as f64 + phase;
            Complex64::new((7.0 * t).sin(), (3.0 * t).cos() * 0.5)
        })
        .collect()
}

/// Run `config` on explicit parameters (the `preset` field is only copied into the records).
///
/// # Errors
/// Bad level, or an evaluator error.
pub fn run_with_params(
    params: &Parameters,
    config: &BenchConfig,
    pools: &Pools,
) -> Result<Vec<BenchRecord>> {
    let level = config.level.unwrap_or(params.max_level());
    if level > params.max_level() {
        return Err(CkksError::LevelTooHigh { requested: level, max: params.max_level() });
    }
    let ops = &config.ops;
    let needs_relin =
        ops.iter().any(|o| matches!(o, BenchOp::MulRelin | BenchOp::Rescale | BenchOp::Keyswitch));
    let mut rotations: Vec<i64> = Vec::new();
    if ops.contains(&BenchOp::Rotate) {
        rotations.push(1);
    }
    if ops.contains(&BenchOp::RotateHoisted8) {
        rotations = (1..=8).collect();
    }
    let t0 = std::time::Instant::now();
    let kg = KeyGenerator::new(params);
    let sk = kg.gen_secret_key();
    let keys = pools.largest().install(|| {
        let mut keys = EvaluationKeys::default();
        if needs_relin {
            keys = keys.with_relin(kg.gen_relin_key(&sk, config.seeded));
        }
        for &r in &rotations {
            keys = keys.with_galois(kg.gen_rotation_key(&sk, r, config.seeded));
        }
        keys
    });
    let keygen_ms = t0.elapsed().as_secs_f64() * 1e3;
    let eval = Evaluator::new(params, keys)?.with_variant(config.variant, 4);
    let enc = Encoder::new(params);
    let slots = params.max_slots();
    let vals = values(slots, 0.0);
    let encrypt = |v: &[Complex64]| -> Result<Ciphertext> {
        let pt = enc.encode(v, slots, level, params.default_scale())?;
        encrypt_sk(params, &pt, &sk)
    };
    let ct = encrypt(&vals)?;
    let batch_vals: Vec<Vec<Complex64>> =
        (0..config.batch).map(|i| values(slots, i as f64 * 0.01)).collect();
    let batch_cts: Vec<Ciphertext> =
        batch_vals.iter().map(|v| encrypt(v)).collect::<Result<_>>()?;
    let dec = |c: &Ciphertext| -> Result<Vec<Complex64>> { enc.decode(&decrypt(params, c, &sk)?) };
    let can_rescale = level + 1 >= params.primes_per_rescale() + params.base_primes();
    let squared = |v: &[Complex64]| -> Vec<Complex64> { v.iter().map(|x| x * x).collect() };
    let rotated = |v: &[Complex64], k: usize| -> Vec<Complex64> {
        (0..slots).map(|i| v[(i + k) % slots]).collect()
    };

    let mut out = Vec::new();
    let record = |bench: String,
                  op: BenchOp,
                  threads: usize,
                  stats: Stats,
                  per: f64,
                  speedup: Option<f64>,
                  batch: Option<usize>,
                  fork_join_points: u64,
                  identical: bool,
                  precision: Option<PrecisionStats>| BenchRecord {
        library: "basalt".into(),
        bench,
        op: op.name().into(),
        preset: params.name().to_string(),
        log_n: params.log_n(),
        level,
        limbs: level + 1,
        k: params.k_at(level),
        dnum: params.dnum_at(level),
        alpha: params.alpha_at(level),
        log_qp: params.log_qp(),
        variant: config.variant,
        seeded_keys: config.seeded,
        threads,
        stats,
        per_op_ms: stats.median_ms / per,
        ops_per_s: per * 1e3 / stats.median_ms,
        speedup,
        efficiency: speedup.map(|s| s / threads as f64),
        batch,
        fork_join_points,
        identical_across_threads: identical,
        keygen_ms,
        precision,
    };
    for &op in ops {
        if matches!(op, BenchOp::Rescale | BenchOp::MulRelinRescale) && !can_rescale {
            continue;
        }
        // The product the rescale benchmark divides.
        let product = if op == BenchOp::Rescale { Some(eval.mul_relin(&ct, &ct)?) } else { None };
        // One run of the operation; its output polynomials, for the bit-for-bit check.
        // One run of the operation: its output polynomials (for the bit-for-bit check) and
        // ciphertexts (for the precision).
        let once = || -> Result<(Vec<RnsPoly>, Vec<Ciphertext>)> {
            let cts = match op {
                BenchOp::Ntt => {
                    let ring = params.ring();
                    let mut polys = ct.polys().to_vec();
                    for p in &mut polys {
                        ring.intt_assign(p);
                        ring.ntt_assign(p);
                    }
                    return Ok((polys, Vec::new()));
                }
                BenchOp::Keyswitch => {
                    let rlk = eval.keys().relin.as_ref().expect("relinearisation key generated");
                    let (a, b) = eval.keyswitch(&ct.polys()[1], &rlk.key);
                    return Ok((vec![a, b], Vec::new()));
                }
                BenchOp::MulRelin => vec![eval.mul_relin(&ct, &ct)?],
                BenchOp::MulRelinRescale => {
                    vec![eval.mul_relin_rescale(&ct, &ct, false, None, 0.0)?]
                }
                BenchOp::Rescale => vec![eval.rescale(product.as_ref().expect("product"))?],
                BenchOp::Rotate => vec![eval.rotate(&ct, 1)?],
                BenchOp::RotateHoisted8 => eval.rotate_hoisted(&ct, &rotations)?,
            };
            Ok((cts.iter().flat_map(|c| c.polys().to_vec()).collect(), cts))
        };
        let (first, trace) = basalt_trace::record(once);
        let (first_polys, first) = first?;
        let fork_joins = trace.kernels().count() as u64;
        // Each output is compared as it comes and dropped: keeping them would grow the heap
        // by one result per repetition and count its first-touch faults in the timings.
        let identical = std::sync::atomic::AtomicBool::new(true);
        let runs = measure_interleaved(pools, config.timing, || {
            if !once().is_ok_and(|(p, _)| p == first_polys) {
                identical.store(false, std::sync::atomic::Ordering::Relaxed);
            }
        });
        let identical = identical.into_inner();
        let precision = match op {
            BenchOp::Ntt | BenchOp::Keyswitch => None,
            BenchOp::MulRelin if can_rescale => {
                Some(PrecisionStats::new(&squared(&vals), &dec(&eval.rescale(&first[0])?)?))
            }
            BenchOp::MulRelin => None,
            BenchOp::Rescale | BenchOp::MulRelinRescale => {
                Some(PrecisionStats::new(&squared(&vals), &dec(&first[0])?))
            }
            BenchOp::Rotate => Some(PrecisionStats::new(&rotated(&vals, 1), &dec(&first[0])?)),
            BenchOp::RotateHoisted8 => {
                Some(PrecisionStats::new(&rotated(&vals, 8), &dec(&first[7])?))
            }
        };
        let per = if op == BenchOp::RotateHoisted8 { 8.0 } else { 1.0 };
        for (t, s, sp) in crate::math::with_speedups(&runs) {
            out.push(record(
                format!("ckks/{}", op.name()),
                op,
                t,
                s,
                per,
                sp,
                None,
                fork_joins,
                identical,
                precision,
            ));
        }

        if config.batch == 0 || !op.batchable() {
            continue;
        }
        let products: Vec<Ciphertext> = if op == BenchOp::Rescale {
            batch_cts.iter().map(|c| eval.mul_relin(c, c)).collect::<Result<_>>()?
        } else {
            Vec::new()
        };
        let run_batch = || -> Result<Vec<Ciphertext>> {
            match op {
                BenchOp::MulRelin => {
                    let pairs: Vec<(&Ciphertext, &Ciphertext)> =
                        batch_cts.iter().map(|c| (c, c)).collect();
                    eval.mul_relin_batch(&pairs)
                }
                BenchOp::Rotate => eval.rotate_batch(&batch_cts, 1),
                BenchOp::Rescale => eval.rescale_batch(&products),
                _ => unreachable!("batchable ops only"),
            }
        };
        // The batch must equal the single-ciphertext path, ciphertext by ciphertext.
        let single: Vec<Ciphertext> = match op {
            BenchOp::MulRelin => {
                batch_cts.iter().map(|c| eval.mul_relin(c, c)).collect::<Result<_>>()?
            }
            BenchOp::Rotate => {
                batch_cts.iter().map(|c| eval.rotate(c, 1)).collect::<Result<_>>()?
            }
            _ => products.iter().map(|c| eval.rescale(c)).collect::<Result<_>>()?,
        };
        let identical = std::sync::atomic::AtomicBool::new(true);
        let runs = measure_interleaved(pools, config.timing, || {
            if !run_batch().is_ok_and(|c| c == single) {
                identical.store(false, std::sync::atomic::Ordering::Relaxed);
            }
        });
        let identical = identical.into_inner();
        let precision = match op {
            BenchOp::Rotate => {
                Some(PrecisionStats::new(&rotated(&batch_vals[0], 1), &dec(&single[0])?))
            }
            BenchOp::MulRelin if can_rescale => Some(PrecisionStats::new(
                &squared(&batch_vals[0]),
                &dec(&eval.rescale(&single[0])?)?,
            )),
            BenchOp::Rescale => {
                Some(PrecisionStats::new(&squared(&batch_vals[0]), &dec(&single[0])?))
            }
            _ => None,
        };
        for (t, s, sp) in crate::math::with_speedups(&runs) {
            out.push(record(
                format!("ckks/{}_batch", op.name()),
                op,
                t,
                s,
                config.batch as f64,
                sp,
                Some(config.batch),
                1,
                identical,
                precision,
            ));
        }
    }
    Ok(out)
}
