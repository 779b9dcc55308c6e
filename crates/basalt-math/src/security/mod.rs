//! Lattice security estimates for LWE and RLWE: how many bit operations the best known attack
//! needs, computed from the parameters rather than copied from a paper.
//!
//! Written after the models of the lattice estimator (Albrecht, Player, Scott, "On the concrete
//! hardness of Learning with Errors", J. Math. Cryptol. 2015; its successor
//! `malb/lattice-estimator`), one file per attack:
//! - [`primal`]: uSVP with the 2016 "new hope" success condition, and BDD;
//! - [`dual`]: the dual (distinguishing) attack with small-secret scaling;
//! - [`hybrid`]: for sparse secrets, coordinate dropping (primal and dual), the dual-hybrid
//!   and the primal (meet-in-the-middle) hybrid;
//! - [`reduction`]: δ(β), the geometric series assumption and the BKZ cost model.
//!
//! An RLWE instance of degree N (and a GLWE instance of dimension k, degree N) is estimated as
//! the LWE instance of dimension N (k·N) with the same q and distributions, as the Homomorphic
//! Encryption Standard and the estimator do: no known attack gains from the ring structure.
//! The number of samples is not limited by default (the attacker uses as many as helps).
//!
//! The default cost model, [`CostModel::HeStandardSieve`], is the one the Homomorphic
//! Encryption Standard's tables were computed with, so that its table can be checked
//! (`tests::matches_the_he_standard_table`). Quantum attacks are not estimated.

pub mod distribution;
pub mod dual;
pub mod hybrid;
pub mod primal;
pub mod reduction;

pub use distribution::Distribution;
pub use reduction::CostModel;

/// An LWE instance: `n` secret coordinates, modulus `2^log_q`, the secret and error
/// distributions, and at most `samples` samples (`None`: as many as the attacker wants).
#[derive(Clone, Debug, PartialEq)]
pub struct LweInstance {
    pub n: usize,
    pub log_q: f64,
    pub secret: Distribution,
    pub error: Distribution,
    pub samples: Option<usize>,
}

/// Which attack a cost belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttackKind {
    PrimalUsvp,
    PrimalBdd,
    Dual,
    /// Sparse secrets: guess `k` coordinates zero, then primal or dual on the rest.
    SparseDrop,
    /// Sparse secrets: dual attack on `n − k` coordinates, exhaustive guessing of `k`.
    DualHybrid,
    /// Sparse secrets: BKZ + Babai on `n − k` coordinates, meet-in-the-middle on `k`.
    PrimalHybrid,
}

impl AttackKind {
    pub fn name(&self) -> &'static str {
        match self {
            AttackKind::PrimalUsvp => "primal uSVP",
            AttackKind::PrimalBdd => "primal BDD",
            AttackKind::Dual => "dual",
            AttackKind::SparseDrop => "sparse drop + primal/dual",
            AttackKind::DualHybrid => "dual-hybrid",
            AttackKind::PrimalHybrid => "primal hybrid (MITM)",
        }
    }
}

/// The cost of one attack at its best parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct AttackCost {
    pub kind: AttackKind,
    /// log2 of the number of bit operations (`+∞` if the attack never succeeds).
    pub log2_cost: f64,
    /// BKZ block size.
    pub beta: f64,
    /// Lattice dimension.
    pub d: f64,
    /// BDD: dimension of the final SVP call.
    pub eta: Option<f64>,
    /// Hybrids: number of guessed (or dropped) coordinates.
    pub guessed: Option<usize>,
}

impl AttackCost {
    fn infeasible(kind: AttackKind) -> AttackCost {
        AttackCost {
            kind,
            log2_cost: f64::INFINITY,
            beta: f64::NAN,
            d: f64::NAN,
            eta: None,
            guessed: None,
        }
    }
}

/// The estimate of an instance: every attack and the cheapest.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Security in bits: log2 of the cheapest attack's cost.
    pub bits: f64,
    pub model: CostModel,
    pub attacks: Vec<AttackCost>,
}

impl Estimate {
    /// The cheapest attack.
    pub fn best(&self) -> &AttackCost {
        self.attacks
            .iter()
            .min_by(|a, b| a.log2_cost.total_cmp(&b.log2_cost))
            .expect("at least one attack")
    }
}

impl LweInstance {
    /// An RLWE (or GLWE, `n = k·N`) instance with unlimited samples.
    pub fn new(n: usize, log_q: f64, secret: Distribution, error: Distribution) -> LweInstance {
        LweInstance { n, log_q, secret, error, samples: None }
    }

    fn max_samples(&self) -> usize {
        // "Unlimited": more than any optimum needs (the optimal d is below 2n + a few β for every
        // instance of practical interest).
        self.samples.unwrap_or(4 * self.n + 2048)
    }

    pub(crate) fn log2_sigma_e(&self) -> f64 {
        self.error.log2_std_dev(self.n, self.log_q)
    }

    /// Secret standard deviation over `n` coordinates, capped at the error's (normal form).
    pub(crate) fn log2_sigma_s(&self, n: usize) -> f64 {
        self.secret.log2_std_dev(n, self.log_q).min(self.log2_sigma_e())
    }

    /// log2 of the primal embedding's secret scaling ξ = σ_e/σ_s (≥ 1).
    pub(crate) fn log2_scale_primal(&self) -> f64 {
        (self.log2_sigma_e() - self.log2_sigma_s(self.n)).max(0.0)
    }

