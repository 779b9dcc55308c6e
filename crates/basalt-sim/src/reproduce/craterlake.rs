//! CraterLake rows: Table 1 operation counts from the closed-form key-switching streams
//! (`synth::ckks`, Listing 1 and the standard per-limb algorithm), and Table 2 area bookkeeping.
//! Tables 3–5 need the benchmark programs (not yet traced).

use std::path::Path;

use basalt_trace::{ElemOp, KernelKind, Trace};

use crate::SimError;
use crate::reproduce::{Computed, Traces, computed, machine};
use crate::synth::Workload;
use crate::synth::ckks::KsShape;

const N: u32 = 1 << 16;
const L: u32 = 60;

/// Table 1 units: residue-polynomial multiplies and adds outside changeRNSBase, and (I)NTTs.
fn other_mults(t: &Trace) -> f64 {
    [ElemOp::Mul, ElemOp::MulAcc, ElemOp::MulScalar]
        .iter()
        .map(|&op| t.count(KernelKind::Elem(op)))
        .sum::<u64>() as f64
}

fn other_adds(t: &Trace) -> f64 {
    [ElemOp::Add, ElemOp::Sub, ElemOp::MulAcc]
        .iter()
        .map(|&op| t.count(KernelKind::Elem(op)))
        .sum::<u64>() as f64
}

fn ntts(t: &Trace) -> f64 {
    (t.count(KernelKind::Ntt) + t.count(KernelKind::Intt)) as f64
}

pub fn compute(data: &Path, traces: &Traces) -> Result<Vec<Computed>, SimError> {
    let shape = KsShape { n: N, limbs: L, dnum: 1, special: L, seeded: true };
    let (boosted, pb) = traces.get(&Workload::HybridKeySwitch(shape));
    let (standard, ps) = traces.get(&Workload::StandardKeySwitch { n: N, limbs: L });
    let crb = boosted.count(KernelKind::BConv) as f64 / N as f64;
    let hb = &format!("kernel counts, boosted key switch ({pb}; Listing 1, N = 64K, L = 60)");
    let hs = &format!("kernel counts, standard key switch ({ps}; N = 64K, L = 60)");
    let mut out = vec![
        computed("1", "boosted CRB L=60", "mult", crb, hb),
        computed("1", "boosted CRB L=60", "add", crb, hb),
        computed("1", "boosted other L=60", "mult", other_mults(&boosted), hb),
        computed("1", "boosted other L=60", "add", other_adds(&boosted), hb),
        computed("1", "boosted L=60", "ntt", ntts(&boosted), hb),
        computed("1", "standard L=60", "mult", other_mults(&standard), hs),
        computed("1", "standard L=60", "add", other_adds(&standard), hs),
        computed("1", "standard L=60", "ntt", ntts(&standard), hs),
    ];
    let ratio = "ratio of the rows above";
    let row = "boosted vs standard L=60";
    out.push(computed("1", row, "ntt reduction", ntts(&standard) / ntts(&boosted), ratio));
    let inc = (crb + other_mults(&boosted)) / other_mults(&standard);
    out.push(computed("1", row, "mult increase", inc, ratio));

    let m = machine(data, "craterlake")?;
    let fus: f64 = m.units.iter().map(|u| u.area_mm2.unwrap_or(0.0) * u.count as f64).sum();
    let total = fus + m.components.iter().filter_map(|c| c.area_mm2).sum::<f64>();
    let bk = "bookkeeping: sum of the per-FU areas transcribed into craterlake.toml";
    out.push(computed("2", "Total FUs", "area", fus, bk));
    out.push(computed("2", "Total CraterLake", "area", total, bk));
    Ok(out)
}
