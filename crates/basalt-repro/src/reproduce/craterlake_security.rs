//! CraterLake Table 5 (validation): the deep benchmarks at 128 and 200 bits of security beside
//! our 80-bit figures. Each benchmark module times its own program on every `LEVELS` entry and
//! hands the figure to `Level::rows`; the gmean rows are `gmean.rs`'s.
//!
//! * 128-bit (§9.4): the reconstructed `CRATERLAKE_128_BOOT` chain, N = 64K, on
//!   `craterlake.toml`.
//! * 200-bit (§9.4): the reconstructed `CRATERLAKE_200_BOOT` chain, N = 128K, on the
//!   128K-capable configuration (`craterlake_128k.toml`). "Since N=128K ciphertexts have double
//!   the slots of N=64K ciphertexts, we normalize performance per element": a time is divided by
//!   the ring-degree ratio of its trace to the 80-bit one (2^17 / 2^16 = 2), i.e. one 128K run
//!   stands for two 64K workloads side by side (two ResNet inferences in parallel, the paper's
//!   example). Our 128K traces run the same kernels as the 64K ones (same rotations and
//!   products; the 128-slot LSTM bootstrap has one more SubSum rotation), so the division is the
//!   paper's construction, not a discount.

use std::path::Path;

use basalt_trace::{Kernel, Trace};

use crate::ReproError;
use crate::reproduce::{Computed, computed, machine};
use basalt_sim::machine::Machine;

/// One security column of Table 5.
pub(crate) struct Level {
    /// The column's label in the CSV metrics ("128-bit", "200-bit").
    pub bits: &'static str,
    /// The chain every benchmark runs on at this level.
    pub preset: &'static str,
    /// The machine file (`data/machines/<machine>.toml`).
    machine: &'static str,
    /// Workloads one ciphertext of this column holds, side by side, for the per-element
    /// normalisation (the ring degree over the 80-bit chain's): a program whose layout depends
    /// on the slot count (LogReg's batch) records this many copies in one ciphertext.
    pub side_by_side: u32,
}

/// Table 5's columns beyond the 80-bit baseline.
pub(crate) const LEVELS: [Level; 2] = [
    Level {
        bits: "128-bit",
        preset: "CRATERLAKE_128_BOOT",
        machine: "craterlake",
        side_by_side: 1,
    },
    Level {
        bits: "200-bit",
        preset: "CRATERLAKE_200_BOOT",
        machine: "craterlake_128k",
        side_by_side: 2,
    },
];

impl Level {
    /// The machine file's name, for `how` texts.
    pub(crate) fn file(&self) -> String {
        format!("{}.toml", self.machine)
    }

    /// The machine this column runs on.
    pub(crate) fn machine(&self, data: &Path) -> Result<Machine, ReproError> {
        machine(data, self.machine)
    }

    /// The column's two rows for `row`: the time of a trace of ring degree `n` (`ms` on
    /// `Level::machine`) per `n80`-degree ciphertext's worth of elements, and its slowdown
    /// over our 80-bit time `ms80`. `how` says what was timed, on which machine.
    pub(crate) fn rows(
        &self,
        row: &str,
        (ms, n): (f64, u32),
        (ms80, n80): (f64, u32),
        how: &str,
    ) -> [Computed; 2] {
        let per = f64::from(n) / f64::from(n80);
        let t = ms / per;
        let how = if per == 1.0 {
            how.to_string()
        } else {
            format!(
                "{how}; divided by {per} (ring degree {n} over the 80-bit trace's {n80}: the \
                 paper's per-element normalisation, one ciphertext holds {per} workloads)"
            )
        };
        let slowdown = format!("{} slowdown vs 80-bit", self.bits);
        [
            computed("5", row, &format!("{} time", self.bits), t, &how),
            computed(
                "5",
                row,
                &slowdown,
                t / ms80,
                &format!("our {} / our 80-bit {row}", self.bits),
            ),
        ]
    }
}

/// The ring degree of a CKKS trace (0 if it has no polynomial kernel).
pub(crate) fn ring_degree(t: &Trace) -> u32 {
    t.kernels()
        .filter_map(|k| match k {
            Kernel::Ntt { n, .. } | Kernel::Intt { n, .. } | Kernel::Elem { n, .. } => Some(*n),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn a_128k_time_is_per_element() {
        let [t, s] = LEVELS[1].rows("R", (10.0, 1 << 17), (4.0, 1 << 16), "trace");
        assert_eq!((t.value, s.value), (5.0, 1.25));
        assert!(t.how.contains("divided by 2"), "{}", t.how);
        let [t, _] = LEVELS[0].rows("R", (6.0, 1 << 16), (4.0, 1 << 16), "trace");
        assert_eq!(t.value, 6.0);
    }
}
