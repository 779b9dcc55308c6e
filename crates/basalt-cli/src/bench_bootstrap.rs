//! `basalt bench bootstrap`: a front end to `basalt_bench::bootstrap` (one JSON line per key
//! form and thread count) and, with `--amortised`, to the circuit layer's T_mult,a/slot run.

use basalt_bench::harness::Pools;
use basalt_circuits::bootstrap::bench::{BootstrapBenchConfig, run as run_amortised_bench};
use basalt_circuits::bootstrap::config::for_preset;
use serde_json::Value;

/// Every thread count of `pools`, for each key form in `seeded` (full = false), on the
/// preset's ring or (quick runs) its chain on a ring of 2^`log_n`. Key generation and the
/// stages show a bar on a terminal.
#[allow(clippy::too_many_arguments)]
pub fn run(
    preset: &str,
    log_slots: Option<u32>,
    reps: usize,
    seeded: &[bool],
    log_n: Option<u32>,
    pools: &Pools,
    allow_insecure: bool,
    force: bool,
    emit: &mut dyn FnMut(Value),
) -> Result<(), String> {
    let cfg = basalt_bench::bootstrap::BootstrapBenchConfig {
        preset: preset.to_string(),
        log_slots,
        reps,
        seeded: seeded.to_vec(),
        log_n,
        allow_insecure,
        force,
    };
    let mut err = None;
    // A bar on a terminal (nothing when stderr is redirected): keys, then the stages.
    let bar = crate::progress_bar::TermProgress::new();
    let r =
        basalt_bench::bootstrap::run(&cfg, pools, &bar, &mut |r| match serde_json::to_value(r) {
            Ok(v) => emit(v),
            Err(e) => err = Some(e.to_string()),
        });
    bar.finish();
    r?;
    err.map_or(Ok(()), Err)
}

/// The amortised multiplication time per slot (`T_mult,a/slot`) at one thread count.
pub fn run_amortised(
    preset: &str,
    log_slots: Option<u32>,
    threads: usize,
    reps: usize,
    seeded: bool,
    allow_insecure: bool,
) -> Result<Value, String> {
    let params =
        basalt_ckks::Parameters::preset_with(preset, allow_insecure).map_err(|e| e.to_string())?;
    let config = for_preset(preset, log_slots, params.log_n()).ok_or(format!(
        "preset {preset:?} has no bootstrapping circuit (see docs/bootstrapping.md, Presets)"
    ))?;
    let cfg = BootstrapBenchConfig {
        preset: preset.to_string(),
        config,
        threads,
        reps,
        seeded,
        amortised: true,
        allow_insecure,
    };
    let r = run_amortised_bench(&cfg).map_err(|e| e.to_string())?;
    let mut v = serde_json::to_value(&r).map_err(|e| e.to_string())?;
    v["bench"] = serde_json::json!("bootstrap/amortised");
    Ok(v)
}
