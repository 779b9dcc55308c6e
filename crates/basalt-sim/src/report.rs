//! The result of one simulation: latency, per-unit utilisation, traffic by kind, stalls,
//! regions and energy. Serializable (JSON via serde) and printable as a text table.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::machine::UnitClass;
use crate::memory::Traffic;

/// Busy time of one unit group.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnitStat {
    pub name: String,
    pub class: UnitClass,
    pub count: u32,
    pub busy_cycles: f64,
    /// busy / total cycles.
    pub utilisation: f64,
    /// busy time × instances × the paper's per-instance power (energy per action = power/clock).
    pub energy_j: Option<f64>,
}

/// Time spent in one region path (`KeySwitch;ModUp`), exclusive of nested regions.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RegionStat {
    pub cycles: f64,
    pub stall_cycles: f64,
    pub kernels: u64,
}

/// Energy by source and chip area, with what the machine file does not give: a roll-up is
/// only as complete as the paper's tables, so the blocks it leaves out are named rather than
/// silently counted as zero.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Costs {
    /// Paper key of the machine (`none` for our own machines).
    pub paper: String,
    /// Σ unit busy time × instances × per-instance power.
    pub units_j: f64,
    /// Σ component power × latency (blocks that only have power: SRAM, PHYs, NoC).
    pub components_j: f64,
    /// HBM bytes × pJ/B; `None` when the paper gives no access energy.
    pub hbm_j: Option<f64>,
    /// Σ unit area × instances + component area; `None` when no block has an area.
    pub area_mm2: Option<f64>,
    /// The units' area alone (the datapath a lane sweep scales).
    pub datapath_area_mm2: Option<f64>,
    /// Average power over the run: energy / latency.
    pub power_w: Option<f64>,
    /// Every unit busy, every component on, HBM at full bandwidth.
    pub peak_power_w: Option<f64>,
    /// Units and components with no power figure (their energy is not in the total).
    pub no_power: Vec<String>,
    /// Units and components with no area figure.
    pub no_area: Vec<String>,
}

impl Costs {
    fn not_given(&self) -> &'static str {
        if self.paper == "none" {
            "not given by the machine file"
        } else {
            "not given by the paper"
        }
    }
}

/// Simulation report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub machine: String,
    pub clock_ghz: f64,
    pub cycles: f64,
    pub seconds: f64,
    pub compute_cycles: f64,
    /// Cycles a window waited on HBM beyond its compute.
    pub stall_cycles: f64,
    pub units: Vec<UnitStat>,
    pub traffic: Traffic,
    pub regions: BTreeMap<String, RegionStat>,
    /// Work units per kernel kind (see `basalt_trace::Kernel::units`).
    pub kernel_units: BTreeMap<String, u64>,
    /// KeyGen kernels that cost nothing because the machine loads full keys instead.
    pub skipped_keygen: u64,
    /// Identified loads (named keys, ciphertexts) served by the on-chip store, and the HBM
    /// bytes they saved.
    pub onchip_hits: u64,
    pub onchip_hit_bytes: f64,
    /// Σ unit energy + component power × time + HBM bytes × pJ/B; `None` when the machine file
    /// gives no power numbers.
    pub energy_j: Option<f64>,
    /// Energy by source and area, with the blocks the machine file gives no figure for.
    pub costs: Costs,
}

impl Report {
    /// The report of running `parts` one after the other on one machine, each `count` (≥ 1)
    /// times: times, busy cycles, traffic, regions, counts and energies add up; utilisations are
    /// recomputed over the whole. Area is the machine's, not a sum. `parts` must not be empty
    /// and must all come from the same machine.
    pub fn sequence(parts: &[(Report, u64)]) -> Report {
        let (first, c0) = &parts[0];
        assert!(parts.iter().all(|p| p.1 >= 1), "Report::sequence: counts start at 1");
        let mut out = first.clone();
        out.add_scaled(first, c0 - 1);
        for (r, count) in &parts[1..] {
            out.add_scaled(r, *count);
        }
        let total = out.cycles.max(1.0);
        out.units.iter_mut().for_each(|u| u.utilisation = u.busy_cycles / total);
        out
    }

    /// Add `count` runs of `r` (same machine) to this report's additive fields.
    fn add_scaled(&mut self, r: &Report, count: u64) {
        let c = count as f64;
        self.cycles += c * r.cycles;
        self.seconds += c * r.seconds;
        self.compute_cycles += c * r.compute_cycles;
        self.stall_cycles += c * r.stall_cycles;
        self.traffic.keys += c * r.traffic.keys;
        self.traffic.ciphertexts += c * r.traffic.ciphertexts;
        self.traffic.plaintexts += c * r.traffic.plaintexts;
        self.traffic.intermediates += c * r.traffic.intermediates;
        for (u, v) in self.units.iter_mut().zip(&r.units) {
            u.busy_cycles += c * v.busy_cycles;
            u.energy_j = u.energy_j.zip(v.energy_j).map(|(a, b)| a + c * b);
        }
        for (path, v) in &r.regions {
            let e = self.regions.entry(path.clone()).or_default();
            e.cycles += c * v.cycles;
            e.stall_cycles += c * v.stall_cycles;
            e.kernels += count * v.kernels;
        }
        for (kind, v) in &r.kernel_units {
            *self.kernel_units.entry(kind.clone()).or_default() += count * v;
        }
        self.skipped_keygen += count * r.skipped_keygen;
        self.onchip_hits += count * r.onchip_hits;
        self.onchip_hit_bytes += c * r.onchip_hit_bytes;
        self.energy_j = self.energy_j.zip(r.energy_j).map(|(a, b)| a + c * b);
        self.costs.units_j += c * r.costs.units_j;
        self.costs.components_j += c * r.costs.components_j;
        self.costs.hbm_j = self.costs.hbm_j.zip(r.costs.hbm_j).map(|(a, b)| a + c * b);
        if let Some(e) = self.energy_j.filter(|_| self.seconds > 0.0) {
            self.costs.power_w = Some(e / self.seconds);
        }
    }

