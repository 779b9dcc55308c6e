//! Serialization with validation (serde + bincode).
//!
//! Every object is written as a versioned wire struct carrying its parameter-set id and its
//! [`KeyId`], followed by a SHA3-256 checksum over everything before it, so that a bit flipped
//! anywhere (header, scale, residues) is detected before anything is decoded: a flip in the
//! data that leaves a residue reduced would otherwise decrypt to noise with no error. The
//! checksum guards against corruption, not against an attacker, who can recompute it. Loading is
//! SEAL's `unsafe_load` + `is_valid_for` in one step: after decoding (with a size limit equal to
//! the input length, so a corrupt length cannot trigger a huge allocation) it checks the
//! parameter-set id, the degree, the limb counts and shapes, the domain, that every residue is
//! below its modulus, and object-specific invariants (scale, slots, digits, Galois element).
//! Any failure is a [`CkksError::Corrupt`] or [`CkksError::WrongParams`]; nothing panics.

use basalt_math::{Domain, RnsPoly};
use basalt_trace::ObjectId;
use bincode::Options;
use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::ciphertext::{Ciphertext, Plaintext};
use crate::error::{CkksError, Result};
use crate::keys::{
    GaloisKey, KeyId, KeyMaterial, KeyPart, KeySwitchKey, KeyTag, PublicKey, RelinKey, SecretKey,
    SeededKeySwitchKey,
};
use crate::params::{Parameters, SecretDistribution};

/// 3: every object carries its key id and a checksum. (2: Galois keys switch `s` to
/// `φ^{-1}(s)`, Lattigo's form; a version-1 Galois key would rotate wrongly.)
const VERSION: u32 = 3;

/// Key-switching keys: 4 carries the key id and a checksum; 3 held one part per gadget of the
/// parameter set (level-dependent key switching, `key_switch_bands`) and draws `a_j` from the
/// stream `(gadget, digit, limb)`; a version-2 key (one part, stream `(digit, limb)`) would
/// expand to other `a_j`, so it is refused.
const KEY_VERSION: u32 = 4;

/// Secret keys: 4 holds the ternary coefficients, two bits each (16 KiB at N = 2^16); 3 held
/// the residues modulo every prime of `Q_L ∪ P` (15 MiB at N = 2^16).
const SECRET_VERSION: u32 = 4;

/// The version an object of `magic` is written in now.
fn current_version(magic: &[u8]) -> u32 {
    match magic {
        b"BCKY" => KEY_VERSION,
        b"BCSK" => SECRET_VERSION,
        _ => VERSION,
    }
}

/// Bytes of the SHA3-256 checksum that ends every serialized object.
pub const CHECKSUM_BYTES: usize = 32;

#[derive(Serialize, Deserialize)]
struct PolyWire {
    n: u32,
    q_limbs: u32,
    p_limbs: u32,
    ntt: bool,
    data: Vec<u64>,
}

#[derive(Serialize, Deserialize)]
struct CtWire {
    magic: [u8; 4],
    version: u32,
    params_id: u64,
    key_id: KeyId,
    scale: f64,
    slots: u64,
    polys: Vec<PolyWire>,
}

