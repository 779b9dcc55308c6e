//! Serialisation round trips and validation: corrupted blobs, foreign parameter sets and keys,
//! oversized LUTs all come back as errors, never panics.

use basalt_tfhe::params::toy;
use basalt_tfhe::random::Csprng;
use basalt_tfhe::serialize::*;
use basalt_tfhe::{ClientKey, Lut, TfheError};

#[test]
fn round_trips_and_rejections() {
    let params = toy::u64_small();
    let mut rng = Csprng::from_seed(41);
    let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng);
    let lut = Lut::from_fn(&params, |x| x ^ 1);
    let ct = ck.encrypt_with(5, &mut rng).unwrap();

    // Round trips, and the reloaded keys still compute.
    let sk2 = deserialize_server_key::<u64>(&serialize_server_key(&sk), &params).unwrap();
    let ck2 = deserialize_client_key::<u64>(&serialize_client_key(&ck), &params).unwrap();
    let ct2 = deserialize_ciphertext(&serialize_ciphertext(&ct), &sk2).unwrap();
    let lut2 = deserialize_lut::<u64>(&serialize_lut(&lut, &params), &params).unwrap();
    assert_eq!(ct2, ct);
    assert_eq!(ck2.decrypt(&sk2.apply_lut(&ct2, &lut2).unwrap()).unwrap(), 4);

    // Corruption: truncation, bit flips in the header and in the body, garbage, empty.
    let blob = serialize_ciphertext(&ct);
    assert!(matches!(
        deserialize_ciphertext(&blob[..blob.len() - 3], &sk),
        Err(TfheError::Corrupt(_))
    ));
    assert!(deserialize_ciphertext(&[], &sk).is_err());
    let mut bad = blob.clone();
    bad[0] ^= 0xff;
    assert!(matches!(deserialize_ciphertext(&bad, &sk), Err(TfheError::Corrupt(_))));
    let mut rng2 = Csprng::from_seed(42);
    for _ in 0..200 {
        let mut b = blob.clone();
        let i = (rng2.next_u64() as usize) % b.len();
        b[i] ^= 1 << (rng2.next_u64() % 8);
        // Must not panic; either an error or (if only the payload's mask changed) a ciphertext.
        let _ = deserialize_ciphertext(&b, &sk);
        let garbage: Vec<u8> = (0..64).map(|_| rng2.next_u64() as u8).collect();
        assert!(deserialize_server_key::<u64>(&garbage, &params).is_err());
    }
    // A huge length prefix must not allocate unboundedly.
    let mut huge = serialize_lut(&lut, &params);
    let hdr = 4 + 2 + 4 + 4 + 8 + 8;
    huge[hdr..hdr + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(deserialize_lut::<u64>(&huge, &params), Err(TfheError::Corrupt(_))));
    let skb = serialize_server_key(&sk);
    let mut b = skb.clone();
    b.truncate(skb.len() / 2);
    assert!(matches!(deserialize_server_key::<u64>(&b, &params), Err(TfheError::Corrupt(_))));

    // Another key of the same set: ciphertext rejected with KeyMismatch.
    let ck_other = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
    let foreign = ck_other.encrypt_with(1, &mut rng).unwrap();
    assert!(matches!(
        deserialize_ciphertext(&serialize_ciphertext(&foreign), &sk),
        Err(TfheError::KeyMismatch { .. })
    ));
    assert!(matches!(sk.apply_lut(&foreign, &lut), Err(TfheError::KeyMismatch { .. })));
    assert!(matches!(ck.decrypt(&foreign), Err(TfheError::KeyMismatch { .. })));

    // Another parameter set: rejected with ParamsMismatch (or the torus width first).
    let other = {
        let mut l = params.literal().clone();
        l.lwe_dimension = 130;
        basalt_tfhe::TfheParams::from_literal(l, true).unwrap()
    };
    assert!(matches!(
        deserialize_server_key::<u64>(&skb, &other),
        Err(TfheError::ParamsMismatch { .. })
    ));
    let p32 = toy::u32_small();
    assert!(matches!(
        deserialize_server_key::<u32>(&skb, &p32),
        Err(TfheError::TorusMismatch { .. })
    ));

    // LUT larger than the message space.
    let p = params.plaintext_modulus() as usize;
    assert_eq!(
        Lut::<u64>::from_table(&params, &vec![0; p + 1]),
        Err(TfheError::LutTooLarge { max: p, found: p + 1 })
    );
    assert!(Lut::<u64>::from_table(&params, &[1, 2, 3]).is_ok());
    // Message out of range on encryption.
    assert!(matches!(ck.encrypt(p as u64), Err(TfheError::MessageOutOfRange { .. })));
}
