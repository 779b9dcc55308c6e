//! The dual attack: find short vectors of the dual lattice, use each to turn LWE samples into
//! one sample of a narrow distribution modulo q, and tell it from uniform.
//!
//! # Sources
//! - Micciancio–Regev, "Lattice-based cryptography" (2009): a dual vector of length ℓ
//!   distinguishes with advantage `ε = exp(−2π² (ℓσ/q)²)`, so `1/ε²` of them are needed.
//! - Albrecht, "On dual lattice attacks against small-secret LWE and parameter choices in HElib
//!   and SEAL" (Eurocrypt 2017), §3–4: the lattice `{(x, y/ξ') : xA ≡ y mod q}` with
//!   `ξ' = σ_s/σ_e` balances the error and (small) secret contributions, and one sieve call
//!   leaves `2^(0.2075β)` short vectors to reuse (his "cheap vectors" amortisation, in the
//!   sieving form of Ducas, Eurocrypt 2018).
//! - The **dual-hybrid** (same paper, §5; Espitau–Joux–Kharchenko, Indocrypt 2020): the last
//!   `k` secret coordinates are guessed instead of being reduced; each guess costs one inner
//!   product per short vector, while the dual lattice shrinks to `n − k` secret coordinates.
//!   Worth it for sparse secrets, whose guessed part is likely of small weight.
//!
//! The MATZOV dual attack (2022, FFT over guesses, modulus switching) is not modelled: for the
//! HE Standard's dense parameters it lowers estimates by a few bits at most, and the primal
//! attack is the cheapest one here for every dense preset anyway (see the generated table).

use super::reduction::{CostModel, log2_delta};
use super::{AttackCost, AttackKind, LweInstance, scan_beta};

/// Dual attack at block size β on `n` secret coordinates with secret std `2^log_sigma_s`.
/// Returns (log2 cost of the lattice part, log2 of the number of short vectors needed, d).
pub(crate) fn dual_core(
    inst: &LweInstance,
    n: usize,
    log_sigma_s: f64,
    beta: f64,
    model: CostModel,
) -> Option<(f64, f64, f64)> {
    let n = n as f64;
    let log_q = inst.log_q;
    let log_sigma_e = inst.log2_sigma_e();
    // Scale the secret part so both halves contribute alike; a wide secret is swapped into
    // normal form first (it then has the error's distribution).
    let log_xi = (log_sigma_s - log_sigma_e).min(0.0);
    let log_vol = n * (log_q + log_xi);
    let l = log2_delta(beta);
    let d_star = (log_vol / l).sqrt();
    let d_min = (n + 1.0).max(beta);
    let d_max = n + inst.max_samples() as f64;
    if d_max < d_min {
        return None;
    }
    let d = d_star.clamp(d_min, d_max).round();
    let log_len = d * l + log_vol / d;
    // Standard deviation of ⟨v, (e, s/ξ')⟩ relative to q, then the advantage.
    let log_rel = log_sigma_e + log_len - log_q;
    let pi = std::f64::consts::PI;
    let log2_eps = -2.0 * pi * pi * (2.0 * log_rel).exp2() * std::f64::consts::LOG2_E;
    let log2_r = (-2.0 * log2_eps).max(0.0);
    let runs = (log2_r - model.log2_vectors_per_call(beta)).max(0.0);
    Some((model.log2_bkz(beta, d) + runs, log2_r, d))
}

/// The plain dual attack on the whole secret.
pub fn dual(inst: &LweInstance, model: CostModel) -> AttackCost {
    let log_sigma_s = inst.log2_sigma_s(inst.n);
    scan_beta(inst, |beta| {
        let (cost, _, d) = dual_core(inst, inst.n, log_sigma_s, beta, model)?;
        Some(AttackCost {
            kind: AttackKind::Dual,
            log2_cost: cost,
            beta,
            d,
            eta: None,
            guessed: None,
        })
    })
    .unwrap_or_else(|| AttackCost::infeasible(AttackKind::Dual))
}
