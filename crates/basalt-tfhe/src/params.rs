//! Parameter sets: a plain literal (TOML data with provenance) is validated into [`TfheParams`].
//!
//! Why literal → validated (as SEAL's `EncryptionParameters` → `SEALContext` and Lattigo's
//! `ParametersLiteral` → `Parameters`): presets live as data in `data/params/tfhe/*.toml`, anybody
//! can write one, and every consumer gets the same named errors instead of a panic deep inside
//! the FFT. Every set's security is estimated when it is validated ([`TfheSecurity`]: the
//! lattice estimator of `basalt_math::security` on both the LWE key-switching key's instance
//! and the GLWE instance of the bootstrapping key); sets estimated below 128 bits only load
//! with an explicit opt-in. `security_bits` in a file is the source's claim, kept for
//! comparison, never trusted.

use std::ops::Deref;

use basalt_math::security::{CostModel, Distribution, LweInstance};
use serde::{Deserialize, Serialize};

use crate::error::{Result, TfheError};

/// Noise distribution of fresh encryptions, in the units its source uses.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum NoiseDistribution {
    /// Rounded Gaussian; `std_dev` is a fraction of the torus (TFHE lib / concrete convention).
    Gaussian { std_dev: f64 },
    /// TFHE-rs "TUniform": integers in `[-2^b, 2^b]`, interior values with probability
    /// `2^-(b+1)`, the two ends with `2^-(b+2)`; `b` is in torus words (not fractions).
    TUniform { bound_log2: u32 },
}

impl NoiseDistribution {
    /// Variance as a fraction of the torus squared (q = 1), for the noise model.
    pub fn variance(&self, torus_bits: u32) -> f64 {
        match *self {
            NoiseDistribution::Gaussian { std_dev } => std_dev * std_dev,
            NoiseDistribution::TUniform { bound_log2 } => {
                let b = bound_log2 as i32;
                // Var = (2^(2b+1) + 1) / 6 in words^2.
                (2f64.powi(2 * b + 1) + 1.0) / 6.0 / 2f64.powi(2 * torus_bits as i32)
            }
        }
    }
}

/// Order of the two bootstrapping halves, which also fixes which key encrypts fresh inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AtomicPattern {
    /// TFHE-rs/shortint default: inputs live under the big (extracted GLWE) key, `KS` then `PBS`.
    KsPbs,
    /// TFHE-lib gate bootstrapping (and Strix's pipeline order): inputs under the small LWE key,
    /// `PBS` then `KS`.
    PbsKs,
}

/// A parameter set as written down (TOML): no invariant is guaranteed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamsLiteral {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub provenance: String,
    pub torus_bits: u32,
    pub lwe_dimension: usize,
    pub glwe_dimension: usize,
    pub polynomial_size: usize,
    pub pbs_base_log: u32,
    pub pbs_level: usize,
    pub ks_base_log: u32,
    pub ks_level: usize,
    pub message_modulus: u64,
    pub carry_modulus: u64,
    pub atomic_pattern: AtomicPattern,
    pub security_bits: u32,
    #[serde(default)]
    pub security_source: String,
    pub lwe_noise: NoiseDistribution,
    pub glwe_noise: NoiseDistribution,
    /// Modulus-switch noise reduction (drift technique); absent = plain rounding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms_noise_reduction: Option<MsNoiseReductionParams>,
}

/// Parameters of the modulus-switch noise reduction ([`crate::ms_noise_reduction`]), with
/// TFHE-rs's names (`ModulusSwitchNoiseReductionParams`). Serialised only when present, so the
/// identity of sets without it does not change.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MsNoiseReductionParams {
    /// Encryptions of zero in the server key (candidates tried one after the other).
    pub modulus_switch_zeros_count: usize,
    /// Bound on the noise measure `|E| + r·sqrt(V_ms + V_in)`, a fraction of the torus
    /// (TFHE-rs stores it in words: `2^58` for the 2+2-bit set is `1/64` here).
    pub ms_bound: f64,
    /// `r` of the measure: how many standard deviations must fit under the bound.
    pub ms_r_sigma_factor: f64,
    /// Variance (torus units) assumed for the ciphertext noise entering the modulus switch.
    pub ms_input_variance: f64,
}

