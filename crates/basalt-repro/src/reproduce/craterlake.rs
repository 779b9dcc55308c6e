//! CraterLake rows: Table 1 operation counts from the closed-form key-switching streams
//! (`synth::ckks`, Listing 1 and the standard per-limb algorithm), and Table 2 area bookkeeping.
//! Bootstrapping rows of Tables 3–5 from the library's traces of the reconstructed chains
//! (`CRATERLAKE_80_BOOT`, `_UNPACKED`, `CRATERLAKE_128_BOOT`, `CRATERLAKE_200_BOOT`); the
//! application rows live in their own modules. F1+ and the Table 4
//! "F1+ network" column share one crossbar model (residue-polynomial tiling, §4.3).

use std::path::Path;

use basalt_trace::{ElemOp, KernelKind, Trace};

use crate::program::{Program, Workload};
use crate::reproduce::craterlake_security::{LEVELS, ring_degree};
use crate::reproduce::{Computed, Traces, computed, constituent, machine};
use basalt_sim::machine::Machine;
use basalt_sim::simulate;
use basalt_sim::synth::ckks::KsShape;

use crate::ReproError;

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

pub fn compute(data: &Path, traces: &Traces) -> Result<Vec<Computed>, ReproError> {
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
    let fus = m.datapath_area_mm2().unwrap_or(0.0);
    let total = m.area_mm2().unwrap_or(0.0);
    let bk = "bookkeeping: sum of the per-FU areas transcribed into craterlake.toml";
    out.push(computed("2", "Total FUs", "area", fus, bk));
    out.push(computed("2", "Total CraterLake", "area", total, bk));
    out.extend(bootstrap(data, traces)?);
    Ok(out)
}

/// Lattigo CPU times CraterLake quotes (Table 3), for the speedup rows.
const CPU_PACKED_MS: f64 = 17_200.0;
const CPU_UNPACKED_MS: f64 = 877.0;

/// CraterLake, F1+ and Table 4's three ablations of CraterLake (KSHGen off, CRB/chaining off,
/// F1+'s crossbar network): every Table 3/4 row times one trace on these five machines.
pub(crate) struct Ablations {
    pub cl: Machine,
    pub f1: Machine,
    pub no_kshgen: Machine,
    pub no_crb: Machine,
    pub network: Machine,
    /// Fig. 11's register-file sweep ends: CraterLake with a 100 MB and a 300 MB register file.
    pub rf_small: Machine,
    pub rf_large: Machine,
}

/// Fig. 11's register-file sizes (MB, the paper's unit for its 256 MB file, which
/// `craterlake.toml` holds as `memory.onchip_mib = 256`).
pub(crate) const RF_SMALL_MB: u32 = 100;
pub(crate) const RF_LARGE_MB: u32 = 300;
/// Fig. 11's two metrics per benchmark.
pub(crate) const RF_SLOWDOWN: &str = "slowdown at 100 MB RF";
pub(crate) const RF_SPEEDUP: &str = "speedup at 300 MB RF";

/// How a benchmark's time on one machine is measured (ms), and how its trace on a named
/// machine file is described (the report's `how`).
pub(crate) type TimeOn<'a> = &'a dyn Fn(&Machine) -> Result<f64, ReproError>;
pub(crate) type HowOn<'a> = &'a dyn Fn(&Machine, &str) -> Result<String, ReproError>;

impl Ablations {
    /// Table 3's four rows (`r3`: CraterLake and F1+ times, speedup over F1+, quoted CPU time
    /// over ours) and Table 4's three (`r4`, as Table 4 spells the benchmark: each ablation over
    /// the baseline) for one benchmark, with our CraterLake time for the callers' Table 5 rows.
    pub(crate) fn rows(
        &self,
        (r3, r4): (&str, &str),
        cpu_ms: f64,
        ms: TimeOn,
        how: HowOn,
    ) -> Result<(Vec<Computed>, f64), ReproError> {
        let (t_cl, t_f1) = (ms(&self.cl)?, ms(&self.f1)?);
        let mut out = vec![
            computed("3", r3, "CraterLake time", t_cl, &how(&self.cl, "craterlake.toml")?),
            computed("3", r3, "F1+ time", t_f1, &how(&self.f1, "f1plus.toml")?),
            computed("3", r3, "speedup vs F1+", t_f1 / t_cl, "our F1+ / our CraterLake time"),
            computed(
                "3",
                r3,
                "speedup vs CPU",
                cpu_ms / t_cl,
                "quoted CPU time / our CraterLake time",
            ),
        ];
        for (metric, m, what) in [
            ("speedup vs no KSHGen", &self.no_kshgen, "switches.kshgen=false"),
            ("speedup vs no CRB/chaining", &self.no_crb, "switches.crb_chaining=false"),
            ("speedup vs F1+ network", &self.network, "switches.network=crossbar (residue tiling)"),
        ] {
            let how = how(m, &format!("craterlake.toml with {what}, over the baseline"))?;
            out.push(computed("4", r4, metric, ms(m)? / t_cl, &how));
        }
        out.extend(self.register_file(r3, t_cl, ms)?);
        Ok((out, t_cl))
    }

    /// Fig. 11's sweep ends for one benchmark (`r3`, Table 3's spelling), as constituents of
    /// its summary rows (`gmean::summaries`): the slowdown with a 100 MB register file and the
    /// speedup with a 300 MB one, both against our 256 MB time `t_cl`.
    pub(crate) fn register_file(
        &self,
        r3: &str,
        t_cl: f64,
        ms: TimeOn,
    ) -> Result<Vec<Computed>, ReproError> {
        let how = |mb| format!("craterlake.toml with memory.onchip_mib={mb}, against 256");
        Ok(vec![
            constituent("11", r3, RF_SLOWDOWN, ms(&self.rf_small)? / t_cl, &how(RF_SMALL_MB)),
            constituent("11", r3, RF_SPEEDUP, t_cl / ms(&self.rf_large)?, &how(RF_LARGE_MB)),
        ])
    }

