//! Errors of the CKKS layer.
//!
//! Two families, as in SEAL: [`ParamError`] names what is wrong with a parameter literal (one
//! variant per check, so a caller or a Python binding can match on it), and [`CkksError`] names
//! what is wrong with an operation (mismatched operands, a missing key, a corrupt file). Neither
//! is ever replaced by a panic on user input.

use thiserror::Error;

/// A parameter literal failed validation in [`crate::Parameters::new`].
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ParamError {
    #[error("log_n = {0} is outside the supported range 1..=17")]
    LogNOutOfRange(u32),
    #[error("the Q chain is empty: give `log_q` or `q`")]
    EmptyQ,
    #[error("give either `{field}` bit sizes or explicit moduli, not both")]
    BothSizesAndModuli { field: &'static str },
    #[error("modulus {modulus} is not prime")]
    NotPrime { modulus: u64 },
    #[error("modulus {modulus} is not NTT-friendly for N = 2^{log_n} (needs q ≡ 1 mod 2N)")]
    PrimeNotNttFriendly { modulus: u64, log_n: u32 },
    #[error("modulus {modulus} appears more than once in Q ∪ P")]
    DuplicateModulus { modulus: u64 },
    #[error("modulus bit size {bits} is outside 20..=61")]
    ModulusSizeOutOfRange { bits: u32 },
    #[error("could not generate the requested primes: {0}")]
    PrimeGeneration(String),
    #[error("the special modulus P is empty: hybrid key switching needs at least one P prime")]
    EmptyP,
    #[error("dnum = {dnum} is out of range 1..={max} (max = number of Q limbs)")]
    DnumOutOfRange { dnum: usize, max: usize },
    #[error("alpha = {alpha} is out of range 1..={max}")]
    AlphaOutOfRange { alpha: usize, max: usize },
    #[error("give `dnum` or `alpha`, not both")]
    DnumAndAlpha,
    #[error("give `key_switch_bands` or `dnum`/`alpha`, not both")]
    BandsAndDnum,
    #[error("invalid `key_switch_bands`: {0}")]
    BadKeySwitchBands(String),
    #[error(
        "key switching at {q_limbs} Q limbs needs {needed} special primes (one per digit limb), the set has {have}"
    )]
    TooFewSpecialPrimes { q_limbs: usize, needed: usize, have: usize },
    #[error(
        "P ({log_p:.1} bits) is smaller than the largest digit ({log_digit:.1} bits): key switching noise would not be reduced"
    )]
    SpecialModulusTooSmall { log_p: f64, log_digit: f64 },
    #[error("Hamming weight h = {h} is out of range 1..={n}")]
    HammingWeightOutOfRange { h: usize, n: usize },
    #[error("sigma = {0} must be positive and finite")]
    BadSigma(f64),
    #[error("default scale 2^{0} is not usable (must be in 1..=120 bits)")]
    BadScale(f64),
    #[error(
        "the level layout is invalid: {limbs} Q limbs, {base} base primes, {per_level} primes per level"
    )]
    BadLevelLayout { limbs: usize, base: usize, per_level: usize },
    #[error(
        "insecure: `{name}` (N = 2^{log_n}, log QP = {log_qp:.1}) is estimated at {bits:.1} bits ({attack}), below 128; opt in explicitly with `allow_insecure` (Rust: `Parameters::new_insecure`, `Parameters::preset_insecure`; CLI: `--allow-insecure`; Python: `allow_insecure=True`)"
    )]
    Insecure { name: String, bits: f64, attack: String, log_qp: f64, log_n: u32 },
    #[error("no preset named `{0}`")]
    UnknownPreset(String),
    #[error("preset file `{file}` is malformed: {msg}")]
    BadPresetFile { file: String, msg: String },
    #[error("ring construction failed: {0}")]
    Ring(String),
}

/// An evaluation, key or serialization error.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CkksError {
    #[error(transparent)]
    Params(#[from] ParamError),
    #[error("operands are at different levels ({left} vs {right}); drop the higher one first")]
    LevelMismatch { left: usize, right: usize },
    #[error(
        "operands have different scales (2^{left:.3} vs 2^{right:.3}); rescale or set the scale explicitly"
    )]
    ScaleMismatch { left: f64, right: f64 },
    #[error("cannot go below level 0 (at level {level}, asked to drop {drop} more primes)")]
    LevelBelowZero { level: usize, drop: usize },
    #[error("requested level {requested} is above the maximum level {max}")]
    LevelTooHigh { requested: usize, max: usize },
    #[error("object belongs to parameter set {found:016x}, expected {expected:016x}")]
    WrongParams { expected: u64, found: u64 },
    #[error(
        "key identity mismatch: {what} belongs to key {found}, but this object belongs to key {expected}"
    )]
    KeyMismatch { expected: crate::keys::KeyId, found: crate::keys::KeyId, what: &'static str },
    #[error("the key switches from {found}, but this operation needs a key from {expected}")]
    WrongKey { expected: String, found: String },
    #[error("missing rotation key for rotation by {rotation} (Galois element {galois})")]
    MissingRotationKey { rotation: i64, galois: u64 },
    #[error("missing conjugation key (Galois element {galois})")]
    MissingConjugationKey { galois: u64 },
    #[error(
        "the key has no part for level {level} (it serves levels {served}); generate it for this level"
    )]
    KeyNotForLevel { level: usize, served: String },
    #[error("missing relinearization key")]
    MissingRelinKey,
    #[error("ciphertext has degree {degree}; this operation needs degree {expected}")]
    Degree { degree: usize, expected: usize },
    #[error("{count} values do not fit into {slots} slots")]
    TooManyValues { count: usize, slots: usize },
    #[error("slot count {slots} must be a power of two in 1..={max}")]
    BadSlots { slots: usize, max: usize },
    #[error("scale 2^{0:.2} is not positive/finite or too large")]
    BadScale(f64),
    #[error("value {value} is not finite or overflows the modulus at this scale")]
    Overflow { value: f64 },
    #[error("operation mixes symbolic (trace-only) and real operands")]
    SymbolicMix,
    #[error("operation needs real data but the operand is symbolic (trace-only)")]
    Symbolic,
    #[error("invalid {what} polynomial: {reason}")]
    InvalidPolynomial { what: &'static str, reason: String },
    #[error("corrupt serialized {what}: {reason}")]
    Corrupt { what: &'static str, reason: String },
    #[error("flooding noise 2^{0} is out of range: its log2 standard deviation must be in 0..=58")]
    BadFlooding(f64),
    #[error(
        "{what} needs about {need} of memory, more than three quarters of the {available} \
         available; free memory, choose smaller parameters or fewer keys, or force it \
         (`--force` on the command line, `force=True` in `basalt.workloads.run`)"
    )]
    OutOfMemory { what: String, need: String, available: String },
    #[error("cancelled")]
    Cancelled,
}

/// Result alias of this crate.
pub type Result<T, E = CkksError> = std::result::Result<T, E>;
