//! FAB rows: Table 5 basic operations and the Table 6 NTT row, from the closed-form CKKS
//! streams on `fab.toml`. The paper does not state the level of Table 5; we use the top level
//! (24 Q limbs, dnum = 3, 8 P limbs), which the digest (§5.2) shows overshoots Rescale and
//! Rotate — the ratio column says by how much.

use std::path::Path;

use basalt_trace::Kernel;

use crate::reproduce::{Computed, Traces, computed, machine};
use crate::synth::ckks::KsShape;
use crate::synth::{Builder, Workload};
use crate::{SimError, simulate};

pub fn compute(data: &Path, traces: &Traces) -> Result<Vec<Computed>, SimError> {
    let m = machine(data, "fab")?;
    let ks = KsShape { n: 1 << 16, limbs: 24, dnum: 3, special: 8, seeded: false };
    let (n, limbs) = (ks.n, ks.limbs);
    let ops = [
        ("Add", Workload::Add { n, limbs }, 0.16),
        ("Mult", Workload::Mult(ks), 2.96),
        ("Rescale", Workload::Rescale { n, limbs }, 0.49),
        ("Rotate", Workload::Rotate(ks), 2.55),
    ];
    let mut out = Vec::new();
    let mut speedups = Vec::new();
    for (name, w, gpu_ms) in ops {
        let (trace, prov) = traces.get(&w);
        let ms = simulate(&m, &trace)?.seconds * 1e3;
        let how = format!("{prov} at 24 Q limbs, dnum 3, 8 P limbs on fab.toml");
        out.push(computed("5", name, "FAB latency", ms, &how));
        let s = gpu_ms / ms;
        out.push(computed("5", name, "speedup vs GPU", s, "quoted GPU latency / our latency"));
        speedups.push(s);
    }
    let avg = speedups.iter().sum::<f64>() / speedups.len() as f64;
    out.push(computed("5", "average", "speedup vs GPU", avg, "mean of the four speedups"));

    let mut b = Builder::new();
    b.k(Kernel::Ntt { n: 1 << 14, limbs: 1 });
    let per_s = 1.0 / simulate(&m, &b.build())?.seconds;
    let how6 = "one single-limb NTT at N = 2^14 on fab.toml (what one 'NTT' means is unstated)";
    out.push(computed("6", "NTT", "FAB throughput", per_s, how6));
    out.push(computed("6", "NTT", "speedup vs HEAX", per_s / 42_000.0, "ours / quoted HEAX"));
    Ok(out)
}
