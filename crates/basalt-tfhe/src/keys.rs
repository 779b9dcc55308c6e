//! User-facing keys and ciphertexts: a [`ClientKey`] (secret keys) encrypts and decrypts, a
//! [`ServerKey`] (bootstrapping + key-switching keys) evaluates lookup tables.
//!
//! Every key and ciphertext carries the parameter-set id and a random key id, checked on every
//! operation and on deserialisation, so objects of different sets or keys never mix silently.

use serde::{Deserialize, Serialize};

use crate::blind_rotate::BlindRotateWorkspace;
use crate::bsk::FourierBsk;
use crate::error::{Result, TfheError};
use crate::fft::fft_for;
use crate::glwe::GlweSecretKey;
use crate::keyswitch::KeySwitchKey;
use crate::lut::{Lut, delta};
use crate::lwe::{LweCiphertext, LweSecretKey};
use crate::ms_noise_reduction::MsNoiseReductionKey;
use crate::params::{AtomicPattern, TfheParams};
use crate::pbs::programmable_bootstrap;
use crate::random::Csprng;
use crate::torus::Torus;
use crate::trace::emit_keyswitch_trace;
use basalt_math::progress::{Progress, Silent, memory_refusal};

/// How a ciphertext's phase encodes its message. The two are not interchangeable: a boolean
/// is `±1/8` (gates add two and bootstrap the sign), an integer is `m·Δ` (lookup tables read
/// it); a gate on integers or a table on a boolean computes garbage without an error, so each
/// operation checks the encoding it expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Encoding {
    /// `m ∈ [0, p)` at `m·Δ` (message and carry).
    Integer,
    /// A boolean at `±1/8` (gate encoding).
    Boolean,
}

impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Encoding::Integer => "an integer",
            Encoding::Boolean => "a boolean",
        })
    }
}

/// An encrypted message with the identity of its parameter set and key, and its encoding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Ciphertext<T: Torus> {
    pub(crate) params_id: u64,
    pub(crate) key_id: u64,
    pub(crate) encoding: Encoding,
    pub(crate) lwe: LweCiphertext<T>,
}

pub(crate) fn check_encoding<T: Torus>(ct: &Ciphertext<T>, expected: Encoding) -> Result<()> {
    if ct.encoding != expected {
        return Err(TfheError::EncodingMismatch { expected, found: ct.encoding });
    }
    Ok(())
}

impl<T: Torus> Ciphertext<T> {
    pub fn lwe(&self) -> &LweCiphertext<T> {
        &self.lwe
    }
    pub fn key_id(&self) -> u64 {
        self.key_id
    }
    pub fn params_id(&self) -> u64 {
        self.params_id
    }
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

/// Secret keys: small LWE key `s` (dimension n) and GLWE key `S` (its flattening is the big key).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct ClientKey<T: Torus> {
    pub(crate) params: TfheParams,
    pub(crate) key_id: u64,
    pub(crate) lwe_sk: LweSecretKey<T>,
    pub(crate) glwe_sk: GlweSecretKey<T>,
}

/// Overwrite secret words with zeros in a way the compiler cannot elide (`zeroize`'s volatile
/// writes over the words' bytes: `T` is `u32` or `u64`).
pub(crate) fn zeroize_words<T: Torus>(s: &mut [T]) {
    use zeroize::Zeroize;
    let bytes = std::mem::size_of_val(s);
    // SAFETY: `s` is a live, exclusively borrowed slice of plain integers (`u32`/`u64`, no
    // padding, every bit pattern valid), so viewing it as `bytes` initialised bytes is sound.
    let raw = unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), bytes) };
    raw.zeroize();
}

pub(crate) fn check_bits<T: Torus>(params: &TfheParams) -> Result<()> {
    if params.torus_bits != T::BITS {
        return Err(TfheError::TorusMismatch { expected: params.torus_bits, found: T::BITS });
    }
    Ok(())
}

impl<T: Torus> ClientKey<T> {
    /// Fresh keys from the OS-seeded CSPRNG.
    pub fn new(params: &TfheParams) -> Result<Self> {
        Self::with_rng(params, &mut Csprng::from_os())
    }

    /// Keys from a given generator (deterministic tests).
    pub fn with_rng(params: &TfheParams, rng: &mut Csprng) -> Result<Self> {
        check_bits::<T>(params)?;
        let lwe_sk = LweSecretKey::generate(params.lwe_dimension, rng);
        let glwe_sk = GlweSecretKey::generate(params.glwe_dimension, params.polynomial_size, rng);
        Ok(ClientKey { params: params.clone(), key_id: rng.next_u64(), lwe_sk, glwe_sk })
    }

    pub fn params(&self) -> &TfheParams {
        &self.params
    }

    pub fn key_id(&self) -> u64 {
        self.key_id
    }

