//! Osiris Table III "Sorting" (Set IV; NH / SH / DH at 1 TB/s, targets; at 2 TB/s, validation):
//! the library's bitonic sort of 2^14 values (`basalt_workloads::sort`, recorded shape-only on
//! `OSIRIS_SET_IV` with its bootstraps as bootstrap markers) plus as many 2^14-slot
//! bootstraps on the reconstructed `OSIRIS_SET_IV_BOOT` chain, each recorded once.
//!
//! The sort needs hundreds of bootstraps; recording and simulating each would take minutes, so
//! the trace is cut at the markers, every segment between two bootstraps is timed on its own
//! (a bootstrap streams gigabytes of keys, so nothing of a segment's survives on chip to the
//! next), and the bootstrap's time is counted once per marker. Nothing here is fitted.

use std::path::Path;

use super::osiris::{COLUMNS, DFT_N1, machines};
use crate::program::{DftPlan, Program};
use crate::reproduce::{Computed, Traces, computed};
use basalt_sim::machine::Machine;
use basalt_sim::refresh::split_at_bootstraps;
use basalt_sim::simulate;

use crate::ReproError;

/// Lattigo's CPU time for the sort as Table III quotes it (23.0 K s), for the improvement rows.
const CPU_SORT_S: f64 = 23_000.0;

/// log2 of the values sorted (§VI: 2^14 elements in (0, 1)); the bootstraps are sparse with as
/// many slots.
const LOG_LEN: u32 = 14;

/// Rows of `paper` from the sort's traces (Osiris only).
pub fn compute(paper: &str, data: &Path, traces: &Traces) -> Result<Vec<Computed>, ReproError> {
    if paper != "osiris" {
        return Ok(Vec::new());
    }
    // Every HMult fuses ModDown and Rescale (Osiris §V), in the comparisons and in EvalMod.
    let p = Program::Sort { preset: "OSIRIS_SET_IV".into(), log_len: LOG_LEN, seeded: true };
    let p = Program::Fused(Box::new(p));
    let Some(sort) = traces.program(&p)? else { return Ok(Vec::new()) };
    let (segments, boots) = split_at_bootstraps(&sort)?;
    let (m1, m2) = machines(data)?;
    let segments_s = |m: &Machine| -> Result<f64, ReproError> {
        segments.iter().map(|t| Ok(simulate(m, t)?.seconds)).sum()
    };
    let rest = [segments_s(&m1)?, segments_s(&m2)?];
    let mut out = Vec::new();
    for (col, hoisting) in COLUMNS {
        let p = Program::Fused(Box::new(Program::Bootstrap {
            preset: "OSIRIS_SET_IV_BOOT".into(),
            log_slots: Some(LOG_LEN),
            dft: Some(DftPlan { n1: DFT_N1, hoisting, max_partials: 4, of_limb: true }),
            seeded: true,
        }));
        let Some(boot) = traces.program(&p)? else { return Ok(Vec::new()) };
        for (b, (table, m)) in [("III(a)", &m1), ("III(b)", &m2)].into_iter().enumerate() {
            let boot_s = simulate(m, &boot)?.seconds;
            let s = rest[b] + boots as f64 * boot_s;
            let how = format!(
                "library traces at {} TB/s: bitonic sort of 2^14 (basalt_workloads::sort, 105 \
                 stages, 12 degree-7 polynomials per comparison, OSIRIS_SET_IV, seeded keys) \
                 {:.3} s in {} segments + {boots} x {col} 2^14-slot bootstrap on \
                 OSIRIS_SET_IV_BOOT (reconstructed chain) {:.3} ms",
                b + 1,
                rest[b],
                segments.len(),
                boot_s * 1e3
            );
            out.push(computed(table, "Sorting", &format!("{col} latency"), s, &how));
            if col == "DH" {
                let imp = "quoted CPU 23.0 K s / our DH latency";
                out.push(computed(table, "Sorting", "improvement vs CPU", CPU_SORT_S / s, imp));
            }
        }
    }
    Ok(out)
}
