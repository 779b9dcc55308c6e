//! Strix rows: PBS throughput, latency and required HBM bandwidth from the closed-form PBS
//! stream (`synth::tfhe`) on `data/machines/strix.toml` (docs/reproduction-notes.md, "Strix latency and
//! Table VII").
//!
//! Throughput of a steady stream of epochs: an epoch of TvLP × core_batch LWEs spends `BR` cycles
//! in its PBS regions and `KS` cycles in key switching; KS of epoch e overlaps BR of epoch e+1
//! (Strix §IV-C), so one epoch retires every max(BR, KS) cycles.

use std::path::Path;

use crate::pbs_epoch::{self, PLP, PROVENANCE, STRIX_SETS};
use crate::reproduce::{Computed, computed, machine};
use basalt_sim::machine::{Batching, Machine};
use basalt_sim::report::{RegionStat, Report};
use basalt_sim::simulate;
use basalt_tfhe::TfheParams;

use crate::ReproError;

const LATENCY: &str = "one LWE on one core: n iterations of the busiest unit (bsk streaming, \
     no refill; reading from Table VI's pair) + its key switch on the KS cluster";

struct Run {
    throughput: f64,
    /// HBM bytes per second of compute (a "required bandwidth" in the sense of Table VII).
    required_gbps: f64,
}

fn tvlp(m: &Machine) -> u32 {
    m.units.iter().find(|u| u.name == "vma").map_or(1, |u| u.count)
}

fn run(m: &Machine, p: &TfheParams) -> Result<Run, ReproError> {
    let core = match m.switches.batching {
        Some(Batching::Device) => 1,
        _ => m.switches.core_batch.unwrap_or(1),
    };
    let batch = tvlp(m) * core;
    let t = pbs_epoch::record(p, batch as usize, PLP);
    let r = simulate(m, &t)?;
    let sum = |prefix: &str, f: fn(&RegionStat) -> f64| region_sum(&r, prefix, f);
    let br = sum("PBS", |s| s.cycles);
    let br_compute = br - sum("PBS", |s| s.stall_cycles);
    let ks = sum("KeySwitch", |s| s.cycles);
    let ks_compute = ks - sum("KeySwitch", |s| s.stall_cycles);
    let period = br.max(ks);
    Ok(Run {
        throughput: batch as f64 * m.hz() / period,
        required_gbps: r.traffic.total() / (br_compute.max(ks_compute) / m.hz()) / 1e9,
    })
}

/// PBS latency of one LWE alone on one core (TvLP = 1, core batch 1), key switch included.
///
/// * What a "PBS" is: the operation whose throughput Table V reports is a PBS followed by its
///   key switch (the output goes to the KS cluster, §IV-C; our throughput period is
///   max(BR, KS)), and the TFHE library that set I comes from ends its bootstrap in the key
///   switch (`tfhe_bootstrap_FFT` = `tfhe_bootstrap_woKS_FFT` + `lweKeySwitch`). So the
///   latency is blind rotation + sample extraction + key switching.
/// * Blind rotation: n iterations at the busiest unit's rate, each waiting for its GGSW
///   bsk[i] on the bsk channels (a lone LWE cannot reuse it; §VI-C: high CLP is memory-bound
///   because "the time gap to fetch the next key became smaller"). No per-iteration pipeline
///   refill: Table VI's two latencies differ by exactly n × ΔT_iter (0.27 − 0.16 ms =
///   500 × 256 cycles), so the paper charges no fill that grows with the FFT length.
/// * Key switching: the LWE's k·N·l_k × (n+1) MACs on its core's KS cluster; the ksk tiles are
///   the batch's shared stream (§IV-C), not a per-LWE wait, so only the cluster's compute counts.
fn latency(m: &Machine, p: &TfheParams) -> Result<f64, ReproError> {
    let clp = m.units.iter().find(|u| u.name == "fft").map_or(4, |u| u.lanes);
    let one = design_point(m.clone(), 1, clp);
    let r = simulate(&one, &pbs_epoch::record(p, 1, PLP))?;
    let pbs = region_sum(&r, "PBS", |s| s.cycles);
    let ks = region_sum(&r, "KeySwitch", |s| s.cycles - s.stall_cycles);
    Ok((pbs + ks) / one.hz())
}

/// Σ `f` over the regions whose path starts with `prefix` (e.g. every blind-rotation window).
fn region_sum(r: &Report, prefix: &str, f: fn(&RegionStat) -> f64) -> f64 {
    r.regions.iter().filter(|(k, _)| k.starts_with(prefix)).map(|(_, v)| f(v)).sum()
}

/// Strix §IV-B / Table VI: without folding the FFT handles N points in N/CLP cycles and "all
/// units in the core must utilize a 4-lane implementation to match the bandwidth".
fn no_folding(mut m: Machine) -> Machine {
    m.switches.folding = Some(false);
    let clp = m.units.iter().find(|u| u.name == "fft").map_or(4, |u| u.lanes);
    for name in ["rotator", "decomposer", "accumulator"] {
        if let Some(u) = m.unit_mut(name) {
            u.lanes = clp;
        }
    }
    m
}

