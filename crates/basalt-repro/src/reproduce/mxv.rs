//! HE-MxV rows: Table VI primitive cycles (one PE), Table V key-switch throughput (a stream of
//! independent key switches on the whole machine), the Table VII DSP, BRAM and URAM counts, and
//! the Fig. 1 / Fig. 3 DRAM-traffic statements from the paper's own cost model, equations
//! (1)–(12) (§III-B). docs/reproduction-notes.md, "HE-MxV Table V and VII", gives the readings.

use std::path::Path;

use basalt_trace::{ElemOp, Event, Kernel, Trace};

use crate::reproduce::{Computed, Traces, computed, machine};
use basalt_sim::machine::Machine;

use crate::program::{BasicOp, OpParams, Program};
use basalt_sim::simulate;

use crate::ReproError;

/// Data entities of HE MxV with their total DRAM read cost without reuse and their size
/// (the one-time cost once kept on chip), eqs. (1)–(12) with ⌈2n/N⌉ = 1.
#[derive(Clone, Debug, PartialEq)]
pub struct Entity {
    pub name: &'static str,
    pub cost: f64,
    pub size: f64,
}

/// Eqs. (1)–(12) for an m-row matrix, ring degree `big_n`, `l` residues, `b` bytes/coefficient.
pub fn entities(m: f64, big_n: f64, l: f64, b: f64) -> Vec<Entity> {
    let b_ct = 2.0 * l * big_n * b; // (1)
    let b_pt = l * big_n * b; // (3)
    let b_tf = l * big_n * b; // (5)
    let b_ksk = l * (l + 1.0) * big_n * b; // (6)
    let k = (big_n / (2.0 * m)).floor().max(1.0);
    let log_k = k.log2().ceil();
    vec![
        Entity { name: "ntt twiddles", cost: m * b_tf * (l + 4.0), size: b_tf }, // (7)
        Entity { name: "intt twiddles", cost: m * b_tf * (1.0 + 2.0 / l), size: b_tf }, // (8)
        Entity { name: "partial sum ct", cost: m * b_ct * l, size: b_ct },       // (10)
        Entity { name: "input ct", cost: m * b_ct, size: b_ct },                 // (9)
        Entity { name: "matrix", cost: m * b_pt, size: f64::INFINITY },          // (11), no reuse
        Entity { name: "keys", cost: 2.0 * b_ksk * (m + log_k), size: f64::INFINITY }, // (12)
    ]
}

fn one_pe(mut m: Machine) -> Machine {
    for u in &mut m.units {
        u.count = 1;
    }
    m
}

fn dsp(m: &Machine) -> f64 {
    // 17 DSPs per modular multiplier (§V, Table VII): c per MAC array + c/2 per NTT-core set.
    let mults: u32 = m
        .units
        .iter()
        .map(|u| match u.name.as_str() {
            "mac" => u.lanes * u.count,
            "ntt" => u.lanes / 2 * u.count,
            _ => 0,
        })
        .sum();
    17.0 * mults as f64
}

/// PEs of the Set-A bitstream: g = 4 groups x p = 3 (Table III).
const SET_A_PES: u32 = 12;
/// Scratchpad banks per PE, b = 3 (Table III).
const BANKS: u32 = 3;
/// Xilinx UltraScale+ block memories: a URAM is 4096 x 72 bits, a BRAM36 512 x 72 bits at its
/// widest (U200 data sheet; outside the paper). A 64-bit coefficient takes one 72-bit row.
const URAM_DEPTH: f64 = 4096.0;
const BRAM36_DEPTH: f64 = 512.0;

/// Throughput of a stream of independent key switches (what HEAX reports, Table V): the PE
/// groups work on different key switches (§IV-A, partial-sum parallelism), every functional
/// unit is fully pipelined (§IV-B) and keys stream from DRAM while the PEs compute, so in the
/// steady state one key switch retires per occupancy of the busiest resource. The SPN and the
/// NTT cores form one block (NTT, INTT and automorphism), and base conversion runs on the
/// modular MAC array (machine file), so their busy times add. Returns (per second, bottleneck).
fn stream_throughput(m: &Machine, r: &basalt_sim::Report) -> (f64, &'static str) {
    let busy = |names: &[&str]| -> f64 {
        r.units.iter().filter(|u| names.contains(&u.name.as_str())).map(|u| u.busy_cycles).sum()
    };
    let dram = r.traffic.total() / (m.memory.hbm_gbps * 1e9) * m.hz();
    let candidates = [
        (busy(&["ntt", "spn"]), "SPN + NTT-core occupancy"),
        (busy(&["mac", "bconv"]), "MAC-array occupancy"),
        (dram, "key load from DRAM"),
    ];
    let (cycles, what) =
        candidates.into_iter().fold((0.0, ""), |a, b| if b.0 > a.0 { b } else { a });
    (m.hz() / cycles, what)
}

