//! `basalt bench <suite>`: JSON lines on stdout, progress on stderr.

use std::time::Duration;

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Suite {
    /// One-limb and full-polynomial NTT (beside tfhe-ntt), ModDown.
    Ntt,
    /// CKKS operations (NTT, key switch, MulRelin, Rescale, Rotate, 8 hoisted rotations) on
    /// `--preset`, and their throughput mode (`--batch`).
    Ckks,
    /// TFHE programmable bootstrapping (latency, batched throughput, stages) on `--set`.
    Pbs,
    /// Radix integers on `--set` (`--bits`, `--int-ops`): lines named as TFHE-rs's integer
    /// benchmark names them (`uint8_add`, `uint32_mul`, …), each result checked by decryption.
    Integer,
    /// The seven HE-MxV layers encrypted for real on `--mxv-set` (long: minutes per set).
    Mxv,
    /// CKKS bootstrapping on `--preset` (`--log-slots`, `--keys`): every thread count from one
    /// set of keys, speed-ups, stage times, key sizes, peak memory, precision,
    /// T_mult,a/slot with `--amortised` (long: tens of seconds and GBs of keys at N=2^16).
    Bootstrap,
    /// Linear transforms: diagonal method vs BSGS (no/single/double hoisting, both loop
    /// orders) vs Auto on a dense 512×512 matrix and a CoeffsToSlots-like level (`--quick`:
    /// toy rings).
    Lintrans,
    /// ntt, ckks and pbs (mxv, bootstrap and lintrans are run on their own).
    All,
}

#[derive(Args)]
pub struct BenchArgs {
    suite: Suite,
    /// Print JSON lines (the only format for now; kept for scripts that pass it).
    #[arg(long)]
    json: bool,
    /// Thread counts to run the multi-threaded measurements with.
    #[arg(long, value_delimiter = ',', default_value = "1,2", value_parser = crate::args::threads)]
    threads: Vec<usize>,
    /// Seconds of timed repetitions per measurement (per thread count).
    #[arg(long, default_value_t = 1.0, value_parser = crate::args::seconds)]
    min_time: f64,
    /// Seconds of warm-up per measurement and thread count, after the cold first run
    /// (reported apart as `cold_ms`).
    #[arg(long, default_value_t = 0.5)]
    warmup: f64,
    /// ckks: ciphertexts per throughput-mode batch (`*_batch` records; 0 to skip).
    #[arg(long, default_value_t = 8)]
    batch: usize,
    /// ckks: operations to run (ntt, keyswitch, mul_relin, mul_relin_rescale, rescale, rotate,
    /// rotate_hoisted_8;
    /// default: all).
    #[arg(long, value_delimiter = ',')]
    ops: Vec<String>,
    /// ckks: level to run at (default: each preset's top level).
    #[arg(long)]
    level: Option<usize>,
    /// Leave glibc's allocation thresholds at their adaptive defaults (by default the bench
    /// pins them, see BENCHMARKS.md, Method: otherwise multi-threaded runs fault in fresh pages
    /// on every key switch, by an amount that depends on what ran before).
    #[arg(long)]
    system_malloc: bool,
    /// bootstrap: key forms, each with its own peak-memory figure (full | seeded | both).
    #[arg(long, default_value = "full")]
    keys: String,
    /// log2 of the ring degree (ntt suite).
    #[arg(long, default_value_t = 16, value_parser = crate::args::log_n)]
    log_n: u32,
    /// CKKS presets to run (names or aliases; `basalt params` lists them).
    #[arg(long, value_delimiter = ',', default_value = "LATTIGO_RESIDUAL,N16QP1546H192H32")]
    preset: Vec<String>,
    /// Key-switching datapath: hybrid or reordered (FAB).
    #[arg(long, default_value = "hybrid")]
    variant: String,
    /// Use seeded (KSHGen) key-switching keys.
    #[arg(long)]
    seeded: bool,
    /// Minimum timed repetitions per measurement (bootstrap: exactly this many per thread
    /// count).
    #[arg(long, default_value_t = 5, value_parser = crate::args::count)]
    reps: usize,
    /// TFHE parameter sets (pbs suite).
    #[arg(long = "set", value_delimiter = ',', default_value = "TFHERS_2_2_KS_PBS")]
    sets: Vec<String>,
    /// integer: widths in bits (8, 16, 32, 64).
    #[arg(long, value_delimiter = ',', default_value = "8,32", value_parser = radix_bits)]
    bits: Vec<u32>,
    /// integer: operations (add, mul, lt, eq).
    #[arg(long = "int-ops", value_delimiter = ',', default_value = "add,mul", value_parser = int_op)]
    int_ops: Vec<String>,
    /// Batch sizes for the PBS throughput runs.
    #[arg(long, value_delimiter = ',', default_value = "1,8,64,512", value_parser = crate::args::count)]
    counts: Vec<usize>,
    /// Encrypt→LUT→decrypt trials for the measured PBS failure rate (0 to skip).
    #[arg(long, default_value_t = 0, value_parser = crate::args::trials)]
    failure_trials: u64,
    /// Allow parameter sets below 128-bit security (Strix set I).
    #[arg(long)]
    allow_insecure: bool,
    /// Generate keys even when their estimate exceeds three quarters of the available memory
    /// (bootstrap suite).
    #[arg(long)]
    force: bool,
    /// HE-MxV parameter sets (A, B, C) for the mxv suite.
    #[arg(long, value_delimiter = ',', default_value = "B")]
    mxv_set: Vec<String>,
    /// HE-MxV layers (default: all seven).
    #[arg(long, value_delimiter = ',')]
    layers: Vec<String>,
    /// log2 of the slot count for the bootstrap suite (default: fully packed).
    #[arg(long, value_parser = crate::args::log_slots)]
    log_slots: Option<u32>,
    /// Also measure T_mult(i) at every level left, for T_mult,a/slot (bootstrap suite).
    #[arg(long)]
    amortised: bool,
    /// Small rings and a few repetitions, for CI and for checking the scripts: ntt at
    /// N ≤ 2^12, ckks on OSIRIS_SET_I (N = 2^14), bootstrap on N16QP1546H192H32's chain
    /// at N = 2^14 (insecure, the machinery only), lintrans on toy rings.
    #[arg(long)]
    quick: bool,
    /// lintrans cases: dense (512×512, N = 2^15) and c2s (15 diagonals over 2^15 slots at
    /// the top of N16QP1546H192H32).
    #[arg(long = "case", value_delimiter = ',', default_value = "dense,c2s")]
    cases: Vec<String>,
    /// lintrans: baby steps of the BSGS rows (default 32 for dense, 4 for c2s).
    #[arg(long, value_parser = crate::args::count)]
    n1: Option<usize>,
    /// lintrans: timed repetitions per strategy (median reported).
    #[arg(long, default_value_t = 3, value_parser = crate::args::count)]
    lt_reps: usize,
    /// lintrans: run the dense case on this CKKS preset (default: a 128-bit N = 2^15 ring;
    /// `LATTIGO_RESIDUAL` needs 16 GB of keys for the diagonal method, 8 GB with `--seeded`).
    #[arg(long)]
    lt_preset: Option<String>,
    /// lintrans: level of the dense case (default: the preset's top level).
    #[arg(long)]
    lt_level: Option<usize>,
}

