//! Osiris Table III "ResNet-20" (Set IV; NH / SH / DH at 1 TB/s, targets; at 2 TB/s,
//! validation): the library's ResNet-20 (`basalt_workloads::resnet`, the network CraterLake's
//! rows time) recorded shape-only on `OSIRIS_SET_IV` with every layer a BSGS product in the
//! column's hoisting (GSC order, at most 4 partial sums: Orion's Hybrid++ convolutions, §VI),
//! plus one sparse 2^14-slot bootstrap on the reconstructed `OSIRIS_SET_IV_BOOT` chain per
//! bootstrap marker, in the same column's hoisting (the Sorting rows' bootstrap). Nothing here
//! is fitted to these rows.

use std::path::Path;

use super::inference::Inference;
use super::osiris::{COLUMNS, DFT_N1, machines};
use crate::ReproError;
use crate::program::{DftPlan, Program, ResnetSparse};
use crate::reproduce::{Computed, Traces, computed};

/// Lattigo's CPU time for ResNet-20 as Table III quotes it (620 s), for the improvement rows.
const CPU_MS: f64 = 620_000.0;
const ROW: &str = "ResNet-20";

/// log2 of the sparse bootstrap's slots \[GAP\]: §VI says ResNet-20 bootstraps sparse-packed
/// (fewer than N/2 = 2^15 slots), not how many; 2^14 is the least the multiplexed layout of the
/// first stage (16 channels x 32 x 32) fits in, and the Sorting rows' bootstrap.
const LOG_SLOTS: u32 = 14;

/// Rows of `paper` (Osiris only).
pub fn compute(paper: &str, data: &Path, traces: &Traces) -> Result<Vec<Computed>, ReproError> {
    if paper != "osiris" {
        return Ok(Vec::new());
    }
    let (m1, m2) = machines(data)?;
    let mut out = Vec::new();
    for (col, hoisting) in COLUMNS {
        let sparse = ResnetSparse {
            boot_preset: "OSIRIS_SET_IV_BOOT".into(),
            log_slots: LOG_SLOTS,
            hoisting,
        };
        // Every HMult fuses ModDown and Rescale (§V), in the network and in EvalMod.
        let net = Program::Fused(Box::new(Program::Resnet20 {
            preset: "OSIRIS_SET_IV".into(),
            sparse: Some(sparse),
            seeded: true,
        }));
        let boot = Program::Fused(Box::new(Program::Bootstrap {
            preset: "OSIRIS_SET_IV_BOOT".into(),
            log_slots: Some(LOG_SLOTS),
            dft: Some(DftPlan { n1: DFT_N1, hoisting, max_partials: 4, of_limb: true }),
            seeded: true,
        }));
        let Some(inf) = Inference::load(traces, &net, &boot)? else { return Ok(Vec::new()) };
        for (b, (table, m)) in [("III(a)", &m1), ("III(b)", &m2)].into_iter().enumerate() {
            let (net_ms, boot_ms) = inf.split_ms(m)?;
            let ms = inf.ms(m)?;
            let how = format!(
                "library traces at {} TB/s: ResNet-20 inference (basalt_workloads::resnet: \
                 multiplexed packing in 2^14 slots, layers as {col} BSGS products in GSC order \
                 (<= 4 partials), composite minimax ReLU (15, 15, 27), pseudo-random weights) on \
                 OSIRIS_SET_IV from its top level {net_ms:.2} ms + {} x {col} 2^14-slot \
                 bootstrap on OSIRIS_SET_IV_BOOT (reconstructed chain) {boot_ms:.3} ms, seeded \
                 keys",
                b + 1,
                inf.bootstraps
            );
            out.push(computed(table, ROW, &format!("{col} latency"), ms, &how));
            if col == "DH" {
                let imp = "quoted CPU 620 s / our DH latency";
                out.push(computed(table, ROW, "improvement vs CPU", CPU_MS / ms, imp));
            }
        }
    }
    Ok(out)
}