/// A secret key: its coefficients, each in {−1, 0, 1}, as the two low bits of their two's
/// complement (`00` = 0, `01` = 1, `11` = −1; `10` is invalid), four to a byte from the low
/// bits up. The NTT-domain residues the key is used in are rebuilt on load.
#[derive(Serialize, Deserialize)]
struct SecretWire {
    magic: [u8; 4],
    version: u32,
    params_id: u64,
    key_id: KeyId,
    coefficients: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct KeyWire {
    magic: [u8; 4],
    version: u32,
    params_id: u64,
    key_id: KeyId,
    tag: KeyTag,
    galois: u64,
    seed: [u8; 32],
    seeded: bool,
    /// The parts present, by gadget index, ascending.
    parts: Vec<PartWire>,
}

#[derive(Serialize, Deserialize)]
struct PartWire {
    gadget: u32,
    b: Vec<PolyWire>,
    /// Empty for a seeded key.
    a: Vec<PolyWire>,
}

fn opts(limit: usize) -> impl Options {
    bincode::DefaultOptions::new().with_fixint_encoding().with_limit(limit as u64 + 64)
}

fn checksum(body: &[u8]) -> [u8; CHECKSUM_BYTES] {
    use sha3::{Digest, Sha3_256};
    let mut h = Sha3_256::new();
    h.update(b"basalt-ckks/checksum");
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

/// The wire struct, then its checksum.
fn encode<T: Serialize>(what: &'static str, v: &T) -> Result<Vec<u8>> {
    let mut out = opts(usize::MAX / 2)
        .serialize(v)
        .map_err(|e| CkksError::Corrupt { what, reason: e.to_string() })?;
    let sum = checksum(&out);
    out.extend_from_slice(&sum);
    Ok(out)
}

/// Verify the checksum, then decode (bounded by the input length).
fn decode<T: DeserializeOwned>(what: &'static str, bytes: &[u8]) -> Result<T> {
    if bytes.len() < CHECKSUM_BYTES {
        return Err(corrupt(
            what,
            format!("{} bytes is too short to hold a checksum", bytes.len()),
        ));
    }
    let (body, sum) = bytes.split_at(bytes.len() - CHECKSUM_BYTES);
    if checksum(body) != sum {
        // An object written before checksums existed fails here: name its version.
        if let (Some(magic), Some(v)) = (bytes.get(..4), bytes.get(4..8)) {
            let v = u32::from_le_bytes(v.try_into().expect("4 bytes"));
            let current = current_version(magic);
            if magic.starts_with(b"BC") && v < current && v > 0 {
                return Err(corrupt(
                    what,
                    format!(
                        "version {v} object (before key identities and checksums): regenerate it"
                    ),
                ));
            }
        }
        return Err(corrupt(what, "checksum mismatch: the data was altered or truncated"));
    }
    opts(body.len())
        .deserialize(body)
        .map_err(|e| CkksError::Corrupt { what, reason: e.to_string() })
}

fn corrupt(what: &'static str, reason: impl Into<String>) -> CkksError {
    CkksError::Corrupt { what, reason: reason.into() }
}

fn poly_out(what: &'static str, p: &RnsPoly) -> Result<PolyWire> {
    if p.is_symbolic() {
        return Err(corrupt(what, "cannot serialize a symbolic (trace-only) object"));
    }
    Ok(PolyWire {
        n: p.n() as u32,
        q_limbs: p.q_limbs() as u32,
        p_limbs: p.p_limbs() as u32,
        ntt: p.domain() == Domain::Ntt,
        data: p.data().to_vec(),
    })
}

/// Rebuild and validate one polynomial: expected shape and every residue reduced.
fn poly_in(
    what: &'static str,
    params: &Parameters,
    w: PolyWire,
    q_limbs: Option<usize>,
    p_limbs: usize,
) -> Result<RnsPoly> {
    if w.n as usize != params.n() {
        return Err(corrupt(what, format!("degree {} is not N = {}", w.n, params.n())));
    }
    if !w.ntt {
        return Err(corrupt(what, "polynomial is not in the NTT domain"));
    }
    let (ql, pl) = (w.q_limbs as usize, w.p_limbs as usize);
    if ql == 0 || ql > params.max_level() + 1 || q_limbs.is_some_and(|q| q != ql) || pl != p_limbs {
        return Err(corrupt(
            what,
            format!("limb counts q={ql} p={pl} do not fit the parameter set"),
        ));
    }
    let p = RnsPoly::from_parts(params.n(), ql, pl, Domain::Ntt, w.data)
        .ok_or_else(|| corrupt(what, "data length does not match the shape"))?;
    params.ring().check_poly(&p).map_err(|e| corrupt(what, e))?;
    Ok(p)
}

fn check_id(params: &Parameters, found: u64) -> Result<()> {
    if found != params.id() {
        return Err(CkksError::WrongParams { expected: params.id(), found });
    }
    Ok(())
}

fn check_meta(
    what: &'static str,
    params: &Parameters,
    magic: [u8; 4],
    want: &[u8; 4],
    version: u32,
) -> Result<()> {
    let expected = current_version(want);
    if &magic != want {
        return Err(corrupt(what, "bad magic"));
    }
    if want == b"BCKY" && version == 2 {
        return Err(corrupt(
            what,
            "version 2 key (one part for every level, before level-dependent key switching): regenerate it",
        ));
    }
    if version + 1 == expected {
        return Err(corrupt(
            what,
            format!("version {version} (no key identity, no checksum): regenerate it"),
        ));
    }
    if version != expected {
        return Err(corrupt(what, format!("unsupported version {version}")));
    }
    let _ = params;
    Ok(())
}

/// The scale must be at least 1 and below `Q_l` (the message would not survive decryption
/// otherwise): a range check on the header field, on top of the checksum.
fn check_scale_range(
    what: &'static str,
    params: &Parameters,
    scale: f64,
    level: usize,
) -> Result<()> {
    let log_q: f64 = params.q()[..=level].iter().map(|&q| (q as f64).log2()).sum();
    if !(scale >= 1.0 && scale.log2() < log_q) {
        return Err(corrupt(
            what,
            format!("scale 2^{:.2} is outside [1, Q_{level} = 2^{log_q:.1})", scale.log2()),
        ));
    }
    Ok(())
}

fn check_scale_slots(
    what: &'static str,
    params: &Parameters,
    scale: f64,
    slots: u64,
) -> Result<()> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(corrupt(what, format!("scale {scale} is not positive and finite")));
    }
    let s = slots as usize;
    if s == 0 || !s.is_power_of_two() || s > params.max_slots() {
        return Err(corrupt(what, format!("slot count {slots} is invalid")));
    }
    Ok(())
}