/// Security level below which a set needs `allow_insecure`.
pub const MIN_SECURE_BITS: u32 = 128;

impl NoiseDistribution {
    /// The estimator's distribution, in integer units of the torus `2^torus_bits`.
    pub fn as_lattice_distribution(&self, torus_bits: u32) -> Distribution {
        match *self {
            NoiseDistribution::Gaussian { std_dev } => {
                Distribution::Gaussian { sigma: std_dev * 2f64.powi(torus_bits as i32) }
            }
            NoiseDistribution::TUniform { bound_log2 } => Distribution::TUniform { bound_log2 },
        }
    }
}

/// Estimated security of a TFHE set: the two LWE problems its keys rest on.
///
/// - the LWE instance of dimension `n` (the small key, under which the key-switching key
///   encrypts and, in KS→PBS order, every ciphertext entering a bootstrap), binary secret,
///   `lwe_noise`;
/// - the GLWE instance of dimension `k·N` (the bootstrapping key's GGSWs and the big key),
///   binary secret, `glwe_noise`.
///
/// Both modulo `2^torus_bits`, unlimited samples, the HE Standard's sieving cost model. The
/// set's security is the smaller of the two.
#[derive(Clone, Debug, PartialEq)]
pub struct TfheSecurity {
    pub lwe_bits: f64,
    pub lwe_attack: &'static str,
    pub glwe_bits: f64,
    pub glwe_attack: &'static str,
}

impl TfheSecurity {
    /// The set's security: the weaker of the two instances.
    pub fn bits(&self) -> f64 {
        self.lwe_bits.min(self.glwe_bits)
    }

    /// Estimate a literal.
    pub fn of(lit: &ParamsLiteral) -> TfheSecurity {
        let q = lit.torus_bits as f64;
        let one = |n: usize, noise: NoiseDistribution| {
            let e = LweInstance::new(
                n,
                q,
                Distribution::Binary,
                noise.as_lattice_distribution(lit.torus_bits),
            )
            .estimate_with(CostModel::HeStandardSieve);
            (e.bits, e.best().kind.name())
        };
        let (lwe_bits, lwe_attack) = one(lit.lwe_dimension, lit.lwe_noise);
        let (glwe_bits, glwe_attack) =
            one(lit.glwe_dimension * lit.polynomial_size, lit.glwe_noise);
        TfheSecurity { lwe_bits, lwe_attack, glwe_bits, glwe_attack }
    }
}

/// A validated parameter set. Read its fields through `Deref` to [`ParamsLiteral`].
#[derive(Clone, Debug, PartialEq)]
pub struct TfheParams {
    lit: ParamsLiteral,
    security: TfheSecurity,
}

impl Serialize for TfheParams {
    /// Serialised as the literal's canonical JSON text, so that binary formats without
    /// self-description (bincode) can carry the tagged noise distributions.
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let text = serde_json::to_string(&self.lit).map_err(serde::ser::Error::custom)?;
        s.serialize_str(&text)
    }
}

impl<'de> Deserialize<'de> for TfheParams {
    /// Deserialising re-validates (insecure sets are accepted: the object already exists).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let lit: ParamsLiteral = serde_json::from_str(&text).map_err(serde::de::Error::custom)?;
        TfheParams::from_literal(lit, true).map_err(serde::de::Error::custom)
    }
}

impl Deref for TfheParams {
    type Target = ParamsLiteral;
    fn deref(&self) -> &ParamsLiteral {
        &self.lit
    }
}

