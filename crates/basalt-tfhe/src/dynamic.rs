//! Torus-width-erased wrappers for callers that pick the parameter set at run time (the CLI,
//! the Python bindings): the set's `torus_bits` decides `u32` or `u64`, and mixing widths is a
//! [`TfheError::TorusMismatch`], not a compile error.

use std::sync::Arc;

use crate::batch::BatchConfig;
use crate::error::{Result, TfheError};
use crate::gates::Gate;
use crate::keys::{Ciphertext, ClientKey, ServerKey, ServerKeyMemory};
use crate::lut::Lut;
use crate::params::TfheParams;
use crate::random::Csprng;
use crate::serialize;
use basalt_math::progress::Progress;

/// A ciphertext on either torus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DynCiphertext {
    U32(Ciphertext<u32>),
    U64(Ciphertext<u64>),
}

/// A client key on either torus.
#[derive(Clone, Debug)]
pub enum DynClientKey {
    U32(ClientKey<u32>),
    U64(ClientKey<u64>),
}

/// A server key on either torus, shared: cloning a handle does not copy the bootstrapping key.
#[derive(Clone, Debug)]
pub enum DynServerKey {
    U32(Arc<ServerKey<u32>>),
    U64(Arc<ServerKey<u64>>),
}

fn mismatch(expected: u32) -> TfheError {
    TfheError::TorusMismatch { expected, found: if expected == 32 { 64 } else { 32 } }
}

impl DynClientKey {
    /// Fresh keys for `params` (OS-seeded CSPRNG).
    pub fn new(params: &TfheParams) -> Result<Self> {
        Ok(match params.torus_bits {
            32 => DynClientKey::U32(ClientKey::new(params)?),
            _ => DynClientKey::U64(ClientKey::new(params)?),
        })
    }

    pub fn params(&self) -> &TfheParams {
        match self {
            DynClientKey::U32(k) => k.params(),
            DynClientKey::U64(k) => k.params(),
        }
    }

    pub fn key_id(&self) -> u64 {
        match self {
            DynClientKey::U32(k) => k.key_id(),
            DynClientKey::U64(k) => k.key_id(),
        }
    }

    pub fn server_key(&self) -> DynServerKey {
        match self {
            DynClientKey::U32(k) => DynServerKey::U32(Arc::new(k.server_key())),
            DynClientKey::U64(k) => DynServerKey::U64(Arc::new(k.server_key())),
        }
    }

    /// [`ClientKey::server_key_checked`] (OS-seeded CSPRNG): refused beyond the memory
    /// available unless `force`, reported to `progress`, stopped when it cancels.
    ///
    /// # Errors
    /// [`TfheError::OutOfMemory`], [`TfheError::Cancelled`].
    pub fn server_key_checked(&self, force: bool, progress: &dyn Progress) -> Result<DynServerKey> {
        let rng = &mut Csprng::from_os();
        Ok(match self {
            DynClientKey::U32(k) => {
                DynServerKey::U32(Arc::new(k.server_key_checked(rng, force, progress)?))
            }
            DynClientKey::U64(k) => {
                DynServerKey::U64(Arc::new(k.server_key_checked(rng, force, progress)?))
            }
        })
    }

    /// The bytes of this key's server key, before it is generated.
    pub fn server_key_memory(&self) -> ServerKeyMemory {
        match self {
            DynClientKey::U32(k) => ServerKeyMemory::estimate::<u32>(k.params()),
            DynClientKey::U64(k) => ServerKeyMemory::estimate::<u64>(k.params()),
        }
    }

    pub fn encrypt(&self, m: u64) -> Result<DynCiphertext> {
        Ok(match self {
            DynClientKey::U32(k) => DynCiphertext::U32(k.encrypt(m)?),
            DynClientKey::U64(k) => DynCiphertext::U64(k.encrypt(m)?),
        })
    }

    pub fn decrypt(&self, ct: &DynCiphertext) -> Result<u64> {
        match (self, ct) {
            (DynClientKey::U32(k), DynCiphertext::U32(c)) => k.decrypt(c),
            (DynClientKey::U64(k), DynCiphertext::U64(c)) => k.decrypt(c),
            (DynClientKey::U32(_), _) => Err(mismatch(32)),
            (DynClientKey::U64(_), _) => Err(mismatch(64)),
        }
    }

    pub fn encrypt_bool(&self, b: bool) -> DynCiphertext {
        match self {
            DynClientKey::U32(k) => DynCiphertext::U32(k.encrypt_bool(b)),
            DynClientKey::U64(k) => DynCiphertext::U64(k.encrypt_bool(b)),
        }
    }

