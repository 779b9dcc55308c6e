//! Errors of the integer layer: every bad input is named (out-of-range value, mixed types or
//! keys, unsupported width or parameter set), never a panic.

use thiserror::Error;

use crate::error::TfheError;
use crate::integer::radix::IntegerType;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum IntegerError {
    #[error(transparent)]
    Tfhe(#[from] TfheError),
    #[error("value {value} is out of range for {ty} ({min}..={max})")]
    OutOfRange { value: i128, ty: IntegerType, min: i128, max: i128 },
    #[error("operands have different integer types: {lhs} and {rhs}")]
    TypeMismatch { lhs: IntegerType, rhs: IntegerType },
    #[error(
        "an integer of {bits} bits is not a whole number of {block_bits}-bit blocks in 1..=64 bits"
    )]
    Width { bits: u32, block_bits: u32 },
    #[error("{0}")]
    Unsupported(String),
    #[error("malformed radix ciphertext: {0}")]
    Malformed(String),
}

pub type IntegerResult<T> = std::result::Result<T, IntegerError>;