const PRESETS: [(&str, &str); 8] = [
    ("STRIX_I", include_str!("../../../data/params/tfhe/strix_i.toml")),
    ("STRIX_II", include_str!("../../../data/params/tfhe/strix_ii.toml")),
    ("STRIX_III", include_str!("../../../data/params/tfhe/strix_iii.toml")),
    ("STRIX_IV", include_str!("../../../data/params/tfhe/strix_iv.toml")),
    ("TFHERS_2_2_KS_PBS", include_str!("../../../data/params/tfhe/tfhers_2_2_ks_pbs.toml")),
    ("NN_N1024", include_str!("../../../data/params/tfhe/nn_n1024.toml")),
    ("NN_N2048", include_str!("../../../data/params/tfhe/nn_n2048.toml")),
    ("NN_N4096", include_str!("../../../data/params/tfhe/nn_n4096.toml")),
];

/// Names of the shipped presets (`data/params/tfhe/*.toml`).
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

impl TfheParams {
    /// A shipped preset by name (case-insensitive; `I`..`IV` and `2_2` are accepted as aliases).
    pub fn preset(name: &str, allow_insecure: bool) -> Result<Self> {
        let key = name.to_ascii_uppercase();
        let key = match key.as_str() {
            "I" | "SET_I" => "STRIX_I".to_string(),
            "II" | "SET_II" => "STRIX_II".to_string(),
            "III" | "SET_III" => "STRIX_III".to_string(),
            "IV" | "SET_IV" => "STRIX_IV".to_string(),
            "2_2" | "TFHERS_2_2" | "PARAM_MESSAGE_2_CARRY_2_KS_PBS" => "TFHERS_2_2_KS_PBS".into(),
            _ => key,
        };
        let (_, text) = PRESETS
            .iter()
            .find(|(n, _)| *n == key)
            .ok_or_else(|| TfheError::UnknownSet(name.to_string()))?;
        Self::from_toml_str(text, allow_insecure)
    }

    /// Parse and validate a TOML literal.
    pub fn from_toml_str(text: &str, allow_insecure: bool) -> Result<Self> {
        let lit: ParamsLiteral =
            toml::from_str(text).map_err(|e| TfheError::Parse(e.to_string()))?;
        Self::from_literal(lit, allow_insecure)
    }

    /// Validate a literal. Every rule has a named error.
    pub fn from_literal(lit: ParamsLiteral, allow_insecure: bool) -> Result<Self> {
        let bits = lit.torus_bits;
        if bits != 32 && bits != 64 {
            return Err(TfheError::TorusBits(bits));
        }
        let n_poly = lit.polynomial_size;
        if !n_poly.is_power_of_two() || !(64..=65536).contains(&n_poly) {
            return Err(TfheError::PolynomialSize(n_poly));
        }
        if !(1..=8).contains(&lit.glwe_dimension) {
            return Err(TfheError::GlweDimension(lit.glwe_dimension));
        }
        if !(1..=8192).contains(&lit.lwe_dimension) {
            return Err(TfheError::LweDimension(lit.lwe_dimension));
        }
        for (which, base_log, level) in
            [("PBS", lit.pbs_base_log, lit.pbs_level), ("KS", lit.ks_base_log, lit.ks_level)]
        {
            if base_log == 0 || level == 0 || base_log as usize * level > bits as usize {
                return Err(TfheError::Decomposition { which, base_log, level, bits });
            }
        }
        for d in [lit.lwe_noise, lit.glwe_noise] {
            match d {
                NoiseDistribution::Gaussian { std_dev } => {
                    if !(std_dev > 0.0 && std_dev < 0.5) {
                        return Err(TfheError::Noise(format!("Gaussian std_dev {std_dev}")));
                    }
                }
                NoiseDistribution::TUniform { bound_log2 } => {
                    if bound_log2 + 2 >= bits {
                        return Err(TfheError::Noise(format!("TUniform bound 2^{bound_log2}")));
                    }
                }
            }
        }
        if let Some(m) = lit.ms_noise_reduction {
            let bad = |what: &str| Err(TfheError::Noise(format!("ms_noise_reduction: {what}")));
            if !(1..=1 << 16).contains(&m.modulus_switch_zeros_count) {
                return bad("modulus_switch_zeros_count must be in 1..=65536");
            }
            if !(m.ms_bound > 0.0 && m.ms_bound < 0.5) {
                return bad("ms_bound must be a torus fraction in (0, 1/2)");
            }
            if !(m.ms_r_sigma_factor > 0.0 && m.ms_r_sigma_factor < 64.0) {
                return bad("ms_r_sigma_factor must be in (0, 64)");
            }
            if !(m.ms_input_variance >= 0.0 && m.ms_input_variance < 1.0) {
                return bad("ms_input_variance must be in [0, 1)");
            }
        }
        let p = lit.message_modulus.saturating_mul(lit.carry_modulus);
        let enc_err = TfheError::Encoding {
            message: lit.message_modulus,
            carry: lit.carry_modulus,
            bits,
            n: n_poly,
        };
        if lit.message_modulus < 2 || !p.is_power_of_two() || p.trailing_zeros() + 1 >= bits {
            return Err(enc_err);
        }
        // Each message needs a box of at least 2 coefficients (half a box on each side).
        if p as usize * 2 > n_poly {
            return Err(enc_err);
        }
        let security = TfheSecurity::of(&lit);
        if security.bits() < MIN_SECURE_BITS as f64 && !allow_insecure {
            return Err(TfheError::Insecure(lit.name.clone(), security.bits().floor() as u32));
        }
        Ok(TfheParams { lit, security })
    }