    /// Busy time of a unit group by name.
    pub fn unit(&self, name: &str) -> Option<&UnitStat> {
        self.units.iter().find(|u| u.name == name)
    }

    /// Regions in folded-stack form (`a;b cycles`), for flame graphs (`regions.folded`).
    pub fn folded(&self) -> String {
        self.regions.iter().map(|(p, r)| format!("{p} {:.0}\n", r.cycles)).collect()
    }

    /// The whole report as TOML (`summary.toml`).
    pub fn summary_toml(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# report not serializable: {e}\n"))
    }

    /// One row per unit group and per region (`breakdown.csv`):
    /// `kind,name,cycles,stall_cycles,utilisation,energy_j`.
    pub fn breakdown_csv(&self) -> String {
        let mut out = String::from("kind,name,cycles,stall_cycles,utilisation,energy_j\n");
        for u in &self.units {
            let e = u.energy_j.map_or(String::new(), |e| format!("{e:.6e}"));
            out += &format!("unit,{},{:.0},,{:.4},{e}\n", u.name, u.busy_cycles, u.utilisation);
        }
        for (p, r) in &self.regions {
            let q = if p.contains(',') { format!("\"{p}\"") } else { p.clone() };
            out += &format!("region,{q},{:.0},{:.0},,\n", r.cycles, r.stall_cycles);
        }
        out
    }
}

const MIB: f64 = 1024.0 * 1024.0;

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "machine {} @ {} GHz", self.machine, self.clock_ghz)?;
        writeln!(
            f,
            "latency {:.0} cycles = {:.3} us  (compute {:.0}, memory stall {:.0} = {:.1} %)",
            self.cycles,
            self.seconds * 1e6,
            self.compute_cycles,
            self.stall_cycles,
            100.0 * self.stall_cycles / self.cycles.max(1.0)
        )?;
        writeln!(f, "{:<16} {:<16} {:>5} {:>14} {:>7}", "unit", "class", "count", "busy", "util")?;
        for u in &self.units {
            writeln!(
                f,
                "{:<16} {:<16} {:>5} {:>14.0} {:>6.1}%",
                u.name,
                format!("{:?}", u.class),
                u.count,
                u.busy_cycles,
                100.0 * u.utilisation
            )?;
        }
        let t = &self.traffic;
        writeln!(
            f,
            "HBM traffic (MiB): keys {:.2}  ciphertexts {:.2}  plaintexts {:.2}  intermediates {:.2}",
            t.keys / MIB,
            t.ciphertexts / MIB,
            t.plaintexts / MIB,
            t.intermediates / MIB
        )?;
        if self.onchip_hits > 0 {
            writeln!(
                f,
                "on-chip hits {} ({:.2} MiB of HBM traffic saved)",
                self.onchip_hits,
                self.onchip_hit_bytes / MIB
            )?;
        }
        let c = &self.costs;
        let missing = |v: &[String]| {
            if v.is_empty() { String::new() } else { format!("; none given for: {}", v.join(", ")) }
        };
        match self.energy_j {
            Some(e) => writeln!(
                f,
                "energy {e:.4e} J (units {:.3e}, other blocks {:.3e}, HBM {}){}",
                c.units_j,
                c.components_j,
                c.hbm_j.map_or(format!("access energy {}", c.not_given()), |h| format!("{h:.3e}")),
                missing(&c.no_power)
            )?,
            None => writeln!(f, "energy: {} (no power figures)", c.not_given())?,
        }
        if let (Some(p), Some(peak)) = (c.power_w, c.peak_power_w) {
            writeln!(f, "power {p:.2} W average, {peak:.2} W peak")?;
        }
        match c.area_mm2 {
            Some(a) => writeln!(f, "area {a:.2} mm²{}", missing(&c.no_area))?,
            None => writeln!(f, "area: {}", c.not_given())?,
        }
        if self.regions.len() > 1 {
            writeln!(f, "{:<40} {:>14} {:>12}", "region", "cycles", "stall")?;
            for (p, r) in &self.regions {
                writeln!(f, "{:<40} {:>14.0} {:>12.0}", p, r.cycles, r.stall_cycles)?;
            }
        }
        Ok(())
    }
}