impl Ciphertext {
    /// Serialize (bincode). Symbolic ciphertexts cannot be serialized.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let polys = self.polys.iter().map(|p| poly_out("ciphertext", p)).collect::<Result<_>>()?;
        encode(
            "ciphertext",
            &CtWire {
                magic: *b"BCCT",
                version: VERSION,
                params_id: self.params_id,
                key_id: self.key_id,
                scale: self.scale,
                slots: self.slots as u64,
                polys,
            },
        )
    }

    /// Load and validate against `params`.
    pub fn from_bytes(params: &Parameters, bytes: &[u8]) -> Result<Ciphertext> {
        const W: &str = "ciphertext";
        let w: CtWire = decode(W, bytes)?;
        check_meta(W, params, w.magic, b"BCCT", w.version)?;
        check_id(params, w.params_id)?;
        check_scale_slots(W, params, w.scale, w.slots)?;
        if w.polys.len() < 2 || w.polys.len() > 3 {
            return Err(corrupt(
                W,
                format!("{} polynomials (degree must be 1 or 2)", w.polys.len()),
            ));
        }
        let q = w.polys[0].q_limbs as usize;
        let polys: Vec<RnsPoly> = w
            .polys
            .into_iter()
            .map(|p| poly_in(W, params, p, Some(q), 0))
            .collect::<Result<_>>()?;
        check_scale_range(W, params, w.scale, q - 1)?;
        Ok(Ciphertext {
            polys,
            scale: w.scale,
            slots: w.slots as usize,
            params_id: w.params_id,
            key_id: w.key_id,
            object: ObjectId::fresh(),
        })
    }

    /// [`Ciphertext::from_bytes`] for a holder of the keys of `key_id` (a server, a client):
    /// a ciphertext under another key set is refused.
    ///
    /// # Errors
    /// As [`Ciphertext::from_bytes`]; [`CkksError::KeyMismatch`] naming both ids.
    pub fn from_bytes_for(params: &Parameters, key_id: KeyId, bytes: &[u8]) -> Result<Ciphertext> {
        let ct = Self::from_bytes(params, bytes)?;
        key_id.join(ct.key_id, "the loaded ciphertext")?;
        Ok(ct)
    }
}

