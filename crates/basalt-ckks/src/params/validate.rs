//! Checked parameters: [`Parameters::new`] turns a [`ParametersLiteral`] into a usable set or
//! names what is wrong (SEAL's `invalid_coeff_modulus_no_ntt`, `invalid_parameters_insecure`…).
//!
//! Checks, in order: ring degree; Q and P given one way each; bit sizes in 20..=61; primes
//! generated or checked (prime, `q ≡ 1 mod 2N`, all distinct); `dnum`/`alpha` in range; `P` at
//! least as large as the largest digit up to [`SLACK_BITS`] (otherwise key switching would
//! amplify noise instead of dividing it); secret weight, σ, scale, level layout; and finally security against the
//! HE Standard table unless the caller opted in.

use std::sync::Arc;

use basalt_math::RingContext;
use basalt_math::primes;
use serde::{Deserialize, Serialize};
use sha3::{Digest, Sha3_256};

use super::literal::{ParametersLiteral, SecretDistribution};
use super::security::{self, SecurityEstimate};
use crate::error::ParamError;

/// How many bits `P` may fall short of the largest digit before validation rejects the set.
pub const SLACK_BITS: f64 = 8.0;

/// Validated CKKS parameters with their ring. Cheap to clone (the ring is shared).
#[derive(Clone)]
pub struct Parameters {
    lit: ParametersLiteral,
    ring: Arc<RingContext>,
    q: Vec<u64>,
    p: Vec<u64>,
    alpha: usize,
    dnum: usize,
    base_primes: usize,
    per_level: usize,
    id: u64,
    security: SecurityEstimate,
}

impl std::fmt::Debug for Parameters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parameters")
            .field("name", &self.lit.name)
            .field("log_n", &self.lit.log_n)
            .field("q", &self.q)
            .field("p", &self.p)
            .field("dnum", &self.dnum)
            .field("alpha", &self.alpha)
            .field("id", &format_args!("{:016x}", self.id))
            .finish()
    }
}

/// A summary of a parameter set for reports (CLI `--json`, Python `repr`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ParamsSummary {
    pub name: String,
    pub aliases: Vec<String>,
    pub log_n: u32,
    pub max_level: usize,
    pub q_limbs: usize,
    pub p_limbs: usize,
    pub dnum: usize,
    pub alpha: usize,
    pub log_q: f64,
    pub log_p: f64,
    pub log_qp: f64,
    pub log_default_scale: f64,
    pub double_prime: bool,
    pub secret: SecretDistribution,
    pub security: SecurityEstimate,
    pub id: String,
}

fn log2_sum(v: &[u64]) -> f64 {
    v.iter().map(|&x| (x as f64).log2()).sum()
}

/// Generate primes for the requested bit sizes, Q positions first then P for each size, none
/// in `exclude` (Lattigo's order: primes closest to 2^bits, alternating above and below).
fn generate(
    below: bool,
    log_n: u32,
    log_q: &[u32],
    log_p: &[u32],
    exclude: &[u64],
) -> Result<(Vec<u64>, Vec<u64>), ParamError> {
    let mut q = vec![0u64; log_q.len()];
    let mut p = vec![0u64; log_p.len()];
    let mut sizes: Vec<u32> = log_q.iter().chain(log_p).copied().collect();
    sizes.dedup();
    let mut seen = Vec::new();
    for b in sizes {
        if seen.contains(&b) {
            continue;
        }
        seen.push(b);
        if !(20..=61).contains(&b) {
            return Err(ParamError::ModulusSizeOutOfRange { bits: b });
        }
        let cq = log_q.iter().filter(|&&x| x == b).count();
        let cp = log_p.iter().filter(|&&x| x == b).count();
        let got = if below {
            primes::ntt_primes_below(b, log_n, cq + cp, exclude)
        } else {
            primes::ntt_primes(b, log_n, cq + cp, exclude)
        }
        .map_err(|e| ParamError::PrimeGeneration(e.to_string()))?;
        // Interleave Q and P in proportion to their counts, so that a size shared by both (a
        // 1-digit set with P ≈ Q) gives them primes of the same magnitude.
        let qpos: Vec<usize> = (0..log_q.len()).filter(|&i| log_q[i] == b).collect();
        let ppos: Vec<usize> = (0..log_p.len()).filter(|&i| log_p[i] == b).collect();
        let (mut iq, mut ip) = (0usize, 0usize);
        for prime in got {
            let take_p = ip < cp && (iq >= cq || (ip + 1) * cq <= (iq + 1) * cp);
            if take_p {
                p[ppos[ip]] = prime;
                ip += 1;
            } else {
                q[qpos[iq]] = prime;
                iq += 1;
            }
        }
        if iq != cq || ip != cp {
            return Err(ParamError::PrimeGeneration(format!("too few {b}-bit primes")));
        }
    }
    Ok((q, p))
}

