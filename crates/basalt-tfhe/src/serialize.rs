//! Serialisation (serde + bincode) with validation: a header (magic, version, kind, torus width,
//! parameter-set id, key id) followed by the object and a SHA3-256 checksum over both, so that a
//! bit flipped anywhere is detected before anything is decoded (a flipped mask coefficient of a
//! ciphertext would otherwise decrypt to a wrong message with no error; the checksum guards
//! against corruption, not against an attacker, who can recompute it). Deserialising checks the header against
//! what the caller expects, bounds every allocation by the blob size, and re-checks every
//! dimension, so a corrupted blob, an object of another parameter set or key, or an oversized
//! LUT comes back as a [`TfheError`], never a panic.

use bincode::Options;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{Result, TfheError};
use crate::keys::{Ciphertext, ClientKey, ServerKey, check_bits};
use crate::lut::Lut;
use crate::params::TfheParams;
use crate::torus::Torus;

const MAGIC: u32 = 0x5446_4842; // "BHFT"
/// Format 3: a checksum ends every blob, ciphertexts carry their encoding (integer or boolean)
/// and the key-switching key is stored as 32-bit words.
const VERSION: u16 = 3;

/// Bytes of the SHA3-256 checksum that ends every blob.
pub const CHECKSUM_BYTES: usize = 32;

fn checksum(body: &[u8]) -> [u8; CHECKSUM_BYTES] {
    use sha3::{Digest, Sha3_256};
    let mut h = Sha3_256::new();
    h.update(b"basalt-tfhe/checksum");
    h.update(body);
    h.finalize().into()
}

/// Replace the checksum that ends `blob` with the one its body has: a blob whose body was
/// altered then passes the checksum and reaches the decoder's own checks. The checksum detects
/// corruption, not tampering (anyone can recompute it), so the decoder must be safe on any body;
/// the fuzz targets use this to test exactly that. A blob shorter than a checksum comes back as is.
pub fn reseal(blob: &[u8]) -> Vec<u8> {
    if blob.len() < CHECKSUM_BYTES {
        return blob.to_vec();
    }
    let body = &blob[..blob.len() - CHECKSUM_BYTES];
    let mut out = body.to_vec();
    out.extend_from_slice(&checksum(body));
    out
}

/// What a blob holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BlobKind {
    Ciphertext,
    ClientKey,
    ServerKey,
    Lut,
}

#[derive(Debug, Serialize, Deserialize)]
struct Header {
    magic: u32,
    version: u16,
    kind: BlobKind,
    torus_bits: u32,
    params_id: u64,
    key_id: u64,
}

fn opts(limit: u64) -> impl Options + Copy {
    bincode::DefaultOptions::new().with_fixint_encoding().with_limit(limit)
}

fn encode<P: Serialize>(kind: BlobKind, bits: u32, params_id: u64, key_id: u64, p: &P) -> Vec<u8> {
    let h = Header { magic: MAGIC, version: VERSION, kind, torus_bits: bits, params_id, key_id };
    let o = opts(u64::MAX);
    let mut out = o.serialize(&h).expect("header serialises");
    o.serialize_into(&mut out, p).expect("in-memory serialisation cannot fail");
    let sum = checksum(&out);
    out.extend_from_slice(&sum);
    out
}

/// Decode and check the header; `key_id = None` accepts any key.
fn decode<P: DeserializeOwned>(
    bytes: &[u8],
    kind: BlobKind,
    bits: u32,
    params: &TfheParams,
    key_id: Option<u64>,
) -> Result<(Header, P)> {
    if bytes.len() < CHECKSUM_BYTES {
        return Err(TfheError::Corrupt(format!("{} bytes cannot hold a checksum", bytes.len())));
    }
    let (bytes, sum) = bytes.split_at(bytes.len() - CHECKSUM_BYTES);
    if checksum(bytes) != sum {
        return Err(TfheError::Corrupt(
            "checksum mismatch: the data was altered or truncated (or written before checksums)"
                .into(),
        ));
    }
    let o = opts(bytes.len() as u64 + 64);
    let mut r = bytes;
    let h: Header = o.deserialize_from(&mut r).map_err(|e| TfheError::Corrupt(e.to_string()))?;
    if h.magic != MAGIC || h.version != VERSION {
        return Err(TfheError::Corrupt(format!("bad magic/version {:#x}/{}", h.magic, h.version)));
    }
    if h.kind != kind {
        return Err(TfheError::Corrupt(format!("blob holds a {:?}, expected a {kind:?}", h.kind)));
    }
    if h.torus_bits != bits {
        return Err(TfheError::TorusMismatch { expected: bits, found: h.torus_bits });
    }
    if h.params_id != params.id() {
        return Err(TfheError::ParamsMismatch {
            expected: format!("{} ({:#x})", params.name, params.id()),
            found: format!("{:#x}", h.params_id),
        });
    }
    if let Some(k) = key_id
        && h.key_id != k
    {
        return Err(TfheError::KeyMismatch { expected: k, found: h.key_id });
    }
    let p: P = o.deserialize_from(&mut r).map_err(|e| TfheError::Corrupt(e.to_string()))?;
    if !r.is_empty() {
        return Err(TfheError::Corrupt(format!("{} trailing bytes", r.len())));
    }
    Ok((h, p))
}

