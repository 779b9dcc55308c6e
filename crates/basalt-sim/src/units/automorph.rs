//! Automorphism units (Osiris' 512×512 Beneš network §IV-D, CraterLake/F1 automorphism FU,
//! HE-MxV's SPN, FAB's per-FU automorph units): a streaming permutation of `lanes` elements per
//! cycle, so one limb takes `N / lanes` cycles.

use crate::machine::Unit;
use crate::units::ceil_div;

pub fn cycles(u: &Unit, n: u32, limbs: u32) -> f64 {
    limbs as f64 / u.count as f64 * ceil_div(n as u64, u.lanes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::UnitClass;
    use crate::units::tests::unit;

    #[test]
    fn one_limb_is_n_over_lanes() {
        // HE-MxV Table VI: N = 2^14, c = 16 → 1024 cycles.
        assert_eq!(cycles(&unit(UnitClass::Automorph, 1, 16), 1 << 14, 1), 1024.0);
        assert_eq!(cycles(&unit(UnitClass::Automorph, 14, 16), 1 << 14, 28), 2048.0);
    }
}
