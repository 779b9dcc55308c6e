//! Element-wise (Hadamard) units: modular add/sub/mul/MAC at `lanes` coefficients per cycle per
//! instance. One MAC pass counts as one operation: the papers' MAC arrays (HE-MxV §IV-C,
//! Osiris' Hadamard cells, FAB's FUs) retire a multiply-accumulate per lane per cycle.

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
    fn fab_add_of_a_ciphertext() {
        // FAB Table 5 Add: 2 polys × 24 limbs over 256 lanes at N = 2^16 → 48 · 256 cycles.
        assert_eq!(cycles(&unit(UnitClass::Elem, 1, 256), 1 << 16, 48), 12288.0);
        // CraterLake: 5 multiply FUs of 2048 lanes share 10 limbs of 32 cycles each.
        assert_eq!(cycles(&unit(UnitClass::Elem, 5, 2048), 1 << 16, 10), 64.0);
    }
}