fn dim(what: &'static str, expected: usize, found: usize) -> Result<()> {
    if expected != found {
        return Err(TfheError::Dimension { what, expected, found });
    }
    Ok(())
}

pub fn serialize_ciphertext<T: Torus>(ct: &Ciphertext<T>) -> Vec<u8> {
    encode(BlobKind::Ciphertext, T::BITS, ct.params_id, ct.key_id, ct)
}

/// Load a ciphertext that must belong to `sk`'s parameter set and key.
pub fn deserialize_ciphertext<T: Torus>(bytes: &[u8], sk: &ServerKey<T>) -> Result<Ciphertext<T>> {
    let (h, ct): (Header, Ciphertext<T>) =
        decode(bytes, BlobKind::Ciphertext, T::BITS, &sk.params, Some(sk.key_id))?;
    if h.params_id != ct.params_id || h.key_id != ct.key_id {
        return Err(TfheError::Corrupt("header and ciphertext identities differ".into()));
    }
    sk.check(&ct)?;
    Ok(ct)
}

pub fn serialize_server_key<T: Torus>(sk: &ServerKey<T>) -> Vec<u8> {
    encode(BlobKind::ServerKey, T::BITS, sk.params.id(), sk.key_id, sk)
}

/// Load a server key for `params` (any key id), checking every dimension of both keys.
pub fn deserialize_server_key<T: Torus>(bytes: &[u8], params: &TfheParams) -> Result<ServerKey<T>> {
    check_bits::<T>(params)?;
    let (h, sk): (Header, ServerKey<T>) =
        decode(bytes, BlobKind::ServerKey, T::BITS, params, None)?;
    if sk.params != *params || h.key_id != sk.key_id {
        return Err(TfheError::Corrupt("embedded parameters or key id differ from header".into()));
    }
    let p = params;
    let b = &sk.bsk;
    dim("bsk LWE dimension", p.lwe_dimension, b.lwe_dim)?;
    dim("bsk GLWE dimension", p.glwe_dimension, b.k)?;
    dim("bsk polynomial size", p.polynomial_size, b.n)?;
    dim("bsk level", p.pbs_level, b.level)?;
    dim("bsk base log", p.pbs_base_log as usize, b.base_log as usize)?;
    dim("bsk FFT layout", crate::fft::fft_for(p.polynomial_size).base_n(), b.fft_base_n)?;
    dim("bsk data", b.ggsw_len() * b.lwe_dim, b.data.len())?;
    if b.data.iter().any(|z| !z.re.is_finite() || !z.im.is_finite()) {
        return Err(TfheError::Corrupt("non-finite Fourier coefficient in bsk".into()));
    }
    let k = &sk.ksk;
    dim("ksk input dimension", p.big_lwe_dimension(), k.in_dim)?;
    dim("ksk output dimension", p.lwe_dimension, k.out_dim)?;
    dim("ksk level", p.ks_level, k.level)?;
    dim("ksk base log", p.ks_base_log as usize, k.base_log as usize)?;
    dim("ksk data", k.in_dim * k.level * (k.out_dim + 1), k.data.len())?;
    match (&sk.msnr, &p.ms_noise_reduction) {
        (None, None) => {}
        (Some(m), Some(want)) => {
            if m.params != *want {
                return Err(TfheError::Corrupt(
                    "modulus-switch reduction parameters differ".into(),
                ));
            }
            dim("modulus-switch zeros dimension", p.lwe_dimension, m.lwe_dim)?;
            let words = want.modulus_switch_zeros_count * (p.lwe_dimension + 1);
            dim("modulus-switch zeros data", words, m.zeros.len())?;
        }
        _ => return Err(TfheError::Corrupt("modulus-switch reduction key presence".into())),
    }
    Ok(sk)
}

