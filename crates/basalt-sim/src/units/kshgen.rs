//! Key-switch hint generator (CraterLake §5.2): a KangarooTwelve XOF with rejection sampling
//! behind 16-word buffers, assumed to sustain `lanes` words per cycle like every other
//! CraterLake FU (the paper states all FUs are fully pipelined at E elements/cycle).

use crate::machine::Unit;
use crate::units::ceil_div;

pub fn cycles(u: &Unit, n: u32, limbs: u32) -> f64 {
    ceil_div(n as u64 * limbs as u64, u.lanes as u64 * u.count as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::UnitClass;
    use crate::units::tests::unit;

    #[test]
    fn one_residue_per_n_over_e() {
        assert_eq!(cycles(&unit(UnitClass::Kshgen, 1, 2048), 1 << 16, 60), 60.0 * 32.0);
    }
}