    /// The estimated security (computed at validation).
    pub fn security(&self) -> &TfheSecurity {
        &self.security
    }

    /// The literal this set was validated from.
    pub fn literal(&self) -> &ParamsLiteral {
        &self.lit
    }

    /// Total plaintext space `p = message_modulus * carry_modulus` (one padding bit on top).
    pub fn plaintext_modulus(&self) -> u64 {
        self.message_modulus * self.carry_modulus
    }

    /// `k * N`: dimension of the extracted ("big") LWE key.
    pub fn big_lwe_dimension(&self) -> usize {
        self.glwe_dimension * self.polynomial_size
    }

    /// `true` when the set is estimated below [`MIN_SECURE_BITS`].
    pub fn is_insecure(&self) -> bool {
        self.security.bits() < MIN_SECURE_BITS as f64
    }

    /// A stable 64-bit identity of the set (FNV-1a of its canonical JSON), stored in every key
    /// and ciphertext so that objects of different sets are never mixed.
    pub fn id(&self) -> u64 {
        let s = serde_json::to_string(&self.lit).unwrap_or_default();
        fnv1a(s.as_bytes())
    }
}

pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Small, insecure sets for tests and examples (fast keygen, same code paths).
pub mod toy {
    use super::*;

    /// A toy literal: 64- or 32-bit torus, `n`, `N`, PBS/KS decompositions, plaintext space.
    #[allow(clippy::too_many_arguments)]
    pub fn literal(
        torus_bits: u32,
        n: usize,
        big_n: usize,
        pbs: (u32, usize),
        ks: (u32, usize),
        message_modulus: u64,
        carry_modulus: u64,
        atomic_pattern: AtomicPattern,
    ) -> ParamsLiteral {
        // Noise small enough that the toy sets essentially never fail (they are not secure).
        let (lwe, glwe) = if torus_bits == 64 {
            (
                NoiseDistribution::TUniform { bound_log2: 40 },
                NoiseDistribution::TUniform { bound_log2: 17 },
            )
        } else {
            (
                NoiseDistribution::Gaussian { std_dev: 2f64.powi(-18) },
                NoiseDistribution::Gaussian { std_dev: 2f64.powi(-28) },
            )
        };
        ParamsLiteral {
            name: format!("TOY_{torus_bits}_{n}_{big_n}"),
            description: "toy set for tests: INSECURE".into(),
            source: "basalt-tfhe tests".into(),
            provenance: "chosen for speed".into(),
            torus_bits,
            lwe_dimension: n,
            glwe_dimension: 1,
            polynomial_size: big_n,
            pbs_base_log: pbs.0,
            pbs_level: pbs.1,
            ks_base_log: ks.0,
            ks_level: ks.1,
            message_modulus,
            carry_modulus,
            atomic_pattern,
            security_bits: 0,
            security_source: "none claimed: toy".into(),
            lwe_noise: lwe,
            glwe_noise: glwe,
            ms_noise_reduction: None,
        }
    }