pub fn serialize_client_key<T: Torus>(ck: &ClientKey<T>) -> Vec<u8> {
    encode(BlobKind::ClientKey, T::BITS, ck.params.id(), ck.key_id, ck)
}

pub fn deserialize_client_key<T: Torus>(bytes: &[u8], params: &TfheParams) -> Result<ClientKey<T>> {
    check_bits::<T>(params)?;
    let (h, ck): (Header, ClientKey<T>) =
        decode(bytes, BlobKind::ClientKey, T::BITS, params, None)?;
    if ck.params != *params || h.key_id != ck.key_id {
        return Err(TfheError::Corrupt("embedded parameters or key id differ from header".into()));
    }
    dim("LWE key", params.lwe_dimension, ck.lwe_sk.s.len())?;
    dim("GLWE key", params.big_lwe_dimension(), ck.glwe_sk.s.len())?;
    dim("GLWE key k", params.glwe_dimension, ck.glwe_sk.k)?;
    dim("GLWE key N", params.polynomial_size, ck.glwe_sk.n)?;
    if ck.lwe_sk.s.iter().chain(&ck.glwe_sk.s).any(|&b| b != T::ZERO && b != T::ONE) {
        return Err(TfheError::Corrupt("secret key is not binary".into()));
    }
    Ok(ck)
}

pub fn serialize_lut<T: Torus>(lut: &Lut<T>, params: &TfheParams) -> Vec<u8> {
    encode(BlobKind::Lut, T::BITS, params.id(), 0, lut)
}

/// Load a LUT for `params`: the test vector must have `N` words and the table at most `p`
/// entries, each `< p`.
pub fn deserialize_lut<T: Torus>(bytes: &[u8], params: &TfheParams) -> Result<Lut<T>> {
    let (_, lut): (Header, Lut<T>) = decode(bytes, BlobKind::Lut, T::BITS, params, None)?;
    let p = params.plaintext_modulus();
    if lut.table.len() as u64 > p {
        return Err(TfheError::LutTooLarge { max: p as usize, found: lut.table.len() });
    }
    if let Some(&v) = lut.table.iter().find(|&&v| v >= p) {
        return Err(TfheError::MessageOutOfRange { message: v, modulus: p });
    }
    dim("test vector", params.polynomial_size, lut.tv.len())?;
    Ok(lut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::toy;

    #[test]
    fn malformed_ciphertext_shapes_are_errors() {
        let params = toy::u64_small();
        let mut rng = crate::random::Csprng::from_seed(71);
        let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng);
        let mut ct = ck.encrypt_with(1, &mut rng).unwrap();
        for len in [0usize, 1, params.big_lwe_dimension()] {
            ct.lwe.data.truncate(len);
            let blob = serialize_ciphertext(&ct);
            assert!(matches!(deserialize_ciphertext(&blob, &sk), Err(TfheError::Dimension { .. })));
            assert!(matches!(ck.decrypt(&ct), Err(TfheError::Dimension { .. })));
        }
    }

    #[test]
    fn oversized_lut_blob_is_rejected() {
        let params = toy::u64_small();
        let p = params.plaintext_modulus();
        let mut lut = Lut::<u64>::from_fn(&params, |x| x);
        lut.table = (0..2 * p).map(|x| x % p).collect();
        let blob = serialize_lut(&lut, &params);
        assert_eq!(
            deserialize_lut::<u64>(&blob, &params),
            Err(TfheError::LutTooLarge { max: p as usize, found: 2 * p as usize })
        );
        lut.table = vec![p + 3];
        let blob = serialize_lut(&lut, &params);
        assert!(matches!(
            deserialize_lut::<u64>(&blob, &params),
            Err(TfheError::MessageOutOfRange { .. })
        ));
        lut.table = vec![0];
        lut.tv.pop();
        let blob = serialize_lut(&lut, &params);
        assert!(matches!(deserialize_lut::<u64>(&blob, &params), Err(TfheError::Dimension { .. })));
    }
}