impl Plaintext {
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        encode(
            "plaintext",
            &CtWire {
                magic: *b"BCPT",
                version: VERSION,
                params_id: self.params_id,
                key_id: KeyId::UNBOUND,
                scale: self.scale,
                slots: self.slots as u64,
                polys: vec![poly_out("plaintext", &self.poly)?],
            },
        )
    }

    pub fn from_bytes(params: &Parameters, bytes: &[u8]) -> Result<Plaintext> {
        const W: &str = "plaintext";
        let mut w: CtWire = decode(W, bytes)?;
        check_meta(W, params, w.magic, b"BCPT", w.version)?;
        check_id(params, w.params_id)?;
        check_scale_slots(W, params, w.scale, w.slots)?;
        if w.polys.len() != 1 {
            return Err(corrupt(W, "a plaintext has exactly one polynomial"));
        }
        let poly = poly_in(W, params, w.polys.remove(0), None, 0)?;
        check_scale_range(W, params, w.scale, poly.q_limbs() - 1)?;
        Ok(Plaintext { poly, scale: w.scale, slots: w.slots as usize, params_id: w.params_id })
    }
}

fn key_out(material: &KeyMaterial, galois: u64) -> Result<Vec<u8>> {
    let (seed, tag, id, key_id) = match material {
        KeyMaterial::Full(k) => (k.seed, k.tag, k.params_id, k.key_id),
        KeyMaterial::Seeded(k) => (k.seed, k.tag, k.params_id, k.key_id),
    };
    let polys = |v: &[RnsPoly]| v.iter().map(|p| poly_out("key", p)).collect::<Result<Vec<_>>>();
    let parts = material
        .parts()
        .iter()
        .enumerate()
        .filter_map(|(g, p)| p.as_ref().map(|p| (g, p)))
        .map(|(g, p)| Ok(PartWire { gadget: g as u32, b: polys(&p.b)?, a: polys(&p.a)? }))
        .collect::<Result<_>>()?;
    encode(
        "key",
        &KeyWire {
            magic: *b"BCKY",
            version: KEY_VERSION,
            params_id: id,
            key_id,
            tag,
            galois,
            seed,
            seeded: material.is_seeded(),
            parts,
        },
    )
}

fn key_in(params: &Parameters, bytes: &[u8]) -> Result<(KeyMaterial, u64)> {
    const W: &str = "key";
    let w: KeyWire = decode(W, bytes)?;
    check_meta(W, params, w.magic, b"BCKY", w.version)?;
    check_id(params, w.params_id)?;
    if let KeyTag::Galois(g) = w.tag
        && (g % 2 == 0 || g >= 2 * params.n() as u64 || g != w.galois)
    {
        return Err(corrupt(W, format!("invalid Galois element {g}")));
    }
    if w.parts.is_empty() {
        return Err(corrupt(W, "a key has at least one part"));
    }
    let gadgets = params.gadgets();
    let mut parts: Vec<Option<KeyPart>> = vec![None; gadgets.len()];
    for p in w.parts {
        let g = p.gadget as usize;
        let Some(gadget) = gadgets.get(g) else {
            return Err(corrupt(
                W,
                format!("part {g}: the parameter set has {} gadgets", gadgets.len()),
            ));
        };
        if parts[g].is_some() {
            return Err(corrupt(W, format!("part {g} appears twice")));
        }
        let digits = gadget.digits();
        let a_len = if w.seeded { 0 } else { digits };
        if p.b.len() != digits || p.a.len() != a_len {
            return Err(corrupt(
                W,
                format!(
                    "part {g}: {} + {} polynomials, the gadget has {digits} digits ({})",
                    p.b.len(),
                    p.a.len(),
                    if w.seeded { "seeded" } else { "full" }
                ),
            ));
        }
        let (l1, k) = (Some(gadget.top_level + 1), gadget.p_limbs);
        let polys = |v: Vec<PolyWire>| {
            v.into_iter().map(|x| poly_in(W, params, x, l1, k)).collect::<Result<Vec<_>>>()
        };
        parts[g] = Some(KeyPart { b: polys(p.b)?, a: polys(p.a)? });
    }
    let (seed, tag, params_id, key_id) = (w.seed, w.tag, w.params_id, w.key_id);
    if !key_id.is_bound() {
        return Err(corrupt(W, "the key carries no key identity"));
    }
    let m = if w.seeded {
        KeyMaterial::Seeded(SeededKeySwitchKey { parts, seed, tag, params_id, key_id })
    } else {
        KeyMaterial::Full(KeySwitchKey { parts, seed, tag, params_id, key_id })
    };
    Ok((m, w.galois))
}