    /// The key fresh ciphertexts are under (big key for KS→PBS, small key for PBS→KS).
    fn input_key(&self) -> (LweSecretKey<T>, crate::params::NoiseDistribution) {
        match self.params.atomic_pattern {
            AtomicPattern::KsPbs => (self.glwe_sk.as_lwe_key(), self.params.glwe_noise),
            AtomicPattern::PbsKs => (self.lwe_sk.clone(), self.params.lwe_noise),
        }
    }

    /// Encrypt a plaintext torus value directly (advanced; no range check), as an integer.
    pub fn encrypt_raw(&self, mu: T, rng: &mut Csprng) -> Ciphertext<T> {
        self.encrypt_encoded(mu, Encoding::Integer, rng)
    }

    fn encrypt_encoded(&self, mu: T, encoding: Encoding, rng: &mut Csprng) -> Ciphertext<T> {
        let (key, noise) = self.input_key();
        Ciphertext {
            params_id: self.params.id(),
            key_id: self.key_id,
            encoding,
            lwe: key.encrypt(mu, noise, rng),
        }
    }

    /// Encrypt `m ∈ [0, message_modulus · carry_modulus)`.
    pub fn encrypt(&self, m: u64) -> Result<Ciphertext<T>> {
        self.encrypt_with(m, &mut Csprng::from_os())
    }

    pub fn encrypt_with(&self, m: u64, rng: &mut Csprng) -> Result<Ciphertext<T>> {
        let p = self.params.plaintext_modulus();
        if m >= p {
            return Err(TfheError::MessageOutOfRange { message: m, modulus: p });
        }
        Ok(self.encrypt_raw(T::from_u64(m).wmul(delta(p)), rng))
    }

    /// Phase `b − <a, s>` under the matching key.
    pub fn phase(&self, ct: &Ciphertext<T>) -> Result<T> {
        self.check(ct)?;
        let key = self.input_key().0;
        if ct.lwe.dimension() != key.dimension() {
            return Err(TfheError::Dimension {
                what: "ciphertext",
                expected: key.dimension(),
                found: ct.lwe.dimension(),
            });
        }
        Ok(key.phase(&ct.lwe))
    }

    /// Decrypt to `[0, p)` (message and carry; the padding bit is dropped).
    ///
    /// # Errors
    /// [`TfheError::EncodingMismatch`] for a boolean; [`TfheError::KeyMismatch`] for a
    /// ciphertext under another key.
    pub fn decrypt(&self, ct: &Ciphertext<T>) -> Result<u64> {
        check_encoding(ct, Encoding::Integer)?;
        let p = self.params.plaintext_modulus();
        let ph = self.phase(ct)?;
        let d: T = delta(p);
        let shift = d.to_u64().trailing_zeros();
        let rounded = ph.wadd(d.shr(1)).shr(shift).to_u64();
        Ok(rounded % p)
    }

    /// Encrypt a boolean with the gate encoding `±1/8`.
    pub fn encrypt_bool(&self, b: bool) -> Ciphertext<T> {
        let eighth = T::ONE.shl(T::BITS - 3);
        let mu = if b { eighth } else { eighth.wneg() };
        self.encrypt_encoded(mu, Encoding::Boolean, &mut Csprng::from_os())
    }

    /// Decrypt a gate-encoded boolean: phase in `(0, 1/2)` is true.
    ///
    /// # Errors
    /// [`TfheError::EncodingMismatch`] for an integer ciphertext.
    pub fn decrypt_bool(&self, ct: &Ciphertext<T>) -> Result<bool> {
        check_encoding(ct, Encoding::Boolean)?;
        Ok(self.phase(ct)?.to_signed() > 0)
    }

    pub(crate) fn check(&self, ct: &Ciphertext<T>) -> Result<()> {
        check_ids(self.params.id(), self.key_id, ct)
    }

    /// Generate the matching server key (bootstrapping key in Fourier form + key-switching key).
    pub fn server_key(&self) -> ServerKey<T> {
        self.server_key_with(&mut Csprng::from_os())
    }

    pub fn server_key_with(&self, rng: &mut Csprng) -> ServerKey<T> {
        match self.server_key_checked(rng, true, &Silent) {
            Ok(sk) => sk,
            Err(e) => unreachable!("forced and silent key generation cannot fail: {e}"),
        }
    }

