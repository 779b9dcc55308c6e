//! The primal attack: embed the LWE instance in a lattice whose unusually short vector is
//! (error, scaled secret), then reduce.
//!
//! # Sources
//! - **uSVP**, success condition of Alkim–Ducas–Pöppelmann–Schwabe ("Post-quantum key
//!   exchange — a new hope", USENIX Security 2016, §6.3), confirmed experimentally by Albrecht–
//!   Göpfert–Virdia–Wunderer ("Revisiting the expected cost of solving uSVP and applications to
//!   LWE", Asiacrypt 2017): BKZ-β finds the embedded vector once its projection on the last β
//!   Gram–Schmidt directions is shorter than `‖b*_{d−β}‖`, i.e. `σ·√β ≤ δ^(2β−d) · V^(1/d)`.
//! - **BDD** (the lattice estimator's `primal_bdd`; Liu–Nguyen, CT-RSA 2013, and
//!   Albrecht et al., "Estimate all the {LWE, NTRU} schemes!", SCN 2018): reduce with BKZ-β,
//!   then solve SVP once in the projected sublattice of the last η ≥ β coordinates, where
//!   `σ·√η ≤ ‖b*_{d−η}‖`, and lift (Babai). Cost = BKZ-β + one SVP-η.
//! - Small secrets: Bai–Galbraith's embedding (ACISP 2014) as the estimator implements it: the
//!   secret coordinates are scaled by `ξ = σ_e/σ_s` when the secret is narrower than the error,
//!   which multiplies the volume by `ξ^n`. A secret wider than the error (uniform mod q) is
//!   first swapped into normal form (n samples), after which it is distributed as the error.
//!
//! The embedding lattice has dimension `d = m + n + 1` (Kannan's embedding, one extra
//! coordinate of size 1) and volume `q^m · ξ^n`; the attacker picks the number of samples `m`
//! (up to the instance's limit) that is best for each β: under the GSA the optimum is
//! `d* = √(((n+1)·log q − n·log ξ) / log δ)`.

use super::reduction::{CostModel, log2_delta, log2_gsa};
use super::{AttackCost, AttackKind, LweInstance, scan_beta};

/// The lattice of the primal embedding for block size β: (dimension d, log2 volume).
pub(crate) fn embedding(inst: &LweInstance, beta: f64) -> (f64, f64) {
    let n = inst.n as f64;
    let (log_q, log_xi) = (inst.log_q, inst.log2_scale_primal());
    let l = log2_delta(beta);
    let d_star = (((n + 1.0) * log_q - n * log_xi) / l).sqrt();
    let d_min = (n + 1.0).max(beta);
    let d_max = n + 1.0 + inst.max_samples() as f64;
    let d = d_star.clamp(d_min, d_max.max(d_min)).round();
    let m = d - n - 1.0;
    (d, m * log_q + n * log_xi)
}

/// Primal uSVP: the smallest β that meets the 2016 condition, and its BKZ cost.
pub fn usvp(inst: &LweInstance, model: CostModel) -> AttackCost {
    let log_sigma = inst.log2_sigma_e();
    let ok = |beta: f64| {
        let (d, log_vol) = embedding(inst, beta);
        let lhs = log_sigma + 0.5 * beta.log2();
        let rhs = log2_gsa(beta, d, log_vol, d - beta);
        lhs <= rhs && beta <= d
    };
    let d_limit = inst.n as f64 + 1.0 + inst.max_samples() as f64;
    let mut beta = 2.0;
    while beta <= d_limit {
        if ok(beta) {
            let (d, _) = embedding(inst, beta);
            return AttackCost {
                kind: AttackKind::PrimalUsvp,
                log2_cost: model.log2_bkz(beta, d),
                beta,
                d,
                eta: None,
                guessed: None,
            };
        }
        beta += 1.0;
    }
    AttackCost::infeasible(AttackKind::PrimalUsvp)
}

/// Primal BDD: BKZ-β, then one SVP call in dimension η on the projected sublattice.
pub fn bdd(inst: &LweInstance, model: CostModel) -> AttackCost {
    let log_sigma = inst.log2_sigma_e();
    let eval = |beta: f64| -> Option<AttackCost> {
        let (d, log_vol) = embedding(inst, beta);
        if beta > d {
            return None;
        }
        // Smallest η in [β, d] with σ√η ≤ ‖b*_{d−η}‖ (RHS grows by 2·log δ per step, LHS by
        // log2 of a ratio below 1 per step: the condition is monotone in η).
        let holds = |eta: f64| log_sigma + 0.5 * eta.log2() <= log2_gsa(beta, d, log_vol, d - eta);
        if !holds(d) {
            return None;
        }
        let (mut lo, mut hi) = (beta, d);
        if !holds(lo) {
            while hi - lo > 1.0 {
                let mid = ((lo + hi) / 2.0).floor();
                if holds(mid) { hi = mid } else { lo = mid }
            }
        } else {
            hi = lo;
        }
        let eta = hi;
        let bkz = model.log2_bkz(beta, d);
        let svp = model.log2_svp(eta);
        Some(AttackCost {
            kind: AttackKind::PrimalBdd,
            log2_cost: log2_add(bkz, svp),
            beta,
            d,
            eta: Some(eta),
            guessed: None,
        })
    };
    scan_beta(inst, eval).unwrap_or_else(|| AttackCost::infeasible(AttackKind::PrimalBdd))
}

/// log2(2^a + 2^b).
pub(crate) fn log2_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    if hi.is_infinite() || lo == f64::NEG_INFINITY {
        return hi;
    }
    hi + (1.0 + (lo - hi).exp2()).log2()
}