impl KeyMaterial {
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let g = match self.tag() {
            KeyTag::Galois(g) => g,
            _ => 0,
        };
        key_out(self, g)
    }
    pub fn from_bytes(params: &Parameters, bytes: &[u8]) -> Result<KeyMaterial> {
        key_in(params, bytes).map(|(m, _)| m)
    }
}

impl KeySwitchKey {
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        KeyMaterial::Full(self.clone()).to_bytes()
    }
    pub fn from_bytes(params: &Parameters, bytes: &[u8]) -> Result<KeySwitchKey> {
        match KeyMaterial::from_bytes(params, bytes)? {
            KeyMaterial::Full(k) => Ok(k),
            KeyMaterial::Seeded(_) => {
                Err(corrupt("key", "expected a full key, found a seeded one"))
            }
        }
    }
}

impl SeededKeySwitchKey {
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        KeyMaterial::Seeded(self.clone()).to_bytes()
    }
    pub fn from_bytes(params: &Parameters, bytes: &[u8]) -> Result<SeededKeySwitchKey> {
        match KeyMaterial::from_bytes(params, bytes)? {
            KeyMaterial::Seeded(k) => Ok(k),
            KeyMaterial::Full(_) => Err(corrupt("key", "expected a seeded key, found a full one")),
        }
    }
}

impl RelinKey {
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.key.to_bytes()
    }
    pub fn from_bytes(params: &Parameters, bytes: &[u8]) -> Result<RelinKey> {
        let key = KeyMaterial::from_bytes(params, bytes)?;
        if key.tag() != KeyTag::Relin {
            return Err(corrupt("key", "not a relinearization key"));
        }
        Ok(RelinKey { key })
    }
}

impl GaloisKey {
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        key_out(&self.key, self.galois)
    }
    pub fn from_bytes(params: &Parameters, bytes: &[u8]) -> Result<GaloisKey> {
        let (key, galois) = key_in(params, bytes)?;
        if key.tag() != KeyTag::Galois(galois) {
            return Err(corrupt("key", "not a Galois key"));
        }
        Ok(GaloisKey { galois, key })
    }
}

impl PublicKey {
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        encode(
            "public key",
            &CtWire {
                magic: *b"BCPK",
                version: VERSION,
                params_id: self.params_id,
                key_id: self.key_id,
                scale: 1.0,
                slots: 1,
                polys: vec![poly_out("public key", &self.b)?, poly_out("public key", &self.a)?],
            },
        )
    }
    pub fn from_bytes(params: &Parameters, bytes: &[u8]) -> Result<PublicKey> {
        const W: &str = "public key";
        let w: CtWire = decode(W, bytes)?;
        check_meta(W, params, w.magic, b"BCPK", w.version)?;
        check_id(params, w.params_id)?;
        if w.polys.len() != 2 {
            return Err(corrupt(W, "a public key has two polynomials"));
        }
        let l1 = Some(params.max_level() + 1);
        let mut it = w.polys.into_iter();
        let b = poly_in(W, params, it.next().expect("two"), l1, 0)?;
        let a = poly_in(W, params, it.next().expect("two"), l1, 0)?;
        if !w.key_id.is_bound() {
            return Err(corrupt(W, "the key carries no key identity"));
        }
        Ok(PublicKey { b, a, params_id: w.params_id, key_id: w.key_id })
    }
}

/// Two bits a coefficient (see [`SecretWire`]); `Err` names the first coefficient outside
/// {−1, 0, 1} and its value.
fn pack_ternary(coeffs: &[i64]) -> std::result::Result<Vec<u8>, (usize, i64)> {
    let mut out = vec![0u8; coeffs.len().div_ceil(4)];
    for (i, &c) in coeffs.iter().enumerate() {
        if c.unsigned_abs() > 1 {
            zeroize::Zeroize::zeroize(&mut out);
            return Err((i, c));
        }
        out[i / 4] |= ((c as u8) & 3) << (2 * (i % 4));
    }
    Ok(out)
}

