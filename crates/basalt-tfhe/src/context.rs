//! A small, torus-width-erased, high-level handle for the Python bindings (and scripts):
//! one client key + server key for a named parameter set, integer messages in, integer messages
//! out, every fallible call a [`Result`] with a named [`TfheError`].
//!
//! # Why
//! Binding generics (`ClientKey<u32>` vs `ClientKey<u64>`) to Python is awkward; the set's
//! `torus_bits` is only known at run time. [`TfheContext`] wraps [`DynClientKey`] /
//! [`DynServerKey`] so the binding layer sees one concrete type and one ciphertext type
//! ([`DynCiphertext`]).
//!
//! # Message space
//! Messages are integers in `0..plaintext_modulus()` where
//! `plaintext_modulus = message_modulus · carry_modulus` (TFHE-rs shortint encoding with one
//! padding bit). A LUT `f` is built by evaluating it on every message of that space; unlike the
//! low-level [`crate::Lut::from_fn`] (which reduces mod `p`), an output `≥ plaintext_modulus` is
//! an error here ([`TfheError::LutValueOutOfRange`]) rather than a silent wrap.
//!
//! # Source
//! The client/server split of the Python-facing API; TFHE-rs shortint's
//! `ClientKey`/`ServerKey` split.

use crate::batch::BatchConfig;
use crate::dynamic::{DynCiphertext, DynClientKey, DynServerKey};
use crate::error::{Result, TfheError};
use crate::gates::Gate;
use crate::params::TfheParams;
use basalt_math::progress::Progress;

/// Keys and settings for one parameter set.
#[derive(Clone, Debug)]
pub struct TfheContext {
    client: DynClientKey,
    server: DynServerKey,
    batch: BatchConfig,
}

impl TfheContext {
    /// Fresh keys (OS-seeded CSPRNG) for a shipped preset: `STRIX_I` … `STRIX_IV`,
    /// `TFHERS_2_2_KS_PBS` (aliases `I`…`IV`, `2_2`). Insecure sets (set I, ~80-bit) need
    /// `allow_insecure = true`, otherwise [`TfheError::Insecure`].
    pub fn new(set_name: &str, allow_insecure: bool) -> Result<Self> {
        Self::from_params(&TfheParams::preset(set_name, allow_insecure)?)
    }

    /// Fresh keys for validated parameters.
    pub fn from_params(params: &TfheParams) -> Result<Self> {
        let client = DynClientKey::new(params)?;
        let server = client.server_key();
        Ok(TfheContext { client, server, batch: BatchConfig::default() })
    }

    /// [`TfheContext::new`] whose server key is refused beyond the memory available unless
    /// `force`, reported to `progress` stage by stage, and stopped when `progress` cancels.
    ///
    /// # Errors
    /// As [`TfheContext::new`], and [`TfheError::OutOfMemory`], [`TfheError::Cancelled`].
    pub fn new_with(
        set_name: &str,
        allow_insecure: bool,
        force: bool,
        progress: &dyn Progress,
    ) -> Result<Self> {
        let params = TfheParams::preset(set_name, allow_insecure)?;
        let client = DynClientKey::new(&params)?;
        let server = client.server_key_checked(force, progress)?;
        Ok(TfheContext { client, server, batch: BatchConfig::default() })
    }

    /// The client key's identity, carried by every ciphertext and the server key.
    pub fn key_id(&self) -> u64 {
        self.client.key_id()
    }

    /// The secret key (stays with the client).
    pub fn client_key(&self) -> &DynClientKey {
        &self.client
    }

    /// The server key (bootstrapping and key-switching keys, no secret): what a client sends
    /// to a server.
    pub fn server_key(&self) -> &DynServerKey {
        &self.server
    }

    /// The parameter set.
    pub fn params(&self) -> &TfheParams {
        self.client.params()
    }

    /// Name of the parameter set.
    pub fn set_name(&self) -> &str {
        &self.params().name
    }

    /// TFHE-rs's message modulus (the "message" bits, without carry).
    pub fn message_modulus(&self) -> u64 {
        self.params().message_modulus
    }

    /// Size of the space messages and LUT values live in: `message_modulus · carry_modulus`.
    pub fn plaintext_modulus(&self) -> u64 {
        self.params().plaintext_modulus()
    }

    /// Batch schedule used by [`apply_lut_batch`](Self::apply_lut_batch).
    pub fn batch_config(&self) -> BatchConfig {
        self.batch
    }

    /// Override the batch schedule (e.g. `core_batch: Some(1)` for unbatched).
    pub fn set_batch_config(&mut self, cfg: BatchConfig) {
        self.batch = cfg;
    }

    /// Encrypt `m ∈ 0..plaintext_modulus()`.
    pub fn encrypt(&self, m: u64) -> Result<DynCiphertext> {
        self.client.encrypt(m)
    }

    /// Decrypt to `0..plaintext_modulus()`.
    pub fn decrypt(&self, ct: &DynCiphertext) -> Result<u64> {
        self.client.decrypt(ct)
    }