impl Parameters {
    /// Validate `lit` and build its ring. Sets below 128-bit security (HE Standard table) are
    /// rejected with [`ParamError::Insecure`] unless `lit.allow_insecure` is set.
    ///
    /// # Errors
    /// One [`ParamError`] variant per failed check (see the module doc).
    pub fn new(lit: ParametersLiteral) -> Result<Parameters, ParamError> {
        Self::build(lit, false)
    }

    /// Same as [`Parameters::new`] but accepts sets below 128-bit security (toy rings, the
    /// CraterLake 80-bit sets). The estimate is still computed and reported.
    pub fn new_insecure(lit: ParametersLiteral) -> Result<Parameters, ParamError> {
        Self::build(lit, true)
    }

    fn build(lit: ParametersLiteral, force_insecure: bool) -> Result<Parameters, ParamError> {
        let log_n = lit.log_n;
        if !(4..=17).contains(&log_n) {
            return Err(ParamError::LogNOutOfRange(log_n));
        }
        let n = 1usize << log_n;
        if !lit.log_q.is_empty() && !lit.q.is_empty() {
            return Err(ParamError::BothSizesAndModuli { field: "q" });
        }
        if !lit.log_p.is_empty() && !lit.p.is_empty() {
            return Err(ParamError::BothSizesAndModuli { field: "p" });
        }
        if lit.log_q.is_empty() && lit.q.is_empty() {
            return Err(ParamError::EmptyQ);
        }
        if lit.log_p.is_empty() && lit.p.is_empty() {
            return Err(ParamError::EmptyP);
        }
        for &m in lit.q.iter().chain(&lit.p) {
            if !primes::is_prime(m) {
                return Err(ParamError::NotPrime { modulus: m });
            }
            if m % (2 * n as u64) != 1 {
                return Err(ParamError::PrimeNotNttFriendly { modulus: m, log_n });
            }
            let bits = 64 - m.leading_zeros();
            if !(20..=62).contains(&bits) {
                return Err(ParamError::ModulusSizeOutOfRange { bits });
            }
        }
        let explicit: Vec<u64> = lit.q.iter().chain(&lit.p).copied().collect();
        let (gq, gp) = generate(lit.primes_below, log_n, &lit.log_q, &lit.log_p, &explicit)?;
        let q = if lit.q.is_empty() { gq } else { lit.q.clone() };
        let p = if lit.p.is_empty() { gp } else { lit.p.clone() };
        let mut all: Vec<u64> = q.iter().chain(&p).copied().collect();
        all.sort_unstable();
        if let Some(w) = all.windows(2).find(|w| w[0] == w[1]) {
            return Err(ParamError::DuplicateModulus { modulus: w[0] });
        }
        let limbs = q.len();
        let k = p.len();
        let alpha = match (lit.dnum, lit.alpha) {
            (Some(_), Some(_)) => return Err(ParamError::DnumAndAlpha),
            (Some(d), None) => {
                if d == 0 || d > limbs {
                    return Err(ParamError::DnumOutOfRange { dnum: d, max: limbs });
                }
                limbs.div_ceil(d)
            }
            (None, Some(a)) => {
                if a == 0 || a > limbs {
                    return Err(ParamError::AlphaOutOfRange { alpha: a, max: limbs });
                }
                a
            }
            (None, None) => k.min(limbs),
        };
        let dnum = limbs.div_ceil(alpha);
        let log_p = log2_sum(&p);
        let log_digit = q.chunks(alpha).map(log2_sum).fold(0.0, f64::max);
        // P may be slightly smaller than a digit (1-digit sets with P primes generated below
        // the Q primes): each missing bit costs one bit of key-switching noise. Reject only a
        // clear mismatch.
        if log_p + SLACK_BITS < log_digit {
            return Err(ParamError::SpecialModulusTooSmall { log_p, log_digit });
        }
        if let SecretDistribution::Hamming { h } = lit.secret
            && (h == 0 || h > n)
        {
            return Err(ParamError::HammingWeightOutOfRange { h, n });
        }
        if !(lit.sigma.is_finite() && lit.sigma > 0.0) {
            return Err(ParamError::BadSigma(lit.sigma));
        }
        if !(lit.log_default_scale.is_finite()
            && lit.log_default_scale >= 1.0
            && lit.log_default_scale <= 120.0)
        {
            return Err(ParamError::BadScale(lit.log_default_scale));
        }
        let base = lit.base_primes.unwrap_or(1);
        let per_level = if lit.double_prime { 2 } else { 1 };
        if base == 0 || base > limbs || !(limbs - base).is_multiple_of(per_level) {
            return Err(ParamError::BadLevelLayout { limbs, base, per_level });
        }
        let log_qp = log2_sum(&q) + log_p;
        let sparse = matches!(lit.secret, SecretDistribution::Hamming { .. });
        let security = security::estimate(log_n, log_qp, sparse);
        if security.meets.is_none() && !(lit.allow_insecure || force_insecure) {
            return Err(ParamError::Insecure {
                log_qp,
                max_log_qp: security.max_log_qp_128,
                log_n,
            });
        }
        let ring = RingContext::new(log_n, &q, &p).map_err(|e| ParamError::Ring(e.to_string()))?;
        let id = Self::hash(&lit, &q, &p, alpha, base, per_level);
        Ok(Parameters {
            lit,
            ring: Arc::new(ring),
            q,
            p,
            alpha,
            dnum,
            base_primes: base,
            per_level,
            id,
            security,
        })
    }