/// The `n` coefficients [`pack_ternary`] wrote; `Err` names the first invalid code (`10`, or
/// a non-zero code past the `n`-th).
fn unpack_ternary(packed: &[u8], n: usize) -> std::result::Result<Vec<i64>, usize> {
    let mut out = Vec::with_capacity(n);
    for i in 0..4 * packed.len() {
        let code = (packed[i / 4] >> (2 * (i % 4))) & 3;
        if code == 0b10 || (i >= n && code != 0) {
            zeroize::Zeroize::zeroize(&mut out);
            return Err(i);
        }
        // Sign-extend the two bits: 00 → 0, 01 → 1, 11 → −1.
        if i < n {
            out.push(i64::from(((code << 6) as i8) >> 6));
        }
    }
    Ok(out)
}

impl SecretKey {
    /// The secret key as bytes: the one way a secret leaves memory, named so that no caller
    /// serializes it by accident (there is no `to_bytes`). Whoever holds these bytes can decrypt
    /// everything encrypted under the key set. Its ternary coefficients are stored, two bits
    /// each (16 KiB and a header at N = 2^16, not the 15 MiB of its residues).
    ///
    /// # Errors
    /// [`CkksError::Corrupt`] for a symbolic key or a coefficient outside {−1, 0, 1} (a key
    /// made by [`SecretKey::from_coeffs`] with larger ones).
    pub fn export_bytes(&self) -> Result<Vec<u8>> {
        const W: &str = "secret key";
        if self.poly.is_symbolic() {
            return Err(corrupt(W, "cannot serialize a symbolic (trace-only) object"));
        }
        let coeffs = self.own_coefficients();
        let packed = pack_ternary(&coeffs);
        crate::keys::secret::zeroize_coeffs(coeffs);
        let packed = packed.map_err(|(i, c)| {
            corrupt(W, format!("coefficient {i} is {c}: only a ternary secret can be exported"))
        })?;
        let mut wire = SecretWire {
            magic: *b"BCSK",
            version: SECRET_VERSION,
            params_id: self.params_id,
            key_id: self.key_id,
            coefficients: packed,
        };
        let out = encode(W, &wire);
        zeroize::Zeroize::zeroize(&mut wire.coefficients);
        out
    }

    /// Load [`SecretKey::export_bytes`]'s output, validated against `params`: every
    /// coefficient in {−1, 0, 1}, and the Hamming weight the parameter set fixes, if any.
    ///
    /// # Errors
    /// [`CkksError::Corrupt`] naming the problem (checksum, version, length, a coefficient,
    /// the weight), [`CkksError::WrongParams`].
    pub fn from_bytes(params: &Parameters, bytes: &[u8]) -> Result<SecretKey> {
        const W: &str = "secret key";
        if bytes.starts_with(b"BCSK") && bytes.get(4..8) == Some(&VERSION.to_le_bytes()[..]) {
            return Err(corrupt(
                W,
                format!(
                    "version {VERSION} secret key (residues over every prime, not the \
                     coefficients): export it again"
                ),
            ));
        }
        let mut w: SecretWire = decode(W, bytes)?;
        let sk = secret_in(params, &w);
        zeroize::Zeroize::zeroize(&mut w.coefficients);
        sk
    }
}

