//! `basalt bench <suite>`: JSON lines on stdout, progress on stderr.

use std::time::Duration;

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Suite {
    /// One-limb and full-polynomial NTT (beside tfhe-ntt), ModDown.
    Ntt,
    /// CKKS operations (NTT, MulRelin, Rescale, Rotate, 8 hoisted rotations) on `--preset`.
    Ckks,
    /// TFHE programmable bootstrapping (latency, batched throughput, stages) on `--set`.
    Pbs,
    /// The seven HE-MxV layers encrypted for real on `--mxv-set` (long: minutes per set).
    Mxv,
    /// CKKS bootstrapping on `--preset` (`--log-slots`, `--seeded`): stage times, key sizes,
    /// precision, T_mult,a/slot (long: tens of seconds and GBs of keys at N=2^16).
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
    /// Seconds of timed repetitions per measurement.
    #[arg(long, default_value_t = 1.0, value_parser = crate::args::seconds)]
    min_time: f64,
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
    /// Timed repetitions per CKKS operation.
    #[arg(long, default_value_t = 5, value_parser = crate::args::count)]
    reps: usize,
    /// TFHE parameter sets (pbs suite).
    #[arg(long = "set", value_delimiter = ',', default_value = "TFHERS_2_2_KS_PBS")]
    sets: Vec<String>,
    /// Batch sizes for the PBS throughput runs.
    #[arg(long, value_delimiter = ',', default_value = "1,8,64,512", value_parser = crate::args::count)]
    counts: Vec<usize>,
    /// Encrypt→LUT→decrypt trials for the measured PBS failure rate (0 to skip).
    #[arg(long, default_value_t = 0, value_parser = crate::args::trials)]
    failure_trials: u64,
    /// Allow parameter sets estimated below 128-bit security (`basalt security` lists them).
    #[arg(long)]
    allow_insecure: bool,
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
    /// Generate keys even when their estimate exceeds three quarters of the available memory
    /// (bootstrap suite).
    #[arg(long)]
    force: bool,
    /// lintrans: small insecure toy rings instead of the full-size cases (CI smoke test).
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
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_default()
}

fn machine() -> Value {
    json!({
        "cpu": cpu_name(),
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "avx512ifma": is_x86_feature_detected_ifma(),
    })
}

fn is_x86_feature_detected_ifma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512ifma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
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
    // A prediction for a set the measurement already built (with its opt-in, if it needed one).
    let params = basalt_ckks::Parameters::preset_insecure(preset).map_err(|e| e.to_string())?;
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

pub fn run(a: &BenchArgs) -> Result<(), String> {
    let min_time = Duration::from_secs_f64(a.min_time);
    let mut records: Vec<Value> = Vec::new();
    let m = machine();
    let emit = |mut v: Value| {
        v["machine"] = m.clone();
        println!("{v}");
    };
    if matches!(a.suite, Suite::Ntt | Suite::All) {
        eprintln!("bench ntt: N=2^{} …", a.log_n);
        records.extend(basalt_math::bench::ntt_suite(a.log_n, 25, &a.threads, min_time));
    }
    for r in records.drain(..) {
        emit(r);
    }
    if matches!(a.suite, Suite::Pbs | Suite::All) {
        for set in &a.sets {
            eprintln!("bench pbs: {set} …");
            let opts = basalt_tfhe::bench::BenchOptions {
                threads: a.threads.clone(),
                counts: a.counts.clone(),
                failure_trials: a.failure_trials,
                ..Default::default()
            };
            let mut sink = |r: &basalt_tfhe::bench::BenchRecord| {
                if let Ok(v) = serde_json::to_value(r) {
                    emit(v);
                }
            };
            basalt_tfhe::bench::run_pbs_bench_named(set, a.allow_insecure, &opts, &mut sink)
                .map_err(|e| e.to_string())?;
        }
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
        for preset in &a.preset {
            for &threads in &a.threads {
                eprintln!("bench bootstrap: {preset}, {threads} thread(s) …");
                let v = crate::bench_bootstrap::run(
                    preset,
                    a.log_slots,
                    threads,
                    a.reps,
                    a.seeded,
                    a.amortised,
                    a.allow_insecure,
                    a.force,
                )?;
                emit(v);
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
        for preset in &a.preset {
            for &threads in &a.threads {
                eprintln!("bench ckks: {preset}, {threads} thread(s) …");
                let cfg = basalt_ckks::bench::BenchConfig {
                    preset: preset.clone(),
                    threads,
                    reps: a.reps,
                    variant,
                    seeded: a.seeded,
                    ..Default::default()
                };
                let params = basalt_ckks::Parameters::preset_with(preset, a.allow_insecure)
                    .map_err(|e| e.to_string())?;
                let recs = basalt_ckks::bench::run_with_params(&params, &cfg)
                    .map_err(|e| e.to_string())?;
                for r in recs {
                    let mut v = serde_json::to_value(&r).map_err(|e| e.to_string())?;
                    v["bench"] = json!(format!("ckks/{}", r.op));
                    if threads == 1
                        && let Some(p) = predict(preset, &r.op, r.level, variant, a.seeded)?
                    {
                        v["predicted_ms"] = json!(p);
                        v["predicted_over_measured"] = json!(p / r.median_ms);
                        // The calibration uses each kernel's fastest run; on a shared machine
                        // the like-for-like comparison is with the fastest repetition too.
                        v["predicted_over_min"] = json!(p / r.min_ms);
                    }
                    emit(v);
                }
            }
        }
    }
    Ok(())
}