    fn hash(
        lit: &ParametersLiteral,
        q: &[u64],
        p: &[u64],
        alpha: usize,
        base: usize,
        per_level: usize,
    ) -> u64 {
        let mut h = Sha3_256::new();
        h.update(b"basalt-ckks/params/v1");
        h.update(lit.log_n.to_le_bytes());
        for x in q.iter().chain([&0u64]).chain(p) {
            h.update(x.to_le_bytes());
        }
        h.update((alpha as u64).to_le_bytes());
        h.update((base as u64).to_le_bytes());
        h.update((per_level as u64).to_le_bytes());
        let s = match lit.secret {
            SecretDistribution::DenseTernary => 0u64,
            SecretDistribution::Hamming { h } => 1 + h as u64,
        };
        h.update(s.to_le_bytes());
        h.update(lit.sigma.to_le_bytes());
        let d = h.finalize();
        u64::from_le_bytes(d[..8].try_into().expect("8 bytes"))
    }

    /// The literal this set was built from (with the names it was given).
    pub fn literal(&self) -> &ParametersLiteral {
        &self.lit
    }
    /// Name by content.
    pub fn name(&self) -> &str {
        &self.lit.name
    }
    /// The ring (all Q and P primes), shared.
    pub fn ring(&self) -> &Arc<RingContext> {
        &self.ring
    }
    pub fn n(&self) -> usize {
        1 << self.lit.log_n
    }
    pub fn log_n(&self) -> u32 {
        self.lit.log_n
    }
    /// Maximum number of complex slots, N/2.
    pub fn max_slots(&self) -> usize {
        self.n() / 2
    }
    /// L: index of the top Q prime.
    pub fn max_level(&self) -> usize {
        self.q.len() - 1
    }
    pub fn q(&self) -> &[u64] {
        &self.q
    }
    pub fn p(&self) -> &[u64] {
        &self.p
    }
    /// Number of special primes.
    pub fn k(&self) -> usize {
        self.p.len()
    }
    /// Q limbs per key-switching digit.
    pub fn alpha(&self) -> usize {
        self.alpha
    }
    /// Digits at the top level.
    pub fn dnum(&self) -> usize {
        self.dnum
    }
    /// Digits used at `level`: ceil((level+1)/alpha).
    pub fn dnum_at(&self, level: usize) -> usize {
        (level + 1).div_ceil(self.alpha)
    }
    /// Q-limb range of digit `j` at `level`.
    pub fn digit_range(&self, level: usize, j: usize) -> std::ops::Range<usize> {
        let lo = j * self.alpha;
        lo..((j + 1) * self.alpha).min(level + 1)
    }
    /// Primes dropped per rescale (2 with double-prime scaling).
    pub fn primes_per_rescale(&self) -> usize {
        self.per_level
    }
    /// Primes forming the base modulus q_0.
    pub fn base_primes(&self) -> usize {
        self.base_primes
    }
    /// Number of logical levels (rescales available from the top).
    pub fn logical_levels(&self) -> usize {
        (self.q.len() - self.base_primes) / self.per_level
    }
    /// Parameter-set id (first 8 bytes of a SHA3-256 of the moduli, digits and secret).
    pub fn id(&self) -> u64 {
        self.id
    }
    pub fn security(&self) -> &SecurityEstimate {
        &self.security
    }
    pub fn secret(&self) -> SecretDistribution {
        self.lit.secret
    }
    pub fn sigma(&self) -> f64 {
        self.lit.sigma
    }
    /// Default scale Δ = 2^log_default_scale.
    pub fn default_scale(&self) -> f64 {
        self.lit.log_default_scale.exp2()
    }
    pub fn log_q(&self) -> f64 {
        log2_sum(&self.q)
    }
    pub fn log_p(&self) -> f64 {
        log2_sum(&self.p)
    }
    pub fn log_qp(&self) -> f64 {
        self.log_q() + self.log_p()
    }

    /// A report-friendly summary.
    pub fn summary(&self) -> ParamsSummary {
        ParamsSummary {
            name: self.lit.name.clone(),
            aliases: self.lit.aliases.clone(),
            log_n: self.lit.log_n,
            max_level: self.max_level(),
            q_limbs: self.q.len(),
            p_limbs: self.p.len(),
            dnum: self.dnum,
            alpha: self.alpha,
            log_q: self.log_q(),
            log_p: self.log_p(),
            log_qp: self.log_qp(),
            log_default_scale: self.lit.log_default_scale,
            double_prime: self.lit.double_prime,
            secret: self.lit.secret,
            security: self.security.clone(),
            id: format!("{:016x}", self.id),
        }
    }
}
