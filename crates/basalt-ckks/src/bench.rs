//! Benchmark entry points for the CLI (`basalt bench ckks … --json`) and the `ckks_bench`
//! example: time the core operations of a preset at a level inside a rayon pool of a given
//! size, and return serde records that carry the key-switching variant, the digit count and
//! the measured precision.
//!
//! Keys are generated inside the same pool, only those the requested operations need
//! (relinearization for `mul_relin`/`rescale`, rotations 1 for `rotate`, 1..=8 for
//! `rotate_hoisted_8`). Each operation runs once to warm up, then `reps` timed times; the
//! record gives median, min and mean wall-clock milliseconds.

use std::time::Instant;

use basalt_math::Domain;
use serde::{Deserialize, Serialize};

use crate::ciphertext::Ciphertext;
use crate::encoder::Encoder;
use crate::encryptor::{decrypt, encrypt_sk};
use crate::error::{CkksError, Result};
use crate::eval::Evaluator;
use crate::keys::KeyGenerator;
use crate::keyswitch::KsVariant;
use crate::params::Parameters;
use crate::precision::PrecisionStats;
use num_complex::Complex64;

/// An operation to time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchOp {
    /// Forward NTT of both polynomials of a ciphertext (`2(l+1)` limbs).
    Ntt,
    /// ct × ct tensor + relinearization (no rescale), as Lattigo's `MulRelin`.
    MulRelin,
    /// Rescale of a degree-1 ciphertext.
    Rescale,
    /// One rotation by 1 slot (automorphism + key switch).
    Rotate,
    /// Rotations by 1..=8 sharing one decomposition (single hoisting).
    RotateHoisted8,
}

impl BenchOp {
    pub const ALL: [BenchOp; 5] = [
        BenchOp::Ntt,
        BenchOp::MulRelin,
        BenchOp::Rescale,
        BenchOp::Rotate,
        BenchOp::RotateHoisted8,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BenchOp::Ntt => "ntt",
            BenchOp::MulRelin => "mul_relin",
            BenchOp::Rescale => "rescale",
            BenchOp::Rotate => "rotate",
            BenchOp::RotateHoisted8 => "rotate_hoisted_8",
        }
    }

    /// Parse a name as printed by [`BenchOp::name`].
    pub fn parse(s: &str) -> Option<BenchOp> {
        BenchOp::ALL.into_iter().find(|o| o.name() == s)
    }
}

/// What to run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BenchConfig {
    /// Preset name or alias.
    pub preset: String,
    /// Level to run at (default: the top level).
    pub level: Option<usize>,
    /// Rayon pool size.
    pub threads: usize,
    /// Timed repetitions per operation.
    pub reps: usize,
    pub variant: KsVariant,
    /// Use seeded (KSHGen) keys.
    pub seeded: bool,
    pub ops: Vec<BenchOp>,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            preset: "LATTIGO_RESIDUAL".into(),
            level: None,
            threads: 1,
            reps: 5,
            variant: KsVariant::Hybrid,
            seeded: false,
            ops: BenchOp::ALL.to_vec(),
        }
    }
}

/// One measured operation.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BenchRecord {
    pub library: String,
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
    pub reps: usize,
    pub median_ms: f64,
    pub min_ms: f64,
    pub mean_ms: f64,
    /// Time per elementary operation (`median / 8` for `rotate_hoisted_8`).
    pub per_op_ms: f64,
    pub keygen_ms: f64,
    /// Precision of the operation's result (None for `ntt`).
    pub precision: Option<PrecisionStats>,
}

fn time_reps(reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<(f64, f64, f64)> {
    f()?;
    let mut t = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(f64::total_cmp);
    let median =
        if t.len() % 2 == 1 { t[t.len() / 2] } else { (t[t.len() / 2 - 1] + t[t.len() / 2]) / 2.0 };
    Ok((median, t[0], t.iter().sum::<f64>() / t.len() as f64))
}

/// Run `config` on the named preset.
///
/// # Errors
/// Unknown preset, bad level, pool creation failure, or an evaluator error.
pub fn run(config: &BenchConfig) -> Result<Vec<BenchRecord>> {
    let params = Parameters::preset(&config.preset)?;
    run_with_params(&params, config)
}

/// Run `config` on explicit parameters (the `preset` field is only copied into the records).
pub fn run_with_params(params: &Parameters, config: &BenchConfig) -> Result<Vec<BenchRecord>> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads.max(1))
        .build()
        .map_err(|e| CkksError::Corrupt { what: "thread pool", reason: e.to_string() })?;
    pool.install(|| run_in_pool(params, config))
}