/// BRAM36 and URAM counts that follow from the architecture (§IV-B): the SPN's temporal
/// permutation uses c dual-port memories per PE, each holding N_max/c coefficients, so its
/// size "grows with the maximum supported degree" (§V-B, BRAM); the scratchpad (URAM, "stores
/// the polynomials") has b banks of entries of c coefficients, one URAM column per lane.
fn memories(m: &Machine, max_n: u32) -> (f64, f64) {
    let Some(pe) = m.units.iter().find(|u| u.name == "mac") else { return (0.0, 0.0) };
    let (pes, c) = (pe.count as f64, pe.lanes as f64);
    let bram = pes * c * (max_n as f64 / c / BRAM36_DEPTH).ceil();
    let per_pe = m.memory.onchip_mib * 1024.0 * 1024.0 / pes;
    let bank_depth = per_pe / BANKS as f64 / (c * m.word_bits as f64 / 8.0);
    let uram = pes * BANKS as f64 * c * (bank_depth / URAM_DEPTH).ceil();
    (bram, uram)
}

pub fn compute(data: &Path, traces: &Traces) -> Result<Vec<Computed>, ReproError> {
    let m = machine(data, "mxv_u200")?;
    let pe = one_pe(m.clone());
    let n = 1u32 << 14;
    let mut out = Vec::new();
    // Table VI times one primitive: a trace of that one kernel.
    let cycles = |k: Kernel| -> Result<f64, ReproError> {
        Ok(simulate(&pe, &Trace { events: vec![Event::Kernel(k)] })?.cycles)
    };
    let ntt = "one PE of mxv_u200.toml; stage overhead 23 was FITTED to this row";
    out.push(computed("VI", "NTT/INTT", "cycles", cycles(Kernel::Ntt { n, limbs: 1 })?, ntt));
    let auto = cycles(Kernel::Automorph { n, limbs: 1, galois: 5 })?;
    out.push(computed("VI", "Automorphism", "cycles", auto, "one PE: N/c"));
    let elem = cycles(Kernel::Elem { n, limbs: 1, op: ElemOp::MulAcc })?;
    out.push(computed("VI", "Element-wise", "cycles", elem, "one PE: N/c"));

    // Set-B (N = 2^14, l = 7 limbs, dnum = l, one special prime): the library's key switch.
    let params = OpParams::Preset { name: "MXV_SET_B".into(), level: 6 };
    let p = Program::BasicOp { params, op: BasicOp::KeySwitch, seeded: false };
    if let Some(ks) = traces.program(&p)? {
        let r = simulate(&m, &ks)?;
        let (kps, bound) = stream_throughput(&m, &r);
        let how = &format!(
            "library trace: key switch on MXV_SET_B's top level (l = 7, dnum = l, 1 special \
             prime; Alg. 2), mxv_u200; a stream of independent key switches, one per PE group, \
             retires one per {bound} (one alone: {:.0} /s)",
            1.0 / r.seconds
        );
        out.push(computed("V", "Our Design", "key switch throughput", kps, how));
        let s = kps / 2616.0;
        out.push(computed("V", "Our Design vs HEAX", "speedup", s, "ours / quoted HEAX"));
    }

    let res = "resource model: 17 DSP x modular multipliers of the machine file";
    out.push(computed("VII", "Set-B/C", "DSP", dsp(&m), res));
    let mut set_a = m.clone();
    for u in &mut set_a.units {
        u.count = SET_A_PES; // Set-A: g = 4 groups x p = 3 PEs (Table III)
    }
    // The same 1.5 MiB scratchpad per PE in both bitstreams (Table III).
    set_a.memory.onchip_mib *= SET_A_PES as f64 / m.units[0].count as f64;
    out.push(computed("VII", "Set-A", "DSP", dsp(&set_a), res));
    for (row, mach, max_n) in [("Set-B/C", &m, m.max_ring_degree), ("Set-A", &set_a, 1 << 13)] {
        let (bram, uram) = memories(mach, max_n);
        let how = "SPN temporal buffers: c memories of N_max/c words per PE in 512 x 72 BRAM36";
        out.push(computed("VII", row, "BRAM", bram, how));
        let how = "scratchpads: b = 3 banks x c lanes per PE, 4096-deep 72-bit URAMs";
        out.push(computed("VII", row, "URAM", uram, how));
    }

    // Fig. 1 / Fig. 3: 1K x 1K, N = 2^14, l = 7, bytes/coefficient from the machine file.
    let ents = entities(1024.0, n as f64, 7.0, m.bytes_per_word());
    let total: f64 = ents.iter().map(|e| e.cost).sum();
    let eq = "HE-MxV eqs (1)-(12), m = n = 1024, N = 2^14, l = 7";
    let input = ents.iter().find(|e| e.name == "input ct").map_or(0.0, |e| e.cost);
    out.push(computed("fig1", "input vector", "share of DRAM read traffic", input / total, eq));
    out.push(computed("fig3", "baseline", "DRAM read traffic", total / 1e9, eq));
    let (mut traffic, mut sram) = (total, 0.0);
    for (row, ent) in [
        ("+ NTT twiddles", "ntt twiddles"),
        ("+ INTT twiddles", "intt twiddles"),
        ("+ partial sum ct", "partial sum ct"),
        ("+ input ct", "input ct"),
    ] {
        let e = ents.iter().find(|e| e.name == ent).expect("entity list is fixed");
        traffic += e.size - e.cost;
        sram += e.size;
        let how = "eqs (1)-(12); an on-chip entity costs one load (Fig. 3 order)";
        out.push(computed("fig3", row, "DRAM read traffic", traffic / 1e9, how));
    }
    out.push(computed(
        "fig3",
        "+ input ct",
        "minimal SRAM",
        sram / 1e6,
        "sum of the reused entity sizes",
    ));
    Ok(out)
}
