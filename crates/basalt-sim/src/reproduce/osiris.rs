//! Osiris rows. Table III needs bootstrapping / ResNet-20 traces from the CKKS library, which do
//! not exist yet. Modelled: the Fig. 11(b) statements of §VI-C (one double-hoisted BSGS product
//! with 64 diagonals at ℓ = 12, Set IV, 1 TB/s, in the GSC order), and the Table V column sums
//! as bookkeeping of `osiris.toml`.

use std::path::Path;

use basalt_trace::{ElemOp, Kernel, Trace};

use crate::reproduce::{Computed, Traces, computed, machine};
use crate::synth::Workload;
use crate::synth::lintrans::BsgsShape;
use crate::{SimError, simulate};

/// Modular multipliers on chip (Table IV).
const MULTIPLIERS: f64 = 32_256.0;

/// Modular multiplications of a trace, counted as Osiris does: an MDC butterfly spends two
/// (one for the butterfly, one for OF-Twiddle, §IV-A), BConv one per MAC plus the first row's
/// limb-wise scaling (§IV-C), element-wise products one per coefficient.
pub fn modmults(t: &Trace) -> f64 {
    t.kernels()
        .map(|k| match *k {
            Kernel::Ntt { n, limbs } | Kernel::Intt { n, limbs } => {
                limbs as f64 * (n as f64 / 2.0) * n.trailing_zeros() as f64 * 2.0
            }
            Kernel::BConv { n, from, to } => n as f64 * from as f64 * (to as f64 + 1.0),
            Kernel::Elem { n, limbs, op: ElemOp::Mul | ElemOp::MulAcc | ElemOp::MulScalar } => {
                n as f64 * limbs as f64
            }
            _ => 0.0,
        })
        .sum()
}

struct Point {
    cycles: f64,
    stall: f64,
    utilisation: f64,
    modmults: f64,
}

pub fn compute(data: &Path, traces: &Traces) -> Result<Vec<Computed>, SimError> {
    let m = machine(data, "osiris")?;
    let gsc = m.switches.gsc_order.unwrap_or(false);
    // Set IV at ℓ = 12: 13 Q limbs; α = 14 P limbs at the bootstrapping levels (digest §2.1).
    let point = |n1: u32, n2: u32| -> Result<(Point, &'static str), SimError> {
        let shape = BsgsShape { n: 1 << 16, q_limbs: 13, p_limbs: 14, n1, n2 };
        let (t, prov) = traces.get(&Workload::BsgsMatVec { shape, gsc });
        let r = simulate(&m, &t)?;
        let mm = modmults(&t);
        let p = Point {
            cycles: r.cycles,
            stall: r.stall_cycles / r.cycles,
            utilisation: mm / (MULTIPLIERS * r.cycles),
            modmults: mm,
        };
        Ok((p, prov))
    };
    let (r1, prov) = point(8, 8)?;
    let (r4, _) = point(16, 4)?;
    let (r64, _) = point(64, 1)?;
    let how =
        format!("{prov}: double-hoisted BSGS, 64 diagonals, l = 12, GSC = {gsc}, osiris.toml");
    let util = format!("{how}; modmults (Osiris accounting) / (32,256 x cycles)");
    let mut out = vec![
        computed("fig11", "ratio 1 (n1=8 n2=8)", "stall fraction", r1.stall, &how),
        computed("fig11", "ratio 1 (n1=8 n2=8)", "multiplier utilisation", r1.utilisation, &util),
        computed("fig11", "ratio 64 (n1=64 n2=1)", "stall fraction", r64.stall, &how),
        computed(
            "fig11",
            "ratio 64 (n1=64 n2=1)",
            "multiplier utilisation",
            r64.utilisation,
            &util,
        ),
        computed("fig11", "n2=1 vs n2=4", "latency ratio", r64.cycles / r4.cycles, &how),
        computed("fig11", "n2=4 vs n2=1", "modmult ratio", r4.modmults / r64.modmults, &how),
    ];

    let area: f64 = m.units.iter().map(|u| u.area_mm2.unwrap_or(0.0) * u.count as f64).sum::<f64>()
        + m.components.iter().filter_map(|c| c.area_mm2).sum::<f64>();
    let power: f64 = m.units.iter().map(|u| u.power_w.unwrap_or(0.0) * u.count as f64).sum::<f64>()
        + m.components.iter().filter_map(|c| c.power_w).sum::<f64>();
    let bk = "bookkeeping: sum of the per-unit values transcribed into osiris.toml";
    out.push(computed("V", "sum", "area", area, bk));
    out.push(computed("V", "sum", "power", power, bk));
    Ok(out)
}
