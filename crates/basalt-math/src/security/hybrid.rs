//! Attacks that exploit a sparse secret (fixed Hamming weight `h ≪ n`): most coordinates are
//! zero, so guessing part of the secret is cheap.
//!
//! # Sources
//! - **Coordinate dropping** (Albrecht, Eurocrypt 2017, §5, and the lattice estimator's
//!   `prob_drop`): guess that `k` chosen coordinates are zero (probability
//!   `C(n−h, k)/C(n, k)`), delete them, and run the primal or dual attack on the smaller
//!   instance; repeat with other coordinates until a guess is right. This is the primal
//!   hybrid without the meet-in-the-middle step (Howgrave-Graham, Crypto 2007; Wunderer's
//!   analysis, 2019), i.e. an upper bound on the primal hybrid's cost.
//! - **Dual-hybrid** ([`super::dual`], Albrecht 2017 §5; Espitau–Joux–Kharchenko 2020): guess
//!   the `k` coordinates exhaustively up to weight `w`, reusing the same short dual vectors for
//!   every guess.
//!
//! Both are minimised over `k` (and `w`); the result is the cheapest of them.

use super::dual::dual_core;
use super::primal;
use super::reduction::CostModel;
use super::{AttackCost, AttackKind, Distribution, LweInstance, log2_binomial, scan_beta};

fn ks(n: usize, h: usize) -> impl Iterator<Item = usize> {
    let top = n.saturating_sub(h + 1);
    let step = (top / 48).max(1);
    (1..=top).step_by(step)
}

/// Drop `k` coordinates guessed zero, attack the rest with the primal (uSVP, BDD) and dual
/// attacks, and repeat `1/p` times.
pub fn drop_and_solve(inst: &LweInstance, model: CostModel) -> AttackCost {
    let Some(h) = inst.secret.hamming_weight() else {
        return AttackCost::infeasible(AttackKind::SparseDrop);
    };
    let n = inst.n;
    let mut best = AttackCost::infeasible(AttackKind::SparseDrop);
    for k in ks(n, h) {
        let log2_p = log2_binomial(n - h, k) - log2_binomial(n, k);
        let sub =
            LweInstance { n: n - k, secret: Distribution::SparseTernary { h }, ..inst.clone() };
        for a in
            [primal::usvp(&sub, model), primal::bdd(&sub, model), super::dual::dual(&sub, model)]
        {
            let cost = a.log2_cost - log2_p;
            if cost < best.log2_cost {
                best = AttackCost {
                    kind: AttackKind::SparseDrop,
                    log2_cost: cost,
                    guessed: Some(k),
                    ..a
                };
            }
        }
    }
    best
}

/// One guess of the hybrid attacks: `k` coordinates guessed up to weight `w` (of the secret's
/// `h`), with log2 of the probability that the guessed part has weight at most `w` and of
/// the number of guesses (ternary: `C(k, j)·2^j` of each weight `j ≤ w`).
struct Guess {
    k: usize,
    w: usize,
    h: usize,
    log2_p: f64,
    log2_guesses: f64,
}

/// The search the guessing hybrids share: for every number `k` of guessed coordinates and
/// every weight bound `w ≤ max_w` of the guessed part, the cost `attack` gives for that guess
/// (`None`: infeasible); the cheapest, or infeasible without a sparse secret.
fn guess_search(
    inst: &LweInstance,
    kind: AttackKind,
    max_w: usize,
    attack: impl Fn(&Guess) -> Option<AttackCost>,
) -> AttackCost {
    let Some(h) = inst.secret.hamming_weight() else {
        return AttackCost::infeasible(kind);
    };
    let n = inst.n;
    let mut best = AttackCost::infeasible(kind);
    for k in ks(n, h) {
        let total = log2_binomial(n, k);
        let (mut p_acc, mut g_acc) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for w in 0..=h.min(k).min(max_w) {
            let p_w = log2_binomial(h, w) + log2_binomial(n - h, k - w) - total;
            let g_w = log2_binomial(k, w) + w as f64;
            p_acc = primal::log2_add(p_acc, p_w);
            g_acc = primal::log2_add(g_acc, g_w);
            if let Some(c) = attack(&Guess { k, w, h, log2_p: p_acc, log2_guesses: g_acc })
                && c.log2_cost < best.log2_cost
            {
                best = c;
            }
        }
    }
    best
}

/// The dual-hybrid: guess `k` coordinates up to weight `w`, dual attack on the other `n − k`.
pub fn dual_hybrid(inst: &LweInstance, model: CostModel) -> AttackCost {
    let n = inst.n;
    guess_search(inst, AttackKind::DualHybrid, 8, |g| {
        // The rest has weight ≥ h − w: use h − w (the attacker's best case).
        let rest = (g.h - g.w).max(1);
        let log_sigma_s = 0.5 * (rest as f64 / (n - g.k) as f64).log2();
        scan_beta(inst, |beta| {
            let (lattice, log2_r, d) = dual_core(inst, n - g.k, log_sigma_s, beta, model)?;
            Some(AttackCost {
                kind: AttackKind::DualHybrid,
                log2_cost: primal::log2_add(lattice, log2_r + g.log2_guesses) - g.log2_p,
                beta,
                d,
                eta: None,
                guessed: Some(g.k),
            })
        })
    })
}

/// The primal hybrid (Howgrave-Graham, Crypto 2007; as modelled by Wunderer, "A detailed
/// analysis of the hybrid lattice-reduction and meet-in-the-middle attack", J. Math. Cryptol.
/// 2019): guess `k` coordinates up to weight `w` with a meet-in-the-middle search (√G of the
/// G guesses), and for each guess decode the rest with Babai's nearest plane on a BKZ-β basis
/// of the `n − k`-coordinate embedding.
///
/// Simplifications, all in the attacker's favour: Babai is assumed to succeed once the last
/// Gram–Schmidt norm is at least twice the error's standard deviation, the meet-in-the-middle
/// is assumed to find every collision, and one Babai call costs `d²` operations.
pub fn primal_hybrid(inst: &LweInstance, model: CostModel) -> AttackCost {
    let log_sigma = inst.log2_sigma_e();
    guess_search(inst, AttackKind::PrimalHybrid, 32, |g| {
        let sub = LweInstance {
            n: inst.n - g.k,
            secret: Distribution::SparseTernary { h: (g.h - g.w).max(1) },
            ..inst.clone()
        };
        scan_beta(&sub, |beta| {
            let (d, log_vol) = primal::embedding(&sub, beta);
            if beta > d {
                return None;
            }
            let last = super::reduction::log2_gsa(beta, d, log_vol, d - 1.0);
            if last < log_sigma + 1.0 {
                return None;
            }
            let guesses = 0.5 * g.log2_guesses + 2.0 * d.log2();
            Some(AttackCost {
                kind: AttackKind::PrimalHybrid,
                log2_cost: primal::log2_add(model.log2_bkz(beta, d), guesses) - g.log2_p,
                beta,
                d,
                eta: None,
                guessed: Some(g.k),
            })
        })
    })
}
