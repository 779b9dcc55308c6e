//! Errors of the circuits layer.
//!
//! Every circuit validates its inputs before touching a ciphertext and names what is wrong: a
//! matrix that does not fit the slots, a diagonal index out of range, a polynomial deeper than
//! the levels left. Errors of the scheme layer (for example a missing rotation key, which names
//! the rotation and its Galois element) pass through unchanged as [`CircuitError::Ckks`].

use basalt_ckks::CkksError;
use thiserror::Error;

/// A circuit could not be built or evaluated.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CircuitError {
    #[error(transparent)]
    Ckks(#[from] CkksError),
    #[error(
        "a {rows}x{cols} matrix does not fit into {slots} slots (both sides must be at most {slots})"
    )]
    MatrixTooLarge { rows: usize, cols: usize, slots: usize },
    #[error(
        "diagonal index {index} is out of range: diagonals are indexed in -{slots}+1..{slots} for {slots} slots"
    )]
    DiagonalOutOfRange { index: i64, slots: usize },
    #[error("diagonal {index} has {len} values, more than the {slots} slots")]
    DiagonalTooLong { index: i64, len: usize, slots: usize },
    #[error("the matrix has no non-zero diagonal")]
    EmptyMatrix,
    #[error("the matrix is encoded for {expected} slots but the ciphertext packs {found}")]
    SlotMismatch { expected: usize, found: usize },
    #[error("baby-step count n1 = {n1} must be in 1..={slots}")]
    BadBabySteps { n1: usize, slots: usize },
    #[error("rows have different lengths ({first} and {other})")]
    RaggedMatrix { first: usize, other: usize },
    #[error("input vector has {len} entries but the matrix has {cols} columns")]
    VectorLength { len: usize, cols: usize },
    #[error(
        "the circuit needs {needed} levels but the ciphertext has only {available} left (level {level})"
    )]
    NotEnoughLevels { needed: usize, available: usize, level: usize },
    #[error("interval [{a}, {b}] is empty or not finite")]
    BadInterval { a: f64, b: f64 },
    #[error("polynomial degree {0} is not supported (0 < degree <= 1024)")]
    BadDegree(usize),
    #[error("no memory budget allows this transform: {0}")]
    NoFeasiblePlan(String),
    #[error("{0}")]
    Invalid(String),
}

/// Result alias of this crate.
pub type Result<T, E = CircuitError> = std::result::Result<T, E>;
