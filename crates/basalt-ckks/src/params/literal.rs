//! The unchecked, serializable description of a CKKS parameter set.
//!
//! A [`ParametersLiteral`] is plain data (public fields, serde), the form presets are stored in
//! (`data/params/ckks/*.toml`) and the form a CLI or Python user writes. It becomes usable only
//! through [`crate::Parameters::new`], which validates it and names every failure (Lattigo's
//! `ParametersLiteral` → `NewParametersFromLiteral`, SEAL's named `error_type`s).

use serde::{Deserialize, Serialize};

/// Distribution of the secret key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SecretDistribution {
    /// Uniform ternary: each coefficient is −1, 0, 1 with probability 1/3 (HE Standard's
    /// "ternary" row; FAB, CraterLake "non-sparse").
    #[default]
    DenseTernary,
    /// Exactly `h` non-zero coefficients, each ±1 (Lattigo's `H192`, Osiris' h = 192/1024).
    ///
    /// The HE Standard table is derived for dense secrets; a sparse secret admits hybrid attacks,
    /// so the reported security of a sparse set is an upper bound (see
    /// [`crate::params::security`]).
    Hamming { h: usize },
}

/// Where a preset comes from: paper, table and row, and what was our choice.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// Paper or library (e.g. "FAB, arXiv 2207.11872").
    pub source: String,
    /// Table and row (e.g. "Table II, Set III").
    #[serde(default)]
    pub table: String,
    /// What the paper does not give and we chose (prime sizes, scale, …).
    #[serde(default)]
    pub notes: String,
    /// The security level the source claims (bits), if any.
    #[serde(default)]
    pub claimed_security: Option<u32>,
}

fn default_sigma() -> f64 {
    3.2
}

/// One band of level-dependent key switching (CraterLake §3.1: "programs switch variants by
/// level"): at a level with `l+1` Q limbs inside the band, key switching uses `digits` digits of
/// `α_l = ⌈(l+1)/digits⌉` limbs each and a special modulus of the first `α_l` special primes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeySwitchBand {
    /// The band holds the levels with fewer than this many Q limbs (and at least the previous
    /// band's bound). `None` for the last band, which holds every level above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below_q_limbs: Option<usize>,
    /// Key-switching digits `t` inside the band (≥ 1).
    pub digits: usize,
}

/// Unchecked CKKS parameters. Either `log_q` (bit sizes; primes generated Lattigo-style, closest
/// to `2^bits`, alternating above/below) or `q` (explicit primes) describes the Q chain
/// `q_0 … q_L`; likewise `log_p`/`p` the special primes of hybrid key switching.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParametersLiteral {
    /// Name by content (e.g. `N16_L23_D3_W54`).
    #[serde(default)]
    pub name: String,
    /// Paper aliases (e.g. `FAB`).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// log2 of the ring degree N.
    pub log_n: u32,
    /// Bit sizes of the Q primes, q_0 first.
    #[serde(default)]
    pub log_q: Vec<u32>,
    /// Explicit Q primes (alternative to `log_q`).
    #[serde(default)]
    pub q: Vec<u64>,
    /// Bit sizes of the special primes P.
    #[serde(default)]
    pub log_p: Vec<u32>,
    /// Explicit P primes (alternative to `log_p`).
    #[serde(default)]
    pub p: Vec<u64>,
    /// Number of key-switching digits at the top level (1 ..= L+1). Give this or `alpha`.
    #[serde(default)]
    pub dnum: Option<usize>,
    /// Q limbs per digit. Give this or `dnum`; if neither, `alpha = |P|`.
    #[serde(default)]
    pub alpha: Option<usize>,
    /// Level-dependent key switching, lowest band first (empty: one `alpha` and all `k` special
    /// primes at every level). Excludes `dnum` and `alpha`. See [`KeySwitchBand`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_switch_bands: Vec<KeySwitchBand>,
    /// Secret-key distribution.
    #[serde(default)]
    pub secret: SecretDistribution,
    /// Standard deviation of the discrete Gaussian error (HE Standard: 3.2).
    #[serde(default = "default_sigma")]
    pub sigma: f64,
    /// log2 of the default scale Δ.
    pub log_default_scale: f64,
    /// Double-prime scaling (SHARP, Osiris): one logical level is two primes and a rescale drops
    /// both. The level primes above the base then come in pairs.
    #[serde(default)]
    pub double_prime: bool,
    /// Number of primes forming the base modulus q_0 (Osiris splits its 48-bit q_0 into two).
    /// Default 1.
    #[serde(default)]
    pub base_primes: Option<usize>,
    /// Generate primes strictly below 2^bits (SEAL-style, for hardware word sizes such as
    /// CraterLake's 28-bit or Osiris' 40-bit words) instead of closest to 2^bits.
    #[serde(default)]
    pub primes_below: bool,
    /// Accept a set below 128-bit security (HE Standard table). Presets set this only when they
    /// are loaded by name.
    #[serde(default)]
    pub allow_insecure: bool,
    /// Where the set comes from.
    #[serde(default)]
    pub provenance: Provenance,
}

impl ParametersLiteral {
    /// A small test literal: N = 2^log_n, `levels + 1` Q primes of `log_q` bits (q_0 of
    /// `log_q0` bits), `k` special primes of `log_p` bits, the given dnum, dense ternary
    /// secret, insecure allowed (toy rings are below the HE Standard's N = 1024).
    pub fn toy(
        log_n: u32,
        log_q0: u32,
        log_q: u32,
        levels: usize,
        log_p: u32,
        k: usize,
        dnum: usize,
    ) -> Self {
        let mut qs = vec![log_q0];
        qs.extend(std::iter::repeat_n(log_q, levels));
        ParametersLiteral {
            name: format!("TOY_N{log_n}_L{levels}_D{dnum}"),
            aliases: vec![],
            log_n,
            log_q: qs,
            q: vec![],
            log_p: vec![log_p; k],
            p: vec![],
            dnum: Some(dnum),
            alpha: None,
            key_switch_bands: vec![],
            secret: SecretDistribution::DenseTernary,
            sigma: 3.2,
            log_default_scale: log_q as f64,
            double_prime: false,
            base_primes: None,
            primes_below: false,
            allow_insecure: true,
            provenance: Provenance { source: "test".into(), ..Default::default() },
        }
    }
}
