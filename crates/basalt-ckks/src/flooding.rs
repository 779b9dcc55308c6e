//! Noise-flooded decryption: decrypt, then add fresh Gaussian noise to the plaintext
//! polynomial before it is decoded, so that a decryption can be shown to someone else.
//!
//! # Why
//! Li and Micciancio ("On the security of homomorphic encryption on approximate numbers",
//! Eurocrypt 2021) showed that CKKS is not IND-CPA^D secure: a decryption `m + e` reveals the
//! ciphertext's error `e`, which is a known linear function of the secret key, so a handful of
//! decryptions handed to a third party let it recover `s`. Adding, at decryption, noise much
//! wider than `e` (noise flooding) hides `e`: if the added Gaussian has standard deviation
//! `σ_f = 2^f · B` for an error bound `B`, the statistical distance to a decryption that reveals
//! nothing about `e` is about `2^-f` per coefficient (the Rényi/statistical arguments of Li,
//! Micciancio, Schultz and Sorrell, "Securing approximate homomorphic encryption using
//! differential privacy", Crypto 2022, which also give the number of bits for `q` queries:
//! roughly `f ≥ (s + log2 q)/2` for `s` bits of security, up to a factor √N).
//!
//! # What it costs
//! A coefficient noise of standard deviation `σ_f` becomes, in the real (and in the imaginary)
//! part of each slot, a noise of standard deviation ≈ `σ_f·√(N/2) / Δ` (the canonical embedding
//! sums N coefficients times roots of unity): the flooded decryption keeps about
//! `log2 Δ − log2 σ_f − ½·log2(N/2)` bits of precision ([`FloodingNoise::precision_left`],
//! checked by `tests/flooding.rs`). Example: N = 2^16, Δ = 2^45, an error bound B = 2^10
//! flooded with f = 20 bits (σ_f = 2^30): ≈ 7.5 bits remain, so flooding needs a larger scale
//! (or a ciphertext kept at a level with room above the message).
//!
//! # What it does not do
//! It does not bound `B` for the caller: the caller states `σ_f` (see
//! [`FloodingNoise::for_error_bound`]). Decryptions kept by the key owner need no flooding.

use basalt_math::sampler;

use crate::ciphertext::{Ciphertext, Plaintext};
use crate::encryptor::decrypt;
use crate::error::{CkksError, Result};
use crate::keys::SecretKey;
use crate::params::Parameters;
use crate::util::csprng;

/// The Gaussian noise added by [`decrypt_flooded`], in units of plaintext coefficients.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloodingNoise {
    /// log2 of the standard deviation `σ_f`.
    pub log2_std_dev: f64,
}

impl FloodingNoise {
    /// `σ_f = 2^flooding_bits · 2^log2_error_bound`: `flooding_bits` above the ciphertext's
    /// error bound.
    pub fn for_error_bound(log2_error_bound: f64, flooding_bits: f64) -> FloodingNoise {
        FloodingNoise { log2_std_dev: log2_error_bound + flooding_bits }
    }

    /// Slot precision (bits, real or imaginary part) left after flooding at scale
    /// `2^log2_scale` on N = 2^log_n: `log2 Δ − log2 σ_f − ½·log2(N/2)` (see the module doc).
    pub fn precision_left(&self, log2_scale: f64, log_n: u32) -> f64 {
        log2_scale - self.log2_std_dev - 0.5 * (log_n as f64 - 1.0)
    }
}

/// The largest flooding the sampler draws exactly (a rounded Gaussian in i64, tail-cut at 6σ).
pub const MAX_LOG2_STD_DEV: f64 = 58.0;

/// Decrypt `ct` and flood the result with fresh Gaussian noise of standard deviation
/// `2^noise.log2_std_dev` (drawn from the CSPRNG) on every coefficient.
///
/// # Errors
/// Those of [`decrypt`]; [`CkksError::BadFlooding`] if the noise is not in
/// `0..=`[`MAX_LOG2_STD_DEV`].
pub fn decrypt_flooded(
    params: &Parameters,
    ct: &Ciphertext,
    sk: &SecretKey,
    noise: FloodingNoise,
) -> Result<Plaintext> {
    let f = noise.log2_std_dev;
    if !(f.is_finite() && (0.0..=MAX_LOG2_STD_DEV).contains(&f)) {
        return Err(CkksError::BadFlooding(f));
    }
    let mut pt = decrypt(params, ct, sk)?;
    let ring = params.ring();
    let e = sampler::gaussian(params.n(), f.exp2(), &mut csprng());
    let mut flood = ring.from_i64(&e, pt.level() + 1, 0);
    ring.ntt_assign(&mut flood);
    ring.add_assign(&mut pt.poly, &flood);
    Ok(pt)
}
