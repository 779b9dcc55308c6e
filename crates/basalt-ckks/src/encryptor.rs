//! Encryption (secret key or public key) and decryption.
//!
//! Secret-key encryption at level `l`: `(−a·s + e + m, a)` with `a` uniform (from a fresh XOF
//! seed) and `e` a rounded Gaussian; public-key encryption: `(u·b + e_0 + m, u·a + e_1)` with `u`
//! a dense ternary polynomial. Decryption returns `Σ_i c_i·s^i` as a plaintext with the
//! ciphertext's scale.

use basalt_math::sampler::{self, Xof};
use basalt_trace::ObjectId;

use crate::ciphertext::{Ciphertext, Plaintext};
use crate::error::{CkksError, Result};
use crate::keys::{PublicKey, SecretKey};
use crate::params::Parameters;
use crate::util::{csprng, restrict};

fn check(params: &Parameters, id: u64) -> Result<()> {
    if id != params.id() {
        return Err(CkksError::WrongParams { expected: params.id(), found: id });
    }
    Ok(())
}

/// Encrypt `pt` under the secret key.
pub fn encrypt_sk(params: &Parameters, pt: &Plaintext, sk: &SecretKey) -> Result<Ciphertext> {
    check(params, pt.params_id)?;
    check(params, sk.params_id)?;
    if pt.is_symbolic() {
        return Err(CkksError::Symbolic);
    }
    let ring = params.ring();
    let l1 = pt.level() + 1;
    let mut xof = Xof::new(sampler::fresh_seed(), b"basalt-ckks/enc-a");
    let a = sampler::uniform_ntt(ring, &mut xof, l1, 0);
    let mut rng = csprng();
    let e = sampler::gaussian(params.n(), params.sigma(), &mut rng);
    let mut c0 = ring.from_i64(&e, l1, 0);
    ring.ntt_assign(&mut c0);
    ring.add_assign(&mut c0, &pt.poly);
    let mut as_ = a.clone();
    ring.mul_assign(&mut as_, &restrict(&sk.poly, l1, 0));
    ring.sub_assign(&mut c0, &as_);
    Ok(Ciphertext {
        polys: vec![c0, a],
        scale: pt.scale,
        slots: pt.slots,
        params_id: params.id(),
        key_id: sk.key_id,
        object: ObjectId::fresh(),
    })
}

/// Encrypt `pt` under the public key.
pub fn encrypt_pk(params: &Parameters, pt: &Plaintext, pk: &PublicKey) -> Result<Ciphertext> {
    check(params, pt.params_id)?;
    check(params, pk.params_id)?;
    if pt.is_symbolic() {
        return Err(CkksError::Symbolic);
    }
    let ring = params.ring();
    let l1 = pt.level() + 1;
    let n = params.n();
    let mut rng = csprng();
    let mut u = ring.from_i64(&sampler::ternary_dense(n, &mut rng), l1, 0);
    ring.ntt_assign(&mut u);
    let mut c0 = ring.from_i64(&sampler::gaussian(n, params.sigma(), &mut rng), l1, 0);
    let mut c1 = ring.from_i64(&sampler::gaussian(n, params.sigma(), &mut rng), l1, 0);
    ring.ntt_assign(&mut c0);
    ring.ntt_assign(&mut c1);
    let mut t = restrict(&pk.b, l1, 0);
    ring.mul_assign(&mut t, &u);
    ring.add_assign(&mut c0, &t);
    ring.add_assign(&mut c0, &pt.poly);
    let mut t = restrict(&pk.a, l1, 0);
    ring.mul_assign(&mut t, &u);
    ring.add_assign(&mut c1, &t);
    Ok(Ciphertext {
        polys: vec![c0, c1],
        scale: pt.scale,
        slots: pt.slots,
        params_id: params.id(),
        key_id: pk.key_id,
        object: ObjectId::fresh(),
    })
}

/// Decrypt: `Σ_i c_i·s^i` at the ciphertext's level, scale and slots.
///
/// # Errors
/// [`CkksError::KeyMismatch`] for a ciphertext under another key set;
/// [`CkksError::WrongParams`]; [`CkksError::Symbolic`].
pub fn decrypt(params: &Parameters, ct: &Ciphertext, sk: &SecretKey) -> Result<Plaintext> {
    check(params, ct.params_id)?;
    check(params, sk.params_id)?;
    sk.key_id.join(ct.key_id, "the ciphertext")?;
    if ct.is_symbolic() {
        return Err(CkksError::Symbolic);
    }
    let ring = params.ring();
    let l1 = ct.level() + 1;
    let s = restrict(&sk.poly, l1, 0);
    // Horner: ((c_d·s + c_{d−1})·s + …) + c_0.
    let mut acc = ct.polys[ct.degree()].clone();
    for i in (0..ct.degree()).rev() {
        ring.mul_assign(&mut acc, &s);
        ring.add_assign(&mut acc, &ct.polys[i]);
    }
    Ok(Plaintext { poly: acc, scale: ct.scale, slots: ct.slots, params_id: params.id() })
}