    pub fn decrypt_bool(&self, ct: &DynCiphertext) -> Result<bool> {
        match (self, ct) {
            (DynClientKey::U32(k), DynCiphertext::U32(c)) => k.decrypt_bool(c),
            (DynClientKey::U64(k), DynCiphertext::U64(c)) => k.decrypt_bool(c),
            (DynClientKey::U32(_), _) => Err(mismatch(32)),
            (DynClientKey::U64(_), _) => Err(mismatch(64)),
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            DynClientKey::U32(k) => serialize::serialize_client_key(k),
            DynClientKey::U64(k) => serialize::serialize_client_key(k),
        }
    }

    pub fn from_bytes(bytes: &[u8], params: &TfheParams) -> Result<Self> {
        Ok(match params.torus_bits {
            32 => DynClientKey::U32(serialize::deserialize_client_key(bytes, params)?),
            _ => DynClientKey::U64(serialize::deserialize_client_key(bytes, params)?),
        })
    }
}

impl DynServerKey {
    pub fn params(&self) -> &TfheParams {
        match self {
            DynServerKey::U32(k) => k.params(),
            DynServerKey::U64(k) => k.params(),
        }
    }

    /// Evaluate `f` (on `0..p`, outputs reduced mod `p`) on one ciphertext.
    pub fn apply_fn(&self, ct: &DynCiphertext, f: &dyn Fn(u64) -> u64) -> Result<DynCiphertext> {
        match (self, ct) {
            (DynServerKey::U32(k), DynCiphertext::U32(c)) => {
                Ok(DynCiphertext::U32(k.apply_lut(c, &Lut::from_fn(k.params(), f))?))
            }
            (DynServerKey::U64(k), DynCiphertext::U64(c)) => {
                Ok(DynCiphertext::U64(k.apply_lut(c, &Lut::from_fn(k.params(), f))?))
            }
            (DynServerKey::U32(_), _) => Err(mismatch(32)),
            (DynServerKey::U64(_), _) => Err(mismatch(64)),
        }
    }

    /// Evaluate the tables `tables[i][x]` (`x ∈ 0..=max_value`) on one ciphertext with one
    /// blind rotation ([`crate::many_lut`]): one ciphertext per table.
    ///
    /// # Errors
    /// The [`crate::ManyLut`] errors (too many tables for the bound, a value outside the
    /// message space, a table of the wrong length); identity and width mismatches.
    pub fn apply_many_tables(
        &self,
        ct: &DynCiphertext,
        tables: &[Vec<u64>],
        max_value: u64,
    ) -> Result<Vec<DynCiphertext>> {
        use crate::many_lut::ManyLut;
        match (self, ct) {
            (DynServerKey::U32(k), DynCiphertext::U32(c)) => {
                let lut = ManyLut::from_tables(k.params(), max_value, tables)?;
                Ok(k.apply_many_lut(c, &lut)?.into_iter().map(DynCiphertext::U32).collect())
            }
            (DynServerKey::U64(k), DynCiphertext::U64(c)) => {
                let lut = ManyLut::from_tables(k.params(), max_value, tables)?;
                Ok(k.apply_many_lut(c, &lut)?.into_iter().map(DynCiphertext::U64).collect())
            }
            (DynServerKey::U32(_), _) => Err(mismatch(32)),
            (DynServerKey::U64(_), _) => Err(mismatch(64)),
        }
    }

    /// Evaluate `f` on many ciphertexts, two-level batched on the current rayon pool.
    pub fn apply_fn_batch(
        &self,
        cts: &[DynCiphertext],
        f: &dyn Fn(u64) -> u64,
        cfg: &BatchConfig,
    ) -> Result<Vec<DynCiphertext>> {
        match self {
            DynServerKey::U32(k) => {
                let v = cts
                    .iter()
                    .map(|c| match c {
                        DynCiphertext::U32(c) => Ok(c.clone()),
                        _ => Err(mismatch(32)),
                    })
                    .collect::<Result<Vec<_>>>()?;
                let lut = Lut::from_fn(k.params(), f);
                Ok(k.apply_lut_batch(&v, &lut, cfg)?.into_iter().map(DynCiphertext::U32).collect())
            }
            DynServerKey::U64(k) => {
                let v = cts
                    .iter()
                    .map(|c| match c {
                        DynCiphertext::U64(c) => Ok(c.clone()),
                        _ => Err(mismatch(64)),
                    })
                    .collect::<Result<Vec<_>>>()?;
                let lut = Lut::from_fn(k.params(), f);
                Ok(k.apply_lut_batch(&v, &lut, cfg)?.into_iter().map(DynCiphertext::U64).collect())
            }
        }
    }