    pub(crate) fn load(data: &Path) -> Result<Ablations, ReproError> {
        let cl = data.join("machines/craterlake.toml");
        let off = |set: &str| Machine::load_with(&cl, &[set]);
        Ok(Ablations {
            f1: Machine::load(data.join("machines/f1plus.toml"))?,
            no_kshgen: off("switches.kshgen=false")?,
            no_crb: off("switches.crb_chaining=false")?,
            network: off("switches.network=crossbar")?,
            rf_small: off(&format!("memory.onchip_mib={RF_SMALL_MB}"))?,
            rf_large: off(&format!("memory.onchip_mib={RF_LARGE_MB}"))?,
            cl: Machine::load(&cl)?,
        })
    }
}

fn boot(preset: &str, seeded: bool) -> Program {
    Program::Bootstrap { preset: preset.into(), log_slots: None, dft: None, seeded }
}

/// Table 3 (CraterLake and F1+ times, speedups), Table 4 (KSHGen and CRB/chaining ablations,
/// validation) for packed and unpacked bootstrapping, Table 5 (128- and 200-bit, validation)
/// for packed. Each
/// bootstrap is one library trace of the chain's circuit with the automatic DFT plan; seeded
/// keys, so that a machine with an enabled KSHGen loads half of each key and one without (F1+,
/// or CraterLake with `switches.kshgen=false`) loads all of it.
fn bootstrap(data: &Path, traces: &Traces) -> Result<Vec<Computed>, ReproError> {
    let ablations = Ablations::load(data)?;
    let Ablations { cl, f1, no_kshgen, no_crb, network, .. } = &ablations;
    let ms =
        |m: &Machine, t: &Trace| -> Result<f64, ReproError> { Ok(simulate(m, t)?.seconds * 1e3) };
    let mut out = Vec::new();
    let rows = [
        (
            "Packed Bootstrapping",
            "CRATERLAKE_80_BOOT",
            CPU_PACKED_MS,
            "2^15 slots, 56 -> 22 residues, single-hoisted DFTs",
        ),
        (
            "Unpacked bootstrapping",
            "CRATERLAKE_80_BOOT_UNPACKED",
            CPU_UNPACKED_MS,
            "1 slot, N = 2^14 (F1's ring), 22 -> 2 residues, single-hoisted DFTs",
        ),
    ];
    let mut packed_80 = None;
    for (row, preset, cpu, what) in rows {
        let Some(t) = traces.program(&boot(preset, true))? else { return Ok(Vec::new()) };
        let how = |m: &str| {
            format!("library trace: bootstrap, {preset} (reconstructed), {what}, seeded keys, {m}")
        };
        let t_cl = ms(cl, &t)?;
        let t_f1 = ms(f1, &t)?;
        out.push(computed("3", row, "CraterLake time", t_cl, &how("craterlake.toml")));
        out.push(computed(
            "3",
            row,
            "F1+ time",
            t_f1,
            &how("f1plus.toml (no CRB: BConv on its multiply/add FUs; no KSHGen; residue tiling over a 32 x 256-word crossbar, operands streamed between the scratchpad and the 1 MB cluster RFs when a key switch's residues do not fit them; boosted keyswitching at every level)"),
        ));
        out.push(computed(
            "3",
            row,
            "speedup vs F1+",
            t_f1 / t_cl,
            "our F1+ / our CraterLake time",
        ));
        out.push(computed(
            "3",
            row,
            "speedup vs CPU",
            cpu / t_cl,
            "quoted Lattigo CPU time / our CraterLake time",
        ));
        // Table 4 spells the unpacked row with a capital B.
        let row4 = if row == "Unpacked bootstrapping" { "Unpacked Bootstrapping" } else { row };
        out.push(computed(
            "4",
            row4,
            "speedup vs no KSHGen",
            ms(no_kshgen, &t)? / t_cl,
            &how("craterlake.toml with switches.kshgen=false, over the baseline"),
        ));
        out.push(computed(
            "4",
            row4,
            "speedup vs no CRB/chaining",
            ms(no_crb, &t)? / t_cl,
            &how("craterlake.toml with switches.crb_chaining=false (BConv as products and sums on the multiply/add FUs, every operand through the 12 RF ports), over the baseline"),
        ));
        out.push(computed(
            "4",
            row4,
            "speedup vs F1+ network",
            ms(network, &t)? / t_cl,
            &how("craterlake.toml with switches.network=crossbar (residue tiling: every BConv input residue to each of the 8 groups over a crossbar of the fixed network's 8192 words/cycle), over the baseline"),
        ));
        out.extend(ablations.register_file(row, t_cl, &|m| ms(m, &t))?);
        if row == "Packed Bootstrapping" {
            packed_80 = Some((t_cl, ring_degree(&t)));
        }
    }
    let Some(base) = packed_80 else { return Ok(out) };
    for level in &LEVELS {
        let Some(t) = traces.program(&boot(level.preset, true))? else { continue };
        let how = format!(
            "library trace: bootstrap, {} (reconstructed), fully packed, seeded keys, {}",
            level.preset,
            level.file()
        );
        let ours = (ms(&level.machine(data)?, &t)?, ring_degree(&t));
        out.extend(level.rows("Packed Bootstrapping", ours, base, &how));
    }
    Ok(out)
}
