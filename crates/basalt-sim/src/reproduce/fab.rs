//! FAB rows: Table 5 basic operations and the Table 6 NTT row, from the closed-form CKKS
//! streams on `fab.toml`. The paper does not state the level of Table 5; we use the top level
//! (24 Q limbs, dnum = 3, 8 P limbs), which the digest (§5.2) shows overshoots Rescale and
//! Rotate — the ratio column says by how much. Table 7 (amortised bootstrapping) comes from the
//! library's traces of FAB's bootstrap and of HMult at each level left.

use std::path::Path;

use basalt_trace::Kernel;

use crate::reproduce::{Computed, Traces, computed, machine};
use crate::synth::ckks::KsShape;
use crate::synth::{Builder, Program, Workload};
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
    out.extend(table7(&m, traces)?);
    Ok(out)
}

/// Levels left after FAB's bootstrap: L − L_boot = 23 − (2·fftIter + 9) = 6 (digest §1.5; the
/// `FAB` circuit of `bootstrap::config::for_preset` has exactly this budget).
const LEVELS_LEFT: u32 = 6;
/// Slots of FAB's fully packed bootstrap.
const SLOTS: f64 = 32_768.0;

/// Table 7: T_mult,a/slot = (T_boot + Σ_{i=1}^{ℓ} T_mult(i)) / (ℓ·n), FAB's Eq. 2 with ℓ levels
/// left and n slots, T_mult(i) = HMult (tensor, relinearise, rescale) of two level-i
/// ciphertexts. Every term is a library trace on `fab.toml` (hybrid key switching, full keys: FAB
/// has no key generator). The other works' rows divide their quoted times by ours; the cycle
/// speedups scale by the clock ratio as the paper does (FAB at 300 MHz).
fn table7(m: &crate::machine::Machine, traces: &Traces) -> Result<Vec<Computed>, SimError> {
    let boot =
        Program::Bootstrap { preset: "FAB".into(), log_slots: None, dft: None, seeded: false };
    let Some(t) = traces.program(&boot)? else { return Ok(Vec::new()) };
    let t_boot = simulate(m, &t)?.seconds;
    let mut t_mults = 0.0;
    for level in 1..=LEVELS_LEFT {
        let p = Program::HMult { preset: "FAB".into(), level, seeded: false };
        let Some(t) = traces.program(&p)? else { return Ok(Vec::new()) };
        t_mults += simulate(m, &t)?.seconds;
    }
    let us = (t_boot + t_mults) / (LEVELS_LEFT as f64 * SLOTS) * 1e6;
    let how = format!(
        "library traces on fab.toml: bootstrap (FAB circuit, 2^15 slots) {:.1} ms + HMult at levels 1..6 {:.2} ms, over 6 x 2^15",
        t_boot * 1e3,
        t_mults * 1e3
    );
    let mut out = vec![computed("7", "FAB", "T_mult a/slot", us, &how)];
    // (work, quoted µs, clock in GHz)
    let others = [
        ("Lattigo", 101.78, 3.5),
        ("GPU-1", 0.740, 1.2),
        ("GPU-2", 0.716, 1.2),
        ("F1", 254.46, 1.0),
        ("BTS-2", 0.0455, 1.2),
    ];
    for (work, theirs, ghz) in others {
        let s = theirs / us;
        out.push(computed("7", work, "speedup (time)", s, "quoted time / our FAB T_mult a/slot"));
        out.push(computed(
            "7",
            work,
            "speedup (cycles)",
            s * ghz / 0.3,
            "time speedup x (their clock / FAB's 0.3 GHz)",
        ));
    }
    Ok(out)
}
