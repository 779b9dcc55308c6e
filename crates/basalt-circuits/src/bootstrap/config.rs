//! Bootstrapping configurations, with the papers' presets.

use serde::{Deserialize, Serialize};

use super::evalmod::EvalModConfig;
use crate::lintrans::{Hoisting, Strategy};

/// What a [`super::Bootstrapper`] builds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BootstrapConfig {
    /// log2 of the slot count `n` (`log N − 1` is fully packed; 0 is CraterLake's and F1's
    /// "unpacked" single slot).
    pub log_slots: u32,
    /// Levels of CoeffToSlot (FAB's `fftIter`); at most `log_slots` (one stage per level).
    pub cts_levels: usize,
    /// Levels of SlotToCoeff.
    pub stc_levels: usize,
    /// The modular reduction.
    pub evalmod: EvalModConfig,
    /// log2 of `Q_0/Δ` before ModRaise (Lattigo's `LogMessageRatio`).
    pub log_message_ratio: f64,
    /// Hamming weight of the sparse ephemeral secret, or `None` to bootstrap under `s` itself
    /// (then `K` must bound `I` for `s`).
    pub ephemeral_h: Option<usize>,
    /// Strategy of every DFT transform; `None` uses the automatic BSGS split in Lattigo's
    /// baby-step-centric order. A `Bsgs` split's `n1` counts baby steps along each matrix's
    /// diagonal stride (a factor of late butterfly stages has diagonals only at multiples of
    /// `2^s`), so one `n1` gives every factor the same baby/giant balance; in the
    /// giant-step-centric order it is a minimum, doubled per matrix until the giant steps fit
    /// `max_partials`.
    pub strategy: Option<Strategy>,
    /// Bound on the giant steps of the automatic split.
    pub max_giant_steps: usize,
    /// Hoisting of the automatic split: Lattigo's full double hoisting (`Q∪P` diagonals, one
    /// ModDown per transform) or single hoisting (every key switch ends in `Q`, as in
    /// CraterLake's Listing 1, with diagonals over `Q` only).
    pub hoisting: Hoisting,
    /// Merge the rescale after each of EvalMod's relinearised products into the key switch's
    /// ModDown (one division by `P·q_top`: de Castro et al.'s "ModDown merge", FAB's reference
    /// \[15\], `Evaluator::mul_relin_rescale`). Off: relinearise, then rescale.
    #[serde(default)]
    pub merge_rescale: bool,
}

impl BootstrapConfig {
    /// Lattigo v6's default `N16QP1546H192H32` circuit for `log_slots` slots: CoeffToSlot in 4
    /// levels, EvalMod in 8 (`K = 16`, with our degree-63, `r = 2` cosine), SlotToCoeff in 3,
    /// message ratio 2^8, ephemeral secret of weight 32.
    pub fn lattigo_default(log_slots: u32) -> BootstrapConfig {
        BootstrapConfig {
            log_slots,
            cts_levels: 4,
            stc_levels: 3,
            evalmod: EvalModConfig::default(),
            log_message_ratio: 8.0,
            ephemeral_h: Some(32),
            strategy: None,
            max_giant_steps: 16,
            hoisting: Hoisting::Double,
            merge_rescale: false,
        }
    }
}

