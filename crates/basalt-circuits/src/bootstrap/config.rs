//! Bootstrapping configurations, with the papers' presets.

use serde::{Deserialize, Serialize};

use super::evalmod::EvalModConfig;
use crate::lintrans::Strategy;

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
    /// baby-step-centric order.
    pub strategy: Option<Strategy>,
    /// Bound on the giant steps of the automatic split.
    pub max_giant_steps: usize,
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
        }
    }
}