    /// Estimate every applicable attack under `model`.
    pub fn estimate_with(&self, model: CostModel) -> Estimate {
        let mut attacks =
            vec![primal::usvp(self, model), primal::bdd(self, model), dual::dual(self, model)];
        if self.secret.hamming_weight().is_some() {
            attacks.push(hybrid::drop_and_solve(self, model));
            attacks.push(hybrid::dual_hybrid(self, model));
            attacks.push(hybrid::primal_hybrid(self, model));
        }
        let bits = attacks.iter().map(|a| a.log2_cost).fold(f64::INFINITY, f64::min);
        Estimate { bits, model, attacks }
    }

    /// [`LweInstance::estimate_with`] the default (HE Standard) cost model.
    pub fn estimate(&self) -> Estimate {
        self.estimate_with(CostModel::default())
    }
}

/// Minimise `f(β)` over block sizes: a coarse scan, then every β around the best.
pub(crate) fn scan_beta<F: Fn(f64) -> Option<AttackCost>>(
    inst: &LweInstance,
    f: F,
) -> Option<AttackCost> {
    let limit = (inst.n + 1 + inst.max_samples()) as f64;
    let step = (limit / 256.0).ceil().max(1.0);
    let better = |best: &Option<AttackCost>, c: &AttackCost| {
        !c.log2_cost.is_nan() && best.as_ref().is_none_or(|b| c.log2_cost < b.log2_cost)
    };
    let mut best: Option<AttackCost> = None;
    let mut beta = 2.0;
    while beta <= limit {
        if let Some(c) = f(beta)
            && better(&best, &c)
        {
            best = Some(c);
        }
        beta += step;
    }
    let centre = best.as_ref()?.beta;
    let mut beta = (centre - step).max(2.0);
    while beta <= (centre + step).min(limit) {
        if let Some(c) = f(beta)
            && better(&best, &c)
        {
            best = Some(c);
        }
        beta += 1.0;
    }
    best
}

/// log2 of the binomial coefficient C(n, k) (via log-gamma).
pub(crate) fn log2_binomial(n: usize, k: usize) -> f64 {
    if k > n {
        return f64::NEG_INFINITY;
    }
    (ln_gamma(n as f64 + 1.0) - ln_gamma(k as f64 + 1.0) - ln_gamma((n - k) as f64 + 1.0))
        * std::f64::consts::LOG2_E
}

/// ln Γ(x) for x ≥ 1: Stirling's series after shifting x above 10.
fn ln_gamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 10.0 {
        acc -= x.ln();
        x += 1.0;
    }
    let inv = 1.0 / x;
    let inv2 = inv * inv;
    acc + (x - 0.5) * x.ln() - x
        + 0.5 * (2.0 * std::f64::consts::PI).ln()
        + inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn he_standard(log_n: u32, log_q: f64) -> Estimate {
        LweInstance::new(
            1 << log_n,
            log_q,
            Distribution::Ternary,
            Distribution::Gaussian { sigma: 3.2 },
        )
        .estimate()
    }

    /// The Homomorphic Encryption Standard (Albrecht et al., HomomorphicEncryption.org, v1.1,
    /// 2018), Table 1, ternary secret, σ = 3.2, classical: the largest log q for 128-bit
    /// security. At that log q the estimate must be 128 bits within a few bits, and one bit
    /// of q more must not make it more secure.
    #[test]
    fn matches_the_he_standard_table() {
        for (log_n, log_q) in
            [(10, 27.0), (11, 54.0), (12, 109.0), (13, 218.0), (14, 438.0), (15, 881.0)]
        {
            let e = he_standard(log_n, log_q);
            println!("N=2^{log_n} log q={log_q}: {:.1} bits ({:?})", e.bits, e.best());
            assert!((e.bits - 128.0).abs() <= 4.0, "N = 2^{log_n}: {:.1} bits", e.bits);
            assert!(he_standard(log_n, log_q + 1.0).bits <= e.bits);
        }
    }

    #[test]
    fn more_modulus_is_less_secure_and_more_dimension_is_more() {
        let a = he_standard(13, 150.0).bits;
        let b = he_standard(13, 218.0).bits;
        let c = he_standard(14, 218.0).bits;
        assert!(a > b && c > b, "{a} {b} {c}");
    }

    #[test]
    fn sparse_secrets_are_weaker_than_dense_ones() {
        let dense = he_standard(15, 881.0).bits;
        let sparse = LweInstance::new(
            1 << 15,
            881.0,
            Distribution::SparseTernary { h: 64 },
            Distribution::Gaussian { sigma: 3.2 },
        )
        .estimate();
        println!("{sparse:#?}");
        let t = std::time::Instant::now();
        let lattigo = LweInstance::new(
            1 << 16,
            1546.0,
            Distribution::SparseTernary { h: 192 },
            Distribution::Gaussian { sigma: 3.2 },
        )
        .estimate();
        println!("{lattigo:#?} {:?}", t.elapsed());
        assert!(sparse.bits < dense - 5.0, "sparse {:.1} vs dense {dense:.1}", sparse.bits);
    }

    #[test]
    fn binomials() {
        assert!((log2_binomial(10, 3) - 120f64.log2()).abs() < 1e-9);
        assert!((log2_binomial(5, 0)).abs() < 1e-9);
        let exact: f64 = (1..=500).map(|i| ((500 + i) as f64 / i as f64).log2()).sum();
        assert!((log2_binomial(1000, 500) - exact).abs() < 1e-6);
    }
}
