//! Area and energy from per-action figures, in the spirit of Accelergy: a unit's energy is the
//! actions it performs times an energy per action, its area the lanes it has times an area per
//! lane, both scaled from the technology point they were measured at to the machine's.
//!
//! An *action* is one lane of one instance busy for one cycle: a modular multiply-add of an
//! element-wise unit, one coefficient through a pipelined NTT (all its stages) or one stage of
//! an iterative one, one multiply-accumulate of a BConv array (`lanes × rows` of them per cycle
//! for a systolic or streaming array), one element moved by an automorphism unit.
//!
//! The scaling rule (first order, stated once so that a sweep moves area and energy for a
//! reason a reader can check):
//!
//! * **lanes and instances**: area ∝ `count × lanes (× rows)`; energy ∝ actions, so doubling
//!   the lanes doubles the datapath area and leaves the dynamic energy of a kernel unchanged
//!   while static blocks (SRAM, wiring) burn for a shorter or longer time;
//! * **word size** w: a modular multiplier's area and switching energy grow with w² (the
//!   partial-product array), so both scale by (w / w_ref)²;
//! * **technology node** d: area scales by (d / d_ref)², energy per action by d / d_ref
//!   (capacitance with feature size at a fixed supply);
//! * **fabric**: an FPGA's energy per action is `energy_factor` times the ASIC figure (Kuon and
//!   Rose, "Measuring the gap between FPGAs and ASICs", 2007: about 14× dynamic power), and its
//!   area is the fixed device, not reported in mm².
//!
//! HBM traffic costs `memory.hbm_pj_per_byte` per byte. Blocks with only a power figure
//! (`[[components]]`: SRAM, wiring, PHYs) burn it for the whole run.

use serde::{Deserialize, Serialize};

use crate::machine::{Machine, Style, Unit};

/// `[physical]` of a machine file: where the per-action figures of its units hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Physical {
    /// The machine's technology node (nm).
    pub node_nm: f64,
    /// Node and word size at which the units' `pj_per_action` and `mm2_per_lane` hold.
    pub reference_node_nm: f64,
    pub reference_word_bits: u32,
    /// Energy per action relative to an ASIC at the same node (FPGA fabric > 1).
    #[serde(default = "one")]
    pub energy_factor: f64,
    /// The datapath is a fixed FPGA device: no area in mm², only energy.
    #[serde(default)]
    pub fpga: bool,
    pub source: String,
}

fn one() -> f64 {
    1.0
}

/// Actions one instance of `u` performs per busy cycle.
pub fn actions_per_cycle(u: &Unit) -> f64 {
    let rows = match u.style {
        Some(Style::Systolic) | Some(Style::Streaming) => u.rows.unwrap_or(1),
        _ => 1,
    };
    f64::from(u.lanes) * f64::from(rows)
}

impl Physical {
    fn word(&self, m: &Machine) -> f64 {
        (f64::from(m.word_bits) / f64::from(self.reference_word_bits)).powi(2)
    }

    /// Energy of one action of `u`, in joules.
    pub fn joules_per_action(&self, m: &Machine, u: &Unit) -> Option<f64> {
        let node = self.node_nm / self.reference_node_nm;
        u.pj_per_action.map(|pj| pj * 1e-12 * self.word(m) * node * self.energy_factor)
    }

    /// Area of all instances of `u`, mm² (`None` on an FPGA).
    pub fn unit_area_mm2(&self, m: &Machine, u: &Unit) -> Option<f64> {
        if self.fpga {
            return None;
        }
        let node = (self.node_nm / self.reference_node_nm).powi(2);
        u.mm2_per_lane.map(|a| a * actions_per_cycle(u) * f64::from(u.count) * self.word(m) * node)
    }
}

impl Machine {
    /// Area of all instances of unit `u`: from `[physical]` when the file has it, else the
    /// per-instance `area_mm2`.
    pub fn unit_area_mm2(&self, u: &Unit) -> Option<f64> {
        match &self.physical {
            Some(p) => p.unit_area_mm2(self, u),
            None => u.area_mm2.map(|a| a * f64::from(u.count)),
        }
    }

    /// Energy of unit `u` busy for `busy_cycles` (all instances busy, as the schedule counts).
    pub fn unit_energy_j(&self, u: &Unit, busy_cycles: f64) -> Option<f64> {
        match &self.physical {
            Some(p) => p
                .joules_per_action(self, u)
                .map(|j| j * busy_cycles * actions_per_cycle(u) * f64::from(u.count)),
            None => u.power_w.map(|w| busy_cycles / self.hz() * w * f64::from(u.count)),
        }
    }

    /// Power of unit `u` with every instance busy every cycle.
    pub fn unit_peak_power_w(&self, u: &Unit) -> Option<f64> {
        self.unit_energy_j(u, self.hz())
    }

    /// Datapath (units) area plus component area, mm²; `None` when nothing has an area.
    pub fn area_mm2(&self) -> Option<f64> {
        let parts: Vec<f64> = self
            .units
            .iter()
            .filter_map(|u| self.unit_area_mm2(u))
            .chain(self.components.iter().filter_map(|c| c.area_mm2))
            .collect();
        (!parts.is_empty()).then(|| parts.iter().sum())
    }

    /// Area of the units alone (the datapath), mm².
    pub fn datapath_area_mm2(&self) -> Option<f64> {
        let parts: Vec<f64> = self.units.iter().filter_map(|u| self.unit_area_mm2(u)).collect();
        (!parts.is_empty()).then(|| parts.iter().sum())
    }

    /// Power with every unit busy every cycle, the components on and HBM at full bandwidth.
    pub fn peak_power_w(&self) -> f64 {
        let units: f64 = self.units.iter().filter_map(|u| self.unit_peak_power_w(u)).sum();
        let comps: f64 = self.components.iter().filter_map(|c| c.power_w).sum();
        let hbm =
            self.memory.hbm_pj_per_byte.map_or(0.0, |pj| pj * 1e-12 * self.memory.hbm_gbps * 1e9);
        units + comps + hbm
    }
}
