//! CraterLake's LSTM rows: Table 3 (CraterLake and F1+ times, speedups), Table 4 (the three
//! feature ablations, validation) and Table 5 (128- and 200-bit, validation), each from the
//! library's trace of one whole inference (`basalt_workloads::lstm`, recorded in shape-only
//! mode).
//!
//! The sequence length is derived, not fitted: the paper's 50 bootstraps per inference (§8)
//! times the steps one bootstrap's 10 two-residue levels hold on `CRATERLAKE_80_BOOT` (3
//! steps of 3 levels), 150 steps. The 128-bit chain (7 levels after its bootstrap) runs the
//! same 150 steps two per bootstrap, 75 bootstraps: "we bootstrap twice as often" (§9.4); the
//! 200-bit chain keeps the 80-bit levels (50 bootstraps of 3 steps).
//! Nothing here is tuned to the rows.

use std::path::Path;

use basalt_trace::Event;

use crate::program::Program;
use crate::reproduce::craterlake::Ablations;
use crate::reproduce::craterlake_security::{LEVELS, ring_degree};
use crate::reproduce::{Computed, Traces};
use basalt_sim::machine::Machine;
use basalt_sim::simulate;

use crate::ReproError;

/// Bootstraps per inference (§8) \[P\].
const BOOTSTRAPS: u32 = 50;
/// Steps one bootstrap's output levels hold on `CRATERLAKE_80_BOOT` \[D\]: 10 two-residue levels
/// over 3 per step (`basalt_workloads::lstm::LstmModel::steps_per_bootstrap`, checked by its
/// tests).
const STEPS_PER_BOOTSTRAP: u32 = 3;
/// Quoted CPU time of one inference (Table 3), for the speedup row.
const CPU_MS: f64 = 859_000.0;

/// Rows of `paper` (none but CraterLake's).
pub fn compute(paper: &str, data: &Path, traces: &Traces) -> Result<Vec<Computed>, ReproError> {
    if paper != "craterlake" {
        return Ok(Vec::new());
    }
    let lstm = |preset: &str| Program::Lstm {
        preset: preset.into(),
        steps: BOOTSTRAPS * STEPS_PER_BOOTSTRAP,
        seeded: true,
    };
    let Some(t) = traces.program(&lstm("CRATERLAKE_80_BOOT"))? else { return Ok(Vec::new()) };
    let ms = |m: &Machine, t: &basalt_trace::Trace| -> Result<f64, ReproError> {
        Ok(simulate(m, t)?.seconds * 1e3)
    };
    let how = |chain: &str, m: &str| {
        format!(
            "library trace: LSTM inference (basalt_workloads::lstm, pseudo-random weights), \
             {chain}, 150 steps of W0 h + W1 x (one summed SH BSGS pass, 128x128 each) + \
             degree-3 tanh, 128-slot bootstraps, seeded keys, {m}"
        )
    };
    let h80 = |_: &Machine, m: &str| Ok(how("CRATERLAKE_80_BOOT (50 bootstraps, 3 steps each)", m));
    let (mut out, t_cl) =
        Ablations::load(data)?.rows(("LSTM", "LSTM"), CPU_MS, &|m| ms(m, &t), &h80)?;
    for level in &LEVELS {
        let Some(lt) = traces.program(&lstm(level.preset))? else { continue };
        let boots = lt
            .events
            .iter()
            .filter(|e| matches!(e, Event::Enter { name } if name == "Bootstrap"))
            .count();
        let how = how(&format!("{} ({boots} bootstraps)", level.preset), &level.file());
        let ours = (ms(&level.machine(data)?, &lt)?, ring_degree(&lt));
        out.extend(level.rows("LSTM", ours, (t_cl, ring_degree(&t)), &how));
    }
    Ok(out)
}
