//! Unit cost models: one small file per unit class, each answering "how many cycles does this
//! unit group stay busy for this kernel?" from the unit's configuration alone.
//!
//! Work is spread evenly (work-conserving, fractionally) over the `count` instances of a group,
//! assuming the scheduler packs limbs of consecutive kernels; `busy` is the time the group is
//! occupied, so per-group utilisation is `busy / total`. `fill` is the pipeline latency paid
//! before the first result (it overlaps with other work in a chained window, see
//! `schedule.rs`).

pub mod automorph;
pub mod bconv;
pub mod elem;
pub mod kshgen;
pub mod ntt;
pub mod pbs;

use basalt_trace::{ElemOp, Kernel, TfheStep};

use crate::SimError;
use crate::machine::{Crossbar, Machine, Unit, UnitClass};

/// Cycles one kernel occupies its unit group.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    pub busy: f64,
    pub fill: f64,
}

/// `ceil(a / b)` for positive integers, as f64 cycles.
pub(crate) fn ceil_div(a: u64, b: u64) -> f64 {
    a.div_ceil(b.max(1)) as f64
}

/// The cost of `k` on `u`; rejects kernels that do not fit the machine (ring degree, moduli).
pub fn cost(m: &Machine, u: &Unit, k: &Kernel) -> Result<Cost, SimError> {
    check_fits(m, k)?;
    let mismatch = || SimError::BadUnit {
        machine: m.name.clone(),
        unit: u.name.clone(),
        message: format!("class {:?} cannot execute {:?}", u.class, k.kind()),
    };
    let busy = match (u.class, k) {
        (UnitClass::Ntt, Kernel::Ntt { n, limbs } | Kernel::Intt { n, limbs }) => {
            ntt::cycles(u, *n, *limbs)?
        }
        (UnitClass::Bconv, Kernel::BConv { n, from, to }) => bconv::cycles(u, *n, *from, *to)?,
        (UnitClass::Automorph, Kernel::Automorph { n, limbs, .. }) => {
            automorph::cycles(u, *n, *limbs)
        }
        (UnitClass::Elem, Kernel::Elem { n, limbs, .. }) => elem::cycles(u, *n, *limbs),
        (UnitClass::Kshgen, Kernel::KeyGen { n, limbs }) => kshgen::cycles(u, *n, *limbs),
        (
            UnitClass::TfheRotator
            | UnitClass::TfheDecomposer
            | UnitClass::TfheFft
            | UnitClass::TfheVma
            | UnitClass::TfheAccumulator
            | UnitClass::TfheKs,
            Kernel::Tfhe { step, size, count },
        ) => pbs::cycles(m, u, *step, *size, *count).ok_or_else(mismatch)?,
        _ => return Err(mismatch()),
    };
    Ok(Cost { busy: busy + alloc_cycles(m, k), fill: u.latency_cycles as f64 })
}

/// CPU models: the host program's time outside the traced kernels (allocating result
/// polynomials, copies, untraced passes), charged per kernel output word at
/// `memory.output_overhead_ns_per_word`. The trace does not say which kernels allocate or copy,
/// so the term is spread evenly over output words; `basalt sim calibrate` measures it on a
/// hold-out operation (rescale), never on the key switch / HMult it is validated against.
fn alloc_cycles(m: &Machine, k: &Kernel) -> f64 {
    let Some(ns) = m.memory.output_overhead_ns_per_word else { return 0.0 };
    let words = match *k {
        Kernel::Ntt { n, limbs }
        | Kernel::Intt { n, limbs }
        | Kernel::Elem { n, limbs, .. }
        | Kernel::Automorph { n, limbs, .. }
        | Kernel::KeyGen { n, limbs } => n as f64 * limbs as f64,
        Kernel::BConv { n, to, .. } => n as f64 * to as f64,
        _ => 0.0,
    };
    words * ns * m.clock_ghz
}

/// Residue polynomials of `n` words that `k` reads and writes when nothing is chained: INTT,
/// NTT and automorphism 1 + 1, add/sub/multiply 2 + 1, multiply-accumulate 3 + 1, scalar
/// multiply/negate 1 + 1, a regenerated key half 0 + 1. A base conversion without a CRB is
/// `from · to` products and sums through the file: each product reads its input residue and
/// writes the product (1 + 1), each sum reads the product and the partial sum and writes the
/// partial sum (2 + 1) (CraterLake §3: "an overwhelming amount of register file port
/// pressure"). `None` for loads, stores and TFHE steps.
fn operand_polys(k: &Kernel) -> Option<(u32, u64, u64)> {
    Some(match *k {
        Kernel::Ntt { n, limbs }
        | Kernel::Intt { n, limbs }
        | Kernel::Automorph { n, limbs, .. } => (n, limbs as u64, limbs as u64),
        Kernel::Elem { n, limbs, op } => {
            let reads = match op {
                ElemOp::Add | ElemOp::Sub | ElemOp::Mul => 2,
                ElemOp::MulAcc => 3,
                ElemOp::MulScalar | ElemOp::Neg => 1,
            };
            (n, reads * limbs as u64, limbs as u64)
        }
        Kernel::KeyGen { n, limbs } => (n, 0, limbs as u64),
        Kernel::BConv { n, from, to } => {
            let pairs = from as u64 * to as u64;
            (n, 3 * pairs, 2 * pairs)
        }
        _ => return None,
    })
}