    /// Encrypt a boolean for [`gate`](Self::gate).
    pub fn encrypt_bool(&self, b: bool) -> DynCiphertext {
        self.client.encrypt_bool(b)
    }

    /// Decrypt a boolean produced by [`gate`](Self::gate).
    pub fn decrypt_bool(&self, ct: &DynCiphertext) -> Result<bool> {
        self.client.decrypt_bool(ct)
    }

    /// The table of `f` on every message, checked against the message space.
    pub fn lut_table(&self, f: &dyn Fn(u64) -> u64) -> Result<Vec<u64>> {
        let p = self.plaintext_modulus();
        (0..p)
            .map(|m| {
                let v = f(m);
                if v >= p {
                    Err(TfheError::LutValueOutOfRange { input: m, value: v, modulus: p })
                } else {
                    Ok(v)
                }
            })
            .collect()
    }

    /// One programmable bootstrap (with key switching) evaluating `f` on `ct`.
    pub fn apply_lut(&self, ct: &DynCiphertext, f: &dyn Fn(u64) -> u64) -> Result<DynCiphertext> {
        let table = self.lut_table(f)?;
        self.server.apply_fn(ct, &|m| table[m as usize])
    }

    /// `f` on every ciphertext, two-level batched on the current rayon pool (bit-identical to
    /// calling [`apply_lut`](Self::apply_lut) on each).
    pub fn apply_lut_batch(
        &self,
        cts: &[DynCiphertext],
        f: &dyn Fn(u64) -> u64,
    ) -> Result<Vec<DynCiphertext>> {
        let table = self.lut_table(f)?;
        self.server.apply_fn_batch(cts, &|m| table[m as usize], &self.batch)
    }

    /// A boolean gate (one bootstrap) on two encrypted booleans.
    pub fn gate(&self, g: Gate, a: &DynCiphertext, b: &DynCiphertext) -> Result<DynCiphertext> {
        self.server.gate(g, a, b)
    }

    /// Serialise a ciphertext (tagged with its parameter set and key).
    pub fn ciphertext_to_bytes(&self, ct: &DynCiphertext) -> Vec<u8> {
        self.server.ciphertext_to_bytes(ct)
    }

    /// Load a ciphertext; a corrupted blob or one made under another set/key is an error.
    pub fn ciphertext_from_bytes(&self, bytes: &[u8]) -> Result<DynCiphertext> {
        self.server.ciphertext_from_bytes(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::toy;

    #[test]
    fn context_round_trip_luts_and_errors() {
        let ctx = TfheContext::from_params(&toy::u64_small()).unwrap();
        let p = ctx.plaintext_modulus();
        assert!(p >= 4 && ctx.message_modulus() <= p);
        let cts: Vec<_> = (0..p).map(|m| ctx.encrypt(m).unwrap()).collect();
        for (m, c) in (0..p).zip(&cts) {
            assert_eq!(ctx.decrypt(c).unwrap(), m);
        }
        let f = |x: u64| (3 * x + 1) % p;
        let one = ctx.apply_lut(&cts[2], &f).unwrap();
        assert_eq!(ctx.decrypt(&one).unwrap(), f(2));
        let outs = ctx.apply_lut_batch(&cts, &f).unwrap();
        for (m, o) in (0..p).zip(&outs) {
            assert_eq!(ctx.decrypt(o).unwrap(), f(m), "m={m}");
        }
        // Out-of-range message and LUT value are named errors, not panics.
        assert!(matches!(ctx.encrypt(p), Err(TfheError::MessageOutOfRange { .. })));
        assert!(matches!(
            ctx.apply_lut(&cts[0], &|x| x + p),
            Err(TfheError::LutValueOutOfRange { input: 0, .. })
        ));
        // A ciphertext of another context (other key) is rejected.
        let other = TfheContext::from_params(&toy::u64_small()).unwrap();
        assert!(matches!(other.apply_lut(&cts[0], &f), Err(TfheError::KeyMismatch { .. })));
        let bytes = ctx.ciphertext_to_bytes(&cts[1]);
        assert_eq!(ctx.ciphertext_from_bytes(&bytes).unwrap(), cts[1]);
        assert!(other.ciphertext_from_bytes(&bytes).is_err());
        assert!(ctx.ciphertext_from_bytes(&bytes[..bytes.len() / 2]).is_err());
        let x = ctx.gate(Gate::Nand, &ctx.encrypt_bool(true), &ctx.encrypt_bool(true)).unwrap();
        assert!(!ctx.decrypt_bool(&x).unwrap());
    }

    #[test]
    fn named_sets_and_insecure_opt_in() {
        // Python classes need Send + Sync handles.
        fn send_sync<X: Send + Sync>() {}
        send_sync::<TfheContext>();
        send_sync::<DynCiphertext>();
        assert!(matches!(TfheContext::new("STRIX_I", false), Err(TfheError::Insecure(..))));
        assert!(matches!(TfheContext::new("NO_SUCH_SET", false), Err(TfheError::UnknownSet(..))));
    }
}
