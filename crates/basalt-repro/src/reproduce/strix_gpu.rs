//! Strix §III / Fig. 2 rows: blind-rotation fragmentation of NuFHE on a Titan RTX
//! ([`basalt_sim::fragmentation`]), from `data/machines/gpu/titan_rtx_nufhe.toml`.

use std::path::Path;

use serde::Deserialize;

use crate::ReproError;
use crate::reproduce::{Computed, computed};
use basalt_sim::fragmentation::DeviceBatchedGpu;

/// The GPU file: the SM count and the stream throughput that sets the BR time per SM.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GpuFile {
    name: String,
    #[allow(dead_code)] // read by the reproduction's check of fitted rows
    paper: String,
    sms: u32,
    stream_pbs_per_s: f64,
    #[allow(dead_code)] // provenance for the reader; the strict schema still requires it
    source: String,
    /// The constant fitted to a paper row (checked by `reproduce::check_fits`).
    #[allow(dead_code)]
    fitted: Vec<basalt_sim::machine::Fit>,
}

fn load(data: &Path) -> Result<(DeviceBatchedGpu, String), ReproError> {
    let path = data.join("machines/gpu/titan_rtx_nufhe.toml");
    let text = crate::data::read_to_string(&path)?;
    let f: GpuFile = toml::from_str(&text)
        .map_err(|e| ReproError::Parse { path: path.clone(), message: e.to_string() })?;
    if f.sms == 0 || !(f.stream_pbs_per_s.is_finite() && f.stream_pbs_per_s > 0.0) {
        return Err(ReproError::Parse {
            path,
            message: "sms and stream_pbs_per_s must be positive".into(),
        });
    }
    let gpu = DeviceBatchedGpu { sms: f.sms, br_seconds: f64::from(f.sms) / f.stream_pbs_per_s };
    Ok((gpu, f.name))
}

pub fn compute(data: &Path) -> Result<Vec<Computed>, ReproError> {
    let (gpu, name) = load(data)?;
    let t = |w, core_batch| gpu.br_time(w, core_batch);
    let how = format!(
        "fragmentation model (Eqs. 1-2): {} SMs, one LWE each per fragment, {:.1} ms BR per SM \
         (Table V's NuFHE I throughput), {name}.toml",
        gpu.sms,
        gpu.br_seconds * 1e3
    );
    let full = gpu.sms;
    Ok(vec![
        computed("fig2", "72 vs 1 ciphertexts", "BR time ratio", t(full, 1) / t(1, 1), &how),
        computed(
            "fig2",
            "144 vs 72 ciphertexts",
            "BR time ratio",
            t(2 * full, 1) / t(full, 1),
            &how,
        ),
        computed(
            "fig2",
            "core batch 2 vs 1 at 144",
            "BR time ratio",
            t(2 * full, 2) / t(2 * full, 1),
            &format!("{how}; an SM is compute-bound, so 2 LWEs per SM take twice as long"),
        ),
        computed("fig2", "NuFHE I", "latency", t(1, 1) * 1e3, &how),
    ])
}
