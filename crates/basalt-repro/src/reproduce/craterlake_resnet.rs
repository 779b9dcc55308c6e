//! CraterLake's ResNet-20 rows: Table 3 (CraterLake and F1+ times, speedups; target), Table 4
//! (feature ablations; validation) and Table 5 (128- and 200-bit; validation), from the
//! library's trace of one inference (`basalt_workloads::resnet`, [`Program::Resnet20`]) plus one
//! packed bootstrap per bootstrap marker in it (`inference.rs`), timed from the same chain's
//! [`Program::Bootstrap`] trace (the packed-bootstrapping row's). Nothing here is fitted to these
//! rows.

use std::path::Path;

use crate::ReproError;
use crate::program::Program;
use crate::reproduce::craterlake::Ablations;
use crate::reproduce::craterlake_security::LEVELS;
use crate::reproduce::inference::Inference;
use crate::reproduce::{Computed, Traces};
use basalt_sim::machine::Machine;

/// CraterLake's quoted CPU time for ResNet-20 (Table 3: 23 min).
const CPU_MS: f64 = 1_380_000.0;
const ROW: &str = "ResNet-20";

/// The network on `preset` with its bootstraps timed from the same chain's packed bootstrap.
fn load(traces: &Traces, preset: &str) -> Result<Option<Inference>, ReproError> {
    let p = Program::Resnet20 { preset: preset.into(), sparse: None, seeded: true };
    let b = Program::Bootstrap { preset: preset.into(), log_slots: None, dft: None, seeded: true };
    Inference::load(traces, &p, &b)
}

/// The rows, for CraterLake only.
pub fn compute(paper: &str, data: &Path, traces: &Traces) -> Result<Vec<Computed>, ReproError> {
    if paper != "craterlake" {
        return Ok(Vec::new());
    }
    let Some(r80) = load(traces, "CRATERLAKE_80_BOOT")? else { return Ok(Vec::new()) };
    let ablations = Ablations::load(data)?;
    let how = |inf: &Inference, preset: &str, m: &str| {
        format!(
            "library trace: ResNet-20 inference (basalt_workloads::resnet: multiplexed packing, \
             convolutions as single-hoisted BSGS products, composite minimax ReLU (15, 15, 27), \
             pseudo-random weights), {preset} (reconstructed) from the top level, plus {} packed \
             bootstraps of that chain (its Bootstrap trace, once per bootstrap region), seeded \
             keys, {m}",
            inf.bootstraps
        )
    };
    let h = |_: &Machine, m: &str| Ok(how(&r80, "CRATERLAKE_80_BOOT", m));
    let (mut out, t_cl) = ablations.rows((ROW, ROW), CPU_MS, &|m| r80.ms(m), &h)?;
    for level in &LEVELS {
        let Some(r) = load(traces, level.preset)? else { continue };
        let ours = (r.ms(&level.machine(data)?)?, r.ring_degree());
        let how = how(&r, level.preset, &level.file());
        out.extend(level.rows(ROW, ours, (t_cl, r80.ring_degree()), &how));
    }
    Ok(out)
}