fn secret_in(params: &Parameters, w: &SecretWire) -> Result<SecretKey> {
    const W: &str = "secret key";
    check_meta(W, params, w.magic, b"BCSK", w.version)?;
    check_id(params, w.params_id)?;
    if !w.key_id.is_bound() {
        return Err(corrupt(W, "the key carries no key identity"));
    }
    let n = params.n();
    if w.coefficients.len() != n.div_ceil(4) {
        return Err(corrupt(
            W,
            format!(
                "{} bytes of coefficients: N = {n} takes {}",
                w.coefficients.len(),
                n.div_ceil(4)
            ),
        ));
    }
    let coeffs = unpack_ternary(&w.coefficients, n).map_err(|i| {
        corrupt(
            W,
            if i < n {
                format!("coefficient {i} has the invalid code 0b10 (not −1, 0 or 1)")
            } else {
                format!("non-zero padding after the {n} coefficients")
            },
        )
    })?;
    if let SecretDistribution::Hamming { h } = params.secret() {
        let weight = coeffs.iter().filter(|&&c| c != 0).count();
        if weight != h {
            crate::keys::secret::zeroize_coeffs(coeffs);
            return Err(corrupt(
                W,
                format!("Hamming weight {weight}, where the parameter set fixes {h}"),
            ));
        }
    }
    let mut sk = SecretKey::from_coeffs(params, &coeffs);
    crate::keys::secret::zeroize_coeffs(coeffs);
    sk.key_id = w.key_id;
    Ok(sk)
}

#[derive(Serialize, Deserialize)]
struct EvalKeysWire {
    magic: [u8; 4],
    version: u32,
    params_id: u64,
    key_id: KeyId,
    relin: Option<Vec<u8>>,
    /// `(Galois element, serialized key)`, so that a loader can skip the keys it does not need
    /// without decoding them.
    galois: Vec<(u64, Vec<u8>)>,
}

