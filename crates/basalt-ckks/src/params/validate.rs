//! Checked parameters: [`Parameters::new`] turns a [`ParametersLiteral`] into a usable set or
//! names what is wrong (SEAL's `invalid_coeff_modulus_no_ntt`, `invalid_parameters_insecure`…).
//!
//! Checks, in order: ring degree; Q and P given one way each; bit sizes in 20..=61; primes
//! generated or checked (prime, `q ≡ 1 mod 2N`, all distinct); `dnum`/`alpha` in range; `P` at
//! least as large as the largest digit up to [`SLACK_BITS`] (otherwise key switching would
//! amplify noise instead of dividing it); secret weight, σ, scale, level layout; and finally the
//! lattice estimate of [`super::security`] (at least 128 bits unless the caller opted in).

use std::sync::Arc;

use basalt_math::RingContext;
use basalt_math::primes;
use serde::{Deserialize, Serialize};
use sha3::{Digest, Sha3_256};

use super::literal::{KeySwitchBand, ParametersLiteral, SecretDistribution};
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
    gadgets: Vec<Gadget>,
    /// Index into `gadgets` of the gadget each level uses.
    gadget_of: Vec<usize>,
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

/// One key-switching gadget: digits of `alpha` Q limbs, the special modulus of the first
/// `p_limbs` special primes. A key-switching key holds one part per gadget, over
/// `Q_top_level ∪ P`; every level uses exactly one gadget (the same one at every level unless
/// the set has `key_switch_bands`). Two bands that give a level the same `alpha` share its
/// gadget: the digits are the same chunks of `alpha` limbs from `q_0` and `P` is the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gadget {
    pub alpha: usize,
    pub p_limbs: usize,
    /// The highest level using this gadget: its key part lives on `Q_top_level ∪ P`.
    pub top_level: usize,
}

impl Gadget {
    /// Digits of the key part (at `top_level`).
    pub fn digits(&self) -> usize {
        (self.top_level + 1).div_ceil(self.alpha)
    }
}

/// Check the band list of a literal: ascending bounds above 1, the last band open-ended, at
/// least one digit everywhere. Bounds beyond the chain's limbs are allowed (the bands above
/// are then unused), so that a preset's bands survive a truncated chain.
fn check_bands(bands: &[KeySwitchBand]) -> Result<(), ParamError> {
    let bad = |msg: String| Err(ParamError::BadKeySwitchBands(msg));
    let mut prev = 1;
    for (i, b) in bands.iter().enumerate() {
        if b.digits == 0 {
            return bad(format!("band {i} has 0 digits"));
        }
        match (b.below_q_limbs, i + 1 == bands.len()) {
            (None, true) => {}
            (None, false) => {
                return bad(format!("band {i} has no `below_q_limbs` but is not the last"));
            }
            (Some(x), true) => {
                return bad(format!(
                    "the last band has `below_q_limbs = {x}`; it must be open-ended"
                ));
            }
            (Some(x), false) => {
                if x <= prev {
                    return bad(format!(
                        "band {i}: `below_q_limbs = {x}` must exceed the previous bound ({prev})"
                    ));
                }
                prev = x;
            }
        }
    }
    Ok(())
}