    pub fn gate(&self, g: Gate, a: &DynCiphertext, b: &DynCiphertext) -> Result<DynCiphertext> {
        match (self, a, b) {
            (DynServerKey::U32(k), DynCiphertext::U32(a), DynCiphertext::U32(b)) => {
                Ok(DynCiphertext::U32(k.gate(g, a, b)?))
            }
            (DynServerKey::U64(k), DynCiphertext::U64(a), DynCiphertext::U64(b)) => {
                Ok(DynCiphertext::U64(k.gate(g, a, b)?))
            }
            (DynServerKey::U32(_), ..) => Err(mismatch(32)),
            (DynServerKey::U64(_), ..) => Err(mismatch(64)),
        }
    }

    /// The key's identity (that of the client key it was made from).
    pub fn key_id(&self) -> u64 {
        match self {
            DynServerKey::U32(k) => k.key_id,
            DynServerKey::U64(k) => k.key_id,
        }
    }

    /// The 64-bit-torus key, shared (radix integers run on it), if this is one.
    pub fn as_u64(&self) -> Option<&Arc<ServerKey<u64>>> {
        match self {
            DynServerKey::U64(k) => Some(k),
            DynServerKey::U32(_) => None,
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            DynServerKey::U32(k) => serialize::serialize_server_key(k.as_ref()),
            DynServerKey::U64(k) => serialize::serialize_server_key(k.as_ref()),
        }
    }

    pub fn from_bytes(bytes: &[u8], params: &TfheParams) -> Result<Self> {
        Ok(match params.torus_bits {
            32 => DynServerKey::U32(Arc::new(serialize::deserialize_server_key(bytes, params)?)),
            _ => DynServerKey::U64(Arc::new(serialize::deserialize_server_key(bytes, params)?)),
        })
    }

    /// Serialize a ciphertext of this key.
    pub fn ciphertext_to_bytes(&self, ct: &DynCiphertext) -> Vec<u8> {
        match ct {
            DynCiphertext::U32(c) => serialize::serialize_ciphertext(c),
            DynCiphertext::U64(c) => serialize::serialize_ciphertext(c),
        }
    }

    /// Load a ciphertext, checking it belongs to this key and parameter set.
    pub fn ciphertext_from_bytes(&self, bytes: &[u8]) -> Result<DynCiphertext> {
        Ok(match self {
            DynServerKey::U32(k) => {
                DynCiphertext::U32(serialize::deserialize_ciphertext(bytes, k)?)
            }
            DynServerKey::U64(k) => {
                DynCiphertext::U64(serialize::deserialize_ciphertext(bytes, k)?)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::toy;

    #[test]
    fn dynamic_wrappers_dispatch_and_reject_mixed_widths() {
        let p64 = toy::u64_small();
        let p32 = toy::u32_small();
        let ck64 = DynClientKey::new(&p64).unwrap();
        let sk64 = ck64.server_key();
        let ck32 = DynClientKey::new(&p32).unwrap();
        let sk32 = ck32.server_key();
        let c = ck64.encrypt(6).unwrap();
        let out = sk64.apply_fn(&c, &|x| x / 2).unwrap();
        assert_eq!(ck64.decrypt(&out).unwrap(), 3);
        let outs =
            sk64.apply_fn_batch(&[c.clone(), out], &|x| x + 1, &BatchConfig::default()).unwrap();
        assert_eq!(ck64.decrypt(&outs[0]).unwrap(), 7);
        assert_eq!(ck64.decrypt(&outs[1]).unwrap(), 4);
        let b = sk32.gate(Gate::Xor, &ck32.encrypt_bool(true), &ck32.encrypt_bool(false)).unwrap();
        assert!(ck32.decrypt_bool(&b).unwrap());
        assert!(matches!(ck32.decrypt(&c), Err(TfheError::TorusMismatch { .. })));
        assert!(matches!(sk32.apply_fn(&c, &|x| x), Err(TfheError::TorusMismatch { .. })));
        let bytes = sk64.ciphertext_to_bytes(&c);
        assert_eq!(sk64.ciphertext_from_bytes(&bytes).unwrap(), c);
        assert!(sk32.ciphertext_from_bytes(&bytes).is_err());
    }
}
