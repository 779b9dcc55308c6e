//! Radix ciphertexts and encrypted booleans as bytes (bincode with a size limit and a magic
//! tag), validated on load against the server that will use them: block count for the type,
//! parameter set, key, dimensions and degree/noise bounds.

use bincode::Options;
use serde::{Deserialize, Serialize};

use crate::integer::error::{IntegerError, IntegerResult};
use crate::integer::radix::{BoolCiphertext, RadixCiphertext};
use crate::integer::server::IntegerServer;
use crate::torus::Torus;

const MAGIC: [u8; 8] = *b"BSLTRDX1";

#[derive(Serialize, Deserialize)]
#[serde(bound = "")]
enum Blob<T: Torus> {
    Radix(RadixCiphertext<T>),
    Bool(BoolCiphertext<T>),
}

fn opts() -> impl Options {
    // 64 blocks of a 2^16-dimensional 64-bit LWE fit well below this.
    bincode::DefaultOptions::new().with_fixint_encoding().with_limit(1 << 30)
}

fn encode<T: Torus>(blob: &Blob<T>) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.push(T::BITS as u8);
    out.extend(opts().serialize(blob).expect("in-memory serialisation cannot fail"));
    out
}

fn decode<T: Torus>(bytes: &[u8]) -> IntegerResult<Blob<T>> {
    if bytes.len() < 9 || bytes[..8] != MAGIC {
        return Err(IntegerError::Malformed("not a radix ciphertext blob".into()));
    }
    if bytes[8] as u32 != T::BITS {
        return Err(IntegerError::Malformed(format!(
            "blob is for a {}-bit torus, expected {}",
            bytes[8],
            T::BITS
        )));
    }
    opts().deserialize(&bytes[9..]).map_err(|e| IntegerError::Malformed(e.to_string()))
}

impl<T: Torus> RadixCiphertext<T> {
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&Blob::Radix(self.clone()))
    }
}

impl<T: Torus> BoolCiphertext<T> {
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&Blob::Bool(self.clone()))
    }
}

impl<T: Torus> IntegerServer<T> {
    /// Load a radix ciphertext made under this server's key.
    pub fn radix_from_bytes(&self, bytes: &[u8]) -> IntegerResult<RadixCiphertext<T>> {
        match decode(bytes)? {
            Blob::Radix(ct) => {
                self.check(&ct)?;
                Ok(ct)
            }
            Blob::Bool(_) => Err(IntegerError::Malformed("blob holds a boolean".into())),
        }
    }

    /// Load an encrypted boolean made under this server's key.
    pub fn bool_from_bytes(&self, bytes: &[u8]) -> IntegerResult<BoolCiphertext<T>> {
        match decode(bytes)? {
            Blob::Bool(b) => {
                self.check_bool_ciphertext(&b)?;
                Ok(b)
            }
            Blob::Radix(_) => Err(IntegerError::Malformed("blob holds an integer".into())),
        }
    }
}
