//! Named errors: parameter validation, key/ciphertext mismatches and deserialisation.

use thiserror::Error;

/// Everything in this crate that can fail on user input returns this error (never panics).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TfheError {
    #[error("polynomial size N = {0} must be a power of two in [64, 65536]")]
    PolynomialSize(usize),
    #[error("GLWE dimension k = {0} must be in 1..=8")]
    GlweDimension(usize),
    #[error("LWE dimension n = {0} must be in 1..=8192")]
    LweDimension(usize),
    #[error("torus width {0} is not supported (use 32 or 64)")]
    TorusBits(u32),
    #[error(
        "{which} decomposition: base_log {base_log} x level {level} must be in 1..={bits} bits"
    )]
    Decomposition { which: &'static str, base_log: u32, level: usize, bits: u32 },
    #[error("noise parameter invalid: {0}")]
    Noise(String),
    #[error(
        "message modulus {message} x carry modulus {carry} must be a power of two with {bits} padded bits fitting N = {n}"
    )]
    Encoding { message: u64, carry: u64, bits: u32, n: usize },
    #[error("parameter set '{0}' is insecure ({1} bits); pass allow_insecure to use it")]
    Insecure(String, u32),
    #[error("unknown parameter set '{0}'")]
    UnknownSet(String),
    #[error("parameter literal could not be parsed: {0}")]
    Parse(String),
    #[error("parameter set mismatch: object made for '{found}', expected '{expected}'")]
    ParamsMismatch { expected: String, found: String },
    #[error("key mismatch: object made under key {found:#x}, expected key {expected:#x}")]
    KeyMismatch { expected: u64, found: u64 },
    #[error("this operation takes {expected} ciphertext, the operand is {found}")]
    EncodingMismatch { expected: crate::keys::Encoding, found: crate::keys::Encoding },
    #[error("dimension mismatch in {what}: expected {expected}, found {found}")]
    Dimension { what: &'static str, expected: usize, found: usize },
    #[error("lookup table has {found} entries but the message space has {max}")]
    LutTooLarge { max: usize, found: usize },
    #[error("LUT value f({input}) = {value} is outside the message space 0..{modulus}")]
    LutValueOutOfRange { input: u64, value: u64, modulus: u64 },
    #[error(
        "many-LUT of {functions} function(s) on inputs 0..={max_value}: needs at least one \
         function and (max_value + 1) x functions <= {plaintext_modulus} message values"
    )]
    ManyLutCapacity { functions: usize, max_value: u64, plaintext_modulus: u64 },
    #[error(
        "many-LUT: function {function} has {found} entries, expected one per input 0..={max_value}"
    )]
    ManyLutTableLength { function: usize, max_value: u64, found: usize },
    #[error(
        "many-LUT: function {function} maps {input} to {value}, outside the message space 0..{modulus}"
    )]
    ManyLutValueOutOfRange { function: usize, input: u64, value: u64, modulus: u64 },
    #[error("message {message} is outside the plaintext space 0..{modulus}")]
    MessageOutOfRange { message: u64, modulus: u64 },
    #[error("corrupted or foreign blob: {0}")]
    Corrupt(String),
    #[error("torus width mismatch: blob is {found}-bit, expected {expected}-bit")]
    TorusMismatch { expected: u32, found: u32 },
    #[error(
        "{what} needs about {need} of memory, more than three quarters of the {available} \
         available; free memory, choose a smaller parameter set, or force it \
         (`--force` on the command line, `force=True` in Python)"
    )]
    OutOfMemory { what: String, need: String, available: String },
    #[error("cancelled")]
    Cancelled,
}

impl From<basalt_math::progress::Cancelled> for TfheError {
    fn from(_: basalt_math::progress::Cancelled) -> Self {
        TfheError::Cancelled
    }
}

pub type Result<T> = std::result::Result<T, TfheError>;