/// The gadgets of a chain of `limbs` Q limbs and `k` special primes, and the gadget of each
/// level: one gadget `(alpha, k)` for every level without bands; with bands, at `l+1` limbs in a
/// band of `t` digits, `α_l = ⌈(l+1)/t⌉` and `P_l` = the first `α_l` special primes.
fn level_gadgets(
    limbs: usize,
    k: usize,
    alpha: usize,
    bands: &[KeySwitchBand],
) -> Result<(Vec<Gadget>, Vec<usize>), ParamError> {
    if bands.is_empty() {
        return Ok((vec![Gadget { alpha, p_limbs: k, top_level: limbs - 1 }], vec![0; limbs]));
    }
    let mut gadgets: Vec<Gadget> = Vec::new();
    let mut of = Vec::with_capacity(limbs);
    for level in 0..limbs {
        let q = level + 1;
        let band =
            bands.iter().find(|b| b.below_q_limbs.is_none_or(|x| q < x)).expect("open last band");
        let a = q.div_ceil(band.digits);
        if a > k {
            return Err(ParamError::TooFewSpecialPrimes { q_limbs: q, needed: a, have: k });
        }
        let idx = match gadgets.iter().position(|g| g.alpha == a) {
            Some(i) => i,
            None => {
                gadgets.push(Gadget { alpha: a, p_limbs: a, top_level: level });
                gadgets.len() - 1
            }
        };
        gadgets[idx].top_level = level;
        of.push(idx);
    }
    Ok((gadgets, of))
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
    /// Level-dependent key switching (empty: `dnum`/`alpha` at every level).
    #[serde(default)]
    pub key_switch_bands: Vec<KeySwitchBand>,
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
    /// Validate `lit` and build its ring. Sets estimated below 128-bit security are rejected
    /// with [`ParamError::Insecure`] unless `lit.allow_insecure` is set.
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

    fn build(mut lit: ParametersLiteral, force_insecure: bool) -> Result<Parameters, ParamError> {
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
        if !lit.key_switch_bands.is_empty() {
            if lit.dnum.is_some() || lit.alpha.is_some() {
                return Err(ParamError::BandsAndDnum);
            }
            check_bands(&lit.key_switch_bands)?;
        }
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
        let (gadgets, gadget_of) = level_gadgets(limbs, k, alpha, &lit.key_switch_bands)?;
        let top = gadgets[gadget_of[limbs - 1]];
        let (alpha, dnum) = (top.alpha, top.digits());
        for g in &gadgets {
            let log_p = log2_sum(&p[..g.p_limbs]);
            let log_digit = q[..=g.top_level].chunks(g.alpha).map(log2_sum).fold(0.0, f64::max);
            // P may be slightly smaller than a digit (1-digit sets with P primes generated below
            // the Q primes): each missing bit costs one bit of key-switching noise. Reject only
            // a clear mismatch.
            if log_p + SLACK_BITS < log_digit {
                return Err(ParamError::SpecialModulusTooSmall { log_p, log_digit });
            }
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
        // The widest modulus a key lives in: `Q_top ∪ P` of the widest gadget.
        let log_qp = gadgets
            .iter()
            .map(|g| log2_sum(&q[..=g.top_level]) + log2_sum(&p[..g.p_limbs]))
            .fold(f64::NEG_INFINITY, f64::max);
        let security = security::estimate(log_n, log_qp, lit.secret, lit.sigma);
        if security.bits < security::MIN_SECURE_BITS && !(lit.allow_insecure || force_insecure) {
            return Err(ParamError::Insecure {
                name: lit.name.clone(),
                bits: security.bits,
                attack: security.attack.clone(),
                log_qp,
                log_n,
            });
        }
        // The opt-in is recorded in the literal, so sets derived from this one (a bootstrap's
        // encapsulation ring) inherit it; it is not part of the id.
        lit.allow_insecure |= force_insecure;
        let ring = RingContext::new(log_n, &q, &p).map_err(|e| ParamError::Ring(e.to_string()))?;
        let id = Self::hash(&lit, &q, &p, alpha, base, per_level);
        Ok(Parameters {
            lit,
            ring: Arc::new(ring),
            q,
            p,
            alpha,
            dnum,
            gadgets,
            gadget_of,
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
        // Only a banded set hashes its bands, so every other set keeps its id.
        if !lit.key_switch_bands.is_empty() {
            h.update(b"key_switch_bands");
            for b in &lit.key_switch_bands {
                h.update((b.below_q_limbs.unwrap_or(0) as u64).to_le_bytes());
                h.update((b.digits as u64).to_le_bytes());
            }
        }
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
    /// Number of special primes in the chain (the widest `P` any level uses; see
    /// [`Parameters::k_at`]).
    pub fn k(&self) -> usize {
        self.p.len()
    }
    /// Q limbs per key-switching digit at the top level.
    pub fn alpha(&self) -> usize {
        self.alpha
    }
    /// Digits at the top level.
    pub fn dnum(&self) -> usize {
        self.dnum
    }
    /// The key-switching gadgets, in the order a key holds its parts.
    pub fn gadgets(&self) -> &[Gadget] {
        &self.gadgets
    }
    /// Index into [`Parameters::gadgets`] of the gadget key switching uses at `level`.
    ///
    /// # Panics
    /// If `level > max_level()`.
    pub fn gadget_index(&self, level: usize) -> usize {
        self.gadget_of[level]
    }
    /// The gadget key switching uses at `level`.
    pub fn gadget_at(&self, level: usize) -> Gadget {
        self.gadgets[self.gadget_of[level]]
    }
    /// Special primes key switching extends to at `level` (the first `k_at` of [`Parameters::p`]):
    /// `k` at every level unless the set has `key_switch_bands`.
    pub fn k_at(&self, level: usize) -> usize {
        self.gadget_at(level).p_limbs
    }
    /// Q limbs per digit at `level`.
    pub fn alpha_at(&self, level: usize) -> usize {
        self.gadget_at(level).alpha
    }
    /// Digits used at `level`: ceil((level+1)/alpha_at(level)).
    pub fn dnum_at(&self, level: usize) -> usize {
        (level + 1).div_ceil(self.alpha_at(level))
    }
    /// Q-limb range of digit `j` at `level`.
    pub fn digit_range(&self, level: usize, j: usize) -> std::ops::Range<usize> {
        let alpha = self.alpha_at(level);
        let lo = j * alpha;
        lo..((j + 1) * alpha).min(level + 1)
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
    /// log2 of the widest modulus a key lives in, `max_l log(Q_l·P_l)` (`log Q + log P` unless
    /// the set has `key_switch_bands`); the security estimate's input.
    pub fn log_qp(&self) -> f64 {
        self.security.log_qp
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
            key_switch_bands: self.lit.key_switch_bands.clone(),
            secret: self.lit.secret,
            security: self.security.clone(),
            id: format!("{:016x}", self.id),
        }
    }
}
