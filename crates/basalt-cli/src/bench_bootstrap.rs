//! `basalt bench bootstrap`: one JSON line per preset and thread count.

use basalt_circuits::bootstrap::bench::{BootstrapBenchConfig, run_with as run_bench};
use basalt_circuits::bootstrap::config::for_preset;
use serde_json::Value;

#[allow(clippy::too_many_arguments)]
pub fn run(
    preset: &str,
    log_slots: Option<u32>,
    threads: usize,
    reps: usize,
    seeded: bool,
    amortised: bool,
    allow_insecure: bool,
    force: bool,
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
    // A bar on a terminal (nothing when stderr is redirected): keys, then the stages.
    let bar = crate::progress_bar::TermProgress::new();
    let r = run_bench(&cfg, force, &bar).map_err(|e| e.to_string())?;
    bar.finish();
    serde_json::to_value(&r).map_err(|e| e.to_string())
}