    /// [`ClientKey::server_key_with`] that first checks the key fits in memory
    /// ([`ServerKeyMemory::estimate`] against the memory available, unless `force`), tells
    /// `progress` of each stage (bootstrapping key, key-switching key, noise-reduction key)
    /// and its rows, and stops between rows when it cancels. The same `rng` gives the same key
    /// as [`ClientKey::server_key_with`].
    ///
    /// # Errors
    /// [`TfheError::OutOfMemory`] before anything is allocated; [`TfheError::Cancelled`].
    pub fn server_key_checked(
        &self,
        rng: &mut Csprng,
        force: bool,
        progress: &dyn Progress,
    ) -> Result<ServerKey<T>> {
        let p = &self.params;
        let need = ServerKeyMemory::estimate::<T>(p).total;
        if let Some((need, available)) = memory_refusal(need, force) {
            let what = format!("the server key of {}", p.name);
            return Err(TfheError::OutOfMemory { what, need, available });
        }
        let bsk = FourierBsk::generate_with(
            &self.lwe_sk,
            &self.glwe_sk,
            p.pbs_base_log,
            p.pbs_level,
            p.glwe_noise,
            rng,
            progress,
        )?;
        let ksk = KeySwitchKey::generate_with(
            &self.glwe_sk.as_lwe_key(),
            &self.lwe_sk,
            p.ks_base_log,
            p.ks_level,
            p.lwe_noise,
            rng,
            progress,
        )?;
        // Encryptions of zero for the modulus-switch noise reduction, under the key the blind
        // rotation's input is under (the small key in both atomic patterns).
        let msnr = match p.ms_noise_reduction {
            Some(m) => {
                progress.stage("noise-reduction key", 1);
                let key = MsNoiseReductionKey::generate(&self.lwe_sk, m, p.lwe_noise, rng);
                progress.step(1)?;
                Some(key)
            }
            None => None,
        };
        Ok(ServerKey { params: p.clone(), key_id: self.key_id, bsk, ksk, msnr })
    }
}

/// The memory a server key will take, before it is generated, counted from the parameter set
/// as generation allocates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerKeyMemory {
    /// The Fourier bootstrapping key: `n` GGSWs of `(k+1)·level·(k+1)` polynomials of `N/2`
    /// complex values.
    pub bootstrapping: u64,
    /// The key-switching key: `k·N · level` LWE ciphertexts of `n + 1` words.
    pub key_switching: u64,
    /// The modulus-switch noise-reduction key (encryptions of zero), if the set has one.
    pub noise_reduction: u64,
    /// Everything.
    pub total: u64,
}

impl ServerKeyMemory {
    /// The server key of `params` on the torus `T`.
    pub fn estimate<T: Torus>(params: &TfheParams) -> ServerKeyMemory {
        let p = params;
        let bootstrapping = FourierBsk::size_bytes_of(
            p.lwe_dimension,
            p.glwe_dimension,
            p.polynomial_size,
            p.pbs_level,
        );
        let key_switching =
            KeySwitchKey::<T>::size_bytes_of(p.big_lwe_dimension(), p.lwe_dimension, p.ks_level);
        let word = std::mem::size_of::<T>();
        let noise_reduction = p
            .ms_noise_reduction
            .map_or(0, |m| (m.modulus_switch_zeros_count * (p.lwe_dimension + 1) * word) as u64);
        let total = bootstrapping + key_switching + noise_reduction;
        ServerKeyMemory { bootstrapping, key_switching, noise_reduction, total }
    }
}

pub(crate) fn check_ids<T: Torus>(params_id: u64, key_id: u64, ct: &Ciphertext<T>) -> Result<()> {
    if ct.params_id != params_id {
        return Err(TfheError::ParamsMismatch {
            expected: format!("{params_id:#x}"),
            found: format!("{:#x}", ct.params_id),
        });
    }
    if ct.key_id != key_id {
        return Err(TfheError::KeyMismatch { expected: key_id, found: ct.key_id });
    }
    Ok(())
}

/// Evaluation keys: Fourier bootstrapping key and key-switching key.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct ServerKey<T: Torus> {
    pub(crate) params: TfheParams,
    pub(crate) key_id: u64,
    pub(crate) bsk: FourierBsk,
    pub(crate) ksk: KeySwitchKey<T>,
    /// Present when the set asks for the modulus-switch noise reduction.
    #[serde(default)]
    pub(crate) msnr: Option<MsNoiseReductionKey<T>>,
}

impl<T: Torus> ServerKey<T> {
    pub fn params(&self) -> &TfheParams {
        &self.params
    }

    pub fn bsk(&self) -> &FourierBsk {
        &self.bsk
    }

    pub fn ksk(&self) -> &KeySwitchKey<T> {
        &self.ksk
    }

    /// The modulus-switch noise-reduction key, if the set uses one.
    pub fn ms_noise_reduction_key(&self) -> Option<&MsNoiseReductionKey<T>> {
        self.msnr.as_ref()
    }

    /// Prepare a blind-rotation input (dimension `n`): the modulus-switch noise reduction when
    /// the set has one, else nothing.
    pub(crate) fn reduce_ms_noise(&self, lwe: &mut [T]) {
        if let Some(k) = &self.msnr {
            k.improve(lwe, self.params.polynomial_size);
        }
    }

