//! Named parameter presets from the papers, stored as data in `data/params/ckks/*.toml`.
//!
//! Each file is a [`ParametersLiteral`] with its provenance (paper, table, row, what we chose)
//! and a note on its security estimate. Files are compiled in, so loading by name works from any
//! working directory. A name matches the preset's content name (`N16_L23_D3_W54`) or any alias
//! (`FAB`), case-insensitively.
//!
//! A preset's security is estimated when it is built (see [`super::security`]); one estimated
//! below 128 bits (CraterLake's 80-bit sets, among others: `basalt security` lists them) is
//! refused by [`Parameters::preset`] and built only by [`Parameters::preset_insecure`], the
//! explicit opt-in. Preset files never opt in themselves.

use super::literal::ParametersLiteral;
use super::validate::Parameters;
use crate::error::ParamError;

/// (file name, contents) of every preset.
const FILES: &[(&str, &str)] = &[
    (
        "craterlake_128_1digit.toml",
        include_str!("../../../../data/params/ckks/craterlake_128_1digit.toml"),
    ),
    (
        "craterlake_128_3digit.toml",
        include_str!("../../../../data/params/ckks/craterlake_128_3digit.toml"),
    ),
    (
        "craterlake_128_boot.toml",
        include_str!("../../../../data/params/ckks/craterlake_128_boot.toml"),
    ),
    (
        "craterlake_200_boot.toml",
        include_str!("../../../../data/params/ckks/craterlake_200_boot.toml"),
    ),
    (
        "craterlake_80_1digit.toml",
        include_str!("../../../../data/params/ckks/craterlake_80_1digit.toml"),
    ),
    (
        "craterlake_80_2digit.toml",
        include_str!("../../../../data/params/ckks/craterlake_80_2digit.toml"),
    ),
    (
        "craterlake_80_boot.toml",
        include_str!("../../../../data/params/ckks/craterlake_80_boot.toml"),
    ),
    (
        "craterlake_80_boot_unpacked.toml",
        include_str!("../../../../data/params/ckks/craterlake_80_boot_unpacked.toml"),
    ),
    (
        "craterlake_80_mnist.toml",
        include_str!("../../../../data/params/ckks/craterlake_80_mnist.toml"),
    ),
    ("fab.toml", include_str!("../../../../data/params/ckks/fab.toml")),
    (
        "lattigo_n16qp1546h192.toml",
        include_str!("../../../../data/params/ckks/lattigo_n16qp1546h192.toml"),
    ),
    (
        "lattigo_n16qp1546h192_residual.toml",
        include_str!("../../../../data/params/ckks/lattigo_n16qp1546h192_residual.toml"),
    ),
    ("mxv_set_a.toml", include_str!("../../../../data/params/ckks/mxv_set_a.toml")),
    ("mxv_set_b.toml", include_str!("../../../../data/params/ckks/mxv_set_b.toml")),
    ("mxv_set_c.toml", include_str!("../../../../data/params/ckks/mxv_set_c.toml")),
    ("osiris_set_i.toml", include_str!("../../../../data/params/ckks/osiris_set_i.toml")),
    ("osiris_set_ii.toml", include_str!("../../../../data/params/ckks/osiris_set_ii.toml")),
    ("osiris_set_iii.toml", include_str!("../../../../data/params/ckks/osiris_set_iii.toml")),
    (
        "osiris_set_iii_boot.toml",
        include_str!("../../../../data/params/ckks/osiris_set_iii_boot.toml"),
    ),
    ("osiris_set_iv.toml", include_str!("../../../../data/params/ckks/osiris_set_iv.toml")),
    (
        "osiris_set_iv_boot.toml",
        include_str!("../../../../data/params/ckks/osiris_set_iv_boot.toml"),
    ),
];

fn parse(file: &str, text: &str) -> Result<ParametersLiteral, ParamError> {
    toml::from_str(text)
        .map_err(|e| ParamError::BadPresetFile { file: file.to_string(), msg: e.to_string() })
}

/// Every preset literal, in file order.
pub fn all() -> Result<Vec<ParametersLiteral>, ParamError> {
    FILES.iter().map(|(f, t)| parse(f, t)).collect()
}

/// Names and aliases of all presets.
pub fn names() -> Vec<(String, Vec<String>)> {
    all().unwrap_or_default().into_iter().map(|l| (l.name, l.aliases)).collect()
}

/// The literal of the preset called `name` (content name or alias, case-insensitive).
///
/// # Errors
/// [`ParamError::UnknownPreset`] if no preset matches; [`ParamError::BadPresetFile`] if a file
/// does not parse.
pub fn literal(name: &str) -> Result<ParametersLiteral, ParamError> {
    for (f, t) in FILES {
        let lit = parse(f, t)?;
        if lit.name.eq_ignore_ascii_case(name)
            || lit.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        {
            return Ok(lit);
        }
    }
    Err(ParamError::UnknownPreset(name.to_string()))
}

impl Parameters {
    /// Build the preset called `name` (see [`literal`]), refusing it with
    /// [`ParamError::Insecure`] if it is estimated below 128 bits.
    pub fn preset(name: &str) -> Result<Parameters, ParamError> {
        Parameters::new(literal(name)?)
    }

    /// Build the preset called `name` whatever its estimated security: the explicit opt-in for
    /// sets below 128 bits (the estimate is still computed and reported).
    pub fn preset_insecure(name: &str) -> Result<Parameters, ParamError> {
        Parameters::new_insecure(literal(name)?)
    }

    /// [`Parameters::preset`] or, with `allow_insecure`, [`Parameters::preset_insecure`].
    pub fn preset_with(name: &str, allow_insecure: bool) -> Result<Parameters, ParamError> {
        if allow_insecure { Self::preset_insecure(name) } else { Self::preset(name) }
    }
}