impl crate::keys::EvaluationKeys {
    /// Serialize the relinearization key and every Galois key (each checksummed and validated
    /// on load on its own).
    ///
    /// # Errors
    /// [`CkksError::KeyMismatch`] if the keys belong to different key sets;
    /// [`CkksError::Corrupt`] for symbolic keys.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let key_id = self.key_id()?.unwrap_or(KeyId::UNBOUND);
        let params_id = self
            .relin
            .iter()
            .map(|r| r.key.params_id())
            .chain(self.galois.values().map(|g| g.key.params_id()))
            .next()
            .unwrap_or(0);
        let relin = self.relin.as_ref().map(RelinKey::to_bytes).transpose()?;
        let galois =
            self.galois.iter().map(|(&g, k)| Ok((g, k.to_bytes()?))).collect::<Result<_>>()?;
        encode(
            "evaluation keys",
            &EvalKeysWire { magic: *b"BCEK", version: VERSION, params_id, key_id, relin, galois },
        )
    }

    /// Load and validate every key against `params`.
    ///
    /// # Errors
    /// [`CkksError::Corrupt`] (checksum, shape, duplicate key, a key whose identity differs
    /// from the set's), [`CkksError::WrongParams`].
    pub fn from_bytes(params: &Parameters, bytes: &[u8]) -> Result<crate::keys::EvaluationKeys> {
        Self::from_bytes_selected(params, bytes, None, None)
    }

    /// Load only the relinearization key, the rotation keys for `steps` (all of them if
    /// `None`) and the conjugation key as `conjugate` says: `Some(true)` requires it,
    /// `Some(false)` leaves it out, `None` keeps it when the bytes hold one (a bootstrapping
    /// server needs it; a program that never conjugates loses nothing when it is absent). What
    /// a server running one program needs (`LinearTransform::rotations`, a bootstrapper's
    /// `rotations()`); the keys not selected are skipped undecoded.
    ///
    /// # Errors
    /// As [`EvaluationKeys::from_bytes`](crate::keys::EvaluationKeys::from_bytes);
    /// [`CkksError::MissingRotationKey`] / [`CkksError::MissingConjugationKey`] for a key
    /// asked for and absent.
    pub fn from_bytes_selected(
        params: &Parameters,
        bytes: &[u8],
        steps: Option<&[i64]>,
        conjugate: Option<bool>,
    ) -> Result<crate::keys::EvaluationKeys> {
        const W: &str = "evaluation keys";
        let w: EvalKeysWire = decode(W, bytes)?;
        check_meta(W, params, w.magic, b"BCEK", w.version)?;
        if w.relin.is_some() || !w.galois.is_empty() {
            check_id(params, w.params_id)?;
        }
        let ring = params.ring();
        let conj = ring.galois_element_conjugate();
        // Required keys (the rotations of `steps`, the conjugation key if `Some(true)`); the
        // conjugation key is then decided by `conjugate` alone, whatever `steps` says.
        let wanted: Option<std::collections::BTreeSet<u64>> = steps.map(|s| {
            s.iter()
                .map(|&k| ring.galois_element_for_rotation(k))
                .filter(|&g| g != 1 && g != conj)
                .collect()
        });
        let keep_conj = conjugate != Some(false);
        let mut out = crate::keys::EvaluationKeys::default();
        let mine = |k: &KeyMaterial| -> Result<()> {
            if k.key_id() != w.key_id {
                return Err(corrupt(
                    W,
                    format!("a key belongs to key {}, the set to key {}", k.key_id(), w.key_id),
                ));
            }
            Ok(())
        };
        if let Some(r) = w.relin {
            let r = RelinKey::from_bytes(params, &r)?;
            mine(&r.key)?;
            out.relin = Some(r);
        }
        for (g, blob) in w.galois {
            let skip = match &wanted {
                _ if g == conj => !keep_conj,
                Some(set) => !set.contains(&g),
                None => false,
            };
            if skip {
                continue;
            }
            let gk = GaloisKey::from_bytes(params, &blob)?;
            if gk.galois != g {
                return Err(corrupt(
                    W,
                    format!("key listed as {g} is for Galois element {}", gk.galois),
                ));
            }
            mine(&gk.key)?;
            if out.galois.contains_key(&gk.galois) {
                return Err(corrupt(W, format!("Galois element {} appears twice", gk.galois)));
            }
            out.galois.insert(gk.galois, gk);
        }
        if conjugate == Some(true) && !out.galois.contains_key(&conj) {
            return Err(CkksError::MissingConjugationKey { galois: conj });
        }
        if let Some(set) = wanted {
            for g in set {
                if !out.galois.contains_key(&g) {
                    let k = steps
                        .unwrap_or(&[])
                        .iter()
                        .copied()
                        .find(|&k| ring.galois_element_for_rotation(k) == g)
                        .unwrap_or(0);
                    return Err(CkksError::MissingRotationKey { rotation: k, galois: g });
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encryptor::encrypt_sk;
    use crate::{Encoder, KeyGenerator, ParametersLiteral};

    fn setup() -> (Parameters, Ciphertext) {
        let params = Parameters::new(ParametersLiteral::toy(10, 50, 40, 2, 55, 1, 3)).unwrap();
        let sk = KeyGenerator::new(&params).gen_secret_key();
        let pt = Encoder::new(&params)
            .encode(&[crate::Complex64::new(0.5, 0.0)], 1, 2, params.default_scale())
            .unwrap();
        let ct = encrypt_sk(&params, &pt, &sk).unwrap();
        (params, ct)
    }

    /// Decode, alter, re-encode with a valid checksum: the checks behind the checksum.
    fn tampered(ct: &Ciphertext, f: impl FnOnce(&mut CtWire)) -> Vec<u8> {
        let bytes = ct.to_bytes().unwrap();
        let mut w: CtWire = decode("ciphertext", &bytes).unwrap();
        f(&mut w);
        encode("ciphertext", &w).unwrap()
    }

    #[test]
    fn unreduced_residue_and_out_of_range_scale_are_refused_behind_a_valid_checksum() {
        let (p, ct) = setup();
        let b = tampered(&ct, |w| *w.polys[0].data.last_mut().unwrap() = u64::MAX);
        let e = Ciphertext::from_bytes(&p, &b).unwrap_err().to_string();
        assert!(e.contains("not reduced"), "{e}");
        for scale in [2f64.powi(200), 0.25, f64::NAN] {
            let b = tampered(&ct, |w| w.scale = scale);
            let e = Ciphertext::from_bytes(&p, &b).unwrap_err().to_string();
            assert!(e.contains("scale"), "{e}");
        }
        // The untampered object still loads, and a flipped checksum byte is caught.
        let mut b = ct.to_bytes().unwrap();
        assert_eq!(Ciphertext::from_bytes(&p, &b).unwrap(), ct);
        *b.last_mut().unwrap() ^= 1;
        assert!(Ciphertext::from_bytes(&p, &b).unwrap_err().to_string().contains("checksum"));
    }
}
