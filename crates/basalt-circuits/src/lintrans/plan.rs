//! Choosing a strategy: the BSGS split `n1·n2` and the hoisting under a memory bound.
//!
//! # Algorithm
//! For every power-of-two `n1 ≤ slots` split the diagonal indices; drop the splits whose
//! number of giant steps `n2` exceeds the bound on live partial sums (Osiris reduces `n2`
//! rather than spilling partials: at most 4 at its top bootstrapping levels); among the rest,
//! with single or double hoisting in the giant-step-centric order, take the one with the fewest
//! predicted modular multiplications ([`super::cost::predict`]), then the fewest rotations.
//! `n1 = slots` (the hoisted diagonal method, `n2 = 1`) is always feasible.
//!
//! # Source
//! Bossuat et al. 2021 (the optimal ratio `n1/n2` is large, typically 8–16); Osiris §IV-D.
//!
//! # Cost
//! `log2(slots)+1` candidate splits × 2 hoistings, each a closed form over the diagonals.

use basalt_ckks::Parameters;
use serde::{Deserialize, Serialize};

use super::bsgs::Split;
use super::cost::predict;
use super::{GscOrder, Hoisting, Strategy};
use crate::error::{CircuitError, Result};

/// A resolved strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub n1: usize,
    pub hoisting: Hoisting,
    pub order: GscOrder,
}

/// Resolve `strategy` for `diags` at `level`.
///
/// # Errors
/// [`CircuitError::BadBabySteps`], [`CircuitError::NoFeasiblePlan`] (a zero memory bound).
pub fn resolve(
    params: &Parameters,
    indices: &[usize],
    slots: usize,
    strategy: Strategy,
    level: usize,
) -> Result<Plan> {
    let check_partials = |m: usize| {
        if m == 0 {
            Err(CircuitError::NoFeasiblePlan("max_partials must be at least 1".into()))
        } else {
            Ok(())
        }
    };
    match strategy {
        Strategy::Diagonal { hoisting } => Ok(Plan {
            n1: slots,
            hoisting: if hoisting == Hoisting::Double { Hoisting::Single } else { hoisting },
            order: GscOrder::BabyStepCentric,
        }),
        Strategy::Bsgs { n1, hoisting, order } => {
            if n1 == 0 || n1 > slots {
                return Err(CircuitError::BadBabySteps { n1, slots });
            }
            if let GscOrder::GiantStepCentric { max_partials, .. } = order {
                check_partials(max_partials)?;
            }
            Ok(Plan { n1, hoisting, order })
        }
        Strategy::Auto { max_partials } => {
            check_partials(max_partials)?;
            let order = GscOrder::GiantStepCentric { max_partials, of_limb: true };
            let idx = indices;
            let mut best: Option<(u64, u64, Plan)> = None;
            let mut n1 = 1;
            while n1 <= slots {
                let split = Split::new(idx, n1, slots)?;
                if split.n2() <= max_partials {
                    for hoisting in [Hoisting::Single, Hoisting::Double] {
                        let plan = Plan { n1, hoisting, order };
                        let c = predict(params, &split, &plan, level, true, true);
                        let key = (c.modmults, c.rotations);
                        if best.as_ref().is_none_or(|b| key < (b.0, b.1)) {
                            best = Some((key.0, key.1, plan));
                        }
                    }
                }
                n1 *= 2;
            }
            best.map(|b| b.2)
                .ok_or_else(|| CircuitError::NoFeasiblePlan(format!("{max_partials} partials")))
        }
    }
}