/// Cycles one register-file port of `lanes` elements per cycle needs for `k`'s operands when
/// nothing is chained (`operand_polys`).
pub fn rf_port_cycles(k: &Kernel, lanes: u32) -> f64 {
    operand_polys(k).map_or(0.0, |(n, r, w)| (r + w) as f64 * ceil_div(n as u64, lanes as u64))
}

/// Residue polynomials one key-switch inner product holds per residue (Listing 1: the raised
/// input, the two hint halves and the two accumulators); a cluster register file that holds
/// fewer cannot keep a key switch's operands between kernels.
const KS_WORKING_SET: f64 = 5.0;

/// Words `k` moves over a residue-tiled crossbar, (into the clusters, out of them)
/// (CraterLake §4.3). A base conversion sends every input residue to each cluster that
/// computes an output residue: `N · from · min(G, to)` words. With a two-level store whose
/// cluster register files cannot hold a key switch's working set (F1+ at N = 64K: 1 MB holds
/// four 256 KB residue polynomials), every other kernel also reads its operands from the
/// scratchpad and writes its results back across the crossbar (`operand_polys`); a base
/// conversion then writes its `to` results back, its products and partial sums staying in the
/// cluster.
pub fn crossbar_words(k: &Kernel, x: &Crossbar, word_bytes: f64) -> (f64, f64) {
    let Some((n, reads, writes)) = operand_polys(k) else { return (0.0, 0.0) };
    let n = n as f64;
    let streams = x.cluster_rf_bytes.is_some_and(|rf| rf < KS_WORKING_SET * n * word_bytes);
    match *k {
        Kernel::BConv { from, to, .. } => {
            let broadcast = n * from as f64 * x.clusters.min(to) as f64;
            (broadcast, if streams { n * to as f64 } else { 0.0 })
        }
        _ if streams => (n * reads as f64, n * writes as f64),
        _ => (0.0, 0.0),
    }
}

/// Reject kernels recorded for parameters the machine cannot hold.
pub(crate) fn check_fits(m: &Machine, k: &Kernel) -> Result<(), SimError> {
    let (n, moduli) = match *k {
        Kernel::Ntt { n, .. }
        | Kernel::Intt { n, .. }
        | Kernel::Elem { n, .. }
        | Kernel::Automorph { n, .. }
        | Kernel::KeyGen { n, .. }
        | Kernel::PlainLoad { n, .. } => (n, 0),
        Kernel::KeyLoad { n, limbs, .. }
        | Kernel::CtLoad { n, limbs, .. }
        | Kernel::CtStore { n, limbs, .. } => (n, limbs),
        // A ksk row is an LWE of `out_dim + 1` words, not a polynomial.
        Kernel::TfheKeyLoad { .. } => return Ok(()),
        Kernel::BConv { n, from, to } => (n, from + to),
        Kernel::Tfhe { step, size, .. } => {
            // Key switching's and modulus switching's `size` is an LWE size, not a polynomial.
            if matches!(step, TfheStep::KeySwitch | TfheStep::ModSwitch) {
                return Ok(());
            }
            (size, 0)
        }
    };
    let mismatch = |what: &str, found: u64, limit: u64| SimError::TraceMismatch {
        machine: m.name.clone(),
        what: what.into(),
        found,
        limit,
    };
    if n > m.max_ring_degree {
        return Err(mismatch("ring degree", n as u64, m.max_ring_degree as u64));
    }
    if !n.is_power_of_two() {
        return Err(SimError::BadTrace(format!("ring degree {n} is not a power of two")));
    }
    if let Some(max) = m.max_moduli
        && moduli > max
    {
        return Err(mismatch("RNS moduli", moduli as u64, max as u64));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::machine::{Unit, UnitClass};

    /// A bare unit for hand-computed cases.
    pub fn unit(class: UnitClass, count: u32, lanes: u32) -> Unit {
        Unit {
            name: format!("{class:?}"),
            class,
            serves: vec![],
            count,
            lanes,
            latency_cycles: 0,
            style: None,
            rows: None,
            stage_overhead_cycles: None,
            area_mm2: None,
            power_w: None,
            pj_per_action: None,
            mm2_per_lane: None,
            pools: vec![],
            source: "test".into(),
        }
    }
}