/// The bootstrapping circuit that goes with a CKKS preset (by name or alias), with
/// `log_slots` slots (default: fully packed).
///
/// - `N16QP1546H192H32` (Lattigo's default): [`BootstrapConfig::lattigo_default`].
/// - `FAB`: `fftIter = 4` for both DFTs and a depth-9 EvalMod (degree 63, `r = 3`, `K = 16`):
///   `2·4 + 9 = 17` levels as FAB states, 6 left of 23. FAB's secret is dense; the paper uses
///   Bossuat et al.'s polynomial without giving it, we encapsulate into an `h = 32` secret so
///   that `K = 16` bounds `I`. All primes are 54 bits, so the input scale must be at most
///   `2^{54−8}`.
///
/// - `OSIRIS_SET_III_BOOT` (reconstructed, `data/params/ckks/osiris_set_iii_boot.toml`):
///   Lattigo's default circuit (CoeffToSlot 4, EvalMod 8, SlotToCoeff 3, `h = 32` ephemeral
///   secret) on Osiris' double-prime chain with `q_0` split into 2×24 bits; EvalMod's scale is
///   its 2×28-bit level. 4 residual levels (8 limbs) left. The encapsulation key lives over
///   `Q_0·P_0` with two 33-bit special primes.
/// - `OSIRIS_SET_IV_BOOT` (reconstructed, `data/params/ckks/osiris_set_iv_boot.toml`): the
///   same circuit on the same bootstrapping levels; Set IV's odd ninth residual limb is a third
///   base word, so the output keeps 11 limbs, `OSIRIS_SET_IV`'s top.
/// - `CRATERLAKE_80_BOOT` / `CRATERLAKE_128_BOOT` (reconstructed): CraterLake cites Bossuat et
///   al.'s non-sparse bootstrapping, so FAB's shape — CoeffToSlot 4, the depth-9 EvalMod,
///   SlotToCoeff 4 — on two-residue levels: 34 of the 56 (50) residues, the paper's 35 of 57
///   (51). `q_0` is two residues (56 bits); the dense secret is encapsulated into an `h = 32`
///   one over `Q_0·P_0` (2 + 2 residues) so that `K = 12` bounds the overflow.
/// - `CRATERLAKE_200_BOOT` (reconstructed, N = 2^17): the same circuit on the 80-bit chain's
///   56 residues with two digits, fully packed at 2^16 slots.
/// - `CRATERLAKE_80_BOOT_UNPACKED` (reconstructed): one slot (default `log_slots = 0`) at
///   N = 2^14 (F1's benchmark, F1's ring), one level per DFT and a depth-8 EvalMod (`r = 3`):
///   the whole 22-residue chain.
///
/// The CraterLake circuits use single hoisting: CraterLake's key switch (Listing 1) always
/// ends in a ModDown to `Q`, so its diagonals are plaintexts over `Q` (no lazy `Q∪P` sums).
///
/// Returns `None` for a preset without a bootstrapping chain.
pub fn for_preset(name: &str, log_slots: Option<u32>, log_n: u32) -> Option<BootstrapConfig> {
    let upper = name.to_ascii_uppercase();
    let full = log_n - 1;
    let ls = log_slots.unwrap_or(full);
    match upper.as_str() {
        "N16QP1546H192H32" | "LATTIGO_N16QP1546H192H32" | "N16_L24_QP1546_D5_H192" => {
            Some(BootstrapConfig::lattigo_default(ls))
        }
        "FAB" | "N16_L23_D3_W54" => Some(BootstrapConfig {
            cts_levels: 4,
            stc_levels: 4,
            evalmod: EvalModConfig {
                k: 16.0,
                degree: 63,
                double_angle: 3,
                log_scale: 54.0,
                arcsine_degree: 0,
            },
            // FAB defers its bootstrapping algorithm to [15], whose cost model merges every
            // rescale that follows a key switch into the ModDown (data/papers/fab/readings.toml).
            merge_rescale: true,
            ..BootstrapConfig::lattigo_default(ls)
        }),
        "OSIRIS_SET_III_BOOT"
        | "N16_L19_A14_W40_H1024_BOOT"
        | "OSIRIS_SET_IV_BOOT"
        | "N16_L19_A14_W40_H1024_BOOT_IV" => Some(BootstrapConfig {
            evalmod: EvalModConfig { log_scale: 56.0, ..EvalModConfig::default() },
            ..BootstrapConfig::lattigo_default(ls)
        }),
        "CRATERLAKE_80_BOOT"
        | "N16_L28_D1_W28_DP_BOOT"
        | "CRATERLAKE_128_BOOT"
        | "N16_L25_D3_W28_DP_BOOT"
        | "CRATERLAKE_200_BOOT"
        | "N17_L28_D2_W28_DP_BOOT" => Some(BootstrapConfig {
            cts_levels: 4,
            stc_levels: 4,
            evalmod: EvalModConfig {
                k: 12.0,
                degree: 31,
                double_angle: 4,
                log_scale: 56.0,
                arcsine_degree: 0,
            },
            hoisting: Hoisting::Single,
            ..BootstrapConfig::lattigo_default(ls)
        }),
        "CRATERLAKE_80_BOOT_UNPACKED" | "N14_L11_D1_W28_DP_BOOT1" => Some(BootstrapConfig {
            cts_levels: 1,
            stc_levels: 1,
            evalmod: EvalModConfig {
                k: 12.0,
                degree: 31,
                double_angle: 3,
                log_scale: 56.0,
                arcsine_degree: 0,
            },
            hoisting: Hoisting::Single,
            ..BootstrapConfig::lattigo_default(log_slots.unwrap_or(0))
        }),
        _ => None,
    }
}
