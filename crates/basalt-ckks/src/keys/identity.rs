//! Key identity: which client's secret a key or a ciphertext belongs to.
//!
//! A ciphertext decrypted with another secret, or key-switched with another client's keys,
//! decrypts to noise with no error: CKKS cannot tell. So every secret key draws a random
//! 128-bit [`KeyId`] when it is generated, and everything derived from it carries that id: the
//! public key, every key-switching key (relinearisation, rotation, conjugation, bootstrapping's
//! encapsulation keys), every ciphertext encrypted under it and every result computed from one.
//! Operations, loads and decryption compare ids and refuse a mismatch with an error naming both
//! ([`crate::CkksError::KeyMismatch`]).
//!
//! The id is random rather than a hash of the secret so that it reveals nothing about it, and
//! fixed at key generation so that a server can check a ciphertext against the keys it holds
//! without any secret. [`KeyId::UNBOUND`] marks objects that no secret made (a trivial
//! encryption such as [`crate::Ciphertext::zero`], shape-only keys of trace mode): they combine
//! with any key.

use serde::{Deserialize, Serialize};

use crate::error::{CkksError, Result};

/// The 128-bit identity of a key set (see the module documentation).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct KeyId(pub [u8; 16]);

impl KeyId {
    /// The id of objects no secret made.
    pub const UNBOUND: KeyId = KeyId([0; 16]);

    /// A fresh id from the OS-seeded CSPRNG (never [`KeyId::UNBOUND`]).
    pub fn fresh() -> KeyId {
        use rand::RngCore;
        let mut rng = crate::util::csprng();
        loop {
            let mut b = [0u8; 16];
            rng.fill_bytes(&mut b);
            if b != [0; 16] {
                return KeyId(b);
            }
        }
    }

    /// Whether a secret made it.
    pub fn is_bound(self) -> bool {
        self != KeyId::UNBOUND
    }

    /// Lower-case hexadecimal, 32 digits.
    pub fn to_hex(self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Parse [`KeyId::to_hex`]'s form.
    ///
    /// # Errors
    /// [`CkksError::Corrupt`] unless `s` is 32 hexadecimal digits.
    pub fn from_hex(s: &str) -> Result<KeyId> {
        let bad =
            || CkksError::Corrupt { what: "key id", reason: format!("{s:?} is not 32 hex digits") };
        if s.len() != 32 || !s.is_ascii() {
            return Err(bad());
        }
        let mut b = [0u8; 16];
        for (i, out) in b.iter_mut().enumerate() {
            *out = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(KeyId(b))
    }

    /// The id two operands' result carries: the bound one, or an error if both are bound and
    /// differ. `what` names the second operand in the error.
    ///
    /// # Errors
    /// [`CkksError::KeyMismatch`].
    pub fn join(self, other: KeyId, what: &'static str) -> Result<KeyId> {
        match (self.is_bound(), other.is_bound()) {
            (true, true) if self != other => {
                Err(CkksError::KeyMismatch { expected: self, found: other, what })
            }
            (false, _) => Ok(other),
            _ => Ok(self),
        }
    }
}

impl std::fmt::Display for KeyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_bound() { f.write_str(&self.to_hex()) } else { f.write_str("unbound") }
    }
}

impl std::fmt::Debug for KeyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyId({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_join() {
        let a = KeyId::fresh();
        assert!(a.is_bound());
        assert_eq!(KeyId::from_hex(&a.to_hex()).unwrap(), a);
        assert!(KeyId::from_hex("xyz").is_err());
        let b = KeyId::fresh();
        assert_eq!(a.join(KeyId::UNBOUND, "x").unwrap(), a);
        assert_eq!(KeyId::UNBOUND.join(b, "x").unwrap(), b);
        let e = a.join(b, "ciphertext").unwrap_err().to_string();
        assert!(e.contains(&a.to_hex()) && e.contains(&b.to_hex()), "{e}");
    }
}