    /// Build a LUT for this key's parameters.
    pub fn lut(&self, f: impl Fn(u64) -> u64) -> Lut<T> {
        Lut::from_fn(&self.params, f)
    }

    /// Dimension of the LWE ciphertexts users hold.
    pub fn ciphertext_dimension(&self) -> usize {
        match self.params.atomic_pattern {
            AtomicPattern::KsPbs => self.params.big_lwe_dimension(),
            AtomicPattern::PbsKs => self.params.lwe_dimension,
        }
    }

    pub(crate) fn check(&self, ct: &Ciphertext<T>) -> Result<()> {
        check_ids(self.params.id(), self.key_id, ct)?;
        let want = self.ciphertext_dimension();
        if ct.lwe.data.len() != want + 1 {
            return Err(TfheError::Dimension {
                what: "ciphertext",
                expected: want,
                found: ct.lwe.dimension(),
            });
        }
        Ok(())
    }

    pub(crate) fn check_lut(&self, lut: &Lut<T>) -> Result<()> {
        if lut.tv.len() != self.params.polynomial_size {
            return Err(TfheError::Dimension {
                what: "lookup table",
                expected: self.params.polynomial_size,
                found: lut.tv.len(),
            });
        }
        Ok(())
    }

    /// Key switching alone (big key → small key), on the raw LWE.
    ///
    /// # Panics
    /// If `lwe` is not of dimension `kN` (user-facing [`apply_lut`](Self::apply_lut) checks).
    pub fn keyswitch(&self, lwe: &LweCiphertext<T>) -> LweCiphertext<T> {
        let _r = basalt_trace::region("KeySwitch");
        emit_keyswitch_trace(self.ksk.in_dim, self.ksk.level, self.ksk.out_dim, 1);
        let mut out = vec![T::ZERO; self.ksk.out_dim + 1];
        self.ksk.keyswitch(&lwe.data, &mut out);
        LweCiphertext::from_vec(out)
    }

    /// PBS alone (small key → big key), on the raw LWE.
    ///
    /// # Panics
    /// If `lwe` is not of dimension `n` or `lut` not of size `N`.
    pub fn bootstrap(&self, lwe: &LweCiphertext<T>, lut: &Lut<T>) -> LweCiphertext<T> {
        let fft = fft_for(self.params.polynomial_size);
        let mut ws = BlindRotateWorkspace::new(&fft, self.bsk.k, self.bsk.level);
        let mut out = vec![T::ZERO; self.params.big_lwe_dimension() + 1];
        if self.msnr.is_some() {
            let mut input = lwe.data.clone();
            self.reduce_ms_noise(&mut input);
            programmable_bootstrap(&input, &lut.tv, &self.bsk, &fft, &mut ws, &mut out);
        } else {
            programmable_bootstrap(&lwe.data, &lut.tv, &self.bsk, &fft, &mut ws, &mut out);
        }
        LweCiphertext::from_vec(out)
    }

    /// Evaluate `lut` on `ct`: KS then PBS (KsPbs) or PBS then KS (PbsKs).
    ///
    /// # Errors
    /// [`TfheError::EncodingMismatch`] for a boolean; identity and dimension errors.
    pub fn apply_lut(&self, ct: &Ciphertext<T>, lut: &Lut<T>) -> Result<Ciphertext<T>> {
        check_encoding(ct, Encoding::Integer)?;
        self.apply_lut_any(ct, lut)
    }

    /// [`ServerKey::apply_lut`] whatever the encoding (gates bootstrap booleans); the result
    /// keeps the input's encoding.
    pub(crate) fn apply_lut_any(&self, ct: &Ciphertext<T>, lut: &Lut<T>) -> Result<Ciphertext<T>> {
        self.check(ct)?;
        self.check_lut(lut)?;
        let lwe = match self.params.atomic_pattern {
            AtomicPattern::KsPbs => self.bootstrap(&self.keyswitch(&ct.lwe), lut),
            AtomicPattern::PbsKs => self.keyswitch(&self.bootstrap(&ct.lwe, lut)),
        };
        Ok(Ciphertext { params_id: ct.params_id, key_id: ct.key_id, encoding: ct.encoding, lwe })
    }
}

#[cfg(test)]
mod zeroize_tests {
    #[test]
    fn zeroize_words_clears_every_word_of_both_widths() {
        let mut a: Vec<u64> = (1..=17).map(|i| i * 0x0123_4567_89ab_cdef).collect();
        super::zeroize_words(&mut a);
        assert!(a.iter().all(|&x| x == 0));
        let mut b: Vec<u32> = (1..=9).map(|i| i * 0x89ab_cdef).collect();
        super::zeroize_words(&mut b);
        assert!(b.iter().all(|&x| x == 0));
        super::zeroize_words::<u64>(&mut []);
    }
}
