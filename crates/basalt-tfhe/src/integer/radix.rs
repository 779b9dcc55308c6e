//! Radix ciphertexts: blocks with their degree and noise-level bounds, the integer type they
//! encode, and the encrypted boolean (one block holding 0 or 1) that comparisons return.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::integer::error::{IntegerError, IntegerResult};
use crate::keys::{Ciphertext, Encoding};
use crate::lwe::LweCiphertext;
use crate::torus::Torus;

/// Width and signedness of an encrypted integer (`Uint8` … `Int64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct IntegerType {
    pub bits: u32,
    pub signed: bool,
}

impl IntegerType {
    pub const fn unsigned(bits: u32) -> Self {
        IntegerType { bits, signed: false }
    }
    pub const fn signed(bits: u32) -> Self {
        IntegerType { bits, signed: true }
    }

    /// Smallest value of the type.
    pub fn min(&self) -> i128 {
        if self.signed { -(1i128 << (self.bits - 1)) } else { 0 }
    }

    /// Largest value of the type.
    pub fn max(&self) -> i128 {
        if self.signed { (1i128 << (self.bits - 1)) - 1 } else { (1i128 << self.bits) - 1 }
    }

    /// `2^bits − 1`: reduces two's-complement values to the type.
    pub fn mask(&self) -> u128 {
        (1u128 << self.bits) - 1
    }

    /// Number of blocks of `block_bits` bits, or an error if the width is not a whole number of
    /// blocks in `1..=64` bits.
    pub fn blocks(&self, block_bits: u32) -> IntegerResult<usize> {
        if self.bits == 0
            || self.bits > 64
            || block_bits == 0
            || !self.bits.is_multiple_of(block_bits)
        {
            return Err(IntegerError::Width { bits: self.bits, block_bits });
        }
        Ok((self.bits / block_bits) as usize)
    }

    /// `value` as the type's `bits`-bit pattern; out of range is an error.
    pub fn encode(&self, value: i128) -> IntegerResult<u64> {
        if value < self.min() || value > self.max() {
            return Err(IntegerError::OutOfRange {
                value,
                ty: *self,
                min: self.min(),
                max: self.max(),
            });
        }
        Ok((value as u128 & self.mask()) as u64)
    }

    /// The type's value of a `bits`-bit pattern (sign-extended when signed).
    pub fn decode(&self, pattern: u128) -> i128 {
        let p = pattern & self.mask();
        if self.signed && (p >> (self.bits - 1)) & 1 == 1 {
            p as i128 - (1i128 << self.bits)
        } else {
            p as i128
        }
    }
}

impl fmt::Display for IntegerType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", if self.signed { "Int" } else { "Uint" }, self.bits)
    }
}

/// One shortint block: a ciphertext plus the bounds that decide when it must be cleaned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Block<T: Torus> {
    pub(crate) ct: Ciphertext<T>,
    /// Largest value the block can hold (TFHE-rs `Degree`).
    pub(crate) degree: u64,
    /// Noise as a multiple of a bootstrap output's (0 for a trivial block).
    pub(crate) noise_level: u64,
}

impl<T: Torus> Block<T> {
    pub fn ciphertext(&self) -> &Ciphertext<T> {
        &self.ct
    }
    pub fn degree(&self) -> u64 {
        self.degree
    }
    pub fn noise_level(&self) -> u64 {
        self.noise_level
    }

    /// A noiseless block of value `v` (`delta_v = v·Δ`) with the ids of `like`.
    pub(crate) fn trivial(like: &Ciphertext<T>, v: u64, delta: T) -> Self {
        let lwe = LweCiphertext::trivial(like.lwe.dimension(), T::from_u64(v).wmul(delta));
        Block {
            ct: Ciphertext {
                params_id: like.params_id,
                key_id: like.key_id,
                encoding: Encoding::Integer,
                lwe,
            },
            degree: v,
            noise_level: 0,
        }
    }

    /// `self + o` (no bootstrap): bounds add.
    pub(crate) fn add(&self, o: &Self) -> Self {
        let mut ct = self.ct.clone();
        ct.lwe.add_assign(&o.ct.lwe);
        Block { ct, degree: self.degree + o.degree, noise_level: self.noise_level + o.noise_level }
    }

    /// `c·self` for a small clear `c`: bounds scale by `c`.
    pub(crate) fn scale(&self, c: u64) -> Self {
        let mut ct = self.ct.clone();
        ct.lwe.scale(c as i64);
        Block { ct, degree: self.degree * c, noise_level: self.noise_level * c }
    }

    /// `self + v` for a clear `v` (`v·Δ` given as `delta_v`).
    pub(crate) fn add_clear(&self, v: u64, delta: T) -> Self {
        let mut ct = self.ct.clone();
        ct.lwe.add_plain(T::from_u64(v).wmul(delta));
        Block { ct, degree: self.degree + v, noise_level: self.noise_level }
    }

    /// `c − self` for a clear `c ≥ degree` (bitwise complement of a digit when `c = m − 1`).
    pub(crate) fn clear_minus(&self, c: u64, delta: T) -> Self {
        debug_assert!(c >= self.degree);
        let mut ct = self.ct.clone();
        ct.lwe.scale(-1);
        ct.lwe.add_plain(T::from_u64(c).wmul(delta));
        Block { ct, degree: c, noise_level: self.noise_level }
    }
}

/// An encrypted integer of type [`IntegerType`]: blocks least significant first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct RadixCiphertext<T: Torus> {
    pub(crate) ty: IntegerType,
    pub(crate) blocks: Vec<Block<T>>,
}

impl<T: Torus> RadixCiphertext<T> {
    pub fn integer_type(&self) -> IntegerType {
        self.ty
    }
    pub fn blocks(&self) -> &[Block<T>] {
        &self.blocks
    }
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }
    /// Key the blocks were made under.
    pub fn key_id(&self) -> u64 {
        self.blocks.first().map_or(0, |b| b.ct.key_id)
    }
    /// Whether every block holds a single digit below `message_modulus` with a bootstrap's
    /// noise or less (the state every operation returns to when it must).
    pub fn is_clean(&self, message_modulus: u64) -> bool {
        self.blocks.iter().all(|b| b.degree < message_modulus && b.noise_level <= 1)
    }
}

/// An encrypted boolean: one block holding 0 or 1 (TFHE-rs `BooleanBlock`), as comparisons
/// return and [`select`](crate::integer::IntegerServer::select) takes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct BoolCiphertext<T: Torus> {
    pub(crate) block: Block<T>,
}

impl<T: Torus> BoolCiphertext<T> {
    pub fn block(&self) -> &Block<T> {
        &self.block
    }
    pub fn key_id(&self) -> u64 {
        self.block.ct.key_id
    }
}
