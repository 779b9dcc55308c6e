//! Osiris rows. Table III needs bootstrapping / ResNet-20 traces from the CKKS library (double-
//! hoisted BSGS with the GSC order), which do not exist yet; only the Table V column sums are
//! checked here, as bookkeeping of `osiris.toml`.

use std::path::Path;

use crate::SimError;
use crate::reproduce::{Computed, computed, machine};

pub fn compute(data: &Path) -> Result<Vec<Computed>, SimError> {
    let m = machine(data, "osiris")?;
    let area: f64 = m
        .units
        .iter()
        .map(|u| u.area_mm2.unwrap_or(0.0) * u.count as f64)
        .sum::<f64>()
        + m.components.iter().filter_map(|c| c.area_mm2).sum::<f64>();
    let power: f64 = m
        .units
        .iter()
        .map(|u| u.power_w.unwrap_or(0.0) * u.count as f64)
        .sum::<f64>()
        + m.components.iter().filter_map(|c| c.power_w).sum::<f64>();
    let bk = "bookkeeping: sum of the per-unit values transcribed into osiris.toml";
    Ok(vec![
        computed("V", "sum", "area", area, bk),
        computed("V", "sum", "power", power, bk),
    ])
}