/// Table VII design points: TvLP cores, CLP complex FFT lanes; the other units scale as in
/// the chosen design (2·CLP lanes; VMA CLP·PLP·CoLP; KS lanes matched to PBS throughput).
fn design_point(mut m: Machine, tvlp: u32, clp: u32) -> Machine {
    for u in &mut m.units {
        let (count, lanes) = match u.name.as_str() {
            "fft" | "ifft" => (2 * tvlp, clp),
            "rotator" | "decomposer" | "accumulator" => (2 * tvlp, 2 * clp),
            "vma" => (tvlp, 4 * clp),
            "keyswitch" => (tvlp, 16 * clp),
            _ => continue,
        };
        u.count = count;
        u.lanes = lanes;
    }
    m
}

/// The Strix rows. Every epoch is the library's shape-only recording, which needs no keys, so
/// no trace source is asked.
pub fn compute(data: &Path) -> Result<Vec<Computed>, ReproError> {
    let m = machine(data, "strix")?;
    let sets: Vec<(&str, TfheParams)> = STRIX_SETS
        .iter()
        .map(|&(name, preset)| Ok((name, pbs_epoch::preset(preset)?)))
        .collect::<Result<_, String>>()
        .map_err(|message| ReproError::TraceSource { program: "Strix sets".into(), message })?;
    let mut out = Vec::new();
    let mut by_set = Vec::new();
    let how = format!("{PROVENANCE}: epoch of TvLP x core_batch LWEs; period max(BR, KS)");
    for (name, p) in &sets {
        let r = run(&m, p)?;
        let row = format!("Strix {name}");
        out.push(computed("V", &row, "throughput", r.throughput, &how));
        out.push(computed("V", &row, "latency", latency(&m, p)? * 1e3, LATENCY));
        by_set.push(r.throughput);
    }
    for (row, base, i) in [
        ("Strix I vs Concrete", 70.0, 0),
        ("Strix I vs NuFHE", 2000.0, 0),
        ("Strix I vs Matcha", 10_000.0, 0),
        ("Strix IV vs Concrete", 1.0, 3),
    ] {
        let how = "our throughput / the paper's quoted baseline throughput";
        out.push(computed("V", row, "speedup", by_set[i] / base, how));
    }

    let fold = by_set[0];
    let nofold = run(&no_folding(m.clone()), &sets[0].1)?.throughput;
    let how_nf = "as Table V, folding = false and rotator/decomposer/accumulator at CLP lanes";
    out.push(computed("VI", "with folding", "throughput", fold, &how));
    out.push(computed("VI", "no folding", "throughput", nofold, how_nf));
    out.push(computed("VI", "improvement", "throughput", fold / nofold, "ratio of the two rows"));
    let lat_fold = latency(&m, &sets[0].1)? * 1e3;
    let lat_nofold = latency(&no_folding(m.clone()), &sets[0].1)? * 1e3;
    out.push(computed("VI", "with folding", "latency", lat_fold, LATENCY));
    out.push(computed("VI", "no folding", "latency", lat_nofold, LATENCY));
    out.push(computed(
        "VI",
        "improvement",
        "latency",
        lat_nofold / lat_fold,
        "ratio of the two rows",
    ));

    // Table III bookkeeping and energy per PBS at peak power.
    let area = m.area_mm2().unwrap_or(0.0);
    let power: f64 = m.units.iter().filter_map(|u| m.unit_peak_power_w(u)).sum::<f64>()
        + m.components.iter().filter_map(|c| c.power_w).sum::<f64>();
    let bk = "bookkeeping: sum of the per-instance values transcribed into strix.toml";
    out.push(computed("III", "total", "area", area, bk));
    out.push(computed("III", "total", "power", power, bk));
    let e = power / fold * 1e3;
    out.push(computed(
        "III",
        "total",
        "energy per PBS (set I)",
        e,
        "machine power / our set-I throughput",
    ));

    // Table VII (validation): set IV at the five TvLP/CLP design points.
    let set_iv = &sets[3].1;
    for (tv, clp) in [(16, 2), (8, 4), (4, 8), (2, 16), (1, 32)] {
        let point = design_point(m.clone(), tv, clp);
        let r = run(&point, set_iv)?;
        let row = format!("TvLP{tv} CLP{clp}");
        let how = "set IV on strix.toml rescaled to this TvLP/CLP; epoch period max(BR, KS)";
        out.push(computed("VII", &row, "throughput", r.throughput, how));
        let bw = "HBM bytes (bsk per iteration + ksk per epoch) / compute-bound epoch time";
        out.push(computed("VII", &row, "required bandwidth", r.required_gbps, bw));
        out.push(computed("VII", &row, "latency", latency(&point, set_iv)? * 1e3, LATENCY));
    }
    Ok(out)
}