fn run_in_pool(params: &Parameters, config: &BenchConfig) -> Result<Vec<BenchRecord>> {
    let level = config.level.unwrap_or(params.max_level());
    if level > params.max_level() {
        return Err(CkksError::LevelTooHigh { requested: level, max: params.max_level() });
    }
    let ops = &config.ops;
    let needs_relin = ops.iter().any(|o| matches!(o, BenchOp::MulRelin | BenchOp::Rescale));
    let mut rotations: Vec<i64> = Vec::new();
    if ops.contains(&BenchOp::Rotate) {
        rotations.push(1);
    }
    if ops.contains(&BenchOp::RotateHoisted8) {
        rotations = (1..=8).collect();
    }
    let t0 = Instant::now();
    let kg = KeyGenerator::new(params);
    let sk = kg.gen_secret_key();
    let mut keys = crate::keys::EvaluationKeys::default();
    if needs_relin {
        keys = keys.with_relin(kg.gen_relin_key(&sk, config.seeded));
    }
    for &r in &rotations {
        keys = keys.with_galois(kg.gen_rotation_key(&sk, r, config.seeded));
    }
    let keygen_ms = t0.elapsed().as_secs_f64() * 1e3;
    let eval = Evaluator::new(params, keys)?.with_variant(config.variant, 4);
    let enc = Encoder::new(params);
    let slots = params.max_slots();
    let vals: Vec<Complex64> = (0..slots)
        .map(|i| {
            let t = i as f64 / slots as f64;
            Complex64::new((7.0 * t).sin(), (3.0 * t).cos() * 0.5)
        })
        .collect();
    let pt = enc.encode(&vals, slots, level, params.default_scale())?;
    let ct = encrypt_sk(params, &pt, &sk)?;
    let dec = |c: &Ciphertext| -> Result<Vec<Complex64>> { enc.decode(&decrypt(params, c, &sk)?) };

    let mut out = Vec::new();
    for &op in ops {
        let mut precision = None;
        let mut per = 1.0;
        let (median, min, mean) = match op {
            BenchOp::Ntt => {
                let ring = params.ring();
                let mut coeff = ct.polys.clone();
                coeff.iter_mut().for_each(|p| ring.intt_assign(p));
                time_reps(config.reps, || {
                    for p in &coeff {
                        let mut x = p.clone();
                        ring.ntt_assign(&mut x);
                        debug_assert_eq!(x.domain(), Domain::Ntt);
                    }
                    Ok(())
                })?
            }
            BenchOp::MulRelin => {
                let r = time_reps(config.reps, || eval.mul_relin(&ct, &ct).map(|_| ()))?;
                if level > 0 {
                    let m = eval.rescale(&eval.mul_relin(&ct, &ct)?)?;
                    let want: Vec<Complex64> = vals.iter().map(|x| x * x).collect();
                    precision = Some(PrecisionStats::new(&want, &dec(&m)?));
                }
                r
            }
            BenchOp::Rescale => {
                if level < params.primes_per_rescale() + params.base_primes() - 1 {
                    continue;
                }
                let m = eval.mul_relin(&ct, &ct)?;
                let r = time_reps(config.reps, || eval.rescale(&m).map(|_| ()))?;
                let want: Vec<Complex64> = vals.iter().map(|x| x * x).collect();
                precision = Some(PrecisionStats::new(&want, &dec(&eval.rescale(&m)?)?));
                r
            }
            BenchOp::Rotate => {
                let r = time_reps(config.reps, || eval.rotate(&ct, 1).map(|_| ()))?;
                let want: Vec<Complex64> = (0..slots).map(|i| vals[(i + 1) % slots]).collect();
                precision = Some(PrecisionStats::new(&want, &dec(&eval.rotate(&ct, 1)?)?));
                r
            }
            BenchOp::RotateHoisted8 => {
                per = 8.0;
                let r =
                    time_reps(config.reps, || eval.rotate_hoisted(&ct, &rotations).map(|_| ()))?;
                let res = eval.rotate_hoisted(&ct, &rotations)?;
                let want: Vec<Complex64> = (0..slots).map(|i| vals[(i + 8) % slots]).collect();
                precision = Some(PrecisionStats::new(&want, &dec(&res[7])?));
                r
            }
        };
        out.push(BenchRecord {
            library: "basalt".into(),
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
            threads: config.threads.max(1),
            reps: config.reps.max(1),
            median_ms: median,
            min_ms: min,
            mean_ms: mean,
            per_op_ms: median / per,
            keygen_ms,
            precision,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParametersLiteral;

    #[test]
    fn bench_records_on_a_toy_ring() {
        let mut lit = ParametersLiteral::toy(10, 60, 40, 3, 61, 2, 2);
        lit.log_default_scale = 40.0;
        let p = Parameters::new(lit).unwrap();
        let cfg = BenchConfig { reps: 2, threads: 2, ..Default::default() };
        let recs = run_with_params(&p, &cfg).unwrap();
        assert_eq!(recs.len(), 5);
        for r in &recs {
            assert!(r.median_ms >= 0.0 && r.min_ms <= r.median_ms + 1e-9);
            assert_eq!((r.dnum, r.limbs, r.threads), (2, 4, 2));
            if r.op != "ntt" {
                let prec = r.precision.expect("precision measured");
                assert!(prec.min.l2 > 20.0, "{}: {prec}", r.op);
            }
        }
        let s = serde_json::to_string(&recs[1]).unwrap();
        assert!(s.contains("\"variant\":\"hybrid\""));
        assert_eq!(BenchOp::parse("rotate_hoisted_8"), Some(BenchOp::RotateHoisted8));
    }
}