/// The CPU's model name from /proc/cpuinfo.
pub fn cpu_name() -> String {
    basalt_bench::harness::cpu_name()
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ` (civil-from-days, no time crate needed).
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

/// The calibrated CPU model's prediction for one CKKS operation (single thread), when
/// `data/machines/basalt_cpu.toml` exists (`basalt sim calibrate` writes it).
fn predict(
    preset: &str,
    op: &str,
    level: usize,
    variant: basalt_ckks::KsVariant,
    seeded: bool,
) -> Result<Option<f64>, String> {
    use crate::trace_cmd::{Program, TraceArgs, record_program};
    let path = std::path::Path::new("data/machines/basalt_cpu.toml");
    let program = match op {
        "mul_relin" => Program::MulRelin,
        "rescale" => Program::Rescale,
        "rotate" => Program::Rotate,
        "rotate_hoisted_8" => Program::Hoisted8,
        _ => return Ok(None),
    };
    if !path.exists() {
        return Ok(None);
    }
    let machine = basalt_sim::Machine::load(path).map_err(|e| e.to_string())?;
    let params = basalt_ckks::Parameters::preset(preset).map_err(|e| e.to_string())?;
    let args = TraceArgs {
        level: Some(level),
        reordered: variant == basalt_ckks::KsVariant::Reordered,
        seeded,
        ..TraceArgs::new(program, preset)
    };
    let trace = record_program(&params, &args)?;
    let r = basalt_sim::simulate(&machine, &trace).map_err(|e| e.to_string())?;
    Ok(Some(r.seconds * 1e3))
}

/// A radix-integer width: 8, 16, 32 or 64 bits.
fn radix_bits(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(b @ (8 | 16 | 32 | 64)) => Ok(b),
        _ => Err(format!("{s:?}: radix integers are 8, 16, 32 or 64 bits")),
    }
}

/// A radix-integer operation the integer suite measures.
fn int_op(s: &str) -> Result<String, String> {
    basalt_bench::tfhe_integer::IntOp::parse(s.trim())
        .map(|o| o.name().to_string())
        .ok_or(format!("{s:?}: integer operations are add, mul, lt and eq"))
}

/// `basalt bench integer`: every `--bits` × `--int-ops` × `--threads` on each `--set`.
fn integer(a: &BenchArgs, emit: &mut dyn FnMut(Value)) -> Result<(), String> {
    use basalt_bench::tfhe_integer::{IntOp, IntegerBenchOptions, run_integer_bench};
    let ops = a
        .int_ops
        .iter()
        .map(|o| {
            IntOp::parse(o).ok_or(format!("{o:?}: integer operations are add, mul, lt and eq"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let opts = IntegerBenchOptions {
        threads: a.threads.clone(),
        bits: if a.quick { vec![8] } else { a.bits.clone() },
        ops,
        reps: if a.quick { 1 } else { a.reps },
        ..Default::default()
    };
    for set in &a.sets {
        eprintln!("bench integer: {set}, {:?} bits, threads {:?} …", opts.bits, opts.threads);
        let params =
            basalt_tfhe::TfheParams::preset(set, a.allow_insecure).map_err(|e| e.to_string())?;
        let mut err = None;
        run_integer_bench(&params, &opts, &mut |r| match serde_json::to_value(r) {
            Ok(v) => emit(v),
            Err(e) => err = Some(e.to_string()),
        })?;
        if let Some(e) = err {
            return Err(e);
        }
    }
    Ok(())
}

pub fn run(a: &BenchArgs) -> Result<(), String> {
    use basalt_bench::harness::{Pools, Timing};
    let timing = if a.quick {
        Timing::quick()
    } else {
        Timing {
            warmup: Duration::from_secs_f64(a.warmup),
            min_time: Duration::from_secs_f64(a.min_time),
            min_reps: a.reps.max(1),
            max_reps: 10_000,
        }
    };
    let allocator = if a.system_malloc {
        "glibc defaults"
    } else if basalt_bench::harness::fix_allocator_thresholds() {
        "glibc, thresholds pinned"
    } else {
        "system"
    };
    // Built once: every suite below times its thread counts in these pools.
    let pools = Pools::new(&a.threads);
    let command: Vec<String> = std::env::args().collect();
    let date = utc_now();
    let mut m = basalt_bench::harness::machine();
    m["allocator"] = json!(allocator);
    let emit = |mut v: Value| {
        v["machine"] = m.clone();
        v["command"] = json!(command.join(" "));
        v["date"] = json!(date);
        println!("{v}");
    };
    if matches!(a.suite, Suite::Ntt | Suite::All) {
        let log_n = if a.quick { a.log_n.min(12) } else { a.log_n };
        eprintln!("bench ntt: N=2^{log_n} …");
        for r in basalt_bench::math::ntt_suite(log_n, 25, &pools, timing) {
            emit(r);
        }
    }
    if matches!(a.suite, Suite::Pbs | Suite::All) {
        for set in &a.sets {
            eprintln!("bench pbs: {set} …");
            let opts = basalt_bench::tfhe::BenchOptions {
                latency_reps: if a.quick { 3 } else { 20 },
                throughput_reps: if a.quick { 1 } else { 3 },
                threads: a.threads.clone(),
                counts: a.counts.clone(),
                failure_trials: a.failure_trials,
                ..Default::default()
            };
            let mut sink = |r: &basalt_bench::tfhe::BenchRecord| {
                if let Ok(v) = serde_json::to_value(r) {
                    emit(v);
                }
            };
            basalt_bench::tfhe::run_pbs_bench_named(set, a.allow_insecure, &opts, &mut sink)
                .map_err(|e| e.to_string())?;
        }
    }
    if a.suite == Suite::Integer {
        integer(a, &mut |v| emit(v))?;
    }
    if a.suite == Suite::Mxv {
        let layers: Vec<basalt_circuits::mxv_suite::Layer> = if a.layers.is_empty() {
            basalt_circuits::mxv_suite::LAYERS.to_vec()
        } else {
            a.layers
                .iter()
                .map(|l| basalt_circuits::mxv_suite::layer(l).ok_or(format!("unknown layer {l:?}")))
                .collect::<Result<_, _>>()?
        };
        for set in &a.mxv_set {
            let s = basalt_circuits::mxv_suite::MxvSet::parse(set)
                .ok_or(format!("unknown HE-MxV set {set:?} (A, B, C)"))?;
            for &threads in &a.threads {
                eprintln!("bench mxv: set {set}, {threads} thread(s), {} layers …", layers.len());
                let recs = basalt_circuits::mxv_suite::mxv_suite(s, &layers, threads)
                    .map_err(|e| e.to_string())?;
                for r in recs {
                    emit(serde_json::to_value(&r).map_err(|e| e.to_string())?);
                }
            }
        }
    }
    if a.suite == Suite::Bootstrap {
        let seeded = match a.keys.as_str() {
            "full" => vec![a.seeded],
            "seeded" => vec![true],
            "both" => vec![false, true],
            k => return Err(format!("unknown --keys {k:?} (full | seeded | both)")),
        };
        let presets: Vec<String> =
            if a.quick { vec!["N16QP1546H192H32".into()] } else { a.preset.clone() };
        let log_n = a.quick.then_some(14);
        for preset in &presets {
            eprintln!("bench bootstrap: {preset}, threads {:?} …", pools.threads());
            crate::bench_bootstrap::run(
                preset,
                a.log_slots,
                a.reps,
                &seeded,
                log_n,
                &pools,
                a.allow_insecure,
                a.force,
                &mut |v| emit(v),
            )?;
            if a.amortised {
                for &threads in &a.threads {
                    emit(crate::bench_bootstrap::run_amortised(
                        preset,
                        a.log_slots,
                        threads,
                        a.reps,
                        a.seeded,
                        a.allow_insecure,
                    )?);
                }
            }
        }
    }
    if a.suite == Suite::Lintrans {
        let cases = a
            .cases
            .iter()
            .map(|c| {
                basalt_circuits::lintrans::bench::Case::parse(c)
                    .ok_or(format!("unknown lintrans case {c:?} (dense, c2s)"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let opts = basalt_circuits::lintrans::bench::BenchOptions {
            cases,
            quick: a.quick,
            reps: a.lt_reps,
            n1: a.n1,
            threads: 1,
            dense_preset: a.lt_preset.clone(),
            dense_level: a.lt_level,
            seeded: a.seeded,
        };
        eprintln!(
            "bench lintrans: {} case(s){} …",
            opts.cases.len(),
            if a.quick { " (quick, toy rings)" } else { "" }
        );
        let mut err = None;
        basalt_circuits::lintrans::bench::run(&opts, &mut |r| match serde_json::to_value(r) {
            Ok(v) => emit(v),
            Err(e) => err = Some(e.to_string()),
        })
        .map_err(|e| e.to_string())?;
        if let Some(e) = err {
            return Err(e);
        }
    }
    if matches!(a.suite, Suite::Ckks | Suite::All) {
        let variant = match a.variant.as_str() {
            "hybrid" => basalt_ckks::KsVariant::Hybrid,
            "reordered" => basalt_ckks::KsVariant::Reordered,
            v => {
                return Err(format!("unknown key-switching variant {v:?} (hybrid | reordered)"));
            }
        };
        let presets: Vec<String> =
            if a.quick { vec!["OSIRIS_SET_I".into()] } else { a.preset.clone() };
        for preset in &presets {
            eprintln!("bench ckks: {preset}, threads {:?} …", pools.threads());
            let ops = if a.ops.is_empty() {
                basalt_bench::ckks::BenchOp::ALL.to_vec()
            } else {
                a.ops
                    .iter()
                    .map(|o| {
                        basalt_bench::ckks::BenchOp::parse(o)
                            .ok_or(format!("unknown CKKS benchmark operation {o:?}"))
                    })
                    .collect::<Result<Vec<_>, _>>()?
            };
            let cfg = basalt_bench::ckks::BenchConfig {
                preset: preset.clone(),
                ops,
                level: a.level,
                timing,
                variant,
                seeded: a.seeded,
                batch: a.batch,
            };
            let recs = basalt_bench::ckks::run(&cfg, &pools).map_err(|e| e.to_string())?;
            for r in recs {
                let mut v = serde_json::to_value(&r).map_err(|e| e.to_string())?;
                if r.threads == 1
                    && r.batch.is_none()
                    && let Some(p) = predict(preset, &r.op, r.level, variant, a.seeded)?
                {
                    v["predicted_ms"] = json!(p);
                    v["predicted_over_measured"] = json!(p / r.stats.median_ms);
                    // The calibration uses each kernel's fastest run; on a shared machine
                    // the like-for-like comparison is with the fastest repetition too.
                    v["predicted_over_min"] = json!(p / r.stats.min_ms);
                }
                emit(v);
            }
        }
    }
    Ok(())
}
