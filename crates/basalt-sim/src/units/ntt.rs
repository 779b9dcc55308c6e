//! Number-theoretic transform units.
//!
//! * `pipelined` — a multi-path delay-commutator pipeline (Osiris §IV-A, CraterLake's F1-derived
//!   NTT FU): it accepts `lanes` coefficients every cycle, so one limb takes `N / lanes` cycles
//!   whatever log N is.
//! * `iterative` — `lanes / 2` butterflies reused for each of the log2 N stages (FAB §4.5,
//!   HE-MxV's NTTGen cores): one limb takes `log2 N · (N / lanes + stage_overhead)` cycles.
//!   HE-MxV Table VI's 14,658 cycles at N = 2^14, c = 16 is `14 · (1024 + 23)`.

use crate::SimError;
use crate::machine::{Style, Unit};
use crate::units::ceil_div;

/// Cycles for `limbs` transforms of degree `n`, spread over the unit's instances.
pub fn cycles(u: &Unit, n: u32, limbs: u32) -> Result<f64, SimError> {
    let per_instance = limbs as f64 / u.count as f64;
    let per_limb = match u.style {
        Some(Style::Pipelined) => ceil_div(n as u64, u.lanes as u64),
        Some(Style::Iterative) => {
            let stages = n.trailing_zeros() as f64;
            let overhead = u.stage_overhead_cycles.unwrap_or(0) as f64;
            stages * (ceil_div(n as u64, u.lanes as u64) + overhead)
        }
        other => {
            return Err(SimError::BadUnit {
                machine: String::new(),
                unit: u.name.clone(),
                message: format!("NTT style {other:?} is not pipelined/iterative"),
            });
        }
    };
    Ok(per_instance * per_limb)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::UnitClass;
    use crate::units::tests::unit;

    #[test]
    fn pipelined_mdc_is_n_over_p_per_limb() {
        // Osiris: 512-lane MDC, N = 2^16 → 128 cycles per limb; 2 MDCs share 5 limbs.
        let mut u = unit(UnitClass::Ntt, 1, 512);
        u.style = Some(Style::Pipelined);
        assert_eq!(cycles(&u, 1 << 16, 1).unwrap(), 128.0);
        assert_eq!(cycles(&u, 1 << 14, 3).unwrap(), 3.0 * 32.0);
        u.count = 2;
        assert_eq!(cycles(&u, 1 << 16, 5).unwrap(), 2.5 * 128.0);
    }

    #[test]
    fn iterative_matches_mxv_table6_and_fab_model() {
        let mut u = unit(UnitClass::Ntt, 1, 16);
        u.style = Some(Style::Iterative);
        u.stage_overhead_cycles = Some(23);
        assert_eq!(cycles(&u, 1 << 14, 1).unwrap(), 14.0 * (1024.0 + 23.0));
        // FAB: 256 butterflies = 512 coefficients per stage-cycle, log N · N / 512.
        let mut f = unit(UnitClass::Ntt, 1, 512);
        f.style = Some(Style::Iterative);
        assert_eq!(cycles(&f, 1 << 16, 1).unwrap(), 2048.0);
    }
}
