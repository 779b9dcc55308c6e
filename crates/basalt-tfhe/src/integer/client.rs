//! The client side: radix encryption and decryption with the secret key.
//!
//! An integer `x` of type `B` bits is written in base `m = message_modulus` as `B / log2(m)`
//! digits, each encrypted as a fresh shortint block (degree `m − 1`, noise level 1). Decryption
//! reads each block *with* its carry (`0..p`) and sums `v_i · m^i mod 2^B`, so a block whose
//! carry is not yet propagated still decrypts to the right integer.

use crate::error::TfheError;
use crate::integer::error::{IntegerError, IntegerResult};
use crate::integer::radix::{Block, BoolCiphertext, IntegerType, RadixCiphertext};
use crate::integer::server::{IntegerServer, check_params};
use crate::keys::ClientKey;
use crate::params::TfheParams;
use crate::random::Csprng;
use crate::torus::Torus;

/// Secret-key holder for radix integers.
#[derive(Clone, Debug)]
pub struct IntegerClient<T: Torus> {
    key: ClientKey<T>,
}

impl<T: Torus> IntegerClient<T> {
    /// Wrap a shortint client key; its set must have `carry_modulus ≥ message_modulus ≥ 4`
    /// (room for a carry and for two packed digits).
    pub fn new(key: ClientKey<T>) -> IntegerResult<Self> {
        check_params(key.params())?;
        Ok(IntegerClient { key })
    }

    /// Fresh keys (OS-seeded CSPRNG) for `params`.
    pub fn generate(params: &TfheParams) -> IntegerResult<Self> {
        Self::new(ClientKey::new(params)?)
    }

    /// Keys from a given generator (reproducible tests).
    pub fn with_rng(params: &TfheParams, rng: &mut Csprng) -> IntegerResult<Self> {
        Self::new(ClientKey::with_rng(params, rng)?)
    }

    pub fn client_key(&self) -> &ClientKey<T> {
        &self.key
    }

    pub fn params(&self) -> &TfheParams {
        self.key.params()
    }

    /// The matching secret-free server (bootstrapping and key-switching keys).
    pub fn server(&self) -> IntegerServer<T> {
        IntegerServer::new(self.key.server_key()).expect("parameters checked at construction")
    }

    /// The server from a given generator (reproducible tests).
    pub fn server_with(&self, rng: &mut Csprng) -> IntegerServer<T> {
        IntegerServer::new(self.key.server_key_with(rng))
            .expect("parameters checked at construction")
    }

    fn block_bits(&self) -> u32 {
        self.params().message_modulus.trailing_zeros()
    }

    /// Encrypt `value` as `ty`; a value outside the type's range is an error.
    pub fn encrypt(&self, value: i128, ty: IntegerType) -> IntegerResult<RadixCiphertext<T>> {
        self.encrypt_with(value, ty, &mut Csprng::from_os())
    }

    /// [`encrypt`](Self::encrypt) with a given generator.
    pub fn encrypt_with(
        &self,
        value: i128,
        ty: IntegerType,
        rng: &mut Csprng,
    ) -> IntegerResult<RadixCiphertext<T>> {
        let nb = ty.blocks(self.block_bits())?;
        let mut x = ty.encode(value)?;
        let m = self.params().message_modulus;
        let mut blocks = Vec::with_capacity(nb);
        for _ in 0..nb {
            let ct = self.key.encrypt_with(x % m, rng)?;
            blocks.push(Block { ct, degree: m - 1, noise_level: 1 });
            x /= m;
        }
        Ok(RadixCiphertext { ty, blocks })
    }

    /// Decrypt to the type's value (carries included).
    pub fn decrypt(&self, ct: &RadixCiphertext<T>) -> IntegerResult<i128> {
        let nb = ct.ty.blocks(self.block_bits())?;
        if ct.blocks.len() != nb {
            return Err(IntegerError::Malformed(format!(
                "{} needs {nb} blocks, found {}",
                ct.ty,
                ct.blocks.len()
            )));
        }
        let m = self.params().message_modulus as u128;
        let mut acc: u128 = 0;
        let mut w: u128 = 1;
        for b in &ct.blocks {
            let v = self.key.decrypt(&b.ct)? as u128;
            acc = acc.wrapping_add(v.wrapping_mul(w)) & ct.ty.mask();
            w *= m; // m^nb = 2^bits ≤ 2^64: no overflow in u128
        }
        Ok(ct.ty.decode(acc))
    }

    /// Encrypt a boolean as one block holding 0 or 1.
    pub fn encrypt_bool(&self, b: bool) -> IntegerResult<BoolCiphertext<T>> {
        let ct = self.key.encrypt(b as u64)?;
        Ok(BoolCiphertext { block: Block { ct, degree: 1, noise_level: 1 } })
    }

    /// Decrypt an encrypted boolean; a block holding anything but 0 or 1 is an error.
    pub fn decrypt_bool(&self, b: &BoolCiphertext<T>) -> IntegerResult<bool> {
        match self.key.decrypt(&b.block.ct)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(IntegerError::Tfhe(TfheError::Corrupt(format!(
                "encrypted boolean decrypts to {v}, not 0 or 1"
            )))),
        }
    }
}
