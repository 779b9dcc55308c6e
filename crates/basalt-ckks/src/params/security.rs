//! Security of a CKKS parameter set, computed by the lattice estimator of
//! [`basalt_math::security`] (primal uSVP and BDD, dual, and for sparse secrets the hybrids).
//!
//! The instance is the RLWE problem of every key: degree N, modulus `QP` (the widest modulus a
//! key-switching key lives in, see [`crate::Parameters::log_qp`]), the set's secret
//! distribution (uniform ternary, or ternary of fixed Hamming weight `h`) and a rounded
//! Gaussian error of standard deviation σ. The cost model is the Homomorphic Encryption
//! Standard's (`0.292β + 16.4 + log2(8d)`, classical), so that a dense-secret set at the
//! Standard's bound comes out at 128 bits (checked against its table in
//! `basalt_math::security`).
//!
//! A set whose estimate is below [`MIN_SECURE_BITS`] is refused unless the caller opts in
//! ([`crate::Parameters::new_insecure`], `allow_insecure` in the literal).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use basalt_math::security::{CostModel, Distribution, LweInstance};
use serde::{Deserialize, Serialize};

use super::literal::SecretDistribution;

/// Sets estimated below this many bits need an explicit opt-in.
pub const MIN_SECURE_BITS: f64 = 128.0;

/// Estimated security of a parameter set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SecurityEstimate {
    /// log2 of the cost of the cheapest attack (classical, HE Standard cost model).
    pub bits: f64,
    /// Highest of 128/192/256 the estimate reaches (None: below 128).
    pub meets: Option<u32>,
    /// log2(QP) used.
    pub log_qp: f64,
    /// The cheapest attack (e.g. "primal BDD", "dual-hybrid").
    pub attack: String,
    /// Its BKZ block size.
    pub beta: f64,
    /// The secret distribution as estimated (e.g. "ternary", "sparse ternary h=192").
    pub secret: String,
    /// The same instance under the core-SVP model (0.292β), a lower bound for comparison.
    pub core_svp_bits: f64,
    /// How the figure was computed.
    pub source: String,
}

/// The estimator's distribution for a CKKS secret.
pub fn secret_distribution(s: SecretDistribution) -> Distribution {
    match s {
        SecretDistribution::DenseTernary => Distribution::Ternary,
        SecretDistribution::Hamming { h } => Distribution::SparseTernary { h },
    }
}

type Key = (u32, u64, SecretDistribution, u64);

fn cache() -> &'static Mutex<HashMap<Key, SecurityEstimate>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, SecurityEstimate>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Estimate N = 2^log_n, modulus 2^log_qp, the given secret and error σ. Results are cached
/// per instance (sparse secrets take tens of milliseconds).
pub fn estimate(
    log_n: u32,
    log_qp: f64,
    secret: SecretDistribution,
    sigma: f64,
) -> SecurityEstimate {
    let key = (log_n, log_qp.to_bits(), secret, sigma.to_bits());
    if let Some(e) = cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return e;
    }
    let inst = LweInstance::new(
        1 << log_n,
        log_qp,
        secret_distribution(secret),
        Distribution::Gaussian { sigma },
    );
    let e = inst.estimate_with(CostModel::HeStandardSieve);
    let core = inst.estimate_with(CostModel::CoreSvp);
    let best = e.best();
    let meets = [256u32, 192, 128].into_iter().find(|&b| e.bits >= b as f64);
    let out = SecurityEstimate {
        bits: e.bits,
        meets,
        log_qp,
        attack: best.kind.name().to_string(),
        beta: best.beta,
        secret: secret_distribution(secret).to_string(),
        core_svp_bits: core.bits,
        source: format!("lattice estimate, cost model {}", CostModel::HeStandardSieve.name()),
    };
    if let Ok(mut c) = cache().lock() {
        c.insert(key, out.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_sets() {
        // FAB: N = 2^16, log QP ≈ 1728, dense: secure.
        let fab = estimate(16, 1728.0, SecretDistribution::DenseTernary, 3.2);
        assert_eq!(fab.meets, Some(128), "{fab:?}");
        // CraterLake 80-bit style: log QP ≈ 2436 at N = 2^16: below 128.
        let cl = estimate(16, 2436.0, SecretDistribution::DenseTernary, 3.2);
        assert!(cl.meets.is_none() && cl.bits > 70.0, "{cl:?}");
        // The same modulus with a sparse secret is weaker.
        let sp = estimate(16, 1546.0, SecretDistribution::Hamming { h: 192 }, 3.2);
        let de = estimate(16, 1546.0, SecretDistribution::DenseTernary, 3.2);
        assert!(sp.bits < de.bits, "{sp:?} vs {de:?}");
        assert!(sp.core_svp_bits < sp.bits);
    }
}
