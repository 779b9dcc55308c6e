//! Fast base conversion (`from` limbs → `to` limbs, `N · from · to` multiply-adds).
//!
//! * `systolic` — Osiris §IV-C: an input-stationary array `rows` tall and `lanes` wide. An
//!   `α × p` input block stays resident while `β` base-table rows stream past, so one block takes
//!   `max(α, β)` cycles (α to preload the next block, β to drain); inputs taller than the array
//!   take several passes.
//! * `streaming` — CraterLake §5.1 CRB: `rows` output pipelines, inputs broadcast at `lanes`
//!   elements per cycle, double-buffered, so one conversion takes `max(from, to) · N / lanes`.
//! * `mac` — a plain multiply-accumulate array of `lanes` MACs per cycle per instance (FAB's FUs,
//!   HE-MxV's MAC arrays): `N · from · to / lanes`.

use crate::SimError;
use crate::machine::{Style, Unit};
use crate::units::ceil_div;

pub fn cycles(u: &Unit, n: u32, from: u32, to: u32) -> Result<f64, SimError> {
    let slices = ceil_div(n as u64, u.lanes as u64 * u.count as u64);
    Ok(match u.style {
        Some(Style::Systolic) => {
            let rows = u.rows.unwrap_or(1);
            let mut per_slice = 0.0;
            let mut left = from;
            while left > 0 {
                let pass = left.min(rows);
                per_slice += pass.max(to) as f64;
                left -= pass;
            }
            slices * per_slice
        }
        Some(Style::Streaming) => {
            let pipes = u.rows.unwrap_or(u32::MAX);
            let mut per_slice = 0.0;
            let mut left = to;
            while left > 0 {
                let pass = left.min(pipes);
                per_slice += from.max(pass) as f64;
                left -= pass;
            }
            slices * per_slice
        }
        Some(Style::Mac) => {
            ceil_div(n as u64 * from as u64 * to as u64, u.lanes as u64 * u.count as u64)
        }
        other => {
            return Err(SimError::BadUnit {
                machine: String::new(),
                unit: u.name.clone(),
                message: format!("BConv style {other:?} is not systolic/streaming/mac"),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::UnitClass;
    use crate::units::tests::unit;

    #[test]
    fn systolic_block_period_is_max_alpha_beta() {
        // Osiris 16 × 512: ModUp of a 5-limb digit to 20 limbs at N = 2^16 → 128 · 20 cycles.
        let mut u = unit(UnitClass::Bconv, 1, 512);
        u.style = Some(Style::Systolic);
        u.rows = Some(16);
        assert_eq!(cycles(&u, 1 << 16, 5, 20).unwrap(), 128.0 * 20.0);
        // 20 input limbs need two passes (16 + 4), each at least β = 3 tall: 16 + 4 = 20.
        assert_eq!(cycles(&u, 1 << 16, 20, 3).unwrap(), 128.0 * 20.0);
    }

    #[test]
    fn streaming_crb_and_mac_array() {
        // CraterLake CRB: 60 → 60 at N = 64K, E = 2048: 32 · 60 = 1920 cycles.
        let mut c = unit(UnitClass::Bconv, 1, 2048);
        c.style = Some(Style::Streaming);
        c.rows = Some(60);
        assert_eq!(cycles(&c, 1 << 16, 60, 60).unwrap(), 1920.0);
        // 120 outputs overflow 60 pipelines: two passes.
        assert_eq!(cycles(&c, 1 << 16, 60, 120).unwrap(), 3840.0);
        let mut m = unit(UnitClass::Bconv, 1, 256);
        m.style = Some(Style::Mac);
        assert_eq!(cycles(&m, 1 << 16, 8, 24).unwrap(), (65536.0 * 8.0 * 24.0) / 256.0);
    }
}
