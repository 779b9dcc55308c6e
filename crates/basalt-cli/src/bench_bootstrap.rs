//! `basalt bench bootstrap`: one JSON line per preset and thread count.

use basalt_circuits::bootstrap::bench::{BootstrapBenchConfig, run as run_bench};
use basalt_circuits::bootstrap::config::for_preset;
use serde_json::Value;

pub fn run(
    preset: &str,
    log_slots: Option<u32>,
    threads: usize,
    reps: usize,
    seeded: bool,
    amortised: bool,
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
        amortised,
        allow_insecure,
    };
    let r = run_bench(&cfg).map_err(|e| e.to_string())?;
    serde_json::to_value(&r).map_err(|e| e.to_string())
}
