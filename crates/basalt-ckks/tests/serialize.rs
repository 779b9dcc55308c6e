//! Serialization round trips and validation of corrupt input (never a panic).

mod common;
use basalt_ckks::*;
use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// Flip random bytes; loading must return an error or a value, never panic. Returns how many
/// of the corrupted inputs were rejected.
fn fuzz<T>(bytes: &[u8], trials: usize, load: impl Fn(&[u8]) -> Result<T>) -> usize {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let mut rejected = 0;
    for t in 0..trials {
        let mut b = bytes.to_vec();
        match t % 4 {
            // A flipped bit anywhere.
            0 | 1 => {
                let i = rng.random_range(0..b.len());
                b[i] ^= 1 << rng.random_range(0..8);
            }
            // A flipped byte in the header (magic, version, id, scale, lengths).
            2 => {
                let i = rng.random_range(0..b.len().min(96));
                b[i] ^= 0xff;
            }
            // Truncation: always detected.
            _ => {
                let n = rng.random_range(0..b.len());
                b.truncate(n);
                assert!(load(&b).is_err(), "truncation to {n} bytes accepted");
            }
        }
        if load(&b).is_err() {
            rejected += 1;
        }
    }
    rejected
}

#[test]
fn ciphertexts_plaintexts_and_keys_round_trip_and_reject_corruption() {
    let c = setup(toy(10, 3, 2, 2), &[1], false);
    let p = &c.params;
    let v = random_values(p.max_slots(), 3);
    let ct = c.encrypt(&v, 3);
    let bytes = ct.to_bytes().unwrap();
    assert_eq!(Ciphertext::from_bytes(p, &bytes).unwrap(), ct);
    let pt = c.enc.encode(&v, p.max_slots(), 2, p.default_scale()).unwrap();
    assert_eq!(Plaintext::from_bytes(p, &pt.to_bytes().unwrap()).unwrap(), pt);
    let kg = KeyGenerator::new(p);
    let full = kg.gen_relin_key(&c.sk, false);
    let KeyMaterial::Full(k) = &full.key else { unreachable!() };
    let seeded = k.to_seeded();
    assert_eq!(KeySwitchKey::from_bytes(p, &k.to_bytes().unwrap()).unwrap(), *k);
    let sb = seeded.to_bytes().unwrap();
    assert!(sb.len() * 2 < k.to_bytes().unwrap().len() + 1024);
    let back = SeededKeySwitchKey::from_bytes(p, &sb).unwrap();
    assert_eq!(back.expand(p).unwrap(), *k);
    assert_eq!(RelinKey::from_bytes(p, &full.to_bytes().unwrap()).unwrap(), full);
    let gk = kg.gen_rotation_key(&c.sk, 1, true);
    assert_eq!(GaloisKey::from_bytes(p, &gk.to_bytes().unwrap()).unwrap(), gk);
    assert_eq!(PublicKey::from_bytes(p, &c.pk.to_bytes().unwrap()).unwrap(), c.pk);
    assert_eq!(SecretKey::from_bytes(p, &c.sk.export_bytes().unwrap()).unwrap(), c.sk);
    // A whole evaluation-key set (seeded keys).
    let ek = kg.gen_evaluation_keys(&c.sk, &[1, 2], true, true);
    let eb = ek.to_bytes().unwrap();
    assert_eq!(EvaluationKeys::from_bytes(p, &eb).unwrap(), ek);
    fuzz(&eb, 40, |b| EvaluationKeys::from_bytes(p, b));
    // Wrong parameter set, wrong kind.
    let other = toy(10, 3, 2, 4);
    assert!(matches!(Ciphertext::from_bytes(&other, &bytes), Err(CkksError::WrongParams { .. })));
    assert!(matches!(Plaintext::from_bytes(p, &bytes), Err(CkksError::Corrupt { .. })));
    assert!(matches!(
        RelinKey::from_bytes(p, &gk.to_bytes().unwrap()),
        Err(CkksError::Corrupt { .. })
    ));
    assert!(matches!(KeySwitchKey::from_bytes(p, &sb), Err(CkksError::Corrupt { .. })));
    // A residue ≥ its modulus in an otherwise intact object is refused by the unit tests of
    // `serialize.rs` (which can recompute the checksum); from outside, the checksum catches it.
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 40..n - 32].copy_from_slice(&u64::MAX.to_le_bytes());
    match Ciphertext::from_bytes(p, &bad) {
        Err(CkksError::Corrupt { reason, .. }) => {
            assert!(reason.contains("checksum"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    // Symbolic objects cannot be written.
    assert!(Ciphertext::symbolic(p, 1).unwrap().to_bytes().is_err());
    // Byte flips and truncations: never a panic; truncations always rejected; a flip inside the
    // data that leaves a residue reduced is undetectable without a MAC, so only a share of the
    // flips can be caught.
    let r = fuzz(&bytes, 200, |b| Ciphertext::from_bytes(p, b));
    assert!(r >= 80, "only {r} of 200 corrupted ciphertexts rejected");
    let r = fuzz(&sb, 100, |b| SeededKeySwitchKey::from_bytes(p, b));
    assert!(r >= 30, "only {r} of 100 corrupted keys rejected");
    fuzz(&gk.to_bytes().unwrap(), 50, |b| GaloisKey::from_bytes(p, b));
    fuzz(&pt.to_bytes().unwrap(), 50, |b| Plaintext::from_bytes(p, b));
}

/// The secret key leaves as its ternary coefficients, two bits each (the two low bits of their
/// two's complement, four to a byte from the low bits up), and is validated on load: every
/// coefficient in {−1, 0, 1}, the length N/4, the Hamming weight a sparse set fixes.
#[test]
fn the_secret_key_is_exported_as_two_bits_a_coefficient_and_validated() {
    use basalt_ckks::serialize::reseal;
    let msg = |r: Result<SecretKey>| match r {
        Err(e) => e.to_string(),
        Ok(_) => "accepted".to_string(),
    };
    for secret in [SecretDistribution::DenseTernary, SecretDistribution::Hamming { h: 64 }] {
        let mut lit = ParametersLiteral::toy(10, 60, 40, 3, 61, 2, 2);
        lit.secret = secret;
        let p = Parameters::new(lit).unwrap();
        let n = p.n();
        let sk = KeyGenerator::new(&p).gen_secret_key();
        let b = sk.export_bytes().unwrap();
        // Header (magic, version, set id, key id, length: 40 bytes), N/4 bytes, checksum.
        assert_eq!(b.len(), 40 + n / 4 + 32, "{secret:?}");
        let body = &b[40..40 + n / 4];
        let by_hand: Vec<i64> = (0..n)
            .map(|i| match (body[i / 4] >> (2 * (i % 4))) & 3 {
                0 => 0,
                1 => 1,
                3 => -1,
                c => panic!("code {c}"),
            })
            .collect();
        assert_eq!(by_hand, sk.coefficients(&p), "{secret:?}");
        let back = SecretKey::from_bytes(&p, &b).unwrap();
        assert_eq!(back, sk);
        assert_eq!(back.key_id(), sk.key_id());

        // A coefficient with the invalid code 0b10 (checksum recomputed: the decoder's check).
        let zero = by_hand.iter().position(|&c| c == 0).unwrap();
        let mut bad = b.clone();
        bad[40 + zero / 4] |= 0b10 << (2 * (zero % 4));
        assert!(msg(SecretKey::from_bytes(&p, &reseal(&bad))).contains("invalid code"));
        // One more non-zero coefficient: refused where the set fixes the weight.
        let mut heavier = b.clone();
        heavier[40 + zero / 4] |= 0b01 << (2 * (zero % 4));
        let r = SecretKey::from_bytes(&p, &reseal(&heavier));
        match secret {
            SecretDistribution::Hamming { h } => {
                let m = msg(r);
                assert!(m.contains(&format!("Hamming weight {}", h + 1)), "{m}");
            }
            SecretDistribution::DenseTernary => assert!(r.unwrap() != sk),
        }
        // A length that is not N/4 (the length field and the data agree).
        let mut short = b[..40 + n / 4 - 1].to_vec();
        short[32..40].copy_from_slice(&((n / 4 - 1) as u64).to_le_bytes());
        short.extend_from_slice(&[0; 32]);
        assert!(msg(SecretKey::from_bytes(&p, &reseal(&short))).contains("bytes of coefficients"));
        // Another parameter set; corruption anywhere.
        let other = toy(10, 2, 2, 2);
        assert!(matches!(SecretKey::from_bytes(&other, &b), Err(CkksError::WrongParams { .. })));
        assert_eq!(fuzz(&b, 40, |x| SecretKey::from_bytes(&p, x)), 40);
    }
    // Only a ternary secret has this encoding.
    let p = toy(10, 3, 2, 2);
    let mut coeffs = vec![0i64; p.n()];
    coeffs[5] = 2;
    let m = SecretKey::from_coeffs(&p, &coeffs).export_bytes().unwrap_err().to_string();
    assert!(m.contains("coefficient 5 is 2"), "{m}");
    // The residue form (version 3) is refused with what to do.
    let mut old = b"BCSK".to_vec();
    old.extend_from_slice(&3u32.to_le_bytes());
    old.extend_from_slice(&[0; 64]);
    let m = msg(SecretKey::from_bytes(&p, &reseal(&old)));
    assert!(m.contains("version 3 secret key") && m.contains("export it again"), "{m}");
}