    /// 64-bit torus, n = 128, N = 512, 2-bit message + 1-bit carry, KS→PBS.
    pub fn u64_small() -> TfheParams {
        let lit = literal(64, 128, 512, (16, 2), (4, 5), 4, 2, AtomicPattern::KsPbs);
        TfheParams::from_literal(lit, true).expect("toy literal is valid")
    }

    /// 32-bit torus, n = 128, N = 512, boolean, PBS→KS (TFHE-lib style gates).
    pub fn u32_small() -> TfheParams {
        let lit = literal(32, 128, 512, (8, 3), (3, 6), 2, 1, AtomicPattern::PbsKs);
        TfheParams::from_literal(lit, true).expect("toy literal is valid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_load_and_insecure_needs_opt_in() {
        for name in preset_names() {
            let p = TfheParams::preset(name, true).unwrap();
            assert_eq!(p.name, name);
        }
        assert!(matches!(TfheParams::preset("STRIX_I", false), Err(TfheError::Insecure(..))));
        for name in preset_names() {
            let p = TfheParams::preset(name, true).unwrap();
            let s = p.security();
            println!(
                "{name}: LWE n={} {:.1} bits ({}), GLWE kN={} {:.1} bits ({}); claimed {}",
                p.lwe_dimension,
                s.lwe_bits,
                s.lwe_attack,
                p.big_lwe_dimension(),
                s.glwe_bits,
                s.glwe_attack,
                p.security_bits
            );
            // Without the opt-in, exactly the sets estimated below 128 bits are refused.
            assert_eq!(TfheParams::preset(name, false).is_err(), s.bits() < 128.0, "{name}");
        }
        assert!(matches!(TfheParams::preset("nope", true), Err(TfheError::UnknownSet(_))));
        let p = TfheParams::preset("2_2", false).unwrap();
        assert_eq!((p.lwe_dimension, p.polynomial_size, p.pbs_base_log), (918, 2048, 23));
    }

    #[test]
    fn validation_names_the_error() {
        let base = TfheParams::preset("TFHERS_2_2_KS_PBS", false).unwrap().literal().clone();
        let mut l = base.clone();
        l.polynomial_size = 1000;
        assert_eq!(TfheParams::from_literal(l, true), Err(TfheError::PolynomialSize(1000)));
        let mut l = base.clone();
        l.pbs_base_log = 33;
        l.pbs_level = 2;
        assert!(matches!(
            TfheParams::from_literal(l, true),
            Err(TfheError::Decomposition { which: "PBS", .. })
        ));
        let mut l = base.clone();
        l.carry_modulus = 3;
        assert!(matches!(TfheParams::from_literal(l, true), Err(TfheError::Encoding { .. })));
        let mut l = base.clone();
        l.torus_bits = 16;
        assert_eq!(TfheParams::from_literal(l, true), Err(TfheError::TorusBits(16)));
        let mut l = base;
        l.glwe_noise = NoiseDistribution::Gaussian { std_dev: -1.0 };
        assert!(matches!(TfheParams::from_literal(l, true), Err(TfheError::Noise(_))));
        assert!(matches!(TfheParams::from_toml_str("x = 1", true), Err(TfheError::Parse(_))));
    }

    #[test]
    fn ids_differ_between_sets() {
        let a = TfheParams::preset("III", true).unwrap();
        let b = TfheParams::preset("IV", true).unwrap();
        assert_ne!(a.id(), b.id());
        assert_eq!(a.id(), TfheParams::preset("STRIX_III", true).unwrap().id());
    }
}
